/*  test_bb_logfault.c - an I/O error on the log of a real ufo-broker (issue 21). The fault is
    injected through the log's test hook (UFOBUS_TEST_WAL_FAULT=FILE, ufo_wal.h): while FILE
    says "write", the log's writes fail with EIO after writing half their bytes; "fsync":
    its fdatasyncs fail with EIO. The test checks that the broker does not stop: the write
    in flight is not acknowledged while the fault lasts, later writes are refused with
    `unavailable`, pings, reads and snapshots are answered; once the fault is gone the
    broker repairs the log by itself, the held write is acknowledged and writes are taken
    again; and that a SIGKILL + restart, after a repair and in the middle of a fault, holds
    every acknowledged item exactly once. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include <czmq.h>
#include <pthread.h>

static bb_test_broker_t B;
static char s_fault_file [400];

static void
s_fault (const char *what)
{
    FILE *f = fopen (s_fault_file, "w");
    assert (f);
    fputs (what, f);
    fclose (f);
}

static ufo_bb_client_t *
s_client (int timeout_ms)
{
    return bb_test_connect (&B, NULL, 10000, timeout_ms);
}

static bool
s_start (void)
{
    return bb_test_start_answering (&B, (const char *const []) { "--fsync", "always", "--stats-ms", "0", NULL });
}

//  Adds item n to board "log"; returns 0 (acknowledged) or the error code; message[200].
static int
s_add (ufo_bb_client_t *c, int n, char *message)
{
    return bb_test_add_n (c, "log", "trajectories", n, "an item of the log fault test, long enough to span", message);
}

//  True while the broker writes a snapshot (or does not answer).
static bool
s_snapshot_running (ufo_bb_client_t *c)
{
    ufo_error_t err;
    ufo_value_t *stats = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
    bool running = !stats || ufo_value_map_bool (stats, "snapshot_running", true);
    ufo_value_destroy (&stats);
    return running;
}

//  Items of board "log" by "n" into counts[0..cap); returns their number, -1 on failure.
static int
s_items (ufo_bb_client_t *c, int *counts, int cap)
{
    return bb_test_count_n (c, "log", "trajectories", counts, cap);
}

//  A write made on its own thread, whose reply comes only after the repair.
typedef struct {
    int n;
    int rc;
    int64_t done_ms;
    char message [200];
} s_held_t;

static void *
s_held_write (void *arg)
{
    s_held_t *h = (s_held_t *) arg;
    ufo_bb_client_t *c = s_client (20000);
    h->rc = s_add (c, h->n, h->message);
    h->done_ms = ufo_time_mono_ms ();
    ufo_bb_client_destroy (&c);
    return NULL;
}

#define S_CAP 400

//  Checks after a restart that the acknowledged items are there exactly once and the
//  refused ones not at all; maybe[n]: not acknowledged, not refused (0 or 1 copy).
static void
s_check_restart (const int *acked, const int *maybe, int nacked)
{
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
    s_fault ("");
    REQUIRE (s_start ());
    ufo_bb_client_t *c = s_client (5000);
    static int counts [S_CAP];
    int total = s_items (c, counts, S_CAP);
    CHECK (total >= nacked);
    int wrong = 0;
    for (int i = 0; i < S_CAP; i++) {
        bool ok = maybe [i] ? counts [i] <= 1 : counts [i] == acked [i];
        if (!ok) {
            fprintf (stderr, "  item %d: %d copies, acknowledged %d\n", i, counts [i], acked [i]);
            wrong++;
        }
    }
    CHECK_INT (wrong, 0);
    ufo_bb_client_destroy (&c);
}

//  One round: `what` fault while writes go on, repair, more writes, SIGKILL + restart.
static void
s_round (const char *what)
{
    static int acked [S_CAP], maybe [S_CAP];
    memset (acked, 0, sizeof acked);
    memset (maybe, 0, sizeof maybe);
    bb_test_rmtree (B.data_dir);
    char log [400];
    snprintf (log, sizeof log, "%s/broker.log", B.dir);
    unlink (log);
    s_fault ("");
    REQUIRE (s_start ());
    ufo_bb_client_t *c = s_client (5000);
    REQUIRE (c);
    char message [200];
    int n = 0, nacked = 0;
    for (; n < 20; n++) {
        CHECK_INT (s_add (c, n, message), 0);
        acked [n] = 1;
        nacked++;
    }
    //  the fault: the next write is not acknowledged while it lasts
    s_fault (what);
    s_held_t held = { .n = n++ };
    pthread_t thread;
    REQUIRE (pthread_create (&thread, NULL, s_held_write, &held) == 0);
    CHECK (bb_test_log_contains (&B, "the log failed", 5000));
    //  writes are refused, reads and pings answered
    int rc = -1;
    for (int i = 0; i < 5; i++, n++) {
        rc = s_add (c, n, message);
        CHECK_INT (rc, UFO_E_UNAVAILABLE);
        if (rc == 0)
            acked [n] = 1;
    }
    CHECK_CONTAINS (message, "log is being repaired");
    ufo_error_t err;
    ufo_value_t *reply = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (reply != NULL);
    ufo_value_destroy (&reply);
    static int counts [S_CAP];
    CHECK (s_items (c, counts, S_CAP) >= 20);
    for (int i = 0; i < 20; i++)
        CHECK_INT (counts [i], 1);
    reply = ufo_bb_client_call (c, "stats", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (reply && ufo_value_map_bool (reply, "log_failed", false));
    ufo_value_destroy (&reply);
    //  repairs keep failing meanwhile (tried once a second), and the held write waits
    CHECK (bb_test_log_contains (&B, "repair of the log failed", 10000));
    CHECK_INT (held.done_ms, 0);                //  not acknowledged
    //  the fault is gone: the broker repairs the log, the held write is acknowledged
    int64_t cleared = ufo_time_mono_ms ();
    s_fault ("");
    pthread_join (thread, NULL);
    CHECK_INT (held.rc, 0);
    CHECK (held.done_ms >= cleared);
    if (held.rc == 0) {
        acked [held.n] = 1;
        nacked++;
    }
    CHECK (bb_test_log_contains (&B, "the log is repaired and durable", 2000));
    for (int i = 0; i < 10; i++, n++) {
        CHECK_INT (s_add (c, n, message), 0);
        acked [n] = 1;
        nacked++;
    }
    CHECK_INT (bb_test_log_count (&B, "error: the log failed:"), 1);    //  logged once
    ufo_bb_client_destroy (&c);
    s_check_restart (acked, maybe, nacked);

    //  a fault again, and a SIGKILL before any repair: what was acknowledged is there once
    c = s_client (5000);
    n = 200;
    for (int i = 0; i < 10; i++, n++) {
        CHECK_INT (s_add (c, n, message), 0);
        acked [n] = 1;
        nacked++;
    }
    s_fault (what);
    ufo_bb_client_set_timeout (c, 1500);
    rc = s_add (c, n, message);
    CHECK (rc != 0);                            //  held (timeout), never acknowledged
    maybe [n++] = 1;
    rc = s_add (c, n, message);
    CHECK (rc != 0);                            //  refused or timed out
    maybe [n++] = 1;
    ufo_bb_client_destroy (&c);
    s_check_restart (acked, maybe, nacked);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

UFO_TEST (test_write_eio)
{
    s_round ("write");
}

UFO_TEST (test_fsync_eio)
{
    s_round ("fsync");
}

//  A snapshot started in the burst whose fdatasync fails: the checkpoint heading its new
//  segment is not durable (the fault drops it, as the kernel may), so the snapshot must not
//  be used by a restart (it would drop the older segments, and the task state with them).
//  The broker stops and removes it; after SIGKILL + restart the task accepted before is
//  still there, and every acknowledged item once.
UFO_TEST (test_snapshot_during_fault)
{
    bb_test_rmtree (B.data_dir);
    s_fault ("");
    bb_test_start (&B, (const char *const []) { "--fsync", "always", "--stats-ms", "0",
                                                "--snapshot-every", "1", "--snapshot-growth", "0", NULL });
    ufo_bb_client_t *c = s_client (5000);
    REQUIRE (c);
    ufo_error_t err;
    ufo_tasks_t *tasks = ufo_tasks_new (B.cmd, "logfault-test", NULL, NULL, &err);
    REQUIRE (tasks);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "eval");
    ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_value_new_map () });
    char task [33];
    REQUIRE (bb_test_submit_accepted (tasks, &spec, task));
    ufo_tasks_destroy (&tasks);
    static int acked [S_CAP], maybe [S_CAP];
    memset (acked, 0, sizeof acked);
    memset (maybe, 0, sizeof maybe);
    char message [200];
    int nacked = 0;
    for (int n = 0; n < 10; n++) {
        CHECK_INT (s_add (c, n, message), 0);
        acked [n] = 1;
        nacked++;
    }
    //  the last snapshot is done and compacted (none starts without a write)
    WAIT_UNTIL (!s_snapshot_running (c), 10000);
    CHECK (!s_snapshot_running (c));
    s_fault ("fsync");
    ufo_bb_client_set_timeout (c, 1500);
    CHECK (s_add (c, 10, message) != 0);        //  held: its burst also started a snapshot
    maybe [10] = 1;
    CHECK (bb_test_log_contains (&B, "dropped: the log failed while it was written", 3000));
    ufo_bb_client_destroy (&c);
    s_check_restart (acked, maybe, nacked);
    c = s_client (5000);
    char json [100];
    snprintf (json, sizeof json, "{\"task\":\"%s\"}", task);
    ufo_value_t *body = ufo_json_parse_str (json, NULL);
    ufo_value_t *fetched = ufo_bb_client_call (c, "task.fetch", &body, NULL, 0, NULL, NULL, &err);
    if (!fetched)
        fprintf (stderr, "  task.fetch: %s\n", err.message);
    CHECK (fetched != NULL);
    CHECK_STR (ufo_value_map_str (fetched, "task", ""), task);
    ufo_value_destroy (&fetched);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

int
main (void)
{
    bb_test_init (&B, "logfault");
    snprintf (s_fault_file, sizeof s_fault_file, "%s/fault", B.dir);
    setenv ("UFOBUS_TEST_WAL_FAULT", s_fault_file, 1);
    UFO_RUN (test_write_eio);
    UFO_RUN (test_fsync_eio);
    UFO_RUN (test_snapshot_during_fault);
    int rc = UFO_TEST_END ();
    if (B.pid > 0)
        bb_test_stop (&B, SIGKILL);
    if (rc != 0)
        setenv ("BB_TEST_KEEP", "1", 1);
    bb_test_cleanup (&B);
    zsys_shutdown ();
    return rc;
}
