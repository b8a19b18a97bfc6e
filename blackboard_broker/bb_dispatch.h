/*  bb_dispatch.h - task dispatch inside the broker: the worker registry, one queue per
    service, the task state machine, heartbeats, and durable task records.

    The dispatcher owns no socket and no file. The server (bb_server.c) hands it every
    request whose envelope type is a dispatch type (ufo_task_proto_claims), and gives it a
    host interface to take global sequence numbers, append log records, reply, send to a
    peer by identity and publish on the bus. Everything it emits goes through the server's
    output queue, so it leaves in order and only once the log records of the same burst are
    durable (fsync "always"). docs/PROTOCOL.md section 3 specifies the messages.

    Task states: queued -> running -> done | failed | cancelled; running -> queued again
    (attempt + 1) when its worker is lost or leaves, or the broker restarts; queued past
    its deadline, or requeued after max_attempts deliveries -> failed. A result from any
    worker other than the current assignee (same worker id and attempt) is discarded and
    reported (task.discarded), so a task completes exactly once.

    Durability: every published dispatch event is also a log record (the envelope as
    published), replayed at start-up; bb_dispatch_checkpoint writes the whole task table
    as one record at the head of a new log segment, so compaction may drop older ones. */
#ifndef BB_DISPATCH_H_INCLUDED
#define BB_DISPATCH_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _bb_dispatch_t bb_dispatch_t;

typedef struct {
    void *arg;
    //  Takes the next global sequence number (shared with the blackboards).
    uint64_t (*next_seq) (void *arg);
    //  The last global sequence number taken (for snapshots).
    uint64_t (*seq) (void *arg);
    //  Appends one record to the log (written and made durable at the end of the burst).
    void (*log) (void *arg, const void *data, size_t len);
    //  Replies to the request being handled (its routing frames + this envelope).
    void (*reply) (void *arg, const void *data, size_t len);
    //  Sends one envelope to a peer by ROUTER identity, at once (not held for durability:
    //  assignments and inputs to workers).
    void (*send) (void *arg, const void *peer, size_t peer_len, const void *data, size_t len);
    //  Publishes an event (topic frame + envelope) on the bus.
    void (*publish) (void *arg, const char *topic, const void *data, size_t len);
} bb_dispatch_host_t;

typedef struct {
    int heartbeat_ivl_ms;           //  default for peers that do not say (dispatch.heartbeat_ivl_ms)
    int heartbeat_liveness;         //  dispatch.heartbeat_liveness
    int default_max_attempts;       //  dispatch.default_max_attempts
    int64_t default_deadline_ms;    //  dispatch.default_deadline_ms (0: none)
    size_t max_message_bytes;       //  largest request frame
    size_t keep_finished;           //  finished tasks kept for task.fetch (0: 10000)
    bool seal_bodies;               //  task bodies and results on the bus sealed to their submitter
                                    //  (CURVE on, security.monitor_sees_bodies off)
} bb_dispatch_config_t;

//  Creates an empty dispatcher. The host interface is copied.
bb_dispatch_t *bb_dispatch_new (const bb_dispatch_config_t *config, const bb_dispatch_host_t *host);

//  Frees everything. Safe with NULL.
void bb_dispatch_destroy (bb_dispatch_t **self_p);

//  Handles one request frame from the peer with ROUTER identity peer[0..peer_len).
//  key: the public key (Z85) of the peer's certificate, NULL with CURVE off; cert: the
//  certificate's name, for log lines (NULL: unknown). Idempotency keys are scoped to the
//  requester's identity; workers and their tasks are bound to the key that registered them.
//  Always replies (ok or error); never fails.
void bb_dispatch_handle (bb_dispatch_t *self, const void *peer, size_t peer_len, const char *key,
                         const char *cert, const void *frame, size_t len);

//  Periodic work (call every ~100 ms): requeues the tasks that were running when the broker
//  last stopped (first call only), drops peers whose heartbeats stopped, expires deadlines.
void bb_dispatch_tick (bb_dispatch_t *self);

//  Applies one log record of a dispatch type during start-up replay. *seq_p receives the
//  record's global sequence number (0 for a checkpoint). Returns 0, or -1 with err for a
//  record that does not decode.
int bb_dispatch_replay (bb_dispatch_t *self, const void *payload, size_t len, uint64_t *seq_p,
                        ufo_error_t *err);

//  Appends a checkpoint record (every known task and its state; no sequence number) to buf.
void bb_dispatch_checkpoint (bb_dispatch_t *self, ufo_buf_t *buf);

//  Counters for the stats map: adds "workers", "tasks_queued", "tasks_running", ... to map.
void bb_dispatch_stats (bb_dispatch_t *self, ufo_value_t *map);

#endif
