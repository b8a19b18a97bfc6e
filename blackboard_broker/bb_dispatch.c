/*  bb_dispatch.c - task dispatch: requests from workers and submitters, matching, the task
    state machine, liveness. See bb_dispatch.h and docs/PROTOCOL.md section 3. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_hex.h"
#include "ufo_log.h"
#include "ufo_msgpack.h"
#include "ufo_task_proto.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "ufo_cert.h"
#include "bb_dispatch_int.h"


//  --- Output --------------------------------------------------------------------------

//  Encodes an envelope into self->buf. again: the same id and time stamp as the previous one
//  (the published copy of a logged event).
static void
s_envelope_as (bb_dispatch_t *self, const char *type, const ufo_value_t *body, bool again)
{
    if (!again) {
        memcpy (self->last_id, self->id_prefix, 16);
        uint64_t n = ++self->msg_counter;
        ufo_hex_u64 (n, self->last_id + 16);
        self->last_id [32] = 0;
        self->last_us = ufo_time_now_us ();
    }
    ufo_buf_reset (&self->buf);
    ufo_bb_envelope_head_at (&self->buf, type, self->last_id, "ufo-broker", self->last_us);
    if (body)
        ufo_msgpack_append (&self->buf, body);
    else
        ufo_bb_mp_map (&self->buf, 0);
}

static void
s_envelope (bb_dispatch_t *self, const char *type, const ufo_value_t *body)
{
    s_envelope_as (self, type, body, false);
}

//  Starts an event body: {"seq": next global seq, "prev": previous dispatch event}.
ufo_value_t *
bbd_ev_new (bb_dispatch_t *self)
{
    uint64_t seq = self->host.next_seq (self->host.arg);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "seq", (int64_t) seq);
    ufo_value_map_set_int (body, "prev", (int64_t) self->last_seq);
    self->last_seq = seq;
    return body;
}

//  Logs and publishes an event under dispatch/<kind>/<service>.
void
bbd_ev_emit (bb_dispatch_t *self, const char *type, const char *kind, const char *service,
           ufo_value_t **body_p)
{
    s_envelope (self, type, *body_p);
    ufo_value_destroy (body_p);
    char topic [UFO_TASK_NAME_MAX + 32];
    ufo_task_topic (topic, sizeof topic, kind, service);
    self->host.log (self->host.arg, self->buf.data, self->buf.len);
    self->host.publish (self->host.arg, topic, self->buf.data, self->buf.len);
}

//  Logs a task event as it is and publishes it with its "body" and "result" sealed to the
//  task's submitter (cfg.seal_bodies, CURVE on): on the bus they are nil, and
//  "sealed_body" / "sealed_result" hold them (msgpack) in a box only the submitter's secret
//  key opens (ufo_cert_seal). Without a submitter key (a task from an older log) they are
//  only removed. docs/PROTOCOL.md 3.6.
void
bbd_ev_emit_task (bb_dispatch_t *self, const char *type, const s_task_t *t, ufo_value_t **body_p)
{
    if (!self->cfg.seal_bodies) {
        bbd_ev_emit (self, type, "task", t->service, body_p);
        return;
    }
    ufo_value_t *ev = *body_p;
    *body_p = NULL;
    s_envelope (self, type, ev);
    self->host.log (self->host.arg, self->buf.data, self->buf.len);
    const char *key = strncmp (t->scope, "key:", 4) == 0 ? t->scope + 4 : NULL;
    static const char *const fields [][2] = { { "body", "sealed_body" }, { "result", "sealed_result" } };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++) {
        const ufo_value_t *v = ufo_value_map_get (ev, fields [i][0]);
        if (!v || ufo_value_type (v) == UFO_TNULL)
            continue;
        ufo_buf_t plain = { 0 }, sealed = { 0 };
        ufo_msgpack_append (&plain, v);
        ufo_error_t err;
        if (key && ufo_cert_seal (key, plain.data, plain.len, &sealed, &err) == 0) {
            ufo_buf_putc (&sealed, 0);
            ufo_value_map_set_str (ev, fields [i][1], sealed.data);
        }
        ufo_value_map_set_null (ev, fields [i][0]);
        ufo_buf_free (&plain);
        ufo_buf_free (&sealed);
    }
    s_envelope_as (self, type, ev, true);
    ufo_value_destroy (&ev);
    char topic [UFO_TASK_NAME_MAX + 32];
    ufo_task_topic (topic, sizeof topic, "task", t->service);
    self->host.publish (self->host.arg, topic, self->buf.data, self->buf.len);
}

void
bbd_reply_ok (bb_dispatch_t *self, const char *id, ufo_value_t **body_p)
{
    ufo_buf_reset (&self->buf);
    ufo_bb_encode_ok (&self->buf, id, body_p);
    self->host.reply (self->host.arg, self->buf.data, self->buf.len);
}

void
bbd_reply_error (bb_dispatch_t *self, const ufo_task_request_t *req, int code, const char *message)
{
    self->errors++;
    ufo_warn ("dispatch request %s%s%s rejected: %s: %s", req->type_name, *req->id ? " id=" : "",
              req->id, ufo_errcode_name (code), message);
    ufo_buf_reset (&self->buf);
    ufo_bb_encode_error (&self->buf, req->id, code, message);
    self->host.reply (self->host.arg, self->buf.data, self->buf.len);
}

//  Sends a message to the requester after its reply (queued with it, so it cannot overtake).
void
bbd_reply_msg (bb_dispatch_t *self, const char *type, ufo_value_t **body_p)
{
    s_envelope (self, type, *body_p);
    ufo_value_destroy (body_p);
    self->host.reply (self->host.arg, self->buf.data, self->buf.len);
}

void
bbd_send (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, const char *type, ufo_value_t **body_p)
{
    s_envelope (self, type, *body_p);
    ufo_value_destroy (body_p);
    self->host.send (self->host.arg, peer, peer_len, self->buf.data, self->buf.len);
}

//  --- Peers -----------------------------------------------------------------------------

s_worker_t *
bbd_worker_find (bb_dispatch_t *self, const char *id)
{
    for (size_t i = 0; i < self->nworkers; i++)
        if (strcmp (self->workers [i]->id, id) == 0)
            return self->workers [i];
    return NULL;
}

s_client_t *
bbd_client_find (bb_dispatch_t *self, const char *id)
{
    for (size_t i = 0; i < self->nclients; i++)
        if (strcmp (self->clients [i]->id, id) == 0)
            return self->clients [i];
    return NULL;
}

s_client_t *
bbd_client_touch (bb_dispatch_t *self, const char *id, const char *name, const void *peer,
                size_t peer_len, bool *known_p)
{
    s_client_t *c = bbd_client_find (self, id);
    if (known_p)
        *known_p = c != NULL;
    if (!c) {
        if (self->nclients == self->cap_clients) {
            self->cap_clients = self->cap_clients ? self->cap_clients * 2 : 16;
            self->clients = ufo_realloc (self->clients, self->cap_clients * sizeof *self->clients);
        }
        c = ufo_calloc (1, sizeof *c);
        snprintf (c->id, sizeof c->id, "%s", id);
        c->ivl_ms = self->cfg.heartbeat_ivl_ms;
        c->liveness = self->cfg.heartbeat_liveness;
        self->clients [self->nclients++] = c;
    }
    if (name && *name)
        snprintf (c->name, sizeof c->name, "%s", name);
    memcpy (c->peer, peer, peer_len);
    c->peer_len = peer_len;
    c->last_seen_ms = ufo_time_mono_ms ();
    return c;
}

void
bbd_to_client (bb_dispatch_t *self, const char *client, const char *type, ufo_value_t **body_p)
{
    s_client_t *c = bbd_client_find (self, client);
    if (c)
        bbd_send (self, c->peer, c->peer_len, type, body_p);
    else
        ufo_value_destroy (body_p);     //  kept for task.fetch
}

void
bbd_stale_add (s_worker_t *w, const char *task)
{
    if (w->nstale == w->cap_stale) {
        w->cap_stale = w->cap_stale ? w->cap_stale * 2 : 4;
        w->stale = ufo_realloc (w->stale, w->cap_stale * sizeof *w->stale);
    }
    snprintf (w->stale [w->nstale++], sizeof w->stale [0], "%s", task);
}

bool
bbd_stale_remove (s_worker_t *w, const char *task)
{
    for (size_t i = 0; i < w->nstale; i++)
        if (strcmp (w->stale [i], task) == 0) {
            memmove (w->stale + i, w->stale + i + 1, (w->nstale - i - 1) * sizeof *w->stale);
            w->nstale--;
            return true;
        }
    return false;
}

void
bbd_worker_untask (s_worker_t *w, s_task_t *t)
{
    for (size_t i = 0; i < w->ntasks; i++)
        if (w->tasks [i] == t) {
            w->tasks [i] = w->tasks [--w->ntasks];
            return;
        }
}

static bool
s_worker_free (const s_worker_t *w)
{
    return (int64_t) (w->ntasks + w->nstale) < w->capacity;
}

//  --- State machine -------------------------------------------------------------------

void
bbd_depths (bb_dispatch_t *self, ufo_value_t *body, const char *service)
{
    s_service_t *svc = bbd_service (self, service, false);
    ufo_value_map_set_int (body, "queued", svc ? (int64_t) svc->queued : 0);
    ufo_value_map_set_int (body, "running", svc ? (int64_t) svc->running : 0);
}

void
bbd_common (ufo_value_t *body, const s_task_t *t)
{
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "service", t->service);
    ufo_value_map_set_str (body, "session", t->session);
}

//  Ends a task (queued or running; the caller has taken it off its worker).
void
bbd_finish (bb_dispatch_t *self, s_task_t *t, int state, const char *reason, ufo_value_t **result_p)
{
    if (t->state == S_QUEUED)
        bbd_dequeue (t);
    else
    if (t->state == S_RUNNING) {
        s_service_t *svc = bbd_service (self, t->service, false);
        if (svc && svc->running > 0)
            svc->running--;
    }
    t->state = state;
    snprintf (t->reason, sizeof t->reason, "%s", reason ? reason : "");
    ufo_value_destroy (&t->result);
    t->result = result_p && *result_p ? *result_p : ufo_value_new_null ();
    if (result_p)
        *result_p = NULL;
    ufo_value_destroy (&t->body);
    if (state == S_DONE)
        self->completed++;
    else
    if (state == S_FAILED)
        self->failed++;
    else
        self->cancelled++;
    const char *status = bbd_state_name (state);
    ufo_value_t *ev = bbd_ev_new (self);
    bbd_common (ev, t);
    ufo_value_map_set_str (ev, "status", status);
    ufo_value_map_set_str (ev, "reason", t->reason);
    ufo_value_map_set_int (ev, "attempts", t->attempts);
    ufo_value_map_set_str (ev, "worker", t->worker);
    ufo_value_map_set_str (ev, "worker_name", t->worker_name);
    ufo_value_map_set_copy (ev, "result", t->result);
    bbd_depths (self, ev, t->service);
    char type [32];
    snprintf (type, sizeof type, "task.%s", status);
    bbd_ev_emit_task (self, type, t, &ev);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "task", t->id);
    ufo_value_map_set_str (msg, "status", status);
    ufo_value_map_set_str (msg, "reason", t->reason);
    ufo_value_map_set_int (msg, "attempts", t->attempts);
    ufo_value_map_set_copy (msg, "body", t->result);
    bbd_to_client (self, t->client, UFO_TASK_MSG_RESULT, &msg);
    bbd_finished_push (self, t);
}

//  A running task lost its worker: back to the queue (attempt + 1 at the next delivery),
//  or failed after max_attempts, or cancelled if that was asked.
void
bbd_requeue (bb_dispatch_t *self, s_task_t *t, const char *reason)
{
    if (t->cancel_requested) {
        bbd_finish (self, t, S_CANCELLED, "cancelled (its worker was lost before confirming)", NULL);
        return;
    }
    if (t->attempts >= t->max_attempts) {
        char why [256];
        snprintf (why, sizeof why, "%s; gave up after %" PRId64 " attempt%s", reason, t->attempts,
                  t->attempts == 1 ? "" : "s");
        bbd_finish (self, t, S_FAILED, why, NULL);
        return;
    }
    s_service_t *svc = bbd_service (self, t->service, false);
    if (svc && svc->running > 0)
        svc->running--;
    if (t->bound && !t->confirmed) {
        //  its worker never showed it had it (no heartbeat listed it, no progress): it did not
        //  start there, so it is free to start on any device again
        t->bound = t->has_device = false;
        t->device [0] = 0;
    }
    t->state = S_QUEUED;
    self->requeued++;
    bbd_enqueue (self, t);
    ufo_value_t *ev = bbd_ev_new (self);
    bbd_common (ev, t);
    ufo_value_map_set_int (ev, "attempt", t->attempts);
    ufo_value_map_set_str (ev, "worker", t->worker);
    ufo_value_map_set_str (ev, "worker_name", t->worker_name);
    ufo_value_map_set_str (ev, "reason", reason);
    if (t->has_device)
        ufo_value_map_set_str (ev, "device", t->device);
    else
        ufo_value_map_set_null (ev, "device");
    bbd_depths (self, ev, t->service);
    bbd_ev_emit (self, "task.requeued", "task", t->service, &ev);
}

//  Desktop work (sessions, service "host", and application subtasks, "app:*") belongs to
//  the device it started on: a task submitted without a device takes its first worker's, so
//  a requeue waits for a worker of that device (docs/PROTOCOL.md 4).
static void
s_bind_device (s_task_t *t, const s_worker_t *w)
{
    if (t->has_device || !w->has_device
    ||  (strcmp (t->service, "host") != 0 && strncmp (t->service, "app:", 4) != 0))
        return;
    snprintf (t->device, sizeof t->device, "%s", w->device);
    t->has_device = true;
    t->bound = true;
    t->confirmed = false;
    ufo_info ("dispatch: task %s (%s) is bound to device %s, where it started", t->id, t->service, t->device);
}

static void
s_assign (bb_dispatch_t *self, s_worker_t *w, s_task_t *t)
{
    bbd_dequeue (t);
    s_bind_device (t, w);
    t->state = S_RUNNING;
    t->attempts++;
    t->progress_n = 0;
    t->assigned_ms = ufo_time_mono_ms ();
    t->missed = 0;
    snprintf (t->worker, sizeof t->worker, "%s", w->id);
    snprintf (t->worker_name, sizeof t->worker_name, "%s", w->name);
    snprintf (t->worker_key, sizeof t->worker_key, "%s", w->key);
    w->tasks [w->ntasks++] = t;
    w->stamp = ++self->stamp;
    bbd_service (self, t->service, true)->running++;
    ufo_value_t *ev = bbd_ev_new (self);
    bbd_common (ev, t);
    ufo_value_map_set_str (ev, "worker", w->id);
    ufo_value_map_set_str (ev, "worker_name", w->name);
    ufo_value_map_set_int (ev, "attempt", t->attempts);
    if (t->has_device)
        ufo_value_map_set_str (ev, "device", t->device);
    else
        ufo_value_map_set_null (ev, "device");
    bbd_depths (self, ev, t->service);
    bbd_ev_emit (self, "task.assigned", "task", t->service, &ev);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "task", t->id);
    ufo_value_map_set_str (msg, "service", t->service);
    if (t->has_device)
        ufo_value_map_set_str (msg, "device", t->device);
    else
        ufo_value_map_set_null (msg, "device");
    ufo_value_map_set_int (msg, "attempt", t->attempts);
    ufo_value_map_set_int (msg, "max_attempts", t->max_attempts);
    ufo_value_map_set_int (msg, "deadline_us", t->deadline_us);
    //  the time left by the broker's clock: workers time it with their own monotonic clock
    //  (no decision may compare wall clocks of two hosts)
    int64_t left_ms = t->deadline_us > 0 ? (t->deadline_us - ufo_time_now_us ()) / 1000 : 0;
    ufo_value_map_set_int (msg, "deadline_in_ms", t->deadline_us > 0 ? (left_ms > 1 ? left_ms : 1) : 0);
    ufo_value_map_set_str (msg, "session", t->session);
    ufo_value_map_set_str (msg, "submitter", t->submitter);
    ufo_value_map_set_copy (msg, "body", t->body);
    bbd_send (self, w->peer, w->peer_len, UFO_TASK_MSG_ASSIGN, &msg);
}

static bool
s_device_ok (const s_worker_t *w, const s_task_t *t)
{
    return !t->has_device || (w->has_device && strcmp (w->device, t->device) == 0);
}

//  The oldest queued task this worker may run, or NULL.
static s_task_t *
s_oldest_for (bb_dispatch_t *self, const s_worker_t *w)
{
    s_task_t *best = NULL;
    for (size_t i = 0; i < self->nservices; i++) {
        s_service_t *svc = self->services [i];
        if (!svc->head || !ufo_task_service_match (w->service, svc->name))
            continue;
        for (s_task_t *t = svc->head; t; t = t->qnext)
            if (s_device_ok (w, t)) {
                if (!best || t->order < best->order)
                    best = t;
                break;
            }
    }
    return best;
}

//  Gives queued tasks to free workers: the free worker that has waited longest takes the
//  oldest task it can run, until no assignment is possible.
void
bbd_pump (bb_dispatch_t *self)
{
    for (;;) {
        s_worker_t *best_w = NULL;
        s_task_t *best_t = NULL;
        for (size_t i = 0; i < self->nworkers; i++) {
            s_worker_t *w = self->workers [i];
            if (!s_worker_free (w) || (best_w && w->stamp > best_w->stamp))
                continue;
            s_task_t *t = s_oldest_for (self, w);
            if (t) {
                best_w = w;
                best_t = t;
            }
        }
        if (!best_w)
            return;
        s_assign (self, best_w, best_t);
    }
}

void
bbd_worker_event (bb_dispatch_t *self, const char *type, s_worker_t *w, const char *reason,
                ufo_value_t **requeued_p)
{
    ufo_value_t *ev = bbd_ev_new (self);
    ufo_value_map_set_str (ev, "worker", w->id);
    ufo_value_map_set_str (ev, "name", w->name);
    ufo_value_map_set_str (ev, "service", w->service);
    if (w->has_device)
        ufo_value_map_set_str (ev, "device", w->device);
    else
        ufo_value_map_set_null (ev, "device");
    ufo_value_map_set_int (ev, "capacity", w->capacity);
    if (reason)
        ufo_value_map_set_str (ev, "reason", reason);
    if (requeued_p)
        ufo_value_map_set (ev, "tasks", requeued_p);
    bbd_ev_emit (self, type, "worker", w->service, &ev);
}

//  Removes a worker; its tasks go back to the queue.
void
bbd_worker_drop (bb_dispatch_t *self, s_worker_t *w, const char *type, const char *reason)
{
    ufo_value_t *ids = ufo_value_new_list ();
    for (size_t i = 0; i < w->ntasks; i++)
        ufo_value_list_push_str (ids, w->tasks [i]->id);
    bbd_worker_event (self, type, w, reason, &ids);
    while (w->ntasks > 0) {
        s_task_t *t = w->tasks [--w->ntasks];
        char why [200];
        snprintf (why, sizeof why, "worker %s %s", *w->name ? w->name : w->id, reason);
        bbd_requeue (self, t, why);
    }
    for (size_t i = 0; i < self->nworkers; i++)
        if (self->workers [i] == w) {
            self->workers [i] = self->workers [--self->nworkers];
            break;
        }
    free (w->tasks);
    free (w->stale);
    free (w);
}

//  Requeues the tasks that were running when the broker stopped (once, after replay).
static void
s_recover_one (bb_dispatch_t *self, s_task_t *t, void *arg)
{
    s_task_t ***cursor = (s_task_t ***) arg;
    UFO_UNUSED (self);
    if (t->state == S_RUNNING)
        *(*cursor)++ = t;
}

void
bbd_recover (bb_dispatch_t *self)
{
    if (self->recovered)
        return;
    self->recovered = true;
    s_task_t **running = ufo_malloc ((self->ntasks + 1) * sizeof *running);
    s_task_t **cursor = running;
    bbd_task_each (self, s_recover_one, &cursor);
    size_t n = (size_t) (cursor - running);
    for (size_t i = 0; i < n; i++) {
        running [i]->confirmed = true;      //  unknown: it may have started, so it keeps its device
        bbd_service (self, running [i]->service, true)->running++;
        bbd_requeue (self, running [i], "the broker restarted while it ran");
    }
    free (running);
    if (n)
        ufo_info ("dispatch: %zu task(s) that were running at the last stop requeued", n);
}

void
bbd_to_worker_input (bb_dispatch_t *self, s_task_t *t, const char *kind, ufo_value_t **body_p)
{
    s_worker_t *w = bbd_worker_find (self, t->worker);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "task", t->id);
    ufo_value_map_set_str (msg, "kind", kind);
    if (body_p && *body_p)
        ufo_value_map_set (msg, "body", body_p);
    else
        ufo_value_map_set_null (msg, "body");
    if (w)
        bbd_send (self, w->peer, w->peer_len, UFO_TASK_MSG_INPUT, &msg);
    else
        ufo_value_destroy (&msg);
}

void
bb_dispatch_tick (bb_dispatch_t *self)
{
    bbd_recover (self);
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->nworkers;) {
        s_worker_t *w = self->workers [i];
        int64_t silent = now - w->last_seen_ms;
        if (silent > w->ivl_ms * w->liveness) {
            char why [128];
            snprintf (why, sizeof why, "lost (no heartbeat for %" PRId64 " ms)", silent);
            bbd_worker_drop (self, w, "worker.lost", why);
        }
        else
            i++;
    }
    for (size_t i = 0; i < self->nclients;) {
        s_client_t *c = self->clients [i];
        if (now - c->last_seen_ms > 10 * c->ivl_ms * c->liveness) {
            self->clients [i] = self->clients [--self->nclients];
            free (c);
        }
        else
            i++;
    }
    //  Deadlines: queued tasks fail; running ones are cancelled on their worker and fail
    //  (a result that still comes is discarded).
    int64_t now_us = ufo_time_now_us ();
    for (size_t i = 0; i < self->nservices; i++)
        for (s_task_t *t = self->services [i]->head, *next; t; t = next) {
            next = t->qnext;
            if (t->deadline_us > 0 && now_us > t->deadline_us) {
                char why [200];
                snprintf (why, sizeof why, "deadline passed after %" PRId64 " ms with no worker of '%s' free",
                          (now_us - t->submitted_us) / 1000, t->service);
                bbd_finish (self, t, S_FAILED, why, NULL);
            }
        }
    for (size_t i = 0; i < self->nworkers; i++) {
        s_worker_t *w = self->workers [i];
        for (size_t j = 0; j < w->ntasks;) {
            s_task_t *t = w->tasks [j];
            if (t->deadline_us > 0 && now_us > t->deadline_us) {
                bbd_to_worker_input (self, t, "cancel", NULL);
                bbd_worker_untask (w, t);
                bbd_stale_add (w, t->id);
                bbd_finish (self, t, S_FAILED, "deadline passed while it ran", NULL);
            }
            else
                j++;
        }
    }
    bbd_evict (self);
    bbd_pump (self);
}

bb_dispatch_t *
bb_dispatch_new (const bb_dispatch_config_t *config, const bb_dispatch_host_t *host)
{
    bb_dispatch_t *self = ufo_calloc (1, sizeof *self);
    self->cfg = *config;
    self->started_ms = ufo_time_mono_ms ();
    if (self->cfg.heartbeat_ivl_ms <= 0)
        self->cfg.heartbeat_ivl_ms = 1000;
    if (self->cfg.heartbeat_liveness <= 0)
        self->cfg.heartbeat_liveness = 3;
    if (self->cfg.default_max_attempts <= 0)
        self->cfg.default_max_attempts = 3;
    if (self->cfg.max_message_bytes == 0)
        self->cfg.max_message_bytes = 16u << 20;
    self->host = *host;
    ufo_msg_new_id (self->id_prefix);
    return self;
}

void
bb_dispatch_destroy (bb_dispatch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_dispatch_t *self = *self_p;
    bbd_task_free_all (self);
    for (size_t i = 0; i < self->nservices; i++)
        free (self->services [i]);
    free (self->services);
    for (size_t i = 0; i < self->nworkers; i++) {
        free (self->workers [i]->tasks);
        free (self->workers [i]->stale);
        free (self->workers [i]);
    }
    free (self->workers);
    for (size_t i = 0; i < self->nclients; i++)
        free (self->clients [i]);
    free (self->clients);
    ufo_buf_free (&self->buf);
    free (self);
    *self_p = NULL;
}

void
bb_dispatch_stats (bb_dispatch_t *self, ufo_value_t *map)
{
    size_t queued = 0, running = 0;
    for (size_t i = 0; i < self->nservices; i++) {
        queued += self->services [i]->queued;
        running += self->services [i]->running;
    }
    ufo_value_map_set_int (map, "workers", (int64_t) self->nworkers);
    ufo_value_map_set_int (map, "clients", (int64_t) self->nclients);
    ufo_value_map_set_int (map, "tasks_queued", (int64_t) queued);
    ufo_value_map_set_int (map, "tasks_running", (int64_t) running);
    ufo_value_map_set_int (map, "tasks_submitted", (int64_t) self->submitted);
    ufo_value_map_set_int (map, "tasks_done", (int64_t) self->completed);
    ufo_value_map_set_int (map, "tasks_failed", (int64_t) self->failed);
    ufo_value_map_set_int (map, "tasks_cancelled", (int64_t) self->cancelled);
    ufo_value_map_set_int (map, "tasks_requeued", (int64_t) self->requeued);
    ufo_value_map_set_int (map, "results_discarded", (int64_t) self->discarded);
    ufo_value_map_set_int (map, "dispatch_errors", (int64_t) self->errors);
}
