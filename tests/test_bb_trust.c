/*  test_bb_trust.c - what one identity may do to another's work, on a real ufo-broker with
    CURVE on and certificates made by `ufo keygen` (issue 21):
    - idempotency keys are scoped to the submitter: two clients with the same key get two
      tasks, each result goes to its own submitter, a later resubmission finds its own task;
    - a worker and its tasks belong to the certificate that registered it: another agent
      cannot heartbeat, progress, complete, leave or take over that worker or its task, and
      the real worker keeps working;
    - desktop work is bound to the device it started on: a session submitted without a
      device that a HostAgent of d1 took is requeued only to a HostAgent of d1 (also across
      a broker SIGKILL + restart), never to d0's, and runs there when d1 is back; one whose
      first HostAgent left before showing it had it may still go anywhere;
    - a peer that never reads its replies is bounded in bytes: 300 requests for an 8 MB
      board keep the broker's resident memory under the limit plus a margin, it gets `busy`,
      and another client's pings keep answering;
    - task bodies and results on the bus are sealed to their submitter: a client's subscriber
      opens its own task's result and finds no byte of another client's data; a monitor sees
      the events without any body. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msg.h"
#include "ufo_msgpack.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_worker.h"
#include "ufo_test.h"
#include "bb_test_util.h"
#include <czmq.h>

static bb_test_broker_t B;
static char s_keys [400], s_allowed [400], s_broker_key [41];

static void
s_keygen (const char *name, const char *role)
{
    char cmd [1400];
    snprintf (cmd, sizeof cmd, "%s/cli/ufo keygen %s --role %s --dir %s >/dev/null && cp %s/%s.cert %s/",
              getenv ("UFO_BUILD_DIR"), name, role, s_keys, s_keys, name, s_allowed);
    if (system (cmd) != 0) {
        fprintf (stderr, "ufo keygen %s failed\n", name);
        exit (1);
    }
}

static const char *
s_secret (const char *name)
{
    static char path [4][600];
    static int next;
    char *p = path [next++ % 4];
    snprintf (p, 600, "%s/%s.cert_secret", s_keys, name);
    return p;
}

static ufo_bb_client_t *
s_client (const char *name)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new_curve (B.cmd, NULL, s_broker_key, s_secret (name), &err);
    if (c)
        ufo_bb_client_set_timeout (c, 5000);
    return c;
}

//  Sends type with a JSON body; returns 0 for an ok reply (*reply_p receives its body when
//  reply_p is given), else the error code.
static int
s_call (ufo_bb_client_t *c, const char *type, const char *json, ufo_value_t **reply_p)
{
    return bb_test_call (c, type, json, reply_p, NULL);
}

static bool
s_ping (int timeout_ms)
{
    ufo_bb_client_t *c = s_client ("agent1");
    if (!c)
        return false;
    ufo_bb_client_set_timeout (c, 300);
    bool ok = false;
    for (int i = 0; i < timeout_ms / 300 && !ok; i++)
        ok = s_call (c, "ping", NULL, NULL) == 0;
    ufo_bb_client_destroy (&c);
    return ok;
}

//  A field of the broker's stats, or -1.
static int64_t
s_stat (ufo_bb_client_t *c, const char *field)
{
    ufo_value_t *stats = NULL;
    int64_t value = s_call (c, "stats", NULL, &stats) == 0 ? ufo_value_map_int (stats, field, -1) : -1;
    ufo_value_destroy (&stats);
    return value;
}

//  How many workers the broker lists, or -1.
static int
s_workers (ufo_bb_client_t *c)
{
    ufo_value_t *state = NULL;
    int n = s_call (c, "dispatch.state", NULL, &state) == 0 ? (int) ufo_value_size (ufo_value_map_get (state, "workers")) : -1;
    ufo_value_destroy (&state);
    return n;
}

#define S_PEER_LIMIT (16u << 20)     //  broker.max_peer_output_bytes in this test

static void
s_start_broker (void)
{
    char limit [32];
    snprintf (limit, sizeof limit, "%u", S_PEER_LIMIT);
    setenv ("UFO_BROKER__MAX_PEER_OUTPUT_BYTES", limit, 1);
    setenv ("UFO_SECURITY__CURVE", "true", 1);
    setenv ("UFO_SECURITY__CERT_DIR", s_keys, 1);
    bb_test_start (&B, (const char *const []) { "--fsync", "always", "--stats-ms", "0", NULL });
    unsetenv ("UFO_SECURITY__CURVE");
    unsetenv ("UFO_SECURITY__CERT_DIR");
    unsetenv ("UFO_BROKER__MAX_PEER_OUTPUT_BYTES");
}

static ufo_tasks_t *
s_tasks (const char *cert, const char *name)
{
    ufo_error_t err;
    return ufo_tasks_new (B.cmd, name, s_broker_key, s_secret (cert), &err);
}

static ufo_worker_t *
s_worker (const char *cert, const char *name, const char *service, const char *device)
{
    ufo_error_t err;
    ufo_worker_config_t wc = { .endpoint = B.cmd, .service = service, .device = device, .name = name,
                               .capacity = 2, .heartbeat_ivl_ms = 200, .heartbeat_liveness = 5,
                               .curve_server_key = s_broker_key, .curve_cert_path = s_secret (cert) };
    return ufo_worker_new (&wc, &err);
}

//  The next event of this kind from a submitter (others are dropped), or NULL.
static ufo_value_t *
s_tasks_event (ufo_tasks_t *tasks, const char *kind, int timeout_ms)
{
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < until) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (ev && strcmp (ufo_value_map_str (ev, "kind", ""), kind) == 0)
            return ev;
        ufo_value_destroy (&ev);
    }
    return NULL;
}

//  The next task delivered to a worker, or NULL.
static ufo_value_t *
s_worker_task (ufo_worker_t *w, int timeout_ms)
{
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < until) {
        ufo_value_t *ev = ufo_worker_next (w, 100);
        if (ev && strcmp (ufo_value_map_str (ev, "kind", ""), "task") == 0)
            return ev;
        ufo_value_destroy (&ev);
    }
    return NULL;
}

static void
s_submit (ufo_tasks_t *tasks, const char *key, const char *who, const char *device, char id [33])
{
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "host");
    if (key)
        ufo_value_map_set_str (spec, "idempotency_key", key);
    if (device)
        ufo_value_map_set_str (spec, "device", device);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "who", who);
    ufo_value_map_set (spec, "body", &body);
    ufo_error_t err;
    if (ufo_tasks_submit (tasks, &spec, id, &err) != 0)
        id [0] = 0;
}

//  Completes a delivered task with {"echo": body.who}.
static void
s_echo (ufo_worker_t *w, const ufo_value_t *task)
{
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "echo", ufo_value_str (ufo_value_path (task, "body.who")));
    ufo_worker_complete (w, ufo_value_map_str (task, "task", ""), "done", &result);
}

//  The id of the registered worker with this name (dispatch.state), in out.
static void
s_worker_id (ufo_bb_client_t *c, const char *name, char out [65])
{
    out [0] = 0;
    ufo_value_t *state = NULL;
    if (s_call (c, "dispatch.state", NULL, &state) != 0)
        return;
    const ufo_value_t *workers = ufo_value_map_get (state, "workers");
    for (size_t i = 0; i < ufo_value_size (workers); i++) {
        const ufo_value_t *w = ufo_value_list_at (workers, i);
        if (strcmp (ufo_value_map_str (w, "name", ""), name) == 0)
            snprintf (out, 65, "%s", ufo_value_map_str (w, "worker", ""));
    }
    ufo_value_destroy (&state);
}

UFO_TEST (test_idempotency_scoped_to_submitter)
{
    ufo_worker_t *w = s_worker ("agent1", "w-idem", "host", NULL);
    ufo_tasks_t *alice = s_tasks ("alice", "alice"), *bob = s_tasks ("bob", "bob");
    REQUIRE (w && alice && bob);
    char ta [33], tb [33];
    s_submit (alice, "k2", "alice", NULL, ta);
    ufo_value_t *acc = s_tasks_event (alice, "accepted", 10000);
    REQUIRE (acc);
    CHECK (!ufo_value_map_bool (acc, "duplicate", true));
    ufo_value_destroy (&acc);
    s_submit (bob, "k2", "bob", NULL, tb);
    acc = s_tasks_event (bob, "accepted", 10000);
    REQUIRE (acc);
    CHECK (!ufo_value_map_bool (acc, "duplicate", true));       //  a new task, not alice's
    CHECK (!ufo_value_map_has (acc, "broker_task"));
    ufo_value_destroy (&acc);
    //  the worker runs both
    for (int i = 0; i < 2; i++) {
        ufo_value_t *task = s_worker_task (w, 10000);
        REQUIRE (task);
        s_echo (w, task);
        ufo_value_destroy (&task);
    }
    //  each result to its own submitter
    ufo_value_t *ra = s_tasks_event (alice, "result", 10000), *rb = s_tasks_event (bob, "result", 10000);
    REQUIRE (ra && rb);
    CHECK_STR (ufo_value_map_str (ra, "task", ""), ta);
    CHECK_STR (ufo_value_str (ufo_value_path (ra, "body.echo")), "alice");
    CHECK_STR (ufo_value_map_str (rb, "task", ""), tb);
    CHECK_STR (ufo_value_str (ufo_value_path (rb, "body.echo")), "bob");
    ufo_value_destroy (&ra);
    ufo_value_destroy (&rb);
    CHECK (s_tasks_event (alice, "result", 500) == NULL);      //  nothing more
    //  bob resubmitting later finds his own task (and its result), not alice's
    char tb2 [33];
    s_submit (bob, "k2", "bob again", NULL, tb2);
    acc = s_tasks_event (bob, "accepted", 10000);
    REQUIRE (acc);
    CHECK (ufo_value_map_bool (acc, "duplicate", false));
    CHECK_STR (ufo_value_map_str (acc, "broker_task", ""), tb);
    ufo_value_destroy (&acc);
    rb = s_tasks_event (bob, "result", 10000);
    REQUIRE (rb);
    CHECK_STR (ufo_value_str (ufo_value_path (rb, "body.echo")), "bob");
    ufo_value_destroy (&rb);
    CHECK (s_tasks_event (alice, "result", 500) == NULL);
    //  alice's task id cannot be taken over by bob (the role table refuses it first)
    ufo_bb_client_t *raw = s_client ("bob");
    REQUIRE (raw);
    char json [300];
    snprintf (json, sizeof json, "{\"client\":\"bob-raw\",\"task\":\"%s\",\"service\":\"host\",\"body\":{}}", ta);
    CHECK_INT (s_call (raw, "task.submit", json, NULL), UFO_E_DENIED);
    ufo_bb_client_destroy (&raw);
    ufo_tasks_destroy (&bob);
    ufo_tasks_destroy (&alice);
    ufo_worker_destroy (&w);
}

UFO_TEST (test_worker_bound_to_certificate)
{
    ufo_worker_t *w1 = s_worker ("agent1", "w1", "host", NULL);
    ufo_tasks_t *alice = s_tasks ("alice", "alice");
    ufo_bb_client_t *b = s_client ("agent2");
    REQUIRE (w1 && alice && b);
    char t [33];
    s_submit (alice, NULL, "alice", NULL, t);
    ufo_value_t *task = s_worker_task (w1, 10000);
    REQUIRE (task);
    char id [65];
    snprintf (id, sizeof id, "%s", ufo_value_map_str (task, "task", ""));
    int64_t attempt = ufo_value_map_int (task, "attempt", 0);
    char wid [65];
    s_worker_id (b, "w1", wid);
    REQUIRE (*wid);
    char json [600], message [200];
    snprintf (json, sizeof json, "{\"worker\":\"%s\",\"running\":[]}", wid);
    CHECK_INT (s_call (b, "worker.heartbeat", json, NULL), UFO_E_DENIED);
    snprintf (json, sizeof json, "{\"worker\":\"%s\",\"task\":\"%s\",\"attempt\":%" PRId64 ",\"n\":7,"
              "\"body\":{\"forged\":true}}", wid, id, attempt);
    CHECK_INT (s_call (b, "task.progress", json, NULL), UFO_E_DENIED);
    snprintf (json, sizeof json, "{\"worker\":\"%s\",\"task\":\"%s\",\"attempt\":%" PRId64 ",\"status\":\"done\","
              "\"result\":{\"echo\":\"forged\"}}", wid, id, attempt);
    CHECK_INT (s_call (b, "task.complete", json, NULL), UFO_E_DENIED);
    snprintf (json, sizeof json, "{\"worker\":\"%s\"}", wid);
    CHECK_INT (s_call (b, "worker.leave", json, NULL), UFO_E_DENIED);
    snprintf (json, sizeof json, "{\"worker\":\"%s\",\"service\":\"host\",\"capacity\":1}", wid);
    CHECK_INT (s_call (b, "worker.ready", json, NULL), UFO_E_DENIED);
    snprintf (message, sizeof message, "worker %s is registered with another certificate (certificate \"agent2\")", wid);
    CHECK (bb_test_log_contains (&B, message, 3000));
    //  B's own worker claiming A's assignment: refused as well
    CHECK_INT (s_call (b, "worker.ready", "{\"worker\":\"w2\",\"service\":\"app:none\",\"capacity\":1}", NULL), 0);
    snprintf (json, sizeof json, "{\"worker\":\"w2\",\"task\":\"%s\",\"attempt\":%" PRId64 ",\"status\":\"done\","
              "\"result\":{\"echo\":\"forged\"}}", id, attempt);
    ufo_value_t *reply = NULL;
    CHECK_INT (s_call (b, "task.complete", json, &reply), 0);
    CHECK (reply && !ufo_value_map_bool (reply, "accepted", true));     //  not its task: discarded
    ufo_value_destroy (&reply);
    CHECK (s_tasks_event (alice, "result", 500) == NULL);                //  nothing ended
    //  the task is still A's and running
    snprintf (json, sizeof json, "{\"task\":\"%s\"}", id);
    CHECK_INT (s_call (b, "task.fetch", json, &reply), 0);
    CHECK_STR (ufo_value_map_str (reply, "state", ""), "running");
    CHECK_STR (ufo_value_map_str (reply, "worker", ""), "w1");          //  its name
    ufo_value_destroy (&reply);
    //  A completes: the submitter gets A's result
    s_echo (w1, task);
    ufo_value_destroy (&task);
    ufo_value_t *r = s_tasks_event (alice, "result", 10000);
    REQUIRE (r);
    CHECK_STR (ufo_value_str (ufo_value_path (r, "body.echo")), "alice");
    ufo_value_destroy (&r);
    //  A keeps working: its heartbeats were never refused, it takes the next task
    CHECK (ufo_worker_connected (w1));
    s_submit (alice, NULL, "alice 2", NULL, t);
    task = s_worker_task (w1, 10000);
    REQUIRE (task);
    s_echo (w1, task);
    ufo_value_destroy (&task);
    r = s_tasks_event (alice, "result", 10000);
    REQUIRE (r);
    CHECK_STR (ufo_value_str (ufo_value_path (r, "body.echo")), "alice 2");
    ufo_value_destroy (&r);
    CHECK_INT (s_call (b, "worker.leave", "{\"worker\":\"w2\"}", NULL), 0);
    ufo_bb_client_destroy (&b);
    ufo_tasks_destroy (&alice);
    ufo_worker_destroy (&w1);
}

UFO_TEST (test_session_stays_on_its_device)
{
    ufo_tasks_t *batch = s_tasks ("alice", "ufo-batch:1");
    ufo_bb_client_t *ghost = s_client ("agent1");
    REQUIRE (batch && ghost);
    //  a HostAgent of device d9 that is free the longest takes the first session, and leaves
    //  before showing it had it (no heartbeat, no progress): the session did not start there
    //  and stays free to go to any device
    CHECK_INT (s_call (ghost, "worker.ready", "{\"worker\":\"ghost\",\"service\":\"host\",\"device\":\"d9\"}",
                       NULL), 0);
    //  h0 and h1 register after it (the broker lists all three before the session comes)
    ufo_worker_t *h0 = s_worker ("agent1", "host-d0", "host", "d0");
    ufo_worker_t *h1 = s_worker ("agent2", "host-d1", "host", "d1");
    REQUIRE (h0 && h1);
    WAIT_UNTIL (s_workers (ghost) == 3, 10000);
    CHECK_INT (s_workers (ghost), 3);
    char s1 [33];
    s_submit (batch, NULL, "session 1", NULL, s1);
    ufo_value_t *state = NULL;
    int64_t until = ufo_time_mono_ms () + 5000;
    bool on_ghost = false;
    while (!on_ghost && ufo_time_mono_ms () < until) {
        CHECK_INT (s_call (ghost, "dispatch.state", NULL, &state), 0);
        const ufo_value_t *ws = ufo_value_map_get (state, "workers");
        for (size_t i = 0; i < ufo_value_size (ws); i++)
            if (strcmp (ufo_value_map_str (ufo_value_list_at (ws, i), "worker", ""), "ghost") == 0)
                on_ghost = ufo_value_size (ufo_value_map_get (ufo_value_list_at (ws, i), "tasks")) == 1;
        ufo_value_destroy (&state);
        if (!on_ghost)
            usleep (50000);
    }
    CHECK (on_ghost);
    CHECK_INT (s_call (ghost, "worker.leave", "{\"worker\":\"ghost\"}", NULL), 0);
    ufo_value_t *task = NULL;
    ufo_worker_t *taker = NULL;
    until = ufo_time_mono_ms () + 10000;
    while (!task && ufo_time_mono_ms () < until) {
        if ((task = s_worker_task (h0, 100)) != NULL)
            taker = h0;
        else
        if ((task = s_worker_task (h1, 100)) != NULL)
            taker = h1;
    }
    REQUIRE (task);
    const char *device = taker == h0 ? "d0" : "d1", *other_device = taker == h0 ? "d1" : "d0";
    CHECK_STR (ufo_value_map_str (task, "device", ""), device);      //  bound where it started
    int64_t attempt = ufo_value_map_int (task, "attempt", 0);
    CHECK_INT (attempt, 2);
    //  it starts there: its first step
    ufo_value_t *step = ufo_value_new_map ();
    ufo_value_map_set_str (step, "kind", "step");
    CHECK_INT (ufo_worker_progress (taker, ufo_value_map_str (task, "task", ""), &step), 0);
    ufo_value_t *progress = s_tasks_event (batch, "progress", 10000);      //  the broker has it
    CHECK (progress != NULL);
    ufo_value_destroy (&progress);
    ufo_value_destroy (&task);
    ufo_worker_t *other = taker == h0 ? h1 : h0;
    //  its HostAgent goes away: the session waits for its device, never runs on the other
    ufo_worker_destroy (taker == h0 ? &h0 : &h1);
    task = s_worker_task (other, 2500);
    CHECK (task == NULL);
    ufo_value_destroy (&task);
    //  ... also across a broker crash (the binding is in the log)
    CHECK_INT (bb_test_stop (&B, SIGKILL), 128 + SIGKILL);
    s_start_broker ();
    REQUIRE (s_ping (10000));
    task = s_worker_task (other, 3000);
    CHECK (task == NULL);
    ufo_value_destroy (&task);
    //  a session that never started may still go to any device
    char s2 [33];
    s_submit (batch, NULL, "session 2", NULL, s2);
    task = s_worker_task (other, 10000);
    REQUIRE (task);
    CHECK_STR (ufo_value_str (ufo_value_path (task, "body.who")), "session 2");
    CHECK_STR (ufo_value_map_str (task, "device", ""), other_device);
    s_echo (other, task);
    ufo_value_destroy (&task);
    //  the device's HostAgent is back: the session resumes there (attempt 2)
    ufo_worker_t *back = s_worker (taker == h0 ? "agent1" : "agent2", taker == h0 ? "host-d0" : "host-d1",
                                   "host", device);
    REQUIRE (back);
    task = s_worker_task (back, 10000);
    REQUIRE (task);
    CHECK_STR (ufo_value_str (ufo_value_path (task, "body.who")), "session 1");
    CHECK_INT (ufo_value_map_int (task, "attempt", 0), attempt + 1);
    s_echo (back, task);
    ufo_value_destroy (&task);
    ufo_value_t *results = ufo_value_new_map ();
    until = ufo_time_mono_ms () + 10000;
    while (ufo_value_size (results) < 2 && ufo_time_mono_ms () < until) {
        ufo_value_t *r = s_tasks_event (batch, "result", 200);
        if (r) {
            char id [65];
            snprintf (id, sizeof id, "%s", ufo_value_map_str (r, "task", ""));
            ufo_value_map_set (results, id, &r);
        }
    }
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_map_get (results, s1), "body.echo")), "session 1");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_map_get (results, s2), "body.echo")), "session 2");
    ufo_value_destroy (&results);
    ufo_worker_destroy (&back);
    ufo_worker_destroy (&other);
    ufo_tasks_destroy (&batch);
    ufo_bb_client_destroy (&ghost);
}

//  The broker's resident memory in bytes (/proc), or 0.
static size_t
s_rss (void)
{
    char path [64], line [256];
    snprintf (path, sizeof path, "/proc/%d/status", (int) B.pid);
    FILE *f = fopen (path, "r");
    size_t kb = 0;
    while (f && fgets (line, sizeof line, f))
        if (strncmp (line, "VmRSS:", 6) == 0)
            kb = (size_t) strtoull (line + 6, NULL, 10);
    if (f)
        fclose (f);
    return kb * 1024;
}

static int
s_cmp_i64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return x < y ? -1 : x > y;
}

UFO_TEST (test_never_reading_peer_is_bounded)
{
    ufo_bb_client_t *agent = s_client ("agent1"), *other = s_client ("alice");
    REQUIRE (agent && other);
    //  an 8 MB board: 16 items of 512 KB
    char *text = ufo_malloc (512 * 1024 + 1);
    memset (text, 'x', 512 * 1024);
    text [512 * 1024] = 0;
    for (int i = 0; i < 16; i++) {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "board", "big");
        ufo_value_map_set_str (body, "memory", "trajectories");
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_str (item, "blob_text", text);
        ufo_value_map_set (body, "item", &item);
        ufo_error_t err;
        ufo_value_t *reply = ufo_bb_client_call (agent, "bb.add", &body, NULL, 0, NULL, NULL, &err);
        CHECK (reply != NULL);
        ufo_value_destroy (&reply);
    }
    free (text);
    CHECK_INT (s_call (other, "ping", NULL, NULL), 0);
    size_t base = s_rss ();
    REQUIRE (base > 0);
    //  the bad peer: a DEALER that asks for the board 300 times and reads nothing
    zsock_t *bad = zsock_new (ZMQ_DEALER);
    zsock_set_rcvhwm (bad, 1);              //  its own libzmq must not read ahead for it either
    zsock_set_rcvbuf (bad, 65536);
    ufo_error_t err;
    REQUIRE (ufo_security_apply_client (bad, s_broker_key, s_secret ("agent2"), &err) == 0);
    REQUIRE (zsock_connect (bad, "%s", B.cmd) == 0);
    ufo_buf_t frame = { 0 };
    ufo_msg_t *msg = ufo_msg_new ("bb.snapshot");
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "big");
    ufo_msg_set_body (msg, &body);
    ufo_msg_encode (msg, &frame);
    ufo_msg_destroy (&msg);
    int64_t lat [400];
    size_t nlat = 0, peak = base;
    for (int round = 0; round < 300 && nlat < UFO_ARRAY_SIZE (lat); round++) {
        if (round < 30)
            for (int k = 0; k < 10; k++)
                zsock_send (bad, "b", frame.data, frame.len);
        int64_t t0 = ufo_time_mono_ms ();
        CHECK_INT (s_call (other, "ping", NULL, NULL), 0);
        lat [nlat++] = ufo_time_mono_ms () - t0;
        size_t rss = s_rss ();
        if (rss > peak)
            peak = rss;
        usleep (10000);
    }
    ufo_buf_free (&frame);
    qsort (lat, nlat, sizeof lat [0], s_cmp_i64);
    int64_t p99 = lat [nlat * 99 / 100];
    fprintf (stderr, "  never-reading peer: rss %zu MB before, peak %zu MB (limit %u MB); ping p50 %" PRId64
             " ms, p99 %" PRId64 " ms, max %" PRId64 " ms over %zu pings\n", base >> 20, peak >> 20,
             S_PEER_LIMIT >> 20, lat [nlat / 2], p99, lat [nlat - 1], nlat);
    //  one 8 MB reply may be on its way past the limit; the rest is the broker's own copies
    CHECK (peak < base + S_PEER_LIMIT + (40u << 20));
    //  The figure is p99 under 50 ms (measured 7-10 ms on a loaded machine, printed
    //  above and in docs/BENCHMARKS.md). The check tells "served throughout" from the old
    //  ~5 s stalls with room for a CI machine running another test beside this one: a
    //  scheduling hiccup must not fail the build.
    CHECK (p99 < 500);
    //  the bad peer got busy for most of its requests; the broker still serves everyone
    int busy = 0, snapshots = 0;
    zpoller_t *poller = zpoller_new (bad, NULL);
    while (zpoller_wait (poller, 2000)) {
        zmsg_t *reply = zmsg_recv (bad);
        zframe_t *f = zmsg_last (reply);
        ufo_msg_t *m = f ? ufo_msg_decode (zframe_data (f), zframe_size (f), NULL, &err) : NULL;
        if (m && strcmp (ufo_msg_type (m), "ok") == 0)
            snapshots++;
        else
        if (m && strcmp (ufo_value_map_str (ufo_msg_body (m), "code", ""), "busy") == 0)
            busy++;
        ufo_msg_destroy (&m);
        zmsg_destroy (&reply);
        if (busy + snapshots == 300)
            break;
    }
    zpoller_destroy (&poller);
    fprintf (stderr, "  never-reading peer: %d snapshots, %d busy\n", snapshots, busy);
    CHECK_INT (busy + snapshots, 300);
    CHECK (busy > 250);
    CHECK (snapshots >= 2 && snapshots <= 8);
    CHECK (bb_test_log_contains (&B, "of replies it has not read (limit 16777216", 1000));
    //  once it has read them, it is served again
    ufo_msg_t *ping = ufo_msg_new ("ping");
    ufo_msg_set_id (ping, "after-reading");
    ufo_buf_t pframe = { 0 };
    ufo_msg_encode (ping, &pframe);
    ufo_msg_destroy (&ping);
    zsock_send (bad, "b", pframe.data, pframe.len);
    ufo_buf_free (&pframe);
    zsock_set_rcvtimeo (bad, 5000);
    zmsg_t *pong = zmsg_recv (bad);
    zframe_t *pf = pong ? zmsg_last (pong) : NULL;
    ufo_msg_t *pm = pf ? ufo_msg_decode (zframe_data (pf), zframe_size (pf), NULL, &err) : NULL;
    CHECK (pm && strcmp (ufo_msg_type (pm), "ok") == 0 && strcmp (ufo_msg_id (pm), "after-reading") == 0);
    ufo_msg_destroy (&pm);
    zmsg_destroy (&pong);
    CHECK (bb_test_log_contains (&B, "read its replies", 1000));
    zsock_destroy (&bad);
    CHECK_INT (s_call (other, "ping", NULL, NULL), 0);
    CHECK_INT (s_call (agent, "bb.delete", "{\"board\":\"big\"}", NULL), 0);
    ufo_bb_client_destroy (&other);
    ufo_bb_client_destroy (&agent);
}

//  A SUB socket with the named certificate, subscribed to the task events.
static zsock_t *
s_sub (const char *name)
{
    zsock_t *sub = zsock_new (ZMQ_SUB);
    ufo_error_t err;
    if (ufo_security_apply_client (sub, s_broker_key, s_secret (name), &err) != 0) {
        zsock_destroy (&sub);
        return NULL;
    }
    zsock_set_subscribe (sub, "");
    zsock_connect (sub, "%s", B.bus);
    return sub;
}

typedef struct {
    ufo_value_t *events;        //  bodies of task events, with "type"
    bool leaked;                //  a raw frame contained the needle
} s_seen_t;

//  Reads sub for timeout_ms into seen; needle: bytes that must not appear in any frame.
static void
s_collect_bus (zsock_t *sub, s_seen_t *seen, const char *needle, int timeout_ms)
{
    zpoller_t *poller = zpoller_new (sub, NULL);
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < until && zpoller_wait (poller, 100)) {
        zmsg_t *msg = zmsg_recv (sub);
        for (zframe_t *f = zmsg_first (msg); f; f = zmsg_next (msg))
            if (memmem (zframe_data (f), zframe_size (f), needle, strlen (needle)))
                seen->leaked = true;
        zframe_t *last = zmsg_last (msg);
        ufo_error_t err;
        ufo_msg_t *m = last ? ufo_msg_decode (zframe_data (last), zframe_size (last), NULL, &err) : NULL;
        if (m && strncmp (ufo_msg_type (m), "task.", 5) == 0) {
            ufo_value_t *body = ufo_value_dup (ufo_msg_body (m));
            ufo_value_map_set_str (body, "type", ufo_msg_type (m));
            ufo_value_list_push (seen->events, &body);
        }
        ufo_msg_destroy (&m);
        zmsg_destroy (&msg);
    }
    zpoller_destroy (&poller);
}

static const ufo_value_t *
s_find_event (const s_seen_t *seen, const char *type, const char *task)
{
    for (size_t i = 0; i < ufo_value_size (seen->events); i++) {
        const ufo_value_t *e = ufo_value_list_at (seen->events, i);
        if (strcmp (ufo_value_map_str (e, "type", ""), type) == 0 && strcmp (ufo_value_map_str (e, "task", ""), task) == 0)
            return e;
    }
    return NULL;
}

//  Opens a sealed field with the named certificate; returns the value (caller owns) or NULL.
static ufo_value_t *
s_unseal (const char *cert_name, const char *sealed)
{
    ufo_error_t err;
    ufo_cert_t *cert = ufo_cert_load (s_secret (cert_name), &err);
    ufo_buf_t plain = { 0 };
    ufo_value_t *v = NULL;
    if (cert && sealed && ufo_cert_unseal (cert, sealed, &plain, &err) == 0)
        v = ufo_msgpack_decode (plain.data, plain.len, NULL, &err);
    ufo_buf_free (&plain);
    ufo_cert_destroy (&cert);
    return v;
}

UFO_TEST (test_task_bodies_on_the_bus)
{
    ufo_bb_client_t *mon = s_client ("mon");
    REQUIRE (mon);
    int64_t before = s_stat (mon, "subscribers");
    zsock_t *alice_sub = s_sub ("alice"), *mon_sub = s_sub ("mon");
    REQUIRE (alice_sub && mon_sub);
    WAIT_UNTIL (s_stat (mon, "subscribers") == before + 2, 10000);     //  subscriptions reach the broker
    CHECK_INT (s_stat (mon, "subscribers"), before + 2);
    ufo_bb_client_destroy (&mon);
    ufo_worker_t *w = s_worker ("agent1", "w-bus", "host", NULL);
    ufo_tasks_t *alice = s_tasks ("alice", "alice"), *bob = s_tasks ("bob", "bob");
    REQUIRE (w && alice && bob);
    char ta [33], tb [33];
    s_submit (alice, NULL, "alice-own-data", NULL, ta);
    s_submit (bob, NULL, "bob-secret-data", NULL, tb);
    for (int i = 0; i < 2; i++) {
        ufo_value_t *task = s_worker_task (w, 10000);
        REQUIRE (task);
        s_echo (w, task);
        ufo_value_destroy (&task);
    }
    ufo_value_t *ra = s_tasks_event (alice, "result", 10000), *rb = s_tasks_event (bob, "result", 10000);
    CHECK (ra && rb);
    ufo_value_destroy (&ra);
    ufo_value_destroy (&rb);
    s_seen_t seen_alice = { ufo_value_new_list (), false }, seen_mon = { ufo_value_new_list (), false };
    s_collect_bus (alice_sub, &seen_alice, "bob-secret", 1500);
    s_collect_bus (mon_sub, &seen_mon, "-data", 1500);
    //  no byte of bob's body or result reached alice's subscriber; none of either the monitor's
    CHECK (!seen_alice.leaked);
    CHECK (!seen_mon.leaked);
    //  the events themselves are there, with their metadata; bodies nil
    const ufo_value_t *done_a = s_find_event (&seen_alice, "task.done", ta);
    const ufo_value_t *done_b = s_find_event (&seen_alice, "task.done", tb);
    const ufo_value_t *sub_a = s_find_event (&seen_alice, "task.submitted", ta);
    REQUIRE (done_a && done_b && sub_a);
    CHECK (ufo_value_type (ufo_value_map_get (done_a, "result")) == UFO_TNULL);
    CHECK_STR (ufo_value_map_str (done_b, "status", ""), "done");
    CHECK (s_find_event (&seen_mon, "task.done", ta) && s_find_event (&seen_mon, "task.done", tb));
    //  alice opens her own result and body
    ufo_value_t *result = s_unseal ("alice", ufo_value_map_str (done_a, "sealed_result", NULL));
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "echo", ""), "alice-own-data");
    ufo_value_destroy (&result);
    ufo_value_t *body = s_unseal ("alice", ufo_value_map_str (sub_a, "sealed_body", NULL));
    REQUIRE (body);
    CHECK_STR (ufo_value_map_str (body, "who", ""), "alice-own-data");
    ufo_value_destroy (&body);
    //  ... but not bob's
    CHECK (ufo_value_map_str (done_b, "sealed_result", NULL) != NULL);
    result = s_unseal ("alice", ufo_value_map_str (done_b, "sealed_result", NULL));
    CHECK (result == NULL);
    ufo_value_destroy (&result);
    //  and the submitter still fetches its own result in clear; the log kept the bodies
    ufo_bb_client_t *raw = s_client ("alice");
    char json [100];
    snprintf (json, sizeof json, "{\"task\":\"%s\"}", ta);
    ufo_value_t *fetched = NULL;
    CHECK_INT (s_call (raw, "task.fetch", json, &fetched), 0);
    CHECK_STR (ufo_value_str (ufo_value_path (fetched, "result.echo")), "alice-own-data");
    ufo_value_destroy (&fetched);
    ufo_bb_client_destroy (&raw);
    ufo_value_destroy (&seen_alice.events);
    ufo_value_destroy (&seen_mon.events);
    ufo_tasks_destroy (&bob);
    ufo_tasks_destroy (&alice);
    ufo_worker_destroy (&w);
    zsock_destroy (&mon_sub);
    zsock_destroy (&alice_sub);
}

int
main (void)
{
    bb_test_init (&B, "trust");
    snprintf (s_keys, sizeof s_keys, "%s/keys", B.dir);
    snprintf (s_allowed, sizeof s_allowed, "%s/keys/allowed", B.dir);
    mkdir (s_keys, 0700);
    mkdir (s_allowed, 0755);
    s_keygen ("broker", "broker");
    s_keygen ("agent1", "agent");
    s_keygen ("agent2", "agent");
    s_keygen ("alice", "client");
    s_keygen ("bob", "client");
    s_keygen ("mon", "monitor");
    if (!bb_test_broker_key (s_keys, s_broker_key))
        return 1;
    s_start_broker ();
    if (!s_ping (10000)) {
        fprintf (stderr, "the broker did not answer\n");
        bb_test_cleanup (&B);
        return 1;
    }
    UFO_RUN (test_idempotency_scoped_to_submitter);
    UFO_RUN (test_worker_bound_to_certificate);
    UFO_RUN (test_session_stays_on_its_device);
    UFO_RUN (test_task_bodies_on_the_bus);
    UFO_RUN (test_never_reading_peer_is_bounded);
    int rc = UFO_TEST_END ();
    if (rc != 0)
        setenv ("BB_TEST_KEEP", "1", 1);
    bb_test_cleanup (&B);
    zsys_shutdown ();
    return rc;
}
