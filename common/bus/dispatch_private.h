/*  dispatch_private.h - private to ufo_worker.c and ufo_tasks.c: the broker link that both
    actors run in their background thread (ufo_task_link.c).

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

//  The actor side of the caller <-> actor pipe: events go to the caller as one msgpack
//  frame; commands come as [verb, msgpack]. The actor never blocks on the pipe: an event
//  that does not fit (the caller is not reading) waits in the link's backlog, in order,
//  until ufo_link_pipe_flush can send it.
void ufo_link_pipe_event (ufo_link_t *self, void *pipe, ufo_value_t **event_p);
//  Sends backlogged events; returns true when the backlog is empty.
bool ufo_link_pipe_flush (ufo_link_t *self, void *pipe);

//  Caller side: receives one event from the actor within timeout_ms (0: no wait, -1: forever),
//  or NULL.
ufo_value_t *ufo_link_pipe_next (void *actor, int timeout_ms);

//  Caller side: sends a command [verb, msgpack(*body_p)] to the actor (ownership taken).
void ufo_link_pipe_command (void *actor, const char *verb, ufo_value_t **body_p);

//  The actor's loop, shared by ufo_worker and ufo_tasks: polls the pipe (czmq zsock_t *)
//  and the link's DEALER, hands the caller's commands (up to 1000 per turn) to on_command,
//  services the link (ufo_link_service) and sends backlogged events (ufo_link_pipe_flush),
//  polling again within 5 ms while the caller is behind. A command [verb, msgpack] reaches
//  on_command as verb (borrowed, never NULL) and *body_p (the decoded frame, or NULL when
//  absent or not valid msgpack): on_command may take it, else it is freed after the call.
//  A message without a verb is ignored. Returns when "$TERM" arrives (not passed on) or the
//  ZeroMQ context is terminated.
void ufo_link_run (ufo_link_t *self, void *pipe,
                   void (*on_command) (void *arg, const char *verb, ufo_value_t **body_p), void *arg);

//  After ufo_link_run: while the link is up and requests wait for their answers, services
//  it for at most timeout_ms (polling the DEALER 20 ms at a time), so what is queued gets a
//  chance to reach the broker before the link is destroyed.
void ufo_link_drain (ufo_link_t *self, int timeout_ms);

//  Serves the link from the caller's loop instead of an actor (ufo_worker_new_in_loop,
//  ufo_tasks_new_in_loop): a loop source that services the link (timers, socket, outbox) and
//  then hands each event the owner's handlers pushed onto pending (a list, borrowed; at most
//  256 a turn) to deliver, which may take *event_p. Connects at once. The source goes with
//  ufo_link_destroy.
typedef struct _ufo_loop_t ufo_loop_t;
typedef void (ufo_link_deliver_fn) (void *owner, ufo_value_t **event_p);
void ufo_link_attach (ufo_link_t *self, ufo_loop_t *loop, ufo_value_t *pending, ufo_link_deliver_fn *deliver,
                      void *owner);

//  "<prefix>@<host>:<pid>" into out.
void ufo_link_default_name (char *out, size_t size, const char *prefix);

#endif
