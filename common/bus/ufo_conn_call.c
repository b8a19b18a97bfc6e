/*  ufo_conn_call.c - blackboard calls on the one broker connection (ufo_conn.h): sent in
    order, answered from the loop, timed out by their deadlines, late replies dropped; the
    blocking helpers for code without a loop; board reads with their screenshots' images. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_conn.h"
#include "ufo_conn_int.h"

//  --- Blackboard calls --------------------------------------------------------------------------

static void
s_call_free (conn_call_t *c)
{
    free (c->type);
    ufo_value_destroy (&c->body);
    free (c->frame);
    c->type = NULL;
    c->frame = NULL;
}

//  Removes call i from the table and runs its callback with the outcome (the callback may
//  make new calls).
static void
s_call_end (ufo_conn_t *self, size_t i, bool ok, ufo_value_t **body_p, const void *data, size_t len,
            int code, const char *message)
{
    conn_call_t c = self->calls [i];
    memmove (self->calls + i, self->calls + i + 1, (self->ncalls - i - 1) * sizeof *self->calls);
    self->ncalls--;
    ufo_conn_reply_t reply = { .id = c.id, .ok = ok, .body_p = ok ? body_p : NULL, .data = data, .len = len };
    ufo_error_clear (&reply.err);
    if (!ok)
        ufo_error_set (&reply.err, code, "%s: %s", c.type, message);
    self->news = true;
    if (c.fn)
        c.fn (c.arg, &reply);
    else
    if (!ok && !c.forgotten)
        ufo_warn ("%s: %s", self->name, reply.err.message);
    s_call_free (&c);
}

void
conn_on_call (void *owner, const char *id, bool ok, ufo_value_t **body_p, const void *data, size_t len)
{
    ufo_conn_t *self = owner;
    for (size_t i = 0; i < self->ncalls; i++)
        if (self->calls [i].sent && strcmp (self->calls [i].wire_id, id) == 0) {
            if (ok)
                s_call_end (self, i, true, body_p, data, len, 0, NULL);
            else {
                const char *code = ufo_value_map_str (*body_p, "code", "internal");
                int value = UFO_E_INTERNAL;
                for (int k = 1; k < UFO_E_COUNT; k++)
                    if (strcmp (ufo_errcode_name (k), code) == 0)
                        value = k;
                char message [512];
                snprintf (message, sizeof message, "broker: %s", ufo_value_map_str (*body_p, "message", "error"));
                s_call_end (self, i, false, NULL, NULL, 0, value, message);
            }
            return;
        }
    ufo_info ("%s: late reply to blackboard call %s (timed out or forgotten) dropped", self->name, id);
}

void
conn_calls_fail_sent (ufo_conn_t *self, int code, const char *message)
{
    for (size_t i = 0; i < self->ncalls;)
        if (self->calls [i].sent)
            s_call_end (self, i, false, NULL, NULL, 0, code, message);
        else
            i++;
}

//  Sends what waits, in order: a call that cannot go holds back those after it.
static void
s_calls_send (ufo_conn_t *self)
{
    for (size_t i = 0; i < self->ncalls; i++) {
        conn_call_t *c = &self->calls [i];
        if (c->sent)
            continue;
        if (!ufo_link_send_call (self->link, c->type, c->wire_id, c->body, c->frame, c->frame_len))
            break;
        c->sent = true;
        ufo_value_destroy (&c->body);
        free (c->frame);
        c->frame = NULL;
    }
}

//  Sends what waits, ends calls whose time is up. Returns ms until the nearest call
//  deadline (-1: none).
int
conn_calls_service (ufo_conn_t *self)
{
    s_calls_send (self);
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->ncalls;) {
        if (self->calls [i].deadline <= now) {
            char message [160];
            snprintf (message, sizeof message, "no reply from the broker in time%s",
                      self->calls [i].sent ? "" : " (not sent: no connection)");
            s_call_end (self, i, false, NULL, NULL, 0, UFO_E_TIMEOUT, message);
            i = 0;                      //  the callback may have changed the table
            continue;
        }
        i++;
    }
    int wait = -1;
    now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->ncalls; i++) {
        int64_t left = self->calls [i].deadline - now;
        if (!self->calls [i].sent && ufo_link_socket (self->link))
            left = left > 10 ? 10 : left;       //  the socket was full: try again soon
        int l = left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int) left;
        if (wait < 0 || l < wait)
            wait = l;
    }
    return wait;
}

//  --- Blackboard call API ----------------------------------------------------------------------------

uint64_t
ufo_conn_call (ufo_conn_t *self, const char *type, ufo_value_t **body_p, const void *frame, size_t frame_len,
               int timeout_ms, ufo_conn_call_fn *fn, void *arg)
{
    assert (self && type);
    if (self->ncalls == self->cap_calls) {
        self->cap_calls = self->cap_calls ? self->cap_calls * 2 : 16;
        self->calls = ufo_realloc (self->calls, self->cap_calls * sizeof *self->calls);
    }
    conn_call_t *c = &self->calls [self->ncalls++];
    memset (c, 0, sizeof *c);
    c->id = ++self->call_counter;
    snprintf (c->wire_id, sizeof c->wire_id, "b%" PRIu64, c->id);
    c->type = ufo_strdup (type);
    c->body = body_p && *body_p ? *body_p : ufo_value_new_map ();
    if (body_p)
        *body_p = NULL;
    if (frame) {
        c->frame = ufo_malloc (frame_len ? frame_len : 1);
        memcpy (c->frame, frame, frame_len);
        c->frame_len = frame_len;
    }
    c->deadline = ufo_time_mono_ms () + (timeout_ms > 0 ? timeout_ms : self->call_timeout_ms);
    c->fn = fn;
    c->arg = arg;
    uint64_t id = c->id;
    int timeout = (int) (c->deadline - ufo_time_mono_ms ());
    //  out at once when the socket takes it (keeps the order: earlier unsent calls go first)
    s_calls_send (self);
    if (self->calls [self->ncalls - 1].id == id && !self->calls [self->ncalls - 1].sent)
        timeout = 10;                   //  not out yet: try again soon
    if (timeout < self->wait_ms || self->wait_ms < 0)
        self->wait_ms = timeout < 0 ? 0 : timeout;
    return id;
}

void
ufo_conn_call_forget (ufo_conn_t *self, uint64_t id)
{
    assert (self);
    for (struct conn_snap_t_ *s = self->snaps; s; s = s->next)
        if (s->id == id) {
            s->forgotten = true;        //  its calls finish and free it
            return;
        }
    for (size_t i = 0; i < self->ncalls; i++)
        if (self->calls [i].id == id) {
            self->calls [i].fn = NULL;
            //  a forgotten call that is not out yet need not go at all
            if (!self->calls [i].sent) {
                s_call_free (&self->calls [i]);
                memmove (self->calls + i, self->calls + i + 1, (self->ncalls - i - 1) * sizeof *self->calls);
                self->ncalls--;
            }
            else {                      //  its reply is dropped like a late one
                self->calls [i].arg = NULL;
                self->calls [i].forgotten = true;
            }
            break;
        }
}

size_t
ufo_conn_calls_pending (ufo_conn_t *self)
{
    assert (self);
    return self->ncalls;
}

typedef struct {
    bool done;
    ufo_value_t *body;
    char *data;
    size_t len;
    ufo_error_t err;
} s_wait_t;

static void
s_on_wait (void *arg, ufo_conn_reply_t *reply)
{
    s_wait_t *w = arg;
    w->done = true;
    if (reply->ok) {
        w->body = *reply->body_p;
        *reply->body_p = NULL;
        if (reply->data) {
            w->data = ufo_malloc (reply->len + 1);
            memcpy (w->data, reply->data, reply->len);
            w->data [reply->len] = 0;
            w->len = reply->len;
        }
    }
    else
        w->err = reply->err;
}

ufo_value_t *
ufo_conn_call_wait (ufo_conn_t *self, const char *type, ufo_value_t **body_p, const void *frame,
                    size_t frame_len, int timeout_ms, char **data_p, size_t *len_p, ufo_error_t *err)
{
    assert (self && type);
    s_wait_t w = { 0 };
    ufo_conn_call (self, type, body_p, frame, frame_len, timeout_ms, s_on_wait, &w);
    //  the call's own deadline ends it (with UFO_E_TIMEOUT) at the latest
    while (!w.done)
        conn_serve_once (self, 1000);
    if (!w.body) {
        if (err)
            *err = w.err;
        return NULL;
    }
    if (data_p) {
        *data_p = w.data;
        if (len_p)
            *len_p = w.len;
    }
    else
        free (w.data);
    return w.body;
}

int
ufo_conn_flush (ufo_conn_t *self, int timeout_ms)
{
    assert (self);
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    for (;;) {
        bool busy = self->ncalls > 0 || (ufo_link_up (self->link) && ufo_link_pending (self->link) > 0);
        int64_t left = until - ufo_time_mono_ms ();
        if (!busy)
            return 0;
        if (left <= 0)
            return -1;
        conn_serve_once (self, left > 20 ? 20 : (int) left);
    }
}

//  --- Reading a board, screenshots included ----------------------------------------------------------


static void
s_snap_unlink (ufo_conn_t *self, conn_snap_t *s)
{
    for (conn_snap_t **p = &self->snaps; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    ufo_value_destroy (&s->reply);
    free (s->gets);
    free (s);
}


static void
s_snap_done (conn_snap_t *s)
{
    ufo_conn_t *self = s->conn;
    if (!s->forgotten && s->fn) {
        ufo_conn_reply_t reply = { .id = s->id, .ok = true, .body_p = &s->reply };
        ufo_error_clear (&reply.err);
        s->fn (s->arg, &reply);
    }
    s_snap_unlink (self, s);
}

typedef struct {
    conn_snap_t *snap;
    size_t index;                       //  into the reply's screenshots
} s_get_t;

static void
s_on_blob (void *arg, ufo_conn_reply_t *reply)
{
    s_get_t *g = arg;
    conn_snap_t *s = g->snap;
    ufo_value_t *shots = ufo_value_map_get (ufo_value_map_get (s->reply, "board"), "screenshots");
    ufo_value_t *item = ufo_value_list_at (shots, g->index);
    if (reply->ok && reply->data && item) {
        const char *mime = ufo_value_map_str (item, "mime", ufo_board_image_mime (ufo_value_map_str (item, "image_path", NULL)));
        ufo_buf_t buf = { 0 };
        ufo_buf_printf (&buf, "data:%s;base64,", mime);
        ufo_buf_base64 (&buf, reply->data, reply->len);
        ufo_value_t *v = ufo_value_new_string (buf.data ? buf.data : "");
        ufo_buf_free (&buf);
        ufo_value_map_set (item, "image_str", &v);
    }
    else
        ufo_warn ("board: screenshot %s could not be fetched: %s", ufo_value_map_str (item, "blob", "?"),
                  reply->ok ? "the reply has no data" : reply->err.message);
    free (g);
    if (--s->waiting == 0)
        s_snap_done (s);
}

static void
s_on_snapshot (void *arg, ufo_conn_reply_t *reply)
{
    conn_snap_t *s = arg;
    ufo_conn_t *self = s->conn;
    if (!reply->ok) {
        if (!s->forgotten && s->fn)
            s->fn (s->arg, reply);
        s_snap_unlink (self, s);
        return;
    }
    s->reply = *reply->body_p;
    *reply->body_p = NULL;
    ufo_value_t *shots = ufo_value_map_get (ufo_value_map_get (s->reply, "board"), "screenshots");
    if (s->gets) {                      //  images wanted: fetch the screenshots' blobs
        free (s->gets);
        s->gets = NULL;
        for (size_t i = 0; i < ufo_value_size (shots); i++) {
            ufo_value_t *item = ufo_value_list_at (shots, i);
            const char *blob = ufo_value_map_str (item, "blob", NULL);
            if (ufo_value_type (item) != UFO_TMAP || !blob || ufo_value_map_has (item, "image_str"))
                continue;
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "blob", blob);
            s_get_t *g = ufo_malloc (sizeof *g);
            g->snap = s;
            g->index = i;
            s->gets = ufo_realloc (s->gets, (s->ngets + 1) * sizeof *s->gets);
            s->waiting++;
            s->gets [s->ngets++] = ufo_conn_call (self, "blob.get", &body, NULL, 0, s->timeout_ms, s_on_blob, g);
        }
    }
    if (s->waiting == 0)
        s_snap_done (s);
}

uint64_t
ufo_conn_snapshot (ufo_conn_t *self, const char *board, uint64_t after, bool images, int timeout_ms,
                   ufo_conn_call_fn *fn, void *arg)
{
    assert (self && board);
    conn_snap_t *s = ufo_calloc (1, sizeof *s);
    s->conn = self;
    s->fn = fn;
    s->arg = arg;
    s->timeout_ms = timeout_ms;
    if (images)
        s->gets = ufo_calloc (1, sizeof *s->gets);      //  a marker: fetch images
    s->next = self->snaps;
    self->snaps = s;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_map_set_int (body, "after", (int64_t) after);
    s->id = ufo_conn_call (self, "bb.snapshot", &body, NULL, 0, timeout_ms, s_on_snapshot, s);
    return s->id;
}

void
conn_calls_close (ufo_conn_t *self)
{
    for (conn_snap_t *s = self->snaps; s; s = s->next)
        if (!s->forgotten && s->reply && s->fn) {     //  fetching its screenshots: cancelled
            ufo_conn_reply_t reply = { .id = s->id, .ok = false };
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "bb.snapshot: the connection was closed");
            s->fn (s->arg, &reply);
            s->forgotten = true;
        }
    while (self->ncalls > 0)
        s_call_end (self, 0, false, NULL, NULL, 0, UFO_E_CANCELLED, "the connection was closed");
    while (self->snaps)
        s_snap_unlink (self, self->snaps);
}
