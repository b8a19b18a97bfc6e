/*  test_bb_durability.c - with fsync "always", an acknowledged write is never lost.

    Each round starts the broker on the same data directory, streams pipelined writes at it,
    SIGKILLs it at a random moment, restarts it and checks that every write acknowledged in
    any round so far is present, with the sequence number it was acknowledged with, exactly
    once. Compaction runs often (--snapshot-every 200) so kills also land during snapshots.
    Seed: BB_SEED in the environment, else the time (printed). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_proto.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_test_util.h"

#define ROUNDS 24
#define WINDOW 24               //  requests in flight
#define MAX_ACKED 400000

static bb_test_broker_t B;
static int64_t *s_acked_seq;    //  by n: the seq acknowledged for item n, 0 = not acknowledged
static int64_t s_next_n;

static ufo_bb_client_t *
s_connect (void)
{
    return bb_test_connect (&B, NULL, 30000, 20000);
}

//  Sends writes until the deadline, keeping WINDOW in flight; records acknowledgements.
static void
s_stream (ufo_bb_client_t *c, int64_t run_ms, int round)
{
    int64_t inflight [WINDOW * 2];
    size_t head = 0, count = 0;
    int64_t deadline = ufo_time_mono_ms () + run_ms;
    ufo_error_t err;
    while (ufo_time_mono_ms () < deadline && s_next_n < MAX_ACKED) {
        while (count < WINDOW && s_next_n < MAX_ACKED) {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "board", s_next_n % 5 ? "d" : "e");
            ufo_value_map_set_str (body, "memory", ufo_bb_memory_name ((int) (s_next_n % 4)));
            ufo_value_t *item = ufo_value_new_map ();
            ufo_value_map_set_int (item, "n", s_next_n);
            ufo_value_map_set_int (item, "round", round);
            ufo_value_map_set_str (item, "pad", "0123456789abcdef0123456789abcdef");
            ufo_value_map_set (body, "item", &item);
            if (ufo_bb_client_send (c, "bb.add", &body, NULL, 0, NULL, &err) != 0)
                return;
            inflight [(head + count++) % (WINDOW * 2)] = s_next_n++;
        }
        bool ok;
        ufo_value_t *reply = ufo_bb_client_recv (c, 50, NULL, &ok, &err);
        if (!reply)
            continue;
        int64_t n = inflight [head];
        head = (head + 1) % (WINDOW * 2);
        count--;
        if (ok)
            s_acked_seq [n] = ufo_value_map_int (reply, "seq", 0);
        ufo_value_destroy (&reply);
    }
}

//  Receives (briefly) replies already on their way after the kill: they were sent by the
//  broker, hence acknowledged. We do not know which n they answer without ids, so the
//  stream above is the only source of acknowledgements; nothing to do here.

static int
s_verify (ufo_bb_client_t *c, int64_t *present_total)
{
    ufo_error_t err;
    int missing = 0;
    int64_t *seen = ufo_calloc ((size_t) s_next_n + 1, sizeof *seen);
    const char *boards [] = { "d", "e" };
    for (int b = 0; b < 2; b++) {
        ufo_value_t *snap = ufo_bb_client_snapshot (c, boards [b], NULL, 0, &err);
        if (!snap) {
            fprintf (stderr, "  snapshot failed: %s\n", err.message);
            free (seen);
            return -1;
        }
        for (int m = 0; m < 4; m++) {
            char path [64];
            snprintf (path, sizeof path, "board.%s", ufo_bb_memory_name (m));
            const ufo_value_t *items = ufo_value_path (snap, path);
            snprintf (path, sizeof path, "seqs.%s", ufo_bb_memory_name (m));
            const ufo_value_t *seqs = ufo_value_path (snap, path);
            int64_t prev = 0;
            for (size_t i = 0; i < ufo_value_size (items); i++) {
                int64_t n = ufo_value_map_int (ufo_value_list_at (items, i), "n", -1);
                int64_t seq = ufo_value_int (ufo_value_list_at (seqs, i));
                if (n < 0 || n >= s_next_n || seen [n] || seq <= prev) {
                    fprintf (stderr, "  bad item n=%" PRId64 " seq=%" PRId64 " (dup or order)\n", n, seq);
                    missing++;
                    continue;
                }
                prev = seq;
                seen [n] = seq;
                if (s_acked_seq [n] && s_acked_seq [n] != seq) {
                    fprintf (stderr, "  item %" PRId64 " acknowledged as seq %" PRId64 ", stored as %" PRId64 "\n",
                             n, s_acked_seq [n], seq);
                    missing++;
                }
            }
        }
        ufo_value_destroy (&snap);
    }
    int64_t present = 0;
    for (int64_t n = 0; n < s_next_n; n++) {
        present += seen [n] != 0;
        if (s_acked_seq [n] && !seen [n]) {
            if (missing < 10)
                fprintf (stderr, "  LOST acknowledged item %" PRId64 " (seq %" PRId64 ")\n", n, s_acked_seq [n]);
            missing++;
        }
    }
    *present_total = present;
    free (seen);
    return missing;
}

UFO_TEST (test_sigkill_rounds)
{
    const char *seed_text = getenv ("BB_SEED");
    unsigned seed = seed_text ? (unsigned) strtoul (seed_text, NULL, 10) : (unsigned) time (NULL);
    fprintf (stderr, "  seed %u (set BB_SEED to repeat)\n", seed);
    srand (seed);
    s_acked_seq = ufo_calloc (MAX_ACKED, sizeof *s_acked_seq);
    const char *extra [] = { "--fsync", "always", "--snapshot-every", "200", "--snapshot-growth", "0",
                             "--stats-ms", "0", NULL };
    int64_t acked_total = 0;
    for (int round = 0; round < ROUNDS; round++) {
        bb_test_start (&B, extra);
        ufo_bb_client_t *c = s_connect ();
        REQUIRE (c);
        //  check what earlier rounds left, then write and kill at a random moment
        int64_t present = 0;
        int missing = s_verify (c, &present);
        CHECK_INT (missing, 0);
        int64_t run_ms = 20 + rand () % 400;
        s_stream (c, run_ms, round);
        CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
        ufo_bb_client_destroy (&c);
        acked_total = 0;
        for (int64_t n = 0; n < s_next_n; n++)
            acked_total += s_acked_seq [n] != 0;
        fprintf (stderr, "  round %d: killed after %" PRId64 " ms; %" PRId64 " written, %" PRId64
                 " acknowledged so far, %" PRId64 " present at round start\n",
                 round, run_ms, s_next_n, acked_total, present);
        if (missing)
            break;
    }
    //  final check after the last kill
    bb_test_start (&B, extra);
    ufo_bb_client_t *c = s_connect ();
    REQUIRE (c);
    int64_t present = 0;
    CHECK_INT (s_verify (c, &present), 0);
    CHECK (acked_total > 0);
    CHECK (present >= acked_total);
    ufo_bb_client_destroy (&c);
    CHECK_INT (bb_test_stop (&B, SIGTERM), 0);
    free (s_acked_seq);
}

int
main (void)
{
    bb_test_init (&B, "bb-durability");
    UFO_RUN (test_sigkill_rounds);
    bb_test_cleanup (&B);
    return UFO_TEST_END ();
}
