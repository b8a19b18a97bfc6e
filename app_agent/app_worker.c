/*  app_worker.c - the dispatched path of ufo-app: the worker side of the process's broker
    connection (ctx->conn, common/bus/ufo_conn.h, service app:<NAME>) turns each delivered
    task into an app_agent_t run, relays its progress to the submitter, delivers inputs, and
    completes the task with the result once the subtask's blackboard writes have their
    outcome (bounded: their failures go into the result). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_clock.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "app_agent.h"
#include "app_main.h"
#include "ufo_loop.h"

//  How long a finished subtask waits for the outcome of its blackboard writes before its
//  result goes anyway (the writes are on the socket before the result: the broker applies
//  them first whatever happens here).
#define S_WRITES_WAIT_MS 5000

typedef struct {
    app_ctx_t *ctx;
    app_agent_t *agent;             //  the subtask running, or NULL
    char task_id [80];
    ufo_value_t *result;            //  the subtask ended: its result, waiting for the board writes
    const char *status;             //  ... and the task status to report
    int64_t result_until;           //  monotonic ms: the wait's bound
} s_run_t;

static void
s_emit (void *arg, ufo_value_t **body_p)
{
    s_run_t *run = arg;
    if (ufo_conn_progress (run->ctx->conn, run->task_id, body_p) < 0)
        ufo_warn ("progress for task %s not sent (task not running here)", run->task_id);
    ufo_value_destroy (body_p);
}

static void
s_complete_error (ufo_conn_t *conn, const char *task_id, const char *status, const char *error)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "status", "ERROR");
    ufo_value_map_set_int (r, "steps", 0);
    ufo_value_map_set (r, "results", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_value_map_set_str (r, "comment", "");
    ufo_value_map_set_str (r, "error", error);
    ufo_conn_complete (conn, task_id, status, &r);
}

//  The subtask ended (status for the broker): its result waits for the outcome of the
//  board writes (s_finish).
static void
s_ended (s_run_t *run, const char *status)
{
    run->result = app_agent_take_result (run->agent);
    run->status = status;
    run->result_until = ufo_time_mono_ms () + S_WRITES_WAIT_MS;
    app_agent_destroy (&run->agent);
}

//  Completes the ended subtask once its writes are answered (or the wait's bound passed);
//  failed writes are reported in the result ("board_errors"). Returns true when done.
static bool
s_finish (s_run_t *run, bool now)
{
    if (!run->result)
        return true;
    if (!now && app_board_pending (run->ctx->board) > 0 && ufo_time_mono_ms () < run->result_until)
        return false;
    ufo_value_t *errors = app_board_take_errors (run->ctx->board);
    if (app_board_pending (run->ctx->board) > 0) {
        if (!errors)
            errors = ufo_value_new_list ();
        char text [160];
        snprintf (text, sizeof text, "%zu blackboard writes had no answer yet when the result was sent",
                  app_board_pending (run->ctx->board));
        ufo_warn ("task %s: %s", run->task_id, text);
        ufo_value_list_push_str (errors, text);
    }
    if (errors && ufo_value_type (run->result) == UFO_TMAP)
        ufo_value_map_set (run->result, "board_errors", &errors);
    ufo_value_destroy (&errors);
    ufo_conn_complete (run->ctx->conn, run->task_id, run->status, &run->result);
    ufo_value_destroy (&run->result);
    return true;
}

//  A connection event, from inside the loop (ctx->loop).
static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    s_run_t *run = arg;
    const ufo_value_t *ev = *event_p;
    const char *kind = ufo_value_map_str (ev, "kind", "");
    const char *task = ufo_value_map_str (ev, "task", "");
    ufo_error_t err;
    if (!strcmp (kind, "task")) {
        if (run->agent || run->result) {
            //  capacity 1: the broker should not do this; refuse rather than mix
            s_complete_error (run->ctx->conn, task, "failed", "this AppAgent is busy");
        }
        else {
            snprintf (run->task_id, sizeof run->task_id, "%s", task);
            int attempt = (int) ufo_value_map_int (ev, "attempt", 1);
            run->agent = app_agent_new (run->ctx, task, ufo_value_map_get (ev, "body"), attempt,
                                        s_emit, run, &err);
            if (!run->agent) {
                ufo_warn ("task %s refused: %s", task, err.message);
                s_complete_error (run->ctx->conn, task, "failed", err.message);
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
            ufo_info ("task %s: cancelled", task);
            app_agent_abort (run->agent, "cancelled");
            s_ended (run, "cancelled");
            s_finish (run, true);           //  a cancel does not wait for the board
        }
    }
    else
        ufo_debug ("broker connection event %s", kind);
}

int
app_worker_run (app_ctx_t *ctx, const char *endpoint)
{
    if (!endpoint || !*endpoint || !ctx->conn) {
        ufo_error ("no broker endpoint (--broker or broker.cmd_endpoint)");
        return 2;
    }
    s_run_t run = { .ctx = ctx };
    //  in the process's loop: events arrive in s_on_event during app_ctx_wait
    ctx->on_conn_event = s_on_event;
    ctx->on_conn_arg = &run;
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (ctx->loop, ufo_agent_signal_fd ());
    ufo_info ("serving app:%s on device %s via %s (one connection, %s)", ctx->app, ctx->device, endpoint,
              ufo_conn_routing_id (ctx->conn));
    while (!*ufo_agent_stop_flag () && !ufo_loop_stopped (ctx->loop)) {
        if (run.agent && app_agent_advance (run.agent)) {
            s_ended (&run, "done");
            continue;
        }
        if (run.result && s_finish (&run, false))
            continue;
        //  idle: until the loop's nearest timer (heartbeats) or an event
        //  (the board writes' answers, and their deadlines, end a turn too)
        app_ctx_wait (ctx, -1, run.agent ? app_agent_timeout (run.agent) : -1);
    }
    //  stopping: an unfinished subtask is released (the broker requeues it); an ended one
    //  still reports its result
    s_finish (&run, true);
    if (run.agent)
        ufo_info ("stopping with task %s unfinished: released to the broker", run.task_id);
    app_agent_destroy (&run.agent);
    ctx->on_conn_event = NULL;
    return 0;
}
