/*  ufo_bb_client.c - blackboard broker client; see ufo_bb_client.h. The only client module
    that includes czmq. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "ufo_bb_client.h"
#include <czmq.h>
#include <pthread.h>

typedef struct s_replica_t {
    char board [UFO_BB_BOARD_MAX + 1];
    ufo_value_t *data;              //  {"questions": [...], ...}
    uint64_t last;                  //  seq of the last change applied (0: board absent)
    uint64_t snap_seq;              //  global seq of the snapshot the replica started from
    bool stale;                     //  a resync failed; retry before applying anything
    struct s_replica_t *next;
} s_replica_t;

struct _ufo_bb_client_t {
    zsock_t *dealer;
    zsock_t *sub;
    int timeout_ms;
    char sender [129];
    s_replica_t *replicas;
    ufo_bb_client_stats_t stats;
    uint64_t drop_every, drop_count;
    char id_prefix [33];            //  request ids: a random prefix + a counter
    uint64_t counter;
    ufo_buf_t scratch;
    ufo_bb_client_wait_fn *waiter;  //  NULL: calls block on the socket
    void *waiter_arg;
};

//  czmq's global set-up is not safe to race: clients created on several threads at once
//  would each try it. Do it once, here.
static pthread_once_t s_zsys_once = PTHREAD_ONCE_INIT;

static void
s_zsys_init (void)
{
    zsys_init ();
}

ufo_bb_client_t *
ufo_bb_client_new (const char *cmd_endpoint, const char *bus_endpoint, ufo_error_t *err)
{
    return ufo_bb_client_new_curve (cmd_endpoint, bus_endpoint, NULL, NULL, err);
}

ufo_bb_client_t *
ufo_bb_client_new_curve (const char *cmd_endpoint, const char *bus_endpoint, const char *server_key,
                         const char *cert_path, ufo_error_t *err)
{
    pthread_once (&s_zsys_once, s_zsys_init);
    ufo_bb_client_t *self = ufo_calloc (1, sizeof *self);
    self->timeout_ms = 10000;
    snprintf (self->sender, sizeof self->sender, "ufo-bb-client");
    ufo_msg_new_id (self->id_prefix);
    char cmd [512], bus [512];
    if (ufo_bb_endpoint (cmd_endpoint, "cmd", cmd, sizeof cmd, err) != 0) {
        ufo_bb_client_destroy (&self);
        return NULL;
    }
    cmd_endpoint = cmd;
    if (bus_endpoint && ufo_bb_endpoint (bus_endpoint, "bus", bus, sizeof bus, err) != 0) {
        ufo_bb_client_destroy (&self);
        return NULL;
    }
    if (bus_endpoint)
        bus_endpoint = bus;
    self->dealer = zsock_new (ZMQ_DEALER);
    if (self->dealer && ufo_security_apply_client (self->dealer, server_key, cert_path, err) != 0) {
        ufo_bb_client_destroy (&self);
        return NULL;
    }
    if (!self->dealer || zsock_connect (self->dealer, "%s", cmd_endpoint) != 0) {
        ufo_error_set (err, UFO_E_INVALID, "cannot connect to command endpoint '%s'", cmd_endpoint);
        ufo_bb_client_destroy (&self);
        return NULL;
    }
    zsock_set_linger (self->dealer, 0);
    zsock_set_sndtimeo (self->dealer, self->timeout_ms);
    zsock_set_sndhwm (self->dealer, 100000);
    zsock_set_rcvhwm (self->dealer, 100000);
    if (bus_endpoint) {
        self->sub = zsock_new (ZMQ_SUB);
        if (self->sub && ufo_security_apply_client (self->sub, server_key, cert_path, err) != 0) {
            ufo_bb_client_destroy (&self);
            return NULL;
        }
        if (self->sub)
            zsock_set_rcvhwm (self->sub, 100000);
        if (!self->sub || zsock_connect (self->sub, "%s", bus_endpoint) != 0) {
            ufo_error_set (err, UFO_E_INVALID, "cannot connect to bus endpoint '%s'", bus_endpoint);
            ufo_bb_client_destroy (&self);
            return NULL;
        }
        zsock_set_linger (self->sub, 0);
    }
    return self;
}

void
ufo_bb_client_destroy (ufo_bb_client_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_bb_client_t *self = *self_p;
    zsock_destroy (&self->dealer);
    zsock_destroy (&self->sub);
    for (s_replica_t *r = self->replicas, *next; r; r = next) {
        next = r->next;
        ufo_value_destroy (&r->data);
        free (r);
    }
    ufo_buf_free (&self->scratch);
    free (self);
    *self_p = NULL;
}

void
ufo_bb_client_set_timeout (ufo_bb_client_t *self, int timeout_ms)
{
    self->timeout_ms = timeout_ms;
    //  A DEALER with no live connection (broker down, or CURVE refused) blocks on send.
    if (self->dealer)
        zsock_set_sndtimeo (self->dealer, timeout_ms);
}

void
ufo_bb_client_set_sender (ufo_bb_client_t *self, const char *sender)
{
    //  the envelope's rules: at most 128 bytes of UTF-8 without NUL; keep printable ASCII
    size_t n = 0;
    for (const char *p = sender ? sender : ""; *p && n < sizeof self->sender - 1; p++)
        self->sender [n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    self->sender [n] = 0;
}

void *ufo_bb_client_cmd_socket (ufo_bb_client_t *self) { return self->dealer; }
void *ufo_bb_client_bus_socket (ufo_bb_client_t *self) { return self->sub; }

int
ufo_bb_client_send (ufo_bb_client_t *self, const char *type, ufo_value_t **body_p, const void *frame,
                    size_t frame_len, char id_out [65], ufo_error_t *err)
{
    size_t type_len = type ? strlen (type) : 0;
    bool type_ok = type_len > 0 && type_len <= UFO_MSG_TYPE_MAX;
    for (size_t i = 0; type_ok && i < type_len; i++)
        type_ok = type [i] > 0x20 && type [i] < 0x7f;
    if (!type_ok) {
        ufo_value_destroy (body_p);
        return ufo_error_set (err, UFO_E_INVALID, "request type must be 1..64 printable ASCII bytes");
    }
    char id [33];
    snprintf (id, sizeof id, "%.16s%016" PRIx64, self->id_prefix, ++self->counter);
    if (id_out)
        snprintf (id_out, 65, "%s", id);
    ufo_buf_t *buf = &self->scratch;
    ufo_buf_reset (buf);
    ufo_bb_envelope_head (buf, type, id, self->sender);
    if (body_p && *body_p) {
        ufo_msgpack_append (buf, *body_p);
        ufo_value_destroy (body_p);
    }
    else
        ufo_mp_put_map (buf, 0);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, buf->data, buf->len);
    if (frame)
        zmsg_addmem (zmsg, frame, frame_len);
    if (zmsg_send (&zmsg, self->dealer) != 0) {
        zmsg_destroy (&zmsg);
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot send '%s' to the broker (no connection within %d ms)",
                              type, self->timeout_ms);
    }
    return 0;
}

//  Receives one reply message within timeout_ms; decodes its envelope.
static ufo_msg_t *
s_recv_reply (ufo_bb_client_t *self, int timeout_ms, zmsg_t **raw_p, ufo_error_t *err)
{
    zsock_set_rcvtimeo (self->dealer, timeout_ms);
    zmsg_t *raw = zmsg_recv (self->dealer);
    if (!raw) {
        ufo_error_set (err, UFO_E_TIMEOUT, "no reply from the broker within %d ms", timeout_ms);
        return NULL;
    }
    zframe_t *frame = zmsg_first (raw);
    if (frame && zframe_size (frame) == 0)
        frame = zmsg_next (raw);        //  an empty delimiter, if the peer added one
    ufo_msg_t *msg = frame ? ufo_msg_decode (zframe_data (frame), zframe_size (frame), NULL, err) : NULL;
    if (!frame)
        ufo_error_set (err, UFO_E_SYNTAX, "empty reply");
    if (!msg)
        zmsg_destroy (&raw);
    *raw_p = raw;
    return msg;
}

ufo_value_t *
ufo_bb_client_recv (ufo_bb_client_t *self, int timeout_ms, char id_out [65], bool *ok_p, ufo_error_t *err)
{
    zmsg_t *raw = NULL;
    ufo_msg_t *msg = s_recv_reply (self, timeout_ms, &raw, err);
    if (!msg)
        return NULL;
    if (id_out)
        snprintf (id_out, 65, "%s", ufo_msg_id (msg));
    *ok_p = strcmp (ufo_msg_type (msg), "ok") == 0;
    ufo_value_t *body = ufo_msg_take_body (msg);
    ufo_msg_destroy (&msg);
    zmsg_destroy (&raw);
    return body;
}

static int
s_error_from_reply (const ufo_value_t *body, ufo_error_t *err)
{
    const char *code = ufo_value_map_str (body, "code", "internal");
    int value = UFO_E_INTERNAL;
    for (int c = 1; c < UFO_E_COUNT; c++)
        if (strcmp (ufo_errcode_name (c), code) == 0)
            value = c;
    return ufo_error_set (err, value, "broker: %s", ufo_value_map_str (body, "message", "error"));
}

void
ufo_bb_client_set_waiter (ufo_bb_client_t *self, ufo_bb_client_wait_fn *wait, void *arg)
{
    self->waiter = wait;
    self->waiter_arg = arg;
}

ufo_value_t *
ufo_bb_client_call (ufo_bb_client_t *self, const char *type, ufo_value_t **body_p, const void *frame,
                    size_t frame_len, char **data_p, size_t *len_p, ufo_error_t *err)
{
    char id [65];
    if (ufo_bb_client_send (self, type, body_p, frame, frame_len, id, err) != 0)
        return NULL;
    int64_t deadline = ufo_time_mono_ms () + self->timeout_ms;
    while (true) {
        int64_t left = deadline - ufo_time_mono_ms ();
        if (left <= 0)
            break;
        zmsg_t *raw = NULL;
        ufo_error_t local;
        //  with a waiter: look without blocking, and let the caller's loop run meanwhile
        ufo_msg_t *msg = s_recv_reply (self, self->waiter ? 0 : (int) left, &raw, &local);
        if (!msg && self->waiter && local.code == UFO_E_TIMEOUT) {
            if (!self->waiter (self->waiter_arg, self->dealer, (int) left)) {
                ufo_error_set (err, UFO_E_CANCELLED, "'%s' abandoned: cancelled while waiting for the broker",
                               type);
                return NULL;            //  its late reply is dropped by the next call
            }
            continue;
        }
        if (!msg) {
            if (local.code == UFO_E_TIMEOUT)
                break;
            continue;                   //  a malformed reply: not ours to report
        }
        if (strcmp (ufo_msg_id (msg), id) != 0) {
            ufo_msg_destroy (&msg);     //  the late reply of an earlier call
            zmsg_destroy (&raw);
            continue;
        }
        bool ok = strcmp (ufo_msg_type (msg), "ok") == 0;
        ufo_value_t *body = ufo_msg_take_body (msg);
        ufo_msg_destroy (&msg);
        if (ok && data_p) {
            zframe_t *extra = zmsg_last (raw);
            if (zmsg_size (raw) >= 2 && extra) {
                *data_p = ufo_malloc (zframe_size (extra) + 1);
                memcpy (*data_p, zframe_data (extra), zframe_size (extra));
                (*data_p) [zframe_size (extra)] = 0;
                *len_p = zframe_size (extra);
            }
            else {
                ok = false;
                ufo_value_destroy (&body);
                zmsg_destroy (&raw);
                ufo_error_set (err, UFO_E_SYNTAX, "reply to '%s' lacks its data frame", type);
                return NULL;
            }
        }
        zmsg_destroy (&raw);
        if (!ok) {
            s_error_from_reply (body, err);
            ufo_value_destroy (&body);
            return NULL;
        }
        return body;
    }
    ufo_error_set (err, UFO_E_TIMEOUT, "no reply to '%s' within %d ms", type, self->timeout_ms);
    return NULL;
}

static ufo_value_t *
s_board_body (const char *board)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    return body;
}

int
ufo_bb_client_add (ufo_bb_client_t *self, const char *board, const char *memory, ufo_value_t **items_p,
                   uint64_t *seq_p, uint64_t *last_p, ufo_error_t *err)
{
    ufo_value_t *body = s_board_body (board);
    ufo_value_map_set_str (body, "memory", memory);
    bool list = ufo_value_type (*items_p) == UFO_TLIST;
    ufo_value_map_set (body, list ? "items" : "item", items_p);
    ufo_value_t *reply = ufo_bb_client_call (self, "bb.add", &body, NULL, 0, NULL, NULL, err);
    if (!reply)
        return -1;
    if (seq_p)
        *seq_p = (uint64_t) ufo_value_map_int (reply, "seq", 0);
    if (last_p)
        *last_p = (uint64_t) ufo_value_map_int (reply, "last", 0);
    ufo_value_destroy (&reply);
    return 0;
}

ufo_value_t *
ufo_bb_client_snapshot (ufo_bb_client_t *self, const char *board, const char *memory, uint64_t after,
                        ufo_error_t *err)
{
    ufo_value_t *body = s_board_body (board);
    if (memory)
        ufo_value_map_set_str (body, "memory", memory);
    if (after)
        ufo_value_map_set_int (body, "after", (int64_t) after);
    return ufo_bb_client_call (self, "bb.snapshot", &body, NULL, 0, NULL, NULL, err);
}

static int
s_simple (ufo_bb_client_t *self, const char *type, ufo_value_t *body, ufo_error_t *err)
{
    ufo_value_t *reply = ufo_bb_client_call (self, type, &body, NULL, 0, NULL, NULL, err);
    if (!reply)
        return -1;
    ufo_value_destroy (&reply);
    return 0;
}

int
ufo_bb_client_clear (ufo_bb_client_t *self, const char *board, const char *memory, ufo_error_t *err)
{
    ufo_value_t *body = s_board_body (board);
    if (memory)
        ufo_value_map_set_str (body, "memory", memory);
    return s_simple (self, "bb.clear", body, err);
}

int
ufo_bb_client_delete (ufo_bb_client_t *self, const char *board, ufo_error_t *err)
{
    return s_simple (self, "bb.delete", s_board_body (board), err);
}

int
ufo_bb_client_blob_put (ufo_bb_client_t *self, const void *data, size_t len, char hex [65], ufo_error_t *err)
{
    ufo_value_t *reply = ufo_bb_client_call (self, "blob.put", NULL, data, len, NULL, NULL, err);
    if (!reply)
        return -1;
    snprintf (hex, 65, "%s", ufo_value_map_str (reply, "blob", ""));
    ufo_value_destroy (&reply);
    return 0;
}

int
ufo_bb_client_blob_get (ufo_bb_client_t *self, const char *hex, char **data_p, size_t *len_p,
                        ufo_error_t *err)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "blob", hex);
    ufo_value_t *reply = ufo_bb_client_call (self, "blob.get", &body, NULL, 0, data_p, len_p, err);
    if (!reply)
        return -1;
    ufo_value_destroy (&reply);
    return 0;
}

char *
ufo_bb_client_data_url (ufo_bb_client_t *self, const char *hex, const char *mime, ufo_error_t *err)
{
    char *data;
    size_t len;
    if (ufo_bb_client_blob_get (self, hex, &data, &len, err) != 0)
        return NULL;
    ufo_buf_t out = { 0 };
    ufo_buf_printf (&out, "data:%s;base64,", mime && *mime ? mime : "image/png");
    ufo_buf_base64 (&out, data, len);
    free (data);
    return ufo_buf_detach (&out, NULL);
}

int
ufo_bb_client_fill_images (ufo_bb_client_t *self, ufo_value_t *board_map, ufo_error_t *err)
{
    ufo_value_t *shots = ufo_value_map_get (board_map, "screenshots");
    int filled = 0, rc = 0;
    for (size_t i = 0; i < ufo_value_size (shots); i++) {
        ufo_value_t *item = ufo_value_list_at (shots, i);
        const char *blob = ufo_value_map_str (item, "blob", NULL);
        if (!blob || ufo_value_map_has (item, "image_str"))
            continue;
        if (ufo_value_frozen (item)) {
            //  shared with a board (ufo_board_to_map): fill a copy of our own
            ufo_value_t *copy = ufo_value_dup (item);
            item = ufo_value_list_set (shots, i, &copy);
        }
        const char *mime = ufo_value_map_str (item, "mime", ufo_board_image_mime (ufo_value_map_str (item, "image_path", NULL)));
        ufo_error_t local;
        char *url = ufo_bb_client_data_url (self, blob, mime, &local);
        if (!url) {
            if (rc == 0 && err)
                *err = local;
            rc = -1;
            continue;
        }
        ufo_value_t *v = ufo_value_new_string (url);
        free (url);
        ufo_value_map_set (item, "image_str", &v);
        filled++;
    }
    return rc ? -1 : filled;
}

//  --- Replicas ----------------------------------------------------------------------

static s_replica_t *
s_replica (ufo_bb_client_t *self, const char *board)
{
    for (s_replica_t *r = self->replicas; r; r = r->next)
        if (strcmp (r->board, board) == 0)
            return r;
    return NULL;
}

static ufo_value_t *
s_empty_board (void)
{
    ufo_value_t *map = ufo_value_new_map ();
    for (int m = 0; m < 4; m++) {
        ufo_value_t *list = ufo_value_new_list ();
        ufo_value_map_set (map, ufo_bb_memory_name (m), &list);
    }
    return map;
}

//  Replaces a replica's content with a fresh snapshot.
static int
s_resync (ufo_bb_client_t *self, s_replica_t *r, ufo_error_t *err)
{
    ufo_value_t *snap = ufo_bb_client_snapshot (self, r->board, NULL, 0, err);
    if (!snap) {
        r->stale = true;
        return -1;
    }
    ufo_value_t *data = s_empty_board ();
    const ufo_value_t *board = ufo_value_map_get (snap, "board");
    for (int m = 0; m < 4; m++) {
        const ufo_value_t *list = ufo_value_map_get (board, ufo_bb_memory_name (m));
        if (ufo_value_type (list) == UFO_TLIST)
            ufo_value_map_set_copy (data, ufo_bb_memory_name (m), list);
    }
    ufo_value_destroy (&r->data);
    r->data = data;
    r->last = (uint64_t) ufo_value_map_int (snap, "last", 0);
    r->snap_seq = (uint64_t) ufo_value_map_int (snap, "seq", 0);
    r->stale = false;
    ufo_value_destroy (&snap);
    return 0;
}

int
ufo_bb_client_follow (ufo_bb_client_t *self, const char *board, ufo_error_t *err)
{
    if (!self->sub)
        return ufo_error_set (err, UFO_E_INVALID, "this client has no bus endpoint");
    if (!ufo_bb_board_valid (board, strlen (board)))
        return ufo_error_set (err, UFO_E_INVALID, "invalid board name '%s'", board);
    s_replica_t *r = s_replica (self, board);
    if (!r) {
        r = ufo_calloc (1, sizeof *r);
        snprintf (r->board, sizeof r->board, "%s", board);
        r->data = s_empty_board ();
        r->next = self->replicas;
        self->replicas = r;
        char prefix [UFO_BB_BOARD_MAX + 8];
        ufo_bb_topic_prefix (prefix, sizeof prefix, board);
        //  Subscribe BEFORE the snapshot: every change after the snapshot is then either
        //  delivered or detected as a gap (docs/PROTOCOL.md 2.6).
        zsock_set_subscribe (self->sub, prefix);
    }
    return s_resync (self, r, err);
}

static void
s_apply (s_replica_t *r, const char *type, ufo_value_t *body, int memory, uint64_t last)
{
    if (strcmp (type, UFO_BB_EV_ADDED) == 0) {
        ufo_value_t *list = ufo_value_map_get (r->data, ufo_bb_memory_name (memory));
        const ufo_value_t *items = ufo_value_map_get (body, "items");
        for (size_t i = 0; i < ufo_value_size (items); i++) {
            ufo_value_t *copy = ufo_value_dup (ufo_value_list_at (items, i));
            ufo_value_list_push (list, &copy);
        }
        r->last = last;
    }
    else
    if (strcmp (type, UFO_BB_EV_CLEARED) == 0) {
        for (int m = 0; m < 4; m++)
            if (memory < 0 || memory == m)
                ufo_value_clear (ufo_value_map_get (r->data, ufo_bb_memory_name (m)));
        r->last = last;
    }
    else {                                  //  deleted: the board's chain starts again at 0
        for (int m = 0; m < 4; m++)
            ufo_value_clear (ufo_value_map_get (r->data, ufo_bb_memory_name (m)));
        r->last = 0;
    }
}

//  Handles one bus message. Returns 1 if applied, 0 if ignored, -1 on a failed resync.
static int
s_on_event (ufo_bb_client_t *self, zmsg_t *raw, ufo_error_t *err)
{
    if (zmsg_size (raw) != 2)
        return 0;
    zframe_t *frame = zmsg_last (raw);
    ufo_msg_t *msg = ufo_msg_decode (zframe_data (frame), zframe_size (frame), NULL, NULL);
    if (!msg)
        return 0;
    int rc = 0;
    const char *type = ufo_msg_type (msg);
    ufo_value_t *body = ufo_msg_body (msg);
    const char *board = ufo_value_map_str (body, "board", NULL);
    s_replica_t *r = board && strncmp (type, "bb.", 3) == 0 ? s_replica (self, board) : NULL;
    const char *mem_name = ufo_value_map_str (body, "memory", NULL);
    int memory = mem_name ? ufo_bb_memory_parse (mem_name) : UFO_BB_MEMORY_ALL;
    int64_t last = ufo_value_map_int (body, "last", -1);
    int64_t prev = ufo_value_map_int (body, "prev", -1);
    bool known = strcmp (type, UFO_BB_EV_ADDED) == 0 || strcmp (type, UFO_BB_EV_CLEARED) == 0
              || strcmp (type, UFO_BB_EV_DELETED) == 0;
    if (!r || !known || last <= 0 || prev < 0 || (mem_name && memory < 0)
    ||  (strcmp (type, UFO_BB_EV_ADDED) == 0 && memory < 0)) {
        ufo_msg_destroy (&msg);
        return 0;
    }
    if (self->drop_every && ++self->drop_count % self->drop_every == 0) {
        ufo_msg_destroy (&msg);         //  test hook: lose this event
        return 0;
    }
    if (r->stale && s_resync (self, r, err) != 0)
        rc = -1;
    else
    if ((uint64_t) last <= r->snap_seq)
        self->stats.duplicates++;       //  the snapshot already holds it
    else
    if ((uint64_t) prev != r->last) {
        self->stats.gaps++;
        ufo_warn ("board %s: missed updates (event prev %" PRId64 ", replica at %" PRIu64 "); resyncing",
                  r->board, prev, r->last);
        self->stats.resyncs++;
        rc = s_resync (self, r, err) == 0 ? 0 : -1;
    }
    else {
        s_apply (r, type, body, memory, (uint64_t) last);
        self->stats.events++;
        rc = 1;
    }
    ufo_msg_destroy (&msg);
    return rc;
}

int
ufo_bb_client_poll (ufo_bb_client_t *self, int timeout_ms, ufo_error_t *err)
{
    if (!self->sub)
        return 0;
    int applied = 0, failed = 0;
    zsock_set_rcvtimeo (self->sub, timeout_ms < 0 ? 0 : timeout_ms);
    zmsg_t *raw = zmsg_recv (self->sub);
    zsock_set_rcvtimeo (self->sub, 0);
    for (int n = 0; raw && n < 100000; n++) {
        int rc = s_on_event (self, raw, err);
        zmsg_destroy (&raw);
        if (rc > 0)
            applied++;
        if (rc < 0)
            failed = 1;
        raw = zmsg_recv (self->sub);
    }
    zmsg_destroy (&raw);
    return failed ? -1 : applied;
}

const ufo_value_t *
ufo_bb_client_replica (ufo_bb_client_t *self, const char *board)
{
    s_replica_t *r = s_replica (self, board);
    return r ? r->data : NULL;
}

uint64_t
ufo_bb_client_replica_last (ufo_bb_client_t *self, const char *board)
{
    s_replica_t *r = s_replica (self, board);
    return r ? r->last : 0;
}

void
ufo_bb_client_stats (ufo_bb_client_t *self, ufo_bb_client_stats_t *stats)
{
    *stats = self->stats;
}

void
ufo_bb_client_test_drop (ufo_bb_client_t *self, uint64_t every_n)
{
    self->drop_every = every_n;
    self->drop_count = 0;
}
