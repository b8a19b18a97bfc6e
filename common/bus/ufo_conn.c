/*  ufo_conn.c - the one broker connection of an agent process (ufo_conn.h): the worker
    side and the submitter side over one link (dispatch_private.h), the loop source that
    serves it, its life cycle. Blackboard calls: ufo_conn_call.c; shared state: ufo_conn_int.h. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_task_proto.h"
#include "ufo_conn.h"
#include "dispatch_private.h"
#include "ufo_conn_int.h"
#include "ufo_loop.h"
#include <czmq.h>
static void s_emit (ufo_conn_t *self, ufo_value_t **ev_p);

//  --- Worker side (the link's handler) -----------------------------------------------------

static conn_running_t *
s_task_find (ufo_conn_t *self, const char *id)
{
    for (size_t i = 0; i < self->ntasks; i++)
        if (strcmp (self->tasks [i].id, id) == 0)
            return &self->tasks [i];
    return NULL;
}

static void
s_task_drop (ufo_conn_t *self, const char *id)
{
    for (size_t i = 0; i < self->ntasks; i++)
        if (strcmp (self->tasks [i].id, id) == 0) {
            self->tasks [i] = self->tasks [--self->ntasks];
            return;
        }
}

static ufo_value_t *
s_running_list (ufo_conn_t *self)
{
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < self->ntasks; i++)
        ufo_value_list_push_str (list, self->tasks [i].id);
    return list;
}

static ufo_value_t *
s_client_hello (ufo_conn_t *self)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "client", self->cid);
    ufo_value_map_set_str (body, "name", self->name);
    ufo_value_map_set_int (body, "heartbeat_ivl_ms", self->ivl_ms);
    ufo_value_map_set_int (body, "heartbeat_liveness", self->liveness);
    return body;
}

static void
s_make_register (void *owner, const char **type_p, ufo_value_t **body_p)
{
    ufo_conn_t *self = owner;
    if (!self->worker) {
        *type_p = "client.hello";
        *body_p = s_client_hello (self);
        return;
    }
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", self->wid);
    ufo_value_map_set_str (body, "name", self->name);
    ufo_value_map_set_str (body, "service", self->service);
    if (self->has_device)
        ufo_value_map_set_str (body, "device", self->device);
    else
        ufo_value_map_set_null (body, "device");
    ufo_value_map_set_int (body, "capacity", self->capacity);
    ufo_value_map_set_int (body, "heartbeat_ivl_ms", self->ivl_ms);
    ufo_value_map_set_int (body, "heartbeat_liveness", self->liveness);
    ufo_value_t *running = s_running_list (self);
    ufo_value_map_set (body, "running", &running);
    *type_p = "worker.ready";
    *body_p = body;
}

static void
s_make_heartbeat (void *owner, const char **type_p, ufo_value_t **body_p)
{
    ufo_conn_t *self = owner;
    ufo_value_t *body = ufo_value_new_map ();
    self->heartbeats++;
    if (!self->worker) {
        ufo_value_map_set_str (body, "client", self->cid);
        *type_p = "client.heartbeat";
        *body_p = body;
        return;
    }
    ufo_value_map_set_str (body, "worker", self->wid);
    ufo_value_t *running = s_running_list (self);
    ufo_value_map_set (body, "running", &running);
    *type_p = "worker.heartbeat";
    *body_p = body;
    //  The submitter side of a worker: the broker forgets a client after 10 silent windows
    //  (docs/PROTOCOL.md 3.5); one client.heartbeat every `liveness` intervals is plenty and
    //  costs no wake-up of its own (its reply comes with the worker's).
    if (self->client_used && self->heartbeats % (uint64_t) self->liveness == 0) {
        ufo_value_t *hb = ufo_value_new_map ();
        ufo_value_map_set_str (hb, "client", self->cid);
        ufo_link_queue (self->link, "client.heartbeat", &hb, "C");
    }
}

static void
s_emit_kind (ufo_conn_t *self, const char *kind)
{
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", kind);
    s_emit (self, &ev);
}

static void
s_on_registered (void *owner, const ufo_value_t *body)
{
    UFO_UNUSED (body);
    ufo_conn_t *self = owner;
    if (!self->was_connected) {
        self->was_connected = true;
        ufo_debug ("%s registered with %s", self->name, self->endpoint);
        s_emit_kind (self, "connected");
    }
    if (self->worker && self->client_used) {
        ufo_value_t *hello = s_client_hello (self);
        ufo_link_queue (self->link, "client.hello", &hello, "C");
    }
    //  Results may have been sent while we were away: ask for the state of every open task.
    for (size_t i = 0; i < self->nopen; i++) {
        if (!self->open [i].accepted)
            continue;
        ufo_value_t *q = ufo_value_new_map ();
        ufo_value_map_set_str (q, "task", self->open [i].broker_id);
        char tag [UFO_TASK_ID_MAX + 8];
        snprintf (tag, sizeof tag, "S:%s", self->open [i].id);
        ufo_link_queue (self->link, "task.fetch", &q, tag);
    }
}

static void
s_on_down (void *owner)
{
    ufo_conn_t *self = owner;
    //  the socket is gone: calls sent on it get no reply
    conn_calls_fail_sent (self, UFO_E_IO, "the connection to the broker was lost (the request may or may "
                       "not have been applied)");
    if (self->was_connected) {
        self->was_connected = false;
        s_emit_kind (self, "disconnected");
    }
}

static void
s_on_worker_message (ufo_conn_t *self, const char *type, const ufo_value_t *body)
{
    const char *id = ufo_value_map_str (body, "task", NULL);
    if (!ufo_task_id_valid (id)) {
        ufo_warn ("%s: broker message %s without a valid task id, ignored", self->name, type);
        return;
    }
    if (strcmp (type, "task.assign") == 0) {
        int64_t attempt = ufo_value_map_int (body, "attempt", 1);
        conn_running_t *t = s_task_find (self, id);
        if (t && t->attempt == attempt)
            return;                 //  delivered twice
        if (!t) {
            if (self->ntasks == self->cap_tasks) {
                self->cap_tasks = self->cap_tasks ? self->cap_tasks * 2 : 8;
                self->tasks = ufo_realloc (self->tasks, self->cap_tasks * sizeof *self->tasks);
            }
            t = &self->tasks [self->ntasks++];
            snprintf (t->id, sizeof t->id, "%s", id);
        }
        t->attempt = attempt;
        t->progress_n = 0;
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "task");
        for (size_t i = 0; i < ufo_value_size (body); i++)
            ufo_value_map_set_copy (ev, ufo_value_map_key_at (body, i), ufo_value_map_value_at (body, i));
        s_emit (self, &ev);
    }
    else {                          //  task.input
        const char *kind = ufo_value_map_str (body, "kind", "input");
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", strcmp (kind, "cancel") == 0 ? "cancel" : "input");
        ufo_value_map_set_str (ev, "task", id);
        const ufo_value_t *input = ufo_value_map_get (body, "body");
        if (input)
            ufo_value_map_set_copy (ev, "body", input);
        else
            ufo_value_map_set_null (ev, "body");
        s_emit (self, &ev);
    }
}

//  --- Submitter side --------------------------------------------------------------------------

static conn_open_t *
s_open_find (ufo_conn_t *self, const char *id, bool broker)
{
    for (size_t i = 0; id && i < self->nopen; i++)
        if (strcmp (broker ? self->open [i].broker_id : self->open [i].id, id) == 0)
            return &self->open [i];
    return NULL;
}

static void
s_emit_result (ufo_conn_t *self, conn_open_t *o, const char *status, const char *reason, int64_t attempts,
               const ufo_value_t *body)
{
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "result");
    ufo_value_map_set_str (ev, "task", o->id);
    ufo_value_map_set_str (ev, "status", status);
    ufo_value_map_set_str (ev, "reason", reason ? reason : "");
    ufo_value_map_set_int (ev, "attempts", attempts);
    if (body)
        ufo_value_map_set_copy (ev, "body", body);
    else
        ufo_value_map_set_null (ev, "body");
    s_emit (self, &ev);
    *o = self->open [--self->nopen];
}

static void
s_on_client_message (ufo_conn_t *self, const char *type, const ufo_value_t *body)
{
    //  Several of our ids may follow one broker task (the same idempotency key): each gets it.
    const char *broker_id = ufo_value_map_str (body, "task", "");
    bool progress = strcmp (type, "task.progress") == 0;
    for (size_t i = 0; i < self->nopen;) {
        conn_open_t *o = &self->open [i];
        if (strcmp (o->broker_id, broker_id) != 0) {
            i++;
            continue;
        }
        if (progress) {
            ufo_value_t *ev = ufo_value_new_map ();
            ufo_value_map_set_str (ev, "kind", "progress");
            ufo_value_map_set_str (ev, "task", o->id);
            ufo_value_map_set_int (ev, "seq", ufo_value_map_int (body, "seq", 0));
            const ufo_value_t *b = ufo_value_map_get (body, "body");
            if (b)
                ufo_value_map_set_copy (ev, "body", b);
            else
                ufo_value_map_set_null (ev, "body");
            s_emit (self, &ev);
            i++;
        }
        else                            //  drops the entry: the last one moves to i
            s_emit_result (self, o, ufo_value_map_str (body, "status", "failed"),
                           ufo_value_map_str (body, "reason", ""), ufo_value_map_int (body, "attempts", 0),
                           ufo_value_map_get (body, "body"));
    }
}

static void
s_on_message (void *owner, const char *type, const ufo_value_t *body)
{
    ufo_conn_t *self = owner;
    if (self->worker && (strcmp (type, "task.assign") == 0 || strcmp (type, "task.input") == 0))
        s_on_worker_message (self, type, body);
    else
    if (strcmp (type, "task.progress") == 0 || strcmp (type, "task.result") == 0)
        s_on_client_message (self, type, body);
    else
        ufo_debug ("%s: broker message %s ignored", self->name, type);
}

static void
s_on_worker_reply (ufo_conn_t *self, const char *tag, const char *type, bool ok, const ufo_value_t *body)
{
    //  tag: "<attempt>:<task id>"; a newer attempt of the same task may run here by now
    int64_t attempt = tag ? strtoll (tag, NULL, 10) : 0;
    const char *colon = tag ? strchr (tag, ':') : NULL;
    const char *id = colon ? colon + 1 : "?";
    if (strcmp (type, "task.complete") == 0 && colon) {
        conn_running_t *t = s_task_find (self, id);
        if (t && t->attempt == attempt)
            s_task_drop (self, id);
        if (ok && !ufo_value_map_bool (body, "accepted", true))
            ufo_warn ("%s: the broker discarded the result of task %s (attempt %" PRId64 "): %s",
                      self->name, id, attempt, ufo_value_map_str (body, "reason", "?"));
    }
    if (!ok)
        ufo_warn ("%s: %s for task %s refused: %s: %s", self->name, type, id,
                  ufo_value_map_str (body, "code", "?"), ufo_value_map_str (body, "message", "?"));
}

static void
s_on_reply (void *owner, const char *tag, const char *type, bool ok, const ufo_value_t *body)
{
    ufo_conn_t *self = owner;
    if (strcmp (type, "task.progress") == 0 || strcmp (type, "task.complete") == 0
    ||  strcmp (type, "worker.leave") == 0) {
        s_on_worker_reply (self, tag, type, ok, body);
        return;
    }
    if (!tag)
        return;
    if (strcmp (tag, "C") == 0) {           //  the submitter side of a worker: hello, heartbeat
        if (!ok && strcmp (ufo_value_map_str (body, "code", ""), "not_found") == 0) {
            ufo_value_t *hello = s_client_hello (self);
            ufo_link_queue (self->link, "client.hello", &hello, "C");
        }
        return;
    }
    if (strncmp (tag, "S:", 2) == 0) {
        conn_open_t *o = s_open_find (self, tag + 2, false);
        const char *state = ufo_value_map_str (body, "state", "");
        if (o && ok && (strcmp (state, "done") == 0 || strcmp (state, "failed") == 0
                        || strcmp (state, "cancelled") == 0))
            s_emit_result (self, o, state, ufo_value_map_str (body, "reason", ""),
                           ufo_value_map_int (body, "attempts", 0), ufo_value_map_get (body, "result"));
        return;
    }
    conn_open_t *o = s_open_find (self, tag, false);
    if (strcmp (type, "task.submit") == 0 && !o && ok) {
        //  the result came first (a task that ran on this very connection, or an ended
        //  duplicate): the acceptance is still news
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "accepted");
        ufo_value_map_set_str (ev, "task", tag);
        ufo_value_map_set_bool (ev, "duplicate", ufo_value_map_bool (body, "duplicate", false));
        ufo_value_map_set_str (ev, "state", ufo_value_map_str (body, "state", "queued"));
        s_emit (self, &ev);
        return;
    }
    if (strcmp (type, "task.submit") == 0 && o) {
        if (!ok) {
            char reason [400];
            if (ufo_value_map_bool (body, "local", false))      //  never sent (ufo_link_queue_until)
                snprintf (reason, sizeof reason, "not submitted: %s: %s", ufo_value_map_str (body, "code", "?"),
                          ufo_value_map_str (body, "message", "?"));
            else
                snprintf (reason, sizeof reason, "rejected by the broker: %s: %s",
                          ufo_value_map_str (body, "code", "?"), ufo_value_map_str (body, "message", "?"));
            s_emit_result (self, o, "failed", reason, 0, NULL);
            return;
        }
        o->accepted = true;
        snprintf (o->broker_id, sizeof o->broker_id, "%s", ufo_value_map_str (body, "task", o->id));
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "accepted");
        ufo_value_map_set_str (ev, "task", o->id);
        ufo_value_map_set_bool (ev, "duplicate", ufo_value_map_bool (body, "duplicate", false));
        ufo_value_map_set_str (ev, "state", ufo_value_map_str (body, "state", "queued"));
        if (strcmp (o->broker_id, o->id) != 0)
            ufo_value_map_set_str (ev, "broker_task", o->broker_id);
        s_emit (self, &ev);
        return;
    }
    if (!ok) {
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "error");
        ufo_value_map_set_str (ev, "task", tag);
        ufo_value_map_set_str (ev, "request", type);
        ufo_value_map_set_str (ev, "code", ufo_value_map_str (body, "code", "?"));
        ufo_value_map_set_str (ev, "message", ufo_value_map_str (body, "message", "?"));
        s_emit (self, &ev);
    }
}

//  --- The loop source -------------------------------------------------------------------------

static void
s_emit (ufo_conn_t *self, ufo_value_t **ev_p)
{
    ufo_value_list_push (self->pending, ev_p);
}

//  Records a task handed to the caller (it may then progress and complete it).
static void
s_track (ufo_conn_t *self, const ufo_value_t *ev)
{
    if (strcmp (ufo_value_map_str (ev, "kind", ""), "task") != 0)
        return;
    const char *id = ufo_value_map_str (ev, "task", "");
    for (size_t i = 0; i < self->nrunning; i++)
        if (strcmp (self->running [i], id) == 0)
            return;
    if (self->nrunning == self->cap_running) {
        self->cap_running = self->cap_running ? self->cap_running * 2 : 8;
        self->running = ufo_realloc (self->running, self->cap_running * sizeof *self->running);
    }
    self->running [self->nrunning++] = ufo_strdup (id);
}

//  The link (socket, timers, outbox) and the calls, without handing events on.
int
conn_service_io (ufo_conn_t *self)
{
    int wait = ufo_link_service (self->link);
    int calls = conn_calls_service (self);
    return calls >= 0 && calls < wait ? calls : wait;
}

//  Hands queued events to the caller (bounded per turn, so a flood of events does not starve
//  the other sources).
static void
s_deliver (ufo_conn_t *self)
{
    for (int i = 0; i < 256 && ufo_value_size (self->pending) > 0; i++) {
        ufo_value_t *ev = ufo_value_dup (ufo_value_list_at (self->pending, 0));
        ufo_value_list_remove (self->pending, 0);
        s_track (self, ev);
        self->news = true;
        self->on_event (self->on_event_arg, &ev);
        ufo_value_destroy (&ev);
    }
}

static void
s_loop_service (void *arg)
{
    ufo_conn_t *self = arg;
    self->wait_ms = conn_service_io (self);
    s_deliver (self);
}

static size_t
s_loop_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    ufo_conn_t *self = arg;
    //  a callback or event of this turn may have given the caller work: no sleep
    *timeout_ms = ufo_value_size (self->pending) > 0 || self->news ? 0 : self->wait_ms;
    self->news = false;
    void *dealer = ufo_link_socket (self->link);
    if (!dealer || max == 0)
        return 0;
    items [0] = (ufo_loop_item_t) { dealer, -1, UFO_LOOP_IN, 0 };
    return 1;
}

//  After the poll: what arrived is read and handed on in this same turn, so the caller sees
//  a reply or an event as soon as the turn ends.
static void
s_loop_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    ufo_conn_t *self = arg;
    if (n > 0 && (items [0].revents & UFO_LOOP_IN)) {
        self->wait_ms = conn_service_io (self);
        s_deliver (self);
        self->news = false;
    }
}

//  Serves the connection alone for at most max_ms (the blocking helpers): one poll of the
//  socket, then the link and the calls.
void
conn_serve_once (ufo_conn_t *self, int max_ms)
{
    int wait = conn_service_io (self);
    if (wait < 0 || wait > max_ms)
        wait = max_ms;
    void *dealer = ufo_link_socket (self->link);
    zmq_pollitem_t item = { dealer ? zsock_resolve (dealer) : NULL, 0, ZMQ_POLLIN, 0 };
    if (dealer)
        zmq_poll (&item, 1, wait);
    else
    if (wait > 0)
        zclock_sleep (wait);            //  no socket while reconnecting: its backoff is the wait
    conn_service_io (self);
}

//  --- Life cycle ---------------------------------------------------------------------------------

int
ufo_conn_config_check (const ufo_conn_config_t *config, ufo_error_t *err)
{
    if (!config || !config->endpoint || !*config->endpoint || strlen (config->endpoint) >= 512)
        return ufo_error_set (err, UFO_E_MISSING, "connection: a broker endpoint (under 512 bytes) is required");
    if (config->service && !ufo_task_service_valid (config->service, true))
        return ufo_error_set (err, UFO_E_INVALID, "connection: service '%s' must be 1..128 bytes of "
                              "[A-Za-z0-9_.:@-] or \"app:*\"", config->service);
    if (config->device && *config->device && !ufo_task_service_valid (config->device, false))
        return ufo_error_set (err, UFO_E_INVALID, "connection: device id '%s' must be 1..128 bytes of "
                              "[A-Za-z0-9_.:@-]", config->device);
    if (config->capacity < 0 || config->capacity > 1024 || config->heartbeat_ivl_ms < 0
    ||  config->heartbeat_liveness < 0 || config->call_timeout_ms < 0)
        return ufo_error_set (err, UFO_E_RANGE, "connection: capacity must be 0..1024, heartbeat settings and "
                              "the call timeout >= 0");
    return 0;
}

ufo_conn_t *
ufo_conn_new (const ufo_conn_config_t *config, ufo_loop_t *loop, ufo_conn_fn *on_event, void *arg,
              ufo_error_t *err)
{
    assert (loop && on_event);
    if (ufo_conn_config_check (config, err) < 0)
        return NULL;
    ufo_conn_t *self = ufo_calloc (1, sizeof *self);
    self->loop = loop;
    self->on_event = on_event;
    self->on_event_arg = arg;
    self->pending = ufo_value_new_list ();
    snprintf (self->endpoint, sizeof self->endpoint, "%s", config->endpoint);
    self->server_key = config->curve_server_key ? ufo_strdup (config->curve_server_key) : NULL;
    self->cert_path = config->curve_cert_path ? ufo_strdup (config->curve_cert_path) : NULL;
    self->ivl_ms = config->heartbeat_ivl_ms > 0 ? config->heartbeat_ivl_ms : 1000;
    self->liveness = config->heartbeat_liveness > 0 ? config->heartbeat_liveness : 3;
    self->call_timeout_ms = config->call_timeout_ms > 0 ? config->call_timeout_ms : S_CALL_TIMEOUT_MS;
    self->worker = config->service != NULL;
    ufo_msg_new_id (self->wid);
    ufo_msg_new_id (self->cid);
    if (self->worker) {
        snprintf (self->service, sizeof self->service, "%s", config->service);
        self->has_device = config->device && *config->device;
        snprintf (self->device, sizeof self->device, "%s", self->has_device ? config->device : "");
        self->capacity = config->capacity > 0 ? config->capacity : 1;
    }
    if (config->name && *config->name)
        snprintf (self->name, sizeof self->name, "%s", config->name);
    else
        ufo_link_default_name (self->name, sizeof self->name, self->worker ? config->service : "client");
    snprintf (self->rid, sizeof self->rid, "%s-%s", self->worker ? "w" : "c", self->worker ? self->wid : self->cid);
    ufo_link_handler_t handler = { self, s_make_register, s_make_heartbeat, s_on_registered, s_on_down,
                                   s_on_message, s_on_reply, conn_on_call };
    self->link = ufo_link_new (self->endpoint, self->rid, self->ivl_ms, self->liveness, self->server_key,
                               self->cert_path, &handler);
    ufo_loop_source_t src = { s_loop_service, s_loop_items, s_loop_dispatch };
    self->source_id = ufo_loop_source_add (loop, &src, self);
    //  connect now: czmq is started (and has set its signal handlers) when this returns
    self->wait_ms = conn_service_io (self);
    return self;
}

void
ufo_conn_destroy (ufo_conn_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_conn_t *self = *self_p;
    ufo_loop_remove (self->loop, self->source_id);
    if (self->worker && ufo_link_up (self->link)) {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "worker", self->wid);
        ufo_link_queue (self->link, "worker.leave", &body, NULL);
    }
    ufo_conn_flush (self, 1000);
    conn_calls_close (self);
    ufo_link_destroy (&self->link);
    ufo_value_destroy (&self->pending);
    free (self->server_key);
    free (self->cert_path);
    free (self->tasks);
    for (size_t i = 0; i < self->nrunning; i++)
        free (self->running [i]);
    free (self->running);
    free (self->open);
    for (size_t i = 0; i < self->nknown; i++)
        free (self->known [i]);
    free (self->known);
    free (self->calls);
    free (self);
    *self_p = NULL;
}

bool
ufo_conn_connected (ufo_conn_t *self)
{
    assert (self);
    return ufo_link_up (self->link);
}

const char *
ufo_conn_routing_id (ufo_conn_t *self)
{
    assert (self);
    return self->rid;
}

//  --- Worker side API ---------------------------------------------------------------------------

static ssize_t
s_running_index (ufo_conn_t *self, const char *id)
{
    for (size_t i = 0; id && i < self->nrunning; i++)
        if (strcmp (self->running [i], id) == 0)
            return (ssize_t) i;
    return -1;
}

//  PROGRESS / COMPLETE of a task the link knows (else dropped: a released task).
static void
s_worker_send (ufo_conn_t *self, bool progress, const char *id, const char *status, ufo_value_t **payload_p)
{
    conn_running_t *t = s_task_find (self, id);
    if (!t) {
        ufo_value_destroy (payload_p);
        return;
    }
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", self->wid);
    ufo_value_map_set_str (body, "task", id);
    ufo_value_map_set_int (body, "attempt", t->attempt);
    if (progress)
        ufo_value_map_set_int (body, "n", ++t->progress_n);
    else
        ufo_value_map_set_str (body, "status", status);
    const char *key = progress ? "body" : "result";
    if (payload_p && *payload_p)
        ufo_value_map_set (body, key, payload_p);
    else
        ufo_value_map_set_null (body, key);
    char tag [UFO_TASK_ID_MAX + 32];
    snprintf (tag, sizeof tag, "%" PRId64 ":%s", t->attempt, id);
    ufo_link_queue (self->link, progress ? "task.progress" : "task.complete", &body, tag);
}

int
ufo_conn_progress (ufo_conn_t *self, const char *task_id, ufo_value_t **body_p)
{
    assert (self);
    if (s_running_index (self, task_id) < 0) {
        ufo_value_destroy (body_p);
        return -1;
    }
    s_worker_send (self, true, task_id, NULL, body_p);
    return 0;
}

int
ufo_conn_complete (ufo_conn_t *self, const char *task_id, const char *status, ufo_value_t **result_p)
{
    assert (self);
    ssize_t i = s_running_index (self, task_id);
    if (i < 0 || !status || (strcmp (status, "done") != 0 && strcmp (status, "failed") != 0
                             && strcmp (status, "cancelled") != 0)) {
        ufo_value_destroy (result_p);
        return -1;
    }
    s_worker_send (self, false, task_id, status, result_p);
    free (self->running [i]);
    self->running [i] = self->running [--self->nrunning];
    return 0;
}

//  --- Submitter side API --------------------------------------------------------------------------

static int
s_spec_str (const ufo_value_t *spec, const char *key, size_t max, bool name, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (spec, key);
    if (!v || ufo_value_type (v) == UFO_TNULL)
        return 0;
    if (ufo_value_type (v) != UFO_TSTRING || ufo_value_strlen (v) > max
    ||  (name && !ufo_task_service_valid (ufo_value_str (v), false)))
        return ufo_error_set (err, UFO_E_INVALID, "task spec: '%s' must be a string of at most %zu bytes%s",
                              key, max, name ? " of [A-Za-z0-9_.:@-]" : "");
    return 0;
}

static int
s_spec_int (const ufo_value_t *spec, const char *key, int64_t max, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (spec, key);
    if (!v || ufo_value_type (v) == UFO_TNULL)
        return 0;
    if (ufo_value_type (v) != UFO_TINT || ufo_value_int (v) < 0 || ufo_value_int (v) > max)
        return ufo_error_set (err, UFO_E_INVALID, "task spec: '%s' must be an int in 0..%" PRId64, key, max);
    return 0;
}

int
ufo_conn_spec_check (const ufo_value_t *spec, ufo_error_t *err)
{
    const char *service = ufo_value_map_str (spec, "service", NULL);
    const char *id = ufo_value_map_str (spec, "task", NULL);
    if (ufo_value_type (spec) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "task spec must be a map");
    if (!service || !ufo_task_service_valid (service, false))
        return ufo_error_set (err, UFO_E_INVALID, "task spec: 'service' must be 1..128 bytes of [A-Za-z0-9_.:@-]");
    if (ufo_value_map_get (spec, "task") && (!id || strlen (id) > 32 || !ufo_task_id_valid (id)))
        return ufo_error_set (err, UFO_E_INVALID, "task spec: 'task' must be 1..32 bytes of [A-Za-z0-9_.:@-]");
    if (s_spec_str (spec, "device", UFO_TASK_NAME_MAX, true, err) != 0
    ||  s_spec_str (spec, "session", UFO_TASK_NAME_MAX, false, err) != 0
    ||  s_spec_str (spec, "idempotency_key", UFO_TASK_NAME_MAX, false, err) != 0
    ||  s_spec_int (spec, "deadline_ms", 366LL * 86400 * 1000, err) != 0
    ||  s_spec_int (spec, "max_attempts", 1000, err) != 0)
        return -1;
    return 0;
}

int
ufo_conn_submit (ufo_conn_t *self, ufo_value_t **spec_p, char id_out [33], ufo_error_t *err)
{
    assert (self);
    ufo_value_t *spec = spec_p ? *spec_p : NULL;
    if (spec_p)
        *spec_p = NULL;
    if (ufo_conn_spec_check (spec, err) != 0) {
        ufo_value_destroy (&spec);
        return -1;
    }
    char id [33];
    if (ufo_value_map_get (spec, "task"))
        snprintf (id, sizeof id, "%s", ufo_value_map_str (spec, "task", ""));
    else
        ufo_msg_new_id (id);
    if (id_out)
        memcpy (id_out, id, 33);
    ufo_value_t *req = ufo_value_new_map ();
    ufo_value_map_set_str (req, "task", id);
    static const char *keys [] = { "service", "device", "session", "idempotency_key", "deadline_ms",
                                   "max_attempts", "body" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        const ufo_value_t *v = ufo_value_map_get (spec, keys [i]);
        if (v)
            ufo_value_map_set_copy (req, keys [i], v);
    }
    ufo_value_destroy (&spec);
    ufo_value_map_set_str (req, "client", self->cid);
    ufo_value_map_set_str (req, "name", self->name);
    if (self->nknown == self->cap_known) {
        self->cap_known = self->cap_known ? self->cap_known * 2 : 16;
        self->known = ufo_realloc (self->known, self->cap_known * sizeof *self->known);
    }
    self->known [self->nknown++] = ufo_strdup (id);
    if (self->nopen == self->cap_open) {
        self->cap_open = self->cap_open ? self->cap_open * 2 : 16;
        self->open = ufo_realloc (self->open, self->cap_open * sizeof *self->open);
    }
    conn_open_t *o = &self->open [self->nopen++];
    memset (o, 0, sizeof *o);
    snprintf (o->id, sizeof o->id, "%s", id);
    snprintf (o->broker_id, sizeof o->broker_id, "%s", id);
    if (self->worker && !self->client_used) {
        //  the first submission registers the client id (3.3); a hello sets its heartbeat window
        self->client_used = true;
        ufo_value_t *hello = s_client_hello (self);
        ufo_link_queue (self->link, "client.hello", &hello, "C");
    }
    self->client_used = true;
    //  a deadline counts from now: the time the request waits to be sent counts against it
    int64_t deadline_ms = ufo_value_map_int (req, "deadline_ms", 0);
    ufo_link_queue_until (self->link, "task.submit", &req, id, deadline_ms > 0 ? ufo_time_mono_ms () + deadline_ms : 0);
    return 0;
}

static bool
s_known (ufo_conn_t *self, const char *id)
{
    for (size_t i = 0; id && i < self->nknown; i++)
        if (strcmp (self->known [i], id) == 0)
            return true;
    return false;
}

int
ufo_conn_input (ufo_conn_t *self, const char *task_id, ufo_value_t **body_p)
{
    assert (self);
    if (!s_known (self, task_id)) {
        ufo_value_destroy (body_p);
        return -1;
    }
    conn_open_t *o = s_open_find (self, task_id, false);
    ufo_value_t *req = ufo_value_new_map ();
    ufo_value_map_set_str (req, "client", self->cid);
    ufo_value_map_set_str (req, "task", o ? o->broker_id : task_id);
    if (body_p && *body_p)
        ufo_value_map_set (req, "body", body_p);
    else
        ufo_value_map_set_null (req, "body");
    ufo_link_queue (self->link, "task.input", &req, task_id);
    return 0;
}

int
ufo_conn_cancel (ufo_conn_t *self, const char *task_id)
{
    assert (self);
    if (!ufo_task_id_valid (task_id))
        return -1;
    conn_open_t *o = s_open_find (self, task_id, false);
    ufo_value_t *req = ufo_value_new_map ();
    ufo_value_map_set_str (req, "client", self->cid);
    ufo_value_map_set_str (req, "task", o ? o->broker_id : task_id);
    ufo_link_queue (self->link, "task.cancel", &req, task_id);
    return 0;
}

uint64_t
ufo_conn_fetch (ufo_conn_t *self, const char *task_id, int timeout_ms, ufo_conn_call_fn *fn, void *arg)
{
    assert (self && task_id);
    conn_open_t *o = s_open_find (self, task_id, false);
    ufo_value_t *q = ufo_value_new_map ();
    ufo_value_map_set_str (q, "task", o ? o->broker_id : task_id);
    return ufo_conn_call (self, "task.fetch", &q, NULL, 0, timeout_ms, fn, arg);
}
