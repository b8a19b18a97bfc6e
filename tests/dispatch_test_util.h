/*  dispatch_test_util.h - helpers for the dispatch system tests: a real ufo-broker, worker
    processes (tests/tools/ufo_test_worker.c), a submitter, and a bus listener. */
#ifndef DISPATCH_TEST_UTIL_H_INCLUDED
#define DISPATCH_TEST_UTIL_H_INCLUDED

#include "ufo_bb_client.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_msg.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "bb_test_util.h"
#include "ufo_wait.h"
#include <czmq.h>

#define DT_MAX_WORKERS 40

typedef struct {
    bb_test_broker_t b;
    pid_t workers [DT_MAX_WORKERS];
    int nworkers;
    zsock_t *sub;                   //  bus listener (dispatch/ topics)
    ufo_value_t *events;            //  every dispatch event seen, in order (bodies + "type")
    bool synced;                    //  an event of the scratch board "dt-listen" arrived
} dt_env_t;

static inline bool
dt_ping (dt_env_t *e, int timeout_ms)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (e->b.cmd, NULL, &err);
    if (!c)
        return false;
    ufo_bb_client_set_timeout (c, 200);
    bool ok = false;
    for (int i = 0; i < timeout_ms / 200 && !ok; i++) {
        ufo_value_t *r = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
        ok = r != NULL;
        ufo_value_destroy (&r);
    }
    ufo_bb_client_destroy (&c);
    return ok;
}

static inline bool
dt_start_broker (dt_env_t *e)
{
    bb_test_start (&e->b, (const char *const []) { "--fsync", "always", "--stats-ms", "0", NULL });
    return dt_ping (e, 10000);
}

//  With a snapshot (and dispatch checkpoint) every n log records.
static inline bool
dt_start_broker_snap (dt_env_t *e, const char *n)
{
    bb_test_start (&e->b, (const char *const []) { "--fsync", "always", "--stats-ms", "0",
                                                   "--snapshot-every", n,
                                                   "--snapshot-growth", "0", NULL });
    return dt_ping (e, 10000);
}

static inline void
dt_init (dt_env_t *e, const char *name)
{
    memset (e, 0, sizeof *e);
    bb_test_init (&e->b, name);
    e->events = ufo_value_new_list ();
}

//  Reads every pending bus event into e->events.
static inline void
dt_drain_bus (dt_env_t *e)
{
    if (!e->sub)
        return;
    for (;;) {
        zmsg_t *msg = zmsg_recv_nowait (e->sub);
        if (!msg)
            break;
        zframe_t *topic = zmsg_first (msg);
        zframe_t *data = zmsg_next (msg);
        if (topic && zframe_size (topic) >= 3 && memcmp (zframe_data (topic), "bb/", 3) == 0)
            e->synced = true;       //  dt_listen's own event, not a dispatch event
        else
        if (topic && data) {
            ufo_error_t err;
            ufo_msg_t *m = ufo_msg_decode (zframe_data (data), zframe_size (data), NULL, &err);
            if (m) {
                ufo_value_t *body = ufo_msg_take_body (m);
                ufo_value_map_set_str (body, "type", ufo_msg_type (m));
                ufo_value_list_push (e->events, &body);
                ufo_msg_destroy (&m);
            }
        }
        zmsg_destroy (&msg);
    }
}

//  Subscribes to the dispatch events and returns once the subscription is live: the
//  listener also subscribes to a scratch board, "dt-listen", and adds to it until one of
//  its events arrives (bounded: 10 s), so no event published afterwards is missed.
static inline void
dt_listen (dt_env_t *e)
{
    e->sub = zsock_new_sub (e->b.bus, "dispatch/");
    zsock_set_subscribe (e->sub, "bb/dt-listen/");
    zsock_set_rcvtimeo (e->sub, 0);
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (e->b.cmd, NULL, &err);
    if (c)
        ufo_bb_client_set_timeout (c, 2000);
    e->synced = false;
    int64_t until = ufo_time_mono_ms () + 10000;
    while (c && !e->synced && ufo_time_mono_ms () < until) {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "board", "dt-listen");
        ufo_value_map_set_str (body, "memory", "questions");
        ufo_value_map_set_str (body, "item", "listening");
        ufo_value_t *r = ufo_bb_client_call (c, "bb.add", &body, NULL, 0, NULL, NULL, &err);
        ufo_value_destroy (&r);
        ufo_value_destroy (&body);
        WAIT_UNTIL ((dt_drain_bus (e), e->synced), 200);
    }
    ufo_bb_client_destroy (&c);
}

//  Number of events of this type seen (for task, if not NULL).
static inline int
dt_count (dt_env_t *e, const char *type, const char *task)
{
    dt_drain_bus (e);
    int n = 0;
    for (size_t i = 0; i < ufo_value_size (e->events); i++) {
        const ufo_value_t *ev = ufo_value_list_at (e->events, i);
        if (strcmp (ufo_value_map_str (ev, "type", ""), type) == 0
        &&  (!task || strcmp (ufo_value_map_str (ev, "task", ""), task) == 0))
            n++;
    }
    return n;
}

static inline const char *
dt_worker_binary (void)
{
    static char path [1024];
    const char *build = getenv ("UFO_BUILD_DIR");
    snprintf (path, sizeof path, "%s/tests/ufo-test-worker", build ? build : ".");
    return path;
}

//  Starts a worker process; extra is a NULL-terminated list of further arguments.
static inline pid_t
dt_start_worker (dt_env_t *e, const char *service, const char *const *extra)
{
    const char *argv [40];
    int n = 0;
    argv [n++] = dt_worker_binary ();
    argv [n++] = "--broker"; argv [n++] = e->b.cmd;
    argv [n++] = "--service"; argv [n++] = service;
    for (int i = 0; extra && extra [i] && n < 38; i++)
        argv [n++] = extra [i];
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        if (!getenv ("BB_TEST_VERBOSE")) {
            char log [400];
            snprintf (log, sizeof log, "%s/workers.log", e->b.dir);
            int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0)
                dup2 (fd, 2);
        }
        execv (argv [0], (char *const *) argv);
        perror ("execv ufo-test-worker");
        _exit (127);
    }
    if (e->nworkers < DT_MAX_WORKERS)
        e->workers [e->nworkers++] = pid;
    return pid;
}

//  Waits until the broker has n registered workers (dispatch.state), bounded.
static inline bool
dt_wait_workers (dt_env_t *e, int n, int timeout_ms)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (e->b.cmd, NULL, &err);
    ufo_bb_client_set_timeout (c, 1000);
    bool ok = false;
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (!ok && ufo_time_mono_ms () < until) {
        ufo_value_t *st = ufo_bb_client_call (c, "dispatch.state", NULL, NULL, 0, NULL, NULL, &err);
        ok = st && (int) ufo_value_size (ufo_value_map_get (st, "workers")) == n;
        ufo_value_destroy (&st);
        if (!ok)
            usleep (50000);
    }
    ufo_bb_client_destroy (&c);
    return ok;
}

static inline ufo_value_t *
dt_state (dt_env_t *e)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (e->b.cmd, NULL, &err);
    ufo_bb_client_set_timeout (c, 2000);
    ufo_value_t *st = ufo_bb_client_call (c, "dispatch.state", NULL, NULL, 0, NULL, NULL, &err);
    ufo_bb_client_destroy (&c);
    return st;
}

static inline void
dt_kill_workers (dt_env_t *e, int sig)
{
    for (int i = 0; i < e->nworkers; i++)
        if (e->workers [i] > 0) {
            kill (e->workers [i], SIGCONT);
            kill (e->workers [i], sig);
        }
    for (int i = 0; i < e->nworkers; i++)
        if (e->workers [i] > 0) {
            int status;
            for (int k = 0; k < 500 && waitpid (e->workers [i], &status, WNOHANG) == 0; k++)
                usleep (10000);
            if (waitpid (e->workers [i], &status, WNOHANG) == 0) {
                kill (e->workers [i], SIGKILL);
                waitpid (e->workers [i], &status, 0);
            }
            e->workers [i] = 0;
        }
    e->nworkers = 0;
}

static inline void
dt_cleanup (dt_env_t *e)
{
    dt_kill_workers (e, SIGTERM);
    zsock_destroy (&e->sub);
    ufo_value_destroy (&e->events);
    bb_test_cleanup (&e->b);
}

static inline ufo_value_t *
dt_spec (const char *service, int64_t n)
{
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", service);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "n", n);
    ufo_value_map_set (spec, "body", &body);
    return spec;
}

//  Collects result events from a submitter until `want` results or the timeout. results:
//  a map task id -> result event; returns the number of duplicate results (must be 0).
static inline int
dt_collect (ufo_tasks_t *tasks, ufo_value_t *results, size_t want, int timeout_ms, ufo_value_t *others)
{
    int dups = 0;
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (ufo_value_size (results) < want && ufo_time_mono_ms () < until) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (!ev)
            continue;
        if (strcmp (ufo_value_map_str (ev, "kind", ""), "result") == 0) {
            const char *id = ufo_value_map_str (ev, "task", "");
            if (ufo_value_map_has (results, id))
                dups++;
            char key [65];
            snprintf (key, sizeof key, "%s", id);
            ufo_value_map_set (results, key, &ev);
        }
        else
        if (others)
            ufo_value_list_push (others, &ev);
        ufo_value_destroy (&ev);
    }
    return dups;
}

#endif
