/*  bb_dispatch_req.c - the dispatcher's request handlers (workers, submitters, monitors).
    The state machine they drive is in bb_dispatch.c. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_task_proto.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "bb_dispatch_int.h"

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
//  capacity until their late result comes. A task this worker itself completed (the
//  acknowledgement still on its way) is not stale.
static void
s_restale (bb_dispatch_t *self, s_worker_t *w, const ufo_value_t *running)
{
    w->nstale = 0;
    for (size_t i = 0; i < ufo_value_size (running); i++) {
        const char *id = ufo_value_str (ufo_value_list_at (running, i));
        bool mine = false;
        for (size_t j = 0; j < w->ntasks; j++)
            mine = mine || strcmp (w->tasks [j]->id, id) == 0;
        s_task_t *t = mine ? NULL : bbd_task_find (self, id);
        if (t && t->state >= S_DONE && strcmp (t->worker, w->id) == 0)
            mine = true;
        if (!mine)
            bbd_stale_add (w, id);
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
        if (s_listed (running, t->id)) {
            t->missed = 0;
            t->confirmed = true;
        }
        else
        if (now - t->assigned_ms > w->ivl_ms && ++t->missed >= 2) {
            bbd_worker_untask (w, t);
            bbd_requeue (self, t, "its assignment never reached the worker");
            continue;
        }
        i++;
    }
    s_restale (self, w, running);
    bbd_pump (self);
}

static void
s_on_ready (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, ufo_task_request_t *req)
{
    s_worker_t *w = bbd_worker_find (self, req->worker);
    bool known = w != NULL;
    if (w && ((int64_t) w->ntasks > req->capacity || strcmp (w->service, req->service) != 0)) {
        //  Came back as something else: start over.
        bbd_worker_drop (self, w, "worker.lost", "re-registered with another service or capacity");
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
        snprintf (w->key, sizeof w->key, "%s", self->cur_key ? self->cur_key : "");
        w->capacity = req->capacity;
        w->tasks = ufo_calloc ((size_t) req->capacity, sizeof *w->tasks);
        self->workers [self->nworkers++] = w;
        w->stamp = ++self->stamp;
    }
    snprintf (w->name, sizeof w->name, "%s", *req->name ? req->name : req->worker);
    snprintf (w->service, sizeof w->service, "%s", req->service);
    snprintf (w->device, sizeof w->device, "%s", req->device);
    w->has_device = req->has_device;
    if (w->has_device && !strcmp (w->service, "host")) {
        size_t k = 0;
        while (k < self->ndevices_seen && strcmp (self->devices_seen [k], w->device))
            k++;
        if (k == self->ndevices_seen && k < UFO_ARRAY_SIZE (self->devices_seen))
            snprintf (self->devices_seen [self->ndevices_seen++], sizeof self->devices_seen [0], "%s", w->device);
    }
    w->ivl_ms = req->heartbeat_ivl_ms > 0 ? req->heartbeat_ivl_ms : self->cfg.heartbeat_ivl_ms;
    w->liveness = req->heartbeat_liveness > 0 ? req->heartbeat_liveness : self->cfg.heartbeat_liveness;
    memcpy (w->peer, peer, peer_len);
    w->peer_len = peer_len;
    w->last_seen_ms = ufo_time_mono_ms ();
    //  A worker that reconnects keeps the tasks it still runs; assignments it never got
    //  go back to the queue. Tasks it runs that are no longer its own are stale.
    for (size_t i = 0; i < w->ntasks;) {
        s_task_t *t = w->tasks [i];
        if (s_listed (req->running, t->id)) {
            t->confirmed = true;
            i++;
        }
        else {
            bbd_worker_untask (w, t);
            bbd_requeue (self, t, "its assignment was lost when the worker reconnected");
        }
    }
    s_restale (self, w, req->running);
    if (!known)
        bbd_worker_event (self, "worker.ready", w, NULL, NULL);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", w->id);
    ufo_value_map_set_bool (body, "known", known);
    ufo_value_map_set_int (body, "heartbeat_ivl_ms", w->ivl_ms);
    ufo_value_map_set_int (body, "heartbeat_liveness", w->liveness);
    bbd_reply_ok (self, req->id, &body);
    bbd_pump (self);
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
            bbd_stale_remove (w, req->task);
        self->discarded++;
        ufo_warn ("dispatch: result of task %s discarded: %s", req->task, why);
        if (t) {
            ufo_value_t *ev = bbd_ev_new (self);
            bbd_common (ev, t);
            ufo_value_map_set_str (ev, "worker", req->worker);
            ufo_value_map_set_int (ev, "attempt", req->attempt);
            ufo_value_map_set_str (ev, "status", req->status);
            ufo_value_map_set_str (ev, "reason", why);
            bbd_ev_emit (self, "task.discarded", "task", t->service, &ev);
        }
        ufo_value_map_set_bool (body, "accepted", false);
        ufo_value_map_set_str (body, "reason", why);
        bbd_reply_ok (self, req->id, &body);
        bbd_pump (self);
        return;
    }
    if (w)
        bbd_worker_untask (w, t);
    else {
        s_worker_t *owner = bbd_worker_find (self, t->worker);
        if (owner)
            bbd_worker_untask (owner, t);
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
    char why [96];
    if (t->cancel_requested && state != S_CANCELLED) {
        //  The submitter asked: the task ends cancelled (the worker's result is kept).
        snprintf (why, sizeof why, "cancelled by the submitter (the worker reported %s)", req->status);
        reason = why;
        state = S_CANCELLED;
    }
    else
    if (t->cancel_requested && !*reason)
        reason = "cancelled by the submitter";
    bbd_finish (self, t, state, reason, &req->body);
    ufo_value_map_set_bool (body, "accepted", true);
    bbd_reply_ok (self, req->id, &body);
    bbd_pump (self);
}

static void
s_on_progress (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    ufo_value_t *body = ufo_value_new_map ();
    if (!t || t->state != S_RUNNING || strcmp (t->worker, req->worker) != 0 || t->attempts != req->attempt) {
        ufo_value_map_set_bool (body, "accepted", false);
        ufo_value_map_set_str (body, "reason", "the task is not running on this worker (late progress)");
        bbd_reply_ok (self, req->id, &body);
        return;
    }
    ufo_value_map_set_bool (body, "accepted", true);
    t->confirmed = true;
    if (req->n > t->progress_n) {           //  else: a resend after a reconnect
        t->progress_n = req->n;
        ufo_value_t *ev = bbd_ev_new (self);
        bbd_common (ev, t);
        ufo_value_map_set_str (ev, "worker", t->worker);
        ufo_value_map_set_int (ev, "attempt", t->attempts);
        ufo_value_map_set_int (ev, "n", req->n);
        ufo_value_map_set_copy (ev, "body", req->body);
        bbd_ev_emit_task (self, "task.progress", t, &ev);
        ufo_value_t *msg = ufo_value_new_map ();
        ufo_value_map_set_str (msg, "task", t->id);
        ufo_value_map_set_int (msg, "seq", req->n);
        ufo_value_map_set (msg, "body", &req->body);
        bbd_to_client (self, t->client, UFO_TASK_MSG_PROGRESS, &msg);
    }
    bbd_reply_ok (self, req->id, &body);
}

//  --- Requests: submitters --------------------------------------------------------------

//  The requester's identity, which scopes idempotency keys: its certificate with CURVE on,
//  else its name without a trailing ":<pid>" (the project's "<program>@<host>:<pid>" names),
//  so a restarted process keeps its keys.
static void
s_scope (const bb_dispatch_t *self, const ufo_task_request_t *req, char out [BBD_SCOPE_MAX + 1])
{
    if (self->cur_key) {
        snprintf (out, BBD_SCOPE_MAX + 1, "key:%s", self->cur_key);
        return;
    }
    const char *name = *req->name ? req->name : req->sender;
    size_t n = strlen (name), k = n;
    while (k > 0 && name [k - 1] >= '0' && name [k - 1] <= '9')
        k--;
    if (k > 1 && k < n && name [k - 1] == ':')
        n = k - 1;
    snprintf (out, BBD_SCOPE_MAX + 1, "name:%.*s", (int) n, name);
}

static void
s_on_submit (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, ufo_task_request_t *req)
{
    char scope [BBD_SCOPE_MAX + 1];
    s_scope (self, req, scope);
    s_task_t *t = bbd_task_find (self, req->task);
    if (t && *t->scope && strcmp (t->scope, scope) != 0) {
        char message [200];
        snprintf (message, sizeof message, "task id '%s' is taken by another submitter", req->task);
        bbd_reply_error (self, req, UFO_E_CONFLICT, message);
        return;
    }
    bbd_client_touch (self, req->client, req->name, peer, peer_len, NULL);
    if (!t && req->has_idem)
        t = bbd_task_find_idem (self, scope, req->idem);
    ufo_value_t *body = ufo_value_new_map ();
    if (t) {
        //  A resend, or the same idempotency key: the existing task, now followed by this client.
        snprintf (t->client, sizeof t->client, "%s", req->client);
        ufo_value_map_set_str (body, "task", t->id);
        ufo_value_map_set_bool (body, "duplicate", true);
        ufo_value_map_set_str (body, "state", bbd_state_name (t->state));
        bbd_reply_ok (self, req->id, &body);
        if (t->state >= S_DONE) {
            ufo_value_t *msg = ufo_value_new_map ();
            ufo_value_map_set_str (msg, "task", t->id);
            ufo_value_map_set_str (msg, "status", bbd_state_name (t->state));
            ufo_value_map_set_str (msg, "reason", t->reason);
            ufo_value_map_set_int (msg, "attempts", t->attempts);
            ufo_value_map_set_copy (msg, "body", t->result);
            bbd_reply_msg (self, UFO_TASK_MSG_RESULT, &msg);     //  after the reply that names the task
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
    snprintf (t->scope, sizeof t->scope, "%s", scope);
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
    ufo_value_t *ev = bbd_ev_new (self);
    bbd_task_record (t, ev, false);
    bbd_depths (self, ev, t->service);
    bbd_ev_emit_task (self, "task.submitted", t, &ev);
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_bool (body, "duplicate", false);
    ufo_value_map_set_str (body, "state", "queued");
    bbd_reply_ok (self, req->id, &body);
    bbd_pump (self);
}

static void
s_on_input (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    char message [160];
    if (!t) {
        snprintf (message, sizeof message, "no task '%s'", req->task);
        bbd_reply_error (self, req, UFO_E_NOT_FOUND, message);
        return;
    }
    if (t->state != S_RUNNING) {
        snprintf (message, sizeof message, "task '%s' is %s, not running", req->task, bbd_state_name (t->state));
        bbd_reply_error (self, req, UFO_E_CONFLICT, message);
        return;
    }
    if (req->type == UFO_TASK_REQ_INPUT)
        bbd_to_worker_input (self, t, "input", &req->body);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "state", "running");
    bbd_reply_ok (self, req->id, &body);
}

static void
s_on_cancel (bb_dispatch_t *self, ufo_task_request_t *req)
{
    s_task_t *t = bbd_task_find (self, req->task);
    if (!t) {
        char message [160];
        snprintf (message, sizeof message, "no task '%s'", req->task);
        bbd_reply_error (self, req, UFO_E_NOT_FOUND, message);
        return;
    }
    if (t->state == S_QUEUED)
        bbd_finish (self, t, S_CANCELLED, "cancelled by the submitter before it ran", NULL);
    else
    if (t->state == S_RUNNING && !t->cancel_requested) {
        t->cancel_requested = true;
        ufo_value_t *ev = bbd_ev_new (self);
        bbd_common (ev, t);
        ufo_value_map_set_str (ev, "worker", t->worker);
        bbd_ev_emit (self, "task.cancel_requested", "task", t->service, &ev);
        bbd_to_worker_input (self, t, "cancel", NULL);
    }
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "task", t->id);
    ufo_value_map_set_str (body, "state", bbd_state_name (t->state));
    bbd_reply_ok (self, req->id, &body);
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
    //  for people (ufo status): the device and the task's own name (a session's "task")
    if (t->has_device)
        ufo_value_map_set_str (m, "device", t->device);
    const char *name = ufo_value_map_str (t->body, "task", NULL);
    if (name)
        ufo_value_map_set_str (m, "name", name);
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
    ufo_value_map_set_int (body, "uptime_ms", now - self->started_ms);
    ufo_value_t *seen = ufo_value_new_list ();
    for (size_t i = 0; i < self->ndevices_seen; i++)
        ufo_value_list_push_str (seen, self->devices_seen [i]);
    ufo_value_map_set (body, "devices_seen", &seen);
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
    bbd_reply_ok (self, req->id, &body);
}

//  --- Entry points -------------------------------------------------------------------------

//  With CURVE on, a worker belongs to the certificate that registered it and a task to the
//  certificate of the worker it was assigned to: a request from another certificate that
//  names them is refused (denied, logged with the certificate's name). True if refused.
static bool
s_foreign (bb_dispatch_t *self, const ufo_task_request_t *req)
{
    char message [300];
    bool worker_req = req->type == UFO_TASK_REQ_WORKER_READY || req->type == UFO_TASK_REQ_WORKER_HEARTBEAT
                   || req->type == UFO_TASK_REQ_WORKER_LEAVE || req->type == UFO_TASK_REQ_PROGRESS
                   || req->type == UFO_TASK_REQ_COMPLETE;
    if (!worker_req)
        return false;
    s_worker_t *w = bbd_worker_find (self, req->worker);
    if (w && *w->key && strcmp (w->key, self->cur_key) != 0)
        snprintf (message, sizeof message, "worker %s is registered with another certificate (certificate \"%s\")",
                  req->worker, self->cur_cert);
    else {
        s_task_t *t = req->type == UFO_TASK_REQ_PROGRESS || req->type == UFO_TASK_REQ_COMPLETE
                    ? bbd_task_find (self, req->task) : NULL;
        if (!t || !*t->worker_key || strcmp (t->worker, req->worker) != 0
        ||  strcmp (t->worker_key, self->cur_key) == 0)
            return false;
        snprintf (message, sizeof message, "task %s was assigned to another certificate's worker "
                  "(certificate \"%s\")", req->task, self->cur_cert);
    }
    bbd_reply_error (self, req, UFO_E_DENIED, message);
    return true;
}

//  Routes a decoded request to its handler.
static void
s_route (bb_dispatch_t *self, const uint8_t *peer, size_t peer_len, ufo_task_request_t *req)
{
    s_worker_t *w = *req->worker ? bbd_worker_find (self, req->worker) : NULL;
    if (w) {
        w->last_seen_ms = ufo_time_mono_ms ();
        if (req->type != UFO_TASK_REQ_WORKER_READY && (w->peer_len != peer_len || memcmp (w->peer, peer, peer_len)))
            w = NULL;           //  the id arrived over another connection: not this registration
    }
    switch (req->type) {
        case UFO_TASK_REQ_WORKER_READY:
            s_on_ready (self, peer, peer_len, req);
            break;
        case UFO_TASK_REQ_WORKER_HEARTBEAT:
            if (!w)
                bbd_reply_error (self, req, UFO_E_NOT_FOUND, "unknown worker: register again (worker.ready)");
            else {
                bbd_reply_ok (self, req->id, NULL);
                s_on_heartbeat (self, w, req->running);
            }
            break;
        case UFO_TASK_REQ_CLIENT_HEARTBEAT:
            if (!bbd_client_find (self, req->client))
                bbd_reply_error (self, req, UFO_E_NOT_FOUND, "unknown client: register again (client.hello)");
            else {
                bbd_client_touch (self, req->client, NULL, peer, peer_len, NULL);
                bbd_reply_ok (self, req->id, NULL);
            }
            break;
        case UFO_TASK_REQ_WORKER_LEAVE:
            if (w)
                bbd_worker_drop (self, w, "worker.left", "left");
            bbd_reply_ok (self, req->id, NULL);
            bbd_pump (self);
            break;
        case UFO_TASK_REQ_PROGRESS:
            s_on_progress (self, req);
            break;
        case UFO_TASK_REQ_COMPLETE:
            s_on_complete (self, w, req);
            break;
        case UFO_TASK_REQ_CLIENT_HELLO: {
            bool known;
            s_client_t *c = bbd_client_touch (self, req->client, req->name, peer, peer_len, &known);
            if (req->heartbeat_ivl_ms > 0)
                c->ivl_ms = req->heartbeat_ivl_ms;
            if (req->heartbeat_liveness > 0)
                c->liveness = req->heartbeat_liveness;
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "client", c->id);
            ufo_value_map_set_bool (body, "known", known);
            ufo_value_map_set_int (body, "heartbeat_ivl_ms", c->ivl_ms);
            ufo_value_map_set_int (body, "heartbeat_liveness", c->liveness);
            bbd_reply_ok (self, req->id, &body);
            break;
        }
        case UFO_TASK_REQ_SUBMIT:
            s_on_submit (self, peer, peer_len, req);
            break;
        case UFO_TASK_REQ_INPUT:
            s_on_input (self, req);
            break;
        case UFO_TASK_REQ_CANCEL:
            s_on_cancel (self, req);
            break;
        case UFO_TASK_REQ_FETCH: {
            s_task_t *t = bbd_task_find (self, req->task);
            if (!t) {
                char message [160];
                snprintf (message, sizeof message, "no task '%s' (unknown, or forgotten after it ended)", req->task);
                bbd_reply_error (self, req, UFO_E_NOT_FOUND, message);
            }
            else {
                ufo_value_t *body = s_task_summary (t, true);
                bbd_reply_ok (self, req->id, &body);
            }
            break;
        }
        case UFO_TASK_REQ_STATE:
            s_on_state (self, req);
            break;
        default:
            bbd_reply_error (self, req, UFO_E_INTERNAL, "unhandled request");
    }
}

void
bb_dispatch_handle (bb_dispatch_t *self, const void *peer, size_t peer_len, const char *key,
                    const char *cert, const void *frame, size_t len)
{
    bbd_recover (self);
    self->cur_key = key && *key ? key : NULL;
    self->cur_cert = cert && *cert ? cert : "?";
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    ufo_error_clear (&err);
    if (peer_len > sizeof ((s_worker_t *) 0)->peer)
        peer_len = sizeof ((s_worker_t *) 0)->peer;
    if (ufo_task_request_decode (&req, frame, len, self->cfg.max_message_bytes, &err) != 0) {
        if (!*req.id)                       //  the id as far as it can be read, for the reply
            ufo_bb_peek_id (frame, len, req.id);
        bbd_reply_error (self, &req, err.code, err.message);
    }
    else
    if (self->cur_key && s_foreign (self, &req))
        self->denied++;
    else
        s_route (self, peer, peer_len, &req);
    ufo_task_request_reset (&req);
    self->cur_key = self->cur_cert = NULL;
}
