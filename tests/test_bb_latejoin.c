/*  test_bb_latejoin.c - replicas that join while writes stream end with exactly the
    broker's state; a replica that loses events detects the gap and resyncs.

    A writer thread streams adds (and now and then a clear of one memory) to a board.
    Followers join mid-stream, apply events from the bus, and at the end must equal a fresh
    snapshot: same items, in the same order, no item twice. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_proto.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include <pthread.h>
#include <stdatomic.h>
#include <czmq.h>

#define WRITES 3000

static bb_test_broker_t B;
static atomic_long s_written;           //  adds acknowledged so far
static atomic_ullong s_final_last;      //  the board's last seq when the writer is done
static atomic_int s_writer_failed;

static ufo_bb_client_t *
s_connect (const char *bus)
{
    return bb_test_connect (&B, bus, 20000, 20000);
}

static void *
s_writer (void *arg)
{
    const char *board = (const char *) arg;
    ufo_bb_client_t *c = s_connect (NULL);
    if (!c) {
        s_writer_failed = 1;
        return NULL;
    }
    ufo_error_t err;
    uint64_t last = 0;
    for (long n = 0; n < WRITES; n++) {
        int rc;
        if (n % 500 == 499)
            rc = ufo_bb_client_clear (c, board, "requests", &err);
        else {
            ufo_value_t *items = ufo_value_new_list ();
            for (int k = 0; k < 1 + n % 3; k++) {
                ufo_value_t *item = ufo_value_new_map ();
                ufo_value_map_set_int (item, "n", n);
                ufo_value_map_set_int (item, "k", k);
                ufo_value_list_push (items, &item);
            }
            rc = ufo_bb_client_add (c, board, ufo_bb_memory_name ((int) (n % 4)), &items, NULL, &last, &err);
        }
        if (rc != 0) {
            fprintf (stderr, "  writer: %s\n", err.message);
            s_writer_failed = 1;
            break;
        }
        s_written = n + 1;
    }
    ufo_value_t *snap = ufo_bb_client_snapshot (c, board, NULL, 0, &err);
    if (snap)
        s_final_last = (uint64_t) ufo_value_map_int (snap, "last", 0);
    ufo_value_destroy (&snap);
    ufo_bb_client_destroy (&c);
    return NULL;
}

//  Runs a writer on board, joins with a follower after `join_after` writes (drop_every: the
//  follower's test hook), polls until the writer is done and the replica caught up, then
//  compares the replica with a fresh snapshot.
static void
s_run (const char *board, long join_after, uint64_t drop_every, ufo_bb_client_stats_t *stats_out)
{
    s_written = 0;
    s_final_last = 0;
    s_writer_failed = 0;
    pthread_t writer;
    pthread_create (&writer, NULL, s_writer, (void *) board);
    ufo_bb_client_t *c = s_connect (B.bus);
    if (!c) {
        pthread_join (writer, NULL);
        CHECK (!"follower could not connect");
        return;
    }
    for (int i = 0; i < 3000 && s_written < join_after && !s_writer_failed; i++)
        usleep (2000);
    ufo_bb_client_test_drop (c, drop_every);
    ufo_error_t err;
    CHECK_INT (ufo_bb_client_follow (c, board, &err), 0);
    int64_t deadline = ufo_time_mono_ms () + 60000;
    while (ufo_time_mono_ms () < deadline) {
        if (ufo_bb_client_poll (c, 50, &err) < 0)
            fprintf (stderr, "  poll: %s\n", err.message);
        if (s_final_last && ufo_bb_client_replica_last (c, board) >= s_final_last)
            break;
        if (s_writer_failed)
            break;
    }
    pthread_join (writer, NULL);
    CHECK (!s_writer_failed);
    CHECK (s_final_last > 0);
    CHECK_INT (ufo_bb_client_replica_last (c, board), s_final_last);
    ufo_value_t *snap = ufo_bb_client_snapshot (c, board, NULL, 0, &err);
    REQUIRE (snap);
    const ufo_value_t *replica = ufo_bb_client_replica (c, board);
    REQUIRE (replica);
    CHECK (ufo_value_equal (replica, ufo_value_map_get (snap, "board")));
    //  no item twice, in write order, within each memory
    for (int m = 0; m < 4; m++) {
        const ufo_value_t *list = ufo_value_map_get (replica, ufo_bb_memory_name (m));
        int64_t prev = -1;
        for (size_t i = 0; i < ufo_value_size (list); i++) {
            const ufo_value_t *item = ufo_value_list_at (list, i);
            int64_t key = ufo_value_map_int (item, "n", -1) * 4 + ufo_value_map_int (item, "k", 0);
            if (key <= prev)
                UFO_FAIL_ ("memory %s: item %zu out of order or repeated", ufo_bb_memory_name (m), i);
            prev = key;
        }
    }
    ufo_value_destroy (&snap);
    ufo_bb_client_stats (c, stats_out);
    fprintf (stderr, "  %s: %" PRIu64 " events applied, %" PRIu64 " duplicates dropped, %" PRIu64
             " gaps, %" PRIu64 " resyncs\n", board, stats_out->events, stats_out->duplicates,
             stats_out->gaps, stats_out->resyncs);
    ufo_bb_client_destroy (&c);
}

UFO_TEST (test_late_join)
{
    ufo_bb_client_stats_t stats;
    s_run ("late", 700, 0, &stats);
    CHECK (stats.events > 100);
}

UFO_TEST (test_gap_resync)
{
    ufo_bb_client_stats_t stats;
    s_run ("gappy", 300, 37, &stats);
    CHECK (stats.gaps > 0);
    CHECK (stats.resyncs == stats.gaps);
}

UFO_TEST (test_delete_and_recreate)
{
    //  a follower sees a board deleted and created again, and stays exact
    ufo_bb_client_t *w = s_connect (NULL);
    ufo_bb_client_t *f = s_connect (B.bus);
    REQUIRE (w && f);
    ufo_error_t err;
    ufo_value_t *item = ufo_value_new_string ("one");
    CHECK_INT (ufo_bb_client_add (w, "phoenix", "questions", &item, NULL, NULL, &err), 0);
    CHECK_INT (ufo_bb_client_follow (f, "phoenix", &err), 0);
    CHECK_INT (ufo_bb_client_delete (w, "phoenix", &err), 0);
    item = ufo_value_new_string ("two");
    uint64_t last = 0;
    CHECK_INT (ufo_bb_client_add (w, "phoenix", "requests", &item, NULL, &last, &err), 0);
    for (int i = 0; i < 100 && ufo_bb_client_replica_last (f, "phoenix") != last; i++)
        ufo_bb_client_poll (f, 50, &err);
    CHECK_INT (ufo_bb_client_replica_last (f, "phoenix"), last);
    const ufo_value_t *replica = ufo_bb_client_replica (f, "phoenix");
    CHECK_INT (ufo_value_size (ufo_value_map_get (replica, "questions")), 0);
    CHECK_STR (ufo_value_str (ufo_value_path (replica, "requests.0.text")), "two");
    ufo_bb_client_destroy (&w);
    ufo_bb_client_destroy (&f);
}

UFO_TEST (test_reconnect)
{
    //  the broker is killed and restarted under a follower: the follower's sockets reconnect,
    //  it detects what it missed by sequence number and ends exact
    ufo_bb_client_t *w = s_connect (NULL);
    ufo_bb_client_t *f = s_connect (B.bus);
    REQUIRE (w && f);
    ufo_error_t err;
    uint64_t last = 0;
    for (int i = 0; i < 10; i++) {
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_int (item, "n", i);
        CHECK_INT (ufo_bb_client_add (w, "rc", "trajectories", &item, NULL, &last, &err), 0);
    }
    CHECK_INT (ufo_bb_client_follow (f, "rc", &err), 0);
    CHECK_INT (ufo_bb_client_replica_last (f, "rc"), last);
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
    const char *extra [] = { "--stats-ms", "100", NULL };
    bb_test_start (&B, extra);
    //  write until the follower has caught up (bounded): the first events after the restart
    //  may go out before its subscription is back, which it must detect at a later one
    int64_t deadline = ufo_time_mono_ms () + 20000;
    int n = 10;
    while (ufo_time_mono_ms () < deadline) {
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_int (item, "n", n++);
        if (ufo_bb_client_add (w, "rc", "trajectories", &item, NULL, &last, &err) != 0)
            continue;                       //  still restarting: the call timed out
        ufo_bb_client_poll (f, 20, &err);
        if (n >= 40 && ufo_bb_client_replica_last (f, "rc") == last)
            break;
    }
    for (int i = 0; i < 100 && ufo_bb_client_replica_last (f, "rc") != last; i++)
        ufo_bb_client_poll (f, 20, &err);
    CHECK_INT (ufo_bb_client_replica_last (f, "rc"), last);
    ufo_value_t *snap = ufo_bb_client_snapshot (f, "rc", NULL, 0, &err);
    REQUIRE (snap);
    CHECK (ufo_value_equal (ufo_bb_client_replica (f, "rc"), ufo_value_map_get (snap, "board")));
    ufo_value_destroy (&snap);
    ufo_bb_client_stats_t stats;
    ufo_bb_client_stats (f, &stats);
    fprintf (stderr, "  reconnect: %" PRIu64 " events applied, %" PRIu64 " gaps, %" PRIu64 " resyncs\n",
             stats.events, stats.gaps, stats.resyncs);
    ufo_bb_client_destroy (&w);
    ufo_bb_client_destroy (&f);
}

UFO_TEST (test_hwm_drop)
{
    //  A real high-water-mark drop, no client hook: a broker whose bus socket holds 10
    //  messages per subscriber, a follower that stalls (does not poll) while many thousands
    //  of events stream. libzmq's XPUB drops what does not fit; the follower must notice at the
    //  next event of the board, resync, and end equal to a fresh snapshot.
    bb_test_broker_t H;
    bb_test_init (&H, "bb-hwm");
    const char *extra [] = { "--bus-hwm", "10", "--fsync", "no", "--stats-ms", "0", NULL };
    bb_test_start (&H, extra);
    ufo_error_t err;
    ufo_bb_client_t *w = ufo_bb_client_new (H.cmd, NULL, &err);
    ufo_bb_client_t *f = ufo_bb_client_new (H.cmd, H.bus, &err);
    REQUIRE (w && f);
    ufo_bb_client_set_timeout (w, 250);
    ufo_value_t *pong = NULL;
    for (int i = 0; i < 80 && !pong; i++)
        pong = ufo_bb_client_call (w, "ping", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (pong);
    ufo_value_destroy (&pong);
    ufo_bb_client_set_timeout (w, 20000);
    ufo_bb_client_set_timeout (f, 20000);
    //  The follower keeps its default receive queue (100000 messages), so the stall must
    //  outlast it: 120000 events, sent pipelined in windows of 1000 to keep the run short.
    CHECK_INT (ufo_bb_client_follow (f, "hwm", &err), 0);
    uint64_t last = 0;
    const int total = 120000, window = 1000;
    for (int n = 0; n < total; n += window) {
        for (int k = n; k < n + window; k++) {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "board", "hwm");
            ufo_value_map_set_str (body, "memory", ufo_bb_memory_name (k % 4));
            ufo_value_t *item = ufo_value_new_map ();
            ufo_value_map_set_int (item, "n", k);
            ufo_value_map_set (body, "item", &item);
            char id [65];
            REQUIRE (ufo_bb_client_send (w, "bb.add", &body, NULL, 0, id, &err) == 0);
        }
        for (int k = 0; k < window; k++) {
            char id [65];
            bool ok = false;
            ufo_value_t *reply = ufo_bb_client_recv (w, 20000, id, &ok, &err);
            REQUIRE (reply && ok);
            uint64_t l = (uint64_t) ufo_value_map_int (reply, "last", 0);
            if (l > last)
                last = l;
            ufo_value_destroy (&reply);
        }
    }
    CHECK_INT (last, (uint64_t) total);
    //  One more write after the stall: its event is the one that reveals the gap.
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "n", total);
    CHECK_INT (ufo_bb_client_add (w, "hwm", "questions", &item, NULL, &last, &err), 0);
    for (int i = 0; i < 400 && ufo_bb_client_replica_last (f, "hwm") != last; i++)
        if (ufo_bb_client_poll (f, 50, &err) < 0)
            fprintf (stderr, "  poll: %s\n", err.message);
    CHECK_INT (ufo_bb_client_replica_last (f, "hwm"), last);
    ufo_bb_client_stats_t stats;
    ufo_bb_client_stats (f, &stats);
    fprintf (stderr, "  hwm: %" PRIu64 " events applied, %" PRIu64 " duplicates dropped, %" PRIu64
             " gaps, %" PRIu64 " resyncs\n", stats.events, stats.duplicates, stats.gaps, stats.resyncs);
    CHECK (stats.gaps >= 1);
    CHECK (stats.resyncs >= 1);
    CHECK (stats.events + stats.duplicates < (uint64_t) total + 1);      //  events were really lost
    ufo_value_t *snap = ufo_bb_client_snapshot (w, "hwm", NULL, 0, &err);
    REQUIRE (snap);
    CHECK_INT (ufo_value_map_int (snap, "last", -1), (int64_t) last);
    const ufo_value_t *replica = ufo_bb_client_replica (f, "hwm");
    REQUIRE (replica);
    CHECK (ufo_value_equal (replica, ufo_value_map_get (snap, "board")));
    CHECK_INT (ufo_value_size (ufo_value_map_get (replica, "questions")), total / 4 + 1);
    ufo_value_destroy (&snap);
    ufo_bb_client_destroy (&w);
    ufo_bb_client_destroy (&f);
    CHECK_INT (bb_test_stop (&H, SIGTERM), 0);
    bb_test_cleanup (&H);
}

int
main (void)
{
    bb_test_init (&B, "bb-latejoin");
    const char *extra [] = { "--stats-ms", "100", NULL };
    bb_test_start (&B, extra);
    UFO_RUN (test_late_join);
    UFO_RUN (test_gap_resync);
    UFO_RUN (test_delete_and_recreate);
    UFO_RUN (test_reconnect);
    UFO_RUN (test_hwm_drop);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
