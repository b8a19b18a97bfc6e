/*  host_bus.c - ufo-host's connections and its loop (see host_bus.h).

    One loop (ufo_loop, no actor threads): the worker's and the submitter's broker links,
    the LLM client, the web search's HTTP client, the desktop's descriptor and the signal
    pipe are its sources. Idle, it sleeps until the nearest timer (heartbeats). Every ops
    call of the session (an LLM call, a subtask, a question) still waits by turning the
    loop (s_pump, at most S_PUMP_MS per turn) until its event has come, so inputs,
    cancellations and relays keep flowing during a session, also while a blackboard call
    waits for its reply (s_bb_wait); the ops themselves are not yet "start it, get an event"
    steps (issue 17). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_bb_client.h"
#include "ufo_bb_mirror.h"
#include "ufo_bb_proto.h"
#include "ufo_board.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_http.h"
#include "ufo_json.h"
#include "ufo_kb.h"
#include "ufo_llm.h"
#include "ufo_llm_override.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_task_proto.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_websearch.h"
#include "ufo_loop.h"
#include "host_bus.h"
#include "ufo_worker.h"
#include "ufo_tasks.h"
#include "host_int.h"
#include "ufo_mcp_hub.h"

#define S_PUMP_MS 50
#define S_MAX_REQUESTS 1000
#define S_MAX_TEXT (64 * 1024)
#define S_MAX_QUEUED 1000       //  inputs / submitter events kept while nobody takes them
#define S_WORKER_GRACE_MS 3000  //  how long a subtask waits for a worker of its service to register

struct _host_bus_t {
    const ufo_config_t *config;
    ufo_loop_t *loop;           //  the process's one loop
    int http_source;            //  the web search's client in the loop (0: none yet)
    int desktop_reader;
    char *device;
    char *llm_mode;             //  --llm-mode, NULL = the configuration's llm.mode
    char endpoint [512];
    ufo_worker_t *worker;
    ufo_tasks_t *tasks;
    ufo_bb_client_t *bb;
    ufo_bb_mirror_t *mirror;    //  the running session's board, kept in step incrementally
    ufo_kb_t *experience;       //  experience records and demonstrations indexed (RAG_EXPERIENCE,
                                //  RAG_DEMONSTRATION), opened when first used
    ufo_http_t *http;           //  web search (RAG_ONLINE_SEARCH), made when first used
    ufo_value_t *search;        //  the search in flight: its results, once done
    char search_error [320];
    bool search_done;
    ufo_desktop_t *desktop;
    ufo_llm_t *llm;
    ufo_llm_engines_t *engines; //  the engines of sessions' model overrides (bounded)
    ufo_value_t *model;         //  the running session's model override (body "model"), or NULL
    ufo_prompts_t *prompts;
    int png_level;
    volatile sig_atomic_t *stop;
    //  the running session
    char task_id [80];
    int64_t deadline_ms;        //  the session task's deadline (this host's monotonic clock), 0 = none
    char board [UFO_BB_BOARD_MAX + 1];
    bool busy;
    bool cancelled;
    bool bb_abandoned;          //  a board call was abandoned for this cancel (one is enough)
    ufo_value_t *inputs;        //  inputs for the session task not yet taken
    ufo_value_t *relays;        //  qid -> subtask id whose question is with the user
    ufo_value_t *events;        //  submitter events not yet taken
    ufo_value_t *queued;        //  session tasks delivered while busy
    int64_t activity_step;      //  the step of the last model call, named in activity events
    //  the LLM call in flight
    ufo_llm_response_t *resp;
    bool resp_done;
    //  MCP servers configured for the HostAgent (MCP_SERVERS "HOST_AGENT"), started when
    //  the first prompt needs their tools; a source of the loop
    ufo_mcp_hub_t *mcp;
    int mcp_source;
};

static void
s_on_worker_event (host_bus_t *self, ufo_value_t **event_p)
{
    ufo_value_t *event = *event_p;
    const char *kind = ufo_value_map_str (event, "kind", "");
    const char *task = ufo_value_map_str (event, "task", "");
    if (strcmp (kind, "task") == 0) {
        ufo_value_list_push (self->queued, event_p);
        return;
    }
    if (strcmp (kind, "input") == 0 && self->busy && strcmp (task, self->task_id) == 0) {
        ufo_value_t *body = ufo_value_map_get (event, "body");
        const char *qid = ufo_value_map_str (body, "qid", NULL);
        const char *sub = qid ? ufo_value_map_str (self->relays, qid, NULL) : NULL;
        if (sub) {
            //  the answer to an AppAgent's question or confirmation: relay it back
            ufo_value_t *copy = ufo_value_dup (body);
            if (ufo_tasks_input (self->tasks, sub, &copy) != 0)
                ufo_warn ("host: answer %s: subtask %s is gone", qid, sub);
            ufo_value_destroy (&copy);
            ufo_value_map_remove (self->relays, qid);
        }
        else if (body) {
            ufo_value_list_push (self->inputs, &(ufo_value_t *) { ufo_value_dup (body) });
            if (ufo_value_size (self->inputs) > S_MAX_QUEUED)
                ufo_value_list_remove (self->inputs, 0);
        }
    }
    else if (strcmp (kind, "cancel") == 0 && self->busy && strcmp (task, self->task_id) == 0) {
        ufo_info ("host: session task %s cancelled by its submitter", task);
        self->cancelled = true;
    }
    else if (strcmp (kind, "connected") == 0 || strcmp (kind, "disconnected") == 0)
        ufo_info ("host: worker %s", kind);
    ufo_value_destroy (event_p);
}

//  One turn of the loop (at most timeout_ms, -1: until something is due), then the desktop.
static void
s_pump (host_bus_t *self, int timeout_ms)
{
    ufo_loop_run_once (self->loop, timeout_ms);
    if (self->desktop)
        ufo_desktop_pump (self->desktop);
}

static void
s_worker_event (void *arg, ufo_value_t **event_p)
{
    s_on_worker_event ((host_bus_t *) arg, event_p);
}

static void
s_tasks_event (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_value_list_push (self->events, event_p);
    if (ufo_value_size (self->events) > S_MAX_QUEUED)
        ufo_value_list_remove (self->events, 0);    //  events of tasks nobody waits for
}

static void
s_socket_ready (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (arg);                   //  only ends the turn; the blackboard client reads it
}

static bool s_cancelled (void *arg);

//  The blackboard client's waiter (ufo_bb_client_set_waiter): a board call in flight turns
//  the loop, so heartbeats, inputs and a cancel are served meanwhile; the call in flight
//  when a cancel (or a signal) comes is abandoned at once, later ones (the session's
//  wind-down) wait for their reply as usual.
static bool
s_bb_wait (void *arg, void *socket, int left_ms)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (s_cancelled (self) && !self->bb_abandoned) {
        self->bb_abandoned = true;
        return false;
    }
    int id = ufo_loop_reader_add (self->loop, socket, -1, s_socket_ready, NULL);
    s_pump (self, left_ms);
    ufo_loop_remove (self->loop, id);
    if (s_cancelled (self) && !self->bb_abandoned) {
        self->bb_abandoned = true;
        return false;
    }
    return true;
}

static void
s_desktop_readable (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    if (self->desktop)
        ufo_desktop_pump (self->desktop);
}

static bool
s_cancelled (void *arg)
{
    host_bus_t *self = (host_bus_t *) arg;
    return self->cancelled || (self->stop && *self->stop);
}

//  --- ops: desktop -------------------------------------------------------------------------

//  Opens the desktop if it is not open (at start-up, and again before a session when it
//  was not reachable then, e.g. a virtual display that came up after us).
static void
s_open_desktop (host_bus_t *self)
{
    if (self->desktop)
        return;
    ufo_value_t *dopts = ufo_value_new_map ();
    const ufo_value_t *launchers = ufo_config_get (self->config, "desktop.launchers");
    if (launchers)
        ufo_value_map_set_copy (dopts, "launchers", launchers);
    ufo_error_t derr = { 0 };
    self->desktop = ufo_desktop_new (dopts, &derr);
    ufo_value_destroy (&dopts);
    if (!self->desktop)
        ufo_warn ("host: no desktop (%s); sessions end in ERROR until it is there", derr.message);
    else
    if (ufo_desktop_fd (self->desktop) >= 0)
        self->desktop_reader = ufo_loop_reader_add (self->loop, NULL, ufo_desktop_fd (self->desktop),
                                                    s_desktop_readable, self);
}

static ufo_value_t *
s_windows (void *arg, const char *shot_path, char **url_p, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->desktop) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "no desktop (DISPLAY not reachable)");
        return NULL;
    }
    ufo_desktop_pump (self->desktop);
    ufo_value_t *windows = ufo_desktop_windows (self->desktop, err);
    if (!windows)
        return NULL;
    if (shot_path) {
        ufo_error_t ierr = { 0 };
        ufo_image_t *image = ufo_desktop_capture_screen (self->desktop, &ierr);
        if (!image || ufo_image_save_png (image, shot_path, self->png_level, &ierr) != 0)
            ufo_warn ("host: desktop screenshot: %s", ierr.message);
        else if (url_p)
            *url_p = host_data_url (shot_path);
        ufo_image_destroy (&image);
    }
    return windows;
}

static void s_activity (host_bus_t *self, const char *what, const char *phase, const char *detail, int64_t step,
                        ufo_value_t *extra);

static int
s_launch (void *arg, const char *name, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->desktop)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "no desktop");
    ufo_value_t *before = ufo_desktop_windows (self->desktop, NULL);
    size_t count = ufo_value_size (before);
    ufo_value_destroy (&before);
    char detail [300];
    snprintf (detail, sizeof detail, "Bash %.250s", name);
    s_activity (self, "action", "start", detail, self->activity_step, NULL);
    int pid = ufo_desktop_launch (self->desktop, name, err);
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_bool (extra, "ok", pid > 0);
    if (pid <= 0)
        ufo_value_map_set_str (extra, "error", err ? err->message : "failed");
    s_activity (self, "action", "end", detail, self->activity_step, extra);
    if (pid <= 0)
        return -1;
    //  wait (bounded, serving the bus) until the new window shows, as the original sleeps
    for (int i = 0; i < 200 && !s_cancelled (self); i++) {
        s_pump (self, S_PUMP_MS);
        ufo_value_t *now = ufo_desktop_windows (self->desktop, NULL);
        bool shown = false;
        for (size_t k = 0; now && k < ufo_value_size (now); k++)
            if (ufo_value_map_int (ufo_value_list_at (now, k), "pid", 0) == pid
            ||  ufo_value_size (now) > count)
                shown = true;
        ufo_value_destroy (&now);
        if (shown)
            break;
    }
    return pid;
}

//  The MCP hub as a source of the loop (ufo_loop.h): its descriptors and deadline.
static size_t
s_mcp_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_http_fd_t fds [32];
    size_t n = ufo_mcp_hub_fds (self->mcp, fds, 32);
    *timeout_ms = ufo_mcp_hub_timeout (self->mcp);
    return ufo_loop_items_from_http (items, max, fds, n > 32 ? 32 : n);
}

static void
s_mcp_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_http_fd_t fds [32];
    n = ufo_loop_items_to_http (fds, items, n > 32 ? 32 : n);
    ufo_mcp_hub_process (self->mcp, fds, n);
}

//  host_ops_t.mcp: the HostAgent's API tools (NULL function) or a call of one.
static ufo_value_t *
s_mcp (void *arg, const char *function, const ufo_value_t *args, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->mcp) {
        ufo_error_t herr = { 0 };
        self->mcp = ufo_mcp_hub_new (self->config, "HOST_AGENT", NULL, NULL, &herr);
        if (!self->mcp) {
            ufo_error_set (err, herr.code, "%s", herr.message);
            return NULL;
        }
        ufo_loop_source_t source = { .items = s_mcp_items, .dispatch = s_mcp_dispatch };
        self->mcp_source = ufo_loop_source_add (self->loop, &source, self);
    }
    double timeout_s = ufo_config_float (self->config, "MCP_TOOL_TIMEOUT", 30.0);
    if (!function) {
        //  the servers start (and list their tools) while the bus is served, bounded
        int64_t until = ufo_time_mono_ms () + 2 * (int64_t) (timeout_s * 1000.0) + 1000;
        while (!ufo_mcp_hub_settled (self->mcp) && !s_cancelled (self) && ufo_time_mono_ms () < until)
            s_pump (self, S_PUMP_MS);
        if (!ufo_mcp_hub_settled (self->mcp))
            ufo_warn ("host: MCP servers still starting; their tools are left out of this step");
        return ufo_mcp_hub_prompt_tools (self->mcp);
    }
    char detail [300];
    snprintf (detail, sizeof detail, "MCP %.250s", function);
    s_activity (self, "action", "start", detail, self->activity_step, NULL);
    ufo_mcp_op_t *op = ufo_mcp_hub_call (self->mcp, function, args);
    //  the hub ends the call at MCP_TOOL_TIMEOUT; the bound here is only a backstop
    int64_t until = ufo_time_mono_ms () + (int64_t) (timeout_s * 1000.0) + 5000;
    while (!ufo_mcp_op_done (op) && !s_cancelled (self) && ufo_time_mono_ms () < until)
        s_pump (self, S_PUMP_MS);
    ufo_value_t *result = ufo_mcp_op_done (op) ? ufo_mcp_op_take_result (op) : NULL;
    ufo_mcp_op_destroy (&op);
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_bool (extra, "ok", result && ufo_value_map_bool (result, "success", false));
    s_activity (self, "action", "end", detail, self->activity_step, extra);
    if (!result)
        ufo_error_set (err, UFO_E_TIMEOUT, "the call of %s did not end%s", function,
                       s_cancelled (self) ? " (the session was cancelled)" : "");
    return result;
}

static int
s_snapshot (void *arg, int64_t xid, const char *path, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->desktop)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "no desktop");
    ufo_image_t *image = xid ? ufo_desktop_capture_window (self->desktop, xid, err)
                             : ufo_desktop_capture_screen (self->desktop, err);
    if (!image)
        return -1;
    int rc = ufo_image_save_png (image, path, self->png_level, err);
    ufo_image_destroy (&image);
    return rc;
}

//  --- activity: what the session is doing now, for the user (ufo run's live line) ------------

static void s_progress (void *arg, ufo_value_t **event_p);

//  Publishes {"kind": "activity", "agent": "HostAgent", "what", "phase", "detail", "step",
//  + extra's fields} to the session's submitter (PROTOCOL.md, agent tasks). step < 0: none.
static void
s_activity (host_bus_t *self, const char *what, const char *phase, const char *detail, int64_t step,
            ufo_value_t *extra)
{
    if (!self->task_id [0])
        return;
    ufo_value_t *event = extra ? extra : ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "activity");
    ufo_value_map_set_str (event, "agent", "HostAgent");
    ufo_value_map_set_str (event, "what", what);
    ufo_value_map_set_str (event, "phase", phase);
    ufo_value_map_set_str (event, "detail", detail ? detail : "");
    if (step >= 0)
        ufo_value_map_set_int (event, "step", step);
    s_progress (self, &event);
}

static void
s_on_llm_retry (void *arg, int attempt, int64_t wait_ms, const char *why)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_int (extra, "attempt", attempt);
    ufo_value_map_set_int (extra, "wait_ms", wait_ms);
    ufo_value_map_set_str (extra, "reason", why);
    s_activity (self, "model", "retry", NULL, self->activity_step, extra);
}

//  --- ops: LLM -------------------------------------------------------------------------------

static void
s_llm_done (ufo_llm_response_t **response_p, void *arg)
{
    host_bus_t *self = (host_bus_t *) arg;
    self->resp = *response_p;
    *response_p = NULL;
    self->resp_done = true;
}

static ufo_llm_response_t *
s_ask (void *arg, const ufo_value_t *messages, const ufo_llm_opts_t *opts, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    self->resp = NULL;
    self->resp_done = false;
    ufo_llm_opts_t told = *opts;
    told.on_retry = s_on_llm_retry;
    told.retry_arg = self;
    self->activity_step = opts->step;
    //  the session's model override, if any (ufo_llm_override.h): a step error when unusable
    if (ufo_llm_engines_for (self->engines, self->config, "HOST_AGENT", self->model, &told.engine, err))
        return NULL;
    int64_t id = ufo_llm_submit (self->llm, messages, &told, s_llm_done, self, err);
    if (id < 0)
        return NULL;
    s_activity (self, "model", "start", NULL, opts->step, NULL);
    while (!self->resp_done) {
        if (s_cancelled (self)) {
            ufo_llm_cancel (self->llm, id);
            ufo_error_set (err, UFO_E_CANCELLED, "session cancelled during the LLM call");
            return NULL;
        }
        s_pump (self, S_PUMP_MS);
    }
    ufo_llm_response_t *resp = self->resp;
    self->resp = NULL;
    ufo_value_t *extra = ufo_value_new_map ();
    bool ok = resp && resp->code == UFO_OK;
    ufo_value_map_set_bool (extra, "ok", ok);
    if (!ok)
        ufo_value_map_set_str (extra, "error", resp && resp->error ? resp->error : "no reply");
    ufo_value_map_set_float (extra, "seconds", resp ? resp->latency_s : 0);
    s_activity (self, "model", "end", NULL, opts->step, extra);
    return resp;
}

//  --- ops: blackboard --------------------------------------------------------------------

static ufo_value_t *
s_board_get (void *arg, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_value_t *reply = ufo_bb_client_snapshot (self->bb, self->board, NULL, 0, err);
    if (!reply)
        return NULL;
    ufo_value_t *board = ufo_value_dup (ufo_value_map_get (reply, "board"));
    ufo_value_destroy (&reply);
    if (ufo_value_type (board) != UFO_TMAP) {
        ufo_value_destroy (&board);
        board = ufo_value_new_map ();
    }
    ufo_error_t ierr = { 0 };
    if (ufo_bb_client_fill_images (self->bb, board, &ierr) < 0)
        ufo_warn ("host: blackboard images: %s", ierr.message);
    return board;
}

static ufo_value_t *
s_board_prompt (void *arg, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->mirror || strcmp (self->board, ufo_bb_mirror_name (self->mirror)) != 0) {
        ufo_bb_mirror_destroy (&self->mirror);
        self->mirror = ufo_bb_mirror_new (self->board);
    }
    if (ufo_bb_mirror_sync (self->mirror, self->bb, err) < 0)
        return NULL;
    ufo_board_t *board = ufo_bb_mirror_board (self->mirror);
    return ufo_board_is_empty (board) ? NULL : ufo_board_to_prompt (board);
}

static int
s_board_add (void *arg, const char *memory, ufo_value_t **item_p, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    return ufo_bb_client_add (self->bb, self->board, memory, item_p, NULL, NULL, err);
}

//  --- ops: tasks and the user ---------------------------------------------------------------

static void
s_progress (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (ufo_worker_progress (self->worker, self->task_id, event_p) != 0)
        ufo_value_destroy (event_p);
}

//  Takes the first queued submitter event of task id, or NULL.
static ufo_value_t *
s_take_event (host_bus_t *self, const char *id)
{
    for (size_t i = 0; i < ufo_value_size (self->events); i++) {
        ufo_value_t *e = ufo_value_list_at (self->events, i);
        if (strcmp (ufo_value_map_str (e, "task", ""), id) == 0) {
            ufo_value_t *copy = ufo_value_dup (e);
            ufo_value_list_remove (self->events, i);
            return copy;
        }
    }
    return NULL;
}

static ufo_value_t *
s_run_task (void *arg, const char *service, ufo_value_t **body_p, host_progress_fn *on_progress,
            void *progress_arg, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", service);
    if (strncmp (service, "app:", 4) == 0)
        ufo_value_map_set_str (spec, "device", self->device);
    ufo_value_map_set_str (spec, "session", self->board);
    if (self->deadline_ms > 0) {
        //  a subtask or evaluation may run as long as the session has left (at least 1 s)
        int64_t left_ms = self->deadline_ms - ufo_time_mono_ms ();
        ufo_value_map_set_int (spec, "deadline_ms", left_ms > 1000 ? left_ms : 1000);
    }
    if (strcmp (service, "eval") == 0) {
        //  one evaluation per session + level + round: a HostAgent that gets the session again
        //  (attempt > 1) follows the evaluation an earlier attempt submitted (PROTOCOL.md 3.3)
        const ufo_value_t *body = *body_p;
        const char *level = ufo_value_map_str (body, "level", "session");
        int64_t round = strcmp (level, "round") == 0 ? ufo_value_map_int (body, "round", -1) : -1;
        char key [UFO_TASK_NAME_MAX + 2];
        int n = snprintf (key, sizeof key, "eval:%s:%s:%" PRId64, ufo_value_map_str (body, "session", ""), level,
                          round);
        if (n > 0 && n <= UFO_TASK_NAME_MAX)
            ufo_value_map_set_str (spec, "idempotency_key", key);
        else
            ufo_warn ("host: evaluation key of session %s too long; submitted without one",
                      ufo_value_map_str (body, "session", ""));
    }
    if (self->model && ufo_value_type (*body_p) == UFO_TMAP)
        ufo_value_map_set_copy (*body_p, "model", self->model);     //  the session's model override
    ufo_value_map_set (spec, "body", body_p);
    char id [33];
    if (ufo_tasks_submit (self->tasks, &spec, id, err) != 0) {
        ufo_value_destroy (&spec);
        return NULL;
    }
    ufo_info ("host: task %s submitted to %s", id, service);
    ufo_value_t *result = NULL;
    while (!result) {
        if (s_cancelled (self)) {
            ufo_tasks_cancel (self->tasks, id);
            ufo_error_set (err, UFO_E_CANCELLED, "session cancelled while %s ran", service);
            return NULL;
        }
        ufo_value_t *event = s_take_event (self, id);
        if (!event) {
            s_pump (self, S_PUMP_MS);
            continue;
        }
        const char *kind = ufo_value_map_str (event, "kind", "");
        if (strcmp (kind, "progress") == 0) {
            ufo_value_t *body = ufo_value_map_get (event, "body");
            const char *pk = ufo_value_map_str (body, "kind", "");
            if (strcmp (pk, "question") == 0 || strcmp (pk, "confirm") == 0) {
                const char *qid = ufo_value_map_str (body, "qid", NULL);
                if (qid)
                    ufo_value_map_set_str (self->relays, qid, id);
                ufo_value_t *copy = ufo_value_dup (body);
                s_progress (self, &copy);
            }
            else if (strcmp (pk, "cost") == 0) {
                if (on_progress)
                    on_progress (body, progress_arg);
            }
            else if (ufo_value_type (body) == UFO_TMAP) {
                ufo_value_t *copy = ufo_value_dup (body);
                s_progress (self, &copy);
            }
        }
        else if (strcmp (kind, "result") == 0) {
            const char *status = ufo_value_map_str (event, "status", "failed");
            if (strcmp (status, "done") == 0 && ufo_value_type (ufo_value_map_get (event, "body")) == UFO_TMAP)
                result = ufo_value_dup (ufo_value_map_get (event, "body"));
            else {
                ufo_error_set (err, UFO_E_UNAVAILABLE, "task %s on %s %s after %" PRId64 " attempt(s): %s", id,
                               service, status, ufo_value_map_int (event, "attempts", 0),
                               ufo_value_map_str (event, "reason", "no reason given"));
                ufo_value_destroy (&event);
                return NULL;
            }
        }
        ufo_value_destroy (&event);
    }
    return result;
}

//  Whether dispatch (dispatch.state) has a worker of service for this device. A worker that
//  is just starting, or registering again after the network came back, gets
//  S_WORKER_GRACE_MS to register, counted from the broker's first answer (a call that waited
//  out a cut does not use the grace up).
static int
s_has_worker (void *arg, const char *service, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) arg;
    int64_t end = 0;
    while (true) {
        ufo_error_t cerr = { 0 };
        ufo_value_t *state = ufo_bb_client_call (self->bb, "dispatch.state", NULL, NULL, 0, NULL, NULL, &cerr);
        if (!state) {
            ufo_warn ("host: dispatch.state: %s (submitting to %s anyway)", cerr.message, service);
            return -1;
        }
        if (!end)
            end = ufo_time_now_us () + (int64_t) S_WORKER_GRACE_MS * 1000;
        const ufo_value_t *workers = ufo_value_map_get (state, "workers");
        bool found = false;
        for (size_t i = 0; i < ufo_value_size (workers) && !found; i++) {
            const ufo_value_t *w = ufo_value_list_at (workers, i);
            //  an any-application worker (app:*) serves app:<name> too, as dispatch sees it
            found = ufo_task_service_match (ufo_value_map_str (w, "service", ""), service)
                 && strcmp (ufo_value_map_str (w, "device", ""), self->device ? self->device : "") == 0;
        }
        ufo_value_destroy (&state);
        if (found)
            return 1;
        if (ufo_time_now_us () >= end || s_cancelled (self))
            break;
        for (int i = 0; i < 5; i++)
            s_pump (self, S_PUMP_MS);
    }
    ufo_error_set (err, UFO_E_NOT_FOUND, "no worker of %s on device %s", service, self->device);
    return 0;
}

static ufo_value_t *
s_ask_user (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    char qid [256];
    snprintf (qid, sizeof qid, "%s", ufo_value_map_str (*event_p, "qid", ""));
    s_progress (self, event_p);
    while (!s_cancelled (self)) {
        for (size_t i = 0; i < ufo_value_size (self->inputs); i++) {
            ufo_value_t *in = ufo_value_list_at (self->inputs, i);
            if (strcmp (ufo_value_map_str (in, "qid", ""), qid) == 0) {
                ufo_value_t *copy = ufo_value_dup (in);
                ufo_value_list_remove (self->inputs, i);
                return copy;
            }
        }
        s_pump (self, S_PUMP_MS);
    }
    return NULL;
}

//  --- sessions --------------------------------------------------------------------------------

//  A task name or session id usable as a path component and board name.
static bool
s_safe_name (const char *s)
{
    if (!s || !*s || strlen (s) > UFO_BB_BOARD_MAX || strcmp (s, ".") == 0 || strcmp (s, "..") == 0)
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum ((unsigned char) *p) || strchr ("-_.:@+", *p)))
            return false;
    return true;
}

static bool
s_text_list (const ufo_value_t *list, size_t max)
{
    if (ufo_value_type (list) != UFO_TLIST || ufo_value_size (list) > max)
        return false;
    for (size_t i = 0; i < ufo_value_size (list); i++)
        if (ufo_value_type (ufo_value_list_at (list, i)) != UFO_TSTRING
        ||  ufo_value_strlen (ufo_value_list_at (list, i)) > S_MAX_TEXT)
            return false;
    return true;
}

//  Experience records (docs/KNOWLEDGE.md): kept on the broker; an in-memory index of them
//  is brought in step before each search.
static ufo_value_t *
s_experience_find (void *arg, const char *request, ufo_error_t *err)
{
    host_bus_t *self = arg;
    if (!self->experience) {
        self->experience = ufo_kb_open (":memory:", err);
        if (!self->experience)
            return NULL;
    }
    if (ufo_experience_sync (self->experience, self->bb, "experience", err) < 0)
        return NULL;
    const ufo_config_t *config = self->config;
    return ufo_experience_retrieve (self->experience, "experience", request,
                                    (size_t) ufo_config_int (config, "RAG_EXPERIENCE_RETRIEVED_TOPK", 5),
                                    (size_t) ufo_config_int (config, "knowledge.prompt_bytes", 1500));
}

static ufo_value_t *
s_demonstration_find (void *arg, const char *subtask, ufo_error_t *err)
{
    host_bus_t *self = arg;
    if (!self->experience) {
        self->experience = ufo_kb_open (":memory:", err);
        if (!self->experience)
            return NULL;
    }
    if (ufo_experience_sync (self->experience, self->bb, "demonstration", err) < 0)
        return NULL;
    const ufo_config_t *config = self->config;
    return ufo_experience_retrieve (self->experience, "demonstration", subtask,
                                    (size_t) ufo_config_int (config, "RAG_DEMONSTRATION_RETRIEVED_TOPK", 5),
                                    (size_t) ufo_config_int (config, "knowledge.prompt_bytes", 1500));
}

static int
s_experience_save (void *arg, ufo_value_t **record_p, char *id_out, ufo_error_t *err)
{
    host_bus_t *self = arg;
    return ufo_experience_save (self->bb, "experience", record_p, id_out, err);
}

static void
s_search_done (ufo_value_t **results_p, const char *error, void *arg)
{
    host_bus_t *self = arg;
    ufo_value_destroy (&self->search);
    self->search = results_p ? *results_p : NULL;
    if (results_p)
        *results_p = NULL;
    snprintf (self->search_error, sizeof self->search_error, "%s", error ? error : "");
    self->search_done = true;
}

//  One web search, the loop kept serving while it runs; bounded by knowledge.search_timeout_ms.
static ufo_value_t *
s_online_search (void *arg, const char *query, ufo_error_t *err)
{
    host_bus_t *self = arg;
    if (!self->http && (self->http = ufo_http_new ()))
        self->http_source = ufo_loop_add_http (self->loop, self->http);
    if (!self->http)
        return ufo_error_set (err, UFO_E_INTERNAL, "no HTTP client"), NULL;
    ufo_websearch_opts_t opts;
    ufo_websearch_opts_from_config (&opts, self->config);
    self->search_done = false;
    if (ufo_websearch_start (self->http, &opts, query, s_search_done, self, err) < 0)
        return NULL;
    while (!self->search_done)
        s_pump (self, S_PUMP_MS);
    ufo_value_t *results = self->search;
    self->search = NULL;
    if (!results) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "%s %s: %s", opts.provider, opts.endpoint, self->search_error);
        return NULL;
    }
    //  RAG_ONLINE_RETRIEVED_TOPK of the RAG_ONLINE_SEARCH_TOPK results go into the prompt
    size_t keep = (size_t) ufo_config_int (self->config, "RAG_ONLINE_RETRIEVED_TOPK", 1);
    while (ufo_value_size (results) > keep)
        ufo_value_list_remove (results, ufo_value_size (results) - 1);
    return results;
}

static ufo_value_t *
s_error_result (const char *error)
{
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "status", "ERROR");
    ufo_value_map_set_int (result, "rounds", 0);
    ufo_value_map_set_int (result, "steps", 0);
    ufo_value_map_set_str (result, "error", error);
    ufo_value_map_set_null (result, "evaluation");
    ufo_value_map_set_str (result, "logdir", "");
    return result;
}

static void
s_run_session (host_bus_t *self, const ufo_value_t *task)
{
    const ufo_config_t *config = self->config;
    const ufo_value_t *body = ufo_value_map_get (task, "body");
    snprintf (self->task_id, sizeof self->task_id, "%s", ufo_value_map_str (task, "task", ""));
    const char *session = ufo_value_map_str (body, "session", "");
    const char *name = ufo_value_map_str (body, "task", session);
    const ufo_value_t *requests = ufo_value_map_get (body, "requests");
    const ufo_value_t *plan = ufo_value_map_get (body, "plan");
    const char *error = NULL;
    if (ufo_value_type (body) != UFO_TMAP)
        error = "session body must be a map";
    else if (!s_safe_name (session))
        error = "\"session\" must be a non-empty name of letters, digits and -_.:@+";
    else if (!s_safe_name (name))
        error = "\"task\" must be a non-empty name of letters, digits and -_.:@+";
    else if (!s_text_list (requests, S_MAX_REQUESTS) || ufo_value_size (requests) == 0)
        error = "\"requests\" must be a non-empty list of texts";
    else if (plan && ufo_value_type (plan) != UFO_TNULL && !s_text_list (plan, S_MAX_REQUESTS))
        error = "\"plan\" must be a list of texts";
    else if (ufo_value_map_has (body, "log_root") && !ufo_tasklog_root_safe (ufo_value_map_str (body, "log_root", NULL)))
        error = "\"log_root\" must be a directory path without \"..\" components";
    ufo_llm_override_t override;
    ufo_error_t oerr = { 0 };
    if (!error && ufo_llm_override_from_value (ufo_value_map_get (body, "model"), &override, &oerr))
        error = oerr.message;
    ufo_value_destroy (&self->model);
    if (!error && !ufo_llm_override_empty (&override))
        self->model = ufo_llm_override_to_value (&override);
    char used [800] = "";
    if (!error) {
        //  a task name names one session's logs: another session under the same name is
        //  refused (the same session again, on a re-delivery or --resume, continues them)
        const char *root = ufo_value_map_str (body, "log_root", "");
        char path [PATH_MAX];
        snprintf (path, sizeof path, "%s/%s/request.json", *root ? root : ufo_config_str (config, "log.dir", "logs"),
                  name);
        ufo_value_t *earlier = access (path, F_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
        const char *was = ufo_value_map_str (earlier, "session", "");
        if (*was && strcmp (was, session) != 0) {
            snprintf (used, sizeof used, "the task name \"%.200s\" is already used by session %.200s; choose "
                      "another task name", name, was);
            error = used;
        }
        ufo_value_destroy (&earlier);
    }
    if (error) {
        ufo_warn ("host: refusing session task %s: %s", self->task_id, error);
        ufo_value_t *result = s_error_result (error);
        ufo_worker_complete (self->worker, self->task_id, "failed", &result);
        ufo_value_destroy (&result);
        return;
    }
    if (ufo_value_type (plan) != UFO_TLIST || strcmp (ufo_value_map_str (body, "mode", "normal"), "follower"))
        plan = NULL;
    snprintf (self->board, sizeof self->board, "%s", session);
    //  the time left as the broker counted it when it assigned the task, timed from now on
    //  this host's monotonic clock (the two hosts' wall clocks need not agree)
    int64_t left_ms = ufo_value_map_int (task, "deadline_in_ms", 0);
    self->deadline_ms = left_ms > 0 ? ufo_time_mono_ms () + left_ms : 0;
    s_open_desktop (self);
    self->busy = true;
    self->cancelled = false;
    self->bb_abandoned = false;
    ufo_value_clear (self->inputs);
    ufo_value_clear (self->relays);

    ufo_value_t *launchers = ufo_value_new_list ();
    const ufo_value_t *lmap = ufo_config_get (config, "desktop.launchers");
    for (size_t i = 0; i < ufo_value_size (lmap) && ufo_value_type (lmap) == UFO_TMAP; i++)
        ufo_value_list_push_str (launchers, ufo_value_map_key_at (lmap, i));
    const char *key = ufo_value_str (ufo_config_agent (config, "HOST_AGENT", "API_KEY"));
    //  redacted from the logs: every key this session's calls may use (its own model's too)
    const char *keys [] = { key, getenv ("OPENAI_API_KEY"), getenv ("AZURE_OPENAI_API_KEY"),
                            getenv ("ANTHROPIC_API_KEY"), getenv ("GEMINI_API_KEY"), getenv ("UFO_API_KEY"),
                            self->model ? getenv (ufo_value_map_str (self->model, "api_key_env", "")) : NULL };
    const char *secrets [UFO_ARRAY_SIZE (keys) + 1];
    size_t nsecrets = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++)
        if (keys [i] && *keys [i])
            secrets [nsecrets++] = keys [i];
    secrets [nsecrets] = NULL;
    const char *const *sp = secrets;
    const char *log_root = ufo_value_map_str (body, "log_root", NULL);
    if (!log_root || !*log_root)
        log_root = ufo_config_str (config, "log.dir", "logs");
    host_session_config_t cfg = {
        .session = session, .task = name, .log_root = log_root, .device = self->device,
        .requests = requests, .plan = plan,
        .resume = ufo_value_map_int (task, "attempt", 1) > 1 || ufo_value_map_bool (body, "resume", false),
        .interactive = ufo_value_map_bool (body, "interactive", false),
        .auto_confirm = ufo_value_map_bool (body, "auto_confirm", false),
        .max_step = ufo_config_int (config, "MAX_STEP", 50),
        .max_round = ufo_config_int (config, "MAX_ROUND", 1),
        .eva_round = ufo_config_bool (config, "EVA_ROUND", false),
        .eva_session = ufo_config_bool (config, "EVA_SESSION", true),
        .eva_all_screenshots = ufo_config_bool (config, "EVA_ALL_SCREENSHOTS", true),
        .visual = ufo_value_bool (ufo_config_agent (config, "HOST_AGENT", "VISUAL_MODE")),
        .log_to_markdown = ufo_config_bool (config, "LOG_TO_MARKDOWN", true),
        .write_report = true,
        .json_retry = (int) ufo_config_int (config, "JSON_PARSING_RETRY", 3),
        .launchers = launchers,
        .mode = ufo_value_map_str (body, "mode", "normal"),
        .llm_mode = self->llm_mode ? self->llm_mode : ufo_config_str (config, "llm.mode", "live"),
        .llm_endpoint = ufo_value_map_str (self->model, "api_base",        //  the session's own model's
                                           ufo_value_str (ufo_config_agent (config, "HOST_AGENT", "API_BASE"))),
        .prompts = self->prompts,
        .secrets = sp,
        .save_experience = ufo_config_str (config, "SAVE_EXPERIENCE", "always_not"),
        .rag_experience = ufo_config_bool (config, "RAG_EXPERIENCE", false),
        .rag_online = ufo_config_bool (config, "RAG_ONLINE_SEARCH", false),
        .rag_demonstration = ufo_config_bool (config, "RAG_DEMONSTRATION", false),
    };
    host_ops_t ops = {
        .arg = self, .windows = s_windows, .launch = s_launch, .snapshot = s_snapshot, .ask = s_ask,
        .board_get = s_board_get, .board_prompt = s_board_prompt, .board_add = s_board_add,
        .run_task = s_run_task,
        .ask_user = s_ask_user, .progress = s_progress, .cancelled = s_cancelled,
        .has_worker = s_has_worker,
        .experience_find = s_experience_find, .experience_save = s_experience_save,
        .online_search = s_online_search, .demonstration_find = s_demonstration_find,
        .mcp = s_mcp,
    };
    ufo_info ("host: session %s (task %s, %zu request(s)%s) started", session, name,
              ufo_value_size (requests), plan ? ", follower" : "");
    s_activity (self, "session", "start", self->device, -1, NULL);
    ufo_value_t *result = host_session_run (&cfg, &ops);
    ufo_info ("host: session %s ended: %s", session, ufo_value_map_str (result, "status", "?"));
    if (!(self->stop && *self->stop)) {
        //  a process that is stopping leaves the task unfinished: the broker requeues it
        const char *status = self->cancelled ? "cancelled" : "done";
        ufo_worker_complete (self->worker, self->task_id, status, &result);
    }
    ufo_value_destroy (&result);
    ufo_value_destroy (&launchers);
    self->busy = false;
    self->task_id [0] = 0;
}

int
host_bus_serve (host_bus_t *self, volatile sig_atomic_t *stop)
{
    self->stop = stop;
    //  a signal wakes the loop through the self-pipe (ufo_agent_signals_install)
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (self->loop, ufo_agent_signal_fd ());
    while (!*stop && !ufo_loop_stopped (self->loop)) {
        if (ufo_value_size (self->queued) > 0) {
            ufo_value_t *task = ufo_value_dup (ufo_value_list_at (self->queued, 0));
            ufo_value_list_remove (self->queued, 0);
            s_run_session (self, task);
            ufo_value_destroy (&task);
            continue;
        }
        s_pump (self, -1);
        //  drop submitter events of tasks nobody waits for any more
        ufo_value_clear (self->events);
    }
    return 0;
}

host_bus_t *
host_bus_new (const ufo_config_t *config, const host_bus_options_t *options, ufo_error_t *err)
{
    host_bus_t *self = (host_bus_t *) ufo_calloc (1, sizeof *self);
    self->config = config;
    self->loop = ufo_loop_new ();
    self->device = ufo_strdup (options->device);
    self->llm_mode = options->llm_mode ? ufo_strdup (options->llm_mode) : NULL;
    self->inputs = ufo_value_new_list ();
    self->relays = ufo_value_new_map ();
    self->events = ufo_value_new_list ();
    self->queued = ufo_value_new_list ();
    self->png_level = (int) ufo_config_int (config, "desktop.png_compression", 1);
    if (ufo_bb_endpoint (options->endpoint, "cmd", self->endpoint, sizeof self->endpoint, err) != 0)
        goto fail;
    self->prompts = ufo_prompts_new (options->prompts_dir, err);
    if (!self->prompts)
        goto fail;
    self->llm = ufo_llm_new_from_config (config, "HOST_AGENT", options->llm_mode, options->llm_cassette, err);
    if (!self->llm)
        goto fail;
    ufo_loop_add_llm (self->loop, self->llm);
    self->engines = ufo_llm_engines_new (8);
    s_open_desktop (self);
    self->bb = ufo_bb_client_new (self->endpoint, NULL, err);
    if (!self->bb)
        goto fail;
    ufo_bb_client_set_sender (self->bb, "ufo-host");
    ufo_bb_client_set_waiter (self->bb, s_bb_wait, self);
    char name [256];
    snprintf (name, sizeof name, "host@%s:%d", self->device, (int) getpid ());
    self->tasks = ufo_tasks_new_in_loop (self->endpoint, name, NULL, NULL, self->loop, s_tasks_event, self, err);
    if (!self->tasks)
        goto fail;
    ufo_worker_config_t wc = { .endpoint = self->endpoint, .service = "host", .device = self->device,
                               .name = options->name ? options->name : name, .capacity = 1,
                               .heartbeat_ivl_ms = (int) ufo_config_int (config, "dispatch.heartbeat_ivl_ms", 0),
                               .heartbeat_liveness = (int) ufo_config_int (config, "dispatch.heartbeat_liveness", 0) };
    self->worker = ufo_worker_new_in_loop (&wc, self->loop, s_worker_event, self, err);
    if (!self->worker)
        goto fail;
    return self;
fail:
    host_bus_destroy (&self);
    return NULL;
}

void
host_bus_destroy (host_bus_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    host_bus_t *self = *self_p;
    ufo_worker_destroy (&self->worker);
    ufo_tasks_destroy (&self->tasks);
    ufo_bb_mirror_destroy (&self->mirror);
    ufo_bb_client_destroy (&self->bb);
    ufo_kb_destroy (&self->experience);
    ufo_http_destroy (&self->http);
    ufo_value_destroy (&self->search);
    ufo_llm_response_destroy (&self->resp);
    ufo_llm_destroy (&self->llm);
    ufo_llm_engines_destroy (&self->engines);
    ufo_value_destroy (&self->model);
    ufo_desktop_destroy (&self->desktop);
    ufo_prompts_destroy (&self->prompts);
    if (self->loop)
        ufo_loop_remove (self->loop, self->mcp_source);
    ufo_mcp_hub_destroy (&self->mcp);
    ufo_loop_destroy (&self->loop);
    ufo_value_destroy (&self->inputs);
    ufo_value_destroy (&self->relays);
    ufo_value_destroy (&self->events);
    ufo_value_destroy (&self->queued);
    free (self->device);
    free (self->llm_mode);
    free (self);
    *self_p = NULL;
}
