/*  test_bb_sync.c - the broker's durability thread (blackboard_broker/bb_sync.c) with a
    stand-in for fdatasync that the test holds open: group commit (writes join the job
    waiting behind a running flush), tickets in order, the hold that lets pipelined writers
    join the next flush and its release by bb_sync_go, the back-off after a hold in vain,
    and a clean stop while a job is held. Deterministic: every wait is for an event, with a
    generous limit only against a hang. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_test.h"
#include "bb_sync.h"
#include <poll.h>
#include <pthread.h>

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_cond = PTHREAD_COND_INITIALIZER;
static int s_started;           //  flushes started
static int s_allowed;           //  flushes allowed to finish

static int
s_fake_datasync (int fd)
{
    UFO_UNUSED (fd);
    pthread_mutex_lock (&s_lock);
    int me = ++s_started;
    pthread_cond_broadcast (&s_cond);
    while (me > s_allowed)
        pthread_cond_wait (&s_cond, &s_lock);
    pthread_mutex_unlock (&s_lock);
    return 0;
}

//  Waits until n flushes have started (false after 10 s: a hang).
static bool
s_wait_started (int n)
{
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock (&s_lock);
    int rc = 0;
    while (s_started < n && rc == 0)
        rc = pthread_cond_timedwait (&s_cond, &s_lock, &until);
    bool ok = s_started >= n;
    pthread_mutex_unlock (&s_lock);
    return ok;
}

static int
s_started_now (void)
{
    pthread_mutex_lock (&s_lock);
    int n = s_started;
    pthread_mutex_unlock (&s_lock);
    return n;
}

static void
s_allow (int n)
{
    pthread_mutex_lock (&s_lock);
    s_allowed = n;
    pthread_cond_broadcast (&s_cond);
    pthread_mutex_unlock (&s_lock);
}

//  Waits for the completion of `ticket` (false after 10 s); completions come in order.
static bool
s_wait_done (bb_sync_t *sync, uint64_t ticket)
{
    for (int i = 0; i < 100; i++) {
        struct pollfd item = { bb_sync_fd (sync), POLLIN, 0 };
        if (poll (&item, 1, 100) <= 0)
            continue;
        bb_sync_done_t done [8];
        size_t n = bb_sync_read (sync, done, 8);
        for (size_t k = 0; k < n; k++)
            if (done [k].ticket >= ticket)
                return done [k].status == 0;
    }
    return false;
}

UFO_TEST (test_group_commit_and_hold)
{
    ufo_error_t err;
    bb_sync_t *sync = bb_sync_new (&err);
    REQUIRE (sync);
    bb_sync_set_datasync (sync, s_fake_datasync);
    int fd = 42;                    //  the stand-in never touches it

    //  writes during a running flush join one job behind it
    uint64_t t1 = bb_sync_data (sync, fd);
    REQUIRE (s_wait_started (1));
    uint64_t t2 = bb_sync_data (sync, fd);
    uint64_t t3 = bb_sync_data (sync, fd);
    CHECK (t2 == t1 + 1 && t3 == t2);
    CHECK (bb_sync_issued (sync) == t2);
    s_allow (1);
    CHECK (s_wait_done (sync, t1));
    CHECK (!bb_sync_holding (sync));        //  no hold asked for: the next job just runs
    REQUIRE (s_wait_started (2));
    s_allow (2);
    CHECK (s_wait_done (sync, t2));

    //  with a hold: the job queued behind waits for bb_sync_go, and writes still join it
    bb_sync_set_hold (sync, 10 * 1000 * 1000);
    uint64_t a = bb_sync_data (sync, fd);
    REQUIRE (s_wait_started (3));
    uint64_t b = bb_sync_data (sync, fd);
    s_allow (3);
    CHECK (s_wait_done (sync, a));
    CHECK (bb_sync_holding (sync));         //  decided before the completion was sent
    CHECK (bb_sync_data (sync, fd) == b);   //  joins the held job
    CHECK_INT (s_started_now (), 3);        //  and that job has not started
    bb_sync_go (sync);
    CHECK (!bb_sync_holding (sync));
    REQUIRE (s_wait_started (4));
    s_allow (4);
    CHECK (s_wait_done (sync, b));

    //  a hold nobody ends runs out, and the next chances are not taken
    bb_sync_set_hold (sync, 1000);
    a = bb_sync_data (sync, fd);
    REQUIRE (s_wait_started (5));
    b = bb_sync_data (sync, fd);
    s_allow (5);
    CHECK (s_wait_done (sync, a));
    REQUIRE (s_wait_started (6));           //  started without bb_sync_go
    uint64_t c = bb_sync_data (sync, fd);   //  queued behind the running one
    s_allow (6);
    CHECK (s_wait_done (sync, b));
    CHECK (!bb_sync_holding (sync));        //  backing off: not held
    REQUIRE (s_wait_started (7));
    s_allow (7);
    CHECK (s_wait_done (sync, c));

    //  the back-off lasts 64 chances (c used one): 63 more go by unheld, the 64th holds;
    //  then stopping while that job is held runs it and returns
    bb_sync_set_hold (sync, 10 * 1000 * 1000);
    bool held = false;
    int chances = 0;
    while (!held && chances < 70) {
        int base = s_started_now ();
        uint64_t x = bb_sync_data (sync, fd);
        REQUIRE (s_wait_started (base + 1));
        uint64_t y = bb_sync_data (sync, fd);
        s_allow (base + 1);
        REQUIRE (s_wait_done (sync, x));
        chances++;
        held = bb_sync_holding (sync);
        if (!held) {
            REQUIRE (s_wait_started (base + 2));
            s_allow (base + 2);
            REQUIRE (s_wait_done (sync, y));
        }
    }
    CHECK (held);
    CHECK_INT (chances, 64);
    int before = s_started_now ();
    s_allow (1 << 30);
    bb_sync_destroy (&sync);
    CHECK (sync == NULL);
    CHECK_INT (s_started_now (), before + 1);   //  the held job ran before the thread ended
}

int
main (void)
{
    UFO_RUN (test_group_commit_and_hold);
    return UFO_TEST_END ();
}
