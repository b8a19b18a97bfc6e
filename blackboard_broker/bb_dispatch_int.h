/*  bb_dispatch_int.h - private to the dispatcher (bb_dispatch.c: requests and state
    machine; bb_dispatch_tasks.c: task table, records, replay, checkpoints). */
#ifndef BB_DISPATCH_INT_H_INCLUDED
#define BB_DISPATCH_INT_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_value.h"
#include "ufo_task_proto.h"
#include "bb_dispatch.h"

//  An identity: "key:" + a certificate's public key (CURVE on), or "name:" + the
//  submitter's name without a trailing ":<pid>" (CURVE off).
#define BBD_SCOPE_MAX (UFO_TASK_NAME_MAX + 8)

enum { S_QUEUED = 0, S_RUNNING, S_DONE, S_FAILED, S_CANCELLED };

typedef struct _s_task_t s_task_t;
typedef struct _s_service_t s_service_t;
typedef struct _s_worker_t s_worker_t;

struct _s_task_t {
    char id [UFO_TASK_ID_MAX + 1];
    char service [UFO_TASK_NAME_MAX + 1];
    char device [UFO_TASK_NAME_MAX + 1];
    bool has_device;
    bool bound;                                 //  device taken from its first worker (s_bind_device)
    bool confirmed;                             //  a worker showed it has it (heartbeat, progress)
    char session [UFO_TASK_NAME_MAX + 1];
    char submitter [UFO_TASK_NAME_MAX + 1];     //  the submitter's display name
    char client [UFO_TASK_ID_MAX + 1];          //  the submitter's client id (routing)
    char idem [UFO_TASK_NAME_MAX + 1];
    bool has_idem;
    char scope [BBD_SCOPE_MAX + 1];             //  the submitter's identity: idempotency keys
                                                //  are scoped to it ("" in logs of older brokers)
    int64_t max_attempts;
    int64_t attempts;                           //  deliveries so far
    int64_t deadline_us;                        //  wall clock, 0: none
    int64_t submitted_us;
    uint64_t order;                             //  submission order (queues are sorted by it)
    int state;
    char worker [UFO_TASK_ID_MAX + 1];          //  current (running) or last worker id
    char worker_name [UFO_TASK_NAME_MAX + 1];
    char worker_key [41];                       //  certificate of that worker ("": CURVE off)
    int64_t progress_n;                         //  highest progress number of this attempt
    int64_t assigned_ms;                        //  monotonic time of the assignment
    int missed;                                 //  heartbeats since then that did not list it
    bool cancel_requested;
    char reason [256];
    ufo_value_t *body;                          //  freed when the task ends
    ufo_value_t *result;
    s_service_t *svc;                           //  queue it waits in (queued only)
    s_task_t *qprev, *qnext;
    s_task_t *fprev, *fnext;                    //  finished list (terminal only)
    s_task_t *hnext, *inext;                    //  hash chains: by id, by idempotency key
};

struct _s_service_t {
    char name [UFO_TASK_NAME_MAX + 1];
    s_task_t *head, *tail;
    size_t queued, running;
};

struct _s_worker_t {
    char id [UFO_TASK_ID_MAX + 1];
    char name [UFO_TASK_NAME_MAX + 1];
    char service [UFO_TASK_NAME_MAX + 1];
    char device [UFO_TASK_NAME_MAX + 1];
    bool has_device;
    char key [41];                              //  certificate that registered it ("": CURVE off)
    uint8_t peer [256];
    size_t peer_len;
    int64_t capacity, ivl_ms, liveness;
    s_task_t **tasks;                           //  assigned here (capacity slots)
    size_t ntasks;
    char (*stale) [UFO_TASK_ID_MAX + 1];        //  earlier attempts still running there
    size_t nstale, cap_stale;
    int64_t last_seen_ms;
    uint64_t stamp;                             //  lower: free for longer
};

typedef struct {
    char id [UFO_TASK_ID_MAX + 1];
    char name [UFO_TASK_NAME_MAX + 1];
    uint8_t peer [256];
    size_t peer_len;
    int64_t last_seen_ms, ivl_ms, liveness;
} s_client_t;

struct _bb_dispatch_t {
    bb_dispatch_config_t cfg;
    bb_dispatch_host_t host;
    //  tasks
    s_task_t **by_id, **by_idem;
    size_t nbuckets, ntasks;
    s_task_t *fin_head, *fin_tail;              //  finished tasks, oldest first
    size_t nfinished;
    uint64_t order;
    //  services, workers, clients (few: linear arrays)
    s_service_t **services;
    size_t nservices, cap_services;
    s_worker_t **workers;
    size_t nworkers, cap_workers;
    s_client_t **clients;
    size_t nclients, cap_clients;
    uint64_t stamp;
    uint64_t last_seq;                          //  seq of the last dispatch event (the "prev" chain)
    bool recovered;                             //  tasks running at the last stop were requeued
    char id_prefix [33];
    uint64_t msg_counter;
    char last_id [33];                          //  id and time of the last envelope encoded
    int64_t last_us;
    ufo_buf_t buf;
    //  counters
    uint64_t submitted, completed, failed, cancelled, requeued, discarded, errors, denied;
    //  the devices whose HostAgent (service "host") registered since the broker started, and
    //  when it started: `ufo run --device` tells a typo from a HostAgent still connecting
    char devices_seen [64][UFO_TASK_NAME_MAX + 1];
    size_t ndevices_seen;
    int64_t started_ms;
    //  the peer of the request being handled (bb_dispatch_handle)
    const char *cur_key;                        //  its certificate's public key, NULL: CURVE off
    const char *cur_cert;                       //  its certificate's name (for log lines)
};

//  bb_dispatch_tasks.c
s_task_t *bbd_task_find (bb_dispatch_t *self, const char *id);
s_task_t *bbd_task_find_idem (bb_dispatch_t *self, const char *scope, const char *key);
s_task_t *bbd_task_add (bb_dispatch_t *self, const char *id);
void bbd_index_idem (bb_dispatch_t *self, s_task_t *task);
void bbd_task_free_all (bb_dispatch_t *self);
s_service_t *bbd_service (bb_dispatch_t *self, const char *name, bool create);
void bbd_enqueue (bb_dispatch_t *self, s_task_t *task);
void bbd_dequeue (s_task_t *task);
void bbd_finished_push (bb_dispatch_t *self, s_task_t *task);
void bbd_evict (bb_dispatch_t *self);
const char *bbd_state_name (int state);
int bbd_state_parse (const char *name);
//  Fills the fields of a task.submitted event / checkpoint entry into map.
void bbd_task_record (const s_task_t *task, ufo_value_t *map, bool full);
//  Iterates every task (order not specified).
void bbd_task_each (bb_dispatch_t *self, void (*fn) (bb_dispatch_t *, s_task_t *, void *), void *arg);

//  bb_dispatch.c: output, peers and the state machine (used by bb_dispatch_req.c)
ufo_value_t *bbd_ev_new (bb_dispatch_t *self);
void bbd_ev_emit (bb_dispatch_t *self, const char *type, const char *kind, const char *service, ufo_value_t **body_p);
void bbd_ev_emit_task (bb_dispatch_t *self, const char *type, const s_task_t *t, ufo_value_t **body_p);
void bbd_reply_ok (bb_dispatch_t *self, const char *id, ufo_value_t **body_p);
void bbd_reply_error (bb_dispatch_t *self, const ufo_task_request_t *req, int code, const char *message);
void bbd_reply_msg (bb_dispatch_t *self, const char *type, ufo_value_t **body_p);
void bbd_send (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, const char *type, ufo_value_t **body_p);
s_worker_t *bbd_worker_find (bb_dispatch_t *self, const char *id);
s_client_t *bbd_client_find (bb_dispatch_t *self, const char *id);
s_client_t *bbd_client_touch (bb_dispatch_t *self, const char *id, const char *name, const void *peer, size_t peer_len, bool *known_p);
void bbd_to_client (bb_dispatch_t *self, const char *client, const char *type, ufo_value_t **body_p);
void bbd_stale_add (s_worker_t *w, const char *task);
bool bbd_stale_remove (s_worker_t *w, const char *task);
void bbd_worker_untask (s_worker_t *w, s_task_t *t);
void bbd_common (ufo_value_t *body, const s_task_t *t);
void bbd_finish (bb_dispatch_t *self, s_task_t *t, int state, const char *reason, ufo_value_t **result_p);
void bbd_requeue (bb_dispatch_t *self, s_task_t *t, const char *reason);
void bbd_pump (bb_dispatch_t *self);
void bbd_worker_event (bb_dispatch_t *self, const char *type, s_worker_t *w, const char *reason, ufo_value_t **requeued_p);
void bbd_worker_drop (bb_dispatch_t *self, s_worker_t *w, const char *type, const char *reason);
void bbd_recover (bb_dispatch_t *self);
void bbd_to_worker_input (bb_dispatch_t *self, s_task_t *t, const char *kind, ufo_value_t **body_p);
void bbd_depths (bb_dispatch_t *self, ufo_value_t *body, const char *service);

#endif
