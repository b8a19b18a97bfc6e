/*  test_bb_diskfull.c - a full disk under a real ufo-broker (issue 21). The test mounts a
    small tmpfs as the data directory (it needs root: skipped with 77 otherwise), fills it,
    and checks that writes are refused with `unavailable` while pings, snapshots, lists and
    dispatch of a task that was already durable go on; that writes resume by themselves
    once space is freed; that a SIGKILL + restart then holds every acknowledged item exactly
    once and none that was refused; that a duplicated record at the log's tail is reported;
    and that a read-only data directory is reported as exactly that at start-up. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_worker.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include <czmq.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

static bb_test_broker_t B;
static bool s_mounted;

static bool
s_log_count (const char *needle, int *count)
{
    *count = bb_test_log_count (&B, needle);
    return *count > 0;
}

static bool
s_log_contains (const char *needle, int timeout_ms)
{
    return bb_test_log_contains (&B, needle, timeout_ms);
}

static ufo_bb_client_t *
s_client (void)
{
    return bb_test_connect (&B, NULL, 10000, 5000);
}

static bool
s_start (void)
{
    return bb_test_start_answering (&B, (const char *const []) { "--fsync", "always", "--stats-ms", "0", NULL });
}

//  Adds item n (64 KB of text) to board "full"; returns the error code (0: acknowledged).
static int
s_add (ufo_bb_client_t *c, int n, char *message)
{
    static char text [65537];
    memset (text, 'a' + n % 26, 65536);
    return bb_test_add_n (c, "full", "trajectories", n, text, message);
}

//  Items of board "full" by their "n": counts[n] (n < cap). Returns the number of items,
//  or -1 when the snapshot failed.
static int
s_items (ufo_bb_client_t *c, int *counts, int cap)
{
    return bb_test_count_n (c, "full", "trajectories", counts, cap);
}

//  Fills the file system of the data directory up to `leave` free bytes with a filler file.
static bool
s_fill (const char *path, uint64_t leave)
{
    struct statvfs vfs;
    if (statvfs (B.data_dir, &vfs) != 0)
        return false;
    uint64_t free_bytes = (uint64_t) vfs.f_bavail * vfs.f_frsize;
    if (free_bytes <= leave)
        return true;
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return false;
    static char block [65536];
    uint64_t todo = free_bytes - leave;
    while (todo > 0) {
        ssize_t rc = write (fd, block, todo < sizeof block ? todo : sizeof block);
        if (rc <= 0)
            break;
        todo -= (uint64_t) rc;
    }
    close (fd);
    return true;
}

#define S_CAP 1000

UFO_TEST (test_disk_full)
{
    REQUIRE (s_start ());
    ufo_bb_client_t *c = s_client ();
    REQUIRE (c);
    //  a task submitted (and durable) before the disk fills; its worker comes later
    ufo_error_t err;
    ufo_tasks_t *tasks = ufo_tasks_new (B.cmd, "diskfull-test", NULL, NULL, &err);
    REQUIRE (tasks);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "eval");
    ufo_value_t *tb = ufo_value_new_map ();
    ufo_value_map_set_str (tb, "what", "before");
    ufo_value_map_set (spec, "body", &tb);
    char task [33];
    REQUIRE (bb_test_submit_accepted (tasks, &spec, task));
    //  fill the disk: 3 MB left
    char filler [400];
    snprintf (filler, sizeof filler, "%s/filler", B.data_dir);
    REQUIRE (s_fill (filler, 3u << 20));
    static int acked [S_CAP], refused [S_CAP], counts [S_CAP];
    memset (acked, 0, sizeof acked);
    memset (refused, 0, sizeof refused);
    char message [200];
    int n = 0, nacked = 0, rc = 0;
    for (; n < S_CAP / 2 && rc == 0; n++) {
        rc = s_add (c, n, message);
        if (rc == 0) {
            acked [n] = 1;
            nacked++;
        }
        else
            refused [n] = 1;
    }
    fprintf (stderr, "  %d items acknowledged before the disk was full: %s\n", nacked, message);
    CHECK_INT (rc, UFO_E_UNAVAILABLE);
    CHECK_CONTAINS (message, "disk is full");
    CHECK (nacked > 5);
    //  more writes: refused at once, the same way; blob puts and task submissions too
    for (int i = 0; i < 5; i++, n++) {
        CHECK_INT (s_add (c, n, message), UFO_E_UNAVAILABLE);
        refused [n] = 1;
    }
    char hex [65];
    CHECK (ufo_bb_client_blob_put (c, "png", 3, hex, &err) == -1 && err.code == UFO_E_UNAVAILABLE);
    CHECK_INT (bb_test_call (c, "task.submit", "{\"client\":\"x\",\"task\":\"t-full\",\"service\":\"eval\",\"body\":{}}",
                       NULL, message), UFO_E_UNAVAILABLE);
    CHECK_INT (bb_test_call (c, "bb.delete", "{\"board\":\"full\"}", NULL, message), UFO_E_UNAVAILABLE);
    //  reads go on: ping, list, snapshot (exactly the acknowledged items), stats
    CHECK_INT (bb_test_call (c, "ping", NULL, NULL, NULL), 0);
    CHECK_INT (bb_test_call (c, "bb.list", NULL, NULL, NULL), 0);
    CHECK_INT (s_items (c, counts, S_CAP), nacked);
    for (int i = 0; i < S_CAP; i++)
        if (counts [i] != acked [i])
            UFO_FAIL_ ("item %d: %d copies while full, acknowledged %d", i, counts [i], acked [i]);
    ufo_value_t *stats = NULL;
    CHECK_INT (bb_test_call (c, "stats", NULL, &stats, NULL), 0);
    CHECK (ufo_value_map_bool (stats, "disk_full", false));
    CHECK (ufo_value_map_int (stats, "writes_refused", 0) >= 8);
    ufo_value_destroy (&stats);
    //  dispatch of what is durable goes on: a worker takes the earlier task and completes it
    ufo_worker_config_t wc = { .endpoint = B.cmd, .service = "eval", .name = "w-full", .capacity = 1 };
    ufo_worker_t *w = ufo_worker_new (&wc, &err);
    REQUIRE (w);
    ufo_value_t *t = NULL;
    for (int i = 0; i < 100 && !t; i++) {
        t = ufo_worker_next (w, 100);
        if (t && strcmp (ufo_value_map_str (t, "kind", ""), "task") != 0)
            ufo_value_destroy (&t);
    }
    REQUIRE (t);
    CHECK_STR (ufo_value_str (ufo_value_path (t, "body.what")), "before");
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "verdict", "done while full");
    ufo_worker_complete (w, ufo_value_map_str (t, "task", ""), "done", &result);
    ufo_value_destroy (&t);
    ufo_value_t *ev = NULL;
    for (int i = 0; i < 100 && !ev; i++) {
        ev = ufo_tasks_next (tasks, 100);
        if (ev && strcmp (ufo_value_map_str (ev, "kind", ""), "result") != 0)
            ufo_value_destroy (&ev);
    }
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "done");
    CHECK_STR (ufo_value_str (ufo_value_path (ev, "body.verdict")), "done while full");
    ufo_value_destroy (&ev);
    ufo_worker_destroy (&w);
    int lines;
    s_log_count ("disk full:", &lines);
    CHECK_INT (lines, 1);                   //  logged once
    //  space is freed: writes are taken again, by themselves
    CHECK (unlink (filler) == 0);
    int64_t until = ufo_time_mono_ms () + 5000;
    rc = -1;
    while (rc != 0 && ufo_time_mono_ms () < until && n < S_CAP) {
        rc = s_add (c, n, message);
        if (rc == 0) {
            acked [n] = 1;
            nacked++;
        }
        else {
            fprintf (stderr, "  while freeing: %s\n", message);
            refused [n] = 1;
            usleep (200000);
        }
        n++;
    }
    CHECK_INT (rc, 0);
    CHECK (s_log_contains ("disk space is back: writes are taken again", 1000));
    for (int i = 0; i < 5 && n < S_CAP; i++, n++) {
        rc = s_add (c, n, message);
        if (rc)
            fprintf (stderr, "  after space returned: %s\n", message);
        CHECK_INT (rc, 0);
        acked [n] = 1;
        nacked++;
    }
    ufo_bb_client_destroy (&c);
    ufo_tasks_destroy (&tasks);
    //  SIGKILL + restart: every acknowledged item exactly once, nothing refused
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
    REQUIRE (s_start ());
    c = s_client ();
    CHECK_INT (s_items (c, counts, S_CAP), nacked);
    int wrong = 0;
    for (int i = 0; i < S_CAP; i++)
        wrong += counts [i] != acked [i];
    CHECK_INT (wrong, 0);
    char json [100];
    snprintf (json, sizeof json, "{\"task\":\"%s\"}", task);
    ufo_value_t *fetched = NULL;
    CHECK_INT (bb_test_call (c, "task.fetch", json, &fetched, NULL), 0);
    CHECK_STR (ufo_value_map_str (fetched, "state", ""), "done");
    ufo_value_destroy (&fetched);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

//  Appends a copy of the last record of the newest log segment to its tail.
static bool
s_duplicate_tail (void)
{
    char dir [400], path [700] = "";
    snprintf (dir, sizeof dir, "%s/log", B.data_dir);
    DIR *d = opendir (dir);
    struct dirent *e;
    while (d && (e = readdir (d)))
        if (strncmp (e->d_name, "wal-", 4) == 0) {
            char candidate [700];
            snprintf (candidate, sizeof candidate, "%s/%s", dir, e->d_name);
            if (strcmp (candidate, path) > 0)
                snprintf (path, sizeof path, "%s", candidate);
        }
    if (d)
        closedir (d);
    FILE *f = fopen (path, "r+b");
    if (!f)
        return false;
    //  walk the records: magic, u32 length, u32 crc, payload
    long last = -1, off = 0;
    uint8_t header [12];
    while (fseek (f, off, SEEK_SET) == 0 && fread (header, 1, 12, f) == 12 && memcmp (header, "UFOW", 4) == 0) {
        uint32_t len = (uint32_t) header [4] | (uint32_t) header [5] << 8 | (uint32_t) header [6] << 16
                     | (uint32_t) header [7] << 24;
        last = off;
        off += 12 + (long) len;
    }
    bool ok = false;
    if (last >= 0) {
        size_t len = (size_t) (off - last);
        char *copy = ufo_malloc (len);
        ok = fseek (f, last, SEEK_SET) == 0 && fread (copy, 1, len, f) == len
          && fseek (f, off, SEEK_SET) == 0 && fwrite (copy, 1, len, f) == len;
        free (copy);
    }
    fclose (f);
    return ok;
}

UFO_TEST (test_duplicated_tail_record)
{
    REQUIRE (s_duplicate_tail ());
    REQUIRE (s_start ());
    CHECK (s_log_contains ("repeats a record already replayed (a duplicated record", 2000));
    ufo_bb_client_t *c = s_client ();
    static int counts [S_CAP];
    CHECK (s_items (c, counts, S_CAP) > 0);
    int doubled = 0;
    for (int i = 0; i < S_CAP; i++)
        doubled += counts [i] > 1;
    CHECK_INT (doubled, 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

UFO_TEST (test_read_only_data_dir)
{
    REQUIRE (mount ("tmpfs", B.data_dir, "tmpfs", MS_REMOUNT | MS_RDONLY, "size=16m") == 0);
    bb_test_start (&B, (const char *const []) { "--stats-ms", "0", NULL });
    int status = bb_test_wait_exit (&B, 10000);
    CHECK (status > 0);
    CHECK (s_log_contains ("is on a read-only file system", 1000));
    int n;
    CHECK (!s_log_count ("in use by another broker", &n));
}

int
main (void)
{
    bb_test_init (&B, "diskfull");
    mkdir (B.data_dir, 0755);
    if (geteuid () != 0 || mount ("tmpfs", B.data_dir, "tmpfs", 0, "size=16m,mode=0755") != 0) {
        fprintf (stderr, "test_bb_diskfull: cannot mount a tmpfs (%s): skipped\n",
                 geteuid () != 0 ? "not root" : strerror (errno));
        bb_test_cleanup (&B);
        return 77;
    }
    s_mounted = true;
    UFO_RUN (test_disk_full);
    UFO_RUN (test_duplicated_tail_record);
    UFO_RUN (test_read_only_data_dir);
    int rc = UFO_TEST_END ();
    if (B.pid > 0)
        bb_test_stop (&B, SIGKILL);
    if (s_mounted && umount2 (B.data_dir, MNT_DETACH) != 0)
        fprintf (stderr, "umount %s: %s\n", B.data_dir, strerror (errno));
    if (rc != 0)
        setenv ("BB_TEST_KEEP", "1", 1);
    bb_test_cleanup (&B);
    zsys_shutdown ();
    return rc;
}
