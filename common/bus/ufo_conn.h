/*  ufo_conn.h - the one broker connection of an agent process (issue 17, part 1).

    One DEALER socket to the broker's command endpoint carries everything an agent says to
    the broker: the worker side of dispatch (worker.ready, heartbeats, tasks, progress,
    complete, inputs and cancels), the submitter side (task.submit, task.input,
    task.cancel, task.progress / task.result events) and blackboard calls (bb.*, blob.*).
    The broker's command ROUTER routes each request by its decoded envelope type
    (docs/PROTOCOL.md 2.1 and 3), so one peer may be a worker, a submitter and a board
    client at once. It runs as a source of the caller's ufo_loop: no thread, no blocking.

    The link (common/bus/ufo_task_link.c) registers, heartbeats, reconnects with backoff and
    keeps dispatch requests in an outbox until the broker answers them (resent after a
    reconnect). Blackboard calls are not resent (bb.add is not idempotent): each is sent
    once, in the order the calls were made, and ends in its callback with the reply, a
    timeout, or "connection lost". Requests on the one socket reach the broker in the order
    they were made, so a bb.add made before ufo_conn_complete is on the board before the
    task's result is published.

    Events (maps, passed to on_event from inside the loop; the handler may take *event_p):
      worker side (with config.service):
        {"kind": "task", "task", "service", "device", "attempt", "max_attempts",
         "deadline_us", "deadline_in_ms", "session", "submitter", "body"}
        {"kind": "input" | "cancel", "task": id, "body": any}
      submitter side:
        {"kind": "accepted", "task": id, "duplicate": bool, "state": s, "broker_task"?: id}
        {"kind": "progress", "task": id, "seq": n, "body": any}
        {"kind": "result", "task": id, "status": "done"|"failed"|"cancelled", "reason",
         "attempts", "body"}
        {"kind": "error", "task": id, "request": "task.input"|"task.cancel", "code", "message"}
      {"kind": "connected" | "disconnected"}    (the registration came up / went down)
    The shapes are those of ufo_worker.h and ufo_tasks.h.

    One owner thread; callbacks must not destroy the connection.
    Implementation: common/bus/ufo_conn.c, ufo_conn_call.c (blackboard calls). */
#ifndef UFO_CONN_H_INCLUDED
#define UFO_CONN_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_loop.h"
#include "ufo_value.h"

typedef struct _ufo_conn_t ufo_conn_t;

typedef struct {
    const char *endpoint;           //  broker command endpoint (required)
    const char *name;               //  for logs and the monitor; NULL = "<service|client>@<host>:<pid>"
    const char *service;            //  worker of this service; NULL = no worker side
    const char *device;             //  the worker's device, or NULL
    int capacity;                   //  tasks at once (0 = 1)
    int heartbeat_ivl_ms;           //  0 = 1000
    int heartbeat_liveness;         //  0 = 3
    int call_timeout_ms;            //  default timeout of a blackboard call (0 = 10000)
    const char *curve_server_key;   //  CURVE as for ufo_security_apply_client: NULL = the
    const char *curve_cert_path;    //  process default (ufo_security_init), "" = none
} ufo_conn_config_t;

typedef void (ufo_conn_fn) (void *arg, ufo_value_t **event_p);

//  Connects (asynchronously) and registers: as a worker of config->service when given, else
//  as a client. Events go to on_event (required) from the loop. Returns NULL with err for a
//  bad configuration only; an unreachable broker is retried with backoff.
ufo_conn_t *ufo_conn_new (const ufo_conn_config_t *config, ufo_loop_t *loop, ufo_conn_fn *on_event,
                          void *arg, ufo_error_t *err);

//  Checks a configuration as ufo_conn_new does (for callers that start one elsewhere, e.g.
//  in a thread). Returns 0, or -1 with err.
int ufo_conn_config_check (const ufo_conn_config_t *config, ufo_error_t *err);

//  Leaves: a worker tells the broker (its unfinished tasks are requeued at once); what is
//  queued (results, blackboard calls) gets up to 1 s to reach the broker (ufo_conn_flush);
//  calls still pending then end with UFO_E_CANCELLED in their callbacks. Frees everything
//  and sets *self_p to NULL. Safe with NULL.
void ufo_conn_destroy (ufo_conn_t **self_p);

//  True while registered with the broker.
bool ufo_conn_connected (ufo_conn_t *self);

//  The routing id of the socket ("w-<id>" or "c-<id>"): how the broker sees this process.
const char *ufo_conn_routing_id (ufo_conn_t *self);

//  --- Worker side -----------------------------------------------------------------------

//  Progress for a task delivered by a "task" event and not completed yet (ownership of
//  *body_p taken). Returns 0, or -1 if the task is not running here.
int ufo_conn_progress (ufo_conn_t *self, const char *task_id, ufo_value_t **body_p);

//  Completes a task: status "done" | "failed" | "cancelled"; result any value (ownership
//  taken). Returns 0, or -1 if the task is not running here or the status is not one of those.
int ufo_conn_complete (ufo_conn_t *self, const char *task_id, const char *status, ufo_value_t **result_p);

//  --- Submitter side ----------------------------------------------------------------------

//  Checks a task spec (ufo_tasks.h). Returns 0, or -1 with err naming the bad field.
int ufo_conn_spec_check (const ufo_value_t *spec, ufo_error_t *err);

//  Submits a task (spec as in ufo_tasks.h, plus an optional "task": the id to use, 1..32
//  bytes of [A-Za-z0-9_.:@-]; else a new one; ownership of *spec_p taken); id_out[33] (may
//  be NULL) gets its id. Returns 0, or -1 with err for an invalid spec. Acceptance arrives
//  as an event. A "deadline_ms" counts from this call: while the request waits to be sent
//  (no connection) its time runs, the broker gets what is left; one whose deadline passes
//  before it could be sent is never sent and ends in a "result" event, status "failed",
//  reason "not submitted: timeout: ...".
int ufo_conn_submit (ufo_conn_t *self, ufo_value_t **spec_p, char id_out [33], ufo_error_t *err);

//  Input for a task submitted here (ownership of *body_p taken). Returns 0, or -1 when
//  task_id was not submitted through this connection.
int ufo_conn_input (ufo_conn_t *self, const char *task_id, ufo_value_t **body_p);

//  Asks for a task's cancellation (it ends with a "result" event, status "cancelled").
//  Returns 0, or -1 for an invalid id.
int ufo_conn_cancel (ufo_conn_t *self, const char *task_id);

//  Asks the broker for the state of a task (task.fetch; the broker's id of a task submitted
//  here is used). fn gets the reply body (docs/PROTOCOL.md 3.3) or the error, as for
//  ufo_conn_call. Returns the call's id.
typedef struct _ufo_conn_reply_t ufo_conn_reply_t;
typedef void (ufo_conn_call_fn) (void *arg, ufo_conn_reply_t *reply);
uint64_t ufo_conn_fetch (ufo_conn_t *self, const char *task_id, int timeout_ms, ufo_conn_call_fn *fn, void *arg);

//  --- Blackboard calls ----------------------------------------------------------------------

//  How a call ended, for its callback. Everything is borrowed for the callback's duration,
//  except that the callback may take *body_p.
struct _ufo_conn_reply_t {
    uint64_t id;                    //  as returned by ufo_conn_call
    bool ok;                        //  an "ok" reply
    ufo_value_t **body_p;           //  ok: the reply body (may be taken); else NULL
    const void *data;               //  blob.get: the bytes of the second frame (else NULL)
    size_t len;
    ufo_error_t err;                //  !ok: the broker's error code and message, UFO_E_TIMEOUT,
                                    //  UFO_E_IO (connection lost) or UFO_E_CANCELLED (destroyed)
};

//  Starts a call: request type ("bb.add", "blob.put", ...), body (ownership of *body_p taken;
//  NULL = empty map), an optional second frame (blob.put; copied). fn (may be NULL: the
//  outcome is only logged when it fails) runs once from the loop with the outcome, after
//  timeout_ms (0: the configured default) at the latest. A reply that arrives after the
//  timeout is dropped with a log line. Returns the call's id (> 0).
uint64_t ufo_conn_call (ufo_conn_t *self, const char *type, ufo_value_t **body_p, const void *frame,
                        size_t frame_len, int timeout_ms, ufo_conn_call_fn *fn, void *arg);

//  Forgets a pending call: its callback will not run; its reply, if one comes, is dropped.
void ufo_conn_call_forget (ufo_conn_t *self, uint64_t id);

//  Calls not yet ended.
size_t ufo_conn_calls_pending (ufo_conn_t *self);

//  A call that waits for its reply (the blocking helper, for code that has no way to wait
//  for an event yet). While it waits it serves this connection only: heartbeats and
//  registration go on, and events (tasks, inputs, cancels) are kept and handed to on_event
//  by the loop afterwards; other calls' callbacks may run. Returns the reply body (caller
//  owns) or NULL with err (as for the callback). data_p / len_p (optional): the second frame
//  (blob.get; caller frees).
ufo_value_t *ufo_conn_call_wait (ufo_conn_t *self, const char *type, ufo_value_t **body_p,
                                 const void *frame, size_t frame_len, int timeout_ms, char **data_p,
                                 size_t *len_p, ufo_error_t *err);

//  Reads a board: bb.snapshot of every memory of `board` with items after `after` (0: all),
//  then, with images, a blob.get for every screenshot item that has a "blob" and no
//  "image_str", filling in its data URL (ufo_bb_client_fill_images does the same,
//  blocking). fn gets the snapshot reply body (docs/PROTOCOL.md 2.4; it may take it) once
//  everything arrived; a screenshot that cannot be fetched is logged and left without
//  image_str. Returns the id of the snapshot call (ufo_conn_call_forget stops it all).
uint64_t ufo_conn_snapshot (ufo_conn_t *self, const char *board, uint64_t after, bool images,
                            int timeout_ms, ufo_conn_call_fn *fn, void *arg);

//  Waits (serving this connection only, as ufo_conn_call_wait) until no call is pending and
//  the dispatch outbox is empty, or timeout_ms passed. Returns 0, or -1 when something is
//  still pending (the exit path's bounded flush).
int ufo_conn_flush (ufo_conn_t *self, int timeout_ms);

#endif
