/*  test_loop.c - ufo_loop: readers on pipes and ZeroMQ sockets, one-shot and repeating
    timers, sources with changing items and deadlines, removal from inside callbacks, the
    stop pipe, and that an idle loop sleeps until its nearest deadline (turns counted, no
    timing asserted). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_clock.h"
#include "ufo_loop.h"
#include "ufo_test.h"
#include <czmq.h>

typedef struct {
    int fd;
    int reads;
    int timer_calls;
    int other_id;               //  removed by the first reader call
    char last [16];
} s_ctx_t;

static void
s_on_pipe (ufo_loop_t *loop, void *arg)
{
    s_ctx_t *c = arg;
    ssize_t n = read (c->fd, c->last, sizeof c->last - 1);
    c->last [n > 0 ? n : 0] = 0;
    c->reads++;
    if (c->other_id) {
        ufo_loop_remove (loop, c->other_id);
        c->other_id = 0;
    }
}

static void
s_on_timer (ufo_loop_t *loop, void *arg)
{
    s_ctx_t *c = arg;
    c->timer_calls++;
    if (c->timer_calls == 3)
        ufo_loop_stop (loop);
}

UFO_TEST (test_readers_and_timers)
{
    ufo_loop_t *loop = ufo_loop_new ();
    int p [2];
    REQUIRE (pipe (p) == 0);
    s_ctx_t c = { .fd = p [0] };
    ufo_loop_reader_add (loop, NULL, p [0], s_on_pipe, &c);
    //  nothing readable, no timers: a bounded turn returns without calling anything
    CHECK (ufo_loop_run_once (loop, 0) == 0);
    CHECK_INT (c.reads, 0);
    CHECK (write (p [1], "hi", 2) == 2);
    CHECK (ufo_loop_run_once (loop, 1000) == 0);
    CHECK_INT (c.reads, 1);
    CHECK_STR (c.last, "hi");
    //  a repeating timer stops the loop on its third call; run returns
    int t = ufo_loop_timer_add (loop, 1, 1, s_on_timer, &c);
    CHECK (ufo_loop_run (loop) == 0);
    CHECK_INT (c.timer_calls, 3);
    ufo_loop_remove (loop, t);
    CHECK (ufo_loop_run_once (loop, 20) == 0);
    CHECK_INT (c.timer_calls, 3);
    //  a one-shot timer runs once
    ufo_loop_timer_add (loop, 0, 0, s_on_timer, &c);
    CHECK (ufo_loop_run_once (loop, 1000) == 0);
    CHECK (ufo_loop_run_once (loop, 0) == 0);
    CHECK_INT (c.timer_calls, 4);
    //  a callback removes a timer that is due in the same turn: it is not called
    c.other_id = ufo_loop_timer_add (loop, 0, 0, s_on_timer, &c);
    CHECK (write (p [1], "x", 1) == 1);
    //  (not a synchronisation: the pause lets the 0 ms timer's deadline pass on the loop's
    //  millisecond clock, so the timer and the read are both due in the next turn - the
    //  situation under test)
    usleep (2000);
    CHECK (ufo_loop_run_once (loop, 1000) == 0);
    CHECK_INT (c.reads, 2);
    CHECK_INT (c.timer_calls, 4);
    close (p [0]);
    close (p [1]);
    ufo_loop_destroy (&loop);
    CHECK (loop == NULL);
    ufo_loop_destroy (&loop);
}

typedef struct {
    zsock_t *pull;
    int got;
} s_sock_ctx_t;

static void
s_on_pull (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    s_sock_ctx_t *c = arg;
    char *s = zstr_recv_nowait (c->pull);   //  one message per call on purpose
    if (s)
        c->got++;
    free (s);
}

UFO_TEST (test_zmq_reader)
{
    ufo_loop_t *loop = ufo_loop_new ();
    char ep [64];
    snprintf (ep, sizeof ep, "inproc://test-loop-%d", (int) getpid ());
    zsock_t *pull = zsock_new_pull (ep);
    zsock_t *push = zsock_new_push (ep);
    REQUIRE (pull && push);
    s_sock_ctx_t c = { pull, 0 };
    ufo_loop_reader_add (loop, pull, -1, s_on_pull, &c);
    zstr_send (push, "a");
    zstr_send (push, "b");
    zstr_send (push, "c");
    //  three messages queued at once, one read per callback: each turn still sees the rest
    for (int i = 0; i < 50 && c.got < 3; i++)
        ufo_loop_run_once (loop, 1000);
    CHECK_INT (c.got, 3);
    zsock_destroy (&push);
    zsock_destroy (&pull);
    ufo_loop_destroy (&loop);
}

//  A source with a deadline that moves and a pipe it adds only while it "waits".
typedef struct {
    int fd;
    bool want;
    int64_t due;
    int services, fired, dispatched_ready;
} s_src_t;

static void
s_src_service (void *arg)
{
    s_src_t *s = arg;
    s->services++;
    if (s->due && ufo_time_mono_ms () >= s->due) {
        s->fired++;
        s->due = 0;
    }
}

static size_t
s_src_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    s_src_t *s = arg;
    if (s->due) {
        int64_t w = s->due - ufo_time_mono_ms ();
        *timeout_ms = w < 0 ? 0 : (int) w;
    }
    if (!s->want || max < 1)
        return 0;
    items [0] = (ufo_loop_item_t) { NULL, s->fd, UFO_LOOP_IN, 0 };
    return 1;
}

static void
s_src_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    s_src_t *s = arg;
    if (n == 1 && (items [0].revents & UFO_LOOP_IN)) {
        char b [8];
        CHECK (read (s->fd, b, sizeof b) > 0);
        s->dispatched_ready++;
    }
}

UFO_TEST (test_source)
{
    ufo_loop_t *loop = ufo_loop_new ();
    int p [2];
    REQUIRE (pipe (p) == 0);
    s_src_t s = { .fd = p [0] };
    ufo_loop_source_t src = { s_src_service, s_src_items, s_src_dispatch };
    int id = ufo_loop_source_add (loop, &src, &s);
    //  a deadline 30 ms ahead: the loop sleeps until it (a turn or two), neither spinning
    //  nor waiting for the cap
    s.due = ufo_time_mono_ms () + 30;
    uint64_t t0 = ufo_loop_turns (loop);
    for (int i = 0; i < 10 && !s.fired; i++)
        ufo_loop_run_once (loop, 300);
    CHECK_INT (s.fired, 1);
    CHECK (ufo_loop_turns (loop) - t0 <= 3);
    //  items only while wanted
    CHECK (write (p [1], "x", 1) == 1);
    ufo_loop_run_once (loop, 0);
    CHECK_INT (s.dispatched_ready, 0);
    s.want = true;
    ufo_loop_run_once (loop, 1000);
    CHECK_INT (s.dispatched_ready, 1);
    //  removed: neither serviced nor dispatched any more
    ufo_loop_remove (loop, id);
    int before = s.services;
    ufo_loop_run_once (loop, 0);
    CHECK_INT (s.services, before);
    close (p [0]);
    close (p [1]);
    ufo_loop_destroy (&loop);
}

UFO_TEST (test_stop_on)
{
    ufo_loop_t *loop = ufo_loop_new ();
    int p [2];
    REQUIRE (pipe (p) == 0);
    fcntl (p [0], F_SETFL, O_NONBLOCK);
    ufo_loop_stop_on (loop, p [0]);
    CHECK (write (p [1], "ss", 2) == 2);        //  what a signal handler writes
    CHECK (ufo_loop_run (loop) == 0);           //  returns: no timer would have ended it
    CHECK (ufo_loop_stopped (loop));
    char b;
    CHECK (read (p [0], &b, 1) < 0);            //  drained
    close (p [0]);
    close (p [1]);
    ufo_loop_destroy (&loop);
}

//  A blackboard call whose reply does not come (a peer that reads and never answers) is
//  abandoned when the caller's loop sees a cancel: the waiter turns the loop, a timer there
//  cancels, the call fails with UFO_E_CANCELLED instead of waiting out its 5 s timeout.
typedef struct {
    ufo_loop_t *loop;
    bool cancelled;
    int turns;
} s_wait_ctx_t;

static void
s_cancel_timer (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    ((s_wait_ctx_t *) arg)->cancelled = true;
}

static void
s_ready (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (arg);
}

static bool
s_bb_wait (void *arg, void *socket, int left_ms)
{
    s_wait_ctx_t *w = arg;
    int id = ufo_loop_reader_add (w->loop, socket, -1, s_ready, NULL);
    ufo_loop_run_once (w->loop, left_ms);
    ufo_loop_remove (w->loop, id);
    w->turns++;
    return !w->cancelled;
}

UFO_TEST (test_bb_call_abandoned_on_cancel)
{
    char ep [128];
    snprintf (ep, sizeof ep, "ipc:///tmp/ufo-test-loop-%d.ipc", (int) getpid ());
    zsock_t *silent = zsock_new_router (ep);
    REQUIRE (silent);
    ufo_error_t err;
    ufo_bb_client_t *bb = ufo_bb_client_new (ep, NULL, &err);
    REQUIRE (bb);
    ufo_bb_client_set_timeout (bb, 5000);
    s_wait_ctx_t w = { ufo_loop_new (), false, 0 };
    ufo_bb_client_set_waiter (bb, s_bb_wait, &w);
    ufo_loop_timer_add (w.loop, 100, 0, s_cancel_timer, &w);
    ufo_value_t *r = ufo_bb_client_call (bb, "ping", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (r == NULL);
    CHECK_INT (err.code, UFO_E_CANCELLED);      //  not UFO_E_TIMEOUT: it did not wait 5 s
    CHECK (w.turns >= 1);
    zmsg_t *req = zmsg_recv (silent);           //  the request did reach the peer
    CHECK (req && zmsg_size (req) >= 2);
    zmsg_destroy (&req);
    //  without a waiter, the same silent peer means a timeout
    ufo_bb_client_set_waiter (bb, NULL, NULL);
    ufo_bb_client_set_timeout (bb, 100);
    r = ufo_bb_client_call (bb, "ping", NULL, NULL, 0, NULL, NULL, &err);
    CHECK (r == NULL);
    CHECK_INT (err.code, UFO_E_TIMEOUT);
    ufo_bb_client_destroy (&bb);
    zsock_destroy (&silent);
    ufo_loop_destroy (&w.loop);
}

int
main (void)
{
    UFO_RUN (test_readers_and_timers);
    UFO_RUN (test_zmq_reader);
    UFO_RUN (test_source);
    UFO_RUN (test_stop_on);
    UFO_RUN (test_bb_call_abandoned_on_cancel);
    zsys_shutdown ();
    return UFO_TEST_END ();
}
