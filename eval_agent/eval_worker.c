/*  eval_worker.c - see eval_worker.h. */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_conn.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_eval.h"
#include "ufo_llm.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "eval_worker.h"
#include "ufo_loop.h"

#define S_BOARD_TIMEOUT 2000        //  ms a blackboard call may take

typedef struct _s_running_t s_running_t;
struct _s_running_t {
    char task [64];                 //  dispatch task id
    char session [256];             //  board name ("" = none)
    int64_t eval_id;                //  0 once finished
    uint64_t call_id;               //  the board read or write in flight (0: none)
    ufo_eval_request_t req;         //  while the board is read: the request (strings borrowed from body)
    ufo_value_t *body;              //  ... the task body it points into
    ufo_value_t *result;            //  while the verdict is written to the board
    eval_worker_t *owner;
    s_running_t *next;
};

struct _eval_worker_t {
    const ufo_config_t *config;
    ufo_loop_t *loop;               //  the process's one loop: worker link, LLM client, signals
    ufo_llm_t *llm;
    ufo_prompts_t *prompts;
    ufo_eval_t *eval;
    ufo_conn_t *conn;               //  the one broker connection: worker side and board calls
    char log_root [PATH_MAX];
    s_running_t *running;
};

static void
s_on_event (void *arg, ufo_value_t **event_p);

eval_worker_t *
eval_worker_new (const ufo_config_t *config, const eval_worker_options_t *options, ufo_error_t *err)
{
    eval_worker_t *self = ufo_calloc (1, sizeof *self);
    self->config = config;
    self->loop = ufo_loop_new ();
    snprintf (self->log_root, sizeof self->log_root, "%s", ufo_config_str (config, "log.dir", "logs"));
    self->llm = ufo_llm_new_from_config (config, "EVALUATION_AGENT", options->llm_mode,
                                         options->llm_cassette, err);
    if (self->llm)
        self->prompts = ufo_prompts_new (options->prompts_dir, err);
    if (self->prompts)
        self->eval = ufo_eval_new (config, self->llm, self->prompts, err);
    if (self->eval) {
        ufo_conn_config_t cc = { .endpoint = options->endpoint, .service = "eval",
                                 .device = options->device, .name = options->name,
                                 .capacity = options->capacity, .call_timeout_ms = S_BOARD_TIMEOUT,
                                 .heartbeat_ivl_ms = (int) ufo_config_int (config, "dispatch.heartbeat_ivl_ms", 0),
                                 .heartbeat_liveness = (int) ufo_config_int (config, "dispatch.heartbeat_liveness", 0) };
        self->conn = ufo_conn_new (&cc, self->loop, s_on_event, self, err);
    }
    if (self->conn)
        ufo_loop_add_llm (self->loop, self->llm);
    if (!self->conn) {
        eval_worker_destroy (&self);
        return NULL;
    }
    return self;
}

void
eval_worker_destroy (eval_worker_t **self_p)
{
    eval_worker_t *self = *self_p;
    if (!self)
        return;
    //  Verdicts being written to the board: their results go first (bounded).
    s_running_t *r;
    for (r = self->running; r && !r->result; r = r->next)
        ;
    if (r && self->conn)
        ufo_conn_flush (self->conn, 1000);
    //  The connection goes next: the worker leaves, its unfinished tasks are requeued.
    for (r = self->running; r && self->conn; r = r->next)
        if (r->call_id)
            ufo_conn_call_forget (self->conn, r->call_id);
    ufo_conn_destroy (&self->conn);
    while (self->running) {
        r = self->running;
        self->running = r->next;
        if (r->eval_id > 0 && self->eval)
            ufo_eval_cancel (self->eval, r->eval_id);
        ufo_value_destroy (&r->body);
        ufo_value_destroy (&r->result);
        free (r);
    }
    ufo_eval_destroy (&self->eval);
    ufo_prompts_destroy (&self->prompts);
    ufo_llm_destroy (&self->llm);
    ufo_loop_destroy (&self->loop);
    free (self);
    *self_p = NULL;
}

int
eval_worker_parse_body (const ufo_value_t *body, const char *default_root, ufo_eval_request_t *req,
                        ufo_error_t *err)
{
    memset (req, 0, sizeof *req);
    if (ufo_value_type (body) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "the task body must be a map");
    const ufo_value_t *v = ufo_value_map_get (body, "task");
    if (ufo_value_type (v) != UFO_TSTRING || ufo_value_strlen (v) == 0)
        return ufo_error_set (err, UFO_E_MISSING, "\"task\" (the log task name) must be a non-empty string");
    req->task = ufo_value_str (v);
    v = ufo_value_map_get (body, "log_root");
    if (v && ufo_value_type (v) != UFO_TNULL && ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "\"log_root\" must be a string");
    req->log_root = ufo_value_strlen (v) ? ufo_value_str (v) : default_root;
    if (ufo_value_strlen (v) && !ufo_tasklog_root_safe (req->log_root))
        return ufo_error_set (err, UFO_E_INVALID, "\"log_root\" must be a directory path of at most 1024 bytes "
                              "without \"..\" components");
    v = ufo_value_map_get (body, "level");
    if (v && ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "\"level\" must be \"session\" or \"round\"");
    req->level = v ? ufo_value_str (v) : "session";
    if (strcmp (req->level, "session") != 0 && strcmp (req->level, "round") != 0)
        return ufo_error_set (err, UFO_E_RANGE, "\"level\" must be \"session\" or \"round\"");
    v = ufo_value_map_get (body, "round");
    if (v && ufo_value_type (v) != UFO_TNULL
    &&  (ufo_value_type (v) != UFO_TINT || ufo_value_int (v) < 0 || ufo_value_int (v) > 100000))
        return ufo_error_set (err, UFO_E_RANGE, "\"round\" must be an integer 0..100000");
    req->round = ufo_value_type (v) == UFO_TINT ? ufo_value_int (v) : 0;
    if (strcmp (req->level, "round") == 0 && ufo_value_type (v) != UFO_TINT)
        return ufo_error_set (err, UFO_E_MISSING, "\"round\" is required at round level");
    v = ufo_value_map_get (body, "requests");
    if (v && ufo_value_type (v) != UFO_TNULL) {
        if (ufo_value_type (v) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_TYPE, "\"requests\" must be a list of strings");
        for (size_t i = 0; i < ufo_value_size (v); i++)
            if (ufo_value_type (ufo_value_list_at (v, i)) != UFO_TSTRING)
                return ufo_error_set (err, UFO_E_TYPE, "\"requests\" [%zu] must be a string", i);
        req->requests = v;
    }
    v = ufo_value_map_get (body, "all_screenshots");
    if (v && ufo_value_type (v) != UFO_TNULL && ufo_value_type (v) != UFO_TBOOL)
        return ufo_error_set (err, UFO_E_TYPE, "\"all_screenshots\" must be a boolean");
    req->all_screenshots = ufo_value_type (v) == UFO_TBOOL ? (ufo_value_bool (v) ? 1 : 0) : -1;
    v = ufo_value_map_get (body, "session");
    if (v && ufo_value_type (v) != UFO_TNULL && ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "\"session\" must be a string");
    return 0;
}

static void
s_unlink (eval_worker_t *self, s_running_t *r)
{
    for (s_running_t **p = &self->running; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            return;
        }
}

//  Tells the submitter what the evaluation is doing now: an "activity" progress body (what
//  "model", phase "start" | "retry" | "end"; extra's fields added, ownership taken).
static void
s_activity (eval_worker_t *self, const char *task, const char *phase, ufo_value_t *extra)
{
    ufo_value_t *body = extra ? extra : ufo_value_new_map ();
    ufo_value_map_set_str (body, "kind", "activity");
    ufo_value_map_set_str (body, "agent", "EvaluationAgent");
    ufo_value_map_set_str (body, "what", "model");
    ufo_value_map_set_str (body, "phase", phase);
    ufo_value_map_set_str (body, "detail", "judging");
    if (ufo_conn_progress (self->conn, task, &body) != 0)
        ufo_value_destroy (&body);
}

static void
s_on_retry (void *arg, int attempt, int64_t wait_ms, const char *why)
{
    s_running_t *r = arg;
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_int (extra, "attempt", attempt);
    ufo_value_map_set_int (extra, "wait_ms", wait_ms);
    ufo_value_map_set_str (extra, "reason", why);
    s_activity (r->owner, r->task, "retry", extra);
}

//  The verdict is on the board (or could not be put there: said in the result): the task
//  result goes.
static void
s_on_written (void *arg, ufo_conn_reply_t *reply)
{
    s_running_t *r = arg;
    eval_worker_t *self = r->owner;
    r->call_id = 0;
    ufo_value_t *result = r->result;
    r->result = NULL;
    if (!reply->ok) {
        ufo_warn ("eval: task %s: cannot store the verdict on board %s: %s", r->task, r->session,
                  reply->err.message);
        if (ufo_value_type (result) == UFO_TMAP)
            ufo_value_map_set_str (result, "board_error", reply->err.message);
    }
    if (ufo_conn_complete (self->conn, r->task, "done", &result) != 0)
        ufo_warn ("eval: task %s is no longer running here; its result is dropped", r->task);
    ufo_value_destroy (&result);
    s_unlink (self, r);
    free (r);
}

//  An evaluation finished: board (without waiting in the loop), then the task result.
static void
s_on_result (ufo_value_t **result_p, void *arg)
{
    s_running_t *r = arg;
    eval_worker_t *self = r->owner;
    r->eval_id = 0;
    ufo_value_t *result = *result_p;
    *result_p = NULL;
    ufo_value_t *extra = ufo_value_new_map ();
    const char *error = ufo_value_map_str (result, "error", "");
    ufo_value_map_set_bool (extra, "ok", !*error);
    if (*error)
        ufo_value_map_set_str (extra, "error", error);
    s_activity (self, r->task, "end", extra);
    if (*r->session) {
        ufo_value_t *item = ufo_eval_board_item (result);
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "board", r->session);
        ufo_value_map_set_str (body, "memory", "requests");
        ufo_value_t *items = ufo_value_new_list ();
        ufo_value_list_push (items, &item);
        ufo_value_map_set (body, "items", &items);
        r->result = result;
        r->call_id = ufo_conn_call (self->conn, "bb.add", &body, NULL, 0, 0, s_on_written, r);
        return;
    }
    if (ufo_conn_complete (self->conn, r->task, "done", &result) != 0)
        ufo_warn ("eval: task %s is no longer running here; its result is dropped", r->task);
    ufo_value_destroy (&result);
    s_unlink (self, r);
    free (r);
}

//  The inputs are ready (the board read, when one was needed, has ended): judge.
static void
s_start (s_running_t *r, const ufo_value_t *board)
{
    eval_worker_t *self = r->owner;
    ufo_eval_request_t req = r->req;
    req.board = board;
    req.on_retry = s_on_retry;
    req.retry_arg = r;
    s_activity (self, r->task, "start", NULL);
    //  s_on_result may run (and free r) inside this call when the inputs are unusable;
    //  the board is read inside the call and not kept.
    ufo_value_t *body = r->body;
    r->body = NULL;
    int64_t id = ufo_eval_start (self->eval, &req, s_on_result, r);
    ufo_value_destroy (&body);
    if (id > 0)
        r->eval_id = id;
}

//  The board that stands in for logs on another machine has been read.
static void
s_on_board (void *arg, ufo_conn_reply_t *reply)
{
    s_running_t *r = arg;
    r->call_id = 0;
    const ufo_value_t *board = NULL;
    ufo_value_t *snap = reply->ok ? *reply->body_p : NULL;
    if (!reply->ok)
        ufo_warn ("eval: task %s: no board snapshot of %s: %s", r->task, r->session, reply->err.message);
    else
    if (ufo_value_map_bool (snap, "exists", false) && ufo_value_type (ufo_value_map_get (snap, "board")) == UFO_TMAP)
        board = ufo_value_map_get (snap, "board");
    s_start (r, board);
}

static void
s_on_task (eval_worker_t *self, const ufo_value_t *event)
{
    const char *task = ufo_value_map_str (event, "task", NULL);
    if (!task || strlen (task) >= sizeof ((s_running_t *) 0)->task) {
        ufo_warn ("eval: a task event without a usable id was ignored");
        return;
    }
    s_running_t *r = ufo_calloc (1, sizeof *r);
    r->body = ufo_value_dup (ufo_value_map_get (event, "body"));
    ufo_error_t err;
    if (eval_worker_parse_body (r->body, self->log_root, &r->req, &err) != 0) {
        ufo_warn ("eval: task %s refused: %s", task, err.message);
        ufo_value_t *result = ufo_value_new_map ();
        ufo_value_map_set_str (result, "error", err.message);
        ufo_conn_complete (self->conn, task, "failed", &result);
        ufo_value_destroy (&result);
        ufo_value_destroy (&r->body);
        free (r);
        return;
    }
    snprintf (r->task, sizeof r->task, "%s", task);
    //  The board: the body's session, else the task spec's.
    const char *session = ufo_value_map_str (r->body, "session", "");
    snprintf (r->session, sizeof r->session, "%s",
              *session ? session : ufo_value_map_str (event, "session", ""));
    r->owner = self;
    r->next = self->running;
    self->running = r;
    ufo_info ("eval: task %s: %s evaluation of %s/%s (attempt %" PRId64 ")", task, r->req.level,
              r->req.log_root, r->req.task, ufo_value_map_int (event, "attempt", 1));
    //  Logs on another machine: the session's board stands in for them (trajectory items,
    //  requests, screenshot blobs), read without waiting in the loop.
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s/response.log", r->req.log_root, r->req.task);
    if (*r->session && access (path, R_OK) != 0) {
        r->call_id = ufo_conn_snapshot (self->conn, r->session, 0, true, S_BOARD_TIMEOUT, s_on_board, r);
        return;
    }
    s_start (r, NULL);
}

static void
s_on_cancel (eval_worker_t *self, const char *task)
{
    for (s_running_t *r = self->running; r; r = r->next)
        if (task && strcmp (r->task, task) == 0) {
            if (r->eval_id > 0)
                ufo_eval_cancel (self->eval, r->eval_id);
            if (r->call_id)             //  a board read or write in flight: its answer is dropped
                ufo_conn_call_forget (self->conn, r->call_id);
            ufo_value_t *result = ufo_value_new_map ();
            ufo_value_map_set_str (result, "error", "cancelled");
            ufo_conn_complete (self->conn, r->task, "cancelled", &result);
            ufo_value_destroy (&result);
            ufo_value_destroy (&r->body);
            ufo_value_destroy (&r->result);
            ufo_info ("eval: task %s cancelled", r->task);
            s_unlink (self, r);
            free (r);
            return;
        }
}

//  A connection event, from inside the loop.
static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    eval_worker_t *self = arg;
    const ufo_value_t *event = *event_p;
    const char *kind = ufo_value_map_str (event, "kind", "");
    if (strcmp (kind, "task") == 0)
        s_on_task (self, event);
    else
    if (strcmp (kind, "cancel") == 0)
        s_on_cancel (self, ufo_value_map_str (event, "task", NULL));
    else
    if (strcmp (kind, "connected") == 0 || strcmp (kind, "disconnected") == 0)
        ufo_info ("eval: %s", kind);
    //  "input" has no meaning for an evaluation: ignored.
}

void
eval_worker_serve (eval_worker_t *self, volatile sig_atomic_t *stop)
{
    //  A signal wakes the loop through the self-pipe; no fixed poll cap.
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (self->loop, ufo_agent_signal_fd ());
    while (!*stop && !ufo_loop_stopped (self->loop))
        if (ufo_loop_run_once (self->loop, -1) < 0)
            break;
}
