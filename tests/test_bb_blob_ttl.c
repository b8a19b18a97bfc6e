/*  test_bb_blob_ttl.c - blobs put with ttl_ms against a real ufo-broker (docs/PROTOCOL.md
    2.3, 2.8): an expiring blob is removed after its time (blob.get not_found, its files gone,
    stats blobs_expired); a second put with ttl_ms extends it, one without pins it; a blob an
    item of a board refers to is kept (and becomes permanent); bad ttl_ms values are refused
    with nothing stored; and across SIGKILL + restart (fsync always and no) an expiry is
    neither lost nor invented. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"

static bb_test_broker_t B;
static const char *s_fsync = "always";

static ufo_bb_client_t *
s_start (void)
{
    const char *extra [] = { "--fsync", s_fsync, NULL };
    bb_test_start (&B, extra);
    return bb_test_connect (&B, NULL, 10000, 5000);
}

//  blob.put of text with ttl_ms (0: none; < 0: the raw JSON body in json). Returns the error
//  code (0: ok), the reference into hex and the reply's expires_ms into *expires_p.
static int
s_put (ufo_bb_client_t *c, const char *text, int64_t ttl_ms, const char *json, char hex [65], int64_t *expires_p)
{
    ufo_error_t err;
    ufo_value_t *body = NULL;
    if (json)
        body = ufo_json_parse_str (json, &err);
    else
    if (ttl_ms) {
        body = ufo_value_new_map ();
        ufo_value_map_set_int (body, "ttl_ms", ttl_ms);
    }
    ufo_value_t *r = ufo_bb_client_call (c, "blob.put", &body, text, strlen (text), NULL, NULL, &err);
    if (!r)
        return err.code;
    snprintf (hex, 65, "%s", ufo_value_map_str (r, "blob", ""));
    if (expires_p)
        *expires_p = ufo_value_map_int (r, "expires_ms", 0);
    ufo_value_destroy (&r);
    return 0;
}

//  0 when the broker serves the blob, else the error code of blob.get.
static int
s_get (ufo_bb_client_t *c, const char *hex)
{
    char *data = NULL;
    size_t len = 0;
    ufo_error_t err;
    int rc = ufo_bb_client_blob_get (c, hex, &data, &len, &err);
    free (data);
    return rc == 0 ? 0 : err.code;
}

static bool
s_file (const char *hex, const char *suffix)
{
    char path [600];
    snprintf (path, sizeof path, "%s/blobs/%.2s/%s%s", B.data_dir, hex, hex + 2, suffix);
    return access (path, F_OK) == 0;
}

static int64_t
s_stat (ufo_bb_client_t *c, const char *key)
{
    ufo_value_t *s = NULL;
    if (bb_test_call (c, "stats", NULL, &s, NULL) != 0)
        return -1;
    int64_t v = ufo_value_map_int (s, key, -1);
    ufo_value_destroy (&s);
    return v;
}

//  Waits (bounded) until blob.get of hex says not_found.
static bool
s_gone (ufo_bb_client_t *c, const char *hex, int timeout_ms)
{
    for (int64_t until = ufo_time_mono_ms () + timeout_ms; ufo_time_mono_ms () < until; usleep (100 * 1000))
        if (s_get (c, hex) == UFO_E_NOT_FOUND)
            return true;
    return false;
}

UFO_TEST (test_expiry)
{
    ufo_bb_client_t *c = s_start ();
    REQUIRE (c);
    char hex [65], perm [65], pinned [65], kept [65], h2 [65];
    int64_t expires = 0;
    //  an expiring blob: served, then gone with its files
    int64_t before = (int64_t) time (NULL) * 1000;
    CHECK_INT (s_put (c, "screenshot one", 1000, NULL, hex, &expires), 0);
    CHECK (expires >= before + 1000 && expires <= before + 3000);
    CHECK_INT (s_get (c, hex), 0);
    CHECK (s_file (hex, ".ttl"));
    CHECK_INT (s_stat (c, "blobs_expiring"), 1);
    //  a permanent blob put again with ttl_ms stays permanent (no expires_ms)
    CHECK_INT (s_put (c, "permanent bytes", 0, NULL, perm, NULL), 0);
    CHECK_INT (s_put (c, "permanent bytes", 1000, NULL, h2, &expires), 0);
    CHECK_INT (expires, 0);
    CHECK (!s_file (perm, ".ttl"));
    //  an expiring blob put again without ttl_ms is pinned
    CHECK_INT (s_put (c, "pinned bytes", 1000, NULL, pinned, NULL), 0);
    CHECK (s_file (pinned, ".ttl"));
    CHECK_INT (s_put (c, "pinned bytes", 0, NULL, h2, NULL), 0);
    CHECK (!s_file (pinned, ".ttl"));
    //  an expiring blob that a board's item refers to (a step's screenshot with the same bytes)
    CHECK_INT (s_put (c, "the same screen", 1000, NULL, kept, NULL), 0);
    char add [400];
    snprintf (add, sizeof add, "{\"board\": \"s1\", \"memory\": \"screenshots\", \"item\": {\"image_path\": \"x.png\","
              " \"metadata\": {}, \"blob\": \"%s\"}}", kept);
    CHECK_INT (bb_test_call (c, "bb.add", add, NULL, NULL), 0);

    CHECK (s_gone (c, hex, 5000));
    CHECK (!s_file (hex, ""));
    CHECK (!s_file (hex, ".ttl"));
    usleep (1500 * 1000);               //  the other expiries have passed as well
    CHECK_INT (s_get (c, perm), 0);
    CHECK_INT (s_get (c, pinned), 0);
    CHECK_INT (s_get (c, kept), 0);
    CHECK (!s_file (kept, ".ttl"));     //  now permanent
    CHECK_INT (s_stat (c, "blobs_expired"), 1);
    CHECK_INT (s_stat (c, "blobs_kept"), 1);
    CHECK_INT (s_stat (c, "blobs_expiring"), 0);
    CHECK (bb_test_log_has (&B, "a board refers to it: kept"));
    //  the same bytes put again after their expiry: a new blob (with its own expiry)
    CHECK_INT (s_put (c, "screenshot one", 60000, NULL, h2, &expires), 0);
    CHECK_STR (h2, hex);
    CHECK_INT (s_get (c, hex), 0);
    CHECK (expires > 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

UFO_TEST (test_bad_ttl)
{
    ufo_bb_client_t *c = s_start ();
    REQUIRE (c);
    char hex [65] = "";
    int64_t puts = s_stat (c, "blob_puts"), expiring = s_stat (c, "blobs_expiring");
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": 0}", hex, NULL), UFO_E_RANGE);
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": -5}", hex, NULL), UFO_E_RANGE);
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": 999}", hex, NULL), UFO_E_RANGE);
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": 604800001}", hex, NULL), UFO_E_RANGE);
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": \"60000\"}", hex, NULL), UFO_E_TYPE);
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": 1.5e3}", hex, NULL), UFO_E_TYPE);
    CHECK_INT (s_stat (c, "blob_puts"), puts);         //  nothing stored
    //  a second put with ttl_ms extends the expiry (the later one wins, never shortens it)
    char ext [65], h2 [65];
    int64_t e1 = 0, e2 = 0, e3 = 0;
    CHECK_INT (s_put (c, "extended", 1000, NULL, ext, &e1), 0);
    CHECK_INT (s_put (c, "extended", 60000, NULL, h2, &e2), 0);
    CHECK (e2 >= e1 + 58000);
    CHECK_INT (s_put (c, "extended", 1000, NULL, h2, &e3), 0);
    CHECK_INT (e3, e2);
    usleep (2500 * 1000);
    CHECK_INT (s_get (c, ext), 0);
    //  the broker goes on: a good put of the same bytes
    CHECK_INT (s_put (c, "bad ttl", 0, "{\"ttl_ms\": 604800000}", hex, NULL), 0);
    CHECK_INT (s_get (c, hex), 0);
    CHECK_INT (s_stat (c, "blobs_expiring"), expiring + 2);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

//  SIGKILL with expiries pending: after the restart the expiring blob still expires, the
//  pinned one and the permanent one stay, and one that expired before the kill is not back.
static void
s_restart_case (const char *fsync)
{
    s_fsync = fsync;
    bb_test_rmtree (B.data_dir);
    ufo_bb_client_t *c = s_start ();
    REQUIRE (c);
    char gone [65], later [65], pinned [65], h2 [65];
    CHECK_INT (s_put (c, "expires before the kill", 1000, NULL, gone, NULL), 0);
    CHECK_INT (s_put (c, "expires after the restart", 6000, NULL, later, NULL), 0);
    CHECK_INT (s_put (c, "pinned before the kill", 1000, NULL, pinned, NULL), 0);
    CHECK_INT (s_put (c, "pinned before the kill", 0, NULL, h2, NULL), 0);
    CHECK (s_gone (c, gone, 5000));
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);

    c = s_start ();
    REQUIRE (c);
    CHECK_INT (s_get (c, gone), UFO_E_NOT_FOUND);
    CHECK_INT (s_get (c, later), 0);                   //  its expiry survived the kill
    CHECK_INT (s_stat (c, "blobs_expiring"), 1);
    CHECK (s_gone (c, later, 10000));
    CHECK (!s_file (later, ".ttl"));
    CHECK_INT (s_get (c, pinned), 0);
    CHECK_INT (s_stat (c, "blobs_expiring"), 0);
    //  an expiry file left without its blob (a removal whose last step did not happen) is
    //  dropped at start-up; a damaged one makes its blob expire
    char put_hex [65];
    CHECK_INT (s_put (c, "damaged expiry", 60000, NULL, put_hex, NULL), 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    char path [700];
    snprintf (path, sizeof path, "%s/blobs/%.2s/%s.ttl", B.data_dir, later, later + 2);
    FILE *f = fopen (path, "w");
    if (f) {
        fputs ("123\n", f);
        fclose (f);
    }
    snprintf (path, sizeof path, "%s/blobs/%.2s/%s.ttl", B.data_dir, put_hex, put_hex + 2);
    f = fopen (path, "w");
    if (f) {
        fputs ("garbage\n", f);
        fclose (f);
    }
    c = s_start ();
    REQUIRE (c);
    CHECK (!s_file (later, ".ttl"));
    CHECK (s_gone (c, put_hex, 5000));
    CHECK_INT (s_get (c, pinned), 0);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

UFO_TEST (test_restart_always)
{
    s_restart_case ("always");
}

UFO_TEST (test_restart_no)
{
    s_restart_case ("no");
}

int
main (void)
{
    bb_test_init (&B, "bb-blob-ttl");
    UFO_RUN (test_expiry);
    UFO_RUN (test_bad_ttl);
    UFO_RUN (test_restart_always);
    UFO_RUN (test_restart_no);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
