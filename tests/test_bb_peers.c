/*  test_bb_peers.c - the broker's bytes-per-peer accounting (blackboard_broker/bb_peers.c):
    charges, the limit, releases from another thread (as libzmq's I/O thread does), entries
    outliving the table, sweeping. */
#include "ufo_prelude.h"
#include "ufo_test.h"
#include "bb_peers.h"
#include <pthread.h>

UFO_TEST (test_charge_and_limit)
{
    bb_peers_t *peers = bb_peers_new (1000);
    const char a [] = "peer-a", b [] = "\x00\x01\x02\x03\x04";
    CHECK (!bb_peers_over (peers, a, 6));                   //  unknown peer: nothing queued
    bb_charge_t *c1 = bb_peers_charge (peers, a, 6, 600);
    bb_charge_t *c2 = bb_peers_charge (peers, a, 6, 600);
    bb_charge_t *c3 = bb_peers_charge (peers, b, 5, 100);
    CHECK_INT (bb_peers_queued (peers, a, 6), 1200);
    CHECK_INT (bb_peers_queued (peers, b, 5), 100);
    CHECK_INT (bb_peers_total (peers), 1300);
    CHECK (bb_peers_over (peers, a, 6));                    //  1200 > 1000
    CHECK (bb_peers_over (peers, a, 6));
    CHECK (!bb_peers_over (peers, b, 5));                   //  others unaffected
    CHECK_INT (bb_peers_refused (peers), 2);
    //  libzmq frees the buffer: the charge goes with it
    bb_peers_free (ufo_malloc (600), c1);
    CHECK_INT (bb_peers_queued (peers, a, 6), 600);
    CHECK (!bb_peers_over (peers, a, 6));
    bb_peers_release (c2);                                  //  a buffer that was never sent
    bb_peers_release (NULL);
    CHECK_INT (bb_peers_queued (peers, a, 6), 0);
    bb_peers_sweep (peers);                                 //  a goes, b (still charged) stays
    CHECK_INT (bb_peers_queued (peers, b, 5), 100);
    //  an entry outlives the table while a buffer still holds a charge
    bb_peers_destroy (&peers);
    CHECK (peers == NULL);
    bb_peers_destroy (&peers);
    bb_peers_free (ufo_malloc (100), c3);
}

typedef struct {
    bb_charge_t **charges;
    size_t n;
} s_job_t;

static void *
s_releaser (void *arg)
{
    s_job_t *job = (s_job_t *) arg;
    for (size_t i = 0; i < job->n; i++)
        bb_peers_free (ufo_malloc (16), job->charges [i]);
    return NULL;
}

UFO_TEST (test_release_from_another_thread)
{
    bb_peers_t *peers = bb_peers_new (1u << 30);
    enum { N = 20000 };
    bb_charge_t **charges = ufo_malloc (N * sizeof *charges);
    for (size_t i = 0; i < N; i++)
        charges [i] = bb_peers_charge (peers, "p", 1, 10);
    CHECK_INT (bb_peers_queued (peers, "p", 1), 10 * N);
    s_job_t job = { charges, N };
    pthread_t thread;
    REQUIRE (pthread_create (&thread, NULL, s_releaser, &job) == 0);
    //  meanwhile the loop charges and sweeps as usual
    for (int i = 0; i < 1000; i++) {
        bb_peers_release (bb_peers_charge (peers, "q", 1, 5));
        bb_peers_sweep (peers);
    }
    pthread_join (thread, NULL);
    CHECK_INT (bb_peers_queued (peers, "p", 1), 0);
    CHECK_INT (bb_peers_total (peers), 0);
    free (charges);
    bb_peers_destroy (&peers);
}

int
main (void)
{
    UFO_RUN (test_charge_and_limit);
    UFO_RUN (test_release_from_another_thread);
    return UFO_TEST_END ();
}
