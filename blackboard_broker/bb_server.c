/*  bb_server.c - the broker's event loop, request handlers and life cycle. The output queue
    is in bb_out.c, the durability pipeline in bb_durability.c (bb_server_int.h). See
    bb_server.h for the design. */
#include "ufo_prelude.h"
#include "ufo_msgpack.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_hex.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_wal.h"
#include "ufo_blob.h"
#include "ufo_bb_proto.h"
#include "bb_store.h"
#include "bb_sync.h"
#include "bb_server_int.h"
#include "bb_security.h"
#include "ufo_task_proto.h"
#include <czmq.h>
#include <sys/file.h>

#define BB_HOLD_US 300              //  longest wait of a log job for pipelined writers (bb_sync.h)
#define BURST_MAX 1024              //  requests handled before the log is written
//  --- Changes -------------------------------------------------------------------

//  Logs and queues one change event; buf holds the envelope.
static void
s_emit_change (bb_server_t *self, const char *board, int memory, ufo_buf_t *buf, size_t items)
{
    ufo_wal_append (self->wal, buf->data, buf->len);
    self->burst_wrote = true;
    self->records_since_snap++;
    self->log_items_since_snap += items ? items : 1;
    bb_out_t *o = bb_out_new (self, true, 0, true);
    char topic [UFO_BB_BOARD_MAX + 32];
    o->head_len = (uint8_t) ufo_bb_topic (topic, sizeof topic, board, memory);
    memcpy (o->head, topic, o->head_len);
    bb_out_set_data (o, buf->data, buf->len);
}

static void
s_event_head (bb_server_t *self, ufo_buf_t *buf, const char *type, const char *board, int memory,
              uint64_t seq, uint64_t last, uint64_t prev, bool with_items)
{
    ufo_buf_reset (buf);
    //  Event ids: a random prefix drawn at start-up, then the sequence number.
    char id [33];
    memcpy (id, self->id_prefix, 16);
    ufo_hex_u64 (seq, id + 16);
    id [32] = 0;
    ufo_bb_envelope_head_at (buf, type, id, "ufo-broker", self->now_us);
    ufo_mp_put_map (buf, with_items ? 6 : 5);
    UFO_MP_PUT_LIT (buf, "board");
    ufo_mp_put_cstr (buf, board);
    UFO_MP_PUT_LIT (buf, "memory");
    if (memory >= 0)
        ufo_mp_put_cstr (buf, ufo_bb_memory_name (memory));
    else
        ufo_mp_put_nil (buf);
    UFO_MP_PUT_LIT (buf, "seq");
    ufo_mp_put_uint (buf, seq);
    UFO_MP_PUT_LIT (buf, "last");
    ufo_mp_put_uint (buf, last);
    UFO_MP_PUT_LIT (buf, "prev");
    ufo_mp_put_uint (buf, prev);
}

static bool
s_blob_known (bb_server_t *self, const char *hex)
{
    for (size_t i = 0; i < self->npblobs; i++)
        if (strcmp (self->pblobs [i].hex, hex) == 0)
            return true;
    return ufo_blob_exists (self->blobs, hex);
}

static void
s_handle_add (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req)
{
    size_t n = req->nitems;
    bb_board_t *board = bb_store_board (self->store, req->board);
    size_t have = board ? bb_board_items (board) : 0;
    if (have + n > self->cfg.max_items_per_board) {
        char message [256];
        snprintf (message, sizeof message, "board '%s' holds %zu items; adding %zu exceeds max_items_per_board %zu",
                  req->board, have, n, self->cfg.max_items_per_board);
        bb_out_reply_error (self, route, req->id, req->type_name, UFO_E_TOO_LARGE, message);
        return;
    }
    for (size_t i = 0; req->items && i < n; i++) {     //  no tree: no blob reference
        const char *blob = ufo_value_map_str (ufo_value_list_at (req->items, i), "blob", NULL);
        if (blob && !s_blob_known (self, blob)) {
            char message [256];
            snprintf (message, sizeof message, "item %zu refers to blob %s, which the store does not hold", i, blob);
            bb_out_reply_error (self, route, req->id, req->type_name, UFO_E_NOT_FOUND, message);
            return;
        }
    }
    uint64_t seq = bb_store_seq (self->store) + 1, last = seq + n - 1;
    uint64_t prev = board ? bb_board_last (board) : 0;
    ufo_buf_t *buf = &self->scratch;
    s_event_head (self, buf, UFO_BB_EV_ADDED, req->board, req->memory, seq, last, prev, true);
    UFO_MP_PUT_LIT (buf, "items");
    ufo_mp_put_array (buf, (uint32_t) n);
    ufo_buf_append (buf, req->items_data, req->items_len);  //  as sent, or encoded once by the decoder
    s_emit_change (self, req->board, req->memory, buf, n);
    bb_store_add (self->store, req->board, req->memory, req->items_data, req->item_ends, n, seq);
    self->writes++;
    self->items_added += n;
    //  {"seq": seq, "last": last}, written directly (the hot path)
    ufo_buf_reset (buf);
    ufo_bb_envelope_head_at (buf, "ok", req->id, "ufo-broker", self->now_us);
    ufo_mp_put_map (buf, 2);
    UFO_MP_PUT_LIT (buf, "seq");
    ufo_mp_put_uint (buf, seq);
    UFO_MP_PUT_LIT (buf, "last");
    ufo_mp_put_uint (buf, last);
    bb_out_reply (self, route, buf, 0, true);
}

static void
s_handle_clear_delete (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req)
{
    bb_board_t *board = bb_store_board (self->store, req->board);
    if (!board) {
        char message [200];
        snprintf (message, sizeof message, "no board named '%s'", req->board);
        bb_out_reply_error (self, route, req->id, req->type_name, UFO_E_NOT_FOUND, message);
        return;
    }
    bool del = req->type == UFO_BB_REQ_DELETE;
    int memory = del ? UFO_BB_MEMORY_ALL : req->memory;
    uint64_t seq = bb_store_seq (self->store) + 1;
    s_event_head (self, &self->scratch, del ? UFO_BB_EV_DELETED : UFO_BB_EV_CLEARED, req->board, memory,
                  seq, seq, bb_board_last (board), false);
    s_emit_change (self, req->board, memory, &self->scratch, 0);
    if (del)
        bb_store_delete (self->store, req->board, seq);
    else
        bb_store_clear (self->store, req->board, memory, seq);
    self->writes++;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "seq", (int64_t) seq);
    ufo_value_map_set_int (body, "last", (int64_t) seq);
    bb_out_reply_ok (self, route, req->id, &body);
}

static void
s_handle_snapshot (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req)
{
    ufo_buf_t *buf = &self->scratch;
    ufo_buf_reset (buf);
    ufo_bb_envelope_head_at (buf, "ok", req->id, "ufo-broker", self->now_us);
    bb_store_encode_snapshot (self->store, req->board, req->memory, req->after, buf);
    bb_out_reply (self, route, buf, 0, true);
}

static void
s_handle_blob_get (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req)
{
    char *data;
    size_t len;
    ufo_error_t err;
    if (ufo_blob_get (self->blobs, req->blob, &data, &len, &err) != 0) {
        bb_out_reply_error (self, route, req->id, req->type_name, err.code, err.message);
        return;
    }
    self->blob_gets++;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "blob", req->blob);
    ufo_value_map_set_int (body, "size", (int64_t) len);
    ufo_buf_reset (&self->scratch);
    ufo_bb_encode_ok (&self->scratch, req->id, &body);
    bb_out_t *o = bb_out_reply (self, route, &self->scratch, 0, true);
    o->extra = data;                        //  handed over: freed by libzmq after sending
    o->extra_len = len;
    bb_out_charge (self, o);
}

static ufo_value_t *
s_stats (bb_server_t *self)
{
    uint64_t syncs, total_us, last_us;
    bb_sync_stats (self->sync, &syncs, &total_us, &last_us);
    ufo_value_t *s = ufo_value_new_map ();
    ufo_value_map_set_int (s, "boards", (int64_t) bb_store_boards (self->store));
    ufo_value_map_set_int (s, "items", (int64_t) bb_store_items (self->store));
    ufo_value_map_set_int (s, "seq", (int64_t) bb_store_seq (self->store));
    ufo_value_map_set_int (s, "writes", (int64_t) self->writes);
    ufo_value_map_set_int (s, "items_added", (int64_t) self->items_added);
    ufo_value_map_set_float (s, "write_rate", self->write_rate);
    ufo_value_map_set_int (s, "log_bytes", (int64_t) ufo_wal_size (self->wal));
    ufo_value_map_set_int (s, "log_segment", (int64_t) ufo_wal_segment (self->wal));
    ufo_value_map_set_int (s, "snapshots", (int64_t) self->snapshots);
    ufo_value_map_set_bool (s, "snapshot_running", self->snap_pid != 0);
    ufo_value_map_set_int (s, "subscribers", self->subscribers);
    ufo_value_map_set_int (s, "requests", (int64_t) self->requests);
    ufo_value_map_set_int (s, "errors", (int64_t) self->errors);
    ufo_value_map_set_bool (s, "disk_full", self->disk_full);
    ufo_value_map_set_bool (s, "log_failed", self->log_failed);
    ufo_value_map_set_int (s, "held", (int64_t) self->nheld);
    ufo_value_map_set_int (s, "writes_refused", (int64_t) self->writes_refused);
    ufo_value_map_set_int (s, "reply_bytes_queued", (int64_t) bb_peers_total (self->peers));
    ufo_value_map_set_int (s, "busy_refusals", (int64_t) bb_peers_refused (self->peers));
    ufo_value_map_set_int (s, "fsyncs", (int64_t) syncs);
    ufo_value_map_set_int (s, "fsync_avg_us", syncs ? (int64_t) (total_us / syncs) : 0);
    ufo_value_map_set_int (s, "sync_ticks", (int64_t) self->sync_ticks);
    ufo_value_map_set_int (s, "blob_puts", (int64_t) self->blob_puts);
    ufo_value_map_set_int (s, "blob_gets", (int64_t) self->blob_gets);
    bb_blobs_stats (self, s);
    ufo_value_map_set_str (s, "fsync", self->cfg.fsync == BB_FSYNC_ALWAYS ? "always"
                           : self->cfg.fsync == BB_FSYNC_EVERYSEC ? "everysec" : "no");
    bb_dispatch_stats (self->dispatch, s);
    //  every rejected request, blackboard or dispatch (dispatch_errors: the dispatch share)
    ufo_value_map_set_int (s, "errors", (int64_t) self->errors + ufo_value_map_int (s, "dispatch_errors", 0));
    return s;
}

//  Log space for a dispatch request (bb_durability_room): task.submit is a client write;
//  requests that write no record need none. False after an unavailable reply.
static bool
s_dispatch_room (bb_server_t *self, const bb_route_t *route, const void *frame, size_t len)
{
    ufo_msg_head_t head;
    size_t off;
    ufo_error_t err;
    ufo_msg_limits_t limits = { self->cfg.max_message_bytes, 64 };
    if (ufo_msg_decode_head (frame, len, &limits, &head, &off, &err) != 0)
        return true;                    //  the dispatcher answers what is wrong with it
    static const char *const s_no_record [] = {
        "task.fetch", "dispatch.state", "client.hello", "client.heartbeat", "task.input", NULL
    };
    for (const char *const *t = s_no_record; *t; t++)
        if (strcmp (head.type, *t) == 0)
            return true;
    char why [400];
    if (bb_durability_room (self, len, strcmp (head.type, "task.submit") == 0, why, sizeof why))
        return true;
    bb_out_reply_error (self, route, head.id, head.type, UFO_E_UNAVAILABLE, why);
    return false;
}

#define PARTS_MAX 6                 //  frames of one request kept (identity, delimiter, 2 + spare)

//  With CURVE on: may the peer that sent part (its certificate's role and key, from ZAP)
//  send this request? If not, an error reply "denied" (and its warn line).
static bool
s_allowed (bb_server_t *self, const bb_route_t *route, zmq_msg_t *part, const void *frame, size_t len)
{
    const char *role = zmq_msg_gets (part, "role");
    const char *key = zmq_msg_gets (part, "User-Id");
    char type [65], id [65], why [256];
    if (bb_security_allow (self->cfg.security, role, key, frame, len, type, id, why, sizeof why))
        return true;
    //  the log line names the certificate, so the operator knows whose request it was
    const char *name = zmq_msg_gets (part, "name");
    size_t used = strlen (why);
    snprintf (why + used, sizeof why - used, " (certificate \"%s\")", name ? name : "?");
    bb_out_reply_error (self, route, id, type, UFO_E_DENIED, why);
    return false;
}

//  Handles one request message: parts[0..nparts) of its `total` frames (routing frames +
//  request frames; frames beyond PARTS_MAX were dropped). Never fails.
static void
s_handle (bb_server_t *self, zmq_msg_t *parts, size_t nparts, size_t total)
{
    self->requests++;
    //  ROUTER prepends the peer identity; a REQ peer adds an empty delimiter after it.
    bb_route_t route_data = { zmq_msg_data (&parts [0]), zmq_msg_size (&parts [0]), false };
    const bb_route_t *route = &route_data;
    size_t first = 1;
    if (nparts > 1 && zmq_msg_size (&parts [1]) == 0) {
        route_data.delim = true;
        first = 2;
    }
    if (route_data.id_len > 255)
        return;                     //  not a libzmq identity: nowhere to reply
    size_t nframes = total - first;
    if (bb_peers_over (self->peers, route->id, route->id_len)) {
        //  It does not read its replies: no more work for it until it does (bb_peers.h).
        char id [65] = "";
        if (nparts > first)
            ufo_bb_peek_id (zmq_msg_data (&parts [first]), zmq_msg_size (&parts [first]), id);
        char message [160];
        snprintf (message, sizeof message, "%zu bytes of replies to this peer are not read yet (limit %zu): "
                  "read them, then retry", bb_peers_queued (self->peers, route->id, route->id_len),
                  self->cfg.max_peer_output_bytes);
        self->errors++;
        ufo_buf_reset (&self->scratch);
        ufo_bb_encode_error (&self->scratch, id, UFO_E_BUSY, message);
        bb_out_reply (self, route, &self->scratch, 0, true);
        return;
    }
    const void *frames [PARTS_MAX];
    size_t sizes [PARTS_MAX];
    for (size_t i = first; i < nparts; i++) {
        frames [i - first] = zmq_msg_data (&parts [i]);
        sizes [i - first] = zmq_msg_size (&parts [i]);
    }
    if (self->cfg.security && !s_allowed (self, route, &parts [nparts - 1], nparts > first ? frames [0] : NULL,
                                          nparts > first ? sizes [0] : 0))
        return;
    if (nframes == 1 && nparts > first && ufo_task_proto_claims (frames [0], sizes [0])) {
        if (!s_dispatch_room (self, route, frames [0], sizes [0]))
            return;
        self->cur_route = route;        //  task dispatch (docs/PROTOCOL.md section 3)
        zmq_msg_t *last = &parts [nparts - 1];
        const char *key = self->cfg.security ? zmq_msg_gets (last, "User-Id") : NULL;
        const char *cert = self->cfg.security ? zmq_msg_gets (last, "name") : NULL;
        bb_dispatch_handle (self->dispatch, route->id, route->id_len, key, cert, frames [0], sizes [0]);
        self->cur_route = NULL;
        return;
    }
    ufo_bb_request_t req;
    ufo_bb_request_init (&req);
    ufo_error_t err;
    ufo_error_clear (&err);
    int rc;
    if (nframes > 2)
        rc = ufo_error_set (&err, UFO_E_INVALID, "request has %zu frames after routing; at most 2 are allowed", nframes);
    else
        rc = ufo_bb_request_decode (&req, frames, sizes, nframes, &self->limits, &err);
    char why [400];
    bool write = req.type == UFO_BB_REQ_ADD || req.type == UFO_BB_REQ_CLEAR || req.type == UFO_BB_REQ_DELETE
              || req.type == UFO_BB_REQ_BLOB_PUT;
    char peeked [65];
    if (rc != 0)
        bb_out_reply_error (self, route, *req.id || nparts <= first || !ufo_bb_peek_id (frames [0], sizes [0], peeked)
                            ? req.id : peeked, req.type_name, err.code, err.message);
    else
    if (write && !bb_durability_room (self, req.type == UFO_BB_REQ_BLOB_PUT ? 0 : sizes [0], true, why, sizeof why))
        bb_out_reply_error (self, route, req.id, req.type_name, UFO_E_UNAVAILABLE, why);
    else
    switch (req.type) {
        case UFO_BB_REQ_ADD:
            s_handle_add (self, route, &req);
            break;
        case UFO_BB_REQ_CLEAR:
        case UFO_BB_REQ_DELETE:
            s_handle_clear_delete (self, route, &req);
            break;
        case UFO_BB_REQ_SNAPSHOT:
            s_handle_snapshot (self, route, &req);
            break;
        case UFO_BB_REQ_LIST: {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_t *boards = bb_store_list (self->store);
            ufo_value_map_set (body, "boards", &boards);
            ufo_value_map_set_int (body, "seq", (int64_t) bb_store_seq (self->store));
            bb_out_reply_ok (self, route, req.id, &body);
            break;
        }
        case UFO_BB_REQ_BLOB_PUT:
            bb_blobs_put (self, route, &req);
            break;
        case UFO_BB_REQ_BLOB_GET:
            s_handle_blob_get (self, route, &req);
            break;
        case UFO_BB_REQ_STATS: {
            ufo_value_t *body = s_stats (self);
            bb_out_reply_ok (self, route, req.id, &body);
            break;
        }
        case UFO_BB_REQ_PING: {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_bool (body, "pong", true);
            ufo_value_map_set_int (body, "seq", (int64_t) bb_store_seq (self->store));
            ufo_value_map_set_str (body, "version", UFO_VERSION);
            bb_out_reply_ok (self, route, req.id, &body);
            break;
        }
        default:
            bb_out_reply_error (self, route, req.id, req.type_name, UFO_E_INTERNAL, "unhandled request");
    }
    ufo_bb_request_reset (&req);
}

//  --- Loop callbacks ------------------------------------------------------------

static int
s_on_request (zloop_t *loop, zsock_t *sock, void *arg)
{
    UFO_UNUSED (loop);
    bb_server_t *self = (bb_server_t *) arg;
    void *handle = zsock_resolve (sock);
    self->now_us = ufo_time_now_us ();      //  the time stamp of this burst's messages
    zmq_msg_t parts [PARTS_MAX];
    for (int i = 0; i < BURST_MAX; i++) {
        zmq_msg_init (&parts [0]);
        if (zmq_msg_recv (&parts [0], handle, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&parts [0]);
            break;
        }
        size_t nparts = 1, total = 1;
        bool more = zmq_msg_more (&parts [0]);
        while (more) {
            zmq_msg_t extra, *part = nparts < PARTS_MAX ? &parts [nparts] : &extra;
            zmq_msg_init (part);
            if (zmq_msg_recv (part, handle, 0) < 0) {
                zmq_msg_close (part);
                break;
            }
            more = zmq_msg_more (part);
            total++;
            if (part == &extra)
                zmq_msg_close (&extra);
            else
                nparts++;
        }
        s_handle (self, parts, nparts, total);
        for (size_t k = 0; k < nparts; k++)
            zmq_msg_close (&parts [k]);
        self->refill_seen++;
    }
    bb_durability_commit_burst (self);
    if (self->refill_target && self->refill_seen >= self->refill_target) {
        self->refill_target = 0;            //  they came (and joined the held job): start it
        bb_sync_go (self->sync);
    }
    return 0;
}

//  Reads the (un)subscriptions that reached the bus socket. Asking for its events also makes
//  libzmq apply new subscriptions, so this runs before events are sent (bb_out_flush) and on
//  the housekeeping timer; the socket is not in the loop's poll set, which saves two poll(2)
//  calls per loop turn (libzmq checks every polled socket's mailbox before and after).
void
bb_server_subscriptions (bb_server_t *self)
{
    void *handle = zsock_resolve (self->xpub);
    if (!(zsock_events (self->xpub) & ZMQ_POLLIN))
        return;
    uint8_t data [300];
    int n;
    while ((n = zmq_recv (handle, data, sizeof data, ZMQ_DONTWAIT)) >= 0)
        if (n > 0)
            self->subscribers += data [0] == 1 ? 1 : -1;
}

static int
s_on_sync (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (item);
    return bb_durability_on_sync ((bb_server_t *) arg);
}

static int
s_on_sighup (zloop_t *loop, zmq_pollitem_t *item, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (item);
    bb_security_on_signal (((bb_server_t *) arg)->cfg.security);
    return 0;
}

static int
s_on_everysec (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_durability_everysec ((bb_server_t *) arg);
    return 0;
}

static int
s_on_space (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_durability_space_check ((bb_server_t *) arg);
    return 0;
}

static int
s_on_blob_expiry (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_blobs_expire ((bb_server_t *) arg);
    return 0;
}

static int
s_on_housekeeping (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_server_t *self = (bb_server_t *) arg;
    bb_durability_snapshot_reap (self, false);
    bb_server_subscriptions (self);
    bb_peers_sweep (self->peers);
    return 0;
}

static int
s_on_stats (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_server_t *self = (bb_server_t *) arg;
    uint64_t now = (uint64_t) ufo_time_mono_ms ();
    if (now > self->rate_mark_ms)
        self->write_rate = (double) (self->items_added - self->rate_items) * 1000.0
                         / (double) (now - self->rate_mark_ms);
    self->rate_items = self->items_added;
    self->rate_mark_ms = now;
    ufo_value_t *stats = s_stats (self);
    ufo_buf_t buf = { 0 };
    ufo_msg_t *msg = ufo_msg_new (UFO_BB_EV_STATS);
    ufo_msg_set_sender (msg, "ufo-broker");
    ufo_msg_set_body (msg, &stats);
    ufo_msg_encode (msg, &buf);
    ufo_msg_destroy (&msg);
    //  Stats carry no sequence number and need no durability, but must not overtake
    //  queued events (a subscriber reading "seq" would see it ahead of the events).
    bb_out_t *o = bb_out_new (self, true, self->cfg.fsync == BB_FSYNC_ALWAYS ? bb_sync_issued (self->sync) : 0,
                            false);
    o->head_len = (uint8_t) strlen (UFO_BB_TOPIC_STATS);
    memcpy (o->head, UFO_BB_TOPIC_STATS, o->head_len);
    o->data = ufo_buf_detach (&buf, &o->len);
    bb_out_flush (self, 0);
    ufo_info ("stats: boards=%zu items=%" PRIu64 " seq=%" PRIu64 " write_rate=%.1f/s log=%" PRIu64
              "B subscribers=%" PRId64 " requests=%" PRIu64 " errors=%" PRIu64,
              bb_store_boards (self->store), bb_store_items (self->store), bb_store_seq (self->store),
              self->write_rate, ufo_wal_size (self->wal), self->subscribers, self->requests, self->errors);
    return 0;
}

//  --- Dispatch glue: its replies, messages, events and records join the same queue ------

static uint64_t
s_dispatch_next_seq (void *arg)
{
    bb_server_t *self = (bb_server_t *) arg;
    uint64_t seq = bb_store_seq (self->store) + 1;
    bb_store_advance (self->store, seq);
    return seq;
}

static uint64_t
s_dispatch_seq (void *arg)
{
    return bb_store_seq (((bb_server_t *) arg)->store);
}

static void
s_dispatch_log (void *arg, const void *data, size_t len)
{
    bb_server_t *self = (bb_server_t *) arg;
    ufo_wal_append (self->wal, data, len);
    self->burst_wrote = true;
    self->records_since_snap++;
    self->log_items_since_snap++;
}

static void
s_dispatch_out (bb_server_t *self, bool to_bus, const void *head, size_t head_len, bool delim,
                const void *data, size_t len)
{
    bb_out_t *o = bb_out_new (self, to_bus, 0, true);
    o->head_len = (uint8_t) (head_len > 255 ? 255 : head_len);
    memcpy (o->head, head, o->head_len);
    o->delim = delim;
    bb_out_set_data (o, data, len);
    bb_out_charge (self, o);
}

static void
s_dispatch_reply (void *arg, const void *data, size_t len)
{
    bb_server_t *self = (bb_server_t *) arg;
    if (self->cur_route)
        s_dispatch_out (self, false, self->cur_route->id, self->cur_route->id_len,
                        self->cur_route->delim, data, len);
}

static void
s_dispatch_send (void *arg, const void *peer, size_t peer_len, const void *data, size_t len)
{
    //  At once, not after the burst's fsync: an assignment that a crash takes back is
    //  requeued at restart and its result discarded (completion stays exactly once).
    bb_server_t *self = (bb_server_t *) arg;
    void *router = self->router ? zsock_resolve (self->router) : NULL;
    if (!router || zmq_send (router, peer, peer_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return;
    zmq_send (router, data, len, ZMQ_DONTWAIT);
}

static void
s_dispatch_publish (void *arg, const char *topic, const void *data, size_t len)
{
    s_dispatch_out ((bb_server_t *) arg, true, topic, strlen (topic), false, data, len);
}

static int
s_on_dispatch_tick (zloop_t *loop, int timer_id, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (timer_id);
    bb_server_t *self = (bb_server_t *) arg;
    char why [400];
    if (bb_durability_room (self, 0, false, why, sizeof why))      //  its records use the floor
        bb_dispatch_tick (self->dispatch);
    bb_durability_commit_burst (self);
    return 0;
}

//  --- Life cycle ------------------------------------------------------------------

static int
s_replay (void *arg, uint64_t segment, const void *payload, size_t len, ufo_error_t *err)
{
    UFO_UNUSED (segment);
    bb_server_t *self = (bb_server_t *) arg;
    if (ufo_task_proto_claims (payload, len)) {
        uint64_t seq;
        if (bb_dispatch_replay (self->dispatch, payload, len, &seq, err) != 0)
            return -1;
        if (seq > bb_store_seq (self->store))
            bb_store_advance (self->store, seq);
        self->log_items_since_snap++;
        return 0;
    }
    //  counted as when it was written: the items an add brought, one for any other change
    uint64_t before = bb_store_items (self->store);
    if (bb_store_apply_record (self->store, payload, len, err) != 0)
        return -1;
    uint64_t after = bb_store_items (self->store);
    self->log_items_since_snap += after > before ? after - before : 1;
    return 0;
}

bb_server_t *
bb_server_new (const bb_server_config_t *config, ufo_error_t *err)
{
    bb_server_t *self = ufo_calloc (1, sizeof *self);
    self->cfg = *config;
    self->lock_fd = -1;
    self->data_dir = ufo_strdup (config->data_dir);
    self->cfg.data_dir = self->data_dir;
    self->limits.max_message_bytes = config->max_message_bytes;
    self->limits.max_item_bytes = config->max_item_bytes;
    self->limits.max_blob_bytes = config->max_blob_bytes;
    self->limits.max_batch_items = config->max_items_per_board;
    if (self->cfg.snapshot_every == 0)
        self->cfg.snapshot_every = 10000;
    self->store = bb_store_new ();
    if (self->cfg.max_peer_output_bytes == 0)
        self->cfg.max_peer_output_bytes = 64u << 20;
    self->peers = bb_peers_new (self->cfg.max_peer_output_bytes);
    self->now_us = ufo_time_now_us ();
    bb_dispatch_host_t host = { self, s_dispatch_next_seq, s_dispatch_seq, s_dispatch_log,
                                s_dispatch_reply, s_dispatch_send, s_dispatch_publish };
    self->dispatch = bb_dispatch_new (&config->dispatch, &host);
    ufo_msg_new_id (self->id_prefix);
    char path [PATH_MAX];
    if (mkdir (self->data_dir, 0755) != 0 && errno != EEXIST) {
        ufo_error_set (err, UFO_E_IO, "cannot create data directory %s: %s", self->data_dir, strerror (errno));
        goto fail;
    }
    if (access (self->data_dir, W_OK) != 0) {
        ufo_error_set (err, UFO_E_IO, "data directory %s is %s (%s)", self->data_dir,
                       errno == EROFS ? "on a read-only file system" : "not writable", strerror (errno));
        goto fail;
    }
    snprintf (path, sizeof path, "%s/LOCK", self->data_dir);
    self->lock_fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (self->lock_fd < 0) {
        ufo_error_set (err, UFO_E_IO, "data directory %s: cannot open %s: %s%s", self->data_dir, path,
                       strerror (errno), errno == EROFS ? " (the directory is read-only)"
                       : errno == EACCES ? " (the directory is not writable)" : "");
        goto fail;
    }
    //  A snapshot writer of a broker that was just killed may hold the lock for a moment.
    int locked = -1;
    for (int i = 0; self->lock_fd >= 0 && i < 300 && (locked = flock (self->lock_fd, LOCK_EX | LOCK_NB)) != 0; i++)
        usleep (10000);
    if (self->lock_fd < 0 || locked != 0) {
        ufo_error_set (err, UFO_E_CONFLICT, "data directory %s is in use by another broker (%s)",
                       self->data_dir, strerror (errno));
        goto fail;
    }
    if (self->cfg.security && bb_security_open (self->cfg.security, self->data_dir, err) != 0)
        goto fail;
    int64_t start_ms = ufo_time_mono_ms ();
    uint64_t segment;
    if (bb_store_load_snapshot (self->store, self->data_dir, &segment, err) != 0)
        goto fail;
    self->items_at_snap = bb_store_items (self->store);
    snprintf (path, sizeof path, "%s/log", self->data_dir);
    ufo_wal_open_info_t info;
    self->wal = ufo_wal_open (path, segment, config->repair, s_replay, self, &info, err);
    if (!self->wal)
        goto fail;
    ufo_wal_keep_unsynced (self->wal, self->cfg.fsync != BB_FSYNC_NO);
    ufo_info ("recovered %zu boards, %" PRIu64 " items, seq %" PRIu64 " (%" PRIu64 " log records) in %" PRId64 " ms",
              bb_store_boards (self->store), bb_store_items (self->store), bb_store_seq (self->store),
              info.records, ufo_time_mono_ms () - start_ms);
    self->records_since_snap = info.records;
    snprintf (path, sizeof path, "%s/blobs", self->data_dir);
    self->blobs = ufo_blob_store_new (path, config->max_blob_bytes, err);
    if (!self->blobs)
        goto fail;
    bb_blobs_load (self);
    self->sync = bb_sync_new (err);
    if (self->sync && self->cfg.fsync == BB_FSYNC_ALWAYS)
        bb_sync_set_hold (self->sync, BB_HOLD_US);
    if (self->sync && getenv ("UFOBUS_TEST_WAL_FAULT"))
        bb_sync_set_datasync (self->sync, ufo_wal_datasync);     //  tests' fault injection (ufo_wal.h)
    if (!self->sync)
        goto fail;

    self->router = zsock_new (ZMQ_ROUTER);
    self->xpub = zsock_new (ZMQ_XPUB);
    if (!self->router || !self->xpub) {
        ufo_error_set (err, UFO_E_INTERNAL, "cannot create sockets");
        goto fail;
    }
    //  Frames above this hard cap make libzmq drop the connection; frames between the
    //  configured limits and the cap get an error reply.
    int64_t cap = (int64_t) (config->max_message_bytes + config->max_blob_bytes + 65536);
    zmq_setsockopt (zsock_resolve (self->router), ZMQ_MAXMSGSIZE, &cap, sizeof cap);
    zsock_set_rcvhwm (self->router, 100000);
    zsock_set_sndhwm (self->router, 100000);
    zsock_set_sndhwm (self->xpub, config->bus_hwm > 0 ? config->bus_hwm : 100000);
    zsock_set_linger (self->router, 1000);
    zsock_set_linger (self->xpub, 1000);
    //  Every subscribe and every unsubscribe reaches s_on_subscription, also those of a
    //  topic other subscribers still hold and those of a peer that disconnects (XPUB_VERBOSE
    //  passed only the last unsubscribe of a topic, so the count drifted upward).
    int verboser = 1;
    zmq_setsockopt (zsock_resolve (self->xpub), ZMQ_XPUB_VERBOSER, &verboser, sizeof verboser);
    if (self->cfg.security && (bb_security_apply_server (self->cfg.security, self->router, err) != 0
                           ||  bb_security_apply_server (self->cfg.security, self->xpub, err) != 0))
        goto fail;
    if (zsock_bind (self->router, "%s", config->cmd_endpoint) < 0) {
        ufo_error_set (err, UFO_E_IO, "cannot bind command endpoint %s: %s", config->cmd_endpoint,
                       zmq_strerror (zmq_errno ()));
        goto fail;
    }
    if (zsock_bind (self->xpub, "%s", config->bus_endpoint) < 0) {
        ufo_error_set (err, UFO_E_IO, "cannot bind bus endpoint %s: %s", config->bus_endpoint,
                       zmq_strerror (zmq_errno ()));
        goto fail;
    }
    self->loop = zloop_new ();
    zloop_reader (self->loop, self->router, s_on_request, self);
    zmq_pollitem_t item = { NULL, bb_sync_fd (self->sync), ZMQ_POLLIN, 0 };
    zloop_poller (self->loop, &item, s_on_sync, self);
    if (self->cfg.security) {
        zmq_pollitem_t hup = { NULL, bb_security_fd (self->cfg.security), ZMQ_POLLIN, 0 };
        zloop_poller (self->loop, &hup, s_on_sighup, self);
    }
    zloop_timer (self->loop, 50, 0, s_on_housekeeping, self);
    zloop_timer (self->loop, 50, 0, s_on_dispatch_tick, self);
    zloop_timer (self->loop, 1000, 0, s_on_space, self);
    zloop_timer (self->loop, 1000, 0, s_on_blob_expiry, self);
    if (self->cfg.fsync == BB_FSYNC_EVERYSEC)
        zloop_timer (self->loop, 1000, 0, s_on_everysec, self);
    if (config->stats_interval_ms > 0)
        zloop_timer (self->loop, (size_t) config->stats_interval_ms, 0, s_on_stats, self);
    self->rate_mark_ms = (uint64_t) ufo_time_mono_ms ();
    ufo_info ("serving commands on %s, bus on %s, data in %s, fsync %s", config->cmd_endpoint,
              config->bus_endpoint, self->data_dir,
              self->cfg.fsync == BB_FSYNC_ALWAYS ? "always" : self->cfg.fsync == BB_FSYNC_EVERYSEC ? "everysec" : "no");
    return self;
fail:
    bb_server_destroy (&self);
    return NULL;
}

int
bb_server_run (bb_server_t *self)
{
    zloop_start (self->loop);
    return 0;
}

void
bb_server_destroy (bb_server_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_server_t *self = *self_p;
    if (self->log_failed)
        ufo_error ("stopping with the log unrepaired: %zu held replies and events are not sent; the "
                   "records since the last good fdatasync may be lost (none was acknowledged)", self->nheld);
    else
    if (self->wal && self->sync) {
        //  Clean stop: make everything durable, then send what waited for it.
        ufo_error_t err;
        if (ufo_wal_write (self->wal, &err) == 0 && fdatasync (ufo_wal_fd (self->wal)) == 0) {
            bb_sync_destroy (&self->sync);      //  runs the queued jobs (blobs, rotated segments)
            self->done_ticket = UINT64_MAX;
            for (size_t i = self->out_head; i < self->out_tail; i++)
                self->out [i].burst = false;
            bb_out_flush (self, 0);
        }
        else
            ufo_error ("final flush of the log failed: %s", strerror (errno));
    }
    bb_durability_snapshot_reap (self, true);
    for (size_t i = self->out_head; i < self->out_tail; i++) {
        bb_out_release (&self->out [i]);
    }
    bb_out_release_held (self, false);
    free (self->held);
    free (self->log_syncs);
    free (self->out);
    free (self->pblobs);
    free (self->expiries);
    zloop_destroy (&self->loop);
    zsock_destroy (&self->router);
    zsock_destroy (&self->xpub);
    bb_sync_destroy (&self->sync);
    ufo_wal_destroy (&self->wal);
    ufo_blob_store_destroy (&self->blobs);
    bb_store_destroy (&self->store);
    bb_dispatch_destroy (&self->dispatch);
    bb_peers_destroy (&self->peers);        //  entries of unsent messages go with their last free
    ufo_buf_free (&self->scratch);
    if (self->lock_fd >= 0)
        close (self->lock_fd);
    free (self->data_dir);
    free (self);
    *self_p = NULL;
}
