/*  host_session.c - a session: rounds, the HostAgent state machine, subtasks handed to
    the AppAgents, questions, evaluations, and the session-end files.

    Round loop (the original's): the HostAgent starts each round in CONTINUE;
      CONTINUE  one HostAgent step (host_step.c)          -> the state its Status names
      ASSIGN    the subtask runs on app:<application>     -> CONTINUE (FINISH), FAIL, ERROR
      PENDING   the Questions go to the user              -> CONTINUE
      FINISH, FAIL, ERROR                                  -> the round ends
    MAX_STEP bounds the steps of the whole session (HostAgent and AppAgent steps); a round
    cut by it ends in FAIL. An ERROR round ends the session. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "host_int.h"

#define S_PLACEHOLDER "no answer available, proceed"

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

//  Cost seen from a running task (its "cost" progress events are cumulative per task).
typedef struct {
    host_t *host;
    double dollars;
    int64_t prompt, completion;
} s_task_cost_t;

static void
s_task_cost_update (s_task_cost_t *tc, double dollars, int64_t prompt, int64_t completion)
{
    if (dollars < tc->dollars)
        dollars = tc->dollars;
    if (prompt < tc->prompt)
        prompt = tc->prompt;
    if (completion < tc->completion)
        completion = tc->completion;
    if (dollars == tc->dollars && prompt == tc->prompt && completion == tc->completion)
        return;
    ufo_cost_add (&tc->host->cost, dollars - tc->dollars, prompt - tc->prompt, completion - tc->completion);
    tc->dollars = dollars;
    tc->prompt = prompt;
    tc->completion = completion;
    s_emit_cost (tc->host);
}

static void
s_on_progress (const ufo_value_t *event, void *arg)
{
    s_task_cost_t *tc = (s_task_cost_t *) arg;
    if (strcmp (ufo_value_map_str (event, "kind", ""), "cost") != 0)
        return;
    const ufo_value_t *tokens = ufo_value_map_get (event, "tokens");
    s_task_cost_update (tc, ufo_value_map_float (event, "session", 0),
                        ufo_value_map_int (tokens, "prompt", 0), ufo_value_map_int (tokens, "completion", 0));
}

//  A task result's "cost" ({"total" | "session", "prompt_tokens", "completion_tokens"}).
static void
s_task_cost_final (s_task_cost_t *tc, const ufo_value_t *result)
{
    const ufo_value_t *cost = ufo_value_map_get (result, "cost");
    double dollars = ufo_value_map_float (cost, "total", ufo_value_map_float (cost, "session", 0));
    s_task_cost_update (tc, dollars, ufo_value_map_int (cost, "prompt_tokens", 0),
                        ufo_value_map_int (cost, "completion_tokens", 0));
}

static ufo_value_t *
s_str_list (const ufo_value_t *list)
{
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (list); i++)
        if (ufo_value_str (ufo_value_list_at (list, i)))
            ufo_value_list_push_str (out, ufo_value_str (ufo_value_list_at (list, i)));
    return out;
}

//  ASSIGN: the subtask goes to app:<application> on this device.
static host_state_t
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
    ufo_value_map_set (body, "tips", &(ufo_value_t *) { s_str_list (self->messages) });
    if (self->experience)
        ufo_value_map_set_copy (body, "experience_examples", self->experience);
    if (self->online)
        ufo_value_map_set_copy (body, "online_docs", self->online);
    ufo_value_t *demonstrations = host_demonstration_find (self);
    if (demonstrations)
        ufo_value_map_set (body, "demonstration_examples", &demonstrations);
    ufo_value_map_set_copy (body, "previous_subtasks", self->previous);
    ufo_value_map_set_str (body, "application", self->application);
    ufo_value_map_set_copy (body, "window", self->window);
    ufo_value_map_set_int (body, "step_base", self->step);
    ufo_value_map_set_int (body, "max_steps", cfg->max_step - self->step);
    ufo_value_map_set_bool (body, "interactive", cfg->interactive);
    ufo_value_map_set_bool (body, "auto_confirm", cfg->auto_confirm);
    char service [256];
    snprintf (service, sizeof service, "app:%s", self->application);

    ufo_error_t err = { 0 };
    if (self->ops->has_worker && self->ops->has_worker (self->ops->arg, service, &err) == 0) {
        //  nobody would take the subtask: tell the model instead of waiting for the deadline
        ufo_info ("host: session %s: no worker for %s: %s", cfg->session, service, err.message);
        ufo_value_destroy (&body);
        self->subtask_index--;
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("no AppAgent serves %s; pick another application or launch it with Bash "
                                   "(the subtask \"%s\" was not started)", self->application, self->subtask) });
        return HOST_CONTINUE;
    }
    self->last_xid = ufo_value_map_int (self->window, "xid", 0);
    s_task_cost_t tc = { .host = self };
    ufo_value_t *result = self->ops->run_task (self->ops->arg, service, &body, s_on_progress, &tc, &err);
    if (!result && !self->ops->cancelled (self->ops->arg)) {
        //  the subtask could not run (refused, no worker in time, lost): the model decides
        ufo_info ("host: session %s: subtask on %s did not run: %s", cfg->session, service, err.message);
        self->subtask_index--;
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("The subtask \"%s\" could not run on %s (%s); pick another application, "
                                   "launch it with Bash, or end the round.", self->subtask, self->application,
                                   err.message) });
        return HOST_CONTINUE;
    }
    //  a copy: result is destroyed before the status is used
    char status [8] = "ERROR";
    char reason [800] = "";
    if (!result)
        snprintf (reason, sizeof reason, "subtask on %s: %s", service, err.message);
    else {
        s_task_cost_final (&tc, result);
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
        ufo_value_map_set (item, "Results", &(ufo_value_t *) { s_str_list (ufo_value_map_get (result, "results")) });
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
        if (cfg->plan && self->round == 0 && ufo_value_size (cfg->plan) > 0) {
            self->follow_index++;
            if (self->follow_index >= (int64_t) ufo_value_size (cfg->plan))
                return HOST_FINISH;         //  follower: the whole plan is done
        }
        return HOST_CONTINUE;
    }
    if (strcmp (status, "FAIL") == 0)
        return HOST_FAIL;
    snprintf (self->error, sizeof self->error, "%s", reason);
    return HOST_ERROR;
}

//  PENDING: the HostAgent's Questions go to the user (or get the placeholder answer); each
//  pair goes to the blackboard and into the next prompt. Called by the step that said PENDING,
//  so its response.log record carries the answers.
ufo_value_t *
host_pending_ask (host_t *self, const ufo_value_t *questions)
{
    ufo_value_t *answers = NULL, *given = ufo_value_new_list ();
    if (self->cfg->interactive && ufo_value_size (questions) > 0) {
        ufo_value_t *event = ufo_value_new_map ();
        ufo_value_map_set_str (event, "kind", "question");
        ufo_value_map_set (event, "qid", &(ufo_value_t *) {
            ufo_value_new_stringf ("%s-host-%" PRId64, self->cfg->session, self->step) });
        ufo_value_map_set_str (event, "from", "HostAgent");
        ufo_value_map_set (event, "questions", &(ufo_value_t *) { s_str_list (questions) });
        ufo_value_t *reply = self->ops->ask_user (self->ops->arg, &event);
        if (reply)
            answers = s_str_list (ufo_value_map_get (reply, "answers"));
        ufo_value_destroy (&reply);
    }
    for (size_t i = 0; i < ufo_value_size (questions); i++) {
        const char *q = ufo_value_str (ufo_value_list_at (questions, i));
        if (!q)
            continue;
        const char *a = ufo_value_str (ufo_value_list_at (answers, i));
        if (!a || !*a)
            a = S_PLACEHOLDER;
        ufo_value_t *qa = ufo_value_new_map ();
        ufo_value_map_set_str (qa, "question", q);
        ufo_value_map_set_str (qa, "answer", a);
        ufo_error_t err = { 0 };
        if (self->ops->board_add (self->ops->arg, "questions", &qa, &err) != 0)
            ufo_warn ("host: question not on the blackboard: %s", err.message);
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("You asked the user: \"%s\" The answer: \"%s\"", q, a) });
        ufo_value_list_push_str (given, a);
    }
    ufo_value_destroy (&answers);
    return given;
}

//  A re-delivered session's evaluation that an earlier attempt already made: the item
//  ufo-eval put into the board's requests ({"evaluation_session": {...}} or
//  {"evaluation_round_<r>": {...}}), copied (caller owns); NULL if there is none.
static ufo_value_t *
s_evaluation_on_board (host_t *self, const char *level)
{
    char key [64];
    if (strcmp (level, "round") == 0)
        snprintf (key, sizeof key, "evaluation_round_%" PRId64, self->round);
    else
        snprintf (key, sizeof key, "evaluation_session");
    ufo_error_t err = { 0 };
    ufo_value_t *board = self->ops->board_get (self->ops->arg, &err);
    const ufo_value_t *requests = ufo_value_map_get (board, "requests");
    ufo_value_t *found = NULL;
    for (size_t i = 0; i < ufo_value_size (requests) && !found; i++) {
        const ufo_value_t *inner = ufo_value_map_get (ufo_value_list_at (requests, i), key);
        if (ufo_value_type (inner) == UFO_TMAP)
            found = ufo_value_dup (inner);
    }
    ufo_value_destroy (&board);
    return found;
}

//  Asks the EvaluationAgent; returns its result (caller owns) or NULL. Idempotent per
//  session + level + round: a re-delivered session reuses the evaluation an earlier attempt
//  left on the board, and the submission carries the idempotency key
//  "eval:<session>:<level>:<round>" (host_bus.c), so an evaluation that attempt submitted and
//  that is still running (or ended) is followed instead of being run again.
static ufo_value_t *
s_evaluate (host_t *self, const char *level)
{
    const host_session_config_t *cfg = self->cfg;
    ufo_value_t *result = cfg->resume ? s_evaluation_on_board (self, level) : NULL;
    if (result) {
        ufo_info ("host: session %s: the %s evaluation is already on the blackboard; not asked again",
                  cfg->session, level);
        ufo_value_t *event = ufo_value_new_map ();
        ufo_value_map_set_str (event, "kind", "evaluation");
        ufo_value_map_set_str (event, "level", level);
        ufo_value_map_set_int (event, "round", self->round);
        ufo_value_map_set_copy (event, "result", result);
        self->ops->progress (self->ops->arg, &event);
        return result;
    }
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
    s_task_cost_t tc = { .host = self };
    ufo_error_t err = { 0 };
    result = self->ops->run_task (self->ops->arg, "eval", &body, s_on_progress, &tc, &err);
    if (!result) {
        ufo_warn ("host: %s evaluation failed: %s", level, err.message);
        return NULL;
    }
    s_task_cost_final (&tc, result);
    ufo_value_t *event = ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "evaluation");
    ufo_value_map_set_str (event, "level", level);
    ufo_value_map_set_int (event, "round", self->round);
    ufo_value_map_set_copy (event, "result", result);
    self->ops->progress (self->ops->arg, &event);
    return result;
}

static void
s_round_end (host_t *self, host_state_t state)
{
    char key [48];
    snprintf (key, sizeof key, "request_%" PRId64, self->round);
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, key, self->request);
    ufo_value_map_set_str (item, "status", host_state_name (state));    //  restored on resume
    ufo_error_t err = { 0 };
    if (self->ops->board_add (self->ops->arg, "requests", &item, &err) != 0)
        ufo_warn ("host: %s not on the blackboard: %s", key, err.message);
    char name [64], path [4096];
    snprintf (name, sizeof name, "action_round_%" PRId64 "_final.png", self->round);
    ufo_tasklog_path (self->log, name, path, sizeof path);
    if (self->ops->snapshot (self->ops->arg, self->last_xid, path, &err) != 0
    &&  (self->last_xid == 0 || self->ops->snapshot (self->ops->arg, 0, path, &err) != 0))
        ufo_warn ("host: %s: %s", name, err.message);
    ufo_info ("host: session %s round %" PRId64 " ended in %s after %" PRId64 " steps", self->cfg->session,
              self->round, host_state_name (state), self->round_step);
    if (self->cfg->eva_round && !self->ops->cancelled (self->ops->arg)) {
        ufo_value_t *eval = s_evaluate (self, "round");
        ufo_value_destroy (&eval);
    }
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
s_resume_point (host_t *self, bool *fail_p, bool *error_p)
{
    ufo_error_t err = { 0 };
    ufo_value_t *board = self->ops->board_get (self->ops->arg, &err);
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
    ufo_value_destroy (&board);
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

ufo_value_t *
host_session_run (const host_session_config_t *cfg, const host_ops_t *ops)
{
    host_t self = { .cfg = cfg, .ops = ops };
    self.started_us = ufo_time_now_us ();
    ufo_time_iso (self.started);
    self.memory = ufo_value_new_list ();
    self.previous = ufo_value_new_list ();
    self.plan = ufo_value_new_list ();
    self.tips = ufo_value_new_list ();
    ufo_error_t err = { 0 };
    self.log = ufo_tasklog_open (cfg->log_root, cfg->task, &err);
    if (!self.log) {
        snprintf (self.error, sizeof self.error, "logs: %s", err.message);
        ufo_value_t *result = s_result (&self, "ERROR", 0);
        s_host_free (&self);
        return result;
    }
    for (size_t i = 0; cfg->secrets && cfg->secrets [i]; i++)
        ufo_tasklog_add_secret (self.log, cfg->secrets [i]);
    host_logs_request (&self);

    size_t nreq = ufo_value_size (cfg->requests);
    bool any_fail = false, any_error = false;
    if (cfg->max_round > 0 && nreq > (size_t) cfg->max_round) {
        //  refused as a whole: running only some of the requests would look like success
        snprintf (self.error, sizeof self.error, "%zu requests but MAX_ROUND is %" PRId64 "; the session was "
                  "not run (send at most MAX_ROUND requests)", nreq, cfg->max_round);
        ufo_warn ("host: session %s: %s", cfg->session, self.error);
        any_fail = true;
        nreq = 0;
    }
    size_t first = cfg->resume && nreq ? s_resume_point (&self, &any_fail, &any_error) : 0;
    int64_t rounds = (int64_t) (first < nreq ? first : nreq);
    if (rounds > 0)
        self.round = rounds - 1;
    for (size_t r = first; r < nreq && !any_error && (r == first || self.step < cfg->max_step); r++) {
        self.round = (int64_t) r;
        self.request = ufo_value_str (ufo_value_list_at (cfg->requests, r));
        if (!self.request)
            self.request = "";
        if (r > 0)
            host_logs_request (&self);      //  rewritten at each round start (its "round")
        ufo_cost_next_round (&self.cost);
        ufo_value_destroy (&self.experience);
        self.experience = host_experience_find (&self);
        ufo_value_destroy (&self.online);
        self.online = host_online_find (&self);
        self.round_step = self.agent_step = 0;
        self.subtask_index = -1;
        self.follow_index = 0;
        self.last_xid = 0;
        ufo_value_clear (self.previous);
        ufo_value_clear (self.plan);
        if (cfg->resume && r == first)
            s_resume_round (&self);
        host_state_t state = HOST_CONTINUE;
        rounds++;
        while (state != HOST_FINISH && state != HOST_FAIL && state != HOST_ERROR) {
            if (ops->cancelled (ops->arg)) {
                snprintf (self.error, sizeof self.error, "session cancelled");
                state = HOST_ERROR;
                break;
            }
            if (self.step >= cfg->max_step) {
                snprintf (self.error, sizeof self.error, "MAX_STEP (%" PRId64 ") reached in round %zu",
                          cfg->max_step, r);
                ufo_info ("host: %s", self.error);
                state = HOST_FAIL;
                break;
            }
            switch (state) {
                case HOST_CONTINUE: state = host_step_run (&self); break;
                case HOST_ASSIGN:   state = s_assign (&self); break;
                case HOST_PENDING:  state = HOST_CONTINUE; break;      //  asked in the step
                default:            break;
            }
        }
        any_fail |= state == HOST_FAIL;
        any_error |= state == HOST_ERROR;
        s_round_end (&self, state);
    }
    size_t next_round = (size_t) (self.round + 1);
    if (!any_error && first < nreq && next_round < nreq && self.step >= cfg->max_step) {
        //  rounds left that never ran: the session did not do what was asked
        size_t len = strlen (self.error);
        snprintf (self.error + len, sizeof self.error - len, "%sMAX_STEP reached before round %zu",
                  len ? "; " : "", next_round);
        ufo_info ("host: session %s: %s", cfg->session, self.error);
        any_fail = true;
    }
    const char *status = any_error ? "ERROR" : any_fail ? "FAIL" : "FINISH";
    if (cfg->eva_session && !any_error && nreq > 0 && !ops->cancelled (ops->arg))
        self.evaluation = s_evaluate (&self, "session");
    ufo_value_t *board = ops->board_get (ops->arg, &err);
    host_experience_save (&self, status, board);
    host_logs_session_end (&self, status, board);
    ufo_value_destroy (&board);
    ufo_value_t *result = s_result (&self, status, rounds);
    s_host_free (&self);
    return result;
}
