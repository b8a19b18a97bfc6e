/*  ufo_worker.c - a worker of a named service (ufo_worker.h). The broker link
    (dispatch_private.h) lives either in a czmq actor thread, so heartbeats go on while the
    caller blocks, or in the caller's ufo_loop (ufo_worker_new_in_loop), without a thread. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_task_proto.h"
#include "ufo_worker.h"
#include "dispatch_private.h"
#include "ufo_loop.h"
#include <czmq.h>

typedef struct {
    char id [UFO_TASK_ID_MAX + 1];
    int64_t attempt;
    int64_t progress_n;
} s_running_t;

//  Everything the actor thread owns.
typedef struct {
    zsock_t *pipe;
    ufo_link_t *link;
    char endpoint [512];
    char *server_key, *cert_path;   //  CURVE (NULL: the process default)
    char wid [33];
    char name [UFO_TASK_NAME_MAX + 1];
    char service [UFO_TASK_NAME_MAX + 1];
    char device [UFO_TASK_NAME_MAX + 1];
    bool has_device;
    int capacity, ivl_ms, liveness;
    s_running_t *tasks;
    size_t ntasks, cap_tasks;
    bool was_connected;
    int *connected;                 //  shared with the caller (atomic access)
    ufo_value_t *pending;           //  in-loop mode: events not yet handed to the caller (else NULL)
} s_actor_t;

struct _ufo_worker_t {
    zactor_t *actor;
    s_actor_t args;                 //  copied into the actor at start
    int connected;
    char **running;                 //  caller side: tasks taken and not completed
    size_t nrunning, cap_running;
    //  in-loop mode (no actor)
    ufo_loop_t *loop;
    ufo_worker_fn *on_event;
    void *on_event_arg;
};

//  --- Actor ------------------------------------------------------------------------------

static s_running_t *
s_task_find (s_actor_t *a, const char *id)
{
    for (size_t i = 0; i < a->ntasks; i++)
        if (strcmp (a->tasks [i].id, id) == 0)
            return &a->tasks [i];
    return NULL;
}

static void
s_task_drop (s_actor_t *a, const char *id)
{
    for (size_t i = 0; i < a->ntasks; i++)
        if (strcmp (a->tasks [i].id, id) == 0) {
            a->tasks [i] = a->tasks [--a->ntasks];
            return;
        }
}

static ufo_value_t *
s_running_list (s_actor_t *a)
{
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < a->ntasks; i++)
        ufo_value_list_push_str (list, a->tasks [i].id);
    return list;
}

static void
s_make_register (void *owner, const char **type_p, ufo_value_t **body_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", a->wid);
    ufo_value_map_set_str (body, "name", a->name);
    ufo_value_map_set_str (body, "service", a->service);
    if (a->has_device)
        ufo_value_map_set_str (body, "device", a->device);
    else
        ufo_value_map_set_null (body, "device");
    ufo_value_map_set_int (body, "capacity", a->capacity);
    ufo_value_map_set_int (body, "heartbeat_ivl_ms", a->ivl_ms);
    ufo_value_map_set_int (body, "heartbeat_liveness", a->liveness);
    ufo_value_t *running = s_running_list (a);
    ufo_value_map_set (body, "running", &running);
    *type_p = "worker.ready";
    *body_p = body;
}

static void
s_make_heartbeat (void *owner, const char **type_p, ufo_value_t **body_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "worker", a->wid);
    ufo_value_t *running = s_running_list (a);
    ufo_value_map_set (body, "running", &running);
    *type_p = "worker.heartbeat";
    *body_p = body;
}

//  Hands an event to the caller: through the pipe (actor), or into the pending list (loop).
static void
s_emit (s_actor_t *a, ufo_value_t **ev_p)
{
    if (a->pending)
        ufo_value_list_push (a->pending, ev_p);
    else
        ufo_link_pipe_event (a->link, a->pipe, ev_p);
}

static void
s_emit_kind (s_actor_t *a, const char *kind)
{
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", kind);
    s_emit (a, &ev);
}

static void
s_on_registered (void *owner, const ufo_value_t *body)
{
    UFO_UNUSED (body);
    s_actor_t *a = (s_actor_t *) owner;
    __atomic_store_n (a->connected, 1, __ATOMIC_RELEASE);
    if (!a->was_connected) {
        a->was_connected = true;
        ufo_debug ("worker %s registered for %s", a->name, a->service);
        s_emit_kind (a, "connected");
    }
}

static void
s_on_down (void *owner)
{
    s_actor_t *a = (s_actor_t *) owner;
    __atomic_store_n (a->connected, 0, __ATOMIC_RELEASE);
    if (a->was_connected) {
        a->was_connected = false;
        s_emit_kind (a, "disconnected");
    }
}

static void
s_on_message (void *owner, const char *type, const ufo_value_t *body)
{
    s_actor_t *a = (s_actor_t *) owner;
    const char *id = ufo_value_map_str (body, "task", NULL);
    if (!ufo_task_id_valid (id)) {
        ufo_warn ("worker %s: broker message %s without a valid task id, ignored", a->name, type);
        return;
    }
    if (strcmp (type, "task.assign") == 0) {
        int64_t attempt = ufo_value_map_int (body, "attempt", 1);
        s_running_t *t = s_task_find (a, id);
        if (t && t->attempt == attempt)
            return;                 //  delivered twice
        if (!t) {
            if (a->ntasks == a->cap_tasks) {
                a->cap_tasks = a->cap_tasks ? a->cap_tasks * 2 : 8;
                a->tasks = ufo_realloc (a->tasks, a->cap_tasks * sizeof *a->tasks);
            }
            t = &a->tasks [a->ntasks++];
            snprintf (t->id, sizeof t->id, "%s", id);
        }
        t->attempt = attempt;
        t->progress_n = 0;
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "task");
        for (size_t i = 0; i < ufo_value_size (body); i++)
            ufo_value_map_set_copy (ev, ufo_value_map_key_at (body, i), ufo_value_map_value_at (body, i));
        s_emit (a, &ev);
    }
    else
    if (strcmp (type, "task.input") == 0) {
        const char *kind = ufo_value_map_str (body, "kind", "input");
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", strcmp (kind, "cancel") == 0 ? "cancel" : "input");
        ufo_value_map_set_str (ev, "task", id);
        const ufo_value_t *input = ufo_value_map_get (body, "body");
        if (input)
            ufo_value_map_set_copy (ev, "body", input);
        else
            ufo_value_map_set_null (ev, "body");
        s_emit (a, &ev);
    }
}

static void
s_on_reply (void *owner, const char *tag, const char *type, bool ok, const ufo_value_t *body)
{
    s_actor_t *a = (s_actor_t *) owner;
    //  tag: "<attempt>:<task id>"; a newer attempt of the same task may run here by now
    int64_t attempt = tag ? strtoll (tag, NULL, 10) : 0;
    const char *colon = tag ? strchr (tag, ':') : NULL;
    const char *id = colon ? colon + 1 : "?";
    if (strcmp (type, "task.complete") == 0 && colon) {
        s_running_t *t = s_task_find (a, id);
        if (t && t->attempt == attempt)
            s_task_drop (a, id);
        if (ok && !ufo_value_map_bool (body, "accepted", true))
            ufo_warn ("worker %s: the broker discarded the result of task %s (attempt %" PRId64 "): %s",
                      a->name, id, attempt, ufo_value_map_str (body, "reason", "?"));
    }
    if (!ok)
        ufo_warn ("worker %s: %s for task %s refused: %s: %s", a->name, type, id,
                  ufo_value_map_str (body, "code", "?"), ufo_value_map_str (body, "message", "?"));
}

//  A command from the caller (ufo_link_run); the argument stays with the link.
static void
s_on_command (void *owner, const char *verb, ufo_value_t **arg_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    const ufo_value_t *arg = *arg_p;
    if (strcmp (verb, "PROGRESS") == 0 || strcmp (verb, "COMPLETE") == 0) {
        const char *id = ufo_value_map_str (arg, "task", "");
        s_running_t *t = s_task_find (a, id);
        if (t) {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_str (body, "worker", a->wid);
            ufo_value_map_set_str (body, "task", id);
            ufo_value_map_set_int (body, "attempt", t->attempt);
            bool progress = verb [0] == 'P';
            if (progress)
                ufo_value_map_set_int (body, "n", ++t->progress_n);
            else
                ufo_value_map_set_str (body, "status", ufo_value_map_str (arg, "status", "done"));
            const ufo_value_t *payload = ufo_value_map_get (arg, progress ? "body" : "result");
            if (payload)
                ufo_value_map_set_copy (body, progress ? "body" : "result", payload);
            else
                ufo_value_map_set_null (body, progress ? "body" : "result");
            char tag [UFO_TASK_ID_MAX + 32];
            snprintf (tag, sizeof tag, "%" PRId64 ":%s", t->attempt, id);
            ufo_link_queue (a->link, progress ? "task.progress" : "task.complete", &body, tag);
        }
    }
}

static ufo_link_t *
s_link_new (s_actor_t *a);

//  Leaving: deliver what is queued (results), then tell the broker, bounded to ~1 s.
static void
s_leave (s_actor_t *a)
{
    if (ufo_link_up (a->link)) {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "worker", a->wid);
        ufo_link_queue (a->link, "worker.leave", &body, NULL);
        ufo_link_drain (a->link, 1000);
    }
    ufo_link_destroy (&a->link);
    free (a->tasks);
    a->tasks = NULL;
}

static void
s_actor (zsock_t *pipe, void *args)
{
    s_actor_t *a = (s_actor_t *) args;
    a->pipe = pipe;
    a->link = s_link_new (a);
    zsock_signal (pipe, 0);
    ufo_link_run (a->link, pipe, s_on_command, a);
    s_leave (a);
}

//  --- Caller side -------------------------------------------------------------------------

//  Checks the configuration and fills in a new worker's settings; NULL with err.
static ufo_worker_t *
s_worker_new (const ufo_worker_config_t *config, ufo_error_t *err)
{
    if (!config || !config->endpoint || !*config->endpoint) {
        ufo_error_set (err, UFO_E_MISSING, "worker: the broker endpoint is required");
        return NULL;
    }
    if (strlen (config->endpoint) >= 512) {
        ufo_error_set (err, UFO_E_RANGE, "worker: endpoint too long");
        return NULL;
    }
    if (!config->service || !ufo_task_service_valid (config->service, true)) {
        ufo_error_set (err, UFO_E_INVALID, "worker: service '%s' must be 1..128 bytes of [A-Za-z0-9_.:@-] "
                       "or \"app:*\"", config->service ? config->service : "");
        return NULL;
    }
    if (config->device && *config->device && !ufo_task_service_valid (config->device, false)) {
        ufo_error_set (err, UFO_E_INVALID, "worker: device id '%s' must be 1..128 bytes of [A-Za-z0-9_.:@-]",
                       config->device);
        return NULL;
    }
    if (config->capacity < 0 || config->capacity > 1024 || config->heartbeat_ivl_ms < 0
    ||  config->heartbeat_liveness < 0) {
        ufo_error_set (err, UFO_E_RANGE, "worker: capacity must be 0..1024 and heartbeat settings >= 0");
        return NULL;
    }
    ufo_worker_t *self = ufo_calloc (1, sizeof *self);
    s_actor_t *a = &self->args;
    snprintf (a->endpoint, sizeof a->endpoint, "%s", config->endpoint);
    ufo_msg_new_id (a->wid);
    snprintf (a->service, sizeof a->service, "%s", config->service);
    a->has_device = config->device && *config->device;
    snprintf (a->device, sizeof a->device, "%s", a->has_device ? config->device : "");
    if (config->name && *config->name)
        snprintf (a->name, sizeof a->name, "%s", config->name);
    else
        ufo_link_default_name (a->name, sizeof a->name, config->service);
    a->capacity = config->capacity > 0 ? config->capacity : 1;
    a->ivl_ms = config->heartbeat_ivl_ms > 0 ? config->heartbeat_ivl_ms : 1000;
    a->liveness = config->heartbeat_liveness > 0 ? config->heartbeat_liveness : 3;
    a->connected = &self->connected;
    a->server_key = config->curve_server_key ? ufo_strdup (config->curve_server_key) : NULL;
    a->cert_path = config->curve_cert_path ? ufo_strdup (config->curve_cert_path) : NULL;
    return self;
}

//  The link of an actor or an in-loop worker.
static ufo_link_t *
s_link_new (s_actor_t *a)
{
    ufo_link_handler_t handler = { a, s_make_register, s_make_heartbeat, s_on_registered, s_on_down,
                                   s_on_message, s_on_reply };
    char rid [64];
    snprintf (rid, sizeof rid, "w-%s", a->wid);
    return ufo_link_new (a->endpoint, rid, a->ivl_ms, a->liveness, a->server_key, a->cert_path, &handler);
}

ufo_worker_t *
ufo_worker_new (const ufo_worker_config_t *config, ufo_error_t *err)
{
    ufo_worker_t *self = s_worker_new (config, err);
    if (!self)
        return NULL;
    s_actor_t *a = &self->args;
    self->actor = zactor_new (s_actor, a);
    if (!self->actor) {
        free (a->server_key);
        free (a->cert_path);
        free (self);
        ufo_error_set (err, UFO_E_INTERNAL, "worker: cannot start the actor thread");
        return NULL;
    }
    return self;
}

//  Records a task handed to the caller (it may then progress and complete it).
static void
s_track (ufo_worker_t *self, const ufo_value_t *ev);

//  In-loop mode: an event for the caller.
static void
s_deliver (void *owner, ufo_value_t **event_p)
{
    ufo_worker_t *self = owner;
    s_track (self, *event_p);
    self->on_event (self->on_event_arg, event_p);
}

ufo_worker_t *
ufo_worker_new_in_loop (const ufo_worker_config_t *config, ufo_loop_t *loop, ufo_worker_fn *on_event,
                        void *arg, ufo_error_t *err)
{
    assert (loop && on_event);
    ufo_worker_t *self = s_worker_new (config, err);
    if (!self)
        return NULL;
    s_actor_t *a = &self->args;
    a->pending = ufo_value_new_list ();
    a->link = s_link_new (a);
    self->loop = loop;
    self->on_event = on_event;
    self->on_event_arg = arg;
    ufo_link_attach (a->link, loop, a->pending, s_deliver, self);
    return self;
}

void
ufo_worker_destroy (ufo_worker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_worker_t *self = *self_p;
    zactor_destroy (&self->actor);
    if (self->loop) {
        s_leave (&self->args);
        ufo_value_destroy (&self->args.pending);
    }
    free (self->args.server_key);
    free (self->args.cert_path);
    for (size_t i = 0; i < self->nrunning; i++)
        free (self->running [i]);
    free (self->running);
    free (self);
    *self_p = NULL;
}

static ssize_t
s_running_index (ufo_worker_t *self, const char *id)
{
    for (size_t i = 0; id && i < self->nrunning; i++)
        if (strcmp (self->running [i], id) == 0)
            return (ssize_t) i;
    return -1;
}

static void
s_track (ufo_worker_t *self, const ufo_value_t *ev)
{
    if (ev && strcmp (ufo_value_map_str (ev, "kind", ""), "task") == 0) {
        const char *id = ufo_value_map_str (ev, "task", "");
        if (s_running_index (self, id) < 0) {
            if (self->nrunning == self->cap_running) {
                self->cap_running = self->cap_running ? self->cap_running * 2 : 8;
                self->running = ufo_realloc (self->running, self->cap_running * sizeof *self->running);
            }
            self->running [self->nrunning++] = ufo_strdup (id);
        }
    }
}

ufo_value_t *
ufo_worker_next (ufo_worker_t *self, int timeout_ms)
{
    assert (!self->loop);
    ufo_value_t *ev = ufo_link_pipe_next (self->actor, timeout_ms);
    s_track (self, ev);
    return ev;
}

//  A command to the link: through the pipe (actor), or at once (loop). Takes *arg_p.
static void
s_command (ufo_worker_t *self, const char *verb, ufo_value_t **arg_p)
{
    if (self->loop) {
        s_on_command (&self->args, verb, arg_p);
        ufo_value_destroy (arg_p);
    }
    else
        ufo_link_pipe_command (self->actor, verb, arg_p);
}

int
ufo_worker_fd (ufo_worker_t *self)
{
    assert (!self->loop);
    return zsock_fd (self->actor);
}

int
ufo_worker_progress (ufo_worker_t *self, const char *task_id, ufo_value_t **body_p)
{
    if (s_running_index (self, task_id) < 0) {
        ufo_value_destroy (body_p);
        return -1;
    }
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    if (body_p && *body_p)
        ufo_value_map_set (arg, "body", body_p);
    else
        ufo_value_map_set_null (arg, "body");
    s_command (self, "PROGRESS", &arg);
    return 0;
}

int
ufo_worker_complete (ufo_worker_t *self, const char *task_id, const char *status, ufo_value_t **result_p)
{
    ssize_t i = s_running_index (self, task_id);
    if (i < 0 || !status || (strcmp (status, "done") != 0 && strcmp (status, "failed") != 0
                             && strcmp (status, "cancelled") != 0)) {
        ufo_value_destroy (result_p);
        return -1;
    }
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    ufo_value_map_set_str (arg, "status", status);
    if (result_p && *result_p)
        ufo_value_map_set (arg, "result", result_p);
    else
        ufo_value_map_set_null (arg, "result");
    s_command (self, "COMPLETE", &arg);
    free (self->running [i]);
    self->running [i] = self->running [--self->nrunning];
    return 0;
}

bool
ufo_worker_connected (ufo_worker_t *self)
{
    return __atomic_load_n (&self->connected, __ATOMIC_ACQUIRE) != 0;
}
