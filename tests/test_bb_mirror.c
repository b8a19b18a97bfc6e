/*  test_bb_mirror.c - a local board mirrored from a real ufo-broker by incremental snapshots:
    equal to a full rebuild after every change, fetching only new items, replacing after a
    clear or a delete, with screenshots' data URLs filled from the blob store. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_mirror.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"

static bb_test_broker_t B;

static ufo_bb_client_t *
s_connect (void)
{
    return bb_test_connect (&B, NULL, 20000, 20000);
}

static void
s_add (ufo_bb_client_t *c, const char *memory, int step)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "Step", step);
    ufo_value_map_set_str (item, "Subtask", "type the note \xc3\xa9");
    ufo_value_map_set_str (item, "Action", "set_edit_text");
    ufo_error_t err;
    if (ufo_bb_client_add (c, "s1", memory, &item, NULL, NULL, &err))
        fprintf (stderr, "add failed: %s\n", err.message);
}

//  The prompt a full rebuild would give, as JSON text (caller frees).
static char *
s_full_prompt (ufo_bb_client_t *c)
{
    ufo_error_t err;
    ufo_value_t *reply = ufo_bb_client_snapshot (c, "s1", NULL, 0, &err);
    if (!reply)
        return NULL;
    ufo_value_t *map = ufo_value_map_get (reply, "board");
    ufo_bb_client_fill_images (c, map, &err);
    ufo_board_t *board = ufo_board_new ();
    ufo_board_from_map (board, map, &err);
    ufo_value_t *prompt = ufo_board_to_prompt (board);
    char *text = ufo_json_dump (prompt, UFO_JSON_PY, NULL);
    ufo_value_destroy (&prompt);
    ufo_board_destroy (&board);
    ufo_value_destroy (&reply);
    return text;
}

static char *
s_mirror_prompt (ufo_bb_mirror_t *m)
{
    ufo_value_t *prompt = ufo_board_to_prompt (ufo_bb_mirror_board (m));
    char *text = ufo_json_dump (prompt, UFO_JSON_PY, NULL);
    ufo_value_destroy (&prompt);
    return text;
}

#define CHECK_SAME(c, m) do { \
    char *full_ = s_full_prompt (c), *mine_ = s_mirror_prompt (m); \
    CHECK (full_ && mine_ && strcmp (full_, mine_) == 0); \
    free (full_); free (mine_); \
} while (0)

UFO_TEST (test_incremental_mirror)
{
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    ufo_bb_mirror_t *m = ufo_bb_mirror_new ("s1");
    //  a board that does not exist yet mirrors as empty
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 0);
    CHECK (ufo_board_is_empty (ufo_bb_mirror_board (m)));

    for (int i = 0; i < 50; i++)
        s_add (c, "trajectories", i);
    s_add (c, "requests", 0);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 51);
    CHECK_SAME (c, m);
    size_t full_before = ufo_bb_mirror_full_syncs (m);

    //  one more item: one item fetched, and the prompt is still the full rebuild's
    s_add (c, "trajectories", 50);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 1);
    CHECK_SAME (c, m);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 0);          //  nothing new
    CHECK_INT (ufo_bb_mirror_full_syncs (m), full_before);    //  no full snapshot needed

    //  a screenshot arrives with its data URL filled from the blob store
    const char png [] = "\x89PNG\r\n\x1a\nnot really an image";
    char ref [65];
    REQUIRE (ufo_bb_client_blob_put (c, png, sizeof png - 1, ref, &err) == 0);
    ufo_value_t *shot = ufo_value_new_map ();
    ufo_value_t *meta = ufo_value_new_map ();
    ufo_value_map_set_int (meta, "Step", 3);
    ufo_value_map_set (shot, "metadata", &meta);
    ufo_value_map_set_str (shot, "image_path", "action_step3.png");
    ufo_value_map_set_str (shot, "blob", ref);
    REQUIRE (ufo_bb_client_add (c, "s1", "screenshots", &shot, NULL, NULL, &err) == 0);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 1);
    CHECK_SAME (c, m);
    char *text = s_mirror_prompt (m);
    CHECK_CONTAINS (text, "data:image/png;base64,");
    free (text);

    //  a clear on the broker: the next sync replaces the content
    ufo_bb_client_clear (c, "s1", "trajectories", &err);
    s_add (c, "trajectories", 99);
    ufo_bb_mirror_sync (m, c, &err);
    CHECK_INT (ufo_bb_mirror_full_syncs (m), full_before + 1);
    CHECK_INT (ufo_memory_length (ufo_board_memory (ufo_bb_mirror_board (m), UFO_MEM_TRAJECTORIES)), 1);
    CHECK_SAME (c, m);

    //  deleted: empty
    CHECK (ufo_bb_client_delete (c, "s1", &err) == 0);
    CHECK (ufo_bb_mirror_sync (m, c, &err) >= 0);
    CHECK (ufo_board_is_empty (ufo_bb_mirror_board (m)));
    ufo_bb_mirror_destroy (&m);
    ufo_bb_mirror_destroy (&m);
    ufo_bb_client_destroy (&c);
}

UFO_TEST (test_broker_gone)
{
    //  a sync that fails leaves the mirror as it was, and the next one catches up
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    for (int i = 0; i < 5; i++)
        s_add (c, "trajectories", i);
    ufo_bb_mirror_t *m = ufo_bb_mirror_new ("s1");
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 5);
    uint64_t seq = ufo_bb_mirror_seq (m);
    bb_test_stop (&B, SIGKILL);
    ufo_bb_client_set_timeout (c, 300);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), -1);
    CHECK (ufo_bb_mirror_seq (m) == seq);
    CHECK_INT (ufo_memory_length (ufo_board_memory (ufo_bb_mirror_board (m), UFO_MEM_TRAJECTORIES)), 5);
    ufo_bb_client_destroy (&c);
    bb_test_start (&B, NULL);
    c = s_connect ();
    REQUIRE (c);
    s_add (c, "trajectories", 5);
    CHECK_INT (ufo_bb_mirror_sync (m, c, &err), 1);
    CHECK_SAME (c, m);
    ufo_bb_mirror_destroy (&m);
    ufo_bb_client_destroy (&c);
}

int
main (void)
{
    bb_test_init (&B, "mirror");
    bb_test_start (&B, NULL);
    UFO_RUN (test_incremental_mirror);
    UFO_RUN (test_broker_gone);
    bb_test_stop (&B, SIGTERM);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
