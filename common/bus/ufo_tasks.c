/*  ufo_tasks.c - submitting tasks and following them (ufo_tasks.h). The broker link
    (dispatch_private.h) lives in a czmq actor thread, or in the caller's ufo_loop
    (ufo_tasks_new_in_loop). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_task_proto.h"
#include "ufo_tasks.h"
#include "dispatch_private.h"
#include "ufo_loop.h"
#include <czmq.h>

typedef struct {
    char id [UFO_TASK_ID_MAX + 1];          //  the submitter's id (what the caller holds)
    char broker_id [UFO_TASK_ID_MAX + 1];   //  the broker's (differs after an idempotency match)
    bool accepted;
} s_open_t;

typedef struct {
    zsock_t *pipe;
    ufo_link_t *link;
    char endpoint [512];
    char *server_key, *cert_path;           //  CURVE (NULL: the process default)
    char cid [33];
    char name [UFO_TASK_NAME_MAX + 1];
    s_open_t *open;                         //  tasks without a result yet
    size_t nopen, cap_open;
    bool was_connected;
    ufo_value_t *pending;                   //  in-loop mode: events for the caller (else NULL)
} s_actor_t;

struct _ufo_tasks_t {
    zactor_t *actor;
    s_actor_t args;
    char **known;                           //  ids submitted through this handle
    size_t nknown, cap_known;
    ufo_value_t *stash;                     //  events read while waiting for a fetch answer
    uint64_t fetch_counter;
    //  in-loop mode (no actor)
    ufo_loop_t *loop;
    ufo_tasks_fn *on_event;
    void *on_event_arg;
};

//  --- Actor ----------------------------------------------------------------------------------

static s_open_t *
s_open_find (s_actor_t *a, const char *id, bool broker)
{
    for (size_t i = 0; id && i < a->nopen; i++)
        if (strcmp (broker ? a->open [i].broker_id : a->open [i].id, id) == 0)
            return &a->open [i];
    return NULL;
}

static void
s_open_drop (s_actor_t *a, s_open_t *o)
{
    *o = a->open [--a->nopen];
}

static void
s_emit (s_actor_t *a, ufo_value_t **ev_p)
{
    if (a->pending)
        ufo_value_list_push (a->pending, ev_p);
    else
        ufo_link_pipe_event (a->link, a->pipe, ev_p);
}

static void
s_emit_result (s_actor_t *a, s_open_t *o, const char *status, const char *reason, int64_t attempts,
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
    s_emit (a, &ev);
    s_open_drop (a, o);
}

static void
s_make_register (void *owner, const char **type_p, ufo_value_t **body_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "client", a->cid);
    ufo_value_map_set_str (body, "name", a->name);
    *type_p = "client.hello";
    *body_p = body;
}

static void
s_make_heartbeat (void *owner, const char **type_p, ufo_value_t **body_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "client", a->cid);
    *type_p = "client.heartbeat";
    *body_p = body;
}

static void
s_on_registered (void *owner, const ufo_value_t *body)
{
    UFO_UNUSED (body);
    s_actor_t *a = (s_actor_t *) owner;
    if (!a->was_connected) {
        a->was_connected = true;
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "connected");
        s_emit (a, &ev);
    }
    //  Results may have been sent while we were away: ask for the state of every open task.
    for (size_t i = 0; i < a->nopen; i++) {
        if (!a->open [i].accepted)
            continue;
        ufo_value_t *q = ufo_value_new_map ();
        ufo_value_map_set_str (q, "task", a->open [i].broker_id);
        char tag [UFO_TASK_ID_MAX + 8];
        snprintf (tag, sizeof tag, "S:%s", a->open [i].id);
        ufo_link_queue (a->link, "task.fetch", &q, tag);
    }
}

static void
s_on_down (void *owner)
{
    s_actor_t *a = (s_actor_t *) owner;
    if (a->was_connected) {
        a->was_connected = false;
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "disconnected");
        s_emit (a, &ev);
    }
}

static void
s_on_message (void *owner, const char *type, const ufo_value_t *body)
{
    s_actor_t *a = (s_actor_t *) owner;
    //  Several of our ids may follow one broker task (the same idempotency key): each gets it.
    const char *broker_id = ufo_value_map_str (body, "task", "");
    bool progress = strcmp (type, "task.progress") == 0;
    if (!progress && strcmp (type, "task.result") != 0)
        return;
    for (size_t i = 0; i < a->nopen;) {
        s_open_t *o = &a->open [i];
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
            s_emit (a, &ev);
            i++;
        }
        else                            //  drops the entry: the last one moves to i
            s_emit_result (a, o, ufo_value_map_str (body, "status", "failed"), ufo_value_map_str (body, "reason", ""),
                           ufo_value_map_int (body, "attempts", 0), ufo_value_map_get (body, "body"));
    }
}

static void
s_on_reply (void *owner, const char *tag, const char *type, bool ok, const ufo_value_t *body)
{
    s_actor_t *a = (s_actor_t *) owner;
    if (!tag)
        return;
    if (strncmp (tag, "F:", 2) == 0) {
        //  A caller's ufo_tasks_fetch
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "fetch");
        ufo_value_map_set_str (ev, "tag", tag + 2);
        ufo_value_map_set_bool (ev, "ok", ok);
        ufo_value_map_set_copy (ev, "body", body);
        s_emit (a, &ev);
        return;
    }
    if (strncmp (tag, "S:", 2) == 0) {
        s_open_t *o = s_open_find (a, tag + 2, false);
        const char *state = ufo_value_map_str (body, "state", "");
        if (o && ok && (strcmp (state, "done") == 0 || strcmp (state, "failed") == 0
                        || strcmp (state, "cancelled") == 0))
            s_emit_result (a, o, state, ufo_value_map_str (body, "reason", ""),
                           ufo_value_map_int (body, "attempts", 0), ufo_value_map_get (body, "result"));
        return;
    }
    s_open_t *o = s_open_find (a, tag, false);
    if (strcmp (type, "task.submit") == 0 && o) {
        if (!ok) {
            char reason [400];
            snprintf (reason, sizeof reason, "rejected by the broker: %s: %s", ufo_value_map_str (body, "code", "?"),
                      ufo_value_map_str (body, "message", "?"));
            s_emit_result (a, o, "failed", reason, 0, NULL);
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
        s_emit (a, &ev);
        return;
    }
    if (!ok) {
        ufo_value_t *ev = ufo_value_new_map ();
        ufo_value_map_set_str (ev, "kind", "error");
        ufo_value_map_set_str (ev, "task", tag);
        ufo_value_map_set_str (ev, "request", type);
        ufo_value_map_set_str (ev, "code", ufo_value_map_str (body, "code", "?"));
        ufo_value_map_set_str (ev, "message", ufo_value_map_str (body, "message", "?"));
        s_emit (a, &ev);
    }
}

//  A command from the caller (ufo_link_run): *arg_p may be taken.
static void
s_on_command (void *owner, const char *verb, ufo_value_t **arg_p)
{
    s_actor_t *a = (s_actor_t *) owner;
    char id [UFO_TASK_ID_MAX + 1];
    snprintf (id, sizeof id, "%.64s", ufo_value_str (ufo_value_map_get (*arg_p, "task")) ? ufo_value_str (ufo_value_map_get (*arg_p, "task")) : "");
    if (strcmp (verb, "SUBMIT") == 0) {
        if (a->nopen == a->cap_open) {
            a->cap_open = a->cap_open ? a->cap_open * 2 : 16;
            a->open = ufo_realloc (a->open, a->cap_open * sizeof *a->open);
        }
        s_open_t *o = &a->open [a->nopen++];
        memset (o, 0, sizeof *o);
        snprintf (o->id, sizeof o->id, "%s", id);
        snprintf (o->broker_id, sizeof o->broker_id, "%s", id);
        ufo_value_map_set_str (*arg_p, "client", a->cid);
        ufo_value_map_set_str (*arg_p, "name", a->name);
        ufo_link_queue (a->link, "task.submit", arg_p, id);
    }
    else
    if (strcmp (verb, "INPUT") == 0 || strcmp (verb, "CANCEL") == 0) {
        s_open_t *o = s_open_find (a, id, false);
        ufo_value_map_set_str (*arg_p, "client", a->cid);
        ufo_value_map_set_str (*arg_p, "task", o ? o->broker_id : id);
        ufo_link_queue (a->link, verb [0] == 'I' ? "task.input" : "task.cancel", arg_p, id);
    }
    else
    if (strcmp (verb, "FETCH") == 0) {
        s_open_t *o = s_open_find (a, id, false);
        char tag [128];
        snprintf (tag, sizeof tag, "F:%s", ufo_value_map_str (*arg_p, "tag", ""));
        ufo_value_t *q = ufo_value_new_map ();
        ufo_value_map_set_str (q, "task", o ? o->broker_id : id);
        ufo_link_queue (a->link, "task.fetch", &q, tag);
    }
}

static ufo_link_t *
s_link_new (s_actor_t *a)
{
    ufo_link_handler_t handler = { a, s_make_register, s_make_heartbeat, s_on_registered, s_on_down,
                                   s_on_message, s_on_reply };
    char rid [64];
    snprintf (rid, sizeof rid, "c-%s", a->cid);
    return ufo_link_new (a->endpoint, rid, 1000, 3, a->server_key, a->cert_path, &handler);
}

static void
s_leave (s_actor_t *a)
{
    //  Submissions not yet acknowledged get a short chance to reach the broker.
    ufo_link_drain (a->link, 500);
    ufo_link_destroy (&a->link);
    free (a->open);
    a->open = NULL;
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

//  --- Caller side -----------------------------------------------------------------------------

static ufo_tasks_t *
s_tasks_new (const char *endpoint, const char *name, const char *curve_server_key,
             const char *curve_cert_path, ufo_error_t *err)
{
    if (!endpoint || !*endpoint || strlen (endpoint) >= 512) {
        ufo_error_set (err, UFO_E_INVALID, "tasks: a broker endpoint (under 512 bytes) is required");
        return NULL;
    }
    ufo_tasks_t *self = ufo_calloc (1, sizeof *self);
    s_actor_t *a = &self->args;
    snprintf (a->endpoint, sizeof a->endpoint, "%s", endpoint);
    ufo_msg_new_id (a->cid);
    if (name && *name)
        snprintf (a->name, sizeof a->name, "%s", name);
    else
        ufo_link_default_name (a->name, sizeof a->name, "client");
    a->server_key = curve_server_key ? ufo_strdup (curve_server_key) : NULL;
    a->cert_path = curve_cert_path ? ufo_strdup (curve_cert_path) : NULL;
    self->stash = ufo_value_new_list ();
    return self;
}

ufo_tasks_t *
ufo_tasks_new (const char *endpoint, const char *name, const char *curve_server_key,
               const char *curve_cert_path, ufo_error_t *err)
{
    ufo_tasks_t *self = s_tasks_new (endpoint, name, curve_server_key, curve_cert_path, err);
    if (!self)
        return NULL;
    s_actor_t *a = &self->args;
    self->actor = zactor_new (s_actor, a);
    if (!self->actor) {
        free (a->server_key);
        free (a->cert_path);
        ufo_value_destroy (&self->stash);
        free (self);
        ufo_error_set (err, UFO_E_INTERNAL, "tasks: cannot start the actor thread");
        return NULL;
    }
    return self;
}

//  In-loop mode: an event for the caller (answers of fetches are not for this mode).
static void
s_deliver (void *owner, ufo_value_t **event_p)
{
    ufo_tasks_t *self = owner;
    if (strcmp (ufo_value_map_str (*event_p, "kind", ""), "fetch") != 0)
        self->on_event (self->on_event_arg, event_p);
}

ufo_tasks_t *
ufo_tasks_new_in_loop (const char *endpoint, const char *name, const char *curve_server_key,
                       const char *curve_cert_path, ufo_loop_t *loop, ufo_tasks_fn *on_event, void *arg,
                       ufo_error_t *err)
{
    assert (loop && on_event);
    ufo_tasks_t *self = s_tasks_new (endpoint, name, curve_server_key, curve_cert_path, err);
    if (!self)
        return NULL;
    self->args.pending = ufo_value_new_list ();
    self->args.link = s_link_new (&self->args);
    self->loop = loop;
    self->on_event = on_event;
    self->on_event_arg = arg;
    ufo_link_attach (self->args.link, loop, self->args.pending, s_deliver, self);
    return self;
}

//  A command to the link: through the pipe (actor) or at once (loop). Takes *arg_p.
static void
s_command (ufo_tasks_t *self, const char *verb, ufo_value_t **arg_p)
{
    if (self->loop) {
        s_on_command (&self->args, verb, arg_p);
        ufo_value_destroy (arg_p);
    }
    else
        ufo_link_pipe_command (self->actor, verb, arg_p);
}

void
ufo_tasks_destroy (ufo_tasks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_tasks_t *self = *self_p;
    zactor_destroy (&self->actor);
    if (self->loop) {
        s_leave (&self->args);
        ufo_value_destroy (&self->args.pending);
    }
    free (self->args.server_key);
    free (self->args.cert_path);
    for (size_t i = 0; i < self->nknown; i++)
        free (self->known [i]);
    free (self->known);
    ufo_value_destroy (&self->stash);
    free (self);
    *self_p = NULL;
}

static bool
s_known (ufo_tasks_t *self, const char *id)
{
    for (size_t i = 0; id && i < self->nknown; i++)
        if (strcmp (self->known [i], id) == 0)
            return true;
    return false;
}

//  Checks an optional string field of a spec. Returns 0, or -1 with err.
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
ufo_tasks_submit (ufo_tasks_t *self, ufo_value_t **spec_p, char id_out [33], ufo_error_t *err)
{
    ufo_value_t *spec = spec_p ? *spec_p : NULL;
    if (spec_p)
        *spec_p = NULL;
    int rc = 0;
    const char *service = ufo_value_map_str (spec, "service", NULL);
    if (ufo_value_type (spec) != UFO_TMAP)
        rc = ufo_error_set (err, UFO_E_TYPE, "task spec must be a map");
    else
    if (!service || !ufo_task_service_valid (service, false))
        rc = ufo_error_set (err, UFO_E_INVALID, "task spec: 'service' must be 1..128 bytes of [A-Za-z0-9_.:@-]");
    else
    if (s_spec_str (spec, "device", UFO_TASK_NAME_MAX, true, err) != 0
    ||  s_spec_str (spec, "session", UFO_TASK_NAME_MAX, false, err) != 0
    ||  s_spec_str (spec, "idempotency_key", UFO_TASK_NAME_MAX, false, err) != 0
    ||  s_spec_int (spec, "deadline_ms", 366LL * 86400 * 1000, err) != 0
    ||  s_spec_int (spec, "max_attempts", 1000, err) != 0)
        rc = -1;
    if (rc != 0) {
        ufo_value_destroy (&spec);
        return -1;
    }
    char id [33];
    ufo_msg_new_id (id);
    if (id_out)
        memcpy (id_out, id, 33);
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", id);
    static const char *keys [] = { "service", "device", "session", "idempotency_key", "deadline_ms",
                                   "max_attempts", "body" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        const ufo_value_t *v = ufo_value_map_get (spec, keys [i]);
        if (v)
            ufo_value_map_set_copy (arg, keys [i], v);
    }
    ufo_value_destroy (&spec);
    if (self->nknown == self->cap_known) {
        self->cap_known = self->cap_known ? self->cap_known * 2 : 16;
        self->known = ufo_realloc (self->known, self->cap_known * sizeof *self->known);
    }
    self->known [self->nknown++] = ufo_strdup (id);
    s_command (self, "SUBMIT", &arg);
    return 0;
}

int
ufo_tasks_input (ufo_tasks_t *self, const char *task_id, ufo_value_t **body_p)
{
    if (!s_known (self, task_id)) {
        ufo_value_destroy (body_p);
        return -1;
    }
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    if (body_p && *body_p)
        ufo_value_map_set (arg, "body", body_p);
    else
        ufo_value_map_set_null (arg, "body");
    s_command (self, "INPUT", &arg);
    return 0;
}

int
ufo_tasks_cancel (ufo_tasks_t *self, const char *task_id)
{
    if (!ufo_task_id_valid (task_id))
        return -1;
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    s_command (self, "CANCEL", &arg);
    return 0;
}

ufo_value_t *
ufo_tasks_next (ufo_tasks_t *self, int timeout_ms)
{
    assert (!self->loop);
    if (ufo_value_size (self->stash) > 0) {
        ufo_value_t *ev = ufo_value_dup (ufo_value_list_at (self->stash, 0));
        ufo_value_list_remove (self->stash, 0);
        return ev;
    }
    for (;;) {
        ufo_value_t *ev = ufo_link_pipe_next (self->actor, timeout_ms);
        //  answers of fetches that gave up waiting are dropped
        if (ev && strcmp (ufo_value_map_str (ev, "kind", ""), "fetch") == 0) {
            ufo_value_destroy (&ev);
            timeout_ms = 0;
            continue;
        }
        return ev;
    }
}

int
ufo_tasks_fd (ufo_tasks_t *self)
{
    assert (!self->loop);
    return zsock_fd (self->actor);
}

ufo_value_t *
ufo_tasks_fetch (ufo_tasks_t *self, const char *task_id, int timeout_ms, ufo_error_t *err)
{
    assert (!self->loop);
    if (!ufo_task_id_valid (task_id)) {
        ufo_error_set (err, UFO_E_INVALID, "fetch: '%s' is not a task id", task_id ? task_id : "");
        return NULL;
    }
    char tag [32];
    snprintf (tag, sizeof tag, "%" PRIu64, ++self->fetch_counter);
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    ufo_value_map_set_str (arg, "tag", tag);
    ufo_link_pipe_command (self->actor, "FETCH", &arg);
    int64_t until = timeout_ms < 0 ? INT64_MAX : ufo_time_mono_ms () + timeout_ms;
    for (;;) {
        int64_t left = until == INT64_MAX ? -1 : until - ufo_time_mono_ms ();
        if (left != -1 && left < 0)
            left = 0;
        ufo_value_t *ev = ufo_link_pipe_next (self->actor, (int) (left > INT32_MAX ? INT32_MAX : left));
        if (!ev) {
            if (left == 0) {
                ufo_error_set (err, UFO_E_TIMEOUT, "fetch: no answer from the broker within %d ms", timeout_ms);
                return NULL;
            }
            continue;
        }
        if (strcmp (ufo_value_map_str (ev, "kind", ""), "fetch") != 0) {
            ufo_value_list_push (self->stash, &ev);
            continue;
        }
        if (strcmp (ufo_value_map_str (ev, "tag", ""), tag) != 0) {
            ufo_value_destroy (&ev);
            continue;
        }
        ufo_value_t *body = ufo_value_dup (ufo_value_map_get (ev, "body"));
        bool ok = ufo_value_map_bool (ev, "ok", false);
        ufo_value_destroy (&ev);
        if (ok)
            return body;
        const char *code = ufo_value_map_str (body, "code", "");
        ufo_error_set (err, strcmp (code, "not_found") == 0 ? UFO_E_NOT_FOUND : UFO_E_INVALID, "fetch: %s",
                       ufo_value_map_str (body, "message", "?"));
        ufo_value_destroy (&body);
        return NULL;
    }
}
