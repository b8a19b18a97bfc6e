/*  host_logs.c - the files the HostAgent writes into logs/<task>/ (docs/LOGS.md):
    request.json at session start and again at each round start; blackboard.json, session.json, output.md and report.html
    at session end. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_report.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "host_int.h"

//  An endpoint URL for the logs: without user:password@ and without the query string
//  (where keys travel, e.g. ?api-key=...).
static void
s_clean_endpoint (const char *url, char *out, size_t size)
{
    snprintf (out, size, "%s", url ? url : "");
    out [strcspn (out, "?#")] = 0;
    char *host = strstr (out, "://");
    host = host ? host + 3 : out;
    char *at = strchr (host, '@');
    char *slash = strchr (host, '/');
    if (at && (!slash || at < slash))
        memmove (host, at + 1, strlen (at + 1) + 1);
}

void
host_logs_request (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    ufo_value_t *doc = ufo_value_new_map ();
    ufo_value_map_set_str (doc, "task", cfg->task);
    ufo_value_map_set_str (doc, "session", cfg->session);
    if (cfg->device)
        ufo_value_map_set_str (doc, "device", cfg->device);
    else
        ufo_value_map_set_null (doc, "device");
    ufo_value_map_set_str (doc, "started", self->started);
    ufo_value_map_set_copy (doc, "requests", cfg->requests);
    ufo_value_map_set_int (doc, "round", self->round);
    const char *mode = cfg->plan && ufo_value_size (cfg->plan) ? "follower"
                     : cfg->mode && strcmp (cfg->mode, "batch_normal") == 0 ? "batch_normal" : "normal";
    ufo_value_map_set_str (doc, "mode", mode);
    if (cfg->plan && ufo_value_size (cfg->plan))
        ufo_value_map_set_copy (doc, "plan", cfg->plan);
    ufo_value_t *llm = ufo_value_map_set (doc, "llm", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_str (llm, "mode", cfg->llm_mode ? cfg->llm_mode : "live");
    char endpoint [1024];
    s_clean_endpoint (cfg->llm_endpoint, endpoint, sizeof endpoint);
    ufo_value_map_set_str (llm, "endpoint", endpoint);
    ufo_error_t err = { 0 };
    if (ufo_tasklog_write_json (self->log, "request.json", doc, &err) != 0)
        ufo_warn ("host: request.json: %s", err.message);
    ufo_value_destroy (&doc);
}

static void
s_md_text (ufo_buf_t *md, const char *label, const char *text)
{
    if (text && *text)
        ufo_buf_printf (md, "- **%s**: %s\n", label, text);
}

static void
s_md_json (ufo_buf_t *md, const char *label, const ufo_value_t *v)
{
    if (!v || (ufo_value_type (v) == UFO_TLIST && ufo_value_size (v) == 0))
        return;
    char *text = ufo_json_dump (v, UFO_JSON_COMPACT, NULL);
    ufo_buf_printf (md, "- **%s**: `%s`\n", label, text);
    free (text);
}

//  output.md: the trajectory in markdown, from response.log and evaluation.log.
static void
s_markdown (host_t *self, const char *status)
{
    const host_session_config_t *cfg = self->cfg;
    ufo_buf_t md = { 0 };
    ufo_buf_printf (&md, "# Session %s\n\n- **task**: %s\n- **status**: %s\n- **steps**: %" PRId64
                    "\n- **cost**: $%.4f\n", cfg->session, cfg->task, status, self->step, self->cost.session);
    for (size_t r = 0; r < ufo_value_size (cfg->requests); r++)
        ufo_buf_printf (&md, "- **request %zu**: %s\n", r, ufo_value_str (ufo_value_list_at (cfg->requests, r)));
    if (*self->error)
        ufo_buf_printf (&md, "- **error**: %s\n", self->error);
    ufo_value_t *lines = ufo_tasklog_read_lines (self->log, "response.log");
    int64_t round = -1;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *s = ufo_value_list_at (lines, i);
        if (ufo_value_type (s) != UFO_TMAP)
            continue;
        int64_t r = ufo_value_map_int (s, "Round", 0);
        if (r != round) {
            round = r;
            ufo_buf_printf (&md, "\n## Round %" PRId64 ": %s\n", r, ufo_value_map_str (s, "Request", ""));
        }
        ufo_buf_printf (&md, "\n### Step %" PRId64 " — %s\n\n", ufo_value_map_int (s, "Step", 0),
                        ufo_value_map_str (s, "AgentName", ufo_value_map_str (s, "Agent", "")));
        s_md_text (&md, "Subtask", ufo_value_map_str (s, "Subtask", ""));
        s_md_text (&md, "Observation", ufo_value_map_str (s, "Observation", ""));
        s_md_text (&md, "Thought", ufo_value_map_str (s, "Thought", ""));
        s_md_text (&md, "Application", ufo_value_map_str (s, "Application", ""));
        const ufo_value_t *action = ufo_value_map_get (s, "Action");
        const char *fn = ufo_value_map_str (action, "function", ufo_value_map_str (s, "FunctionCall", ""));
        if (fn && *fn) {
            char *args = ufo_json_dump (ufo_value_map_get (action, "args"), UFO_JSON_COMPACT, NULL);
            const char *label = ufo_value_map_str (action, "control_label", "");
            ufo_buf_printf (&md, "- **Action**: `%s(%s)`%s%s%s%s\n", fn, args ? args : "",
                            *label ? " on [" : "", label, *label ? "] " : "",
                            ufo_value_map_str (action, "control_text", ""));
            free (args);
        }
        s_md_text (&md, "Status", ufo_value_map_str (s, "Status", ""));
        s_md_text (&md, "Results", ufo_value_map_str (s, "Results", ""));
        s_md_json (&md, "Questions", ufo_value_map_get (s, "Questions"));
        s_md_text (&md, "UserConfirm", ufo_value_map_str (s, "UserConfirm", ""));
        s_md_text (&md, "Comment", ufo_value_map_str (s, "Comment", ""));
        s_md_text (&md, "error", ufo_value_map_str (s, "error", ""));
        const char *shot = ufo_value_map_str (s, "ScreenshotPath", "");
        if (*shot)
            ufo_buf_printf (&md, "\n![step %" PRId64 "](%s)\n", ufo_value_map_int (s, "Step", 0), shot);
    }
    ufo_value_destroy (&lines);
    lines = ufo_tasklog_read_lines (self->log, "evaluation.log");
    if (ufo_value_size (lines))
        ufo_buf_puts (&md, "\n## Evaluation\n");
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *e = ufo_value_list_at (lines, i);
        ufo_buf_printf (&md, "\n- **%s%s**: complete = %s — %s\n", ufo_value_map_str (e, "level", ""),
                        ufo_value_map_has (e, "Round") ? " (round)" : "",
                        ufo_value_map_str (e, "complete", "?"), ufo_value_map_str (e, "reason", ""));
        const ufo_value_t *scores = ufo_value_map_get (e, "sub_scores");
        for (size_t k = 0; k < ufo_value_size (scores) && ufo_value_type (scores) == UFO_TMAP; k++)
            ufo_buf_printf (&md, "  - %s: %s\n", ufo_value_map_key_at (scores, k),
                            ufo_value_str (ufo_value_map_value_at (scores, k)) ? ufo_value_str (ufo_value_map_value_at (scores, k)) : "?");
    }
    ufo_value_destroy (&lines);
    ufo_error_t err = { 0 };
    if (ufo_tasklog_write_file (self->log, "output.md", md.data ? md.data : "", md.len, &err) != 0)
        ufo_warn ("host: output.md: %s", err.message);
    ufo_buf_free (&md);
}

void
host_logs_session_end (host_t *self, const char *status, const ufo_value_t *board)
{
    ufo_error_t err = { 0 };
    if (board && ufo_tasklog_write_json (self->log, "blackboard.json", board, &err) != 0)
        ufo_warn ("host: blackboard.json: %s", err.message);
    char ended [40];
    ufo_time_iso (ended);
    ufo_value_t *doc = ufo_value_new_map ();
    ufo_value_map_set_str (doc, "task", self->cfg->task);
    ufo_value_map_set_str (doc, "session", self->cfg->session);
    ufo_value_map_set_str (doc, "status", status);
    ufo_value_map_set_int (doc, "rounds", self->round + 1);
    ufo_value_map_set_int (doc, "steps", self->step);
    ufo_value_map_set_str (doc, "started", self->started);
    ufo_value_map_set_str (doc, "ended", ended);
    ufo_value_map_set_float (doc, "duration_s", (double) (ufo_time_now_us () - self->started_us) / 1e6);
    ufo_value_t *cost = ufo_value_map_set (doc, "cost", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_float (cost, "total", self->cost.session);
    ufo_value_map_set_int (cost, "prompt_tokens", self->cost.session_prompt_tokens);
    ufo_value_map_set_int (cost, "completion_tokens", self->cost.session_completion_tokens);
    if (self->evaluation)
        ufo_value_map_set_copy (doc, "evaluation", self->evaluation);
    else
        ufo_value_map_set_null (doc, "evaluation");
    if (*self->error)
        ufo_value_map_set_str (doc, "error", self->error);
    if (ufo_tasklog_write_json (self->log, "session.json", doc, &err) != 0)
        ufo_warn ("host: session.json: %s", err.message);
    ufo_value_destroy (&doc);
    if (self->cfg->log_to_markdown)
        s_markdown (self, status);
    if (self->cfg->write_report && ufo_report_write (ufo_tasklog_dir (self->log), NULL, NULL, &err) != 0)
        ufo_warn ("host: report.html: %s", err.message);
}
