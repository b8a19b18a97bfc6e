/*  test_bb_garbage.c - random and mutated frames thrown at a running broker: every
    request gets an error reply (or, for valid mutations, a correct answer), the broker
    never dies, and afterwards it still serves correctly. Seed: BB_SEED or the time. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include <czmq.h>

#define ROUNDS 4000

static bb_test_broker_t B;

static void
s_random_bytes (uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p [i] = (uint8_t) rand ();
}

//  A valid request of a random kind, encoded (the seed for mutation).
static void
s_valid_request (ufo_buf_t *buf, int kind, int i)
{
    static const char *types [] = { "bb.add", "bb.snapshot", "bb.clear", "bb.list", "stats", "ping", "blob.get", "bb.delete" };
    ufo_msg_t *msg = ufo_msg_new (types [kind % 8]);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", i % 2 ? "g1" : "g2");
    ufo_value_map_set_str (body, "memory", "questions");
    ufo_value_t *items = ufo_value_new_list ();
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "i", i);
    ufo_value_map_set_str (item, "text", "hello");
    ufo_value_list_push (items, &item);
    ufo_value_map_set (body, "items", &items);
    ufo_value_map_set_int (body, "after", i % 5);
    ufo_value_map_set_str (body, "blob", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    ufo_msg_set_body (msg, &body);
    ufo_msg_encode (msg, buf);
    ufo_msg_destroy (&msg);
}

UFO_TEST (test_garbage)
{
    const char *seed_text = getenv ("BB_SEED");
    unsigned seed = seed_text ? (unsigned) strtoul (seed_text, NULL, 10) : (unsigned) time (NULL);
    fprintf (stderr, "  seed %u\n", seed);
    srand (seed);
    const char *extra [] = { "--stats-ms", "0", "--log-level", "error", NULL };
    bb_test_start (&B, extra);
    ufo_error_t err;
    ufo_bb_client_t *good = ufo_bb_client_new (B.cmd, NULL, &err);
    REQUIRE (good);
    ufo_bb_client_set_timeout (good, 250);
    ufo_value_t *pong = NULL;
    for (int i = 0; i < 80 && !pong; i++)
        pong = ufo_bb_client_call (good, "ping", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (pong);
    ufo_value_destroy (&pong);
    ufo_bb_client_set_timeout (good, 10000);

    zsock_t *raw = zsock_new_dealer (B.cmd);
    REQUIRE (raw);
    zsock_set_rcvtimeo (raw, 5000);
    int replies = 0, errors = 0, sent = 0;
    uint8_t junk [600];
    ufo_buf_t buf = { 0 };
    for (int i = 0; i < ROUNDS; i++) {
        zmsg_t *msg = zmsg_new ();
        int mode = rand () % 6;
        ufo_buf_reset (&buf);
        if (mode == 0) {                        //  random bytes
            size_t n = (size_t) (rand () % 300);
            s_random_bytes (junk, n);
            zmsg_addmem (msg, junk, n);
        }
        else
        if (mode <= 3) {                        //  a valid request with bytes flipped / cut
            s_valid_request (&buf, rand (), i);
            int flips = 1 + rand () % 4;
            for (int f = 0; f < flips; f++)
                buf.data [rand () % buf.len] = (char) rand ();
            size_t len = mode == 3 ? (size_t) rand () % buf.len : buf.len;
            zmsg_addmem (msg, buf.data, len);
        }
        else
        if (mode == 4) {                        //  wrong frame counts
            s_valid_request (&buf, rand (), i);
            int frames = 2 + rand () % 3;
            for (int f = 0; f < frames; f++)
                zmsg_addmem (msg, buf.data, buf.len);
        }
        else {                                  //  an empty frame, then garbage
            zmsg_addmem (msg, "", 0);
            size_t n = (size_t) (rand () % 40);
            s_random_bytes (junk, n);
            zmsg_addmem (msg, junk, n);
        }
        if (zmsg_send (&msg, raw) != 0) {
            zmsg_destroy (&msg);
            continue;
        }
        sent++;
        //  one reply per request; error replies name a code
        zmsg_t *reply = zmsg_recv (raw);
        if (!reply) {
            UFO_FAIL_ ("no reply to garbage request %d (mode %d)", i, mode);
            break;
        }
        replies++;
        zframe_t *last = zmsg_size (reply) >= 1 ? zmsg_first (reply) : NULL;
        if (last && zframe_size (last) == 0)
            last = zmsg_next (reply);
        ufo_msg_t *env = last ? ufo_msg_decode (zframe_data (last), zframe_size (last), NULL, &err) : NULL;
        CHECK (env);
        if (env && strcmp (ufo_msg_type (env), "error") == 0) {
            errors++;
            CHECK (ufo_value_map_str (ufo_msg_body (env), "code", NULL) != NULL);
        }
        ufo_msg_destroy (&env);
        zmsg_destroy (&reply);
        //  every 100 garbage requests, a real exchange must still be exact
        if (i % 100 == 0) {
            ufo_value_t *item = ufo_value_new_map ();
            ufo_value_map_set_int (item, "check", i);
            uint64_t seq = 0, lastseq = 0;
            CHECK_INT (ufo_bb_client_add (good, "verify", "requests", &item, &seq, &lastseq, &err), 0);
            ufo_value_t *snap = ufo_bb_client_snapshot (good, "verify", "requests", seq - 1, &err);
            CHECK (snap && ufo_value_int (ufo_value_path (snap, "board.requests.0.check")) == i);
            ufo_value_destroy (&snap);
        }
    }
    ufo_buf_free (&buf);
    fprintf (stderr, "  %d garbage requests, %d replies, %d errors\n", sent, replies, errors);
    CHECK_INT (replies, sent);
    CHECK (errors > sent / 2);
    CHECK_INT (kill (B.pid, 0), 0);
    zsock_destroy (&raw);
    ufo_value_t *stats = ufo_bb_client_call (good, "stats", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (stats);
    CHECK (ufo_value_map_int (stats, "errors", 0) >= errors);
    ufo_value_destroy (&stats);
    ufo_bb_client_destroy (&good);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

//  A rejected request whose id can be read gets its error reply with that id (PROTOCOL.md
//  2.1), whatever made it invalid: extra frames, an unknown version in any int form, a wrong
//  field type, an array of the wrong length. Rejected dispatch requests count in "errors".
UFO_TEST (test_error_ids)
{
    const char *extra [] = { "--stats-ms", "0", "--log-level", "error", NULL };
    bb_test_start (&B, extra);
    zsock_t *raw = zsock_new_dealer (B.cmd);
    REQUIRE (raw);
    zsock_set_rcvtimeo (raw, 10000);
    static const struct { const char *frame; size_t len; int extra_frames; const char *id; const char *code; } cases [] = {
        { "\x97\x01\xa4ping\xa6myid-1\xa0\xa0\x00\x80", 18, 2, "myid-1", "invalid" },
        { "\x97\xcc\x80\xa4ping\xa6myid-2\xa0\xa0\x00\x80", 19, 0, "myid-2", "version" },
        { "\x97\xff\xa4ping\xa6myid-3\xa0\xa0\x00\x80", 18, 0, "myid-3", "version" },
        { "\x97\xd0\x01\xa4ping\xa6myid-4\x05\xa0\x00\x80", 19, 0, "myid-4", "type" },
        { "\x96\x01\xa4ping\xa6myid-5\xa0\xa0\x00", 17, 0, "myid-5", "syntax" },
        { "\x98\x01\xa4ping\xa6myid-6\xa0\xa0\x00\x80\x80", 19, 0, "myid-6", "syntax" },
        { "\x97\x01\xaatask.fetch\xa6myid-7\xa0\xa0\x00\x81\xa4task\x05", 30, 0, "myid-7", "type" },
    };
    ufo_error_t err;
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        zmsg_t *msg = zmsg_new ();
        zmsg_addmem (msg, cases [i].frame, cases [i].len);
        for (int k = 0; k < cases [i].extra_frames; k++)
            zmsg_addstr (msg, "extra");
        zmsg_send (&msg, raw);
        zmsg_t *reply = zmsg_recv (raw);
        REQUIRE (reply);
        zframe_t *f = zmsg_last (reply);
        ufo_msg_t *env = f ? ufo_msg_decode (zframe_data (f), zframe_size (f), NULL, &err) : NULL;
        REQUIRE (env);
        CHECK_STR (ufo_msg_type (env), "error");
        CHECK_STR (ufo_msg_id (env), cases [i].id);
        CHECK_STR (ufo_value_map_str (ufo_msg_body (env), "code", ""), cases [i].code);
        ufo_msg_destroy (&env);
        zmsg_destroy (&reply);
    }
    //  every one of them, the dispatch one too, is counted in stats "errors"
    ufo_bb_client_t *good = ufo_bb_client_new (B.cmd, NULL, &err);
    REQUIRE (good);
    ufo_value_t *stats = ufo_bb_client_call (good, "stats", NULL, NULL, 0, NULL, NULL, &err);
    REQUIRE (stats);
    CHECK_INT (ufo_value_map_int (stats, "errors", 0), (int64_t) (sizeof cases / sizeof cases [0]));
    CHECK_INT (ufo_value_map_int (stats, "dispatch_errors", 0), 1);
    ufo_value_destroy (&stats);
    ufo_bb_client_destroy (&good);
    zsock_destroy (&raw);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
}

int
main (void)
{
    bb_test_init (&B, "bb-garbage");
    UFO_RUN (test_error_ids);
    UFO_RUN (test_garbage);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
