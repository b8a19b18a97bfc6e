/*  app_worker.c - the dispatched path of ufo-app: a worker of service app:<NAME> (common/
    ufo_worker.h) that turns each delivered task into an app_agent_t run, relays its
    progress to the submitter, delivers inputs, and completes the task with the result. */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_worker.h"
#include "app_agent.h"
#include "app_main.h"
#include "app_desktop_svc.h"
#include "ufo_loop.h"

typedef struct {
    app_ctx_t *ctx;
    ufo_worker_t *worker;
    app_agent_t *agent;             //  the subtask running, or NULL
    char task_id [80];
} s_run_t;

static void
s_emit (void *arg, ufo_value_t **body_p)
{
    s_run_t *run = arg;
    if (ufo_worker_progress (run->worker, run->task_id, body_p) < 0)
        ufo_warn ("progress for task %s not sent (task not running here)", run->task_id);
    ufo_value_destroy (body_p);
}

static void
s_complete_error (ufo_worker_t *worker, const char *task_id, const char *status, const char *error)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "status", "ERROR");
    ufo_value_map_set_int (r, "steps", 0);
    ufo_value_map_set (r, "results", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_value_map_set_str (r, "comment", "");
    ufo_value_map_set_str (r, "error", error);
    ufo_worker_complete (worker, task_id, status, &r);
}

//  A worker event, from inside the loop (ctx->loop).
static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    s_run_t *run = arg;
    const ufo_value_t *ev = *event_p;
    const char *kind = ufo_value_map_str (ev, "kind", "");
    const char *task = ufo_value_map_str (ev, "task", "");
    ufo_error_t err;
    if (!strcmp (kind, "task")) {
        if (run->agent) {
            //  capacity 1: the broker should not do this; refuse rather than mix
            s_complete_error (run->worker, task, "failed", "this AppAgent is busy");
        }
        else {
            snprintf (run->task_id, sizeof run->task_id, "%s", task);
            int attempt = (int) ufo_value_map_int (ev, "attempt", 1);
            run->agent = app_agent_new (run->ctx, task, ufo_value_map_get (ev, "body"), attempt,
                                        s_emit, run, &err);
            if (!run->agent) {
                ufo_warn ("task %s refused: %s", task, err.message);
                s_complete_error (run->worker, task, "failed", err.message);
            }
        }
    }
    else
    if (!strcmp (kind, "input")) {
        if (!run->agent || strcmp (task, run->task_id) != 0
        ||  app_agent_input (run->agent, ufo_value_map_get (ev, "body")) < 0)
            ufo_warn ("input for task %s ignored (nothing waits for it)", task);
    }
    else
    if (!strcmp (kind, "cancel")) {
        if (run->agent && !strcmp (task, run->task_id)) {
            app_agent_abort (run->agent, "cancelled");
            ufo_value_t *r = app_agent_take_result (run->agent);
            ufo_worker_complete (run->worker, run->task_id, "cancelled", &r);
            app_agent_destroy (&run->agent);
        }
    }
    else
        ufo_debug ("worker event %s", kind);
}

int
app_worker_run (app_ctx_t *ctx, const char *endpoint)
{
    if (!endpoint || !*endpoint) {
        ufo_error ("no broker endpoint (--broker or broker.cmd_endpoint)");
        return 2;
    }
    char service [200];
    snprintf (service, sizeof service, "app:%s", ctx->app);
    ufo_worker_config_t wc = {
        .endpoint = endpoint, .service = service, .device = ctx->device,
        .heartbeat_ivl_ms = (int) ufo_config_int (ctx->config, "dispatch.heartbeat_ivl_ms", 0),
        .heartbeat_liveness = (int) ufo_config_int (ctx->config, "dispatch.heartbeat_liveness", 0),
        .capacity = 1
    };
    ufo_error_t err;
    s_run_t run = { .ctx = ctx };
    //  in the process's loop: no actor thread; events arrive in s_on_event during app_ctx_wait
    run.worker = ufo_worker_new_in_loop (&wc, ctx->loop, s_on_event, &run, &err);
    if (!run.worker) {
        ufo_error ("worker of %s: %s", service, err.message);
        return 2;
    }
    //  the desktop queries of this device (window list, screenshot) for clients of the bus
    app_desktop_svc_t *desktop_svc = app_desktop_svc_new (ctx, endpoint, &err);
    if (!desktop_svc)
        ufo_warn ("no desktop service on device %s: %s", ctx->device, err.message);
    ufo_agent_signals_install ();   //  the worker's link started czmq, which sets its own
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (ctx->loop, ufo_agent_signal_fd ());
    ufo_info ("serving %s on device %s via %s", service, ctx->device, endpoint);
    while (!*ufo_agent_stop_flag () && !ufo_loop_stopped (ctx->loop)) {
        if (run.agent && app_agent_advance (run.agent)) {
            ufo_value_t *r = app_agent_take_result (run.agent);
            ufo_worker_complete (run.worker, run.task_id, "done", &r);
            app_agent_destroy (&run.agent);
            continue;
        }
        //  idle: until the loop's nearest timer (heartbeats) or an event
        app_ctx_wait (ctx, -1, run.agent ? app_agent_timeout (run.agent) : -1);
    }
    //  stopping: an unfinished subtask is released (the broker requeues it)
    if (run.agent)
        ufo_info ("stopping with task %s unfinished: released to the broker", run.task_id);
    app_agent_destroy (&run.agent);
    app_desktop_svc_destroy (&desktop_svc);
    ufo_worker_destroy (&run.worker);
    return 0;
}
