/*  host_session.c - a session: rounds, the HostAgent state machine, subtasks handed to
    the AppAgents, questions, evaluations, and the session-end files.

    Round loop (the original's): the HostAgent starts each round in CONTINUE;
      CONTINUE  one HostAgent step (host_step.c)          -> the state its Status names
      ASSIGN    the subtask runs on app:<application>     -> CONTINUE (FINISH), FAIL, ERROR
      PENDING   the Questions go to the user              -> CONTINUE
      FINISH, FAIL, ERROR                                  -> the round ends
    MAX_STEP bounds the steps of the whole session (HostAgent and AppAgent steps); a round
    cut by it ends in FAIL. An ERROR round ends the session.

    The machine is step-driven (host_session.h): each phase (host_int.h) does its local work
    and either goes on to the next phase or starts one operation through host_ops_t and
    waits, without blocking, for host_session_done; host_session_advance runs phases until
    one waits or the session has ended. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "host_int.h"

static void
s_emit_cost (host_t *self)
{
    ufo_value_t *event = ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "cost");
    ufo_value_map_set_float (event, "step", self->cost.step);
    ufo_value_map_set_float (event, "round", self->cost.round);
    ufo_value_map_set_float (event, "session", self->cost.session);
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", self->cost.session_prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", self->cost.session_completion_tokens);
    ufo_value_map_set (event, "tokens", &tokens);
    self->ops->progress (self->ops->arg, &event);
}

//  Cost seen from the running task (its "cost" progress events are cumulative per task).
static void
s_task_cost_update (host_t *self, double dollars, int64_t prompt, int64_t completion)
{
    if (dollars < self->tc_dollars)
        dollars = self->tc_dollars;
    if (prompt < self->tc_prompt)
        prompt = self->tc_prompt;
    if (completion < self->tc_completion)
        completion = self->tc_completion;
    if (dollars == self->tc_dollars && prompt == self->tc_prompt && completion == self->tc_completion)
        return;
    ufo_cost_add (&self->cost, dollars - self->tc_dollars, prompt - self->tc_prompt,
                  completion - self->tc_completion);
    self->tc_dollars = dollars;
    self->tc_prompt = prompt;
    self->tc_completion = completion;
    s_emit_cost (self);
}

static void
s_on_progress (const ufo_value_t *event, void *arg)
{
    host_t *self = (host_t *) arg;
    if (strcmp (ufo_value_map_str (event, "kind", ""), "cost") != 0)
        return;
    const ufo_value_t *tokens = ufo_value_map_get (event, "tokens");
    s_task_cost_update (self, ufo_value_map_float (event, "session", 0),
                        ufo_value_map_int (tokens, "prompt", 0), ufo_value_map_int (tokens, "completion", 0));
}

//  A task result's "cost" ({"total" | "session", "prompt_tokens", "completion_tokens"}).
static void
s_task_cost_final (host_t *self, const ufo_value_t *result)
{
    const ufo_value_t *cost = ufo_value_map_get (result, "cost");
    double dollars = ufo_value_map_float (cost, "total", ufo_value_map_float (cost, "session", 0));
    s_task_cost_update (self, dollars, ufo_value_map_int (cost, "prompt_tokens", 0),
                        ufo_value_map_int (cost, "completion_tokens", 0));
}

//  Starts a task (the body in self->body) on self->service; its reply goes to phase then.
static void
s_start_task (host_t *self, host_phase_t then)
{
    self->tc_dollars = 0;
    self->tc_prompt = self->tc_completion = 0;
    host_start (self, then);
    self->ops->run_task (self->ops->arg, self->service, &self->body, s_on_progress, self);
}

ufo_value_t *
host_str_list (const ufo_value_t *list)
{
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (list); i++)
        if (ufo_value_str (ufo_value_list_at (list, i)))
            ufo_value_list_push_str (out, ufo_value_str (ufo_value_list_at (list, i)));
    return out;
}

//  ASSIGN: the subtask goes to app:<application> on this device. HP_ASSIGN builds its body
//  and asks for demonstrations, HP_ASSIGN_DEMO adds them and asks whether a worker serves
//  the application, HP_ASSIGN_WORKER submits it, HP_ASSIGN_DONE takes its result.
static void
s_assign (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    self->subtask_index++;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "session", cfg->session);
    ufo_value_map_set_str (body, "task", cfg->task);
    ufo_value_map_set_str (body, "log_root", cfg->log_root);
    ufo_value_map_set_int (body, "round", self->round);
    ufo_value_map_set_int (body, "subtask_index", self->subtask_index);
    ufo_value_map_set_str (body, "subtask", self->subtask);
    ufo_value_map_set_str (body, "request", self->request);
    ufo_value_map_set (body, "tips", &(ufo_value_t *) { host_str_list (self->messages) });
    if (self->experience)
        ufo_value_map_set_copy (body, "experience_examples", self->experience);
    if (self->online)
        ufo_value_map_set_copy (body, "online_docs", self->online);
    ufo_value_destroy (&self->body);
    self->body = body;
    snprintf (self->service, sizeof self->service, "app:%s", self->application);
    if (host_demonstration_start_find (self))
        return;
    self->phase = HP_ASSIGN_DEMO;
}

static void
s_assign_demo (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    if (cfg->rag_demonstration && self->ops->demonstration_find && self->subtask) {
        ufo_value_t *demonstrations = host_found_take (self, "demonstrations not retrieved");
        ufo_value_map_set (self->body, "demonstration_examples", &demonstrations);
    }
    ufo_value_t *body = self->body;
    ufo_value_map_set_copy (body, "previous_subtasks", self->previous);
    ufo_value_map_set_str (body, "application", self->application);
    ufo_value_map_set_copy (body, "window", self->window);
    ufo_value_map_set_int (body, "step_base", self->step);
    ufo_value_map_set_int (body, "max_steps", cfg->max_step - self->step);
    ufo_value_map_set_bool (body, "interactive", cfg->interactive);
    ufo_value_map_set_bool (body, "auto_confirm", cfg->auto_confirm);
    if (!self->ops->has_worker) {
        self->phase = HP_ASSIGN_WORKER;
        host_reply (self)->number = 1;
        return;
    }
    host_start (self, HP_ASSIGN_WORKER);
    self->ops->has_worker (self->ops->arg, self->service);
}

static void
s_assign_worker (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    host_reply_t *reply = host_reply (self);
    if (self->ops->cancelled (self->ops->arg)) {
        ufo_value_destroy (&self->body);        //  not submitted; HP_STATE ends the round
        self->subtask_index--;
        self->state = HOST_CONTINUE;
        self->phase = HP_STATE;
        return;
    }
    if (reply->number == 0) {
        //  nobody would take the subtask: tell the model instead of waiting for the deadline
        ufo_info ("host: session %s: no worker for %s: %s", cfg->session, self->service, reply->err.message);
        ufo_value_destroy (&self->body);
        self->subtask_index--;
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("no AppAgent serves %s; pick another application or launch it with Bash "
                                   "(the subtask \"%s\" was not started)", self->application, self->subtask) });
        self->state = HOST_CONTINUE;
        self->phase = HP_STATE;
        return;
    }
    self->last_xid = ufo_value_map_int (self->window, "xid", 0);
    s_start_task (self, HP_ASSIGN_DONE);
}

static void
s_assign_done (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    host_reply_t *reply = host_reply (self);
    ufo_value_t *result = reply->value;
    reply->value = NULL;
    ufo_error_t err = reply->err;
    const char *service = self->service;
    self->phase = HP_STATE;
    if (!result && !self->ops->cancelled (self->ops->arg)) {
        //  the subtask could not run (refused, no worker in time, lost): the model decides
        ufo_info ("host: session %s: subtask on %s did not run: %s", cfg->session, service, err.message);
        self->subtask_index--;
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("The subtask \"%s\" could not run on %s (%s); pick another application, "
                                   "launch it with Bash, or end the round.", self->subtask, self->application,
                                   err.message) });
        self->state = HOST_CONTINUE;
        return;
    }
    //  a copy: result is destroyed before the status is used
    char status [8] = "ERROR";
    char reason [800] = "";
    if (!result)
        snprintf (reason, sizeof reason, "subtask on %s: %s", service, err.message);
    else {
        s_task_cost_final (self, result);
        const char *st = ufo_value_map_str (result, "status", "ERROR");
        if (!strcmp (st, "FINISH") || !strcmp (st, "FAIL"))
            snprintf (status, sizeof status, "%s", st);
        int64_t steps = ufo_value_map_int (result, "steps", 0);
        if (steps < 0 || steps > cfg->max_step)
            steps = 0;
        self->step += steps;
        self->round_step += steps;
        if (strcmp (status, "ERROR") == 0)
            snprintf (reason, sizeof reason, "AppAgent (%s): %s", self->application,
                      ufo_value_map_str (result, "error", "error"));
    }
    ufo_value_t *prev = ufo_value_new_map ();
    ufo_value_map_set_str (prev, "subtask", self->subtask);
    ufo_value_map_set_str (prev, "status", status);
    ufo_value_list_push (self->previous, &prev);

    //  the outcome goes into the HostAgent's memory and its next prompt
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "Round", self->round);
    ufo_value_map_set_str (item, "Subtask", self->subtask);
    ufo_value_map_set_str (item, "Application", self->application);
    ufo_value_map_set_str (item, "SubtaskStatus", status);
    if (result) {
        ufo_value_map_set (item, "Results", &(ufo_value_t *) { host_str_list (ufo_value_map_get (result, "results")) });
        ufo_value_map_set_str (item, "Comment", ufo_value_map_str (result, "comment", ""));
    }
    if (*reason)
        ufo_value_map_set_str (item, "error", reason);
    ufo_value_list_push (self->memory, &item);
    ufo_value_list_push (self->tips, &(ufo_value_t *) {
        ufo_value_new_stringf ("The AppAgent of %s ended the subtask \"%s\" with %s%s%s.", self->application,
                               self->subtask, status, result ? ": " : "",
                               result ? ufo_value_map_str (result, "comment", "") : "") });
    ufo_value_destroy (&result);

    if (strcmp (status, "FINISH") == 0) {
        self->state = HOST_CONTINUE;
        if (cfg->plan && self->round == 0 && ufo_value_size (cfg->plan) > 0) {
            self->follow_index++;
            if (self->follow_index >= (int64_t) ufo_value_size (cfg->plan))
                self->state = HOST_FINISH;      //  follower: the whole plan is done
        }
        return;
    }
    if (strcmp (status, "FAIL") == 0) {
        self->state = HOST_FAIL;
        return;
    }
    snprintf (self->error, sizeof self->error, "%s", reason);
    self->state = HOST_ERROR;
}

//  A re-delivered session's evaluation that an earlier attempt already made: the item
//  ufo-eval put into the board's requests ({"evaluation_session": {...}} or
//  {"evaluation_round_<r>": {...}}), copied (caller owns); NULL if there is none.
static ufo_value_t *
s_evaluation_on_board (host_t *self, const ufo_value_t *board, const char *level)
{
    char key [64];
    if (strcmp (level, "round") == 0)
        snprintf (key, sizeof key, "evaluation_round_%" PRId64, self->round);
    else
        snprintf (key, sizeof key, "evaluation_session");
    const ufo_value_t *requests = ufo_value_map_get (board, "requests");
    ufo_value_t *found = NULL;
    for (size_t i = 0; i < ufo_value_size (requests) && !found; i++) {
        const ufo_value_t *inner = ufo_value_map_get (ufo_value_list_at (requests, i), key);
        if (ufo_value_type (inner) == UFO_TMAP)
            found = ufo_value_dup (inner);
    }
    return found;
}

//  Asks the EvaluationAgent at level (self->eval_level), then goes to self->eval_then; a
//  session-level result becomes self->evaluation. Idempotent per session + level + round: a
//  re-delivered session reuses the evaluation an earlier attempt left on the board
//  (HP_EVAL_BOARD), and the submission carries the idempotency key
//  "eval:<session>:<level>:<round>" (host_bus.c), so an evaluation that attempt submitted
//  and that is still running (or ended) is followed instead of being run again.
static void
s_evaluate (host_t *self, const char *level, host_phase_t then)
{
    self->eval_level = level;
    self->eval_then = then;
    if (self->cfg->resume) {
        host_start (self, HP_EVAL_BOARD);
        self->ops->board_get (self->ops->arg);
    }
    else
        self->phase = HP_EVAL;
}

//  The evaluation's result (ownership taken): a progress event, and where it goes.
static void
s_evaluated (host_t *self, ufo_value_t *result)
{
    ufo_value_t *event = ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "evaluation");
    ufo_value_map_set_str (event, "level", self->eval_level);
    ufo_value_map_set_int (event, "round", self->round);
    ufo_value_map_set_copy (event, "result", result);
    self->ops->progress (self->ops->arg, &event);
    if (strcmp (self->eval_level, "session") == 0) {
        ufo_value_destroy (&self->evaluation);
        self->evaluation = result;
    }
    else
        ufo_value_destroy (&result);
    self->phase = self->eval_then;
}

static void
s_eval_board (host_t *self)
{
    ufo_value_t *result = s_evaluation_on_board (self, host_reply (self)->value, self->eval_level);
    if (!result) {
        self->phase = HP_EVAL;
        return;
    }
    ufo_info ("host: session %s: the %s evaluation is already on the blackboard; not asked again",
              self->cfg->session, self->eval_level);
    s_evaluated (self, result);
}

static void
s_eval_run (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    const char *level = self->eval_level;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "session", cfg->session);
    ufo_value_map_set_str (body, "task", cfg->task);
    ufo_value_map_set_str (body, "log_root", cfg->log_root);
    ufo_value_map_set_str (body, "level", level);
    bool round = strcmp (level, "round") == 0;
    if (round)
        ufo_value_map_set_int (body, "round", self->round);
    ufo_value_t *requests = ufo_value_new_list ();
    for (int64_t r = round ? self->round : 0; r <= self->round; r++)
        ufo_value_list_push_str (requests, ufo_value_str (ufo_value_list_at (cfg->requests, (size_t) r)));
    ufo_value_map_set (body, "requests", &requests);
    ufo_value_map_set_bool (body, "all_screenshots", cfg->eva_all_screenshots);
    ufo_value_destroy (&self->body);
    self->body = body;
    snprintf (self->service, sizeof self->service, "eval");
    s_start_task (self, HP_EVAL_DONE);
}

static void
s_eval_done (host_t *self)
{
    host_reply_t *reply = host_reply (self);
    ufo_value_t *result = reply->value;
    reply->value = NULL;
    if (!result) {
        ufo_warn ("host: %s evaluation failed: %s", self->eval_level, reply->err.message);
        self->phase = self->eval_then;
        return;
    }
    s_task_cost_final (self, result);
    s_evaluated (self, result);
}

//  Round end: request_<r> (and its status) on the board, the final snapshot, the round's
//  evaluation (EVA_ROUND).
static void
s_round_end (host_t *self)
{
    char key [48];
    snprintf (key, sizeof key, "request_%" PRId64, self->round);
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, key, self->request);
    ufo_value_map_set_str (item, "status", host_state_name (self->state));     //  restored on resume
    host_start (self, HP_ROUND_SNAP);
    self->ops->board_add (self->ops->arg, "requests", &item);
}

static void
s_round_snapshot (host_t *self, int64_t xid, host_phase_t then)
{
    char name [64], path [4096];
    snprintf (name, sizeof name, "action_round_%" PRId64 "_final.png", self->round);
    ufo_tasklog_path (self->log, name, path, sizeof path);
    host_start (self, then);
    self->ops->snapshot (self->ops->arg, xid, path);
}

static void
s_round_snap (host_t *self)
{
    host_reply_t *reply = host_reply (self);
    if (reply->number != 0)
        ufo_warn ("host: request_%" PRId64 " not on the blackboard: %s", self->round, reply->err.message);
    s_round_snapshot (self, self->last_xid, HP_ROUND_SNAP_AGAIN);
}

static void
s_round_snap_again (host_t *self)
{
    //  the subtask's window may be gone: the screen instead
    if (host_reply (self)->number != 0 && self->last_xid != 0)
        s_round_snapshot (self, 0, HP_ROUND_SNAP_DONE);
    else
        self->phase = HP_ROUND_SNAP_DONE;
}

static void
s_round_snap_done (host_t *self)
{
    host_reply_t *reply = host_reply (self);
    if (reply->number != 0)
        ufo_warn ("host: action_round_%" PRId64 "_final.png: %s", self->round, reply->err.message);
    ufo_info ("host: session %s round %" PRId64 " ended in %s after %" PRId64 " steps", self->cfg->session,
              self->round, host_state_name (self->state), self->round_step);
    if (self->cfg->eva_round && !self->ops->cancelled (self->ops->arg))
        s_evaluate (self, "round", HP_ROUND_NEXT);
    else
        self->phase = HP_ROUND_NEXT;
}

static void
s_host_free (host_t *self)
{
    ufo_value_destroy (&self->memory);
    ufo_value_destroy (&self->previous);
    ufo_value_destroy (&self->plan);
    ufo_value_destroy (&self->tips);
    ufo_value_destroy (&self->windows);
    ufo_value_destroy (&self->decision);
    ufo_value_destroy (&self->window);
    ufo_value_destroy (&self->messages);
    ufo_value_destroy (&self->evaluation);
    ufo_value_destroy (&self->experience);
    ufo_value_destroy (&self->online);
    free (self->subtask);
    free (self->application);
    ufo_value_destroy (&self->body);
    ufo_value_destroy (&self->board);
    ufo_value_destroy (&self->result);
    host_step_clear (self);
    ufo_tasklog_destroy (&self->log);
}

static ufo_value_t *
s_result (host_t *self, const char *status, int64_t rounds)
{
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "status", status);
    ufo_value_map_set_int (result, "rounds", rounds);
    ufo_value_map_set_int (result, "steps", self->step);
    ufo_value_map_set_str (result, "error", self->error);
    ufo_value_t *cost = ufo_value_map_set (result, "cost", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_float (cost, "total", self->cost.session);
    ufo_value_map_set_int (cost, "prompt_tokens", self->cost.session_prompt_tokens);
    ufo_value_map_set_int (cost, "completion_tokens", self->cost.session_completion_tokens);
    if (self->evaluation)
        ufo_value_map_set_copy (result, "evaluation", self->evaluation);
    else
        ufo_value_map_set_null (result, "evaluation");
    ufo_value_map_set_str (result, "logdir", self->log ? ufo_tasklog_dir (self->log) : "");
    return result;
}

//  A re-delivered session: the first round whose request_<r> is not on the board yet, with
//  the steps and cost already logged counted again (the earlier attempt's response.log) and
//  the outcome of the rounds already ended (their "status" on the board) into *fail_p / *error_p.
static size_t
s_resume_point (host_t *self, const ufo_value_t *board, bool *fail_p, bool *error_p)
{
    const ufo_value_t *requests = ufo_value_map_get (board, "requests");
    size_t first = 0;
    for (bool found = true; found; ) {
        char key [48];
        snprintf (key, sizeof key, "request_%zu", first);
        found = false;
        for (size_t i = 0; i < ufo_value_size (requests) && !found; i++) {
            const ufo_value_t *item = ufo_value_list_at (requests, i);
            found = ufo_value_map_has (item, key);
            const char *status = found ? ufo_value_map_str (item, "status", "") : "";
            if (strcmp (status, "FAIL") == 0)
                *fail_p = true;
            else if (strcmp (status, "ERROR") == 0 && !*error_p) {
                *error_p = true;
                snprintf (self->error, sizeof self->error, "round %zu ended in ERROR before the session was "
                          "delivered again", first);
            }
        }
        if (found)
            first++;
    }
    ufo_value_t *lines = ufo_tasklog_read_lines (self->log, "response.log");
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        int64_t step = ufo_value_map_int (l, "Step", -1);
        if (step >= self->step)
            self->step = step + 1;
        const ufo_value_t *tokens = ufo_value_map_get (l, "Tokens");
        ufo_cost_add (&self->cost, ufo_value_map_float (l, "Cost", 0), ufo_value_map_int (tokens, "prompt", 0),
                      ufo_value_map_int (tokens, "completion", 0));
    }
    ufo_value_destroy (&lines);
    ufo_info ("host: session %s delivered again: resuming at round %zu after %" PRId64 " steps", self->cfg->session,
              first, self->step);
    return first;
}

//  A re-delivered session continues its interrupted round instead of starting it over: the
//  round's HostAgent steps (response.log) go back into the HostAgent's memory, the subtasks
//  an AppAgent already ended (its last step's Status FINISH / FAIL) become the round's
//  previous subtasks (and memory items), numbering goes on after the last subtask index,
//  and the model is told what was done. Earlier rounds' HostAgent steps refill the memory
//  too. A subtask that was still running is not waited for; its steps are in the log.
static void
s_resume_round (host_t *self)
{
    ufo_value_t *lines = ufo_tasklog_read_lines (self->log, "response.log");
    ufo_value_t *done = ufo_value_new_map ();      //  "<index>" -> its last AppAgent record
    int64_t last_index = -1;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        int64_t round = ufo_value_map_int (l, "Round", -1);
        if (ufo_value_type (l) != UFO_TMAP || round < 0 || round > self->round)
            continue;
        bool host = strcmp (ufo_value_map_str (l, "Agent", ""), "HostAgent") == 0;
        if (host)
            host_step_remember (self, l);
        if (round != self->round)
            continue;
        self->round_step++;
        int64_t index = ufo_value_map_int (l, "SubtaskIndex", -1);
        if (host) {
            self->agent_step++;
            ufo_value_destroy (&self->plan);
            self->plan = ufo_value_dup (ufo_value_map_get (l, "Plan"));
            if (ufo_value_type (self->plan) != UFO_TLIST) {
                ufo_value_destroy (&self->plan);
                self->plan = ufo_value_new_list ();
            }
        }
        else if (index >= 0 && index < 100000) {
            char key [24];
            snprintf (key, sizeof key, "%" PRId64, index);
            ufo_value_map_set_copy (done, key, l);
        }
        if (index > last_index && index < 100000)
            last_index = index;
    }
    ufo_buf_t tip = { 0 };
    for (size_t i = 0; i < ufo_value_size (done); i++) {
        const ufo_value_t *l = ufo_value_map_value_at (done, i);
        const char *status = ufo_value_map_str (l, "Status", "");
        if (strcmp (status, "FINISH") != 0 && strcmp (status, "FAIL") != 0)
            continue;                               //  it was still running
        const char *subtask = ufo_value_map_str (l, "Subtask", "");
        ufo_value_t *prev = ufo_value_new_map ();
        ufo_value_map_set_str (prev, "subtask", subtask);
        ufo_value_map_set_str (prev, "status", status);
        ufo_value_list_push (self->previous, &prev);
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_int (item, "Round", self->round);
        ufo_value_map_set_str (item, "Subtask", subtask);
        ufo_value_map_set_str (item, "Application", ufo_value_map_str (l, "Application", ""));
        ufo_value_map_set_str (item, "SubtaskStatus", status);
        ufo_value_map_set_str (item, "Comment", ufo_value_map_str (l, "Comment", ""));
        ufo_value_list_push (self->memory, &item);
        ufo_buf_printf (&tip, "%s\"%s\" (%s, %s)", tip.len ? ", " : "", subtask,
                        ufo_value_map_str (l, "Application", ""), status);
        if (strcmp (status, "FINISH") == 0 && self->cfg->plan && self->round == 0)
            self->follow_index++;
    }
    self->subtask_index = last_index;
    ufo_value_list_push (self->tips, &(ufo_value_t *) { ufo_value_new_stringf (
        "This round was resumed after the HostAgent restarted (%" PRId64 " steps of it were already taken). "
        "%s%s%s", self->round_step, tip.len ? "Subtasks already ended in this round, do not repeat them: " : "",
        tip.len ? tip.data : "", tip.len ? "." : "") });
    ufo_info ("host: session %s round %" PRId64 " continues after %" PRId64 " steps, %zu subtask(s) done, next "
              "subtask index %" PRId64, self->cfg->session, self->round, self->round_step,
              ufo_value_size (self->previous), self->subtask_index + 1);
    ufo_buf_free (&tip);
    ufo_value_destroy (&done);
    ufo_value_destroy (&lines);
}

//  HP_OPEN: the logs, request.json, the resume point's board.
static void
s_open (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    ufo_error_t err = { 0 };
    self->log = ufo_tasklog_open (cfg->log_root, cfg->task, &err);
    if (!self->log) {
        snprintf (self->error, sizeof self->error, "logs: %s", err.message);
        self->result = s_result (self, "ERROR", 0);
        self->phase = HP_DONE;
        return;
    }
    for (size_t i = 0; cfg->secrets && cfg->secrets [i]; i++)
        ufo_tasklog_add_secret (self->log, cfg->secrets [i]);
    host_logs_request (self);
    self->nreq = ufo_value_size (cfg->requests);
    if (cfg->max_round > 0 && self->nreq > (size_t) cfg->max_round) {
        //  refused as a whole: running only some of the requests would look like success
        snprintf (self->error, sizeof self->error, "%zu requests but MAX_ROUND is %" PRId64 "; the session was "
                  "not run (send at most MAX_ROUND requests)", self->nreq, cfg->max_round);
        ufo_warn ("host: session %s: %s", cfg->session, self->error);
        self->any_fail = true;
        self->nreq = 0;
    }
    if (cfg->resume && self->nreq) {
        host_start (self, HP_RESUME_POINT);
        self->ops->board_get (self->ops->arg);
    }
    else
        self->phase = HP_RESUME_POINT;
}

static void
s_resume (host_t *self)
{
    if (self->cfg->resume && self->nreq) {
        host_reply_t *reply = host_reply (self);
        if (!reply->value)
            ufo_warn ("host: session %s: the blackboard for resuming: %s", self->cfg->session, reply->err.message);
        self->first = s_resume_point (self, reply->value, &self->any_fail, &self->any_error);
    }
    self->rounds = (int64_t) (self->first < self->nreq ? self->first : self->nreq);
    if (self->rounds > 0)
        self->round = self->rounds - 1;
    self->r = self->first;
    self->phase = HP_ROUND;
}

//  HP_ROUND: round r starts (or the rounds are over).
static void
s_round (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    size_t r = self->r;
    if (!(r < self->nreq && !self->any_error && (r == self->first || self->step < cfg->max_step))) {
        self->phase = HP_SESSION_END;
        return;
    }
    self->round = (int64_t) r;
    self->request = ufo_value_str (ufo_value_list_at (cfg->requests, r));
    if (!self->request)
        self->request = "";
    if (r > 0)
        host_logs_request (self);           //  rewritten at each round start (its "round")
    ufo_cost_next_round (&self->cost);
    ufo_value_destroy (&self->experience);
    ufo_value_destroy (&self->online);
    self->phase = HP_ROUND_EXPERIENCE;
    host_experience_start_find (self);
}

static void
s_round_experience (host_t *self)
{
    if (self->cfg->rag_experience && self->ops->experience_find) {
        self->experience = host_found_take (self, "experience not retrieved");
        ufo_info ("host: session %s round %" PRId64 ": %zu experience record(s) retrieved",
                  self->cfg->session, self->round, ufo_value_size (self->experience));
    }
    self->phase = HP_ROUND_ONLINE;
    host_online_start_find (self);
}

static void
s_round_online (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    if (cfg->rag_online && self->ops->online_search)
        self->online = host_found_take (self, "online search failed, going on without it");
    self->round_step = self->agent_step = 0;
    self->subtask_index = -1;
    self->follow_index = 0;
    self->last_xid = 0;
    ufo_value_clear (self->previous);
    ufo_value_clear (self->plan);
    if (cfg->resume && self->r == self->first)
        s_resume_round (self);
    self->state = HOST_CONTINUE;
    self->rounds++;
    self->phase = HP_STATE;
}

//  HP_STATE: what the HostAgent state of the round leads to.
static void
s_state (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    host_state_t state = self->state;
    if (state != HOST_FINISH && state != HOST_FAIL && state != HOST_ERROR) {
        if (self->ops->cancelled (self->ops->arg)) {
            snprintf (self->error, sizeof self->error, "session cancelled");
            state = HOST_ERROR;
        }
        else if (self->step >= cfg->max_step) {
            snprintf (self->error, sizeof self->error, "MAX_STEP (%" PRId64 ") reached in round %zu",
                      cfg->max_step, self->r);
            ufo_info ("host: %s", self->error);
            state = HOST_FAIL;
        }
    }
    self->state = state;
    switch (state) {
        case HOST_CONTINUE: self->phase = HP_STEP; break;
        case HOST_ASSIGN:   self->phase = HP_ASSIGN; break;
        case HOST_PENDING:  self->state = HOST_CONTINUE; break;        //  asked in the step
        default:
            self->any_fail |= state == HOST_FAIL;
            self->any_error |= state == HOST_ERROR;
            self->phase = HP_ROUND_END;
            break;
    }
}

//  HP_SESSION_END: rounds that never ran, the session's evaluation.
static void
s_session_end (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    size_t next_round = (size_t) (self->round + 1);
    if (!self->any_error && self->first < self->nreq && next_round < self->nreq && self->step >= cfg->max_step) {
        //  rounds left that never ran: the session did not do what was asked
        size_t len = strlen (self->error);
        snprintf (self->error + len, sizeof self->error - len, "%sMAX_STEP reached before round %zu",
                  len ? "; " : "", next_round);
        ufo_info ("host: session %s: %s", cfg->session, self->error);
        self->any_fail = true;
    }
    self->status = self->any_error ? "ERROR" : self->any_fail ? "FAIL" : "FINISH";
    if (cfg->eva_session && !self->any_error && self->nreq > 0 && !self->ops->cancelled (self->ops->arg))
        s_evaluate (self, "session", HP_SESSION_BOARD);
    else
        self->phase = HP_SESSION_BOARD;
}

static void
s_session_board (host_t *self)
{
    host_start (self, HP_SESSION_SAVE);
    self->ops->board_get (self->ops->arg);
}

static void
s_session_logs (host_t *self)
{
    host_logs_session_end (self, self->status, self->board);
    self->result = s_result (self, self->status, self->rounds);
    self->phase = HP_DONE;
}

void
host_start (host_t *self, host_phase_t then)
{
    assert (!self->waiting);
    ufo_value_destroy (&self->reply.value);
    ufo_llm_response_destroy (&self->reply.response);
    free (self->reply.url);
    memset (&self->reply, 0, sizeof self->reply);
    self->phase = then;
    self->waiting = true;
    self->replied = false;
}

host_reply_t *
host_reply (host_t *self)
{
    return &self->reply;
}

host_session_t *
host_session_new (const host_session_config_t *cfg, const host_ops_t *ops)
{
    assert (cfg && ops);
    host_t *self = (host_t *) ufo_calloc (1, sizeof *self);
    self->cfg = cfg;
    self->ops = ops;
    self->phase = HP_OPEN;
    self->started_us = ufo_time_now_us ();
    ufo_time_iso (self->started);
    self->memory = ufo_value_new_list ();
    self->previous = ufo_value_new_list ();
    self->plan = ufo_value_new_list ();
    self->tips = ufo_value_new_list ();
    return self;
}

void
host_session_destroy (host_session_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    host_t *self = *self_p;
    self->waiting = false;                  //  an operation in flight is forgotten
    host_start (self, HP_DONE);             //  releases the last reply
    s_host_free (self);
    free (self);
    *self_p = NULL;
}

bool
host_session_waiting (const host_session_t *self)
{
    return self->waiting && !self->replied;
}

void
host_session_done (host_session_t *self, host_reply_t *reply)
{
    assert (self && reply);
    assert (self->waiting && !self->replied);
    self->reply = *reply;
    memset (reply, 0, sizeof *reply);
    self->replied = true;
}

ufo_value_t *
host_session_result (host_session_t *self)
{
    if (self->phase != HP_DONE)
        return NULL;
    ufo_value_t *result = self->result;
    self->result = NULL;
    return result;
}

host_run_t
host_session_advance (host_session_t *self)
{
    assert (self);
    while (self->phase != HP_DONE) {
        if (self->waiting) {
            if (!self->replied)
                return HOST_RUN_WAITING;
            self->waiting = self->replied = false;
        }
        switch (self->phase) {
            case HP_OPEN:               s_open (self); break;
            case HP_RESUME_POINT:       s_resume (self); break;
            case HP_ROUND:              s_round (self); break;
            case HP_ROUND_EXPERIENCE:   s_round_experience (self); break;
            case HP_ROUND_ONLINE:       s_round_online (self); break;
            case HP_STATE:              s_state (self); break;
            case HP_ASSIGN:             s_assign (self); break;
            case HP_ASSIGN_DEMO:        s_assign_demo (self); break;
            case HP_ASSIGN_WORKER:      s_assign_worker (self); break;
            case HP_ASSIGN_DONE:        s_assign_done (self); break;
            case HP_ROUND_END:          s_round_end (self); break;
            case HP_ROUND_SNAP:         s_round_snap (self); break;
            case HP_ROUND_SNAP_AGAIN:   s_round_snap_again (self); break;
            case HP_ROUND_SNAP_DONE:    s_round_snap_done (self); break;
            case HP_ROUND_NEXT:         self->r++; self->phase = HP_ROUND; break;
            case HP_EVAL:               s_eval_run (self); break;
            case HP_EVAL_BOARD:         s_eval_board (self); break;
            case HP_EVAL_DONE:          s_eval_done (self); break;
            case HP_SESSION_END:        s_session_end (self); break;
            case HP_SESSION_BOARD:      s_session_board (self); break;
            case HP_SESSION_SAVE:
                ufo_value_destroy (&self->board);
                self->board = host_reply (self)->value;
                host_reply (self)->value = NULL;
                self->phase = HP_SAVE_WANTED;
                break;
            case HP_SAVE_WANTED: case HP_SAVE_SUMMARY: case HP_SAVE_STORED: case HP_SAVE_DONE:
                host_experience_phase (self);
                break;
            case HP_SESSION_LOGS:       s_session_logs (self); break;
            case HP_DONE:               break;
            default:                    host_step_phase (self); break;
        }
    }
    return HOST_RUN_DONE;
}
