/*  app_record.c - what a finished AppAgent step leaves behind: the response.log record
    (docs/LOGS.md), request.log, the trajectory item and screenshot on the blackboard, the
    agent's memory, and the "step" / "cost" progress events. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_rag.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "app_int.h"

//  The model's own fields, in the original's order (absent ones get their empty value).
static const char *const s_model_fields [] = {
    "Observation", "Thought", "ControlLabel", "ControlText", "Function", "Args", "Status",
    "Plan", "Comment", "SaveScreenshot", "Questions"
};

static ufo_value_t *
s_empty_for (const char *field)
{
    if (!strcmp (field, "Args"))
        return ufo_value_new_map ();
    if (!strcmp (field, "Plan") || !strcmp (field, "Questions"))
        return ufo_value_new_list ();
    if (!strcmp (field, "SaveScreenshot")) {
        ufo_value_t *v = ufo_value_new_map ();
        ufo_value_map_set_bool (v, "save", false);
        ufo_value_map_set_str (v, "reason", "");
        return v;
    }
    return ufo_value_new_string ("");
}

static ufo_value_t *
s_build_record (app_agent_t *a, const app_record_t *rec)
{
    ufo_value_t *r = ufo_value_new_map ();
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_model_fields); i++) {
        const ufo_value_t *v = rec->decision ? ufo_value_map_get (rec->decision, s_model_fields [i]) : NULL;
        ufo_value_map_set (r, s_model_fields [i], &(ufo_value_t *) {
            v ? ufo_value_dup (v) : s_empty_for (s_model_fields [i]) });
    }
    ufo_value_map_set_str (r, "Status", rec->status);
    ufo_value_map_set_int (r, "Step", rec->step);
    ufo_value_map_set_int (r, "RoundStep", a->round_step_base + rec->agent_step);
    ufo_value_map_set_int (r, "AgentStep", rec->agent_step);
    ufo_value_map_set_int (r, "Round", a->round);
    ufo_value_map_set_str (r, "Subtask", a->subtask);
    ufo_value_map_set_int (r, "SubtaskIndex", a->subtask_index);
    const char *function = rec->action ? ufo_value_map_str (rec->action, "function", "") : "";
    ufo_value_map_set_str (r, "FunctionCall", rec->action_result ? function : "");
    if (rec->action)
        ufo_value_map_set_copy (r, "Action", rec->action);
    else
        ufo_value_map_set (r, "Action", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_t *success = ufo_value_new_list ();
    if (rec->action_result) {
        ufo_value_t *s = ufo_value_new_map ();
        ufo_value_map_set_bool (s, "success", ufo_value_map_bool (rec->action_result, "success", false));
        ufo_value_map_set_str (s, "result", ufo_value_map_str (rec->action_result, "text", ""));
        ufo_value_map_set_str (s, "error", ufo_value_map_str (rec->action_result, "error", ""));
        ufo_value_list_push (success, &s);
    }
    ufo_value_map_set (r, "ActionSuccess", &success);
    ufo_value_map_set_str (r, "ActionType", rec->action_type ? rec->action_type : "");
    ufo_value_map_set_str (r, "Request", a->request);
    ufo_value_map_set_str (r, "Agent", "AppAgent");
    ufo_value_map_set_str (r, "AgentName", a->agent_name);
    ufo_value_map_set_str (r, "Application", a->application);
    ufo_value_map_set_float (r, "Cost", rec->cost);
    ufo_value_map_set_str (r, "Model", rec->model ? rec->model : "");     //  who answered
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", rec->prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", rec->completion_tokens);
    ufo_value_map_set (r, "Tokens", &tokens);
    ufo_value_map_set_str (r, "Results", rec->results ? rec->results : "");
    ufo_value_map_set_str (r, "error", rec->error ? rec->error : "");
    ufo_value_map_set_copy (r, "time_cost", rec->time_cost);
    if (rec->window)
        ufo_value_map_set_copy (r, "Window", rec->window);
    else
        ufo_value_map_set (r, "Window", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_t *clog = ufo_value_new_map ();
    if (rec->control) {
        ufo_value_map_set_str (clog, "label", ufo_value_map_str (rec->control, "label", ""));
        ufo_value_map_set_str (clog, "type", ufo_value_map_str (rec->control, "control_type", ""));
        ufo_value_map_set_str (clog, "name", ufo_value_map_str (rec->control, "control_text", ""));
        const ufo_value_t *rect = ufo_value_map_get (rec->control, "control_rect");
        if (rect)
            ufo_value_map_set_copy (clog, "rect", rect);
    }
    ufo_value_map_set (r, "ControlLog", &clog);
    ufo_value_map_set_str (r, "UserConfirm", rec->user_confirm ? rec->user_confirm : "");
    if (rec->answers)
        ufo_value_map_set_copy (r, "Answers", rec->answers);
    else
        ufo_value_map_set (r, "Answers", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_value_map_set_str (r, "ScreenshotPath", rec->shot ? rec->shot : "");
    ufo_value_map_set_str (r, "AnnotatedScreenshotPath", rec->annotated ? rec->annotated : "");
    ufo_value_map_set_str (r, "SelectedControlScreenshotPath", rec->selected ? rec->selected : "");
    char ts [48];
    ufo_time_iso (ts);
    ufo_value_map_set_str (r, "Timestamp", ts);
    return r;
}

//  The trajectory item: the HISTORY_KEYS fields of the record plus what a resume needs.
static ufo_value_t *
s_trajectory (app_agent_t *a, const ufo_value_t *record)
{
    ufo_value_t *t = ufo_value_new_map ();
    const ufo_value_t *keys = a->ctx->history_keys;
    for (size_t i = 0; i < ufo_value_size (keys); i++) {
        const char *k = ufo_value_str (ufo_value_list_at (keys, i));
        const ufo_value_t *v = k ? ufo_value_map_get (record, k) : NULL;
        if (v)
            ufo_value_map_set_copy (t, k, v);
    }
    static const char *const extra [] = { "Step", "Round", "SubtaskIndex", "Application", "Status" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (extra); i++)
        if (!ufo_value_map_has (t, extra [i]))
            ufo_value_map_set_copy (t, extra [i], ufo_value_map_get (record, extra [i]));
    return t;
}

//  USE_CUSTOMIZATION: appends the question/answer pair to QA_PAIR_FILE as one JSON line
//  (one write with O_APPEND, so concurrent agents do not interleave lines).
static void
s_save_qa (app_agent_t *a, const ufo_value_t *qa)
{
    const char *path = a->ctx->qa_pair_file;
    char *dir = ufo_strdup (path);
    char *slash = strrchr (dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1; *p; p++)
            if (*p == '/') {
                *p = '\0';
                mkdir (dir, 0755);
                *p = '/';
            }
        mkdir (dir, 0755);
    }
    free (dir);
    size_t len;
    char *line = ufo_json_dump (qa, UFO_JSON_PY, &len);
    line = ufo_realloc (line, len + 2);
    line [len] = '\n';
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write (fd, line, len + 1) != (ssize_t) (len + 1))
        ufo_warn ("%s: %s: %s", a->agent_name, path, strerror (errno));
    if (fd >= 0)
        close (fd);
    free (line);
}

void
app_record_step (app_agent_t *a, const app_record_t *rec)
{
    app_ctx_t *ctx = a->ctx;
    ufo_error_t err;
    struct timespec t0;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    ufo_value_t *record = s_build_record (a, rec);
    if (ufo_tasklog_append (a->log, "response.log", record, &err) < 0)
        ufo_warn ("%s: response.log: %s", a->agent_name, err.message);
    //  memory and trajectory
    ufo_value_t *traj = s_trajectory (a, record);
    ufo_value_list_push (a->memory, &(ufo_value_t *) { ufo_value_dup (traj) });
    if (app_board_add (ctx->board, a->session, "trajectories", &traj, &err) < 0)
        ufo_warn ("%s: blackboard trajectories: %s", a->agent_name, err.message);
    //  questions and their answers
    for (size_t i = 0; rec->answers && i < ufo_value_size (rec->questions); i++) {
        ufo_value_t *qa = ufo_value_new_map ();
        ufo_value_map_set_copy (qa, "question", ufo_value_list_at (rec->questions, i));
        const ufo_value_t *ans = ufo_value_list_at (rec->answers, i);
        if (!ans)
            ans = ufo_value_list_at (rec->answers, ufo_value_size (rec->answers) - 1);
        if (ans)
            ufo_value_map_set_copy (qa, "answer", ans);
        else
            ufo_value_map_set_str (qa, "answer", "");
        if (ctx->qa_pair_file && *ctx->qa_pair_file
        &&  strcmp (ufo_value_map_str (qa, "answer", ""), APP_PLACEHOLDER) != 0)
            s_save_qa (a, qa);         //  a placeholder is no knowledge worth keeping
        if (app_board_add (ctx->board, a->session, "questions", &qa, &err) < 0)
            ufo_warn ("%s: blackboard questions: %s", a->agent_name, err.message);
    }
    //  SaveScreenshot
    const ufo_value_t *save = rec->decision ? ufo_value_map_get (rec->decision, "SaveScreenshot") : NULL;
    if (ctx->screenshot_to_memory && ufo_value_map_bool (save, "save", false)
    &&  rec->shot && *rec->shot) {
        char path [1024];
        ufo_tasklog_path (a->log, rec->shot, path, sizeof path);
        app_writer_flush (a->writer);       //  the screenshot is written in the background
        FILE *f = fopen (path, "rb");
        ufo_buf_t png;
        ufo_buf_init (&png);
        char chunk [65536];
        size_t got;
        while (f && (got = fread (chunk, 1, sizeof chunk, f)) > 0)
            ufo_buf_append (&png, chunk, got);
        if (f)
            fclose (f);
        ufo_value_t *meta = ufo_value_new_map ();
        ufo_value_map_set_int (meta, "step", rec->step);
        ufo_value_map_set_str (meta, "subtask", a->subtask);
        ufo_value_map_set_str (meta, "application", a->application);
        ufo_value_map_set_str (meta, "reason", ufo_value_map_str (save, "reason", ""));
        if (!png.len)
            ufo_warn ("%s: screenshot %s not readable for the blackboard", a->agent_name, rec->shot);
        else
        if (app_board_add_screenshot (ctx->board, a->session, rec->shot, png.data, png.len,
                                      meta, &err) < 0)
            ufo_warn ("%s: blackboard screenshot: %s", a->agent_name, err.message);
        ufo_value_destroy (&meta);
        ufo_buf_free (&png);
    }
    //  progress: the step, then the cost
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "step");
    ufo_value_t *red = ufo_tasklog_redact (a->log, record);
    ufo_value_map_set (ev, "record", &red);
    //  what recording took (logs, board items, screenshot blob): after time_cost was written
    struct timespec t1;
    clock_gettime (CLOCK_MONOTONIC, &t1);
    ufo_value_map_set_float (ev, "record_s", (double) (t1.tv_sec - t0.tv_sec)
                                             + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
    app_agent_emit (a, &ev);
    ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "cost");
    ufo_value_map_set_float (ev, "step", rec->cost);
    ufo_value_map_set_float (ev, "round", a->cost.session);
    ufo_value_map_set_float (ev, "session", a->cost.session);
    ufo_value_map_set_float (ev, "subtask", a->cost.session);
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", rec->prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", rec->completion_tokens);
    ufo_value_map_set (ev, "tokens", &tokens);
    app_agent_emit (a, &ev);
    ufo_value_destroy (&record);
}

//  Replaces image URLs in a copy of messages.
static void
s_elide_images (ufo_value_t *messages, const char *const *urls, const char *const *names, size_t n)
{
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (messages, i), "content");
        for (size_t k = 0; ufo_value_type (content) == UFO_TLIST && k < ufo_value_size (content); k++) {
            ufo_value_t *part = ufo_value_list_at (content, k);
            ufo_value_t *iu = ufo_value_map_get (part, "image_url");
            const char *url = ufo_value_map_str (iu, "url", NULL);
            if (!url)
                continue;
            const char *name = "blackboard image";
            for (size_t j = 0; j < n; j++)
                if (urls [j] && strcmp (urls [j], url) == 0)
                    name = names [j];
            ufo_value_map_set_str (iu, "url", name);
        }
    }
}

void
app_record_request (app_agent_t *a, int64_t step, const ufo_value_t *messages,
                    const char *const *urls, const char *const *names, size_t n,
                    const ufo_value_t *knowledge)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_int (r, "Step", step);
    ufo_value_map_set_str (r, "Agent", "AppAgent");
    ufo_value_map_set_str (r, "AgentName", a->agent_name);
    ufo_value_map_set_int (r, "Round", a->round);
    ufo_value_map_set_int (r, "SubtaskIndex", a->subtask_index);
    ufo_value_t *copy = ufo_value_dup (messages);
    s_elide_images (copy, urls, names, n);
    ufo_value_map_set (r, "prompt", &copy);
    ufo_value_map_set_str (r, "model", *a->model ? a->model : a->ctx->model);
    ufo_rag_merge (r, knowledge);
    ufo_error_t err;
    if (ufo_tasklog_append (a->log, "request.log", r, &err) < 0)
        ufo_warn ("%s: request.log: %s", a->agent_name, err.message);
    ufo_value_destroy (&r);
}
