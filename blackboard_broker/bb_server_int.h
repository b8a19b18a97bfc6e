/*  bb_server_int.h - private to the broker's server modules: the server's state and the
    functions they share. bb_server.c: event loop, request handlers, life cycle; bb_out.c:
    the queue of replies and events waiting for durability; bb_durability.c: end of burst,
    sync completions, compaction (snapshots). Not a public header; czmq is not included here. */
#ifndef BB_SERVER_INT_H_INCLUDED
#define BB_SERVER_INT_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_value.h"
#include "ufo_wal.h"
#include "ufo_blob.h"
#include "ufo_bb_proto.h"
#include "bb_store.h"
#include "bb_sync.h"
#include "bb_server.h"
#include "bb_peers.h"

//  One queued outgoing message: [head] [empty delimiter]? data [extra]?
//  head is the peer identity (replies) or the topic (events). Data of up to BB_OUT_INLINE
//  bytes (replies, events of small items) is kept in the entry and copied into libzmq's
//  message when sent, so it costs no allocation of ours; larger buffers are malloc'd and
//  handed to libzmq without copying.
#define BB_OUT_INLINE 512

typedef struct {
    uint64_t ticket;                //  0: ready; else wait until this sync job is done
    bool burst;                     //  ticket not known yet: set when the burst is committed
    bool to_bus;
    bool delim;
    bool inl_used;                  //  data is in inl (data is NULL)
    uint8_t head_len;
    uint8_t head [255];
    char inl [BB_OUT_INLINE];
    char *data;
    size_t len;
    char *extra;                    //  blob.get: the bytes frame
    size_t extra_len;
    char *fail;                     //  sent instead of data if the job fails (blob puts)
    size_t fail_len;
    bb_charge_t *charge;            //  data and extra charged to the peer (bb_peers.h), or NULL
    bb_charge_t *extra_charge;
} bb_out_t;

//  Where a reply goes: the ROUTER identity of the request, and whether it had a delimiter.
typedef struct {
    const uint8_t *id;
    size_t id_len;
    bool delim;
} bb_route_t;

typedef struct {
    uint64_t ticket;
    char hex [65];
} bb_pending_blob_t;

typedef struct {
    char hex [65];
    int64_t expires_ms;             //  wall-clock ms
} bb_expiry_t;

struct _bb_server_t {
    bb_server_config_t cfg;
    char *data_dir;
    int lock_fd;
    struct _zloop_t *loop;
    struct _zsock_t *router;        //  czmq sockets (only bb_server.c and bb_out.c include czmq)
    struct _zsock_t *xpub;
    bb_store_t *store;
    ufo_wal_t *wal;
    ufo_blob_store_t *blobs;
    bb_sync_t *sync;
    ufo_bb_limits_t limits;

    bb_out_t *out;                   //  queue of replies and events waiting for durability
    size_t out_head, out_tail, out_cap;
    uint64_t done_ticket;           //  highest ticket completed
    uint64_t replies_sent;          //  replies handed to libzmq so far
    uint64_t refill_target;         //  a log job is held until this many requests came (0: none)
    uint64_t refill_seen;
    bool burst_wrote;               //  the current burst appended log records
    bool unsynced;                  //  everysec: log bytes written since the last fdatasync asked
    uint64_t sync_ticks;            //  everysec: ticks of the once-a-second timer (stats sync_ticks)
    bb_pending_blob_t *pblobs;       //  blobs being committed
    size_t npblobs, cap_pblobs;
    bb_expiry_t *expiries;          //  blobs put with ttl_ms (bb_blobs.c)
    size_t nexpiries, cap_expiries;
    uint64_t blobs_expired, blobs_kept;

    pid_t snap_pid;                 //  forked snapshot writer, 0 if none
    uint64_t snap_seq, snap_segment;
    uint64_t records_since_snap;
    uint64_t log_items_since_snap;  //  log growth since then: the items of each add, 1 for any
                                    //  other record (snapshot_growth compares it with the next)
    uint64_t items_at_snap;         //  items held when the last snapshot was taken (or loaded)
    uint64_t snapshots;             //  snapshot writers started
    bool disk_full;                 //  the log cannot reserve space: client writes get unavailable
    char full_reason [256];
    uint64_t writes_refused;

    //  statistics
    uint64_t requests, errors, writes, items_added, blob_puts, blob_gets;
    int64_t subscribers;
    uint64_t rate_items, rate_mark_ms;
    double write_rate;
    ufo_buf_t scratch;
    int64_t now_us;                 //  time of the current burst (envelope time stamps)
    char id_prefix [33];            //  random, drawn at start-up: event ids are prefix + seq

    bb_peers_t *peers;              //  bytes of replies queued per peer (bb_peers.h)
    bb_dispatch_t *dispatch;        //  task dispatch (bb_dispatch.h)
    const bb_route_t *cur_route;     //  route of the dispatch request being handled
    uint64_t cp_ticket;             //  sync job that makes the last dispatch checkpoint durable

    //  A failed log write or fdatasync (bb_durability.c): until the repair succeeds, client
    //  writes are refused and what depends on records not known durable waits in `held`.
    bool log_failed;
    bool repairing;                 //  a repair job (ufo_wal_repair) is on the sync thread
    uint64_t repair_ticket;
    uint64_t repairs_failed;        //  attempts that failed in this episode
    bb_out_t *held;                 //  replies and events held until the repair
    size_t nheld, cap_held;
    struct bb_log_sync_s {          //  log fdatasync jobs in flight: what each one covers
        uint64_t ticket, segment, end;
    } *log_syncs;
    size_t nlog_syncs, cap_log_syncs;
};

//  Reads pending (un)subscriptions from the bus socket (bb_server.c).
void bb_server_subscriptions (bb_server_t *self);

//  --- bb_out.c: output queue --------------------------------------------------------

//  Appends an empty queued message (to the bus or to a peer) and returns it; ticket: the sync
//  job it waits for (0: none); burst: its ticket is given when the burst is committed.
bb_out_t *bb_out_new (bb_server_t *self, bool to_bus, uint64_t ticket, bool burst);

//  A malloc'd copy of data[0..len) (never NULL).
char *bb_out_copy (const void *data, size_t len);

//  Sets the data of a queued message to a copy of data[0..len) (inline when it fits).
void bb_out_set_data (bb_out_t *o, const void *data, size_t len);

//  Charges a queued reply's malloc'd buffers (data, extra) to its peer (bb_peers.h).
void bb_out_charge (bb_server_t *self, bb_out_t *o);

//  Frees the buffers of a queued message that will not be sent.
void bb_out_release (bb_out_t *o);

//  Sends queued messages whose durability job is done, in order. failed_ticket: a job that
//  failed (its alternative message is sent instead), or 0.
void bb_out_flush (bb_server_t *self, uint64_t failed_ticket);

//  Moves the queued messages that have not gone out (burst_only: those of the current
//  burst) to the held queue, in order: they wait for the log's repair (bb_durability.c).
void bb_out_hold (bb_server_t *self, bool burst_only);

//  Sends (send) or frees every held message, in order, and empties the held queue.
void bb_out_release_held (bb_server_t *self, bool send);

//  Queues a reply: the request's route, then the envelope in buf (copied). Returns it.
bb_out_t *bb_out_reply (bb_server_t *self, const bb_route_t *route, ufo_buf_t *buf, uint64_t ticket,
                        bool burst);

//  Queues an error reply (and counts and logs it); what: the request type, or NULL.
void bb_out_reply_error (bb_server_t *self, const bb_route_t *route, const char *id, const char *what,
                         int code, const char *message);

//  Queues an ok reply with *body_p (ownership taken).
void bb_out_reply_ok (bb_server_t *self, const bb_route_t *route, const char *id, ufo_value_t **body_p);

//  --- bb_durability.c: durability pipeline ------------------------------------------

#define BB_RESERVE_CHUNK (1u << 20)     //  log space reserved at a time (ufo_wal_reserve)
#define BB_RESERVE_FLOOR (1u << 20)     //  kept free by client writes, for dispatch and checkpoints

//  Is there room in the log for the records of one request of len bytes? floor: a client
//  write (board change, blob, task submission), which must also leave BB_RESERVE_FLOOR free
//  and is refused at once while the disk is full. When there is no room: enters the
//  disk-full state (logged once), fills why[size] and returns false.
bool bb_durability_room (bb_server_t *self, size_t len, bool floor, char *why, size_t size);

//  Enters the disk-full state (logs once): client writes are refused with unavailable until
//  bb_durability_space_check finds space again.
void bb_durability_disk_full (bb_server_t *self, const char *reason);

//  The once-a-second timer while the disk is full: takes writes again when space is back;
//  after a log failure, starts a repair of the log when none is running.
void bb_durability_space_check (bb_server_t *self);


//  Ends a burst: writes the log buffer, gives every queued output of the burst a ticket,
//  sends what may go, and starts a snapshot when one is due.
void bb_durability_commit_burst (bb_server_t *self);
//  True when a compacting snapshot is due (snapshot_every, snapshot_growth; bb_server.h).
bool bb_durability_snapshot_due (bb_server_t *self);

//  Reads the sync thread's completions and sends what waited for them; a failed fdatasync
//  of the log enters the log-failed state, a successful repair leaves it. Returns 0.
int bb_durability_on_sync (bb_server_t *self);

//  The everysec timer: asks for an fdatasync of the log if anything was written since the last.
void bb_durability_everysec (bb_server_t *self);

//  Asks the sync thread for an fdatasync of the log and remembers what it covers (the
//  segment and its size now). Returns the ticket.
uint64_t bb_durability_sync_log (bb_server_t *self);

//  Enters the log-failed state after a failed write or fdatasync of the log (logs once):
//  client writes get unavailable, every reply and event not yet sent is held, and the
//  once-a-second timer (bb_durability_space_check) starts repairs until one succeeds.
void bb_durability_log_failed (bb_server_t *self, const char *message);

//  Collects a finished snapshot writer (wait: block until it is done) and compacts the log.
void bb_durability_snapshot_reap (bb_server_t *self, bool wait);

//  --- bb_blobs.c: blob.put and the expiry of blobs put with ttl_ms ---

//  Loads the expiries kept beside the blobs (start-up, after the boards are loaded).
void bb_blobs_load (bb_server_t *self);

//  Handles a decoded blob.put (stores the bytes, sets, extends or clears the expiry; replies).
void bb_blobs_put (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req);

//  Removes the blobs whose expiry has passed (at most 256 a call), except those an item of a
//  board refers to, which become permanent. Called once a second.
void bb_blobs_expire (bb_server_t *self);

//  Adds blobs_expiring, blobs_expired and blobs_kept to a stats map.
void bb_blobs_stats (bb_server_t *self, ufo_value_t *s);

#endif
