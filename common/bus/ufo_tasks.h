/*  ufo_tasks.h - submitting tasks to services and following them. Contract for issue 4.

    Used by `ufo run` (submits a session to service "host"), by the HostAgent (subtasks to
    "app:<application>" on its device, evaluations to "eval"), and by tools. The submitter
    side of a ufo_conn (ufo_conn.h) in a thread of its own (an agent with a loop submits
    through its one ufo_conn directly): submissions are kept until the broker
    acknowledges them and resent after a reconnect (the idempotency key makes that safe).

    Task spec fields (a map passed to ufo_tasks_submit):
      {"service": s (required), "device": d|null, "deadline_ms": relative ms from the submit
       (0 = default; the time spent waiting to be sent counts, see ufo_conn_submit),
       "max_attempts": n (0 = default), "idempotency_key": k|null, "session": s|null,
       "body": any}
    Events delivered to the submitter (maps, caller owns):
      {"kind": "accepted", "task": id, "duplicate": bool, "state": s, "broker_task"?: id}
        (broker_task: the id of an existing task with the same idempotency key, which this
        handle now follows; events keep using the caller's id)
      {"kind": "progress", "task": id, "seq": n, "body": any}
      {"kind": "result", "task": id, "status": "done"|"failed"|"cancelled", "reason": text,
       "attempts": n, "body": any}
      {"kind": "connected" | "disconnected"}
      {"kind": "error", "task": id, "request": "task.input"|"task.cancel", "code", "message"}
    A task the broker refuses (e.g. a limit) ends with a "result" event, status "failed".
    Implementation: common/bus/ufo_tasks.c; protocol: docs/PROTOCOL.md section 3. */
#ifndef UFO_TASKS_H_INCLUDED
#define UFO_TASKS_H_INCLUDED

#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_tasks_t ufo_tasks_t;

//  Starts a submitter connected to the broker's command endpoint. name is shown in the
//  monitor (NULL = "client@<host>:<pid>"). curve_* as for ufo_worker_config_t (NULL = off).
ufo_tasks_t *ufo_tasks_new (const char *endpoint, const char *name, const char *curve_server_key,
                            const char *curve_cert_path, ufo_error_t *err);

//  Stops and frees; sets *self_p to NULL. Tasks already submitted go on in the broker.
void ufo_tasks_destroy (ufo_tasks_t **self_p);

//  Submits a task. Takes ownership of *spec_p. Writes the task id (assigned locally, 32 hex)
//  into id_out. Returns 0, or -1 with err for an invalid spec. Acceptance arrives as an event.
int ufo_tasks_submit (ufo_tasks_t *self, ufo_value_t **spec_p, char id_out [33], ufo_error_t *err);

//  Sends input (answers, confirmations) to the worker running task_id. Takes ownership of
//  *body_p. Returns 0, or -1 if task_id is unknown to this submitter.
int ufo_tasks_input (ufo_tasks_t *self, const char *task_id, ufo_value_t **body_p);

//  Asks for cancellation; the task ends with status "cancelled" (reported as a result event).
int ufo_tasks_cancel (ufo_tasks_t *self, const char *task_id);

//  Next event, waiting up to timeout_ms (0 = no wait, -1 = forever); NULL on timeout.
ufo_value_t *ufo_tasks_next (ufo_tasks_t *self, int timeout_ms);

//  Pollable fd, same semantics as ufo_worker_fd. Events read while ufo_tasks_fetch waited
//  are kept for ufo_tasks_next and do not make the fd readable: call ufo_tasks_next (0)
//  until NULL after a fetch.
int ufo_tasks_fd (ufo_tasks_t *self);

//  Fetches the state of any task by id, waiting up to timeout_ms for the broker's answer
//  (for a submitter that went away and came back). Returns a map (caller owns)
//  {"task", "service", "state": "queued"|"running"|"done"|"failed"|"cancelled",
//   "attempts", "reason", "result": any|null}, or NULL with err (UFO_E_NOT_FOUND, UFO_E_TIMEOUT).
ufo_value_t *ufo_tasks_fetch (ufo_tasks_t *self, const char *task_id, int timeout_ms,
                              ufo_error_t *err);

#endif
