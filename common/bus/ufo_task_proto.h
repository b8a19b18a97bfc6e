/*  ufo_task_proto.h - the task dispatch wire protocol (docs/PROTOCOL.md section 3): request
    decoding and validation, names, topics.

    Shared by the broker (blackboard_broker/bb_dispatch.c, which decodes every request a
    worker or submitter sends) and the client actors (ufo_worker.c, ufo_tasks.c). Decoding
    takes one envelope frame and never touches a socket, so it can be fuzzed directly
    (tests/fuzz/fuzz_task_request.c). */
#ifndef UFO_TASK_PROTO_H_INCLUDED
#define UFO_TASK_PROTO_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

#define UFO_TASK_ID_MAX 64              //  bytes in a task, worker or client id
#define UFO_TASK_NAME_MAX 128           //  bytes in a service, device, session or name
#define UFO_TASK_RUNNING_MAX 1024       //  task ids in worker.ready "running"

//  Requests (peer -> broker). Every request gets one reply: "ok" or "error" (section 2.1).
typedef enum {
    UFO_TASK_REQ_WORKER_READY = 0,      //  "worker.ready"
    UFO_TASK_REQ_WORKER_HEARTBEAT,      //  "worker.heartbeat"
    UFO_TASK_REQ_WORKER_LEAVE,          //  "worker.leave"
    UFO_TASK_REQ_PROGRESS,              //  "task.progress"   (worker)
    UFO_TASK_REQ_COMPLETE,              //  "task.complete"   (worker)
    UFO_TASK_REQ_CLIENT_HELLO,          //  "client.hello"
    UFO_TASK_REQ_SUBMIT,                //  "task.submit"
    UFO_TASK_REQ_INPUT,                 //  "task.input"
    UFO_TASK_REQ_CANCEL,                //  "task.cancel"
    UFO_TASK_REQ_FETCH,                 //  "task.fetch"
    UFO_TASK_REQ_STATE,                 //  "dispatch.state"  (snapshot for monitors)
    UFO_TASK_REQ_CLIENT_HEARTBEAT,      //  "client.heartbeat"
    UFO_TASK_REQ_COUNT
} ufo_task_req_type_t;

//  Messages the broker sends to peers without being asked (envelope types).
#define UFO_TASK_MSG_ASSIGN "task.assign"       //  to a worker: the task map
#define UFO_TASK_MSG_INPUT "task.input"         //  to a worker: {"task", "kind", "body"}
#define UFO_TASK_MSG_PROGRESS "task.progress"   //  to a submitter: {"task", "seq", "body"}
#define UFO_TASK_MSG_RESULT "task.result"       //  to a submitter: {"task", "status", ...}

//  A decoded, validated request. Strings are "" when absent. Owns body and running.
typedef struct {
    int type;                           //  ufo_task_req_type_t, or -1 before decoding
    char type_name [65];
    char id [65];                       //  envelope id, echoed in the reply
    char sender [129];
    char worker [UFO_TASK_ID_MAX + 1];  //  worker.*, task.progress, task.complete
    char client [UFO_TASK_ID_MAX + 1];  //  client.hello, task.submit/input/cancel
    char task [UFO_TASK_ID_MAX + 1];    //  task.*
    char service [UFO_TASK_NAME_MAX + 1];
    char device [UFO_TASK_NAME_MAX + 1];
    bool has_device;
    char name [UFO_TASK_NAME_MAX + 1];
    char session [UFO_TASK_NAME_MAX + 1];
    char idem [UFO_TASK_NAME_MAX + 1];  //  idempotency key
    bool has_idem;
    char status [16];                   //  task.complete: "done" | "failed" | "cancelled"
    int64_t capacity;                   //  worker.ready (1..1024)
    int64_t heartbeat_ivl_ms;           //  worker.ready / client.hello (0: broker default)
    int64_t heartbeat_liveness;         //  idem
    int64_t attempt;                    //  task.progress / task.complete (>= 1)
    int64_t n;                          //  task.progress: 1, 2, ... per attempt
    int64_t deadline_ms;                //  task.submit (0: default)
    int64_t max_attempts;               //  task.submit (0: default)
    ufo_value_t *body;                  //  task body / progress / result / input (owned)
    ufo_value_t *running;               //  worker.ready / worker.heartbeat: task ids (owned)
} ufo_task_request_t;

//  Name of a request type ("worker.ready"...), and the type named by name or -1.
const char *ufo_task_req_name (int type);
int ufo_task_req_parse (const char *name);

//  True if an envelope frame carries a dispatch request or record, judged by its type
//  prefix ("task.", "worker.", "client.", "dispatch."), read from the decoded envelope head
//  (any integer or string form docs/PROTOCOL.md 1.2 allows), without decoding the body.
//  False for anything that is not a well-formed envelope head.
bool ufo_task_proto_claims (const void *frame, size_t len);

//  True if name is a valid id (1..64 bytes of [A-Za-z0-9_.:@-]).
bool ufo_task_id_valid (const char *name);
//  True if name is a valid service name: 1..128 bytes of [A-Za-z0-9_.:@-]; with
//  allow_wildcard, "app:*" is also accepted (a worker for any application).
bool ufo_task_service_valid (const char *name, bool allow_wildcard);
//  True if a worker of service worker_service may run a task of task_service:
//  equal names, or "app:*" and a task service that starts with "app:".
bool ufo_task_service_match (const char *worker_service, const char *task_service);

void ufo_task_request_init (ufo_task_request_t *req);
//  Frees what a decoded request owns and re-initialises it. Safe to call twice.
void ufo_task_request_reset (ufo_task_request_t *req);

//  Decodes and validates one request envelope frame (max_bytes: largest frame accepted).
//  Returns 0, or -1 with err (UFO_E_TOO_LARGE, UFO_E_SYNTAX, UFO_E_TYPE, UFO_E_MISSING,
//  UFO_E_INVALID, UFO_E_RANGE, ...); on error req->id holds the envelope id when the
//  envelope decoded, so the reply can still be correlated.
int ufo_task_request_decode (ufo_task_request_t *req, const void *frame, size_t len,
                             size_t max_bytes, ufo_error_t *err);

//  Writes the bus topic of a task event ("dispatch/task/<service>") or worker event
//  ("dispatch/worker/<service>") into out. Returns the length.
size_t ufo_task_topic (char *out, size_t size, const char *kind, const char *service);

#endif
