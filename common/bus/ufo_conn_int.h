/*  ufo_conn_int.h - private to ufo_conn.c (the link's handlers: worker and submitter sides,
    the loop source, life cycle) and ufo_conn_call.c (blackboard calls, the blocking helpers,
    board reads with images): the connection's state. */
#ifndef UFO_CONN_INT_H_INCLUDED
#define UFO_CONN_INT_H_INCLUDED

#include "ufo_conn.h"
#include "ufo_task_proto.h"
#include "dispatch_private.h"

#define S_CALL_TIMEOUT_MS 10000
#define S_CALL_ID 24

typedef struct {
    char id [UFO_TASK_ID_MAX + 1];
    int64_t attempt;
    int64_t progress_n;
} conn_running_t;

typedef struct {
    char id [UFO_TASK_ID_MAX + 1];          //  the submitter's id (what the caller holds)
    char broker_id [UFO_TASK_ID_MAX + 1];   //  the broker's (differs after an idempotency match)
    bool accepted;
} conn_open_t;

typedef struct {
    uint64_t id;
    char wire_id [S_CALL_ID];               //  "b<id>"
    char *type;
    ufo_value_t *body;                      //  until sent
    void *frame;                            //  until sent
    size_t frame_len;
    bool sent;
    bool forgotten;                         //  ufo_conn_call_forget: no callback, no log line
    int64_t deadline;                       //  monotonic ms
    ufo_conn_call_fn *fn;
    void *arg;
} conn_call_t;

struct _ufo_conn_t {
    ufo_loop_t *loop;
    ufo_link_t *link;
    int source_id;
    int wait_ms;
    bool news;                              //  a callback ran in this turn's service: end the turn
    ufo_conn_fn *on_event;
    void *on_event_arg;
    ufo_value_t *pending;                   //  events not yet handed to on_event
    char endpoint [512];
    char *server_key, *cert_path;
    char name [UFO_TASK_NAME_MAX + 1];
    char rid [64];
    int ivl_ms, liveness, call_timeout_ms;
    bool was_connected;
    uint64_t heartbeats;
    //  worker side
    bool worker;
    char wid [33];
    char service [UFO_TASK_NAME_MAX + 1];
    char device [UFO_TASK_NAME_MAX + 1];
    bool has_device;
    int capacity;
    conn_running_t *tasks;                     //  delivered, not completed (as the link sees them)
    size_t ntasks, cap_tasks;
    char **running;                         //  delivered to the caller and not completed by it
    size_t nrunning, cap_running;
    //  submitter side
    char cid [33];
    bool client_used;                       //  something was submitted: keep the client alive
    conn_open_t *open;                         //  tasks without a result yet
    size_t nopen, cap_open;
    char **known;                           //  ids submitted through this connection
    size_t nknown, cap_known;
    //  blackboard calls, in the order they were made
    conn_call_t *calls;
    size_t ncalls, cap_calls;
    uint64_t call_counter;
    struct conn_snap_t_ *snaps;                //  ufo_conn_snapshot reads in progress
};

//  A ufo_conn_snapshot read in progress.
typedef struct conn_snap_t_ {
    struct conn_snap_t_ *next;
    ufo_conn_t *conn;
    uint64_t id;                        //  of the snapshot call (what the caller holds)
    bool forgotten;
    ufo_value_t *reply;                 //  the snapshot reply, being filled
    size_t waiting;                     //  blob.get calls out
    uint64_t *gets;                     //  their ids
    size_t ngets;
    int timeout_ms;
    ufo_conn_call_fn *fn;
    void *arg;
} conn_snap_t;

//  ufo_conn_call.c: sends what waits, ends calls whose time is up; ms until the nearest call
//  deadline (-1: none).
int conn_calls_service (ufo_conn_t *self);

//  ufo_conn_call.c: ends every call already sent with an error (the socket is gone).
void conn_calls_fail_sent (ufo_conn_t *self, int code, const char *message);

//  ufo_conn_call.c: the link's on_call handler (replies to 'b' ids).
void conn_on_call (void *owner, const char *id, bool ok, ufo_value_t **body_p, const void *data, size_t len);

//  ufo_conn_call.c: at destroy, after the flush: every call and read still pending ends with
//  UFO_E_CANCELLED; the reads are freed.
void conn_calls_close (ufo_conn_t *self);

//  ufo_conn.c: the link and the calls once, without handing events on; ms until due.
int conn_service_io (ufo_conn_t *self);

//  ufo_conn.c: serves the connection alone for at most max_ms (the blocking helpers).
void conn_serve_once (ufo_conn_t *self, int max_ms);

#endif
