/*  bb_dispatch.c - task dispatch: requests from workers and submitters, matching, the task
    state machine, liveness. See bb_dispatch.h and docs/PROTOCOL.md section 3. */
#include "ufo_prelude.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "bb_dispatch_int.h"

static void s_pump (bb_dispatch_t *self);

//  --- Output --------------------------------------------------------------------------

static void
s_envelope (bb_dispatch_t *self, const char *type, const ufo_value_t *body)
{
    char id [33];
    memcpy (id, self->id_prefix, 16);
    uint64_t n = ++self->msg_counter;
    static const char digits [] = "0123456789abcdef";
    for (int i = 0; i < 16; i++)
        id [16 + i] = digits [(n >> (60 - 4 * i)) & 15];
    id [32] = 0;
    ufo_buf_reset (&self->buf);
    ufo_bb_envelope_head (&self->buf, type, id, "ufo-broker");
    if (body)
        ufo_msgpack_append (&self->buf, body);
    else
        ufo_bb_mp_map (&self->buf, 0);
}

//  Starts an event body: {"seq": next global seq, "prev": previous dispatch event}.
static ufo_value_t *
s_ev_new (bb_dispatch_t *self)
{
    uint64_t seq = self->host.next_seq (self->host.arg);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "seq", (int64_t) seq);
    ufo_value_map_set_int (body, "prev", (int64_t) self->last_seq);
    self->last_seq = seq;
    return body;
}

//  Logs and publishes an event under dispatch/<kind>/<service>.
static void
s_ev_emit (bb_dispatch_t *self, const char *type, const char *kind, const char *service,
           ufo_value_t **body_p)
{
    s_envelope (self, type, *body_p);
    ufo_value_destroy (body_p);
    char topic [UFO_TASK_NAME_MAX + 32];
    ufo_task_topic (topic, sizeof topic, kind, service);
    self->host.log (self->host.arg, self->buf.data, self->buf.len);
    self->host.publish (self->host.arg, topic, self->buf.data, self->buf.len);
}

static void
s_reply_ok (bb_dispatch_t *self, const char *id, ufo_value_t **body_p)
{
    ufo_buf_reset (&self->buf);
    ufo_bb_encode_ok (&self->buf, id, body_p);
    self->host.reply (self->host.arg, self->buf.data, self->buf.len);
}

static void
s_reply_error (bb_dispatch_t *self, const ufo_task_request_t *req, int code, const char *message)
{
    self->errors++;
    ufo_warn ("dispatch request %s%s%s rejected: %s: %s", req->type_name, *req->id ? " id=" : "",
              req->id, ufo_errcode_name (code), message);
    ufo_buf_reset (&self->buf);
    ufo_bb_encode_error (&self->buf, req->id, code, message);
    self->host.reply (self->host.arg, self->buf.data, self->buf.len);
}

static void
s_send (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, const char *type, ufo_value_t **body_p)
{
    s_envelope (self, type, *body_p);
    ufo_value_destroy (body_p);
    self->host.send (self->host.arg, peer, peer_len, self->buf.data, self->buf.len);
}

//  --- Peers -----------------------------------------------------------------------------

static s_worker_t *
s_worker_find (bb_dispatch_t *self, const char *id)
{
    for (size_t i = 0; i < self->nworkers; i++)
        if (strcmp (self->workers [i]->id, id) == 0)
            return self->workers [i];
    return NULL;
}

static s_client_t *
s_client_find (bb_dispatch_t *self, const char *id)
{
    for (size_t i = 0; i < self->nclients; i++)
        if (strcmp (self->clients [i]->id, id) == 0)
            return self->clients [i];
    return NULL;
}

static s_client_t *
s_client_touch (bb_dispatch_t *self, const char *id, const char *name, const void *peer,
                size_t peer_len, bool *known_p)
{
    s_client_t *c = s_client_find (self, id);
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

static void
s_to_client (bb_dispatch_t *self, const char *client, const char *type, ufo_value_t **body_p)
{
    s_client_t *c = s_client_find (self, client);
    if (c)
        s_send (self, c->peer, c->peer_len, type, body_p);
    else
        ufo_value_destroy (body_p);     //  kept for task.fetch
}

static void
s_stale_add (s_worker_t *w, const char *task)
{
    if (w->nstale == w->cap_stale) {
        w->cap_stale = w->cap_stale ? w->cap_stale * 2 : 4;
        w->stale = ufo_realloc (w->stale, w->cap_stale * sizeof *w->stale);
    }
    snprintf (w->stale [w->nstale++], sizeof w->stale [0], "%s", task);
}

static bool
s_stale_remove (s_worker_t *w, const char *task)
{
    for (size_t i = 0; i < w->nstale; i++)
        if (strcmp (w->stale [i], task) == 0) {
            memmove (w->stale + i, w->stale + i + 1, (w->nstale - i - 1) * sizeof *w->stale);
            w->nstale--;
            return true;
        }
    return false;
}

static void
s_worker_untask (s_worker_t *w, s_task_t *t)
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

static void
s_depths (bb_dispatch_t *self, ufo_value_t *body, const char *service)
{
    s_service_t *svc = bbd_service (self, service, false);
    ufo_value_map_set_int (body, "queued", svc ? (int64_t) svc->queued : 0);
    ufo_value_map_set_int (body, "running", svc ? (int64_t) svc->running : 0);
}

static void
s_common (ufo_value_t *body, const s_task_t *t)
{
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "service", t->service);
    ufo_value_map_set_str (body, "session", t->session);
}

//  Ends a task (queued or running; the caller has taken it off its worker).
static void
s_finish (bb_dispatch_t *self, s_task_t *t, int state, const char *reason, ufo_value_t **result_p)
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
    ufo_value_t *ev = s_ev_new (self);
    s_common (ev, t);
    ufo_value_map_set_str (ev, "status", status);
    ufo_value_map_set_str (ev, "reason", t->reason);
    ufo_value_map_set_int (ev, "attempts", t->attempts);
    ufo_value_map_set_str (ev, "worker", t->worker);
    ufo_value_map_set_str (ev, "worker_name", t->worker_name);
    ufo_value_map_set_copy (ev, "result", t->result);
    s_depths (self, ev, t->service);
    char type [32];
    snprintf (type, sizeof type, "task.%s", status);
    s_ev_emit (self, type, "task", t->service, &ev);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "task", t->id);
    ufo_value_map_set_str (msg, "status", status);
    ufo_value_map_set_str (msg, "reason", t->reason);
    ufo_value_map_set_int (msg, "attempts", t->attempts);
    ufo_value_map_set_copy (msg, "body", t->result);
    s_to_client (self, t->client, UFO_TASK_MSG_RESULT, &msg);
    bbd_finished_push (self, t);
}

//  A running task lost its worker: back to the queue (attempt + 1 at the next delivery),
//  or failed after max_attempts, or cancelled if that was asked.
static void
s_requeue (bb_dispatch_t *self, s_task_t *t, const char *reason)
{
    if (t->cancel_requested) {
        s_finish (self, t, S_CANCELLED, "cancelled (its worker was lost before confirming)", NULL);
        return;
    }
    if (t->attempts >= t->max_attempts) {
        char why [256];
        snprintf (why, sizeof why, "%s; gave up after %" PRId64 " attempt%s", reason, t->attempts,
                  t->attempts == 1 ? "" : "s");
        s_finish (self, t, S_FAILED, why, NULL);
        return;
    }
    s_service_t *svc = bbd_service (self, t->service, false);
    if (svc && svc->running > 0)
        svc->running--;
    t->state = S_QUEUED;
    self->requeued++;
    bbd_enqueue (self, t);
    ufo_value_t *ev = s_ev_new (self);
    s_common (ev, t);
    ufo_value_map_set_int (ev, "attempt", t->attempts);
    ufo_value_map_set_str (ev, "worker", t->worker);
    ufo_value_map_set_str (ev, "worker_name", t->worker_name);
    ufo_value_map_set_str (ev, "reason", reason);
    s_depths (self, ev, t->service);
    s_ev_emit (self, "task.requeued", "task", t->service, &ev);
}

static void
s_assign (bb_dispatch_t *self, s_worker_t *w, s_task_t *t)
{
    bbd_dequeue (t);
    t->state = S_RUNNING;
    t->attempts++;
    t->progress_n = 0;
    t->assigned_ms = ufo_time_mono_ms ();
    t->missed = 0;
    snprintf (t->worker, sizeof t->worker, "%s", w->id);
    snprintf (t->worker_name, sizeof t->worker_name, "%s", w->name);
    w->tasks [w->ntasks++] = t;
    w->stamp = ++self->stamp;
    bbd_service (self, t->service, true)->running++;
    ufo_value_t *ev = s_ev_new (self);
    s_common (ev, t);
    ufo_value_map_set_str (ev, "worker", w->id);
    ufo_value_map_set_str (ev, "worker_name", w->name);
    ufo_value_map_set_int (ev, "attempt", t->attempts);
    s_depths (self, ev, t->service);
    s_ev_emit (self, "task.assigned", "task", t->service, &ev);
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
    ufo_value_map_set_str (msg, "session", t->session);
    ufo_value_map_set_str (msg, "submitter", t->submitter);
    ufo_value_map_set_copy (msg, "body", t->body);
    s_send (self, w->peer, w->peer_len, UFO_TASK_MSG_ASSIGN, &msg);
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
static void
s_pump (bb_dispatch_t *self)
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

static void
s_worker_event (bb_dispatch_t *self, const char *type, s_worker_t *w, const char *reason,
                ufo_value_t **requeued_p)
{
    ufo_value_t *ev = s_ev_new (self);
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
    s_ev_emit (self, type, "worker", w->service, &ev);
}

//  Removes a worker; its tasks go back to the queue.
static void
s_worker_drop (bb_dispatch_t *self, s_worker_t *w, const char *type, const char *reason)
{
    ufo_value_t *ids = ufo_value_new_list ();
    for (size_t i = 0; i < w->ntasks; i++)
        ufo_value_list_push_str (ids, w->tasks [i]->id);
    s_worker_event (self, type, w, reason, &ids);
    while (w->ntasks > 0) {
        s_task_t *t = w->tasks [--w->ntasks];
        char why [200];
        snprintf (why, sizeof why, "worker %s %s", *w->name ? w->name : w->id, reason);
        s_requeue (self, t, why);
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

static void
s_recover (bb_dispatch_t *self)
{
    if (self->recovered)
        return;
    self->recovered = true;
    s_task_t **running = ufo_malloc ((self->ntasks + 1) * sizeof *running);
    s_task_t **cursor = running;
    bbd_task_each (self, s_recover_one, &cursor);
    size_t n = (size_t) (cursor - running);
    for (size_t i = 0; i < n; i++) {
        bbd_service (self, running [i]->service, true)->running++;
        s_requeue (self, running [i], "the broker restarted while it ran");
    }
    free (running);
    if (n)
        ufo_info ("dispatch: %zu task(s) that were running at the last stop requeued", n);
}

//  --- Requests: workers ----------------------------------------------------------------

static bool
s_listed (const ufo_value_t *list, const char *id)
{
    for (size_t i = 0; i < ufo_value_size (list); i++)
        if (strcmp (ufo_value_str (ufo_value_list_at (list, i)), id) == 0)
            return true;
    return false;
}

//  Tasks the worker runs that are not its assignments any more (earlier attempts) occupy
//  capacity until their late result comes.
static void
s_restale (s_worker_t *w, const ufo_value_t *running)
{
    w->nstale = 0;
    for (size_t i = 0; i < ufo_value_size (running); i++) {
        const char *id = ufo_value_str (ufo_value_list_at (running, i));
        bool mine = false;
        for (size_t j = 0; j < w->ntasks; j++)
            mine = mine || strcmp (w->tasks [j]->id, id) == 0;
        if (!mine)
            s_stale_add (w, id);
    }
}

//  A heartbeat lists what the worker runs: an assignment missing from two heartbeats sent
//  well after it never arrived (lost in a reconnect) and goes back to the queue.
static void
s_on_heartbeat (bb_dispatch_t *self, s_worker_t *w, const ufo_value_t *running)
{
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < w->ntasks;) {
        s_task_t *t = w->tasks [i];
        if (s_listed (running, t->id))
            t->missed = 0;
        else
        if (now - t->assigned_ms > w->ivl_ms && ++t->missed >= 2) {
            s_worker_untask (w, t);
            s_requeue (self, t, "its assignment never reached the worker");
            continue;
        }
        i++;
    }
    s_restale (w, running);
    s_pump (self);
}

static void
s_on_ready (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, ufo_task_request_t *req)
{
    s_worker_t *w = s_worker_find (self, req->worker);
    bool known = w != NULL;
    if (w && ((int64_t) w->ntasks > req->capacity || strcmp (w->service, req->service) != 0)) {
        //  Came back as something else: start over.
        s_worker_drop (self, w, "worker.lost", "re-registered with another service or capacity");
        w = NULL;
        known = false;
    }
    if (!w) {
        if (self->nworkers == self->cap_workers) {
            self->cap_workers = self->cap_workers ? self->cap_workers * 2 : 16;
            self->workers = ufo_realloc (self->workers, self->cap_workers * sizeof *self->workers);
        }
        w = ufo_calloc (1, sizeof *w);
        snprintf (w->id, sizeof w->id, "%s", req->worker);
        w->capacity = req->capacity;
        w->tasks = ufo_calloc ((size_t) req->capacity, sizeof *w->tasks);
        self->workers [self->nworkers++] = w;
        w->stamp = ++self->stamp;
    }
    snprintf (w->name, sizeof w->name, "%s", *req->name ? req->name : req->worker);
    snprintf (w->service, sizeof w->service, "%s", req->service);
    snprintf (w->device, sizeof w->device, "%s", req->device);
    w->has_device = req->has_device;
    w->ivl_ms = req->heartbeat_ivl_ms > 0 ? req->heartbeat_ivl_ms : self->cfg.heartbeat_ivl_ms;
    w->liveness = req->heartbeat_liveness > 0 ? req->heartbeat_liveness : self->cfg.heartbeat_liveness;
    memcpy (w->peer, peer, peer_len);
    w->peer_len = peer_len;
    w->last_seen_ms = ufo_time_mono_ms ();
    //  A worker that reconnects keeps the tasks it still runs; assignments it never got
    //  go back to the queue. Tasks it runs that are no longer its own are stale.
    for (size_t i = 0; i < w->ntasks;) {
        s_task_t *t = w->tasks [i];
        if (s_listed (req->running, t->id))
            i++;
        else {
            s_worker_untask (w, t);
            s_requeue (self, t, "its assignment was lost when the worker reconnected");
        }
    }
    s_restale (w, req->running);
    if (!known)
        s_worker_event (self, "worker.ready", w, NULL, NULL);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", w->id);
    ufo_value_map_set_bool (body, "known", known);
    ufo_value_map_set_int (body, "heartbeat_ivl_ms", w->ivl_ms);
    ufo_value_map_set_int (body, "heartbeat_liveness", w->liveness);
    s_reply_ok (self, req->id, &body);
    s_pump (self);
}

static void
s_on_complete (bb_dispatch_t *self, s_worker_t *w, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    bool current = t && t->state == S_RUNNING && strcmp (t->worker, req->worker) == 0
                && t->attempts == req->attempt;
    ufo_value_t *body = ufo_value_new_map ();
    if (!current) {
        //  A late result: the task was requeued, ended, or never ran here. Discarded.
        char why [512];
        if (!t)
            snprintf (why, sizeof why, "unknown task");
        else
            snprintf (why, sizeof why, "late result of attempt %" PRId64 " from worker %s; the task is %s "
                      "(attempt %" PRId64 " on %s)", req->attempt, req->worker, bbd_state_name (t->state),
                      t->attempts, *t->worker_name ? t->worker_name : t->worker);
        if (w)
            s_stale_remove (w, req->task);
        self->discarded++;
        ufo_warn ("dispatch: result of task %s discarded: %s", req->task, why);
        if (t) {
            ufo_value_t *ev = s_ev_new (self);
            s_common (ev, t);
            ufo_value_map_set_str (ev, "worker", req->worker);
            ufo_value_map_set_int (ev, "attempt", req->attempt);
            ufo_value_map_set_str (ev, "status", req->status);
            ufo_value_map_set_str (ev, "reason", why);
            s_ev_emit (self, "task.discarded", "task", t->service, &ev);
        }
        ufo_value_map_set_bool (body, "accepted", false);
        ufo_value_map_set_str (body, "reason", why);
        s_reply_ok (self, req->id, &body);
        s_pump (self);
        return;
    }
    if (w)
        s_worker_untask (w, t);
    else {
        s_worker_t *owner = s_worker_find (self, t->worker);
        if (owner)
            s_worker_untask (owner, t);
    }
    if (w)
        w->stamp = ++self->stamp;
    int state = strcmp (req->status, "done") == 0 ? S_DONE
              : strcmp (req->status, "failed") == 0 ? S_FAILED : S_CANCELLED;
    const char *reason = "";
    if (state != S_DONE) {
        const char *r = ufo_value_type (req->body) == UFO_TMAP
                      ? ufo_value_map_str (req->body, "error", ufo_value_map_str (req->body, "reason", NULL)) : NULL;
        reason = r ? r : state == S_FAILED ? "the worker reported failure" : "cancelled";
    }
    s_finish (self, t, state, reason, &req->body);
    ufo_value_map_set_bool (body, "accepted", true);
    s_reply_ok (self, req->id, &body);
    s_pump (self);
}

static void
s_on_progress (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    ufo_value_t *body = ufo_value_new_map ();
    if (!t || t->state != S_RUNNING || strcmp (t->worker, req->worker) != 0 || t->attempts != req->attempt) {
        ufo_value_map_set_bool (body, "accepted", false);
        ufo_value_map_set_str (body, "reason", "the task is not running on this worker (late progress)");
        s_reply_ok (self, req->id, &body);
        return;
    }
    ufo_value_map_set_bool (body, "accepted", true);
    if (req->n > t->progress_n) {           //  else: a resend after a reconnect
        t->progress_n = req->n;
        ufo_value_t *ev = s_ev_new (self);
        s_common (ev, t);
        ufo_value_map_set_str (ev, "worker", t->worker);
        ufo_value_map_set_int (ev, "attempt", t->attempts);
        ufo_value_map_set_int (ev, "n", req->n);
        ufo_value_map_set_copy (ev, "body", req->body);
        s_ev_emit (self, "task.progress", "task", t->service, &ev);
        ufo_value_t *msg = ufo_value_new_map ();
        ufo_value_map_set_str (msg, "task", t->id);
        ufo_value_map_set_int (msg, "seq", req->n);
        ufo_value_map_set (msg, "body", &req->body);
        s_to_client (self, t->client, UFO_TASK_MSG_PROGRESS, &msg);
    }
    s_reply_ok (self, req->id, &body);
}

//  --- Requests: submitters --------------------------------------------------------------

static void
s_on_submit (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, ufo_task_request_t *req)
{
    s_client_touch (self, req->client, req->name, peer, peer_len, NULL);
    s_task_t *t = bbd_task_find (self, req->task);
    if (!t && req->has_idem)
        t = bbd_task_find_idem (self, req->idem);
    ufo_value_t *body = ufo_value_new_map ();
    if (t) {
        //  A resend, or the same idempotency key: the existing task, now followed by this client.
        snprintf (t->client, sizeof t->client, "%s", req->client);
        ufo_value_map_set_str (body, "task", t->id);
        ufo_value_map_set_bool (body, "duplicate", true);
        ufo_value_map_set_str (body, "state", bbd_state_name (t->state));
        s_reply_ok (self, req->id, &body);
        if (t->state >= S_DONE) {
            ufo_value_t *msg = ufo_value_new_map ();
            ufo_value_map_set_str (msg, "task", t->id);
            ufo_value_map_set_str (msg, "status", bbd_state_name (t->state));
            ufo_value_map_set_str (msg, "reason", t->reason);
            ufo_value_map_set_int (msg, "attempts", t->attempts);
            ufo_value_map_set_copy (msg, "body", t->result);
            s_to_client (self, t->client, UFO_TASK_MSG_RESULT, &msg);
        }
        return;
    }
    t = bbd_task_add (self, req->task);
    snprintf (t->service, sizeof t->service, "%s", req->service);
    snprintf (t->device, sizeof t->device, "%s", req->device);
    t->has_device = req->has_device;
    snprintf (t->session, sizeof t->session, "%s", req->session);
    snprintf (t->submitter, sizeof t->submitter, "%s", *req->name ? req->name : req->sender);
    snprintf (t->client, sizeof t->client, "%s", req->client);
    snprintf (t->idem, sizeof t->idem, "%s", req->idem);
    t->has_idem = req->has_idem;
    bbd_index_idem (self, t);
    t->max_attempts = req->max_attempts > 0 ? req->max_attempts : self->cfg.default_max_attempts;
    int64_t deadline_ms = req->deadline_ms > 0 ? req->deadline_ms : self->cfg.default_deadline_ms;
    t->submitted_us = ufo_time_now_us ();
    t->deadline_us = deadline_ms > 0 ? t->submitted_us + deadline_ms * 1000 : 0;
    t->order = ++self->order;
    t->state = S_QUEUED;
    t->body = req->body ? req->body : ufo_value_new_null ();
    req->body = NULL;
    self->submitted++;
    bbd_enqueue (self, t);
    ufo_value_t *ev = s_ev_new (self);
    bbd_task_record (t, ev, false);
    s_depths (self, ev, t->service);
    s_ev_emit (self, "task.submitted", "task", t->service, &ev);
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_bool (body, "duplicate", false);
    ufo_value_map_set_str (body, "state", "queued");
    s_reply_ok (self, req->id, &body);
    s_pump (self);
}

static void
s_to_worker_input (bb_dispatch_t *self, s_task_t *t, const char *kind, ufo_value_t **body_p)
{
    s_worker_t *w = s_worker_find (self, t->worker);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "task", t->id);
    ufo_value_map_set_str (msg, "kind", kind);
    if (body_p && *body_p)
        ufo_value_map_set (msg, "body", body_p);
    else
        ufo_value_map_set_null (msg, "body");
    if (w)
        s_send (self, w->peer, w->peer_len, UFO_TASK_MSG_INPUT, &msg);
    else
        ufo_value_destroy (&msg);
}

static void
s_on_input (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    char message [160];
    if (!t) {
        snprintf (message, sizeof message, "no task '%s'", req->task);
        s_reply_error (self, req, UFO_E_NOT_FOUND, message);
        return;
    }
    if (t->state != S_RUNNING) {
        snprintf (message, sizeof message, "task '%s' is %s, not running", req->task, bbd_state_name (t->state));
        s_reply_error (self, req, UFO_E_CONFLICT, message);
        return;
    }
    if (req->type == UFO_TASK_REQ_INPUT)
        s_to_worker_input (self, t, "input", &req->body);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "state", "running");
    s_reply_ok (self, req->id, &body);
}

static void
s_on_cancel (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    if (!t) {
        char message [160];
        snprintf (message, sizeof message, "no task '%s'", req->task);
        s_reply_error (self, req, UFO_E_NOT_FOUND, message);
        return;
    }
    if (t->state == S_QUEUED)
        s_finish (self, t, S_CANCELLED, "cancelled by the submitter before it ran", NULL);
    else
    if (t->state == S_RUNNING && !t->cancel_requested) {
        t->cancel_requested = true;
        ufo_value_t *ev = s_ev_new (self);
        s_common (ev, t);
        ufo_value_map_set_str (ev, "worker", t->worker);
        s_ev_emit (self, "task.cancel_requested", "task", t->service, &ev);
        s_to_worker_input (self, t, "cancel", NULL);
    }
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "state", bbd_state_name (t->state));
    s_reply_ok (self, req->id, &body);
}

static ufo_value_t *
s_task_summary (const s_task_t *t, bool result)
{
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "task", t->id);
    ufo_value_map_set_str (m, "service", t->service);
    ufo_value_map_set_str (m, "session", t->session);
    ufo_value_map_set_str (m, "state", bbd_state_name (t->state));
    ufo_value_map_set_int (m, "attempts", t->attempts);
    ufo_value_map_set_int (m, "max_attempts", t->max_attempts);
    ufo_value_map_set_str (m, "worker", t->state == S_QUEUED ? "" : t->worker_name);
    ufo_value_map_set_str (m, "submitter", t->submitter);
    ufo_value_map_set_int (m, "submitted_us", t->submitted_us);
    ufo_value_map_set_int (m, "deadline_us", t->deadline_us);
    ufo_value_map_set_str (m, "reason", t->reason);
    if (result) {
        if (t->result)
            ufo_value_map_set_copy (m, "result", t->result);
        else
            ufo_value_map_set_null (m, "result");
    }
    return m;
}

static void
s_collect_live (bb_dispatch_t *self, s_task_t *t, void *arg)
{
    UFO_UNUSED (self);
    if (t->state <= S_RUNNING) {
        ufo_value_t *m = s_task_summary (t, false);
        ufo_value_list_push ((ufo_value_t *) arg, &m);
    }
}

static void
s_on_state (bb_dispatch_t *self, ufo_task_request_t *req)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "seq", (int64_t) self->host.seq (self->host.arg));
    ufo_value_map_set_int (body, "last", (int64_t) self->last_seq);
    ufo_value_t *workers = ufo_value_new_list ();
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->nworkers; i++) {
        s_worker_t *w = self->workers [i];
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "worker", w->id);
        ufo_value_map_set_str (m, "name", w->name);
        ufo_value_map_set_str (m, "service", w->service);
        if (w->has_device)
            ufo_value_map_set_str (m, "device", w->device);
        else
            ufo_value_map_set_null (m, "device");
        ufo_value_map_set_int (m, "capacity", w->capacity);
        ufo_value_t *ids = ufo_value_new_list ();
        for (size_t j = 0; j < w->ntasks; j++)
            ufo_value_list_push_str (ids, w->tasks [j]->id);
        ufo_value_map_set (m, "tasks", &ids);
        ufo_value_map_set_int (m, "stale", (int64_t) w->nstale);
        ufo_value_map_set_int (m, "idle_ms", w->ntasks ? 0 : now - w->last_seen_ms);
        ufo_value_list_push (workers, &m);
    }
    ufo_value_map_set (body, "workers", &workers);
    ufo_value_t *services = ufo_value_new_list ();
    for (size_t i = 0; i < self->nservices; i++) {
        s_service_t *svc = self->services [i];
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "service", svc->name);
        ufo_value_map_set_int (m, "queued", (int64_t) svc->queued);
        ufo_value_map_set_int (m, "running", (int64_t) svc->running);
        int64_t nw = 0;
        for (size_t j = 0; j < self->nworkers; j++)
            nw += ufo_task_service_match (self->workers [j]->service, svc->name);
        ufo_value_map_set_int (m, "workers", nw);
        ufo_value_list_push (services, &m);
    }
    ufo_value_map_set (body, "services", &services);
    ufo_value_t *tasks = ufo_value_new_list ();
    bbd_task_each (self, s_collect_live, tasks);
    ufo_value_map_set (body, "tasks", &tasks);
    ufo_value_t *counters = ufo_value_new_map ();
    bb_dispatch_stats (self, counters);
    ufo_value_map_set (body, "stats", &counters);
    s_reply_ok (self, req->id, &body);
}

//  --- Entry points -------------------------------------------------------------------------

void
bb_dispatch_handle (bb_dispatch_t *self, const void *peer, size_t peer_len, const void *frame, size_t len)
{
    s_recover (self);
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    ufo_error_clear (&err);
    if (peer_len > sizeof ((s_worker_t *) 0)->peer)
        peer_len = sizeof ((s_worker_t *) 0)->peer;
    if (ufo_task_request_decode (&req, frame, len, self->cfg.max_message_bytes, &err) != 0) {
        s_reply_error (self, &req, err.code, err.message);
        ufo_task_request_reset (&req);
        return;
    }
    s_worker_t *w = *req.worker ? s_worker_find (self, req.worker) : NULL;
    if (w) {
        w->last_seen_ms = ufo_time_mono_ms ();
        if (req.type != UFO_TASK_REQ_WORKER_READY && (w->peer_len != peer_len || memcmp (w->peer, peer, peer_len)))
            w = NULL;           //  the id arrived over another connection: not this registration
    }
    switch (req.type) {
        case UFO_TASK_REQ_WORKER_READY:
            s_on_ready (self, peer, peer_len, &req);
            break;
        case UFO_TASK_REQ_WORKER_HEARTBEAT:
            if (!w)
                s_reply_error (self, &req, UFO_E_NOT_FOUND, "unknown worker: register again (worker.ready)");
            else {
                s_reply_ok (self, req.id, NULL);
                s_on_heartbeat (self, w, req.running);
            }
            break;
        case UFO_TASK_REQ_CLIENT_HEARTBEAT:
            if (!s_client_find (self, req.client))
                s_reply_error (self, &req, UFO_E_NOT_FOUND, "unknown client: register again (client.hello)");
            else {
                s_client_touch (self, req.client, NULL, peer, peer_len, NULL);
                s_reply_ok (self, req.id, NULL);
            }
            break;
        case UFO_TASK_REQ_WORKER_LEAVE:
            if (w)
                s_worker_drop (self, w, "worker.left", "left");
            s_reply_ok (self, req.id, NULL);
            s_pump (self);
            break;
        case UFO_TASK_REQ_PROGRESS:
            s_on_progress (self, &req);
            break;
        case UFO_TASK_REQ_COMPLETE:
            s_on_complete (self, w, &req);
            break;
        case UFO_TASK_REQ_CLIENT_HELLO: {
            bool known;
            s_client_t *c = s_client_touch (self, req.client, req.name, peer, peer_len, &known);
            if (req.heartbeat_ivl_ms > 0)
                c->ivl_ms = req.heartbeat_ivl_ms;
            if (req.heartbeat_liveness > 0)
                c->liveness = req.heartbeat_liveness;
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "client", c->id);
            ufo_value_map_set_bool (body, "known", known);
            ufo_value_map_set_int (body, "heartbeat_ivl_ms", c->ivl_ms);
            ufo_value_map_set_int (body, "heartbeat_liveness", c->liveness);
            s_reply_ok (self, req.id, &body);
            break;
        }
        case UFO_TASK_REQ_SUBMIT:
            s_on_submit (self, peer, peer_len, &req);
            break;
        case UFO_TASK_REQ_INPUT:
            s_on_input (self, &req);
            break;
        case UFO_TASK_REQ_CANCEL:
            s_on_cancel (self, &req);
            break;
        case UFO_TASK_REQ_FETCH: {
            s_task_t *t = bbd_task_find (self, req.task);
            if (!t) {
                char message [160];
                snprintf (message, sizeof message, "no task '%s' (unknown, or forgotten after it ended)", req.task);
                s_reply_error (self, &req, UFO_E_NOT_FOUND, message);
            }
            else {
                ufo_value_t *body = s_task_summary (t, true);
                s_reply_ok (self, req.id, &body);
            }
            break;
        }
        case UFO_TASK_REQ_STATE:
            s_on_state (self, &req);
            break;
        default:
            s_reply_error (self, &req, UFO_E_INTERNAL, "unhandled request");
    }
    ufo_task_request_reset (&req);
}

void
bb_dispatch_tick (bb_dispatch_t *self)
{
    s_recover (self);
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->nworkers;) {
        s_worker_t *w = self->workers [i];
        int64_t silent = now - w->last_seen_ms;
        if (silent > w->ivl_ms * w->liveness) {
            char why [128];
            snprintf (why, sizeof why, "lost (no heartbeat for %" PRId64 " ms)", silent);
            s_worker_drop (self, w, "worker.lost", why);
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
                s_finish (self, t, S_FAILED, why, NULL);
            }
        }
    for (size_t i = 0; i < self->nworkers; i++) {
        s_worker_t *w = self->workers [i];
        for (size_t j = 0; j < w->ntasks;) {
            s_task_t *t = w->tasks [j];
            if (t->deadline_us > 0 && now_us > t->deadline_us) {
                s_to_worker_input (self, t, "cancel", NULL);
                s_worker_untask (w, t);
                s_stale_add (w, t->id);
                s_finish (self, t, S_FAILED, "deadline passed while it ran", NULL);
            }
            else
                j++;
        }
    }
    bbd_evict (self);
    s_pump (self);
}

bb_dispatch_t *
bb_dispatch_new (const bb_dispatch_config_t *config, const bb_dispatch_host_t *host)
{
    bb_dispatch_t *self = ufo_calloc (1, sizeof *self);
    self->cfg = *config;
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
