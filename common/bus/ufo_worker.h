/*  ufo_worker.h - a worker of a named service: AppAgent (app:<application> or app:*),
    EvaluationAgent (eval), HostAgent (host). Contract for issue 4 (task dispatch).

    The worker side of a ufo_conn (ufo_conn.h): ufo_worker_new runs the connection in a
    thread of its own (a czmq actor, ufo_conn_actor.c), so heartbeats, reconnection with
    backoff and re-registration go on while the caller's thread is busy or blocked. (An agent
    with a loop uses one ufo_conn directly for its worker side, submissions and blackboard
    calls.) The caller receives tasks and inputs by polling; everything it sends is
    delivered in order, across broker restarts (the broker requeues in-flight tasks and
    discards late results of a worker it dropped, so each task completes exactly once).

    Task as delivered to the worker (a map, owned by the caller once taken):
      {"task": id, "service": s, "device": d|null, "attempt": n (1-based), "max_attempts": n,
       "deadline_us": wall-clock us|0, "session": s, "submitter": name, "body": any}
    Input for a running task (answers, confirmations, cancellation):
      {"task": id, "kind": "input"|"cancel", "body": any}
    Note: czmq installs SIGINT/SIGTERM handlers when the first actor starts; a process that
    wants its own must install them after ufo_worker_new.
    Implementation: common/bus/ufo_worker.c; protocol: docs/PROTOCOL.md section 3. */
#ifndef UFO_WORKER_H_INCLUDED
#define UFO_WORKER_H_INCLUDED

#include <stdbool.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_worker_t ufo_worker_t;

typedef struct {
    const char *endpoint;           //  broker command endpoint (required)
    const char *service;            //  service name (required)
    const char *device;             //  device id, or NULL for a worker not bound to a desktop
    const char *name;               //  for logs and the monitor; NULL = "<service>@<host>:<pid>"
    int heartbeat_ivl_ms;           //  0 = dispatch.heartbeat_ivl_ms default (1000)
    int heartbeat_liveness;         //  0 = dispatch.heartbeat_liveness default (3)
    int capacity;                   //  tasks at once (0 = 1)
    const char *curve_server_key;   //  broker public key (Z85) when CURVE is on, else NULL
    const char *curve_cert_path;    //  this worker's certificate (secret file) when CURVE is on
} ufo_worker_config_t;

//  Starts the worker: connects (asynchronously) and registers. Returns NULL with err only
//  for bad configuration; an unreachable broker is retried with backoff in the background.
ufo_worker_t *ufo_worker_new (const ufo_worker_config_t *config, ufo_error_t *err);

//  Stops the actor, tells the broker this worker is leaving (its unfinished tasks are
//  requeued at once), and frees everything; sets *self_p to NULL. Safe with NULL.
void ufo_worker_destroy (ufo_worker_t **self_p);

//  Waits up to timeout_ms (0 = don't wait, -1 = forever) for a task or an input.
//  Returns the next event (caller owns) or NULL on timeout. Events are maps:
//    {"kind": "task", ...task fields above...}
//    {"kind": "input" | "cancel", "task": id, "body": any}
//    {"kind": "connected" | "disconnected"}   (connection state changes, informational)
ufo_value_t *ufo_worker_next (ufo_worker_t *self, int timeout_ms);

//  A file descriptor that becomes readable when ufo_worker_next has something
//  (for the caller's own poll loop). Level-triggered semantics are NOT guaranteed:
//  after it signals, drain with ufo_worker_next (timeout 0) until it returns NULL.
int ufo_worker_fd (ufo_worker_t *self);

//  Sends a progress message for a running task to its submitter (zero or more per task).
//  Takes ownership of *body_p. Returns 0, or -1 if the task is not running here.
int ufo_worker_progress (ufo_worker_t *self, const char *task_id, ufo_value_t **body_p);

//  Completes a task: status "done" | "failed" | "cancelled"; result is any value (ownership
//  taken). Returns 0, or -1 if the task is not running here.
int ufo_worker_complete (ufo_worker_t *self, const char *task_id, const char *status,
                         ufo_value_t **result_p);

//  True while the actor has a live registration with the broker.
bool ufo_worker_connected (ufo_worker_t *self);

#endif
