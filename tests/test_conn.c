/*  test_conn.c - the one broker connection of an agent process (common/bus/ufo_conn.h)
    against a real ufo-broker: one DEALER carries the worker side, the submitter side and
    blackboard calls; calls are asynchronous, keep their order, time out, and late replies
    are dropped; heartbeats go on while a call waits; a submission's deadline counts the time
    it waited to be sent. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_loop.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "dispatch_test_util.h"

static dt_env_t env;

typedef struct {
    ufo_value_t *events;            //  every event, in order
    ufo_conn_t *conn;
    bool auto_complete;             //  complete each task at once, with progress first
} s_sink_t;

static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    s_sink_t *sink = arg;
    const char *kind = ufo_value_map_str (*event_p, "kind", "");
    if (sink->auto_complete && strcmp (kind, "task") == 0) {
        const char *task = ufo_value_map_str (*event_p, "task", "");
        ufo_value_t *p = ufo_value_new_string ("half way");
        CHECK_INT (ufo_conn_progress (sink->conn, task, &p), 0);
        ufo_value_t *r = ufo_value_dup (ufo_value_map_get (*event_p, "body"));
        CHECK_INT (ufo_conn_complete (sink->conn, task, "done", &r), 0);
        CHECK_INT (ufo_conn_complete (sink->conn, task, "done", NULL), -1);     //  once
    }
    ufo_value_list_push (sink->events, event_p);
}

static const ufo_value_t *
s_find (const ufo_value_t *events, const char *kind, const char *task)
{
    for (size_t i = 0; i < ufo_value_size (events); i++) {
        const ufo_value_t *ev = ufo_value_list_at (events, i);
        if (strcmp (ufo_value_map_str (ev, "kind", ""), kind) == 0
        &&  (!task || strcmp (ufo_value_map_str (ev, "task", ""), task) == 0))
            return ev;
    }
    return NULL;
}

//  Runs loop turns until cond holds or timeout_ms passed.
#define LOOP_UNTIL(loop, cond, timeout_ms) \
    for (int64_t until_ = ufo_time_mono_ms () + (timeout_ms); !(cond) && ufo_time_mono_ms () < until_;) \
        ufo_loop_run_once ((loop), 50)

typedef struct {
    int calls;
    bool ok;
    int code;
    ufo_value_t *body;
    uint64_t order [16];
    size_t norder;
} s_reply_t;

static void
s_on_reply (void *arg, ufo_conn_reply_t *reply)
{
    s_reply_t *r = arg;
    r->calls++;
    r->ok = reply->ok;
    r->code = reply->ok ? 0 : reply->err.code;
    if (r->norder < 16)
        r->order [r->norder++] = reply->id;
    if (reply->ok) {
        ufo_value_destroy (&r->body);
        r->body = *reply->body_p;
        *reply->body_p = NULL;
    }
}

//  One connection is a worker of a service and submits a task to that same service: the
//  broker routes the task to it, its progress and result come back on the same socket.
UFO_TEST (test_worker_and_submitter_on_one_socket)
{
    ufo_loop_t *loop = ufo_loop_new ();
    s_sink_t sink = { .events = ufo_value_new_list (), .auto_complete = true };
    ufo_conn_config_t cfg = { .endpoint = env.b.cmd, .service = "conn-test", .heartbeat_ivl_ms = 200 };
    ufo_error_t err;
    sink.conn = ufo_conn_new (&cfg, loop, s_on_event, &sink, &err);
    REQUIRE (sink.conn);
    CHECK (ufo_conn_routing_id (sink.conn) [0] == 'w');
    LOOP_UNTIL (loop, ufo_conn_connected (sink.conn), 10000);
    CHECK (ufo_conn_connected (sink.conn));
    CHECK (s_find (sink.events, "connected", NULL));
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "conn-test");
    ufo_value_map_set_str (spec, "body", "payload");
    char id [33];
    CHECK_INT (ufo_conn_submit (sink.conn, &spec, id, &err), 0);
    LOOP_UNTIL (loop, s_find (sink.events, "result", id) && s_find (sink.events, "accepted", id), 10000);
    CHECK (s_find (sink.events, "accepted", id));
    if (!s_find (sink.events, "accepted", id))
        for (size_t i = 0; i < ufo_value_size (sink.events); i++)
            fprintf (stderr, "  event %s %s\n", ufo_value_map_str (ufo_value_list_at (sink.events, i), "kind", ""),
                     ufo_value_map_str (ufo_value_list_at (sink.events, i), "task", ""));
    CHECK (s_find (sink.events, "task", id));
    const ufo_value_t *progress = s_find (sink.events, "progress", id);
    CHECK (progress && strcmp (ufo_value_map_str (progress, "body", ""), "half way") == 0);
    const ufo_value_t *result = s_find (sink.events, "result", id);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "done");
    CHECK_STR (ufo_value_map_str (result, "body", ""), "payload");
    //  a bad spec is refused locally; input for an unknown task too
    spec = ufo_value_new_string ("not a map");
    CHECK_INT (ufo_conn_submit (sink.conn, &spec, id, &err), -1);
    ufo_value_t *in = ufo_value_new_null ();
    CHECK_INT (ufo_conn_input (sink.conn, "0123", &in), -1);
    CHECK_INT (ufo_conn_progress (sink.conn, "0123", NULL), -1);
    //  the submitter side stays alive across many heartbeat windows (client.heartbeat
    //  every `liveness` worker heartbeats): the broker still knows the client
    ufo_value_t *spec2 = ufo_value_new_map ();
    ufo_value_map_set_str (spec2, "service", "conn-test");
    char id2 [33];
    CHECK_INT (ufo_conn_submit (sink.conn, &spec2, id2, &err), 0);
    LOOP_UNTIL (loop, s_find (sink.events, "result", id2), 10000);
    CHECK (s_find (sink.events, "result", id2));
    ufo_conn_destroy (&sink.conn);
    CHECK (sink.conn == NULL);
    ufo_conn_destroy (&sink.conn);
    ufo_value_destroy (&sink.events);
    ufo_loop_destroy (&loop);
}

//  Blackboard calls: asynchronous, answered in the order made, errors as replies, a
//  snapshot with the screenshots' images filled in.
UFO_TEST (test_calls)
{
    ufo_loop_t *loop = ufo_loop_new ();
    s_sink_t sink = { .events = ufo_value_new_list () };
    ufo_conn_config_t cfg = { .endpoint = env.b.cmd };
    ufo_error_t err;
    ufo_conn_t *conn = ufo_conn_new (&cfg, loop, s_on_event, &sink, &err);
    REQUIRE (conn);
    CHECK (ufo_conn_routing_id (conn) [0] == 'c');
    s_reply_t adds = { 0 };
    uint64_t ids [5];
    for (int i = 0; i < 5; i++) {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "board", "conn-calls");
        ufo_value_map_set_str (body, "memory", "trajectories");
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_int (item, "Step", i);
        ufo_value_t *items = ufo_value_new_list ();
        ufo_value_list_push (items, &item);
        ufo_value_map_set (body, "items", &items);
        ids [i] = ufo_conn_call (conn, "bb.add", &body, NULL, 0, 0, s_on_reply, &adds);
        CHECK (body == NULL);
    }
    CHECK_INT (ufo_conn_calls_pending (conn), 5);
    LOOP_UNTIL (loop, adds.calls == 5, 10000);
    CHECK_INT (adds.calls, 5);
    CHECK (adds.ok);
    for (int i = 0; i < 5; i++)
        CHECK (adds.order [i] == ids [i]);
    //  an error reply ends the call with the broker's code
    s_reply_t bad = { 0 };
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "conn-calls");
    ufo_value_map_set_str (body, "memory", "no-such-memory");
    ufo_value_map_set (body, "items", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_conn_call (conn, "bb.add", &body, NULL, 0, 0, s_on_reply, &bad);
    LOOP_UNTIL (loop, bad.calls == 1, 10000);
    CHECK_INT (bad.calls, 1);
    CHECK (!bad.ok);
    CHECK (bad.code != 0 && bad.code != UFO_E_TIMEOUT);
    //  a blob and a screenshot item naming it, both without waiting, then a read with images
    const char png [] = "\x89PNG fake bytes";
    s_reply_t put = { 0 };
    ufo_conn_call (conn, "blob.put", NULL, png, sizeof png - 1, 0, s_on_reply, &put);
    LOOP_UNTIL (loop, put.calls == 1, 10000);
    REQUIRE (put.ok);
    ufo_value_t *shot = ufo_value_new_map ();
    ufo_value_map_set_str (shot, "blob", ufo_value_map_str (put.body, "blob", ""));
    ufo_value_map_set_str (shot, "image_path", "a.png");
    body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "conn-calls");
    ufo_value_map_set_str (body, "memory", "screenshots");
    ufo_value_t *shots_in = ufo_value_new_list ();
    ufo_value_list_push (shots_in, &shot);
    ufo_value_map_set (body, "items", &shots_in);
    ufo_conn_call (conn, "bb.add", &body, NULL, 0, 0, NULL, NULL);
    s_reply_t snap = { 0 };
    ufo_conn_snapshot (conn, "conn-calls", 0, true, 0, s_on_reply, &snap);
    LOOP_UNTIL (loop, snap.calls == 1, 10000);
    REQUIRE (snap.ok);
    const ufo_value_t *board = ufo_value_map_get (snap.body, "board");
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    CHECK_INT (ufo_value_size (traj), 5);
    for (int i = 0; i < 5 && i < (int) ufo_value_size (traj); i++)
        CHECK_INT (ufo_value_map_int (ufo_value_list_at (traj, (size_t) i), "Step", -1), i);
    const ufo_value_t *shots = ufo_value_map_get (board, "screenshots");
    CHECK_INT (ufo_value_size (shots), 1);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (shots, 0), "image_str", ""), "data:image/png;base64,");
    //  the blocking helper, for code without a way to wait for an event
    body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "conn-calls");
    ufo_value_t *reply = ufo_conn_call_wait (conn, "bb.snapshot", &body, NULL, 0, 5000, NULL, NULL, &err);
    CHECK (reply && ufo_value_size (ufo_value_map_get (ufo_value_map_get (reply, "board"), "trajectories")) == 5);
    ufo_value_destroy (&reply);
    ufo_value_destroy (&adds.body);
    ufo_value_destroy (&put.body);
    ufo_value_destroy (&snap.body);
    ufo_conn_destroy (&conn);
    ufo_value_destroy (&sink.events);
    ufo_loop_destroy (&loop);
}

//  A call the broker does not answer in time ends with UFO_E_TIMEOUT; its reply, when it
//  comes, is dropped; meanwhile the worker's heartbeats go on (the broker, stopped, cannot
//  answer them either, but the link keeps sending: once resumed it answers them all).
UFO_TEST (test_timeout_and_late_reply)
{
    ufo_loop_t *loop = ufo_loop_new ();
    s_sink_t sink = { .events = ufo_value_new_list () };
    ufo_conn_config_t cfg = { .endpoint = env.b.cmd, .service = "conn-late", .heartbeat_ivl_ms = 1000 };
    ufo_error_t err;
    sink.conn = ufo_conn_new (&cfg, loop, s_on_event, &sink, &err);
    REQUIRE (sink.conn);
    LOOP_UNTIL (loop, ufo_conn_connected (sink.conn), 10000);
    REQUIRE (ufo_conn_connected (sink.conn));
    kill (env.b.pid, SIGSTOP);
    s_reply_t late = { 0 }, forgotten = { 0 };
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "conn-late");
    ufo_conn_call (sink.conn, "bb.snapshot", &body, NULL, 0, 300, s_on_reply, &late);
    uint64_t f = ufo_conn_call (sink.conn, "ping", NULL, NULL, 0, 0, s_on_reply, &forgotten);
    ufo_conn_call_forget (sink.conn, f);
    LOOP_UNTIL (loop, late.calls == 1, 5000);
    CHECK_INT (late.calls, 1);
    CHECK_INT (late.code, UFO_E_TIMEOUT);
    kill (env.b.pid, SIGCONT);
    //  the late reply and the forgotten call's reply arrive and are dropped; the next call works
    s_reply_t next = { 0 };
    ufo_conn_call (sink.conn, "ping", NULL, NULL, 0, 0, s_on_reply, &next);
    LOOP_UNTIL (loop, next.calls == 1, 10000);
    CHECK (next.ok);
    CHECK_INT (late.calls, 1);
    CHECK_INT (forgotten.calls, 0);
    CHECK (ufo_conn_connected (sink.conn));
    ufo_value_destroy (&next.body);
    ufo_conn_destroy (&sink.conn);
    ufo_value_destroy (&sink.events);
    ufo_loop_destroy (&loop);
}

//  A submission's deadline counts from ufo_conn_submit: the time it waits in the outbox while
//  the broker is unreachable (here stopped, the link down) counts against it, so the broker
//  gets at most the original deadline minus the wait; one whose deadline passes before it
//  could be sent is never sent and fails locally with a timeout.
UFO_TEST (test_submit_deadline_counts_queue_time)
{
    ufo_loop_t *loop = ufo_loop_new ();
    s_sink_t sink = { .events = ufo_value_new_list () };
    ufo_conn_config_t cfg = { .endpoint = env.b.cmd, .heartbeat_ivl_ms = 100, .heartbeat_liveness = 3 };
    ufo_error_t err;
    sink.conn = ufo_conn_new (&cfg, loop, s_on_event, &sink, &err);
    REQUIRE (sink.conn);
    LOOP_UNTIL (loop, ufo_conn_connected (sink.conn), 10000);
    REQUIRE (ufo_conn_connected (sink.conn));
    kill (env.b.pid, SIGSTOP);
    //  the link counts the broker dead after 3 silent heartbeats: what is queued now waits
    LOOP_UNTIL (loop, !ufo_conn_connected (sink.conn), 10000);
    CHECK (!ufo_conn_connected (sink.conn));
    const int64_t long_ms = 20000, short_ms = 300;
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "conn-deadline");       //  no worker: it stays queued
    ufo_value_map_set_int (spec, "deadline_ms", long_ms);
    char kept [33], lapsed [33];
    CHECK_INT (ufo_conn_submit (sink.conn, &spec, kept, &err), 0);
    int64_t submitted = ufo_time_mono_ms ();       //  after the call: its deadline is earlier
    spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "conn-deadline");
    ufo_value_map_set_int (spec, "deadline_ms", short_ms);
    CHECK_INT (ufo_conn_submit (sink.conn, &spec, lapsed, &err), 0);
    //  the short one lapses in the outbox: it fails here, with a timeout, without the broker
    LOOP_UNTIL (loop, s_find (sink.events, "result", lapsed), 10000);
    const ufo_value_t *result = s_find (sink.events, "result", lapsed);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_map_str (result, "reason", ""), "not submitted: timeout");
    LOOP_UNTIL (loop, false, 700);                  //  the long one waits on
    CHECK (!s_find (sink.events, "accepted", kept) && !s_find (sink.events, "result", kept));
    int64_t resumed = ufo_time_mono_ms ();          //  nothing can be sent before this
    kill (env.b.pid, SIGCONT);
    LOOP_UNTIL (loop, s_find (sink.events, "accepted", kept), 15000);
    REQUIRE (s_find (sink.events, "accepted", kept));
    //  what reached the broker: deadline_us - submitted_us, its deadline_ms
    s_reply_t fetch = { 0 };
    ufo_conn_fetch (sink.conn, kept, 5000, s_on_reply, &fetch);
    LOOP_UNTIL (loop, fetch.calls == 1, 10000);
    REQUIRE (fetch.ok);
    int64_t got_ms = (ufo_value_map_int (fetch.body, "deadline_us", 0) - ufo_value_map_int (fetch.body, "submitted_us", 0))
                   / 1000;
    int64_t waited = resumed - submitted;
    fprintf (stderr, "  deadline_ms %" PRId64 " queued, %" PRId64 " ms waited, %" PRId64 " arrived\n", long_ms,
             waited, got_ms);
    CHECK (got_ms >= 1 && got_ms <= long_ms - waited);
    //  the lapsed one never reached the broker
    s_reply_t none = { 0 };
    ufo_conn_fetch (sink.conn, lapsed, 5000, s_on_reply, &none);
    LOOP_UNTIL (loop, none.calls == 1, 10000);
    CHECK_INT (none.calls, 1);
    CHECK (!none.ok && none.code == UFO_E_NOT_FOUND);
    CHECK_INT (ufo_conn_cancel (sink.conn, kept), 0);
    LOOP_UNTIL (loop, s_find (sink.events, "result", kept), 10000);
    ufo_value_destroy (&fetch.body);
    ufo_conn_destroy (&sink.conn);
    ufo_value_destroy (&sink.events);
    ufo_loop_destroy (&loop);
}

//  Bad configuration is refused with a clear error.
UFO_TEST (test_bad_config)
{
    ufo_loop_t *loop = ufo_loop_new ();
    s_sink_t sink = { .events = ufo_value_new_list () };
    ufo_error_t err;
    ufo_conn_config_t none = { 0 };
    CHECK (!ufo_conn_new (&none, loop, s_on_event, &sink, &err));
    ufo_conn_config_t bad = { .endpoint = env.b.cmd, .service = "bad service" };
    CHECK (!ufo_conn_new (&bad, loop, s_on_event, &sink, &err));
    CHECK_CONTAINS (err.message, "service");
    ufo_conn_config_t cap = { .endpoint = env.b.cmd, .service = "ok", .capacity = -1 };
    CHECK (!ufo_conn_new (&cap, loop, s_on_event, &sink, &err));
    ufo_value_destroy (&sink.events);
    ufo_loop_destroy (&loop);
}

int
main (void)
{
    dt_init (&env, "conn");
    if (!dt_start_broker (&env)) {
        fprintf (stderr, "broker did not start\n");
        return 1;
    }
    UFO_RUN (test_worker_and_submitter_on_one_socket);
    UFO_RUN (test_calls);
    UFO_RUN (test_timeout_and_late_reply);
    UFO_RUN (test_submit_deadline_counts_queue_time);
    UFO_RUN (test_bad_config);
    bb_test_stop (&env.b, SIGTERM);
    bb_test_rmtree (env.b.dir);
    ufo_value_destroy (&env.events);
    return UFO_TEST_END ();
}
