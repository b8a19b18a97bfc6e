/*  ufo_worker.c - a worker of a named service (ufo_worker.h): the worker side of a
    ufo_conn (ufo_conn.h) in a thread of its own (ufo_conn_actor.c). */
#include "ufo_prelude.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_worker.h"
#include "dispatch_private.h"

struct _ufo_worker_t {
    void *actor;                    //  in a thread (zactor_t *)
    int connected;                  //  actor mode: set by the actor (atomic access)
    char **running;                 //  actor mode: tasks taken and not completed
    size_t nrunning, cap_running;
};

//  The connection's settings for a worker; -1 with err for a bad configuration.
static int
s_config (const ufo_worker_config_t *config, ufo_conn_config_t *cc, ufo_error_t *err)
{
    if (!config || !config->service)
        return ufo_error_set (err, UFO_E_MISSING, "worker: a service is required");
    *cc = (ufo_conn_config_t) {
        .endpoint = config->endpoint, .name = config->name, .service = config->service,
        .device = config->device, .capacity = config->capacity,
        .heartbeat_ivl_ms = config->heartbeat_ivl_ms, .heartbeat_liveness = config->heartbeat_liveness,
        .curve_server_key = config->curve_server_key, .curve_cert_path = config->curve_cert_path
    };
    return ufo_conn_config_check (cc, err);
}

ufo_worker_t *
ufo_worker_new (const ufo_worker_config_t *config, ufo_error_t *err)
{
    ufo_conn_config_t cc;
    if (s_config (config, &cc, err) < 0)
        return NULL;
    ufo_worker_t *self = ufo_calloc (1, sizeof *self);
    self->actor = ufo_conn_actor_new (&cc, &self->connected);
    if (!self->actor) {
        free (self);
        ufo_error_set (err, UFO_E_INTERNAL, "worker: cannot start the actor thread");
        return NULL;
    }
    return self;
}

void
ufo_worker_destroy (ufo_worker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_worker_t *self = *self_p;
    ufo_conn_actor_destroy (&self->actor);
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

ufo_value_t *
ufo_worker_next (ufo_worker_t *self, int timeout_ms)
{
    assert (self->actor);
    ufo_value_t *ev = ufo_conn_actor_next (self->actor, timeout_ms);
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
    return ev;
}

int
ufo_worker_fd (ufo_worker_t *self)
{
    assert (self->actor);
    return ufo_conn_actor_fd (self->actor);
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
    ufo_conn_actor_command (self->actor, "PROGRESS", &arg);
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
    ufo_conn_actor_command (self->actor, "COMPLETE", &arg);
    free (self->running [i]);
    self->running [i] = self->running [--self->nrunning];
    return 0;
}

bool
ufo_worker_connected (ufo_worker_t *self)
{
    return __atomic_load_n (&self->connected, __ATOMIC_ACQUIRE) != 0;
}
