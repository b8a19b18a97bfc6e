/*  dispatch_private.h - private to common/bus: the broker link (ufo_task_link.c) under
    ufo_conn.c, and ufo_conn in a thread of its own (ufo_conn_actor.c) under the actor modes
    of ufo_worker.c and ufo_tasks.c.

    A link owns one DEALER socket to the broker's command endpoint, with a fixed routing id
    (so the broker can reach it again after a reconnect). It registers (worker.ready or
    client.hello), heartbeats every interval, counts the broker dead after `liveness`
    intervals of silence, then recreates the socket with backoff (100 ms doubling to 2 s)
    and registers again. Requests queued in its outbox are sent in order once registered,
    kept until the broker answers, and sent again after every new registration. */
#ifndef DISPATCH_PRIVATE_H_INCLUDED
#define DISPATCH_PRIVATE_H_INCLUDED

#include "ufo_loop.h"
#include "ufo_value.h"

typedef struct _ufo_link_t ufo_link_t;

typedef struct {
    void *owner;
    //  Builds the registration request: *type_p (static string) and a new body.
    void (*make_register) (void *owner, const char **type_p, ufo_value_t **body_p);
    //  Builds the heartbeat request (type, new body).
    void (*make_heartbeat) (void *owner, const char **type_p, ufo_value_t **body_p);
    //  The registration was answered ok (body borrowed). Every new registration calls it.
    void (*on_registered) (void *owner, const ufo_value_t *body);
    //  The link went down (silence beyond liveness); it reconnects by itself.
    void (*on_down) (void *owner);
    //  A message the broker sent without being asked (type, body borrowed).
    void (*on_message) (void *owner, const char *type, const ufo_value_t *body);
    //  The answer to an outbox request: tag as given to ufo_link_queue, ok or error, body
    //  (borrowed; the error body is {"code", "message"}).
    void (*on_reply) (void *owner, const char *tag, const char *type, bool ok, const ufo_value_t *body);
    //  Optional (ufo_conn): the reply to a request sent with ufo_link_send_call (ids that
    //  start with 'b'): its id, ok or error, body (the handler may take *body_p) and the
    //  bytes of a second reply frame (blob.get; NULL, 0 when none). NULL: such replies are
    //  ignored.
    void (*on_call) (void *owner, const char *id, bool ok, ufo_value_t **body_p, const void *data,
                     size_t len);
} ufo_link_handler_t;

//  Creates a link (no socket yet: the first ufo_link_service connects). routing_id is
//  the fixed ZeroMQ routing id (1..255 bytes). server_key / cert_path: CURVE as for
//  ufo_security_apply_client (NULL: the process default, "": none).
ufo_link_t *ufo_link_new (const char *endpoint, const char *routing_id, int ivl_ms, int liveness,
                          const char *server_key, const char *cert_path,
                          const ufo_link_handler_t *handler);
void ufo_link_destroy (ufo_link_t **self_p);

//  Queues a request (type, body: ownership taken); tag is returned in on_reply (copied; may
//  be NULL). Sent when registered, in order.
void ufo_link_queue (ufo_link_t *self, const char *type, ufo_value_t **body_p, const char *tag);

//  As ufo_link_queue, for a request with a deadline: expires is its monotonic instant (ms,
//  ufo_time_mono_ms; 0: none). Every time it is sent, its body's "deadline_ms" is set to the
//  time left then (at least 1), so the time it waited in the outbox (no connection, a
//  reconnect) counts against it. One never handed to a socket whose deadline passed is
//  dropped unsent: on_reply gets ok false and {"code": "timeout", "message", "local": true}.
//  One sent before (the broker may have it) goes again with 1 ms: the broker's answer holds.
void ufo_link_queue_until (ufo_link_t *self, const char *type, ufo_value_t **body_p, const char *tag,
                           int64_t expires);

//  Requests waiting for an answer.
size_t ufo_link_pending (ufo_link_t *self);

//  True while registered.
bool ufo_link_up (ufo_link_t *self);

//  The DEALER socket (czmq zsock_t *, or NULL while down) for the actor's poller.
void *ufo_link_socket (ufo_link_t *self);

//  Reads everything the socket has, runs timers (heartbeat, liveness, reconnect,
//  registration retries) and sends what the outbox holds. Returns the milliseconds until
//  the next timer is due (for the poll timeout).
int ufo_link_service (ufo_link_t *self);

//  Sends one request now, outside the outbox (blackboard calls of ufo_conn): type, id
//  (must start with 'b'), body (borrowed; NULL = empty map) and an optional second frame
//  (blob.put). Nothing is resent after a reconnect. Returns true when handed to the socket
//  (false: no socket, or it would block).
bool ufo_link_send_call (ufo_link_t *self, const char *type, const char *id, const ufo_value_t *body,
                         const void *frame, size_t frame_len);

//  Forces a new registration now (e.g. after the owner's state changed).
void ufo_link_reregister (ufo_link_t *self);

//  Sends one request immediately, without outbox (best effort: worker.leave at shutdown).
void ufo_link_send_now (ufo_link_t *self, const char *type, ufo_value_t **body_p);

//  --- ufo_conn in a thread (ufo_conn_actor.c) ----------------------------------------------

typedef struct _ufo_conn_reply_t ufo_conn_reply_t;
#include "ufo_conn.h"

//  Starts a czmq actor (zactor_t *) that runs a ufo_loop with a ufo_conn of config (copied
//  before this returns); *connected is set (atomically) on its connected / disconnected
//  events. Events come to the caller as one msgpack frame each (ufo_conn_actor_next), in
//  order, never blocking the actor. Commands (ufo_conn_actor_command): PROGRESS {task, body},
//  COMPLETE {task, status, result}, SUBMIT {spec with "task"}, INPUT {task, body},
//  CANCEL {task}, FETCH {task, tag, timeout_ms}: answered by the event
//  {"kind": "fetch", "tag", "ok", "body"}. NULL when the thread cannot start.
void *ufo_conn_actor_new (const ufo_conn_config_t *config, int *connected);

//  Stops the actor: the connection leaves and flushes (bounded, ufo_conn_destroy).
void ufo_conn_actor_destroy (void **actor_p);

//  The next event within timeout_ms (0: no wait, -1: forever), caller owns; or NULL.
ufo_value_t *ufo_conn_actor_next (void *actor, int timeout_ms);

//  Sends a command [verb, msgpack(*body_p)] (ownership taken).
void ufo_conn_actor_command (void *actor, const char *verb, ufo_value_t **body_p);

//  The pipe's descriptor (readable when an event may be there; drain with next (0)).
int ufo_conn_actor_fd (void *actor);

//  "<prefix>@<host>:<pid>" into out.
void ufo_link_default_name (char *out, size_t size, const char *prefix);

#endif
