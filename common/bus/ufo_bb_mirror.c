/*  ufo_bb_mirror.c - a local board kept equal to a broker board by incremental snapshots. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_mirror.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_memory.h"
#include "ufo_value.h"

struct _ufo_bb_mirror_t {
    char *board_name;
    ufo_board_t *board;
    uint64_t seq;               //  G of the last applied snapshot
    size_t full_syncs;
};

ufo_bb_mirror_t *
ufo_bb_mirror_new (const char *board)
{
    assert (board);
    ufo_bb_mirror_t *self = (ufo_bb_mirror_t *) ufo_calloc (1, sizeof (ufo_bb_mirror_t));
    self->board_name = ufo_strdup (board);
    self->board = ufo_board_new ();
    return self;
}

void
ufo_bb_mirror_destroy (ufo_bb_mirror_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_bb_mirror_t *self = *self_p;
    ufo_board_destroy (&self->board);
    free (self->board_name);
    free (self);
    *self_p = NULL;
}

const char *
ufo_bb_mirror_name (const ufo_bb_mirror_t *self)
{
    assert (self);
    return self->board_name;
}

ufo_board_t *
ufo_bb_mirror_board (ufo_bb_mirror_t *self)
{
    assert (self);
    return self->board;
}

uint64_t
ufo_bb_mirror_seq (const ufo_bb_mirror_t *self)
{
    assert (self);
    return self->seq;
}

size_t
ufo_bb_mirror_full_syncs (const ufo_bb_mirror_t *self)
{
    assert (self);
    return self->full_syncs;
}

int
ufo_bb_mirror_sync (ufo_bb_mirror_t *self, ufo_bb_client_t *client, ufo_error_t *err)
{
    assert (self && client);
    ufo_value_t *reply = ufo_bb_client_snapshot (client, self->board_name, NULL, self->seq, err);
    if (!reply)
        return -1;
    //  Data URLs for the screenshots that arrived (only those: the rest already have theirs).
    ufo_value_t *board_map = ufo_value_map_get (reply, "board");
    ufo_error_t local;
    if (ufo_value_type (board_map) == UFO_TMAP && ufo_bb_client_fill_images (client, board_map, &local) < 0)
        ufo_warn ("board '%s': a screenshot could not be fetched: %s", self->board_name, local.message);
    return ufo_bb_mirror_apply (self, &reply, err);
}

int
ufo_bb_mirror_apply (ufo_bb_mirror_t *self, ufo_value_t **reply_p, ufo_error_t *err)
{
    assert (self && reply_p);
    ufo_value_t *reply = *reply_p;
    *reply_p = NULL;
    ufo_value_t *board_map = ufo_value_map_get (reply, "board");
    ufo_value_t *seq = ufo_value_map_get (reply, "seq");
    ufo_value_t *full = ufo_value_map_get (reply, "full");
    if (ufo_value_type (board_map) != UFO_TMAP || ufo_value_type (seq) != UFO_TINT
    ||  ufo_value_type (full) != UFO_TBOOL || ufo_value_int (seq) < 0) {
        ufo_value_destroy (&reply);
        return ufo_error_set (err, UFO_E_SYNTAX, "snapshot of board '%s' has an unexpected shape",
                              self->board_name);
    }
    int applied = 0;
    if (ufo_value_bool (full)) {
        //  Replace: validate into a fresh board first so an error leaves the mirror as it was.
        ufo_board_t *fresh = ufo_board_new ();
        if (ufo_board_from_map (fresh, board_map, err)) {
            ufo_board_destroy (&fresh);
            ufo_value_destroy (&reply);
            return -1;
        }
        ufo_board_destroy (&self->board);
        self->board = fresh;
        self->full_syncs++;
        for (int which = 0; which < 4; which++)
            applied += (int) ufo_memory_length (ufo_board_memory (self->board, which));
    }
    else {
        //  Append, memory by memory, in the broker's order. Check every item first.
        for (size_t i = 0; i < ufo_value_size (board_map); i++) {
            int which = ufo_board_memory_parse (ufo_value_map_key_at (board_map, i));
            ufo_value_t *list = ufo_value_map_value_at (board_map, i);
            if (which < 0 || ufo_value_type (list) != UFO_TLIST) {
                ufo_value_destroy (&reply);
                return ufo_error_set (err, UFO_E_SYNTAX, "snapshot of board '%s' names no memory '%s'",
                                      self->board_name, ufo_value_map_key_at (board_map, i));
            }
            for (size_t k = 0; k < ufo_value_size (list); k++)
                if (ufo_value_type (ufo_value_list_at (list, k)) != UFO_TMAP) {
                    ufo_value_destroy (&reply);
                    return ufo_error_set (err, UFO_E_TYPE, "board '%s': an item of %s is not a map",
                                          self->board_name, ufo_value_map_key_at (board_map, i));
                }
        }
        for (size_t i = 0; i < ufo_value_size (board_map); i++) {
            int which = ufo_board_memory_parse (ufo_value_map_key_at (board_map, i));
            ufo_value_t *list = ufo_value_map_value_at (board_map, i);
            for (size_t k = 0; k < ufo_value_size (list); k++) {
                ufo_value_t *item = ufo_value_dup (ufo_value_list_at (list, k));
                if (ufo_board_add_data_take (self->board, which, &item, NULL) == 0)
                    applied++;
            }
        }
    }
    self->seq = (uint64_t) ufo_value_int (seq);
    ufo_value_destroy (&reply);
    return applied;
}
