/*  host_bus.c - ufo-host's connections and its loop (see host_bus.h).

    One loop (ufo_loop, no actor threads): the one broker connection (ufo_conn: the worker
    side of service "host", the submitter side for subtasks and evaluations, and
    asynchronous blackboard calls, on one DEALER), the bus subscription (worker.ready), the
    LLM client, the web search's HTTP client, the MCP servers, the desktop's descriptor and
    the signal pipe are its sources. Idle, it sleeps until the nearest timer (heartbeats).

    A session is the step-driven machine of host_session.h: host_bus_serve advances it
    until it waits for an operation, and the operation's event (an LLM reply, a task
    result, an answer, a worker.ready event on the bus, a timer) completes it from the
    loop; nothing waits inside an operation. The operation in flight is self->op. A cancel
    (or SIGTERM) ends it at once (s_abort): the LLM call or the task is cancelled and the
    machine winds the session down.

    Blackboard calls are asynchronous calls on the connection, the experience index's too
    (RAG_EXPERIENCE, RAG_DEMONSTRATION, SAVE_EXPERIENCE: bb.list, then one bb.snapshot per
    new or changed record, made with ufo_experience.h's requests and replies); a cancel
    forgets the call in flight. */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_bb_mirror.h"
#include "ufo_cert.h"
#include "ufo_conn.h"
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
#include "ufo_msg.h"
#include "ufo_prompt.h"
#include "ufo_task_proto.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_websearch.h"
#include "ufo_loop.h"
#include "host_bus.h"
#include "host_int.h"
#include "ufo_mcp_hub.h"
#include <czmq.h>

#define S_MAX_REQUESTS 1000
#define S_MAX_TEXT (64 * 1024)
#define S_MAX_QUEUED 1000       //  inputs kept while nobody takes them
#define S_LAUNCH_TICK_MS 50     //  a launch looks for its window this often ...
#define S_LAUNCH_WAIT_MS 10000  //  ... for at most this long

//  The operation in flight (one at a time, host_session.h).
typedef enum {
    S_OP_NONE = 0,
    S_OP_ASK,                   //  an LLM call: llm_id
    S_OP_TASK,                  //  a subtask or an evaluation: task, service
    S_OP_USER,                  //  a question to the user: qid
    S_OP_WORKER,                //  waiting for a worker of service (worker.ready, or the grace timer)
    S_OP_LAUNCH,                //  a launched program's window: pid, count (timer)
    S_OP_MCP_TOOLS,             //  the MCP servers starting (until_ms)
    S_OP_MCP_CALL,              //  an API tool call: mcp (until_ms)
    S_OP_SEARCH,                //  a web search: search_no
    S_OP_BOARD                  //  a blackboard call: call (what: board_get | board_prompt | board_add)
} s_op_kind_t;

typedef struct {
    s_op_kind_t kind;
    int64_t llm_id;
    char task [33];
    char service [256];
    host_progress_fn *on_progress;
    void *progress_arg;
    char qid [256];
    int timer;                  //  a timer of the loop (0: none)
    int64_t until_ms;
    int64_t pid;
    size_t count;
    ufo_mcp_op_t *mcp;
    char detail [300];
    uint64_t search_no;
    uint64_t call;              //  the blackboard call in flight (ufo_conn_call), 0: none
    const char *what;           //  S_OP_BOARD: the ops function
    bool asked_again;           //  S_OP_WORKER: dispatch.state was asked at the end of the grace
} s_op_t;

struct _host_bus_t {
    const ufo_config_t *config;
    ufo_loop_t *loop;           //  the process's one loop
    int http_source;            //  the web search's client in the loop (0: none yet)
    int desktop_reader;
    int bus_reader;             //  the bus subscription in the loop (0: no bus endpoint)
    char *device;
    char *llm_mode;             //  --llm-mode, NULL = the configuration's llm.mode
    char endpoint [512];
    ufo_conn_t *conn;           //  the one broker connection
    zsock_t *sub;               //  the bus subscription (dispatch/worker/), NULL: no bus endpoint
    ufo_bb_mirror_t *mirror;    //  the running session's board, kept in step incrementally
    ufo_kb_t *experience;       //  experience records and demonstrations indexed (RAG_EXPERIENCE,
                                //  RAG_DEMONSTRATION), opened when first used
    ufo_http_t *http;           //  web search (RAG_ONLINE_SEARCH), made when first used
    uint64_t searches;          //  web searches started ...
    uint64_t searches_done;     //  ... and ended (each ends once, in order)
    ufo_desktop_t *desktop;
    ufo_llm_t *llm;
    ufo_llm_engines_t *engines; //  the engines of sessions' model overrides (bounded)
    ufo_value_t *model;         //  the running session's model override (body "model"), or NULL
    ufo_prompts_t *prompts;
    int png_level;
    volatile sig_atomic_t *stop;
    //  the running session
    host_session_t *session;
    host_session_config_t cfg;
    host_ops_t ops;
    ufo_value_t *task;          //  the session task (cfg's strings point into it)
    ufo_value_t *launchers;
    const char *secrets [8];    //  the keys redacted from the session's logs, NULL-terminated
    char task_id [80];
    int64_t deadline_ms;        //  the session task's deadline (this host's monotonic clock), 0 = none
    char board [UFO_BB_BOARD_MAX + 1];
    bool cancelled;
    bool aborted;               //  the operation in flight when the session was cancelled was ended
    //  the experience index's operation in flight (S_OP_BOARD, s_kx_reply)
    struct {
        const char *kind;       //  "experience" | "demonstration"
        char *query;
        const char *topk;       //  the configuration key of how many records to retrieve
        ufo_value_t *boards;    //  the boards of kind (bb.list), NULL until it replied
        ufo_value_t *wanted;    //  the ids of the records to read ...
        size_t next;            //  ... the next one to read
        ufo_value_t *records;   //  id -> record read
        char id [64];           //  experience_save: the new record's id
    } kx;
    s_op_t op;
    ufo_value_t *inputs;        //  inputs for the session task not yet taken
    ufo_value_t *relays;        //  qid -> subtask id whose question is with the user
    ufo_value_t *queued;        //  session tasks delivered while busy
    int64_t activity_step;      //  the step of the last model call, named in activity events
    //  MCP servers configured for the HostAgent (MCP_SERVERS "HOST_AGENT"), started when
    //  the first prompt needs their tools; a source of the loop
    ufo_mcp_hub_t *mcp;
    int mcp_source;
};

static void s_activity (host_bus_t *self, const char *what, const char *phase, const char *detail, int64_t step,
                        ufo_value_t *extra);
static void s_progress (void *arg, ufo_value_t **event_p);

static bool
s_cancelled (void *arg)
{
    host_bus_t *self = (host_bus_t *) arg;
    return self->cancelled || (self->stop && *self->stop);
}

//  --- the operation in flight -------------------------------------------------------------

static void
s_reply_free (host_reply_t *reply)
{
    ufo_value_destroy (&reply->value);
    ufo_llm_response_destroy (&reply->response);
    free (reply->url);
    reply->url = NULL;
}

static void
s_kx_reset (host_bus_t *self)
{
    free (self->kx.query);
    ufo_value_destroy (&self->kx.boards);
    ufo_value_destroy (&self->kx.wanted);
    ufo_value_destroy (&self->kx.records);
    memset (&self->kx, 0, sizeof self->kx);
}

//  Ends the operation in flight with reply (its contents are taken).
static void
s_done (host_bus_t *self, host_reply_t *reply)
{
    s_kx_reset (self);
    if (self->op.timer)
        ufo_loop_remove (self->loop, self->op.timer);
    if (self->op.call)
        ufo_conn_call_forget (self->conn, self->op.call);
    ufo_mcp_op_destroy (&self->op.mcp);
    memset (&self->op, 0, sizeof self->op);
    if (self->session && host_session_waiting (self->session))
        host_session_done (self->session, reply);
    s_reply_free (reply);
}

//  Starts waiting for an event of kind (the operation's own fields are set by the caller).
static s_op_t *
s_op_begin (host_bus_t *self, s_op_kind_t kind)
{
    assert (self->op.kind == S_OP_NONE);
    memset (&self->op, 0, sizeof self->op);
    self->op.kind = kind;
    return &self->op;
}

//  The session was cancelled (or the process is stopping): the operation in flight ends now.
static void
s_abort (host_bus_t *self)
{
    s_op_t *op = &self->op;
    host_reply_t reply = { 0 };
    switch (op->kind) {
        case S_OP_NONE:
            return;
        case S_OP_ASK:
            ufo_llm_cancel (self->llm, op->llm_id);
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "session cancelled during the LLM call");
            s_activity (self, "model", "end", NULL, self->activity_step, NULL);
            break;
        case S_OP_TASK:
            ufo_conn_cancel (self->conn, op->task);
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "session cancelled while %s ran", op->service);
            break;
        case S_OP_USER:
            break;                  //  no answer
        case S_OP_WORKER:
            reply.number = 0;
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "session cancelled");
            break;
        case S_OP_LAUNCH:
            reply.number = op->pid; //  launched; its window is not waited for
            break;
        case S_OP_MCP_TOOLS:
            reply.value = ufo_mcp_hub_prompt_tools (self->mcp);
            break;
        case S_OP_MCP_CALL:
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "the call of %s did not end (the session was cancelled)",
                           op->detail);
            s_activity (self, "action", "end", op->detail, self->activity_step, NULL);
            break;
        case S_OP_SEARCH:
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "session cancelled during the web search");
            break;
        case S_OP_BOARD:
            reply.number = -1;
            ufo_error_set (&reply.err, UFO_E_CANCELLED, "session cancelled during the blackboard call (%s)",
                           op->what);
            break;
    }
    ufo_info ("host: session task %s: the operation in flight ended for the cancel", self->task_id);
    s_done (self, &reply);
}

//  --- events: the worker side, the submitter side, the bus ------------------------------------

static void
s_on_worker_event (host_bus_t *self, ufo_value_t **event_p)
{
    ufo_value_t *event = *event_p;
    const char *kind = ufo_value_map_str (event, "kind", "");
    const char *task = ufo_value_map_str (event, "task", "");
    if (strcmp (kind, "task") == 0) {
        //  its deadline_in_ms counts from now, not from when a session starts with it
        ufo_value_map_set_int (event, "received_ms", ufo_time_mono_ms ());
        ufo_value_list_push (self->queued, event_p);
        return;
    }
    bool ours = self->session && strcmp (task, self->task_id) == 0;
    if (strcmp (kind, "input") == 0 && ours) {
        ufo_value_t *body = ufo_value_map_get (event, "body");
        const char *qid = ufo_value_map_str (body, "qid", NULL);
        const char *sub = qid ? ufo_value_map_str (self->relays, qid, NULL) : NULL;
        if (sub) {
            //  the answer to an AppAgent's question or confirmation: relay it back
            ufo_value_t *copy = ufo_value_dup (body);
            if (ufo_conn_input (self->conn, sub, &copy) != 0)
                ufo_warn ("host: answer %s: subtask %s is gone", qid, sub);
            ufo_value_destroy (&copy);
            ufo_value_map_remove (self->relays, qid);
        }
        else if (qid && self->op.kind == S_OP_USER && strcmp (qid, self->op.qid) == 0) {
            host_reply_t reply = { .value = ufo_value_dup (body) };
            s_done (self, &reply);
        }
        else if (body) {
            ufo_value_list_push (self->inputs, &(ufo_value_t *) { ufo_value_dup (body) });
            if (ufo_value_size (self->inputs) > S_MAX_QUEUED)
                ufo_value_list_remove (self->inputs, 0);
        }
    }
    else if (strcmp (kind, "cancel") == 0 && ours) {
        ufo_info ("host: session task %s cancelled by its submitter", task);
        self->cancelled = true;
        self->aborted = true;
        s_abort (self);
    }
    else if (strcmp (kind, "connected") == 0 || strcmp (kind, "disconnected") == 0)
        ufo_info ("host: worker %s", kind);
    ufo_value_destroy (event_p);
}

//  An event of a task this process submitted: the running subtask's or evaluation's
//  progress and result; events of tasks nobody waits for any more are dropped.
static void
s_on_tasks_event (host_bus_t *self, ufo_value_t **event_p)
{
    ufo_value_t *event = *event_p;
    s_op_t *op = &self->op;
    if (op->kind != S_OP_TASK || strcmp (ufo_value_map_str (event, "task", ""), op->task) != 0) {
        ufo_value_destroy (event_p);
        return;
    }
    const char *kind = ufo_value_map_str (event, "kind", "");
    if (strcmp (kind, "progress") == 0) {
        ufo_value_t *body = ufo_value_map_get (event, "body");
        const char *pk = ufo_value_map_str (body, "kind", "");
        if (strcmp (pk, "question") == 0 || strcmp (pk, "confirm") == 0) {
            const char *qid = ufo_value_map_str (body, "qid", NULL);
            if (qid)
                ufo_value_map_set_str (self->relays, qid, op->task);
            ufo_value_t *copy = ufo_value_dup (body);
            s_progress (self, &copy);
        }
        else if (strcmp (pk, "cost") == 0) {
            if (op->on_progress)
                op->on_progress (body, op->progress_arg);
        }
        else if (ufo_value_type (body) == UFO_TMAP) {
            ufo_value_t *copy = ufo_value_dup (body);
            s_progress (self, &copy);
        }
    }
    else if (strcmp (kind, "result") == 0) {
        host_reply_t reply = { 0 };
        const char *status = ufo_value_map_str (event, "status", "failed");
        if (strcmp (status, "done") == 0 && ufo_value_type (ufo_value_map_get (event, "body")) == UFO_TMAP)
            reply.value = ufo_value_dup (ufo_value_map_get (event, "body"));
        else
            ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "task %s on %s %s after %" PRId64 " attempt(s): %s",
                           op->task, op->service, status, ufo_value_map_int (event, "attempts", 0),
                           ufo_value_map_str (event, "reason", "no reason given"));
        s_done (self, &reply);
    }
    ufo_value_destroy (event_p);
}

//  The connection's events (ufo_conn.h): the worker side's and the submitter side's.
static void
s_conn_event (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    const char *kind = ufo_value_map_str (*event_p, "kind", "");
    if (strcmp (kind, "accepted") == 0 || strcmp (kind, "progress") == 0 || strcmp (kind, "result") == 0)
        s_on_tasks_event (self, event_p);
    else if (strcmp (kind, "error") == 0) {
        ufo_warn ("host: %s of task %s refused: %s", ufo_value_map_str (*event_p, "request", "?"),
                  ufo_value_map_str (*event_p, "task", "?"), ufo_value_map_str (*event_p, "message", ""));
        ufo_value_destroy (event_p);
    }
    else
        s_on_worker_event (self, event_p);
}

//  The bus subscription ("dispatch/worker/"): a worker.ready of the service a subtask waits
//  for, on this device, ends the wait.
static void
s_bus_readable (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    for (int n = 0; n < 1000; n++) {
        zmsg_t *msg = zmsg_recv (self->sub);       //  receive timeout 0 (host_bus_new)
        if (!msg)
            break;
        zframe_t *topic = zmsg_first (msg), *data = zmsg_next (msg);
        ufo_msg_t *ev = data ? ufo_msg_decode (zframe_data (data), zframe_size (data), NULL, NULL) : NULL;
        if (ev && strcmp (ufo_msg_type (ev), "worker.ready") == 0 && self->op.kind == S_OP_WORKER) {
            const ufo_value_t *body = ufo_msg_body (ev);
            //  an any-application worker (app:*) serves app:<name> too, as dispatch sees it
            if (ufo_task_service_match (ufo_value_map_str (body, "service", ""), self->op.service)
            &&  strcmp (ufo_value_map_str (body, "device", ""), self->device) == 0) {
                ufo_info ("host: worker %s of %s is ready", ufo_value_map_str (body, "name", "?"), self->op.service);
                s_done (self, &(host_reply_t) { .number = 1 });
            }
        }
        else if (!ev)
            ufo_debug ("host: undecodable bus event on %.*s", topic ? (int) zframe_size (topic) : 0,
                       topic ? (const char *) zframe_data (topic) : "");
        ufo_msg_destroy (&ev);
        zmsg_destroy (&msg);
    }
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
s_desktop_readable (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    if (self->desktop)
        ufo_desktop_pump (self->desktop);
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

//  host_ops_t.windows: the desktop answers at once (a local X / AT-SPI read).
static void
s_windows (void *arg, const char *shot_path, bool want_url)
{
    host_bus_t *self = (host_bus_t *) arg;
    host_reply_t reply = { 0 };
    if (!self->desktop)
        ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "no desktop (DISPLAY not reachable)");
    else {
        ufo_desktop_pump (self->desktop);
        reply.value = ufo_desktop_windows (self->desktop, &reply.err);
    }
    if (reply.value && shot_path) {
        ufo_error_t ierr = { 0 };
        ufo_image_t *image = ufo_desktop_capture_screen (self->desktop, &ierr);
        if (!image || ufo_image_save_png (image, shot_path, self->png_level, &ierr) != 0)
            ufo_warn ("host: desktop screenshot: %s", ierr.message);
        else if (want_url)
            reply.url = host_data_url (shot_path);
        ufo_image_destroy (&image);
    }
    s_done (self, &reply);
}

//  A launched program's window: looked for every S_LAUNCH_TICK_MS, as the original sleeps.
static void
s_launch_tick (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    s_op_t *op = &self->op;
    if (op->kind != S_OP_LAUNCH)
        return;
    ufo_value_t *now = ufo_desktop_windows (self->desktop, NULL);
    bool shown = ufo_value_size (now) > op->count;
    for (size_t k = 0; now && k < ufo_value_size (now); k++)
        if (ufo_value_map_int (ufo_value_list_at (now, k), "pid", 0) == op->pid)
            shown = true;
    ufo_value_destroy (&now);
    if (shown || ufo_time_mono_ms () >= op->until_ms)
        s_done (self, &(host_reply_t) { .number = op->pid });
}

static void
s_launch (void *arg, const char *name)
{
    host_bus_t *self = (host_bus_t *) arg;
    host_reply_t reply = { .number = -1 };
    if (!self->desktop) {
        ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "no desktop");
        s_done (self, &reply);
        return;
    }
    ufo_value_t *before = ufo_desktop_windows (self->desktop, NULL);
    size_t count = ufo_value_size (before);
    ufo_value_destroy (&before);
    char detail [300];
    snprintf (detail, sizeof detail, "Bash %.250s", name);
    s_activity (self, "action", "start", detail, self->activity_step, NULL);
    int pid = ufo_desktop_launch (self->desktop, name, &reply.err);
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_bool (extra, "ok", pid > 0);
    if (pid <= 0)
        ufo_value_map_set_str (extra, "error", reply.err.message);
    s_activity (self, "action", "end", detail, self->activity_step, extra);
    if (pid <= 0) {
        s_done (self, &reply);
        return;
    }
    //  its window is waited for (bounded) while the loop serves everything else
    s_op_t *op = s_op_begin (self, S_OP_LAUNCH);
    op->pid = pid;
    op->count = count;
    op->until_ms = ufo_time_mono_ms () + S_LAUNCH_WAIT_MS;
    op->timer = ufo_loop_timer_add (self->loop, S_LAUNCH_TICK_MS, S_LAUNCH_TICK_MS, s_launch_tick, self);
}

static void
s_snapshot (void *arg, int64_t xid, const char *path)
{
    host_bus_t *self = (host_bus_t *) arg;
    host_reply_t reply = { .number = -1 };
    if (!self->desktop)
        ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "no desktop");
    else {
        ufo_image_t *image = xid ? ufo_desktop_capture_window (self->desktop, xid, &reply.err)
                                 : ufo_desktop_capture_screen (self->desktop, &reply.err);
        if (image)
            reply.number = ufo_image_save_png (image, path, self->png_level, &reply.err);
        ufo_image_destroy (&image);
    }
    s_done (self, &reply);
}

//  --- ops: MCP -------------------------------------------------------------------------------

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

//  After each turn of the hub: the servers may have started, the call may have ended.
static void
s_mcp_check (host_bus_t *self)
{
    s_op_t *op = &self->op;
    bool late = ufo_time_mono_ms () >= op->until_ms;
    if (op->kind == S_OP_MCP_TOOLS && (ufo_mcp_hub_settled (self->mcp) || late)) {
        if (!ufo_mcp_hub_settled (self->mcp))
            ufo_warn ("host: MCP servers still starting; their tools are left out of this step");
        s_done (self, &(host_reply_t) { .value = ufo_mcp_hub_prompt_tools (self->mcp) });
    }
    else if (op->kind == S_OP_MCP_CALL && (ufo_mcp_op_done (op->mcp) || late)) {
        host_reply_t reply = { 0 };
        reply.value = ufo_mcp_op_done (op->mcp) ? ufo_mcp_op_take_result (op->mcp) : NULL;
        ufo_value_t *extra = ufo_value_new_map ();
        ufo_value_map_set_bool (extra, "ok", reply.value && ufo_value_map_bool (reply.value, "success", false));
        s_activity (self, "action", "end", op->detail, self->activity_step, extra);
        if (!reply.value)
            ufo_error_set (&reply.err, UFO_E_TIMEOUT, "the call of %s did not end", op->detail + 4);
        s_done (self, &reply);
    }
}

static void
s_mcp_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_http_fd_t fds [32];
    n = ufo_loop_items_to_http (fds, items, n > 32 ? 32 : n);
    ufo_mcp_hub_process (self->mcp, fds, n);
    s_mcp_check (self);
}

static void
s_mcp_deadline (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    self->op.timer = 0;                 //  a one-shot timer is gone once it ran
    s_mcp_check (self);
}

//  host_ops_t.mcp: the HostAgent's API tools (NULL function) or a call of one.
static void
s_mcp (void *arg, const char *function, const ufo_value_t *args)
{
    host_bus_t *self = (host_bus_t *) arg;
    host_reply_t reply = { 0 };
    if (!self->mcp) {
        self->mcp = ufo_mcp_hub_new (self->config, "HOST_AGENT", NULL, NULL, &reply.err);
        if (!self->mcp) {
            s_done (self, &reply);
            return;
        }
        ufo_loop_source_t source = { .items = s_mcp_items, .dispatch = s_mcp_dispatch };
        self->mcp_source = ufo_loop_source_add (self->loop, &source, self);
    }
    double timeout_s = ufo_config_float (self->config, "MCP_TOOL_TIMEOUT", 30.0);
    s_op_t *op;
    int64_t wait_ms;
    if (!function) {
        //  the servers start (and list their tools) while the loop serves the bus, bounded
        op = s_op_begin (self, S_OP_MCP_TOOLS);
        wait_ms = 2 * (int64_t) (timeout_s * 1000.0) + 1000;
    }
    else {
        char detail [300];
        snprintf (detail, sizeof detail, "MCP %.250s", function);
        s_activity (self, "action", "start", detail, self->activity_step, NULL);
        op = s_op_begin (self, S_OP_MCP_CALL);
        snprintf (op->detail, sizeof op->detail, "%s", detail);
        op->mcp = ufo_mcp_hub_call (self->mcp, function, args);
        //  the hub ends the call at MCP_TOOL_TIMEOUT; the bound here is only a backstop
        wait_ms = (int64_t) (timeout_s * 1000.0) + 5000;
    }
    op->until_ms = ufo_time_mono_ms () + wait_ms;
    op->timer = ufo_loop_timer_add (self->loop, (int) wait_ms, 0, s_mcp_deadline, self);
    s_mcp_check (self);                 //  already settled / ended
}

//  --- activity: what the session is doing now, for the user (ufo run's live line) ------------

//  Publishes {"kind": "activity", "agent": "HostAgent", "what", "phase", "detail", "step",
//  + extra's fields} to the session's submitter (PROTOCOL.md, agent tasks). step < 0: none.
static void
s_activity (host_bus_t *self, const char *what, const char *phase, const char *detail, int64_t step,
            ufo_value_t *extra)
{
    if (!self->task_id [0]) {
        ufo_value_destroy (&extra);
        return;
    }
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
    if (self->op.kind != S_OP_ASK) {
        ufo_llm_response_destroy (response_p);      //  a call abandoned for a cancel
        return;
    }
    ufo_llm_response_t *resp = *response_p;
    *response_p = NULL;
    ufo_value_t *extra = ufo_value_new_map ();
    bool ok = resp && resp->code == UFO_OK;
    ufo_value_map_set_bool (extra, "ok", ok);
    if (!ok)
        ufo_value_map_set_str (extra, "error", resp && resp->error ? resp->error : "no reply");
    ufo_value_map_set_float (extra, "seconds", resp ? resp->latency_s : 0);
    s_activity (self, "model", "end", NULL, self->activity_step, extra);
    host_reply_t reply = { .response = resp };
    if (!resp)
        ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "no reply");
    s_done (self, &reply);
}

static void
s_ask (void *arg, const ufo_value_t *messages, const ufo_llm_opts_t *opts)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_llm_opts_t told = *opts;
    told.on_retry = s_on_llm_retry;
    told.retry_arg = self;
    self->activity_step = opts->step;
    host_reply_t reply = { 0 };
    //  the session's model override, if any (ufo_llm_override.h): a step error when unusable
    if (ufo_llm_engines_for (self->engines, self->config, "HOST_AGENT", self->model, &told.engine, &reply.err)) {
        s_done (self, &reply);
        return;
    }
    s_op_t *op = s_op_begin (self, S_OP_ASK);
    op->llm_id = ufo_llm_submit (self->llm, messages, &told, s_llm_done, self, &reply.err);
    if (op->llm_id < 0) {
        s_done (self, &reply);
        return;
    }
    if (self->op.kind == S_OP_ASK)      //  (a reply from a cassette may have come already)
        s_activity (self, "model", "start", NULL, opts->step, NULL);
}

//  --- ops: blackboard --------------------------------------------------------------------
//  Asynchronous calls on the connection; the reply completes the operation (s_board_reply).

//  Whether r is the reply of the blackboard call in flight (then it is no longer in flight).
static bool
s_board_call_ended (host_bus_t *self, ufo_conn_reply_t *r)
{
    if (self->op.kind != S_OP_BOARD || (self->op.call && self->op.call != r->id))
        return false;
    self->op.call = 0;
    return true;
}

static void
s_board_reply (void *arg, ufo_conn_reply_t *r)
{
    host_bus_t *self = (host_bus_t *) arg;
    s_op_t *op = &self->op;
    if (!s_board_call_ended (self, r))
        return;
    host_reply_t reply = { 0 };
    if (!r->ok) {
        reply.err = r->err;
        reply.number = -1;
    }
    else if (strcmp (op->what, "board_get") == 0) {
        reply.value = ufo_value_dup (ufo_value_map_get (*r->body_p, "board"));
        if (ufo_value_type (reply.value) != UFO_TMAP) {
            ufo_value_destroy (&reply.value);
            reply.value = ufo_value_new_map ();
        }
    }
    else if (strcmp (op->what, "board_prompt") == 0) {
        ufo_value_t *body = *r->body_p;
        *r->body_p = NULL;
        if (ufo_bb_mirror_apply (self->mirror, &body, &reply.err) >= 0) {
            ufo_board_t *board = ufo_bb_mirror_board (self->mirror);
            reply.value = ufo_board_is_empty (board) ? NULL : ufo_board_to_prompt (board);
        }
    }
    s_done (self, &reply);
}

//  Starts a blackboard call for the ops function what: call is the id ufo_conn gave it.
static void
s_board_begin (host_bus_t *self, const char *what)
{
    s_op_begin (self, S_OP_BOARD)->what = what;
}

static void
s_board_started (host_bus_t *self, uint64_t call)
{
    if (self->op.kind == S_OP_BOARD)
        self->op.call = call;
}

//  host_ops_t.board_get: the session's board with its screenshots' data URLs.
static void
s_board_get (void *arg)
{
    host_bus_t *self = (host_bus_t *) arg;
    s_board_begin (self, "board_get");
    s_board_started (self, ufo_conn_snapshot (self->conn, self->board, 0, true, 0, s_board_reply, self));
}

//  host_ops_t.board_prompt: the mirror brought in step with the items added since its last
//  sync (ufo_bb_mirror.h), as prompt parts.
static void
s_board_prompt (void *arg)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!self->mirror || strcmp (self->board, ufo_bb_mirror_name (self->mirror)) != 0) {
        ufo_bb_mirror_destroy (&self->mirror);
        self->mirror = ufo_bb_mirror_new (self->board);
    }
    s_board_begin (self, "board_prompt");
    s_board_started (self, ufo_conn_snapshot (self->conn, self->board, ufo_bb_mirror_seq (self->mirror), true, 0,
                                              s_board_reply, self));
}

static void
s_board_add (void *arg, const char *memory, ufo_value_t **item_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", self->board);
    ufo_value_map_set_str (body, "memory", memory);
    ufo_value_map_set (body, ufo_value_type (*item_p) == UFO_TLIST ? "items" : "item", item_p);
    s_board_begin (self, "board_add");
    s_board_started (self, ufo_conn_call (self->conn, "bb.add", &body, NULL, 0, 0, s_board_reply, self));
}

//  --- ops: tasks and the user ---------------------------------------------------------------

static void
s_progress (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (ufo_conn_progress (self->conn, self->task_id, event_p) != 0)
        ufo_value_destroy (event_p);
}

//  host_ops_t.run_task: submitted; its events come to s_tasks_event.
static void
s_run_task (void *arg, const char *service, ufo_value_t **body_p, host_progress_fn *on_progress,
            void *progress_arg)
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
    host_reply_t reply = { 0 };
    char id [33];
    if (ufo_conn_submit (self->conn, &spec, id, &reply.err) != 0) {
        ufo_value_destroy (&spec);
        s_done (self, &reply);
        return;
    }
    ufo_info ("host: task %s submitted to %s", id, service);
    s_op_t *op = s_op_begin (self, S_OP_TASK);
    snprintf (op->task, sizeof op->task, "%s", id);
    snprintf (op->service, sizeof op->service, "%s", service);
    op->on_progress = on_progress;
    op->progress_arg = progress_arg;
}

static void s_worker_grace (ufo_loop_t *loop, void *arg);

//  The reply to dispatch.state: a worker of the service waited for, on this device, ends
//  the wait; none starts the grace (or, asked again at its end, ends it with "no").
static void
s_state_reply (void *arg, ufo_conn_reply_t *r)
{
    host_bus_t *self = (host_bus_t *) arg;
    s_op_t *op = &self->op;
    if (op->kind != S_OP_WORKER || (op->call && op->call != r->id))
        return;
    op->call = 0;
    host_reply_t reply = { .number = -1 };
    if (!r->ok) {
        reply.err = r->err;
        ufo_warn ("host: dispatch.state: %s (submitting to %s anyway)", r->err.message, op->service);
        s_done (self, &reply);
        return;
    }
    const ufo_value_t *workers = ufo_value_map_get (*r->body_p, "workers");
    bool found = false;
    for (size_t i = 0; i < ufo_value_size (workers) && !found; i++) {
        const ufo_value_t *w = ufo_value_list_at (workers, i);
        //  an any-application worker (app:*) serves app:<name> too, as dispatch sees it
        found = ufo_task_service_match (ufo_value_map_str (w, "service", ""), op->service)
             && strcmp (ufo_value_map_str (w, "device", ""), self->device ? self->device : "") == 0;
    }
    if (found || op->asked_again) {
        reply.number = found ? 1 : 0;
        if (!found)
            ufo_error_set (&reply.err, UFO_E_NOT_FOUND, "no worker of %s on device %s", op->service, self->device);
        s_done (self, &reply);
        return;
    }
    //  the grace, counted from the broker's first answer (a call that waited out a cut does
    //  not use it up)
    int grace_ms = (int) ufo_config_int (self->config, "dispatch.worker_grace_ms", 3000);
    ufo_info ("host: no worker of %s on device %s yet; waiting up to %d ms for one to register", op->service,
              self->device, grace_ms);
    op->timer = ufo_loop_timer_add (self->loop, grace_ms, 0, s_worker_grace, self);
}

//  The grace for a worker to register is over: no worker.ready came (with a bus), or
//  dispatch.state is asked once more (without one).
static void
s_worker_grace (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    host_bus_t *self = (host_bus_t *) arg;
    s_op_t *op = &self->op;
    op->timer = 0;                      //  a one-shot timer is gone once it ran
    if (op->kind != S_OP_WORKER)
        return;
    if (!self->sub) {
        op->asked_again = true;
        op->call = ufo_conn_call (self->conn, "dispatch.state", NULL, NULL, 0, 0, s_state_reply, self);
        return;
    }
    host_reply_t reply = { .number = 0 };
    ufo_error_set (&reply.err, UFO_E_NOT_FOUND, "no worker of %s on device %s", op->service, self->device);
    s_done (self, &reply);
}

//  host_ops_t.has_worker: a worker dispatch lists now, or one whose worker.ready comes on
//  the bus within dispatch.worker_grace_ms (a worker that is just starting, or registering again
//  after the network came back). Without a bus endpoint, dispatch.state is asked again at
//  the end of the grace instead.
static void
s_has_worker (void *arg, const char *service)
{
    host_bus_t *self = (host_bus_t *) arg;
    s_op_t *op = s_op_begin (self, S_OP_WORKER);
    snprintf (op->service, sizeof op->service, "%s", service);
    uint64_t call = ufo_conn_call (self->conn, "dispatch.state", NULL, NULL, 0, 0, s_state_reply, self);
    if (self->op.kind == S_OP_WORKER && !self->op.timer)
        self->op.call = call;
}

//  host_ops_t.ask_user: the question goes to the submitter; the answer comes as an input
//  (s_on_worker_event), or came already.
static void
s_ask_user (void *arg, ufo_value_t **event_p)
{
    host_bus_t *self = (host_bus_t *) arg;
    char qid [256];
    snprintf (qid, sizeof qid, "%s", ufo_value_map_str (*event_p, "qid", ""));
    s_progress (self, event_p);
    for (size_t i = 0; i < ufo_value_size (self->inputs); i++) {
        ufo_value_t *in = ufo_value_list_at (self->inputs, i);
        if (strcmp (ufo_value_map_str (in, "qid", ""), qid) == 0) {
            host_reply_t reply = { .value = ufo_value_dup (in) };
            ufo_value_list_remove (self->inputs, i);
            s_done (self, &reply);
            return;
        }
    }
    if (s_cancelled (self)) {
        s_done (self, &(host_reply_t) { 0 });
        return;
    }
    s_op_t *op = s_op_begin (self, S_OP_USER);
    snprintf (op->qid, sizeof op->qid, "%s", qid);
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


//  --- ops: knowledge ---------------------------------------------------------------------------

//  Experience records (docs/KNOWLEDGE.md): kept on the broker; an in-memory index of them
//  is brought in step before each search: bb.list, then a bb.snapshot of each new or
//  changed record, one after the other on the connection (s_kx_reply takes each reply).

static void s_kx_reply (void *arg, ufo_conn_reply_t *r);

//  Reads the next wanted record, or, when all are read, updates the index and ends the
//  operation with the records retrieved.
static void
s_kx_next (host_bus_t *self)
{
    while (self->kx.next < ufo_value_size (self->kx.wanted)) {
        const char *id = ufo_value_str (ufo_value_list_at (self->kx.wanted, self->kx.next++));
        ufo_error_t err = {0};
        ufo_value_t *body = ufo_experience_get_request (self->kx.kind, id, &err);
        if (!body) {
            ufo_warn ("knowledge: %s record %s skipped: %s", self->kx.kind, id, err.message);
            continue;
        }
        self->op.call = ufo_conn_call (self->conn, "bb.snapshot", &body, NULL, 0, 0, s_kx_reply, self);
        return;
    }
    host_reply_t reply = { 0 };
    if (ufo_experience_sync_apply (self->experience, self->kx.kind, self->kx.boards, self->kx.records,
                                   &reply.err) >= 0)
        reply.value = ufo_experience_retrieve (self->experience, self->kx.kind, self->kx.query,
                                               (size_t) ufo_config_int (self->config, self->kx.topk, 5),
                                               (size_t) ufo_config_int (self->config, "knowledge.prompt_bytes", 1500));
    s_done (self, &reply);
}

//  A reply of the experience index's calls: bb.add (experience_save), bb.list, bb.snapshot.
static void
s_kx_reply (void *arg, ufo_conn_reply_t *r)
{
    host_bus_t *self = (host_bus_t *) arg;
    if (!s_board_call_ended (self, r))
        return;
    host_reply_t reply = { 0 };
    if (strcmp (self->op.what, "experience_save") == 0) {
        reply.number = r->ok ? 0 : -1;
        if (r->ok)
            snprintf (reply.id, sizeof reply.id, "%s", self->kx.id);
        else
            reply.err = r->err;
        s_done (self, &reply);
        return;
    }
    if (!r->ok && (!self->kx.boards || ufo_experience_fatal (&r->err))) {
        reply.err = r->err;             //  the index keeps what it had
        s_done (self, &reply);
        return;
    }
    if (!self->kx.boards) {             //  bb.list
        self->kx.boards = ufo_experience_boards (*r->body_p, self->kx.kind);
        self->kx.wanted = ufo_experience_sync_wanted (self->experience, self->kx.boards);
        self->kx.records = ufo_value_new_map ();
    }
    else {                              //  bb.snapshot of the record read last
        const char *id = ufo_value_str (ufo_value_list_at (self->kx.wanted, self->kx.next - 1));
        ufo_error_t err = r->err;
        ufo_value_t *record = r->ok ? ufo_experience_get_reply (*r->body_p, self->kx.kind, id, &err) : NULL;
        if (record)
            ufo_value_map_set (self->kx.records, id, &record);
        else
            ufo_warn ("knowledge: %s record %s skipped: %s", self->kx.kind, id, err.message);
    }
    s_kx_next (self);
}

static void
s_find (host_bus_t *self, const char *kind, const char *query, const char *topk)
{
    host_reply_t reply = { 0 };
    if (!self->experience && !(self->experience = ufo_kb_open (":memory:", &reply.err))) {
        s_done (self, &reply);
        return;
    }
    s_board_begin (self, strcmp (kind, "experience") == 0 ? "experience_find" : "demonstration_find");
    self->kx.kind = kind;
    self->kx.query = strdup (query ? query : "");
    self->kx.topk = topk;
    s_board_started (self, ufo_conn_call (self->conn, "bb.list", NULL, NULL, 0, 0, s_kx_reply, self));
}

static void
s_experience_find (void *arg, const char *request)
{
    s_find ((host_bus_t *) arg, "experience", request, "RAG_EXPERIENCE_RETRIEVED_TOPK");
}

static void
s_demonstration_find (void *arg, const char *subtask)
{
    s_find ((host_bus_t *) arg, "demonstration", subtask, "RAG_DEMONSTRATION_RETRIEVED_TOPK");
}

static void
s_experience_save (void *arg, ufo_value_t **record_p)
{
    host_bus_t *self = arg;
    host_reply_t reply = { .number = -1 };
    char id [64];
    ufo_value_t *body = ufo_experience_save_request ("experience", record_p, id, &reply.err);
    if (!body) {
        s_done (self, &reply);
        return;
    }
    s_board_begin (self, "experience_save");
    snprintf (self->kx.id, sizeof self->kx.id, "%s", id);
    s_board_started (self, ufo_conn_call (self->conn, "bb.add", &body, NULL, 0, 0, s_kx_reply, self));
}

//  A web search ended (each search's callback comes once, in the order they started).
static void
s_search_done (ufo_value_t **results_p, const char *error, void *arg)
{
    host_bus_t *self = arg;
    self->searches_done++;
    if (self->op.kind != S_OP_SEARCH || self->op.search_no != self->searches_done) {
        if (results_p)
            ufo_value_destroy (results_p);  //  a search abandoned for a cancel
        return;
    }
    host_reply_t reply = { 0 };
    reply.value = results_p ? *results_p : NULL;
    if (results_p)
        *results_p = NULL;
    if (!reply.value) {
        ufo_websearch_opts_t opts;
        ufo_websearch_opts_from_config (&opts, self->config);
        ufo_error_set (&reply.err, UFO_E_UNAVAILABLE, "%s %s: %s", opts.provider, opts.endpoint,
                       error ? error : "failed");
    }
    //  RAG_ONLINE_RETRIEVED_TOPK of the RAG_ONLINE_SEARCH_TOPK results go into the prompt
    size_t keep = (size_t) ufo_config_int (self->config, "RAG_ONLINE_RETRIEVED_TOPK", 1);
    while (ufo_value_size (reply.value) > keep)
        ufo_value_list_remove (reply.value, ufo_value_size (reply.value) - 1);
    s_done (self, &reply);
}

//  One web search, bounded by knowledge.search_timeout_ms; the loop serves everything else.
static void
s_online_search (void *arg, const char *query)
{
    host_bus_t *self = arg;
    host_reply_t reply = { 0 };
    if (!self->http && (self->http = ufo_http_new ()))
        self->http_source = ufo_loop_add_http (self->loop, self->http);
    if (!self->http) {
        ufo_error_set (&reply.err, UFO_E_INTERNAL, "no HTTP client");
        s_done (self, &reply);
        return;
    }
    ufo_websearch_opts_t opts;
    ufo_websearch_opts_from_config (&opts, self->config);
    s_op_t *op = s_op_begin (self, S_OP_SEARCH);
    op->search_no = self->searches + 1;
    if (ufo_websearch_start (self->http, &opts, query, s_search_done, self, &reply.err) < 0) {
        s_done (self, &reply);
        return;
    }
    self->searches++;
}

//  --- sessions --------------------------------------------------------------------------------

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

//  A session task starts: checked, then its machine is made (host_bus_serve advances it).
//  Takes the task.
static void
s_session_start (host_bus_t *self, ufo_value_t **task_p)
{
    const ufo_config_t *config = self->config;
    ufo_value_t *task = *task_p;
    *task_p = NULL;
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
        ufo_conn_complete (self->conn, self->task_id, "failed", &result);
        ufo_value_destroy (&result);
        ufo_value_destroy (&task);
        self->task_id [0] = 0;
        return;
    }
    if (ufo_value_type (plan) != UFO_TLIST || strcmp (ufo_value_map_str (body, "mode", "normal"), "follower"))
        plan = NULL;
    snprintf (self->board, sizeof self->board, "%s", session);
    //  the time left as the broker counted it when it assigned the task, timed from its
    //  arrival on this host's monotonic clock (the two hosts' wall clocks need not agree)
    int64_t left_ms = ufo_value_map_int (task, "deadline_in_ms", 0);
    int64_t received = ufo_value_map_int (task, "received_ms", ufo_time_mono_ms ());
    self->deadline_ms = left_ms > 0 ? received + left_ms : 0;
    s_open_desktop (self);
    self->cancelled = self->aborted = false;
    ufo_value_clear (self->inputs);
    ufo_value_clear (self->relays);

    ufo_value_destroy (&self->launchers);
    self->launchers = ufo_value_new_list ();
    const ufo_value_t *lmap = ufo_config_get (config, "desktop.launchers");
    for (size_t i = 0; i < ufo_value_size (lmap) && ufo_value_type (lmap) == UFO_TMAP; i++)
        ufo_value_list_push_str (self->launchers, ufo_value_map_key_at (lmap, i));
    const char *key = ufo_value_str (ufo_config_agent (config, "HOST_AGENT", "API_KEY"));
    //  redacted from the logs: every key this session's calls may use (its own model's too)
    const char *keys [] = { key, getenv ("OPENAI_API_KEY"), getenv ("AZURE_OPENAI_API_KEY"),
                            getenv ("ANTHROPIC_API_KEY"), getenv ("GEMINI_API_KEY"), getenv ("UFO_API_KEY"),
                            self->model ? getenv (ufo_value_map_str (self->model, "api_key_env", "")) : NULL };
    _Static_assert (UFO_ARRAY_SIZE (keys) < UFO_ARRAY_SIZE (self->secrets), "room for the keys");
    size_t ns = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++)
        if (keys [i] && *keys [i])
            self->secrets [ns++] = keys [i];
    self->secrets [ns] = NULL;
    const char *log_root = ufo_value_map_str (body, "log_root", NULL);
    if (!log_root || !*log_root)
        log_root = ufo_config_str (config, "log.dir", "logs");
    self->cfg = (host_session_config_t) {
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
        .launchers = self->launchers,
        .mode = ufo_value_map_str (body, "mode", "normal"),
        .llm_mode = self->llm_mode ? self->llm_mode : ufo_config_str (config, "llm.mode", "live"),
        .llm_endpoint = ufo_value_map_str (self->model, "api_base",        //  the session's own model's
                                           ufo_value_str (ufo_config_agent (config, "HOST_AGENT", "API_BASE"))),
        .prompts = self->prompts,
        .secrets = self->secrets,
        .save_experience = ufo_config_str (config, "SAVE_EXPERIENCE", "always_not"),
        .rag_experience = ufo_config_bool (config, "RAG_EXPERIENCE", false),
        .rag_online = ufo_config_bool (config, "RAG_ONLINE_SEARCH", false),
        .rag_demonstration = ufo_config_bool (config, "RAG_DEMONSTRATION", false),
        .confirm_actions = ufo_config_get (config, "desktop.confirm_actions"),
        .confirm_policy = ufo_config_str (config, "desktop.confirm_policy", "ask"),
    };
    self->ops = (host_ops_t) {
        .arg = self, .windows = s_windows, .launch = s_launch, .snapshot = s_snapshot, .ask = s_ask,
        .board_get = s_board_get, .board_prompt = s_board_prompt, .board_add = s_board_add,
        .run_task = s_run_task,
        .ask_user = s_ask_user, .progress = s_progress, .cancelled = s_cancelled,
        .has_worker = s_has_worker,
        .experience_find = s_experience_find, .experience_save = s_experience_save,
        .online_search = s_online_search, .demonstration_find = s_demonstration_find,
        .mcp = s_mcp,
    };
    self->task = task;
    ufo_info ("host: session %s (task %s, %zu request(s)%s) started", session, name,
              ufo_value_size (requests), plan ? ", follower" : "");
    s_activity (self, "session", "start", self->device, -1, NULL);
    self->session = host_session_new (&self->cfg, &self->ops);
}

//  The session's machine has ended: its result goes to the submitter.
static void
s_session_end (host_bus_t *self)
{
    ufo_value_t *result = host_session_result (self->session);
    ufo_info ("host: session %s ended: %s", self->board, ufo_value_map_str (result, "status", "?"));
    if (!(self->stop && *self->stop)) {
        //  a process that is stopping leaves the task unfinished: the broker requeues it
        const char *status = self->cancelled ? "cancelled" : "done";
        ufo_conn_complete (self->conn, self->task_id, status, &result);
    }
    ufo_value_destroy (&result);
    host_session_destroy (&self->session);
    ufo_value_destroy (&self->task);
    self->task_id [0] = 0;
}

int
host_bus_serve (host_bus_t *self, volatile sig_atomic_t *stop)
{
    self->stop = stop;
    //  a signal wakes the loop through the self-pipe (ufo_agent_signals_install)
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (self->loop, ufo_agent_signal_fd ());
    while (true) {
        if (self->session) {
            if (s_cancelled (self) && !self->aborted) {
                //  SIGTERM during a session: its operation in flight ends, the session winds down
                self->aborted = true;
                s_abort (self);
            }
            if (host_session_advance (self->session) == HOST_RUN_DONE) {
                s_session_end (self);
                continue;
            }
        }
        else if (*stop || ufo_loop_stopped (self->loop))
            break;
        else if (ufo_value_size (self->queued) > 0) {
            ufo_value_t *task = ufo_value_dup (ufo_value_list_at (self->queued, 0));
            ufo_value_list_remove (self->queued, 0);
            s_session_start (self, &task);
            continue;
        }
        s_pump (self, -1);
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
    //  the one broker connection: the worker of "host", the submitter, the board calls
    char name [256];
    snprintf (name, sizeof name, "host@%s:%d", self->device, (int) getpid ());
    ufo_conn_config_t cc = { .endpoint = self->endpoint, .name = options->name ? options->name : name,
                             .service = "host", .device = self->device, .capacity = 1,
                             .heartbeat_ivl_ms = (int) ufo_config_int (config, "dispatch.heartbeat_ivl_ms", 0),
                             .heartbeat_liveness = (int) ufo_config_int (config, "dispatch.heartbeat_liveness", 0) };
    self->conn = ufo_conn_new (&cc, self->loop, s_conn_event, self, err);
    if (!self->conn)
        goto fail;
    //  the bus subscription: worker.ready events (waiting for an AppAgent worker)
    if (options->bus_endpoint) {
        char bus [512], topic [64];
        if (ufo_bb_endpoint (options->bus_endpoint, "bus", bus, sizeof bus, err) != 0)
            goto fail;
        self->sub = zsock_new (ZMQ_SUB);
        if (!self->sub || ufo_security_apply_client (self->sub, NULL, NULL, err) != 0)
            goto fail;
        zsock_set_linger (self->sub, 0);
        zsock_set_rcvtimeo (self->sub, 0);
        ufo_task_topic (topic, sizeof topic, "worker", "");
        zsock_set_subscribe (self->sub, topic);
        if (zsock_connect (self->sub, "%s", bus) != 0) {
            ufo_error_set (err, UFO_E_INVALID, "cannot connect to bus endpoint '%s'", bus);
            goto fail;
        }
        self->bus_reader = ufo_loop_reader_add (self->loop, self->sub, -1, s_bus_readable, self);
    }
    else
        ufo_warn ("host: no bus endpoint (--bus, broker.bus_endpoint): waiting for an AppAgent worker asks "
                  "dispatch.state again at the end of the grace instead of listening for worker.ready");
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
    host_session_destroy (&self->session);
    if (self->loop && self->op.timer)
        ufo_loop_remove (self->loop, self->op.timer);
    ufo_mcp_op_destroy (&self->op.mcp);
    ufo_value_destroy (&self->task);
    ufo_value_destroy (&self->launchers);
    ufo_conn_destroy (&self->conn);
    ufo_bb_mirror_destroy (&self->mirror);
    if (self->loop)
        ufo_loop_remove (self->loop, self->bus_reader);
    zsock_destroy (&self->sub);
    s_kx_reset (self);
    ufo_kb_destroy (&self->experience);
    ufo_http_destroy (&self->http);
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
    ufo_value_destroy (&self->queued);
    free (self->device);
    free (self->llm_mode);
    free (self);
    *self_p = NULL;
}
