/*  ufo_tasks.c - submitting tasks and following them (ufo_tasks.h): the submitter side of
    a ufo_conn (ufo_conn.h) in a thread of its own
    (ufo_conn_actor.c). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_task_proto.h"
#include "ufo_tasks.h"
#include "dispatch_private.h"

struct _ufo_tasks_t {
    void *actor;                            //  in a thread (zactor_t *)
    int connected;
    char **known;                           //  actor mode: ids submitted through this handle
    size_t nknown, cap_known;
    ufo_value_t *stash;                     //  events read while waiting for a fetch answer
    uint64_t fetch_counter;
};

static int
s_config (const char *endpoint, const char *name, const char *curve_server_key, const char *curve_cert_path,
          ufo_conn_config_t *cc, ufo_error_t *err)
{
    *cc = (ufo_conn_config_t) { .endpoint = endpoint, .name = name, .curve_server_key = curve_server_key,
                                .curve_cert_path = curve_cert_path };
    return ufo_conn_config_check (cc, err);
}

ufo_tasks_t *
ufo_tasks_new (const char *endpoint, const char *name, const char *curve_server_key,
               const char *curve_cert_path, ufo_error_t *err)
{
    ufo_conn_config_t cc;
    if (s_config (endpoint, name, curve_server_key, curve_cert_path, &cc, err) < 0)
        return NULL;
    ufo_tasks_t *self = ufo_calloc (1, sizeof *self);
    self->stash = ufo_value_new_list ();
    self->actor = ufo_conn_actor_new (&cc, &self->connected);
    if (!self->actor) {
        ufo_value_destroy (&self->stash);
        free (self);
        ufo_error_set (err, UFO_E_INTERNAL, "tasks: cannot start the actor thread");
        return NULL;
    }
    return self;
}

void
ufo_tasks_destroy (ufo_tasks_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_tasks_t *self = *self_p;
    ufo_conn_actor_destroy (&self->actor);
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

int
ufo_tasks_submit (ufo_tasks_t *self, ufo_value_t **spec_p, char id_out [33], ufo_error_t *err)
{
    ufo_value_t *spec = spec_p ? *spec_p : NULL;
    if (spec_p)
        *spec_p = NULL;
    if (ufo_conn_spec_check (spec, err) != 0) {
        ufo_value_destroy (&spec);
        return -1;
    }
    //  the id is chosen here, so the caller has it at once
    char id [33];
    ufo_msg_new_id (id);
    if (id_out)
        memcpy (id_out, id, 33);
    ufo_value_map_set_str (spec, "task", id);
    if (self->nknown == self->cap_known) {
        self->cap_known = self->cap_known ? self->cap_known * 2 : 16;
        self->known = ufo_realloc (self->known, self->cap_known * sizeof *self->known);
    }
    self->known [self->nknown++] = ufo_strdup (id);
    ufo_conn_actor_command (self->actor, "SUBMIT", &spec);
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
    ufo_conn_actor_command (self->actor, "INPUT", &arg);
    return 0;
}

int
ufo_tasks_cancel (ufo_tasks_t *self, const char *task_id)
{
    if (!ufo_task_id_valid (task_id))
        return -1;
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    ufo_conn_actor_command (self->actor, "CANCEL", &arg);
    return 0;
}

ufo_value_t *
ufo_tasks_next (ufo_tasks_t *self, int timeout_ms)
{
    assert (self->actor);
    if (ufo_value_size (self->stash) > 0) {
        ufo_value_t *ev = ufo_value_dup (ufo_value_list_at (self->stash, 0));
        ufo_value_list_remove (self->stash, 0);
        return ev;
    }
    for (;;) {
        ufo_value_t *ev = ufo_conn_actor_next (self->actor, timeout_ms);
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
    assert (self->actor);
    return ufo_conn_actor_fd (self->actor);
}

ufo_value_t *
ufo_tasks_fetch (ufo_tasks_t *self, const char *task_id, int timeout_ms, ufo_error_t *err)
{
    assert (self->actor);
    if (!ufo_task_id_valid (task_id)) {
        ufo_error_set (err, UFO_E_INVALID, "fetch: '%s' is not a task id", task_id ? task_id : "");
        return NULL;
    }
    char tag [32];
    snprintf (tag, sizeof tag, "%" PRIu64, ++self->fetch_counter);
    ufo_value_t *arg = ufo_value_new_map ();
    ufo_value_map_set_str (arg, "task", task_id);
    ufo_value_map_set_str (arg, "tag", tag);
    ufo_value_map_set_int (arg, "timeout_ms", timeout_ms > 0 ? timeout_ms : 0);
    ufo_conn_actor_command (self->actor, "FETCH", &arg);
    int64_t until = timeout_ms < 0 ? INT64_MAX : ufo_time_mono_ms () + timeout_ms;
    for (;;) {
        int64_t left = until == INT64_MAX ? -1 : until - ufo_time_mono_ms ();
        if (left != -1 && left < 0)
            left = 0;
        ufo_value_t *ev = ufo_conn_actor_next (self->actor, (int) (left > INT32_MAX ? INT32_MAX : left));
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
