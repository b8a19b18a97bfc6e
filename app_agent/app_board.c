/*  app_board.c - blackboard access of the AppAgent: broker or in-process boards. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_mirror.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "app_board.h"

#define S_CALL_TIMEOUT_MS  5000
#define S_LOCAL_BOARDS     64

struct _app_board_t {
    ufo_bb_client_t *client;            //  remote, or NULL
    ufo_bb_mirror_t *mirror;            //  remote: the session board, kept in step incrementally
    char *mirror_name;
    struct {
        char *name;
        ufo_board_t *board;
    } local [S_LOCAL_BOARDS];
};

app_board_t *
app_board_new (const char *endpoint, ufo_error_t *err)
{
    app_board_t *self = ufo_malloc (sizeof *self);
    memset (self, 0, sizeof *self);
    if (endpoint) {
        self->client = ufo_bb_client_new (endpoint, NULL, err);
        if (!self->client) {
            free (self);
            return NULL;
        }
        ufo_bb_client_set_timeout (self->client, S_CALL_TIMEOUT_MS);
        ufo_bb_client_set_sender (self->client, "ufo-app");
    }
    return self;
}

void
app_board_destroy (app_board_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_board_t *self = *self_p;
    ufo_bb_mirror_destroy (&self->mirror);
    free (self->mirror_name);
    ufo_bb_client_destroy (&self->client);
    for (size_t i = 0; i < S_LOCAL_BOARDS; i++) {
        free (self->local [i].name);
        ufo_board_destroy (&self->local [i].board);
    }
    free (self);
    *self_p = NULL;
}

bool
app_board_remote (const app_board_t *self)
{
    return self->client != NULL;
}

//  The in-process board of a session (created on first use; the oldest is recycled when
//  all slots are taken).
static ufo_board_t *
s_local (app_board_t *self, const char *name)
{
    size_t free_slot = S_LOCAL_BOARDS;
    for (size_t i = 0; i < S_LOCAL_BOARDS; i++) {
        if (self->local [i].name && strcmp (self->local [i].name, name) == 0)
            return self->local [i].board;
        if (!self->local [i].name && free_slot == S_LOCAL_BOARDS)
            free_slot = i;
    }
    if (free_slot == S_LOCAL_BOARDS) {
        free_slot = 0;
        free (self->local [0].name);
        ufo_board_destroy (&self->local [0].board);
    }
    self->local [free_slot].name = ufo_strdup (name);
    self->local [free_slot].board = ufo_board_new ();
    return self->local [free_slot].board;
}

ufo_value_t *
app_board_snapshot (app_board_t *self, const char *board, ufo_error_t *err)
{
    if (!self->client)
        return ufo_board_to_map (s_local (self, board));
    ufo_value_t *reply = ufo_bb_client_snapshot (self->client, board, NULL, 0, err);
    if (!reply)
        return NULL;
    ufo_value_t *map = ufo_value_map_get (reply, "board");
    if (ufo_value_type (map) != UFO_TMAP) {
        ufo_value_destroy (&reply);
        ufo_error_set (err, UFO_E_SYNTAX, "blackboard snapshot of '%s' has no board map", board);
        return NULL;
    }
    ufo_value_t *copy = ufo_value_dup (map);
    ufo_value_destroy (&reply);
    return copy;
}

//  The board's prompt parts without the trajectory items of one subtask (their JSON texts
//  are the items' cached ones, so the part is the original's list minus those items).
static ufo_value_t *
s_prompt_without (ufo_board_t *b, int64_t round, int64_t subtask_index)
{
    ufo_value_t *parts = ufo_board_to_prompt (b);
    if (round < 0)
        return parts;
    ufo_memory_t *traj = ufo_board_memory (b, UFO_MEM_TRAJECTORIES);
    size_t n = ufo_memory_length (traj), kept = 0;
    ufo_buf_t buf;
    ufo_buf_init (&buf);
    ufo_buf_printf (&buf, "[Step Trajectories Completed Previously:]\n [");
    for (size_t i = 0; i < n; i++) {
        ufo_item_t *item = ufo_memory_at (traj, i);
        if (ufo_item_get_int (item, "Round", -1) == round
        &&  ufo_item_get_int (item, "SubtaskIndex", -1) == subtask_index)
            continue;
        size_t len;
        const char *json = ufo_item_json (item, &len);
        if (kept++)
            ufo_buf_append (&buf, ", ", 2);
        ufo_buf_append (&buf, json, len);
    }
    ufo_buf_append (&buf, "]", 1);
    if (kept < n) {
        //  part 3: header, Q&A, requests, trajectories (ufo_board_to_prompt's order)
        ufo_value_t *part = ufo_value_list_at (parts, 3);
        size_t len;
        char *text = ufo_buf_detach (&buf, &len);
        ufo_value_map_set (part, "text", &(ufo_value_t *) { ufo_value_new_stringn (text, len) });
        free (text);
    }
    else
        ufo_buf_free (&buf);
    return parts;
}

ufo_value_t *
app_board_prompt (app_board_t *self, const char *board, int64_t round, int64_t subtask_index,
                  ufo_error_t *err)
{
    if (!self->client)
        return s_prompt_without (s_local (self, board), round, subtask_index);
    //  A mirror of the session board: each step fetches only what was added since the
    //  last one, so the prompt's cached text grows instead of being rebuilt.
    if (!self->mirror || strcmp (self->mirror_name, board) != 0) {
        ufo_bb_mirror_destroy (&self->mirror);
        free (self->mirror_name);
        self->mirror = ufo_bb_mirror_new (board);
        self->mirror_name = ufo_strdup (board);
    }
    if (ufo_bb_mirror_sync (self->mirror, self->client, err) < 0)
        return NULL;
    return s_prompt_without (ufo_bb_mirror_board (self->mirror), round, subtask_index);
}

int
app_board_add (app_board_t *self, const char *board, const char *memory, ufo_value_t **item_p,
               ufo_error_t *err)
{
    if (!self->client) {
        int which = ufo_board_memory_parse (memory);
        if (which < 0) {
            ufo_value_destroy (item_p);
            return ufo_error_set (err, UFO_E_INVALID, "no blackboard memory '%s'", memory);
        }
        return ufo_board_add_data_take (s_local (self, board), which, item_p, err);
    }
    return ufo_bb_client_add (self->client, board, memory, item_p, NULL, NULL, err);
}

char *
app_data_url (const char *mime, const void *data, size_t len)
{
    ufo_buf_t buf = { 0 };
    ufo_buf_printf (&buf, "data:%s;base64,", mime);
    ufo_buf_base64 (&buf, data, len);
    return ufo_buf_detach (&buf, NULL);
}

int
app_board_add_screenshot (app_board_t *self, const char *board, const char *image_path,
                          const void *png, size_t len, const ufo_value_t *metadata,
                          ufo_error_t *err)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set (item, "metadata", &(ufo_value_t *) {
        metadata ? ufo_value_dup (metadata) : ufo_value_new_null () });
    ufo_value_map_set_str (item, "image_path", image_path);
    if (self->client) {
        char hex [65];
        if (ufo_bb_client_blob_put (self->client, png, len, hex, err) < 0) {
            ufo_value_destroy (&item);
            return -1;
        }
        ufo_value_map_set_str (item, "blob", hex);
        ufo_value_map_set_str (item, "mime", "image/png");
    }
    else {
        char *url = app_data_url ("image/png", png, len);
        ufo_value_map_set_str (item, "image_str", url);
        free (url);
    }
    return app_board_add (self, board, "screenshots", &item, err);
}
