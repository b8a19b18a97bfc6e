/*  ufo_report_steps.c - the body of the session report: the timeline, the rounds and
    their steps (with screenshots, questions and confirmations), the blackboard and the
    evaluations. Every text that comes from the logs goes through ufo_report_esc*. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_outcome.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_report.h"
#include "ufo_report_int.h"

#define S_OPEN_STEPS_MAX  40    //  up to this many steps, step details start open
#define S_SUMMARY_MAX     140   //  bytes of an action shown in a summary line

//  Fields rendered by name; any other field of a step goes to "Other fields".
static const char *s_known_fields [] = {
    "Observation", "Thought", "CurrentSubtask", "Message", "ControlLabel", "ControlText",
    "Status", "Plan", "Bash", "Questions", "Comment", "Function", "Args", "SaveScreenshot",
    "Step", "RoundStep", "AgentStep", "Round", "Subtask", "SubtaskIndex", "FunctionCall",
    "Action", "ActionSuccess", "ActionType", "Request", "Agent", "AgentName", "Application",
    "Cost", "Tokens", "Model", "Results", "error", "time_cost", "ControlLog", "UserConfirm", "Answers",
    "ScreenshotPath", "AnnotatedScreenshotPath", "SelectedControlScreenshotPath", "Timestamp",
    "__report_id"
};

static bool
s_is_app (const ufo_value_t *step)
{
    const char *agent = ufo_value_map_str (step, "Agent", "");
    if (strcmp (agent, "AppAgent") == 0)
        return true;
    return strncmp (ufo_value_map_str (step, "AgentName", ""), "AppAgent", 8) == 0;
}

static const char *
s_agent_name (const ufo_value_t *step)
{
    const char *name = ufo_value_map_str (step, "AgentName", "");
    return *name ? name : ufo_value_map_str (step, "Agent", "?");
}

//  A status as a CSS class suffix: upper-case letters only, else "other".
static void
s_status_badge (ufo_buf_t *out, const char *status)
{
    bool plain = *status != '\0' && strlen (status) < 16;
    for (const char *p = status; *p && plain; p++)
        plain = *p >= 'A' && *p <= 'Z';
    ufo_buf_printf (out, "<span class=\"status st-%s\">", plain ? status : "other");
    if (*status)
        ufo_report_escs (out, status);
    else
        ufo_buf_puts (out, "&mdash;");
    ufo_buf_puts (out, "</span>");
}

static const char *
s_function (const ufo_value_t *step)
{
    const char *fn = ufo_value_str (ufo_value_path (step, "Action.function"));
    if (!fn || !*fn)
        fn = ufo_value_map_str (step, "FunctionCall", "");
    if (!*fn)
        fn = ufo_value_map_str (step, "Function", "");
    return fn;
}

static const ufo_value_t *
s_args (const ufo_value_t *step)
{
    const ufo_value_t *args = ufo_value_path (step, "Action.args");
    return args ? args : ufo_value_map_get (step, "Args");
}

//  The action in one line: fn(key=value, ...), or the HostAgent's choice. Escaped.
static void
s_action_line (ufo_buf_t *out, const ufo_value_t *step, size_t max)
{
    ufo_buf_t line = {0};
    const char *fn = s_function (step);
    const char *bash = ufo_value_map_str (step, "Bash", "");
    if (*fn) {
        ufo_buf_puts (&line, fn);
        ufo_buf_putc (&line, '(');
        const ufo_value_t *args = s_args (step);
        for (size_t i = 0; i < ufo_value_size (args) && ufo_value_type (args) == UFO_TMAP; i++) {
            ufo_buf_printf (&line, "%s%s=", i ? ", " : "", ufo_value_map_key_at (args, i));
            ufo_json_append (&line, ufo_value_map_value_at (args, i), UFO_JSON_COMPACT);
        }
        ufo_buf_putc (&line, ')');
    }
    else
    if (*bash)
        ufo_buf_printf (&line, "bash: %s", bash);
    else
    if (!s_is_app (step) && *ufo_value_map_str (step, "ControlText", ""))
        ufo_buf_printf (&line, "select window \"%s\"", ufo_value_map_str (step, "ControlText", ""));
    if (line.len == 0)
        return;
    size_t len = max && line.len > max ? ufo_utf8_prefix (line.data, line.len, max) : line.len;
    ufo_buf_puts (out, "<code>");
    ufo_report_esc (out, line.data, len);
    if (len < line.len)
        ufo_buf_puts (out, "\xE2\x80\xA6");
    ufo_buf_puts (out, "</code>");
    ufo_buf_free (&line);
}

//  The control acted on: [label] type "name". Escaped; nothing when there is none.
static void
s_control_line (ufo_buf_t *out, const ufo_value_t *step)
{
    const ufo_value_t *log = ufo_value_map_get (step, "ControlLog");
    const char *label = ufo_value_map_str (log, "label", ufo_value_map_str (step, "ControlLabel", ""));
    const char *type = ufo_value_map_str (log, "type", ufo_value_str (ufo_value_path (step, "Action.control_type")));
    const char *name = ufo_value_map_str (log, "name", ufo_value_map_str (step, "ControlText", ""));
    if (!*label && !*name)
        return;
    if (*label) {
        ufo_buf_puts (out, "[");
        ufo_report_escs (out, label);
        ufo_buf_puts (out, "] ");
    }
    if (type && *type) {
        ufo_report_escs (out, type);
        ufo_buf_puts (out, " ");
    }
    if (*name) {
        ufo_buf_puts (out, "\xE2\x80\x9C");
        ufo_report_escs (out, name);
        ufo_buf_puts (out, "\xE2\x80\x9D");
    }
}

//  "✘ failed" (the reason as its tooltip) after the status of a step that failed.
static void
s_failed_mark (ufo_buf_t *out, const ufo_value_t *step)
{
    const char *why = NULL;
    if (!ufo_outcome_step_failed (step, &why))
        return;
    ufo_buf_puts (out, " <span class=\"err failed\" title=\"");
    ufo_report_escs (out, why);
    ufo_buf_puts (out, "\">\xE2\x9C\x98 failed</span>");
}

void
ufo_report_timeline (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_buf_printf (out, "<section id=\"timeline\"><h2>Timeline <small class=\"muted\">%zu steps"
                    "</small></h2>", self->stats.steps);
    if (self->stats.steps == 0) {
        ufo_buf_puts (out, "<p class=\"missing\">No step was logged.</p></section>\n");
        return;
    }
    ufo_buf_puts (out, "<div class=\"timeline-wrap\"><table class=\"timeline\"><thead><tr>"
                  "<th>Step</th><th>Round</th><th>Agent</th><th>Subtask</th><th>Action</th>"
                  "<th>Control</th><th>Status</th><th>Time</th><th>Cost</th></tr></thead><tbody>");
    for (size_t i = 0; i < ufo_value_size (self->steps); i++) {
        const ufo_value_t *step = ufo_value_list_at (self->steps, i);
        int64_t id = ufo_report_step_id (step, i);
        bool app = s_is_app (step);
        ufo_buf_printf (out, "<tr class=\"row %s%s\" data-step=\"%" PRId64 "\"><td><a href=\"#step-%"
                        PRId64 "\">%" PRId64 "</a></td><td>%" PRId64 "</td><td class=\"agent%s\">",
                        app ? "app" : "host", ufo_outcome_step_failed (step, NULL) ? " failed" : "", id, id, id,
                        ufo_value_map_int (step, "Round", 0),
                        app ? " app" : "");
        ufo_report_escs (out, s_agent_name (step));
        ufo_buf_puts (out, "</td><td class=\"trunc\" title=\"");
        ufo_report_esc_value (out, ufo_value_map_get (step, "Subtask"), 400);
        ufo_buf_puts (out, "\">");
        ufo_report_esc_value (out, ufo_value_map_get (step, "Subtask"), 60);
        ufo_buf_puts (out, "</td><td class=\"act\">");
        s_action_line (out, step, 80);
        ufo_buf_puts (out, "</td><td class=\"trunc\">");
        s_control_line (out, step);
        ufo_buf_puts (out, "</td><td>");
        s_status_badge (out, ufo_value_map_str (step, "Status", ""));
        s_failed_mark (out, step);
        ufo_buf_printf (out, "</td><td class=\"num\">%.1f s</td><td class=\"num\">$%.4f</td></tr>",
                        ufo_value_float (ufo_value_path (step, "time_cost.total")),
                        ufo_value_map_float (step, "Cost", 0));
    }
    ufo_buf_puts (out, "</tbody></table></div></section>\n");
}

//  One row of a step's key/value list, when the field is present and not empty.
static void
s_kv (ufo_buf_t *out, const char *label, const ufo_value_t *value)
{
    if (!value || ufo_value_type (value) == UFO_TNULL)
        return;
    if (ufo_value_type (value) == UFO_TSTRING && ufo_value_strlen (value) == 0)
        return;
    if ((ufo_value_type (value) == UFO_TLIST || ufo_value_type (value) == UFO_TMAP)
    &&  ufo_value_size (value) == 0)
        return;
    ufo_buf_printf (out, "<dt>%s</dt><dd>", label);
    if (ufo_value_type (value) == UFO_TLIST) {
        ufo_buf_puts (out, "<ol>");
        for (size_t i = 0; i < ufo_value_size (value); i++) {
            ufo_buf_puts (out, "<li>");
            ufo_report_esc_value (out, ufo_value_list_at (value, i), 0);
            ufo_buf_puts (out, "</li>");
        }
        ufo_buf_puts (out, "</ol>");
    }
    else
    if (ufo_value_type (value) == UFO_TMAP) {
        char *json = ufo_json_dump (value, UFO_JSON_PRETTY, NULL);
        ufo_buf_puts (out, "<pre>");
        ufo_report_escs (out, json);
        ufo_buf_puts (out, "</pre>");
        free (json);
    }
    else
        ufo_report_esc_value (out, value, 0);
    ufo_buf_puts (out, "</dd>");
}

static void
s_questions (ufo_buf_t *out, const ufo_value_t *step)
{
    const ufo_value_t *questions = ufo_value_map_get (step, "Questions");
    const ufo_value_t *answers = ufo_value_map_get (step, "Answers");
    size_t n = ufo_value_size (questions);
    if (ufo_value_type (questions) != UFO_TLIST || n == 0)
        return;
    ufo_buf_puts (out, "<div class=\"qa\"><strong>Questions to the user</strong><dl class=\"kv\">");
    for (size_t i = 0; i < n; i++) {
        ufo_buf_puts (out, "<dt>Question</dt><dd>");
        ufo_report_esc_value (out, ufo_value_list_at (questions, i), 0);
        ufo_buf_puts (out, "</dd><dt>Answer</dt><dd>");
        const ufo_value_t *answer = ufo_value_list_at (answers, i);
        if (answer)
            ufo_report_esc_value (out, answer, 0);
        else
            ufo_buf_puts (out, "<em class=\"muted\">no answer recorded</em>");
        ufo_buf_puts (out, "</dd>");
    }
    ufo_buf_puts (out, "</dl></div>");
}

static void
s_confirm (ufo_buf_t *out, const ufo_value_t *step)
{
    const char *confirm = ufo_value_map_str (step, "UserConfirm", "");
    if (!*confirm)
        return;
    bool yes = strcmp (confirm, "yes") == 0;
    ufo_buf_printf (out, "<div class=\"qa%s\"><strong>Confirmation asked</strong> before ",
                    yes ? "" : " refused");
    s_action_line (out, step, 0);
    ufo_buf_puts (out, ": the user answered <strong>");
    ufo_report_escs (out, confirm);
    ufo_buf_printf (out, "</strong> &mdash; %s</div>",
                    yes ? "the action ran." : "refused, the action did not run.");
}

static void
s_results (ufo_buf_t *out, const ufo_value_t *step)
{
    const ufo_value_t *list = ufo_value_map_get (step, "ActionSuccess");
    for (size_t i = 0; i < ufo_value_size (list) && ufo_value_type (list) == UFO_TLIST; i++) {
        const ufo_value_t *r = ufo_value_list_at (list, i);
        //  an ERROR step's outcome is no success, whatever an older log recorded
        bool ok = ufo_value_map_bool (r, "success", false)
               && strcmp (ufo_value_map_str (step, "Status", ""), "ERROR") != 0;
        ufo_buf_printf (out, "<dt>Outcome</dt><dd>%s ", ok ? "\xE2\x9C\x94 ok" :
                        "<span class=\"err\">\xE2\x9C\x98 failed</span>");
        ufo_report_esc_value (out, ufo_value_map_get (r, "result"), 2000);
        const char *error = ufo_value_map_str (r, "error", "");
        if (*error) {
            ufo_buf_puts (out, " <span class=\"err\">");
            ufo_report_escs (out, error);
            ufo_buf_puts (out, "</span>");
        }
        ufo_buf_puts (out, "</dd>");
    }
}

//  Screenshot of step id: the field's file if present, else the conventional name.
static char *
s_shot (s_report_t *self, const ufo_value_t *step, const char *field, const char *fmt,
        int64_t id, bool *named_missing)
{
    const char *named = ufo_value_map_str (step, field, "");
    char *found = ufo_report_image_find (self, named);
    if (!found && *named)
        *named_missing = true;
    if (!found) {
        char name [64];
        snprintf (name, sizeof name, fmt, id);
        found = ufo_report_image_find (self, name);
    }
    return found;
}

static void
s_step_images (s_report_t *self, const ufo_value_t *step, int64_t id)
{
    ufo_buf_t *out = self->out;
    bool named_missing = false;
    char *first = NULL, *second = NULL;
    const char *cap1 = NULL, *cap2 = NULL;
    if (s_is_app (step)) {
        first = s_shot (self, step, "AnnotatedScreenshotPath", "action_step%" PRId64
                        "_annotated.png", id, &named_missing);
        cap1 = "Controls offered to the model";
        second = s_shot (self, step, "SelectedControlScreenshotPath", "action_step%" PRId64
                         "_selected_controls.png", id, &named_missing);
        cap2 = "Selected control";
        if (!first && !second) {
            first = s_shot (self, step, "ScreenshotPath", "action_step%" PRId64 ".png", id,
                            &named_missing);
            cap1 = "Window before the action";
        }
    }
    else {
        first = s_shot (self, step, "ScreenshotPath", "desktop_step%" PRId64 ".png", id,
                        &named_missing);
        cap1 = "Desktop seen by the HostAgent";
    }
    if (first || second) {
        ufo_buf_puts (out, "<div class=\"shots\">");
        if (first)
            ufo_report_image (self, first, cap1);
        if (second)
            ufo_report_image (self, second, cap2);
        ufo_buf_puts (out, "</div>");
    }
    else
    if (named_missing) {
        self->stats.images_missing++;
        ufo_buf_puts (out, "<p class=\"missing\">The screenshots named in the log are not in the "
                      "directory.</p>");
    }
    free (first);
    free (second);
}

static void
s_other_fields (ufo_buf_t *out, const ufo_value_t *step)
{
    ufo_value_t *other = ufo_value_new_map ();
    for (size_t i = 0; i < ufo_value_size (step); i++) {
        const char *key = ufo_value_map_key_at (step, i);
        bool known = false;
        for (size_t k = 0; k < UFO_ARRAY_SIZE (s_known_fields) && !known; k++)
            known = strcmp (key, s_known_fields [k]) == 0;
        if (!known)
            ufo_value_map_set_copy (other, key, ufo_value_map_value_at (step, i));
    }
    if (ufo_value_size (other))
        s_kv (out, "Other fields", other);
    ufo_value_destroy (&other);
}

//  The knowledge retrieved for the step's prompt (request.log), one list per kind.
static void
s_knowledge (s_report_t *self, const ufo_value_t *step)
{
    static const char *const labels [][2] = {
        { "offline_docs", "Help documents" }, { "online_docs", "Web search" },
        { "experience_examples", "Experience" }, { "demonstration_examples", "Demonstrations" } };
    const ufo_value_t *knowledge = ufo_report_step_knowledge (self, step);
    if (!knowledge)
        return;
    ufo_buf_t *out = self->out;
    ufo_buf_puts (out, "<div class=\"knowledge\"><h4>Knowledge</h4><dl class=\"kv\">");
    for (size_t k = 0; k < UFO_ARRAY_SIZE (labels); k++) {
        const ufo_value_t *list = ufo_value_map_get (knowledge, labels [k][0]);
        if (!list)
            continue;
        ufo_buf_puts (out, "<dt>");
        ufo_report_escs (out, labels [k][1]);
        ufo_buf_puts (out, "</dt><dd>");
        if (ufo_value_size (list) == 0)
            ufo_buf_puts (out, "<span class=\"muted\">nothing retrieved</span>");
        for (size_t i = 0; i < ufo_value_size (list); i++) {
            const ufo_value_t *e = ufo_value_list_at (list, i);
            const char *title = ufo_value_map_str (e, "title", NULL);
            const char *where = ufo_value_map_str (e, "source", NULL);
            if (!where)
                where = ufo_value_map_str (e, "url", "");
            ufo_buf_puts (out, "<div><b>");
            if (title)
                ufo_report_escs (out, title);
            else
                ufo_report_esc_value (out, ufo_value_map_get (e, "request"), 200);
            ufo_buf_puts (out, "</b> <span class=\"muted\">");
            ufo_report_escs (out, where);
            ufo_buf_puts (out, "</span><br>");
            const ufo_value_t *text = ufo_value_map_get (e, "text");
            if (!text)
                text = ufo_value_map_get (e, "snippet");
            ufo_report_esc_value (out, text ? text : e, 600);
            ufo_buf_puts (out, "</div>");
        }
        ufo_buf_puts (out, "</dd>");
    }
    ufo_buf_puts (out, "</dl></div>");
}

static void
s_step (s_report_t *self, const ufo_value_t *step, size_t index)
{
    ufo_buf_t *out = self->out;
    int64_t id = ufo_report_step_id (step, index);
    bool app = s_is_app (step);
    const char *status = ufo_value_map_str (step, "Status", "");
    ufo_buf_printf (out, "<details class=\"step %s\" id=\"step-%" PRId64 "\" data-agent=\"",
                    app ? "app" : "host", id);
    ufo_report_escs (out, s_agent_name (step));
    ufo_buf_puts (out, "\" data-status=\"");
    ufo_report_escs (out, status);
    ufo_buf_printf (out, "\"%s><summary><span class=\"stepno\">#%" PRId64 "</span>"
                    "<span class=\"agent%s\">", self->stats.steps <= S_OPEN_STEPS_MAX ? " open" : "",
                    id, app ? " app" : "");
    ufo_report_escs (out, s_agent_name (step));
    ufo_buf_puts (out, "</span>");
    s_status_badge (out, status);
    s_failed_mark (out, step);
    s_action_line (out, step, S_SUMMARY_MAX);
    ufo_buf_t control = {0};
    s_control_line (&control, step);
    if (control.len)
        ufo_buf_printf (out, "<span class=\"muted\">on %s</span>", control.data);
    ufo_buf_free (&control);
    ufo_buf_printf (out, "<span class=\"muted\">%.1f s &middot; $%.4f</span></summary>",
                    ufo_value_float (ufo_value_path (step, "time_cost.total")),
                    ufo_value_map_float (step, "Cost", 0));

    ufo_buf_puts (out, "<dl class=\"kv\">");
    s_kv (out, "Subtask", ufo_value_map_get (step, "Subtask"));
    if (!app)
        s_kv (out, "Next subtask", ufo_value_map_get (step, "CurrentSubtask"));
    s_kv (out, "Application", ufo_value_map_get (step, "Application"));
    s_kv (out, "Observation", ufo_value_map_get (step, "Observation"));
    s_kv (out, "Thought", ufo_value_map_get (step, "Thought"));
    s_kv (out, "Plan", ufo_value_map_get (step, "Plan"));
    s_kv (out, "Message", ufo_value_map_get (step, "Message"));
    s_kv (out, "Comment", ufo_value_map_get (step, "Comment"));
    if (*s_function (step)) {
        ufo_buf_puts (out, "<dt>Action</dt><dd>");
        s_action_line (out, step, 0);
        const char *type = ufo_value_map_str (step, "ActionType", "");
        if (*type) {
            ufo_buf_puts (out, " <span class=\"muted\">via ");
            ufo_report_escs (out, type);
            ufo_buf_puts (out, "</span>");
        }
        ufo_buf_puts (out, "</dd>");
    }
    s_kv (out, "Bash", ufo_value_map_get (step, "Bash"));
    const ufo_value_t *log = ufo_value_map_get (step, "ControlLog");
    ufo_buf_t control_text = {0};
    s_control_line (&control_text, step);
    if (control_text.len) {
        ufo_buf_printf (out, "<dt>Control</dt><dd>%s", control_text.data);
        const ufo_value_t *rect = ufo_value_map_get (log, "rect");
        if (ufo_value_size (rect) == 4) {
            ufo_buf_puts (out, " <span class=\"muted\">at ");
            ufo_report_esc_value (out, rect, 100);
            ufo_buf_puts (out, "</span>");
        }
        ufo_buf_puts (out, "</dd>");
    }
    ufo_buf_free (&control_text);
    s_results (out, step);
    //  "Results" usually repeats the one action's result: shown once.
    const ufo_value_t *results = ufo_value_map_get (step, "Results");
    const ufo_value_t *outcomes = ufo_value_map_get (step, "ActionSuccess");
    const char *first = ufo_value_str (ufo_value_map_get (ufo_value_list_at (outcomes, 0), "result"));
    if (!(ufo_value_size (outcomes) == 1 && first && ufo_value_str (results)
          && strcmp (first, ufo_value_str (results)) == 0))
        s_kv (out, "Result", results);
    const char *error = ufo_value_map_str (step, "error", "");
    if (*error) {
        ufo_buf_puts (out, "<dt>Error</dt><dd class=\"err\">");
        ufo_report_escs (out, error);
        ufo_buf_puts (out, "</dd>");
    }
    const ufo_value_t *times = ufo_value_map_get (step, "time_cost");
    if (ufo_value_size (times) && ufo_value_type (times) == UFO_TMAP) {
        ufo_buf_puts (out, "<dt>Time</dt><dd class=\"muted\">");
        for (size_t i = 0; i < ufo_value_size (times); i++) {
            ufo_buf_puts (out, i ? " &middot; " : "");
            ufo_report_escs (out, ufo_value_map_key_at (times, i));
            ufo_buf_printf (out, " %.2f s", ufo_value_float (ufo_value_map_value_at (times, i)));
        }
        ufo_buf_puts (out, "</dd>");
    }
    const char *model = ufo_value_map_str (step, "Model", "");
    if (*model) {               //  the model that answered this step (a session's own, too)
        ufo_buf_puts (out, "<dt>Model</dt><dd>");
        ufo_report_escs (out, model);
        ufo_buf_puts (out, "</dd>");
    }
    const ufo_value_t *tokens = ufo_value_map_get (step, "Tokens");
    if (tokens)
        ufo_buf_printf (out, "<dt>LLM tokens</dt><dd class=\"muted\">%" PRId64 " prompt + %" PRId64
                        " completion</dd>", ufo_value_map_int (tokens, "prompt", 0),
                        ufo_value_map_int (tokens, "completion", 0));
    const ufo_value_t *save = ufo_value_map_get (step, "SaveScreenshot");
    if (ufo_value_map_bool (save, "save", false)) {
        ufo_buf_puts (out, "<dt>Screenshot kept</dt><dd>");
        ufo_report_esc_value (out, ufo_value_map_get (save, "reason"), 0);
        ufo_buf_puts (out, "</dd>");
    }
    s_kv (out, "Ended", ufo_value_map_get (step, "Timestamp"));
    s_other_fields (out, step);
    ufo_buf_puts (out, "</dl>");
    s_questions (out, step);
    s_confirm (out, step);
    s_knowledge (self, step);
    s_step_images (self, step, id);
    ufo_buf_puts (out, "</details>\n");
}

//  Evaluation block: verdict, reason, sub-scores.
static void
s_eval (ufo_buf_t *out, const ufo_value_t *eval)
{
    ufo_buf_puts (out, "<div class=\"eval\"><p class=\"verdict\">");
    ufo_report_verdict (out, ufo_value_map_str (eval, "complete", "unsure"));
    ufo_buf_puts (out, "</p>");
    const char *reason = ufo_value_map_str (eval, "reason", "");
    if (*reason) {
        ufo_buf_puts (out, "<p>");
        ufo_report_escs (out, reason);
        ufo_buf_puts (out, "</p>");
    }
    const ufo_value_t *scores = ufo_value_map_get (eval, "sub_scores");
    if (ufo_value_type (scores) == UFO_TMAP && ufo_value_size (scores)) {
        ufo_buf_puts (out, "<table class=\"scores\"><thead><tr><th></th><th>Sub-goal</th>"
                      "<th>Score</th></tr></thead><tbody>");
        for (size_t i = 0; i < ufo_value_size (scores); i++) {
            const char *score = ufo_value_str (ufo_value_map_value_at (scores, i));
            score = score ? score : "unsure";
            const char *icon = strcmp (score, "yes") == 0 ? "\xE2\x9C\x85"
                             : strcmp (score, "no") == 0 ? "\xE2\x9D\x8C" : "\xE2\x9D\x93";
            ufo_buf_printf (out, "<tr class=\"score\"><td class=\"icon\">%s</td><td>", icon);
            ufo_report_escs (out, ufo_value_map_key_at (scores, i));
            ufo_buf_puts (out, "</td><td>");
            ufo_report_escs (out, score);
            ufo_buf_puts (out, "</td></tr>");
        }
        ufo_buf_puts (out, "</tbody></table>");
    }
    const char *shots = ufo_value_map_str (eval, "screenshots", "");
    if (*shots) {
        ufo_buf_puts (out, "<p class=\"muted\">Screenshots judged: ");
        ufo_report_escs (out, shots);
        ufo_buf_printf (out, " &middot; cost $%.4f", ufo_value_map_float (eval, "Cost", 0));
        if (*ufo_value_map_str (eval, "model", "")) {
            ufo_buf_puts (out, " &middot; model ");
            ufo_report_escs (out, ufo_value_map_str (eval, "model", ""));
        }
        ufo_buf_puts (out, "</p>");
    }
    ufo_buf_puts (out, "</div>");
}

void
ufo_report_verdict (ufo_buf_t *out, const char *verdict)
{
    const char *icon = "\xE2\x9D\x93", *cls = "unsure";
    if (strcmp (verdict, "yes") == 0) {
        icon = "\xE2\x9C\x85";
        cls = "yes";
    }
    else
    if (strcmp (verdict, "no") == 0) {
        icon = "\xE2\x9D\x8C";
        cls = "no";
    }
    ufo_buf_printf (out, "<span class=\"verdict-%s\"><span class=\"icon\">%s</span> Complete: "
                    "<span class=\"status st-%s\">",
                    cls, icon, cls);
    ufo_report_escs (out, verdict);
    ufo_buf_puts (out, "</span></span>");
}

static void
s_round_finals (s_report_t *self, int64_t round)
{
    char name [96];
    bool any = false;
    for (int sub = 0; sub < 1000; sub++) {
        snprintf (name, sizeof name, "action_round_%" PRId64 "_sub_round_%d_final.png", round, sub);
        char *found = ufo_report_image_find (self, name);
        if (!found)
            break;
        if (!any)
            ufo_buf_puts (self->out, "<details><summary>Snapshots at the end of each subtask"
                          "</summary><div class=\"shots\">");
        any = true;
        char caption [64];
        snprintf (caption, sizeof caption, "End of subtask %d", sub);
        ufo_report_image (self, found, caption);
        free (found);
    }
    if (any)
        ufo_buf_puts (self->out, "</div></details>");
    snprintf (name, sizeof name, "action_round_%" PRId64 "_final.png", round);
    char *found = ufo_report_image_find (self, name);
    if (found) {
        ufo_buf_puts (self->out, "<div class=\"shots\">");
        ufo_report_image (self, found, "End of the round");
        ufo_buf_puts (self->out, "</div>");
        free (found);
    }
}

void
ufo_report_rounds (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_value_t *requests = ufo_value_map_get (self->request, "requests");
    for (size_t r = 0; r < ufo_value_size (self->rounds); r++) {
        int64_t round = ufo_value_int (ufo_value_list_at (self->rounds, r));
        size_t count = 0;
        const char *last_status = "";
        const ufo_value_t *request = ufo_value_list_at (requests, (size_t) round);
        for (size_t i = 0; i < ufo_value_size (self->steps); i++) {
            const ufo_value_t *step = ufo_value_list_at (self->steps, i);
            if (ufo_value_map_int (step, "Round", 0) != round)
                continue;
            count++;
            last_status = ufo_value_map_str (step, "Status", "");
            if (!request)
                request = ufo_value_map_get (step, "Request");
        }
        ufo_buf_printf (out, "<details class=\"round\" id=\"round-%" PRId64 "\" open><summary>"
                        "Round %" PRId64 ": ", round, round);
        if (request)
            ufo_report_esc_value (out, request, 160);
        ufo_buf_printf (out, " <small class=\"muted\">%zu step%s</small> ", count,
                        count == 1 ? "" : "s");
        if (count)
            s_status_badge (out, last_status);
        ufo_buf_puts (out, "</summary>\n");
        const char *subtask = NULL;
        for (size_t i = 0; i < ufo_value_size (self->steps); i++) {
            const ufo_value_t *step = ufo_value_list_at (self->steps, i);
            if (ufo_value_map_int (step, "Round", 0) != round)
                continue;
            const char *st = ufo_value_map_str (step, "Subtask", "");
            if (s_is_app (step) && *st && (!subtask || strcmp (st, subtask) != 0)) {
                ufo_buf_puts (out, "<div class=\"subtask\">Subtask: ");
                ufo_report_escs (out, st);
                const char *application = ufo_value_map_str (step, "Application", "");
                if (*application) {
                    ufo_buf_puts (out, " <span class=\"muted\">in ");
                    ufo_report_escs (out, application);
                    ufo_buf_puts (out, "</span>");
                }
                ufo_buf_puts (out, "</div>\n");
            }
            if (s_is_app (step))
                subtask = st;
            else
                subtask = NULL;
            s_step (self, step, i);
        }
        if (count == 0)
            ufo_buf_puts (out, "<p class=\"missing\">No step of this round was logged.</p>");
        s_round_finals (self, round);
        for (size_t i = 0; i < ufo_value_size (self->evals); i++) {
            const ufo_value_t *eval = ufo_value_list_at (self->evals, i);
            if (strcmp (ufo_value_map_str (eval, "level", ""), "round") == 0
            &&  ufo_value_map_int (eval, "Round", 0) == round) {
                ufo_buf_printf (out, "<h3>Evaluation of round %" PRId64 "</h3>", round);
                s_eval (out, eval);
            }
        }
        ufo_buf_puts (out, "</details>\n");
    }
}

static void
s_memory_item (s_report_t *self, const ufo_value_t *item)
{
    ufo_buf_t *out = self->out;
    if (ufo_value_type (item) != UFO_TMAP) {
        ufo_report_esc_value (out, item, 0);
        return;
    }
    ufo_buf_puts (out, "<dl class=\"kv\">");
    for (size_t i = 0; i < ufo_value_size (item); i++) {
        const char *key = ufo_value_map_key_at (item, i);
        const ufo_value_t *value = ufo_value_map_value_at (item, i);
        if (strcmp (key, "image_str") == 0) {
            ufo_buf_puts (out, "<dt>image</dt><dd>");
            if (ufo_report_image_data_url (self, ufo_value_str (value), "Blackboard screenshot") < 0)
                ufo_buf_printf (out, "<span class=\"missing\">not a base64 image (%zu bytes)</span>",
                                ufo_value_strlen (value));
            ufo_buf_puts (out, "</dd>");
            continue;
        }
        ufo_buf_puts (out, "<dt>");
        ufo_report_escs (out, key);
        ufo_buf_puts (out, "</dt><dd>");
        if (ufo_value_type (value) == UFO_TMAP || ufo_value_type (value) == UFO_TLIST) {
            char *json = ufo_json_dump (value, UFO_JSON_PRETTY, NULL);
            ufo_buf_puts (out, "<pre>");
            ufo_report_escs (out, json);
            ufo_buf_puts (out, "</pre>");
            free (json);
        }
        else
            ufo_report_esc_value (out, value, 0);
        ufo_buf_puts (out, "</dd>");
    }
    ufo_buf_puts (out, "</dl>");
}

void
ufo_report_blackboard (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_buf_puts (out, "<section id=\"blackboard\"><h2>Blackboard at the end</h2>");
    if (!self->blackboard) {
        ufo_buf_puts (out, "<p class=\"muted\">No blackboard.json in the log directory.</p></section>\n");
        return;
    }
    static const char *titles [][2] = {
        { "questions", "Questions &amp; answers" }, { "requests", "Request history" },
        { "trajectories", "Step trajectories" }, { "screenshots", "Screenshots" }
    };
    for (size_t m = 0; m < ufo_value_size (self->blackboard); m++) {
        const char *key = ufo_value_map_key_at (self->blackboard, m);
        const ufo_value_t *memory = ufo_value_map_value_at (self->blackboard, m);
        const char *title = NULL;
        for (size_t t = 0; t < UFO_ARRAY_SIZE (titles) && !title; t++)
            if (strcmp (key, titles [t][0]) == 0)
                title = titles [t][1];
        size_t n = ufo_value_type (memory) == UFO_TLIST ? ufo_value_size (memory) : 0;
        ufo_buf_printf (out, "<details class=\"memory\"%s><summary><strong>",
                        n > 0 && n <= 10 ? " open" : "");
        if (title)
            ufo_buf_puts (out, title);
        else
            ufo_report_escs (out, key);
        ufo_buf_printf (out, "</strong> <small class=\"muted\">%zu item%s</small></summary>",
                        n, n == 1 ? "" : "s");
        if (ufo_value_type (memory) != UFO_TLIST) {
            ufo_buf_puts (out, "<pre>");
            ufo_report_esc_value (out, memory, 4000);
            ufo_buf_puts (out, "</pre>");
        }
        else {
            ufo_buf_puts (out, "<ol start=\"0\">");
            for (size_t i = 0; i < n; i++) {
                ufo_buf_puts (out, "<li>");
                s_memory_item (self, ufo_value_list_at (memory, i));
                ufo_buf_puts (out, "</li>");
            }
            ufo_buf_puts (out, "</ol>");
        }
        ufo_buf_puts (out, "</details>");
    }
    ufo_buf_puts (out, "</section>\n");
}

const ufo_value_t *
ufo_report_session_eval (s_report_t *self)
{
    //  the latest verdict that is not a failed evaluation (an unreachable model, no usable
    //  answer): a failed re-evaluation never replaces a good one; only failures: the latest
    const ufo_value_t *found = NULL, *failed = NULL;
    for (size_t i = 0; i < ufo_value_size (self->evals); i++) {
        const ufo_value_t *eval = ufo_value_list_at (self->evals, i);
        if (strcmp (ufo_value_map_str (eval, "level", "session"), "round") == 0)
            continue;
        if (*ufo_value_map_str (eval, "error", ""))
            failed = eval;
        else
            found = eval;
    }
    if (!found)
        found = failed;
    const ufo_value_t *from_session = ufo_value_map_get (self->session, "evaluation");
    if (!found && ufo_value_type (from_session) == UFO_TMAP)
        found = from_session;
    return found;
}

void
ufo_report_evaluations (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_buf_puts (out, "<section id=\"evaluation\"><h2>Evaluation</h2>");
    size_t shown = 0;
    for (size_t i = 0; i < ufo_value_size (self->evals); i++) {
        const ufo_value_t *eval = ufo_value_list_at (self->evals, i);
        if (strcmp (ufo_value_map_str (eval, "level", "session"), "round") == 0)
            continue;
        //  every verdict, with when and by whom; a failed evaluation says so and counts for nothing
        const char *error = ufo_value_map_str (eval, "error", "");
        ufo_buf_puts (out, *error ? "<h3 class=\"failed-eval\">Session <small class=\"err\">failed evaluation, "
                      "kept apart</small>" : "<h3>Session");
        const char *by = ufo_value_map_str (eval, "by", "");
        const char *when = ufo_value_map_str (eval, "Timestamp", "");
        if (*by || *when) {
            ufo_buf_puts (out, " <small class=\"muted\">");
            ufo_report_escs (out, by);
            ufo_buf_puts (out, *by && *when ? ", " : "");
            ufo_report_escs (out, when);
            ufo_buf_puts (out, "</small>");
        }
        ufo_buf_puts (out, "</h3>");
        if (*error) {
            ufo_buf_puts (out, "<p class=\"err\">");
            ufo_report_escs (out, error);
            ufo_buf_puts (out, "</p>");
            shown++;
            continue;
        }
        s_eval (out, eval);
        shown++;
    }
    const ufo_value_t *from_session = ufo_value_map_get (self->session, "evaluation");
    if (shown == 0 && ufo_value_type (from_session) == UFO_TMAP) {
        ufo_buf_puts (out, "<h3>Session <small class=\"muted\">(from session.json)</small></h3>");
        s_eval (out, from_session);
        shown++;
    }
    for (size_t i = 0; i < ufo_value_size (self->evals); i++) {
        const ufo_value_t *eval = ufo_value_list_at (self->evals, i);
        if (strcmp (ufo_value_map_str (eval, "level", "session"), "round") != 0)
            continue;
        //  The round's own section has the sub-scores; here one line per round.
        int64_t round = ufo_value_map_int (eval, "Round", 0);
        ufo_buf_printf (out, "<p class=\"round-eval\"><a href=\"#round-%" PRId64 "\">Round %"
                        PRId64 "</a>: ", round, round);
        ufo_report_verdict (out, ufo_value_map_str (eval, "complete", "unsure"));
        ufo_buf_puts (out, " <span class=\"muted\">");
        ufo_report_esc_value (out, ufo_value_map_get (eval, "reason"), 200);
        ufo_buf_puts (out, "</span></p>");
        shown++;
    }
    if (shown == 0)
        ufo_buf_puts (out, "<p class=\"muted\">The session was not evaluated (no evaluation.log).</p>");
    ufo_buf_puts (out, "</section>\n");
}
