/*  test_bb_broker.c - the blackboard broker as a real process: every request type, error
    replies, limits, restart from the log, compaction into snapshots, blobs and prompts. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_board.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include "test_files.h"
#include <czmq.h>

static bb_test_broker_t B;

//  Connects a client and waits (bounded) until the broker answers a ping.
static ufo_bb_client_t *
s_connect (void)
{
    return bb_test_connect (&B, B.bus, 20000, 10000);
}

static ufo_value_t *
s_item (const char *key, int64_t n)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, key, n);
    return item;
}

UFO_TEST (test_requests)
{
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    uint64_t seq = 0, last = 0;

    //  add one, add many, a string becomes {"text": s}
    ufo_value_t *item = s_item ("Step", 1);
    CHECK_INT (ufo_bb_client_add (c, "s1", "trajectories", &item, &seq, &last, &err), 0);
    CHECK_INT (seq, 1);
    CHECK_INT (last, 1);
    ufo_value_t *items = ufo_value_new_list ();
    ufo_value_list_push_str (items, "what is the file name?");
    ufo_value_t *q = s_item ("n", 2);
    ufo_value_list_push (items, &q);
    CHECK_INT (ufo_bb_client_add (c, "s1", "questions", &items, &seq, &last, &err), 0);
    CHECK_INT (seq, 2);
    CHECK_INT (last, 3);

    ufo_value_t *snap = ufo_bb_client_snapshot (c, "s1", NULL, 0, &err);
    REQUIRE (snap);
    CHECK_INT (ufo_value_map_int (snap, "seq", 0), 3);
    CHECK_INT (ufo_value_map_int (snap, "last", 0), 3);
    CHECK (ufo_value_map_bool (snap, "exists", false));
    CHECK (ufo_value_map_bool (snap, "full", false));
    CHECK_STR (ufo_value_str (ufo_value_path (snap, "board.questions.0.text")), "what is the file name?");
    CHECK_INT (ufo_value_int (ufo_value_path (snap, "board.trajectories.0.Step")), 1);
    CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.requests")), 0);
    CHECK_INT (ufo_value_int (ufo_value_path (snap, "seqs.questions.1")), 3);
    ufo_value_destroy (&snap);

    //  only what came after seq 2, one memory
    snap = ufo_bb_client_snapshot (c, "s1", "questions", 2, &err);
    REQUIRE (snap);
    CHECK (!ufo_value_map_bool (snap, "full", true));
    CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.questions")), 1);
    CHECK_INT (ufo_value_int (ufo_value_path (snap, "board.questions.0.n")), 2);
    CHECK (!ufo_value_path (snap, "board.trajectories"));
    ufo_value_destroy (&snap);

    //  a board that does not exist: empty, last 0
    snap = ufo_bb_client_snapshot (c, "nobody", NULL, 0, &err);
    REQUIRE (snap);
    CHECK (!ufo_value_map_bool (snap, "exists", true));
    CHECK_INT (ufo_value_map_int (snap, "last", -1), 0);
    ufo_value_destroy (&snap);

    //  list, clear one memory, clear, delete
    item = s_item ("n", 9);
    CHECK_INT (ufo_bb_client_add (c, "global", "questions", &item, NULL, NULL, &err), 0);
    ufo_value_t *list = ufo_bb_client_call (c, "bb.list", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (list);
    CHECK_INT (ufo_value_size (ufo_value_map_get (list, "boards")), 2);
    CHECK_STR (ufo_value_str (ufo_value_path (list, "boards.0.name")), "global");
    CHECK_INT (ufo_value_int (ufo_value_path (list, "boards.1.items")), 3);
    ufo_value_destroy (&list);
    CHECK_INT (ufo_bb_client_clear (c, "s1", "questions", &err), 0);
    snap = ufo_bb_client_snapshot (c, "s1", NULL, 3, &err);
    REQUIRE (snap);
    CHECK (ufo_value_map_bool (snap, "full", false));       //  cleared after 3: full content
    CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.questions")), 0);
    CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.trajectories")), 1);
    ufo_value_destroy (&snap);
    CHECK_INT (ufo_bb_client_delete (c, "s1", &err), 0);
    CHECK_INT (ufo_bb_client_delete (c, "s1", &err), -1);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    CHECK_INT (ufo_bb_client_clear (c, "s1", NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);

    //  stats
    ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (stats);
    CHECK_INT (ufo_value_map_int (stats, "boards", -1), 1);
    CHECK_INT (ufo_value_map_int (stats, "seq", -1), 6);
    CHECK_STR (ufo_value_map_str (stats, "fsync", ""), "always");
    ufo_value_destroy (&stats);

    //  errors: unknown type, wrong field type, bad memory, bad board name
    CHECK (!ufo_bb_client_call (c, "bb.frobnicate", NULL, NULL, 0, NULL, NULL, &err));
    CHECK_INT (err.code, UFO_E_INVALID);
    CHECK_CONTAINS (err.message, "unknown request type");
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "board", 5);
    CHECK (!ufo_bb_client_call (c, "bb.snapshot", &body, NULL, 0, NULL, NULL, &err));
    CHECK_INT (err.code, UFO_E_TYPE);
    item = s_item ("n", 1);
    CHECK_INT (ufo_bb_client_add (c, "s1", "memories", &item, NULL, NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_INVALID);
    item = s_item ("n", 1);
    CHECK_INT (ufo_bb_client_add (c, "bad/name", "questions", &item, NULL, NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_INVALID);
    item = ufo_value_new_int (3);
    CHECK_INT (ufo_bb_client_add (c, "s1", "questions", &item, NULL, NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    //  a blob.put without its data frame; a screenshot referring to an unknown blob
    CHECK (!ufo_bb_client_call (c, "blob.put", NULL, NULL, 0, NULL, NULL, &err));
    CHECK_CONTAINS (err.message, "frame");
    item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "blob", "00000000000000000000000000000000000000000000000000000000000000aa");
    CHECK_INT (ufo_bb_client_add (c, "s1", "screenshots", &item, NULL, NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);

    //  nothing above changed the state: seq is still 6
    ufo_value_t *pong = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (pong);
    CHECK_INT (ufo_value_map_int (pong, "seq", -1), 6);
    ufo_value_destroy (&pong);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

//  A field of the broker's stats, or -999.
static int64_t
s_stat (ufo_bb_client_t *c, const char *field)
{
    ufo_error_t err;
    ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
    int64_t value = stats ? ufo_value_map_int (stats, field, -999) : -999;
    ufo_value_destroy (&stats);
    return value;
}

//  Asks the broker for its stats until field equals want (bounded: the broker sees
//  subscriptions asynchronously). Returns the last value seen.
static int64_t
s_wait_stat (ufo_bb_client_t *c, const char *field, int64_t want)
{
    int64_t value = -999;
    WAIT_UNTIL ((value = s_stat (c, field)) == want, 5000);
    return value;
}

//  Waits (bounded) until a stats field is at least want; returns its last value.
static int64_t
s_wait_stat_at_least (ufo_bb_client_t *c, const char *field, int64_t want, int timeout_ms)
{
    int64_t value = -999;
    WAIT_UNTIL ((value = s_stat (c, field)) >= want, timeout_ms);
    return value;
}

UFO_TEST (test_subscribers)
{
    //  three subscribers, two on the same topic: the count goes to 3 and back to 0 when
    //  they disconnect (XPUB_VERBOSE reported only the last unsubscribe of a topic)
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    CHECK_INT (s_wait_stat (c, "subscribers", 0), 0);
    zsock_t *subs [3];
    subs [0] = zsock_new_sub (B.bus, "bb/a/");
    subs [1] = zsock_new_sub (B.bus, "bb/a/");
    subs [2] = zsock_new_sub (B.bus, "stats");
    REQUIRE (subs [0] && subs [1] && subs [2]);
    CHECK_INT (s_wait_stat (c, "subscribers", 3), 3);
    for (int i = 0; i < 3; i++)
        zsock_destroy (&subs [i]);
    CHECK_INT (s_wait_stat (c, "subscribers", 0), 0);
    //  an explicit unsubscribe before the disconnect counts once, not twice
    subs [0] = zsock_new_sub (B.bus, "bb/b/");
    subs [1] = zsock_new_sub (B.bus, "bb/b/");
    REQUIRE (subs [0] && subs [1]);
    CHECK_INT (s_wait_stat (c, "subscribers", 2), 2);
    zsock_set_unsubscribe (subs [0], "bb/b/");
    CHECK_INT (s_wait_stat (c, "subscribers", 1), 1);
    zsock_destroy (&subs [0]);
    zsock_destroy (&subs [1]);
    CHECK_INT (s_wait_stat (c, "subscribers", 0), 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_rmtree (B.data_dir);
}

//  Receives the next stats event from sub (bounded by its receive timeout). Checks the
//  envelope; returns its body (owned) or NULL.
static ufo_value_t *
s_recv_stats (zsock_t *sub)
{
    zmsg_t *msg = zmsg_recv (sub);
    if (!msg)
        return NULL;
    ufo_value_t *body = NULL;
    if (zmsg_size (msg) == 2) {
        zframe_t *topic = zmsg_first (msg);
        zframe_t *data = zmsg_next (msg);
        CHECK (zframe_streq (topic, "stats"));
        ufo_error_t err;
        ufo_msg_t *m = ufo_msg_decode (zframe_data (data), zframe_size (data), NULL, &err);
        CHECK (m);
        if (m) {
            CHECK_STR (ufo_msg_type (m), "broker.stats");
            CHECK_STR (ufo_msg_sender (m), "ufo-broker");
            body = ufo_msg_take_body (m);
            ufo_msg_destroy (&m);
        }
    }
    else
        CHECK (!"a stats event has two frames");
    zmsg_destroy (&msg);
    return body;
}

UFO_TEST (test_stats_event)
{
    //  the periodic stats event on topic "stats": its fields, and that they follow writes
    const char *extra [] = { "--stats-ms", "100", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    zsock_t *sub = zsock_new_sub (B.bus, "stats");
    REQUIRE (sub);
    zsock_set_rcvtimeo (sub, 5000);
    ufo_value_t *first = s_recv_stats (sub);
    REQUIRE (first);
    const char *fields [] = { "boards", "items", "seq", "writes", "items_added", "write_rate", "log_bytes",
                              "log_segment", "subscribers", "requests", "errors", "fsyncs", "fsync_avg_us",
                              "blob_puts", "blob_gets", "fsync" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++)
        if (!ufo_value_map_get (first, fields [i]))
            UFO_FAIL_ ("stats event lacks field %s", fields [i]);
    CHECK_INT (ufo_value_type (ufo_value_map_get (first, "write_rate")), UFO_TFLOAT);
    CHECK_INT (ufo_value_map_int (first, "boards", -1), 0);
    CHECK_INT (ufo_value_map_int (first, "items", -1), 0);
    CHECK_INT (ufo_value_map_int (first, "seq", -1), 0);
    CHECK_INT (ufo_value_map_int (first, "subscribers", -1), 1);       //  this test's SUB socket
    CHECK_STR (ufo_value_map_str (first, "fsync", ""), "always");
    int64_t log0 = ufo_value_map_int (first, "log_bytes", -1);
    ufo_value_destroy (&first);

    //  20 items on two boards, one request each
    ufo_error_t err;
    for (int i = 0; i < 20; i++) {
        ufo_value_t *item = s_item ("n", i);
        REQUIRE (ufo_bb_client_add (c, i % 2 ? "one" : "two", "questions", &item, NULL, NULL, &err) == 0);
    }
    //  the first event that shows the last write: an item was added since the one before it,
    //  so its write rate is above zero
    ufo_value_t *stats = NULL;
    for (int i = 0; i < 200; i++) {
        ufo_value_destroy (&stats);
        stats = s_recv_stats (sub);
        if (!stats || ufo_value_map_int (stats, "seq", -1) == 20)
            break;
    }
    REQUIRE (stats);
    CHECK_INT (ufo_value_map_int (stats, "seq", -1), 20);
    CHECK_INT (ufo_value_map_int (stats, "boards", -1), 2);
    CHECK_INT (ufo_value_map_int (stats, "items", -1), 20);
    CHECK_INT (ufo_value_map_int (stats, "writes", -1), 20);
    CHECK_INT (ufo_value_map_int (stats, "items_added", -1), 20);
    CHECK (ufo_value_float (ufo_value_map_get (stats, "write_rate")) > 0.0);
    CHECK (ufo_value_map_int (stats, "log_bytes", -1) > log0);
    CHECK (ufo_value_map_int (stats, "fsyncs", -1) >= 1);
    CHECK_INT (ufo_value_map_int (stats, "subscribers", -1), 1);
    ufo_value_destroy (&stats);
    //  with no writes the rate falls back to zero and the counts stay
    for (int i = 0; i < 200; i++) {
        stats = s_recv_stats (sub);
        if (!stats || ufo_value_float (ufo_value_map_get (stats, "write_rate")) == 0.0)
            break;
        ufo_value_destroy (&stats);
    }
    REQUIRE (stats);
    CHECK_INT (ufo_value_map_int (stats, "items", -1), 20);
    ufo_value_destroy (&stats);
    zsock_destroy (&sub);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_rmtree (B.data_dir);
}

UFO_TEST (test_limits)
{
    //  small limits through a config file
    char path [400];
    snprintf (path, sizeof path, "%s/limits.json", B.dir);
    FILE *f = fopen (path, "w");
    REQUIRE (f);
    fprintf (f, "{\"broker\": {\"max_item_bytes\": 100, \"max_items_per_board\": 5, \"max_blob_bytes\": 2048,"
                " \"max_message_bytes\": 4096, \"stats_interval_ms\": 0}}\n");
    fclose (f);
    const char *extra [] = { "--config", path, NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    char big [200];
    memset (big, 'x', sizeof big - 1);
    big [sizeof big - 1] = 0;
    ufo_value_t *item = ufo_value_new_string (big);
    CHECK_INT (ufo_bb_client_add (c, "b", "questions", &item, NULL, NULL, &err), -1);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    CHECK_CONTAINS (err.message, "max_item_bytes");
    ufo_value_t *items = ufo_value_new_list ();
    for (int i = 0; i < 4; i++)
        ufo_value_list_push_str (items, "q");
    CHECK_INT (ufo_bb_client_add (c, "b", "questions", &items, NULL, NULL, &err), 0);
    items = ufo_value_new_list ();
    ufo_value_list_push_str (items, "q");
    ufo_value_list_push_str (items, "q");
    CHECK_INT (ufo_bb_client_add (c, "b", "requests", &items, NULL, NULL, &err), -1);
    CHECK_CONTAINS (err.message, "max_items_per_board");
    item = ufo_value_new_string ("fifth");
    CHECK_INT (ufo_bb_client_add (c, "b", "requests", &item, NULL, NULL, &err), 0);
    //  an oversized message frame and an oversized blob: error replies, broker keeps serving
    char *huge = ufo_malloc (8192);
    memset (huge, 'y', 8191);
    huge [8191] = 0;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "b");
    ufo_value_map_set_str (body, "pad", huge);
    CHECK (!ufo_bb_client_call (c, "bb.snapshot", &body, NULL, 0, NULL, NULL, &err));
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    char hex [65];
    CHECK_INT (ufo_bb_client_blob_put (c, huge, 4000, hex, &err), -1);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    free (huge);
    ufo_value_t *pong = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (pong);
    ufo_value_destroy (&pong);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_rmtree (B.data_dir);
}

UFO_TEST (test_restart_and_compaction)
{
    //  snapshot every 10 records: compaction happens many times
    const char *extra [] = { "--snapshot-every", "10", "--snapshot-growth", "0", "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    for (int i = 0; i < 95; i++) {
        char board [32];
        snprintf (board, sizeof board, "board-%d", i % 3);
        ufo_value_t *item = s_item ("n", i);
        REQUIRE (ufo_bb_client_add (c, board, i % 2 ? "questions" : "trajectories", &item, NULL, NULL, &err) == 0);
    }
    CHECK_INT (ufo_bb_client_clear (c, "board-1", "questions", &err), 0);
    CHECK_INT (ufo_bb_client_delete (c, "board-2", &err), 0);
    ufo_value_t *before [3];
    for (int b = 0; b < 3; b++) {
        char board [32];
        snprintf (board, sizeof board, "board-%d", b);
        before [b] = ufo_bb_client_snapshot (c, board, NULL, 0, &err);
    }
    ufo_bb_client_destroy (&c);
    //  SIGKILL (no clean shutdown), restart: identical state
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
    bb_test_start (&B, extra);
    c = s_connect ();
    REQUIRE (c);
    for (int b = 0; b < 3; b++) {
        char board [32];
        snprintf (board, sizeof board, "board-%d", b);
        ufo_value_t *after = ufo_bb_client_snapshot (c, board, NULL, 0, &err);
        REQUIRE (after && before [b]);
        CHECK (ufo_value_equal (ufo_value_map_get (after, "board"), ufo_value_map_get (before [b], "board")));
        CHECK (ufo_value_equal (ufo_value_map_get (after, "seqs"), ufo_value_map_get (before [b], "seqs")));
        CHECK_INT (ufo_value_map_int (after, "last", -1), ufo_value_map_int (before [b], "last", -2));
        CHECK_INT (ufo_value_map_int (after, "seq", -1), 97);
        ufo_value_destroy (&after);
        ufo_value_destroy (&before [b]);
    }
    //  writing goes on with the next sequence number
    ufo_value_t *item = s_item ("n", 1000);
    uint64_t seq = 0;
    CHECK_INT (ufo_bb_client_add (c, "board-0", "questions", &item, &seq, NULL, &err), 0);
    CHECK_INT (seq, 98);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    //  compaction left a snapshot directory and only recent log segments
    char path [400];
    snprintf (path, sizeof path, "%s/log", B.data_dir);
    DIR *dir = opendir (path);
    int segments = 0;
    struct dirent *entry;
    while (dir && (entry = readdir (dir)))
        segments += strncmp (entry->d_name, "wal-", 4) == 0;
    if (dir)
        closedir (dir);
    CHECK (segments >= 1 && segments <= 3);
    bb_test_rmtree (B.data_dir);
}

//  Adds count items in one request (n, n+1, ...) and returns the broker's count of snapshots
//  started, once the last one has finished (so that the next add may start another).
static int64_t
s_add_and_settle (ufo_bb_client_t *c, int n, int count)
{
    ufo_error_t err;
    ufo_value_t *items = ufo_value_new_list ();
    for (int k = 0; k < count; k++) {
        ufo_value_t *item = s_item ("n", n + k);
        ufo_value_list_push (items, &item);
    }
    if (ufo_bb_client_add (c, "g", "trajectories", &items, NULL, NULL, &err) != 0)
        return -1;
    for (int i = 0; i < 1000; i++) {            //  at most ~10 s
        ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
        bool running = ufo_value_map_bool (stats, "snapshot_running", true);
        int64_t snapshots = ufo_value_map_int (stats, "snapshots", -1);
        ufo_value_destroy (&stats);
        if (!running)
            return snapshots;
        usleep (10000);
    }
    return -1;
}

//  Compaction waits for snapshot_every records and, by default, for the log to have grown
//  by as many items as the last snapshot held (--snapshot-growth 100; an add counts its
//  items): with one item per add and --snapshot-every 4, the snapshots start at records 4, 8,
//  16 and 32; one add of 30 items then brings the next. After a restart the pace follows the
//  snapshot that was loaded. With --snapshot-growth 0 they start every 4 records.
UFO_TEST (test_compaction_growth)
{
    for (int round = 0; round < 2; round++) {
        const char *growth = round == 0 ? "100" : "0";
        const char *extra [] = { "--snapshot-every", "4", "--snapshot-growth", growth,
                                 "--stats-ms", "0", NULL };
        bb_test_start (&B, extra);
        ufo_bb_client_t *c = s_connect ();
        REQUIRE (c);
        int64_t at [41] = { 0 };
        for (int n = 1; n <= 40; n++)
            at [n] = s_add_and_settle (c, n, 1);
        if (round == 0) {
            CHECK_INT (at [3], 0);
            CHECK_INT (at [4], 1);
            CHECK_INT (at [7], 1);
            CHECK_INT (at [8], 2);
            CHECK_INT (at [15], 2);
            CHECK_INT (at [16], 3);
            CHECK_INT (at [31], 3);
            CHECK_INT (at [32], 4);
            CHECK_INT (at [40], 4);
            //  8 items since the snapshot of 32: a batch of 30 makes 38 >= 32 in 9 records
            CHECK_INT (s_add_and_settle (c, 41, 30), 5);
        }
        else {
            CHECK_INT (at [3], 0);
            CHECK_INT (at [4], 1);
            CHECK_INT (at [8], 2);
            CHECK_INT (at [40], 10);
        }
        ufo_bb_client_destroy (&c);
        CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
        //  the state is whole after a restart from the last snapshot and the log after it
        int items = round == 0 ? 70 : 40;
        bb_test_start (&B, extra);
        c = s_connect ();
        REQUIRE (c);
        ufo_error_t err;
        ufo_value_t *snap = ufo_bb_client_snapshot (c, "g", NULL, 0, &err);
        REQUIRE (snap);
        CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.trajectories")), items);
        char path [64];
        snprintf (path, sizeof path, "board.trajectories.%d", items - 1);
        CHECK_INT (ufo_value_map_int (ufo_value_path (snap, path), "n", -1), items);
        ufo_value_destroy (&snap);
        if (round == 0) {
            //  the loaded snapshot held 70 items: the next one comes after ~70 more (the
            //  log after it holds a checkpoint record, which counts one)
            int64_t snapshots = 0;
            int added = 0;
            while (snapshots == 0 && added < 80)
                snapshots = s_add_and_settle (c, 1000 + added++, 1);
            CHECK_INT (snapshots, 1);
            if (added < 68 || added > 70)
                UFO_FAIL_ ("snapshot after %d adds, expected 68-70", added);
        }
        ufo_bb_client_destroy (&c);
        CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
        bb_test_rmtree (B.data_dir);
    }
}

UFO_TEST (test_snapshot_file)
{
    //  a snapshot's board file as docs/PROTOCOL.md 2.8 defines it, "bases" above all
    const char *extra [] = { "--snapshot-every", "4", "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    ufo_value_t *item = s_item ("n", 1);
    REQUIRE (ufo_bb_client_add (c, "x", "questions", &item, NULL, NULL, &err) == 0);      //  seq 1: creates x
    item = s_item ("n", 2);
    REQUIRE (ufo_bb_client_add (c, "x", "requests", &item, NULL, NULL, &err) == 0);       //  seq 2
    REQUIRE (ufo_bb_client_clear (c, "x", "requests", &err) == 0);                        //  seq 3
    item = s_item ("n", 4);
    REQUIRE (ufo_bb_client_add (c, "x", "requests", &item, NULL, NULL, &err) == 0);       //  seq 4: snapshot
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    char path [700];
    snprintf (path, sizeof path, "%s/snap-%016x/board-000000.json", B.data_dir, 4);
    ufo_value_t *root = ufo_json_parse_file (path, NULL, &err);
    REQUIRE (root);
    CHECK_STR (ufo_value_map_str (root, "name", ""), "x");
    CHECK_INT (ufo_value_map_int (root, "last", -1), 4);
    const ufo_value_t *bases = ufo_value_map_get (root, "bases");
    CHECK_INT (ufo_value_size (bases), 4);
    //  questions, requests, trajectories, screenshots: created at 1, requests cleared at 3
    CHECK_INT (ufo_value_int (ufo_value_list_at (bases, 0)), 1);
    CHECK_INT (ufo_value_int (ufo_value_list_at (bases, 1)), 3);
    CHECK_INT (ufo_value_int (ufo_value_list_at (bases, 2)), 1);
    CHECK_INT (ufo_value_int (ufo_value_list_at (bases, 3)), 1);
    CHECK_INT (ufo_value_int (ufo_value_path (root, "seqs.requests.0")), 4);
    CHECK_INT (ufo_value_int (ufo_value_path (root, "board.requests.0.n")), 4);
    ufo_value_destroy (&root);
    bb_test_rmtree (B.data_dir);
}

UFO_TEST (test_corrupt_log)
{
    //  a record in the middle of the log is damaged: the broker refuses to start and names
    //  the file and the offset; with --repair it serves what came before the damage
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    for (int i = 0; i < 100; i++) {
        ufo_value_t *item = s_item ("n", i);
        REQUIRE (ufo_bb_client_add (c, "log", "questions", &item, NULL, NULL, &err) == 0);
    }
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);

    //  the one log segment; walk its records ("UFOW", length, crc, payload) to the middle one
    char dir [400], seg [700] = "";
    snprintf (dir, sizeof dir, "%s/log", B.data_dir);
    DIR *d = opendir (dir);
    REQUIRE (d);
    struct dirent *entry;
    int segments = 0;
    while ((entry = readdir (d)))
        if (strncmp (entry->d_name, "wal-", 4) == 0) {
            snprintf (seg, sizeof seg, "%s/%s", dir, entry->d_name);
            segments++;
        }
    closedir (d);
    REQUIRE (segments == 1);
    size_t len = 0;
    char *data = tf_read (seg, &len);
    REQUIRE (data);
    size_t offsets [512], nrec = 0, at = 0;
    while (at + 12 <= len && nrec < UFO_ARRAY_SIZE (offsets)) {
        REQUIRE (memcmp (data + at, "UFOW", 4) == 0);
        uint32_t plen = (uint32_t) (uint8_t) data [at + 4] | (uint32_t) (uint8_t) data [at + 5] << 8
                      | (uint32_t) (uint8_t) data [at + 6] << 16 | (uint32_t) (uint8_t) data [at + 7] << 24;
        offsets [nrec++] = at;
        at += 12 + plen;
    }
    CHECK_INT (at, len);
    REQUIRE (nrec >= 100);
    size_t bad = nrec / 2;
    //  adds before the damaged record: the items that must survive the repair
    int adds_before = 0;
    for (size_t r = 0; r < bad; r++)
        adds_before += memmem (data + offsets [r], offsets [r + 1] - offsets [r], "bb.added", 8) != NULL;
    CHECK (adds_before >= 40);
    free (data);
    FILE *f = fopen (seg, "r+b");
    REQUIRE (f);
    fseek (f, (long) offsets [bad] + 20, SEEK_SET);       //  a payload byte
    int byte = fgetc (f);
    fseek (f, (long) offsets [bad] + 20, SEEK_SET);
    fputc (byte ^ 0x5a, f);
    fclose (f);

    //  refuses: non-zero exit, stderr names the segment and the offset
    char log [400];
    snprintf (log, sizeof log, "%s/broker.log", B.dir);
    unlink (log);
    bb_test_start (&B, extra);
    int status = bb_test_wait_exit (&B, 20000);
    CHECK (status > 0 && status < 128);
    char *text = tf_read (log, NULL);
    REQUIRE (text);
    CHECK_CONTAINS (text, seg);
    char offset [64];
    snprintf (offset, sizeof offset, "offset %zu", offsets [bad]);
    CHECK_CONTAINS (text, offset);
    CHECK_CONTAINS (text, "--repair");
    free (text);

    //  --repair: serves, with every item written before the damaged record
    const char *repair [] = { "--stats-ms", "0", "--repair", NULL };
    bb_test_start (&B, repair);
    c = s_connect ();
    REQUIRE (c);
    ufo_value_t *snap = ufo_bb_client_snapshot (c, "log", NULL, 0, &err);
    REQUIRE (snap);
    const ufo_value_t *questions = ufo_value_path (snap, "board.questions");
    CHECK_INT (ufo_value_size (questions), adds_before);
    for (int i = 0; i < adds_before && i < (int) ufo_value_size (questions); i++)
        CHECK_INT (ufo_value_map_int (ufo_value_list_at (questions, (size_t) i), "n", -1), i);
    ufo_value_destroy (&snap);
    ufo_value_t *item = s_item ("n", 1000);
    CHECK_INT (ufo_bb_client_add (c, "log", "questions", &item, NULL, NULL, &err), 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_rmtree (B.data_dir);
}

UFO_TEST (test_everysec_and_no)
{
    //  the other fsync policies acknowledge at once and keep everything across a clean stop
    const char *policies [] = { "everysec", "no" };
    for (int p = 0; p < 2; p++) {
        const char *extra [] = { "--fsync", policies [p], "--stats-ms", "0", NULL };
        bb_test_start (&B, extra);
        ufo_bb_client_t *c = s_connect ();
        REQUIRE (c);
        ufo_error_t err;
        for (int i = 0; i < 50; i++) {
            ufo_value_t *item = s_item ("n", i);
            CHECK_INT (ufo_bb_client_add (c, "pol", "requests", &item, NULL, NULL, &err), 0);
        }
        ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
        CHECK_STR (ufo_value_map_str (stats, "fsync", ""), policies [p]);
        ufo_value_destroy (&stats);
        ufo_bb_client_destroy (&c);
        CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
        bb_test_start (&B, extra);
        c = s_connect ();
        REQUIRE (c);
        ufo_value_t *snap = ufo_bb_client_snapshot (c, "pol", NULL, 0, &err);
        CHECK_INT (ufo_value_size (ufo_value_path (snap, "board.requests")), 50);
        ufo_value_destroy (&snap);
        ufo_bb_client_destroy (&c);
        CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
        bb_test_rmtree (B.data_dir);
    }
}

UFO_TEST (test_everysec_fsyncs)
{
    //  everysec: writes are acknowledged without a sync of their own; the log is synced at
    //  most once a tick while something was written, and not at all while nothing was
    //  (the broker counts its ticks, stats sync_ticks: checks count ticks, not seconds)
    const char *extra [] = { "--fsync", "everysec", "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    CHECK (s_wait_stat_at_least (c, "sync_ticks", 1, 10000) >= 1);     //  a tick with nothing written
    CHECK_INT (s_stat (c, "fsyncs"), 0);
    ufo_error_t err;
    for (int i = 0; i < 300; i++) {
        ufo_value_t *item = s_item ("n", i);
        REQUIRE (ufo_bb_client_add (c, "ev", "requests", &item, NULL, NULL, &err) == 0);
    }
    ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (stats);
    int64_t during = ufo_value_map_int (stats, "fsyncs", -1);
    int64_t ticks = ufo_value_map_int (stats, "sync_ticks", -1);
    CHECK_INT (ufo_value_map_int (stats, "writes", -1), 300);
    ufo_value_destroy (&stats);
    //  at most one sync per tick
    if (during > ticks)
        UFO_FAIL_ ("%" PRId64 " fsyncs in %" PRId64 " ticks", during, ticks);
    //  the writes are synced at the next tick
    CHECK (s_wait_stat_at_least (c, "fsyncs", 1, 10000) >= 1);
    int64_t after = s_stat (c, "fsyncs");
    CHECK (after < 300);
    CHECK (after <= s_stat (c, "sync_ticks"));
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_rmtree (B.data_dir);
}

UFO_TEST (test_blobs_and_prompt)
{
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    ufo_error_t err;
    unsigned char png [300];
    for (size_t i = 0; i < sizeof png; i++)
        png [i] = (unsigned char) (i * 7);
    char hex [65], again [65];
    CHECK_INT (ufo_bb_client_blob_put (c, png, sizeof png, hex, &err), 0);
    CHECK_INT (strlen (hex), 64);
    CHECK_INT (ufo_bb_client_blob_put (c, png, sizeof png, again, &err), 0);
    CHECK_STR (hex, again);
    char *data = NULL;
    size_t len = 0;
    CHECK_INT (ufo_bb_client_blob_get (c, hex, &data, &len, &err), 0);
    CHECK_INT (len, sizeof png);
    CHECK (data && memcmp (data, png, len) == 0);
    free (data);
    //  the file is where the content address says
    char path [600];
    snprintf (path, sizeof path, "%s/blobs/%.2s/%s", B.data_dir, hex, hex + 2);
    CHECK (access (path, F_OK) == 0);
    //  a screenshot item referring to it; the prompt fetches the data URL on demand
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "image_path", "action_step1.png");
    ufo_value_t *meta = ufo_value_new_map ();
    ufo_value_map_set_int (meta, "step", 1);
    ufo_value_map_set (item, "metadata", &meta);
    ufo_value_map_set_str (item, "blob", hex);
    CHECK_INT (ufo_bb_client_add (c, "s", "screenshots", &item, NULL, NULL, &err), 0);
    ufo_value_t *snap = ufo_bb_client_snapshot (c, "s", NULL, 0, &err);
    REQUIRE (snap);
    ufo_value_t *board = ufo_value_dup (ufo_value_map_get (snap, "board"));
    CHECK_INT (ufo_bb_client_fill_images (c, board, &err), 1);
    const char *url = ufo_value_str (ufo_value_path (board, "screenshots.0.image_str"));
    CHECK (url && strncmp (url, "data:image/png;base64,", 22) == 0);
    CHECK_INT (strlen (url), 22 + 400);
    //  the original's prompt: the screenshot's metadata, then its image as a data URL
    ufo_board_t *bb = ufo_board_new ();
    CHECK_INT (ufo_board_from_map (bb, board, &err), 0);
    ufo_value_t *prompt = ufo_board_to_prompt (bb);
    size_t parts = ufo_value_size (prompt);
    CHECK_INT (parts, 6);
    CHECK_STR (ufo_value_str (ufo_value_path (prompt, "5.type")), "image_url");
    CHECK_STR (ufo_value_str (ufo_value_path (prompt, "5.image_url.url")), url);
    ufo_value_destroy (&prompt);
    //  a local board's map: its screenshot maps are shared, read-only; filling the images
    //  replaces them with filled copies and leaves the board as it was
    ufo_board_t *local = ufo_board_new ();
    CHECK_INT (ufo_board_from_map (local, board, &err), 0);
    ufo_item_remove (ufo_memory_at (ufo_board_memory (local, UFO_MEM_SCREENSHOTS), 0), "image_str");
    char *before = ufo_board_to_json (local, NULL);
    ufo_value_t *shared = ufo_board_to_map (local);
    CHECK (ufo_value_frozen (ufo_value_path (shared, "screenshots.0")));
    CHECK_INT (ufo_bb_client_fill_images (c, shared, &err), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (shared, "screenshots.0.image_str")), url);
    CHECK (!ufo_value_frozen (ufo_value_path (shared, "screenshots.0")));
    char *after = ufo_board_to_json (local, NULL);
    CHECK_STR (after, before);
    CHECK (strstr (after, "image_str") == NULL);
    free (before);
    free (after);
    ufo_value_destroy (&shared);
    ufo_board_destroy (&local);
    ufo_board_destroy (&bb);
    ufo_value_destroy (&board);
    ufo_value_destroy (&snap);
    //  a missing blob
    CHECK_INT (ufo_bb_client_blob_get (c, "00000000000000000000000000000000000000000000000000000000000000ab",
                                       &data, &len, &err), -1);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

UFO_TEST (test_operation)
{
    //  --help / --version / bad arguments / a second broker on the same data directory
    char cmd [1200];
    snprintf (cmd, sizeof cmd, "%s --help | grep -q -- --data-dir", bb_test_binary ());
    CHECK_INT (system (cmd), 0);
    snprintf (cmd, sizeof cmd, "%s --version | grep -q ufo-broker", bb_test_binary ());
    CHECK_INT (system (cmd), 0);
    snprintf (cmd, sizeof cmd, "%s --fsync sometimes 2>/dev/null", bb_test_binary ());
    CHECK (WEXITSTATUS (system (cmd)) == 2);
    //  a growth out of range or not a number: a clear message naming the flag, exit 2
    snprintf (cmd, sizeof cmd, "timeout 10 %s --snapshot-growth 100001 2>&1 | grep -q -- '--snapshot-growth needs'",
              bb_test_binary ());
    CHECK_INT (system (cmd), 0);
    snprintf (cmd, sizeof cmd, "timeout 10 %s --snapshot-growth lots 2>/dev/null", bb_test_binary ());
    CHECK (WEXITSTATUS (system (cmd)) == 2);
    snprintf (cmd, sizeof cmd, "UFO_BROKER__SNAPSHOT_GROWTH=-1 timeout 10 %s 2>&1 | grep -q broker.snapshot_growth",
              bb_test_binary ());
    CHECK_INT (system (cmd), 0);
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    bb_test_broker_t second = B;
    snprintf (second.cmd, sizeof second.cmd, "ipc://%s/cmd2", B.dir);
    snprintf (second.bus, sizeof second.bus, "ipc://%s/bus2", B.dir);
    bb_test_start (&second, NULL);
    CHECK_INT (bb_test_wait_exit (&second, 10000), 1);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);

    //  no endpoints given: both sides meet on the default ipc endpoints in the run directory
    char run_dir [400];
    snprintf (run_dir, sizeof run_dir, "%s/run", B.dir);
    setenv ("UFO_RUN_DIR", run_dir, 1);
    pid_t pid = fork ();
    if (pid == 0) {
        int null = open ("/dev/null", O_WRONLY);
        dup2 (null, 2);
        execl (bb_test_binary (), bb_test_binary (), "--data-dir", B.data_dir, "--stats-ms", "0", (char *) NULL);
        _exit (127);
    }
    B.pid = pid;
    ufo_error_t err;
    c = ufo_bb_client_new ("", "", &err);
    REQUIRE (c);
    ufo_bb_client_set_timeout (c, 250);
    ufo_value_t *pong = NULL;
    for (int i = 0; i < 80 && !pong; i++)
        pong = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (pong);
    ufo_value_destroy (&pong);
    char path [600];
    snprintf (path, sizeof path, "%s/broker-cmd", run_dir);
    CHECK (access (path, F_OK) == 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    unsetenv ("UFO_RUN_DIR");
}

int
main (void)
{
    bb_test_init (&B, "bb-broker");
    UFO_RUN (test_requests);
    UFO_RUN (test_subscribers);
    UFO_RUN (test_stats_event);
    UFO_RUN (test_limits);
    UFO_RUN (test_restart_and_compaction);
    UFO_RUN (test_compaction_growth);
    UFO_RUN (test_snapshot_file);
    UFO_RUN (test_corrupt_log);
    UFO_RUN (test_everysec_and_no);
    UFO_RUN (test_everysec_fsyncs);
    UFO_RUN (test_blobs_and_prompt);
    UFO_RUN (test_operation);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
