/*  ufo_bb_mirror.h - a local blackboard (ufo_board_t) kept equal to one board of the broker
    by incremental snapshots (bb.snapshot with `after`, docs/PROTOCOL.md 2.4).

    Agents build the blackboard part of their prompt at every step. Rebuilding a board from a
    full snapshot each time costs the whole board (copy + first serialisation of every item);
    a mirror fetches only the items added since its last sync and appends them, so the
    board's cached prompt text grows by one item instead of being rebuilt. A clear or a
    delete-and-recreate on the broker makes the broker answer with a full snapshot, which
    the mirror applies by replacing its content. Screenshot items get their data URL
    (image_str) from the blob store when they arrive. */
#ifndef UFO_BB_MIRROR_H_INCLUDED
#define UFO_BB_MIRROR_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ufo_bb_client.h"
#include "ufo_board.h"
#include "ufo_error.h"

typedef struct _ufo_bb_mirror_t ufo_bb_mirror_t;

//  Creates an empty mirror of the named board (nothing is fetched yet).
ufo_bb_mirror_t *ufo_bb_mirror_new (const char *board);

//  Destroys it; sets *self_p to NULL. Safe with NULL.
void ufo_bb_mirror_destroy (ufo_bb_mirror_t **self_p);

//  Brings the mirror up to date with one bb.snapshot request (a call that waits for its
//  reply, up to the client's timeout). Returns the number of items applied (>= 0), or -1
//  with err; after an error the mirror is unchanged and the next sync retries.
int ufo_bb_mirror_sync (ufo_bb_mirror_t *self, ufo_bb_client_t *client, ufo_error_t *err);

//  Applies a bb.snapshot reply body asked for with `after` = ufo_bb_mirror_seq (e.g. from
//  ufo_conn_snapshot, screenshots' image_str filled in); ownership of *reply_p taken.
//  Returns the number of items applied, or -1 with err (the mirror is unchanged).
int ufo_bb_mirror_apply (ufo_bb_mirror_t *self, ufo_value_t **reply_p, ufo_error_t *err);

//  The name of the mirrored board (borrowed).
const char *ufo_bb_mirror_name (const ufo_bb_mirror_t *self);

//  The mirrored board (borrowed; valid until the mirror is destroyed).
ufo_board_t *ufo_bb_mirror_board (ufo_bb_mirror_t *self);

//  The global sequence number the mirror reflects (0 before the first sync).
uint64_t ufo_bb_mirror_seq (const ufo_bb_mirror_t *self);

//  How many syncs were answered with a full snapshot (the first one, and after a clear).
size_t ufo_bb_mirror_full_syncs (const ufo_bb_mirror_t *self);

#endif
