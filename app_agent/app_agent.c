/*  app_agent.c - the AppAgent state machine of one subtask (see app_agent.h). */
#include "ufo_prelude.h"
#include "ufo_rag.h"
#include "ufo_clock.h"
#include "ufo_cost.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "app_int.h"
#include "app_body.h"

void
app_agent_emit (app_agent_t *self, ufo_value_t **body_p)
{
    if (self->emit)
        self->emit (self->emit_arg, body_p);
    ufo_value_destroy (body_p);
}

//  Finds the window of the subtask: by xid, else by pid, else by title, else by the
//  application name. Returns the xid (*pid_p its process) or 0.
static int64_t
s_find_window (app_ctx_t *ctx, const ufo_value_t *window, const char *application, int64_t *pid_p)
{
    ufo_error_t err;
    ufo_value_t *wins = ufo_desktop_windows (ctx->desktop, &err);
    if (!wins)
        return 0;
    int64_t want_xid = ufo_value_map_int (window, "xid", 0);
    int64_t want_pid = ufo_value_map_int (window, "pid", 0);
    const char *want_title = ufo_value_map_str (window, "title", "");
    int64_t found [4] = { 0 };
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        int64_t xid = ufo_value_map_int (w, "xid", 0);
        if (want_xid && xid == want_xid && !found [0])
            found [0] = xid;
        if (want_pid && ufo_value_map_int (w, "pid", 0) == want_pid && !found [1])
            found [1] = xid;
        if (*want_title && strcmp (ufo_value_map_str (w, "title", ""), want_title) == 0 && !found [2])
            found [2] = xid;
        if (*application && ufo_desktop_same_app (ufo_value_map_str (w, "name", ""), application) && !found [3])
            found [3] = xid;
    }
    int64_t xid = 0;
    if (want_xid)
        xid = found [0];        //  a named window that is gone is not replaced by another
    for (int i = 1; i < 4 && !want_xid && !xid; i++)
        xid = found [i];
    for (size_t i = 0; i < ufo_value_size (wins) && xid; i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid)
            *pid_p = ufo_value_map_int (ufo_value_list_at (wins, i), "pid", 0);
    ufo_value_destroy (&wins);
    return xid;
}

static int
s_parse_body (app_agent_t *self, ufo_error_t *err)
{
    app_body_t body;
    if (app_body_parse (self->body, &body, err) < 0)
        return -1;
    self->session = body.session;
    self->task = body.task;
    self->subtask = body.subtask;
    self->request = body.request;
    self->application = body.application;
    self->round = body.round;
    self->subtask_index = body.subtask_index;
    self->step_base = body.step_base;
    self->round_step_base = body.round_step_base;
    self->max_steps = body.max_steps;
    self->tips = body.tips;
    self->previous_subtasks = body.previous_subtasks;
    const ufo_value_t *experience = ufo_value_map_get (self->body, "experience_examples");
    self->experience = ufo_value_type (experience) == UFO_TLIST ? experience : NULL;
    const ufo_value_t *online = ufo_value_map_get (self->body, "online_docs");
    self->online = ufo_value_type (online) == UFO_TLIST ? online : NULL;
    const ufo_value_t *demos = ufo_value_map_get (self->body, "demonstration_examples");
    self->demonstrations = ufo_value_type (demos) == UFO_TLIST ? demos : NULL;
    //  the subtask's embedding and web search start now and come in while the first step
    //  looks at the screen (ufo_rag.h); the prompt never waits for them
    ufo_rag_prefetch (self->ctx->rag, self->subtask);
    self->interactive = body.interactive;
    self->auto_confirm = body.auto_confirm;
    const char *log_root = body.log_root;
    const ufo_value_t *window = body.window;
    if (!*self->application && strcmp (self->ctx->app, "*") != 0)
        self->application = self->ctx->app;
    self->xid = s_find_window (self->ctx, window, self->application, &self->pid);
    self->window_xid = self->xid;
    if (!self->xid)
        return ufo_error_set (err, UFO_E_NOT_FOUND, "the window of '%s' (%s) is not on the desktop",
                              self->application, ufo_value_map_str (window, "title", "no title"));
    snprintf (self->agent_name, sizeof self->agent_name, "AppAgent/%s",
              *self->application ? self->application : "unknown");
    self->log = ufo_tasklog_open (*log_root ? log_root : "logs", self->task, err);
    if (!self->log)
        return -1;
    ufo_tasklog_add_secret (self->log, self->ctx->api_key);
    return 0;
}

//  A resumed subtask whose last recorded step already ended it: the results its steps
//  returned (texts / summary actions that succeeded), its last Comment and its cost, from
//  the session's response.log; when that log is not readable here (another machine), from
//  the trajectory items (memory), as far as HISTORY_KEYS put Action / Results / Comment there.
static void
s_resume_ended (app_agent_t *self, const ufo_value_t *last)
{
    ufo_value_t *lines = ufo_tasklog_read_lines (self->log, "response.log");
    size_t used = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        if (strcmp (ufo_value_map_str (l, "Agent", ""), "AppAgent") != 0
        ||  ufo_value_map_int (l, "Round", -1) != self->round
        ||  ufo_value_map_int (l, "SubtaskIndex", -1) != self->subtask_index)
            continue;
        used++;
        const char *function = ufo_value_map_str (l, "FunctionCall", "");
        const ufo_value_t *success = ufo_value_list_at (ufo_value_map_get (l, "ActionSuccess"), 0);
        if ((!strcmp (function, "texts") || !strcmp (function, "summary"))
        &&  ufo_value_map_bool (success, "success", false))
            ufo_value_list_push_str (self->results, ufo_value_map_str (l, "Results", ""));
        snprintf (self->last_comment, sizeof self->last_comment, "%s", ufo_value_map_str (l, "Comment", ""));
        const ufo_value_t *tokens = ufo_value_map_get (l, "Tokens");
        ufo_cost_add (&self->cost, ufo_value_map_float (l, "Cost", 0), ufo_value_map_int (tokens, "prompt", 0),
                      ufo_value_map_int (tokens, "completion", 0));
    }
    ufo_value_destroy (&lines);
    if (used)
        return;
    for (size_t i = 0; i < ufo_value_size (self->memory); i++) {
        const ufo_value_t *t = ufo_value_list_at (self->memory, i);
        const ufo_value_t *action = ufo_value_map_get (t, "Action");
        const char *function = ufo_value_map_str (action, "function", "");
        const char *results = ufo_value_map_str (t, "Results", NULL);
        if (results && *results && (!strcmp (function, "texts") || !strcmp (function, "summary")))
            ufo_value_list_push_str (self->results, results);
    }
    snprintf (self->last_comment, sizeof self->last_comment, "%s", ufo_value_map_str (last, "Comment", ""));
}

//  Resume: trajectories of this Round + SubtaskIndex already on the board. When the last
//  of them has Status FINISH or FAIL, the subtask had ended (its worker died before the
//  result was sent): *ended_p gets that state and no step is run again.
static void
s_resume (app_agent_t *self, const ufo_value_t *board, app_state_t *ended_p)
{
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    int64_t last = -1;
    const ufo_value_t *last_item = NULL;
    for (size_t i = 0; i < ufo_value_size (traj); i++) {
        const ufo_value_t *t = ufo_value_list_at (traj, i);
        if (ufo_value_map_int (t, "Round", -1) != self->round
        ||  ufo_value_map_int (t, "SubtaskIndex", -1) != self->subtask_index)
            continue;
        ufo_value_list_push (self->memory, &(ufo_value_t *) { ufo_value_dup (t) });
        int64_t step = ufo_value_map_int (t, "Step", -1);
        if (step > last || !last_item) {
            last = step > last ? step : last;
            last_item = t;
        }
        self->resumed++;
    }
    const char *status = ufo_value_map_str (last_item, "Status", "");
    if (!strcmp (status, "FINISH") || !strcmp (status, "FAIL")) {
        *ended_p = !strcmp (status, "FINISH") ? APP_FINISH : APP_FAIL;
        s_resume_ended (self, last_item);
        ufo_info ("%s: subtask %" PRId64 "/%" PRId64 " had already ended %s (step %" PRId64 " on the "
                  "blackboard): completing it without asking the model again", self->agent_name, self->round,
                  self->subtask_index, status, last);
    }
    if (last >= self->step_base)
        self->agent_step = last - self->step_base + 1;
    else
        self->agent_step = self->resumed;
    if (self->resumed)
        ufo_info ("%s: resuming subtask %" PRId64 "/%" PRId64 " after %" PRId64
                  " recorded steps (next step %" PRId64 ")", self->agent_name, self->round,
                  self->subtask_index, self->resumed, self->step_base + self->agent_step);
}

static void s_end (app_agent_t *self, app_state_t state, const char *error, const char *comment);

//  The board read of a resume ended (from the loop): the steps already recorded, or, when it
//  failed, a start from the first step.
static void
s_on_resume_read (void *arg, const ufo_value_t *board, const ufo_error_t *err)
{
    app_agent_t *self = arg;
    self->resume_read = 0;
    self->resuming = false;
    if (!board) {
        ufo_warn ("%s: cannot read the blackboard to resume: %s", self->agent_name, err->message);
        return;
    }
    app_state_t ended = APP_CONTINUE;
    s_resume (self, board, &ended);
    if (ended != APP_CONTINUE)
        s_end (self, ended, NULL, NULL);     //  app_agent_advance returns true at once
}

app_agent_t *
app_agent_new (app_ctx_t *ctx, const char *task_id, const ufo_value_t *body, int attempt,
               app_emit_fn *emit, void *emit_arg, ufo_error_t *err)
{
    app_agent_t *self = ufo_malloc (sizeof *self);
    memset (self, 0, sizeof *self);
    self->ctx = ctx;
    self->task_id = ufo_strdup (task_id ? task_id : "local");
    self->body = body ? ufo_value_dup (body) : ufo_value_new_null ();
    self->emit = emit;
    self->emit_arg = emit_arg;
    self->memory = ufo_value_new_list ();
    self->results = ufo_value_new_list ();
    self->plan = ufo_value_new_list ();
    self->user_answers = ufo_value_new_list ();
    self->writer = app_writer_new ();
    if (s_parse_body (self, err) < 0) {
        app_agent_destroy (&self);
        return NULL;
    }
    //  A fresh view of the desktop for every subtask: X window ids are reused by later
    //  clients, and the desktop layer's cache is keyed by them.
    ufo_desktop_cache_clear (ctx->desktop);
    self->state = APP_CONTINUE;
    ufo_info ("%s: subtask %" PRId64 "/%" PRId64 " '%s' (task %s, attempt %d)", self->agent_name,
              self->round, self->subtask_index, self->subtask, self->task_id, attempt);
    //  a later attempt first reads what the earlier ones recorded (without waiting here)
    if (attempt > 1) {
        self->resuming = true;
        self->resume_read = app_board_snapshot_start (ctx->board, self->session, s_on_resume_read, self);
    }
    return self;
}

void
app_agent_destroy (app_agent_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_agent_t *self = *self_p;
    app_board_forget (self->ctx->board, self->resume_read);
    app_step_destroy (&self->step);
    app_writer_destroy (&self->writer);     //  writes what is queued
    ufo_tasklog_destroy (&self->log);
    ufo_value_destroy (&self->body);
    ufo_value_destroy (&self->memory);
    ufo_value_destroy (&self->results);
    ufo_value_destroy (&self->plan);
    ufo_value_destroy (&self->user_answers);
    ufo_value_destroy (&self->annotate_labels);
    ufo_value_destroy (&self->asked);
    ufo_value_destroy (&self->result);
    ufo_value_destroy (&self->action_queue);
    free (self->last_result);
    free (self->last_shot_url);
    free (self->task_id);
    free (self->error);
    free (self);
    *self_p = NULL;
}

//  --- the end ------------------------------------------------------------------------

static void
s_end (app_agent_t *self, app_state_t state, const char *error, const char *comment)
{
    if (self->ended)
        return;
    self->ended = true;
    self->state = state;
    static const char *const names [] = {
        "CONTINUE", "SCREENSHOT", "PENDING", "CONFIRM", "FINISH", "FAIL", "ERROR" };
    app_step_destroy (&self->step);
    //  every file of the subtask is on disk before its result goes out
    app_writer_flush (self->writer);
    //  the window as the subtask ends: the one of the last step (a dialog), else the main one
    char final [128] = "";
    ufo_error_t err;
    ufo_image_t *img = ufo_desktop_capture_window (self->ctx->desktop, self->window_xid, &err);
    if (!img && self->window_xid != self->xid)
        img = ufo_desktop_capture_window (self->ctx->desktop, self->xid, &err);
    if (img) {
        snprintf (final, sizeof final, "action_round_%" PRId64 "_sub_round_%" PRId64 "_final.png",
                  self->round, self->subtask_index);
        char path [1024];
        ufo_tasklog_path (self->log, final, path, sizeof path);
        if (ufo_image_save_png (img, path, self->ctx->png_level, &err) < 0) {
            ufo_warn ("%s: %s", self->agent_name, err.message);
            final [0] = '\0';
        }
        ufo_image_destroy (&img);
    }
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "status", names [state]);
    ufo_value_map_set_int (r, "steps", self->agent_step);
    ufo_value_map_set_copy (r, "results", self->results);
    ufo_value_map_set_str (r, "comment", comment ? comment : self->last_comment);
    ufo_value_map_set_str (r, "error", error ? error : "");
    ufo_value_t *cost = ufo_value_new_map ();
    ufo_value_map_set_float (cost, "total", self->cost.session);
    ufo_value_map_set_int (cost, "prompt_tokens", self->cost.session_prompt_tokens);
    ufo_value_map_set_int (cost, "completion_tokens", self->cost.session_completion_tokens);
    ufo_value_map_set (r, "cost", &cost);
    ufo_value_map_set_str (r, "final_screenshot", final);
    ufo_value_map_set_int (r, "resumed_steps", self->resumed);
    self->result = r;
    ufo_info ("%s: subtask %" PRId64 "/%" PRId64 " ended %s after %" PRId64 " steps%s%s",
              self->agent_name, self->round, self->subtask_index, names [state], self->agent_step,
              error ? ": " : "", error ? error : "");
}

void
app_agent_abort (app_agent_t *self, const char *reason)
{
    s_end (self, APP_ERROR, reason ? reason : "aborted", NULL);
}

ufo_value_t *
app_agent_take_result (app_agent_t *self)
{
    ufo_value_t *r = self->result;
    self->result = NULL;
    return r;
}

const char *
app_agent_waiting_qid (const app_agent_t *self)
{
    return self->waiting ? self->qid : NULL;
}

//  --- questions and confirmations -----------------------------------------------------

static ufo_value_t *
s_control_info (const ufo_value_t *control)
{
    ufo_value_t *c = ufo_value_new_map ();
    ufo_value_map_set_str (c, "label", ufo_value_map_str (control, "label", ""));
    ufo_value_map_set_str (c, "type", ufo_value_map_str (control, "control_type", ""));
    ufo_value_map_set_str (c, "name", ufo_value_map_str (control, "control_text", ""));
    return c;
}

//  Runs (or, refused, drops) the held action.
static void
s_confirmed (app_agent_t *self, const char *answer)
{
    if (!strcmp (answer, "no")) {
        const ufo_value_t *d = app_step_decision (self->step);
        snprintf (self->last_comment, sizeof self->last_comment,
                  "The user did not confirm the action %s on '%s'; it was not run.",
                  ufo_value_map_str (d, "Function", ""), ufo_value_map_str (d, "ControlText", ""));
    }
    app_step_act (self->step, answer);
}

static ufo_value_t *s_confirm_event (app_agent_t *self, const ufo_value_t *d, const char *function,
                                     const ufo_value_t *control, const char *why);

//  The step decided: ask for a confirmation when needed, else act.
static void
s_decided (app_agent_t *self)
{
    app_ctx_t *ctx = self->ctx;
    const ufo_value_t *d = app_step_decision (self->step);
    const char *status = app_step_status (self->step);
    const char *function = ufo_value_map_str (d, "Function", "");
    const ufo_value_t *control = app_step_control (self->step);
    snprintf (self->last_comment, sizeof self->last_comment, "%s", ufo_value_map_str (d, "Comment", ""));
    char why [512] = "";
    bool policy = app_ctx_policy_requires (ctx, function,
                                           control ? ufo_value_map_str (control, "control_text", "") : NULL,
                                           why, sizeof why);
    bool model = strcmp (status, "CONFIRM") == 0 && ctx->safe_guard && *function;
    if (!policy && !model) {
        app_step_act (self->step, "");
        return;
    }
    if (!policy)
        snprintf (why, sizeof why, "%s", ufo_value_map_str (d, "Comment", "the model asks for confirmation"));
    const char *answer = NULL;
    if (!strcmp (ctx->confirm_policy, "yes"))
        answer = "yes";
    else
    if (!strcmp (ctx->confirm_policy, "no"))
        answer = "no";
    else
    if (!self->interactive)
        answer = self->auto_confirm ? "yes" : "no";
    snprintf (self->qid, sizeof self->qid, "%s-c%" PRId64, self->task_id, app_step_number (self->step));
    if (answer) {
        ufo_info ("%s: confirmation of %s answered '%s' without asking (%s)", self->agent_name,
                  function, answer, why);
        if (!self->interactive) {
            //  no user to ask: the client is told what was decided (nothing to answer)
            ufo_value_t *ev = s_confirm_event (self, d, function, control, why);
            ufo_value_map_set_str (ev, "answered", answer);
            ufo_value_map_set_str (ev, "by", strcmp (ctx->confirm_policy, "ask") ? "confirm_policy"
                                             : self->auto_confirm ? "auto_confirm" : "no user");
            app_agent_emit (self, &ev);
        }
        s_confirmed (self, answer);
        return;
    }
    self->waiting = APP_CONFIRM;
    self->state = APP_CONFIRM;
    ufo_value_t *ev = s_confirm_event (self, d, function, control, why);
    app_agent_emit (self, &ev);
}

//  A "confirm" progress body for the held action.
static ufo_value_t *
s_confirm_event (app_agent_t *self, const ufo_value_t *d, const char *function,
                 const ufo_value_t *control, const char *why)
{
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "confirm");
    ufo_value_map_set_str (ev, "qid", self->qid);
    ufo_value_map_set_str (ev, "from", self->agent_name);
    ufo_value_map_set_str (ev, "function", function);
    ufo_value_map_set_copy (ev, "args", ufo_value_map_get (d, "Args"));
    ufo_value_map_set (ev, "control", &(ufo_value_t *) { s_control_info (control) });
    ufo_value_map_set_str (ev, "reason", why);
    return ev;
}

//  The step acted: ask its questions (PENDING) or record it.
static void
s_acted (app_agent_t *self)
{
    const ufo_value_t *d = app_step_decision (self->step);
    const ufo_value_t *questions = d ? ufo_value_map_get (d, "Questions") : NULL;
    if (strcmp (app_step_status (self->step), "PENDING") != 0 || ufo_value_size (questions) == 0) {
        app_step_finish (self->step, NULL);
        return;
    }
    if (!self->interactive || !self->ctx->ask_question) {
        ufo_value_t *answers = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (questions); i++)
            ufo_value_list_push_str (answers, APP_PLACEHOLDER);
        ufo_value_destroy (&self->user_answers);
        self->user_answers = ufo_value_dup (answers);
        app_step_finish (self->step, answers);
        ufo_value_destroy (&answers);
        return;
    }
    snprintf (self->qid, sizeof self->qid, "%s-q%" PRId64, self->task_id, app_step_number (self->step));
    self->waiting = APP_PENDING;
    self->state = APP_PENDING;
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "question");
    ufo_value_map_set_str (ev, "qid", self->qid);
    ufo_value_map_set_str (ev, "from", self->agent_name);
    ufo_value_map_set_copy (ev, "questions", questions);
    app_agent_emit (self, &ev);
}

int
app_agent_input (app_agent_t *self, const ufo_value_t *body)
{
    if (!self->waiting || ufo_value_type (body) != UFO_TMAP)
        return -1;
    const char *qid = ufo_value_map_str (body, "qid", "");
    if (strcmp (qid, self->qid) != 0)
        return -1;
    if (self->waiting == APP_CONFIRM) {
        const ufo_value_t *c = ufo_value_map_get (body, "confirm");
        if (ufo_value_type (c) != UFO_TBOOL)
            return -1;
        self->waiting = 0;
        self->state = APP_CONTINUE;
        s_confirmed (self, ufo_value_bool (c) ? "yes" : "no");
        return 0;
    }
    const ufo_value_t *answers = ufo_value_map_get (body, "answers");
    if (ufo_value_type (answers) != UFO_TLIST)
        return -1;
    ufo_value_t *clean = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (answers); i++) {
        const ufo_value_t *a = ufo_value_list_at (answers, i);
        ufo_value_list_push_str (clean, ufo_value_type (a) == UFO_TSTRING ? ufo_value_str (a) : "");
    }
    self->waiting = 0;
    self->state = APP_CONTINUE;
    ufo_value_destroy (&self->user_answers);
    self->user_answers = ufo_value_dup (clean);
    app_step_finish (self->step, clean);
    ufo_value_destroy (&clean);
    return 0;
}

//  --- the loop ---------------------------------------------------------------------------

static app_state_t
s_state_of (const char *status)
{
    if (!strcmp (status, "FINISH"))
        return APP_FINISH;
    if (!strcmp (status, "FAIL"))
        return APP_FAIL;
    if (!strcmp (status, "SCREENSHOT"))
        return APP_SCREENSHOT;
    if (!strcmp (status, "CONTINUE") || !strcmp (status, "PENDING") || !strcmp (status, "CONFIRM"))
        return APP_CONTINUE;
    return APP_ERROR;
}

bool
app_agent_advance (app_agent_t *self)
{
    if (self->resuming && !self->ended)
        return false;           //  waiting for the resume's board read
    for (int guard = 0; guard < 16 && !self->ended; guard++) {
        if (!self->step) {
            if (self->agent_step >= self->max_steps) {
                char text [160];
                snprintf (text, sizeof text, "the step limit was reached (max_steps %" PRId64 ")",
                          self->max_steps);
                s_end (self, APP_FAIL, NULL, text);
                break;
            }
            if (ufo_time_mono_ms () < self->next_step_at)
                break;
            self->step = app_step_new (self);
        }
        app_step_phase_t before = app_step_phase (self->step);
        app_step_phase_t phase = app_step_advance (self->step);
        if (phase == APP_STEP_CLOSED) {
            s_end (self, APP_FINISH, NULL, "the application window was closed");
            break;
        }
        if (phase == APP_STEP_DECIDED && !self->waiting)
            s_decided (self);
        else
        if (phase == APP_STEP_ACTED && !self->waiting)
            s_acted (self);
        phase = app_step_phase (self->step);
        if (phase == APP_STEP_DONE) {
            const char *error = app_step_error (self->step);
            app_state_t next = error ? APP_ERROR : s_state_of (app_step_status (self->step));
            char text [1100];
            snprintf (text, sizeof text, "%s", error ? error : "the model's Status is not valid");
            bool acted = *ufo_value_map_str (app_step_decision (self->step), "Function", "");
            app_step_destroy (&self->step);
            self->agent_step++;
            self->steps_run++;
            if (next == APP_ERROR) {
                s_end (self, APP_ERROR, text, NULL);
                break;
            }
            if (next == APP_FINISH || next == APP_FAIL) {
                //  test hook (system tests of the resume): die after the ending step is
                //  recorded (its board writes answered) and before the result is sent
                const char *hook = getenv ("UFO_APP_TEST_EXIT_AFTER_FINISH");
                if (hook && !strcmp (hook, "1")) {
                    app_board_flush (self->ctx->board, 5000);
                    _exit (9);
                }
                s_end (self, next, NULL, NULL);
                break;
            }
            self->state = next;
            self->next_step_at = acted ? ufo_time_mono_ms () + (int64_t) (self->ctx->sleep_time * 1000) : 0;
            continue;
        }
        if (phase == before)
            break;          //  waiting for something outside
    }
    return self->ended;
}

int
app_agent_timeout (const app_agent_t *self)
{
    if (self->ended)
        return 0;
    if (self->resuming)
        return -1;              //  the read's reply (or its deadline) ends the loop's turn
    if (!self->step && self->next_step_at) {
        int64_t left = self->next_step_at - ufo_time_mono_ms ();
        return left <= 0 ? 0 : left > 50 ? 50 : (int) left;
    }
    return self->step && app_step_phase (self->step) == APP_STEP_LLM ? 50 : 10;
}
