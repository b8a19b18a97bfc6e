/*  ufo_task_link.c - the broker link of the worker and submitter actors (dispatch_private.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_cert.h"
#include "dispatch_private.h"
#include <czmq.h>

enum { L_DOWN = 0, L_REG, L_UP };

#define REG_RETRY_MS 50
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 2000

typedef struct {
    char id [24];
    char *type;
    ufo_value_t *body;
    char *tag;
    bool sent;
    bool ever_sent;                 //  handed to a socket once (the broker may have it)
    int64_t expires;                //  ufo_link_queue_until: monotonic ms (0: no time limit)
} s_entry_t;

struct _ufo_link_t {
    char *endpoint;
    char *server_key, *cert_path;   //  NULL: the process default
    char routing_id [256];
    size_t rid_len;
    int ivl_ms, liveness;
    ufo_link_handler_t h;
    zsock_t *dealer;
    int state;
    int64_t last_rx, next_hb, reconnect_at, next_reg;
    int backoff;
    s_entry_t *out;
    size_t nout, cap_out;
    uint64_t counter;
    ufo_buf_t buf;
};

ufo_link_t *
ufo_link_new (const char *endpoint, const char *routing_id, int ivl_ms, int liveness,
              const char *server_key, const char *cert_path, const ufo_link_handler_t *handler)
{
    ufo_link_t *self = ufo_calloc (1, sizeof *self);
    self->endpoint = ufo_strdup (endpoint);
    self->server_key = server_key ? ufo_strdup (server_key) : NULL;
    self->cert_path = cert_path ? ufo_strdup (cert_path) : NULL;
    snprintf (self->routing_id, sizeof self->routing_id, "%s", routing_id);
    self->rid_len = strlen (self->routing_id);
    self->ivl_ms = ivl_ms > 0 ? ivl_ms : 1000;
    self->liveness = liveness > 0 ? liveness : 3;
    self->h = *handler;
    self->state = L_DOWN;
    self->backoff = BACKOFF_MIN_MS;
    return self;
}

void
ufo_link_destroy (ufo_link_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_link_t *self = *self_p;
    zsock_destroy (&self->dealer);
    for (size_t i = 0; i < self->nout; i++) {
        free (self->out [i].type);
        free (self->out [i].tag);
        ufo_value_destroy (&self->out [i].body);
    }
    free (self->out);
    free (self->endpoint);
    free (self->server_key);
    free (self->cert_path);
    ufo_buf_free (&self->buf);
    free (self);
    *self_p = NULL;
}

static bool
s_send (ufo_link_t *self, const char *type, const char *id, const ufo_value_t *body)
{
    return ufo_link_send_call (self, type, id, body, NULL, 0);
}

bool
ufo_link_send_call (ufo_link_t *self, const char *type, const char *id, const ufo_value_t *body,
                    const void *frame, size_t frame_len)
{
    if (!self->dealer)
        return false;
    ufo_msg_t *msg = ufo_msg_new (type);
    if (!msg)
        return false;
    ufo_msg_set_id (msg, id);
    ufo_msg_set_sender (msg, self->routing_id);
    ufo_value_t *copy = body ? ufo_value_dup (body) : ufo_value_new_map ();
    ufo_msg_set_body (msg, &copy);
    ufo_buf_reset (&self->buf);
    ufo_msg_encode (msg, &self->buf);
    ufo_msg_destroy (&msg);
    void *handle = zsock_resolve (self->dealer);
    if (!frame)
        return zmq_send (handle, self->buf.data, self->buf.len, ZMQ_DONTWAIT) >= 0;
    //  two frames: once the first is accepted, the second follows (same message)
    if (zmq_send (handle, self->buf.data, self->buf.len, ZMQ_DONTWAIT | ZMQ_SNDMORE) < 0)
        return false;
    return zmq_send (handle, frame, frame_len, 0) >= 0;
}

static void
s_connect (ufo_link_t *self)
{
    zsock_destroy (&self->dealer);
    self->dealer = zsock_new (ZMQ_DEALER);
    if (!self->dealer) {
        self->reconnect_at = ufo_time_mono_ms () + self->backoff;
        return;
    }
    ufo_error_t err;
    if (ufo_security_apply_client (self->dealer, self->server_key, self->cert_path, &err) != 0) {
        ufo_warn ("cannot secure the connection to %s: %s", self->endpoint, err.message);
        zsock_destroy (&self->dealer);
        self->reconnect_at = ufo_time_mono_ms () + BACKOFF_MAX_MS;
        return;
    }
    zsock_set_linger (self->dealer, 0);
    zsock_set_immediate (self->dealer, 1);
    zsock_set_sndhwm (self->dealer, 100000);
    zsock_set_rcvhwm (self->dealer, 100000);
    zsock_set_reconnect_ivl (self->dealer, 100);
    zsock_set_reconnect_ivl_max (self->dealer, BACKOFF_MAX_MS);
    zmq_setsockopt (zsock_resolve (self->dealer), ZMQ_ROUTING_ID, self->routing_id, self->rid_len);
    if (zsock_connect (self->dealer, "%s", self->endpoint) != 0) {
        ufo_warn ("cannot connect to %s: %s", self->endpoint, zmq_strerror (zmq_errno ()));
        zsock_destroy (&self->dealer);
        self->reconnect_at = ufo_time_mono_ms () + self->backoff;
        return;
    }
    self->state = L_REG;
    self->last_rx = ufo_time_mono_ms ();
    self->next_reg = 0;
}

static void
s_register (ufo_link_t *self)
{
    const char *type = NULL;
    ufo_value_t *body = NULL;
    self->h.make_register (self->h.owner, &type, &body);
    char id [24];
    snprintf (id, sizeof id, "r%" PRIu64, ++self->counter);
    s_send (self, type, id, body);
    ufo_value_destroy (&body);
    self->next_reg = ufo_time_mono_ms () + REG_RETRY_MS;
}

static void
s_down (ufo_link_t *self)
{
    bool was_up = self->state == L_UP;
    zsock_destroy (&self->dealer);
    self->state = L_DOWN;
    self->reconnect_at = ufo_time_mono_ms () + self->backoff;
    self->backoff = self->backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : self->backoff * 2;
    for (size_t i = 0; i < self->nout; i++)
        self->out [i].sent = false;
    if (was_up && self->h.on_down)
        self->h.on_down (self->h.owner);
}

//  Drops the requests with a time limit that passed before they were ever handed to a
//  socket: the broker never saw them; each ends in on_reply with a local "timeout" error.
//  Only from ufo_link_service (on_reply may change the owner's tables).
static void
s_expire (ufo_link_t *self)
{
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->nout;) {
        s_entry_t e = self->out [i];
        if (e.expires == 0 || e.ever_sent || e.expires > now) {
            i++;
            continue;
        }
        memmove (self->out + i, self->out + i + 1, (self->nout - i - 1) * sizeof *self->out);
        self->nout--;
        ufo_debug ("%s %s: its deadline passed before it could be sent; dropped", e.type, e.id);
        if (self->h.on_reply) {
            ufo_value_t *err = ufo_value_new_map ();
            ufo_value_map_set_str (err, "code", "timeout");
            ufo_value_map_set_str (err, "message", "its deadline passed while it waited to be sent (no connection "
                                   "to the broker)");
            ufo_value_map_set_bool (err, "local", true);
            self->h.on_reply (self->h.owner, e.tag, e.type, false, err);
            ufo_value_destroy (&err);
        }
        free (e.type);
        free (e.tag);
        ufo_value_destroy (&e.body);
        i = 0;                          //  on_reply may have queued requests
    }
}

static void
s_flush (ufo_link_t *self)
{
    if (self->state != L_UP)
        return;
    for (size_t i = 0; i < self->nout; i++) {
        s_entry_t *e = &self->out [i];
        if (e->sent)
            continue;
        if (e->expires > 0) {
            //  the time left now: what the request waited here counts against its deadline
            //  (one sent before and maybe applied goes again with 1 ms: the broker answers)
            int64_t left = e->expires - ufo_time_mono_ms ();
            if (left <= 0 && !e->ever_sent)
                continue;               //  too late to go: ufo_link_service drops it (s_expire)
            ufo_value_map_set_int (e->body, "deadline_ms", left > 1 ? left : 1);
        }
        if (!s_send (self, e->type, e->id, e->body))
            break;
        e->sent = true;
        e->ever_sent = true;
    }
}

static void
s_on_frame (ufo_link_t *self, const void *data, size_t len, const void *extra, size_t extra_len)
{
    ufo_error_t err;
    ufo_msg_t *msg = ufo_msg_decode (data, len, NULL, &err);
    if (!msg) {
        ufo_warn ("broker sent an undecodable message: %s", err.message);
        return;
    }
    self->last_rx = ufo_time_mono_ms ();
    const char *type = ufo_msg_type (msg);
    const char *id = ufo_msg_id (msg);
    const ufo_value_t *body = ufo_msg_body (msg);
    bool ok = strcmp (type, "ok") == 0;
    if (ok || strcmp (type, "error") == 0) {
        if (id [0] == 'r') {
            if (ok && self->state != L_DOWN) {
                bool again = self->state == L_UP;
                self->state = L_UP;
                self->backoff = BACKOFF_MIN_MS;
                self->next_hb = ufo_time_mono_ms () + self->ivl_ms;
                if (!again)
                    for (size_t i = 0; i < self->nout; i++)
                        self->out [i].sent = false;
                self->h.on_registered (self->h.owner, body);
                s_flush (self);
            }
            else
            if (!ok)
                ufo_warn ("registration refused: %s", ufo_value_map_str (body, "message", "?"));
        }
        else
        if (id [0] == 'h') {
            if (!ok && strcmp (ufo_value_map_str (body, "code", ""), "not_found") == 0
            &&  self->state == L_UP) {
                self->state = L_REG;        //  the broker forgot us (restart, or we were dropped)
                s_register (self);
            }
        }
        else
        if (id [0] == 'b') {
            if (self->h.on_call) {
                ufo_value_t *taken = ufo_msg_take_body (msg);
                self->h.on_call (self->h.owner, id, ok, &taken, extra, extra_len);
                ufo_value_destroy (&taken);
            }
        }
        else
        if (id [0] == 'o') {
            for (size_t i = 0; i < self->nout; i++)
                if (strcmp (self->out [i].id, id) == 0) {
                    s_entry_t e = self->out [i];
                    memmove (self->out + i, self->out + i + 1, (self->nout - i - 1) * sizeof *self->out);
                    self->nout--;
                    if (self->h.on_reply)
                        self->h.on_reply (self->h.owner, e.tag, e.type, ok, body);
                    free (e.type);
                    free (e.tag);
                    ufo_value_destroy (&e.body);
                    break;
                }
        }
    }
    else
    if (self->h.on_message)
        self->h.on_message (self->h.owner, type, body);
    ufo_msg_destroy (&msg);
}

int
ufo_link_service (ufo_link_t *self)
{
    s_expire (self);
    int64_t now = ufo_time_mono_ms ();
    if (self->state == L_DOWN && now >= self->reconnect_at)
        s_connect (self);
    if (self->dealer) {
        void *handle = zsock_resolve (self->dealer);
        for (int i = 0; i < 10000; i++) {
            zmq_msg_t frame;
            zmq_msg_init (&frame);
            if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (&frame);
                break;
            }
            bool more = zmq_msg_more (&frame);
            //  a second frame is the bytes of a blob.get reply; a peer never sends more
            zmq_msg_t extra;
            zmq_msg_init (&extra);
            bool has_extra = false;
            if (more) {
                has_extra = zmq_msg_recv (&extra, handle, 0) >= 0;
                more = has_extra && zmq_msg_more (&extra);
            }
            while (more) {              //  drop anything beyond that
                zmq_msg_t drop;
                zmq_msg_init (&drop);
                if (zmq_msg_recv (&drop, handle, 0) < 0) {
                    zmq_msg_close (&drop);
                    break;
                }
                more = zmq_msg_more (&drop);
                zmq_msg_close (&drop);
            }
            s_on_frame (self, zmq_msg_data (&frame), zmq_msg_size (&frame),
                        has_extra ? zmq_msg_data (&extra) : NULL, has_extra ? zmq_msg_size (&extra) : 0);
            zmq_msg_close (&extra);
            zmq_msg_close (&frame);
        }
    }
    now = ufo_time_mono_ms ();
    if (self->state != L_DOWN && now - self->last_rx > (int64_t) self->ivl_ms * self->liveness) {
        ufo_warn ("no answer from the broker at %s for %" PRId64 " ms; reconnecting", self->endpoint,
                  now - self->last_rx);
        s_down (self);
    }
    if (self->state == L_REG && now >= self->next_reg)
        s_register (self);
    if (self->state == L_UP && now >= self->next_hb) {
        const char *type = NULL;
        ufo_value_t *body = NULL;
        self->h.make_heartbeat (self->h.owner, &type, &body);
        char id [24];
        snprintf (id, sizeof id, "h%" PRIu64, ++self->counter);
        s_send (self, type, id, body);
        ufo_value_destroy (&body);
        self->next_hb = now + self->ivl_ms;
    }
    s_flush (self);
    //  next due timer
    int64_t due = now + self->ivl_ms;
    if (self->state == L_DOWN)
        due = self->reconnect_at;
    else {
        if (self->state == L_REG && self->next_reg < due)
            due = self->next_reg;
        if (self->state == L_UP && self->next_hb < due)
            due = self->next_hb;
        int64_t dead = self->last_rx + (int64_t) self->ivl_ms * self->liveness + 1;
        if (dead < due)
            due = dead;
        for (size_t i = 0; i < self->nout; i++)
            if (!self->out [i].sent && self->state == L_UP) {
                due = now + 10;         //  the socket was full: try again soon
                break;
            }
    }
    for (size_t i = 0; i < self->nout; i++)     //  a time limit of a request not sent yet
        if (self->out [i].expires > 0 && !self->out [i].ever_sent && self->out [i].expires < due)
            due = self->out [i].expires;
    int64_t wait = due - now;
    return wait < 0 ? 0 : wait > 1000 ? 1000 : (int) wait;
}

void
ufo_link_queue (ufo_link_t *self, const char *type, ufo_value_t **body_p, const char *tag)
{
    ufo_link_queue_until (self, type, body_p, tag, 0);
}

void
ufo_link_queue_until (ufo_link_t *self, const char *type, ufo_value_t **body_p, const char *tag,
                      int64_t expires)
{
    if (self->nout == self->cap_out) {
        self->cap_out = self->cap_out ? self->cap_out * 2 : 16;
        self->out = ufo_realloc (self->out, self->cap_out * sizeof *self->out);
    }
    s_entry_t *e = &self->out [self->nout++];
    snprintf (e->id, sizeof e->id, "o%" PRIu64, ++self->counter);
    e->type = ufo_strdup (type);
    e->body = *body_p ? *body_p : ufo_value_new_map ();
    *body_p = NULL;
    e->tag = tag ? ufo_strdup (tag) : NULL;
    e->sent = false;
    e->ever_sent = false;
    e->expires = expires > 0 ? expires : 0;
    s_flush (self);
}

size_t
ufo_link_pending (ufo_link_t *self)
{
    return self->nout;
}

bool
ufo_link_up (ufo_link_t *self)
{
    return self->state == L_UP;
}

void *
ufo_link_socket (ufo_link_t *self)
{
    return self->dealer;
}

void
ufo_link_reregister (ufo_link_t *self)
{
    if (self->state == L_UP) {
        self->state = L_REG;
        s_register (self);
    }
}

void
ufo_link_send_now (ufo_link_t *self, const char *type, ufo_value_t **body_p)
{
    char id [24];
    snprintf (id, sizeof id, "x%" PRIu64, ++self->counter);
    s_send (self, type, id, *body_p);
    ufo_value_destroy (body_p);
}

void
ufo_link_default_name (char *out, size_t size, const char *prefix)
{
    char host [128] = "localhost";
    gethostname (host, sizeof host - 1);
    host [sizeof host - 1] = 0;
    snprintf (out, size, "%s@%s:%d", prefix, host, (int) getpid ());
}
