/*  host_step.c - one HostAgent step in state CONTINUE: look at the desktop (screenshot and
    labelled application windows), build the prompt (request, windows, launchers, previous
    subtasks, plan, tips, memory, blackboard), ask the LLM, act on the decision (select a
    window for ASSIGN, run an allow-listed launcher for Bash, call an API tool of an MCP
    server configured for the HostAgent for Function), and log the step. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "host_int.h"
#include "ufo_mcp_hub.h"

#define S_MEMORY_MAX 20         //  HostAgent memory items kept for the prompt

static const char *s_state_names [] = { "CONTINUE", "ASSIGN", "PENDING", "FINISH", "FAIL", "ERROR" };

const char *
host_state_name (host_state_t state)
{
    return (unsigned) state < UFO_ARRAY_SIZE (s_state_names) ? s_state_names [state] : "ERROR";
}

int
host_state_parse (const char *status)
{
    for (size_t i = 0; status && i < UFO_ARRAY_SIZE (s_state_names); i++)
        if (strcmp (status, s_state_names [i]) == 0)
            return (int) i;
    return -1;
}

char *
host_data_url (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    ufo_buf_t raw = { 0 };
    char chunk [65536];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
        ufo_buf_append (&raw, chunk, n);
    fclose (f);
    ufo_buf_t out = { 0 };
    ufo_buf_puts (&out, "data:image/png;base64,");
    ufo_buf_base64 (&out, raw.data, raw.len);
    ufo_buf_free (&raw);
    return ufo_buf_detach (&out, NULL);
}

//  A copy of the messages with every image data URL replaced by a name, for request.log:
//  the last image of a message is the desktop screenshot, earlier ones are blackboard images.
static ufo_value_t *
s_elide_images (const ufo_value_t *messages, const char *shot_name)
{
    ufo_value_t *copy = ufo_value_dup (messages);
    for (size_t i = 0; i < ufo_value_size (copy); i++) {
        ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (copy, i), "content");
        if (ufo_value_type (content) != UFO_TLIST)
            continue;
        size_t last = SIZE_MAX;
        for (size_t k = 0; k < ufo_value_size (content); k++)
            if (ufo_value_map_get (ufo_value_list_at (content, k), "image_url"))
                last = k;
        for (size_t k = 0; k < ufo_value_size (content); k++) {
            ufo_value_t *image = ufo_value_map_get (ufo_value_list_at (content, k), "image_url");
            const char *url = ufo_value_map_str (image, "url", NULL);
            if (url && strncmp (url, "data:", 5) == 0)
                ufo_value_map_set_str (image, "url", k == last && shot_name ? shot_name
                                                                            : "(blackboard image)");
        }
    }
    return copy;
}

//  The window of the list whose label (or, failing that, title) the decision names.
static const ufo_value_t *
s_find_window (const ufo_value_t *windows, const char *label, const char *title)
{
    for (size_t i = 0; label && *label && i < ufo_value_size (windows); i++) {
        const ufo_value_t *w = ufo_value_list_at (windows, i);
        if (strcmp (ufo_value_map_str (w, "label", ""), label) == 0)
            return w;
    }
    for (size_t i = 0; title && *title && i < ufo_value_size (windows); i++) {
        const ufo_value_t *w = ufo_value_list_at (windows, i);
        if (strcmp (ufo_value_map_str (w, "title", ""), title) == 0)
            return w;
    }
    return NULL;
}

static ufo_value_t *
s_vars (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    ufo_value_t *vars = ufo_value_new_map ();
    ufo_value_map_set_str (vars, "request", self->request);
    ufo_value_t *windows = ufo_value_map_set (vars, "windows", &(ufo_value_t *) { ufo_value_new_list () });
    for (size_t i = 0; i < ufo_value_size (self->windows); i++) {
        const ufo_value_t *w = ufo_value_list_at (self->windows, i);
        ufo_value_t *item = ufo_value_new_map ();
        ufo_value_map_set_str (item, "label", ufo_value_map_str (w, "label", ""));
        ufo_value_map_set_str (item, "title", ufo_value_map_str (w, "title", ""));
        ufo_value_map_set_str (item, "application", ufo_value_map_str (w, "name", ""));
        ufo_value_list_push (windows, &item);
    }
    ufo_value_map_set (vars, "launchers", &(ufo_value_t *) {
        cfg->launchers ? ufo_value_dup (cfg->launchers) : ufo_value_new_list () });
    ufo_value_map_set_copy (vars, "previous_subtasks", self->previous);
    ufo_buf_t tips = { 0 };
    if (cfg->plan && ufo_value_size (cfg->plan) > 0 && self->round == 0) {
        //  follower mode: the plan is given; the model only picks the window
        ufo_value_t *rest = ufo_value_new_list ();
        for (size_t i = (size_t) self->follow_index + 1; i < ufo_value_size (cfg->plan); i++)
            ufo_value_list_push_str (rest, ufo_value_str (ufo_value_list_at (cfg->plan, i)));
        ufo_value_map_set (vars, "plan", &rest);
        const char *current = ufo_value_str (ufo_value_list_at (cfg->plan, (size_t) self->follow_index));
        if (current)
            ufo_buf_printf (&tips, "Follow the given plan. The current subtask is: \"%s\". Use it as "
                            "\"CurrentSubtask\" and select (or launch) the application window for it.\n",
                            current);
    }
    else
        ufo_value_map_set_copy (vars, "plan", self->plan);
    for (size_t i = 0; i < ufo_value_size (self->tips); i++)
        ufo_buf_printf (&tips, "%s\n", ufo_value_str (ufo_value_list_at (self->tips, i)));
    ufo_value_map_set (vars, "tips", &(ufo_value_t *) { ufo_value_new_stringn (tips.data ? tips.data : "", tips.len) });
    ufo_buf_free (&tips);
    if (self->experience)
        ufo_value_map_set_copy (vars, "experience_examples", self->experience);
    if (self->online)
        ufo_value_map_set_copy (vars, "online_docs", self->online);
    if (self->ops->mcp) {           //  API tools of the MCP servers configured for the HostAgent
        ufo_value_t *tools = self->ops->mcp (self->ops->arg, NULL, NULL, NULL);
        if (ufo_value_size (tools) > 0)
            ufo_value_map_set (vars, "api_tools", &tools);
        ufo_value_destroy (&tools);
    }
    return vars;
}

//  Builds the chat messages of this step. NULL with err.
static ufo_value_t *
s_messages (host_t *self, const char *url, ufo_error_t *err)
{
    ufo_value_t *vars = s_vars (self);
    ufo_value_t *images = ufo_value_new_list ();
    if (url) {
        ufo_value_t *image = ufo_value_new_map ();
        ufo_value_map_set_str (image, "label", "Desktop screenshot:");
        ufo_value_map_set_str (image, "url", url);
        ufo_value_list_push (images, &image);
    }
    ufo_value_t *parts = NULL;
    ufo_error_t board_err = { 0 };
    ufo_value_t *map = NULL;
    if (self->ops->board_prompt) {
        parts = self->ops->board_prompt (self->ops->arg, &board_err);
    }
    else
        map = self->ops->board_get (self->ops->arg, &board_err);
    if (map) {
        ufo_board_t *board = ufo_board_new ();
        if (ufo_board_from_map (board, map, &board_err) == 0 && !ufo_board_is_empty (board))
            parts = ufo_board_to_prompt (board);
        ufo_board_destroy (&board);
        ufo_value_destroy (&map);
    }
    if (board_err.code)
        ufo_warn ("host: blackboard not in the prompt: %s", board_err.message);
    ufo_prompt_input_t in = { .schema = UFO_SCHEMA_HOST, .visual = self->cfg->visual, .vars = vars,
                              .images = images, .blackboard = parts, .memory = self->memory };
    ufo_value_t *messages = ufo_prompt_messages (self->cfg->prompts, &in, err);
    ufo_value_destroy (&vars);
    ufo_value_destroy (&images);
    ufo_value_destroy (&parts);
    return messages;
}

static void
s_action_result (ufo_value_t *record, bool success, const char *result, const char *error)
{
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *one = ufo_value_new_map ();
    ufo_value_map_set_bool (one, "success", success);
    ufo_value_map_set_str (one, "result", result ? result : "");
    ufo_value_map_set_str (one, "error", error ? error : "");
    ufo_value_list_push (list, &one);
    ufo_value_map_set (record, "ActionSuccess", &list);
}

void
host_step_remember (host_t *self, const ufo_value_t *record)
{
    static const char *keys [] = { "Step", "Round", "CurrentSubtask", "ControlText", "Status", "Bash",
                                   "Comment", "Results" };
    ufo_value_t *item = ufo_value_new_map ();
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        const ufo_value_t *v = ufo_value_map_get (record, keys [i]);
        if (v && !(ufo_value_type (v) == UFO_TSTRING && ufo_value_strlen (v) == 0))
            ufo_value_map_set_copy (item, keys [i], v);
    }
    ufo_value_list_push (self->memory, &item);
    while (ufo_value_size (self->memory) > S_MEMORY_MAX)
        ufo_value_list_remove (self->memory, 0);
}

host_state_t
host_step_run (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    const host_ops_t *ops = self->ops;
    double t0 = ufo_time_mono_s ();
    ufo_cost_next_step (&self->cost);
    char shot_name [64], shot_path [4096];
    snprintf (shot_name, sizeof shot_name, "desktop_step%" PRId64 ".png", self->step);
    ufo_tasklog_path (self->log, shot_name, shot_path, sizeof shot_path);

    ufo_value_t *record = ufo_value_new_map ();
    host_state_t next = HOST_ERROR;
    char error [512] = "";
    char *url = NULL;
    ufo_value_t *messages = NULL;
    ufo_llm_response_t *resp = NULL;
    ufo_error_t err = { 0 };
    double t_shot = t0, t_prompt = t0, t_llm = t0;

    ufo_value_destroy (&self->windows);
    self->windows = ops->windows (ops->arg, shot_path, cfg->visual ? &url : NULL, &err);
    t_shot = ufo_time_mono_s ();
    if (!self->windows) {
        snprintf (error, sizeof error, "desktop: %s", err.message);
        self->windows = ufo_value_new_list ();
        shot_name [0] = 0;
    }
    else if (access (shot_path, F_OK) != 0)
        shot_name [0] = 0;
    if (!*error) {
        messages = s_messages (self, url, &err);
        if (!messages)
            snprintf (error, sizeof error, "prompt: %s", err.message);
    }
    t_prompt = ufo_time_mono_s ();
    if (!*error) {
        ufo_llm_opts_t opts = { .agent = "HostAgent", .step = self->step, .schema = UFO_SCHEMA_HOST,
                                .json_retry = cfg->json_retry };
        resp = ops->ask (ops->arg, messages, &opts, &err);
        if (!resp)
            snprintf (error, sizeof error, "llm: %s", err.message);
        else {
            ufo_cost_add (&self->cost, resp->cost, resp->prompt_tokens, resp->completion_tokens);
            if (resp->code != UFO_OK || !resp->decision)
                snprintf (error, sizeof error, "llm: %s", resp->error ? resp->error : "no decision");
        }
    }
    t_llm = ufo_time_mono_s ();
    free (url);

    //  the model's own fields first, as the original logs them
    const ufo_value_t *decision = resp && !*error ? resp->decision : NULL;
    for (size_t i = 0; i < ufo_value_size (decision); i++)
        ufo_value_map_set_copy (record, ufo_value_map_key_at (decision, i), ufo_value_map_value_at (decision, i));
    const char *status = ufo_value_map_str (decision, "Status", "ERROR");
    const char *subtask = ufo_value_map_str (decision, "CurrentSubtask", "");
    const char *bash = ufo_value_map_str (decision, "Bash", "");
    const char *application = "";
    const char *function = "";
    const char *action_type = "Host";
    bool success = true;
    char result [512] = "";
    char action_error [512] = "";
    int parsed = host_state_parse (status);
    next = *error ? HOST_ERROR : parsed < 0 ? HOST_ERROR : (host_state_t) parsed;
    if (!*error && parsed < 0)
        snprintf (error, sizeof error, "unknown Status \"%s\"", status);
    ufo_value_destroy (&self->tips);
    self->tips = ufo_value_new_list ();

    const char *tool = ufo_value_map_str (decision, "Function", "");
    const ufo_value_t *tool_args = ufo_value_map_get (decision, "Args");
    if (next == HOST_CONTINUE && ops->mcp && ufo_mcp_hub_is_tool_name (tool)) {
        //  an API tool of an MCP server configured for the HostAgent: its result is the
        //  step's result, and the next prompt's tip
        function = tool;
        action_type = "MCP";
        ufo_error_t merr = { 0 };
        ufo_value_t *r = ops->mcp (ops->arg, tool, ufo_value_type (tool_args) == UFO_TMAP ? tool_args : NULL, &merr);
        success = r && ufo_value_map_bool (r, "success", false);
        const char *text = ufo_value_map_str (r, "text", "");
        if (success)
            snprintf (result, sizeof result, "%s", text);
        else
            snprintf (action_error, sizeof action_error, "%s",
                      r ? ufo_value_map_str (r, "error", *text ? text : "failed") : merr.message);
        ufo_value_list_push (self->tips, &(ufo_value_t *) { success
            ? ufo_value_new_stringf ("The API tool %s returned: %s", tool, result)
            : ufo_value_new_stringf ("The API tool %s failed: %s", tool, action_error) });
        ufo_value_destroy (&r);
    }
    else if (next == HOST_CONTINUE && *bash) {
        function = "Bash";
        action_type = "Bash";
        ufo_error_t lerr = { 0 };
        int pid = ops->launch (ops->arg, bash, &lerr);
        success = pid > 0;
        if (success)
            snprintf (result, sizeof result, "launched \"%s\" (pid %d)", bash, pid);
        else {
            snprintf (action_error, sizeof action_error, "%s", lerr.message);
            ufo_value_list_push (self->tips, &(ufo_value_t *) {
                ufo_value_new_stringf ("Bash \"%s\" was refused: %s", bash, lerr.message) });
        }
    }
    else if (next == HOST_ASSIGN) {
        function = "select_application_window";
        const char *label = ufo_value_map_str (decision, "ControlLabel", "");
        const ufo_value_t *w = s_find_window (self->windows, label,
                                              ufo_value_map_str (decision, "ControlText", ""));
        bool follower = cfg->plan && self->round == 0
                        && self->follow_index < (int64_t) ufo_value_size (cfg->plan);
        if (follower)
            subtask = ufo_value_str (ufo_value_list_at (cfg->plan, (size_t) self->follow_index));
        if (!*subtask)
            subtask = self->request;
        if (w && !*ufo_value_map_str (w, "name", "")) {
            //  no application name (no WM_CLASS): no AppAgent service can be named for it
            success = false;
            snprintf (action_error, sizeof action_error, "window \"%s\" has no application name", label);
            ufo_value_list_push (self->tips, &(ufo_value_t *) {
                ufo_value_new_stringf ("The window with label \"%s\" belongs to no known application and cannot "
                                       "be assigned; choose another window or launch the application.", label) });
            next = HOST_CONTINUE;
        }
        else if (!w) {
            success = false;
            snprintf (action_error, sizeof action_error, "no window with label \"%s\" in the list", label);
            ufo_value_list_push (self->tips, &(ufo_value_t *) {
                ufo_value_new_stringf ("Your last choice (label \"%s\") is not in the window list; choose "
                                       "a label from the list or launch the application.", label) });
            next = HOST_CONTINUE;
        }
        else {
            application = ufo_value_map_str (w, "name", "");
            free (self->subtask);
            self->subtask = ufo_strdup (subtask);
            free (self->application);
            self->application = ufo_strdup (application);
            ufo_value_destroy (&self->window);
            self->window = ufo_value_new_map ();
            ufo_value_map_set_str (self->window, "title", ufo_value_map_str (w, "title", ""));
            ufo_value_map_set_int (self->window, "pid", ufo_value_map_int (w, "pid", 0));
            ufo_value_map_set_int (self->window, "xid", ufo_value_map_int (w, "xid", 0));
            ufo_value_destroy (&self->messages);
            self->messages = ufo_value_dup (ufo_value_map_get (decision, "Message"));
            if (ufo_value_type (self->messages) != UFO_TLIST) {
                ufo_value_destroy (&self->messages);
                self->messages = ufo_value_new_list ();
            }
            snprintf (result, sizeof result, "assigned to %s (window \"%s\")", application,
                      ufo_value_map_str (w, "title", ""));
            ufo_value_map_set_str (record, "CurrentSubtask", subtask);
        }
    }
    else if (next == HOST_PENDING) {
        function = "ask_user";
        ufo_value_t *answers = host_pending_ask (self, ufo_value_map_get (decision, "Questions"));
        ufo_value_map_set (record, "Answers", &answers);
    }
    if (decision) {
        ufo_value_destroy (&self->plan);
        self->plan = ufo_value_dup (ufo_value_map_get (decision, "Plan"));
        if (ufo_value_type (self->plan) != UFO_TLIST) {
            ufo_value_destroy (&self->plan);
            self->plan = ufo_value_new_list ();
        }
    }
    if (*error) {
        next = HOST_ERROR;
        snprintf (self->error, sizeof self->error, "%s", error);
        ufo_value_map_set_str (record, "Status", "ERROR");
        success = false;            //  an ERROR step did not do what it was for
        if (!*action_error)
            snprintf (action_error, sizeof action_error, "%s", error);
    }

    double t_end = ufo_time_mono_s ();
    ufo_value_map_set_int (record, "Step", self->step);
    ufo_value_map_set_int (record, "RoundStep", self->round_step);
    ufo_value_map_set_int (record, "AgentStep", self->agent_step);
    ufo_value_map_set_int (record, "Round", self->round);
    ufo_value_map_set_str (record, "Subtask", next == HOST_ASSIGN ? subtask : "");
    ufo_value_map_set_int (record, "SubtaskIndex", next == HOST_ASSIGN ? self->subtask_index + 1
                                                                       : self->subtask_index);
    ufo_value_map_set_str (record, "FunctionCall", function);
    ufo_value_t *action = ufo_value_new_map ();
    ufo_value_map_set_str (action, "function", function);
    ufo_value_t *args = ufo_value_map_set (action, "args", &(ufo_value_t *) { ufo_value_new_map () });
    if (*bash && strcmp (function, "Bash") == 0)
        ufo_value_map_set_str (args, "command", bash);
    else if (strcmp (action_type, "MCP") == 0 && ufo_value_type (tool_args) == UFO_TMAP)
        ufo_value_map_set_copy (action, "args", tool_args);
    ufo_value_map_set_str (action, "control_label", ufo_value_map_str (decision, "ControlLabel", ""));
    ufo_value_map_set_str (action, "control_text", ufo_value_map_str (decision, "ControlText", ""));
    ufo_value_map_set_str (action, "control_type", next == HOST_ASSIGN ? "Window" : "");
    ufo_value_map_set (record, "Action", &action);
    s_action_result (record, success, result, action_error);
    ufo_value_map_set_str (record, "ActionType", action_type);
    ufo_value_map_set_str (record, "Request", self->request);
    ufo_value_map_set_str (record, "Agent", "HostAgent");
    ufo_value_map_set_str (record, "AgentName", "HostAgent");
    ufo_value_map_set_str (record, "Application", application);
    ufo_value_map_set_float (record, "Cost", self->cost.step);
    ufo_value_map_set_str (record, "Model", resp && resp->model [0] ? resp->model : "");    //  who answered
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", self->cost.step_prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", self->cost.step_completion_tokens);
    ufo_value_map_set (record, "Tokens", &tokens);
    ufo_value_map_set_str (record, "Results", result);
    ufo_value_map_set_str (record, "error", error);
    ufo_value_t *tc = ufo_value_new_map ();
    ufo_value_map_set_float (tc, "screenshot", t_shot - t0);
    ufo_value_map_set_float (tc, "control_info", 0.0);
    ufo_value_map_set_float (tc, "prompt", t_prompt - t_shot);
    ufo_value_map_set_float (tc, "llm", t_llm - t_prompt);
    ufo_value_map_set_float (tc, "parse", 0.0);
    ufo_value_map_set_float (tc, "action", t_end - t_llm);
    ufo_value_map_set_float (tc, "total", t_end - t0);
    ufo_value_map_set (record, "time_cost", &tc);
    ufo_value_map_set (record, "ControlLog", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_str (record, "UserConfirm", "");
    if (!ufo_value_map_has (record, "Questions"))
        ufo_value_map_set (record, "Questions", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_value_map_set_str (record, "ScreenshotPath", shot_name);
    ufo_value_map_set_str (record, "AnnotatedScreenshotPath", "");
    ufo_value_map_set_str (record, "SelectedControlScreenshotPath", "");
    char now [40];
    ufo_time_iso (now);
    ufo_value_map_set_str (record, "Timestamp", now);

    ufo_error_t lerr = { 0 };
    if (ufo_tasklog_append (self->log, "response.log", record, &lerr) != 0)
        ufo_warn ("host: response.log: %s", lerr.message);
    if (messages) {
        ufo_value_t *req = ufo_value_new_map ();
        ufo_value_map_set_int (req, "Step", self->step);
        ufo_value_map_set_str (req, "Agent", "HostAgent");
        ufo_value_map_set_str (req, "AgentName", "HostAgent");
        ufo_value_map_set_int (req, "Round", self->round);
        ufo_value_map_set (req, "prompt", &(ufo_value_t *) { s_elide_images (messages, shot_name [0] ? shot_name : NULL) });
        ufo_value_map_set_str (req, "model", resp ? resp->model : "");
        if (self->experience)
            ufo_value_map_set_copy (req, "experience_examples", self->experience);
        if (self->online)
            ufo_value_map_set_copy (req, "online_docs", self->online);
        if (ufo_tasklog_append (self->log, "request.log", req, &lerr) != 0)
            ufo_warn ("host: request.log: %s", lerr.message);
        ufo_value_destroy (&req);
    }
    host_step_remember (self, record);

    //  progress: the step and the cost
    ufo_value_t *event = ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "step");
    //  redacted like the log line: the record may echo a key (model text, a Bash command)
    ufo_value_map_set (event, "record", &(ufo_value_t *) { ufo_tasklog_redact (self->log, record) });
    ops->progress (ops->arg, &event);
    event = ufo_value_new_map ();
    ufo_value_map_set_str (event, "kind", "cost");
    ufo_value_map_set_float (event, "step", self->cost.step);
    ufo_value_map_set_float (event, "round", self->cost.round);
    ufo_value_map_set_float (event, "session", self->cost.session);
    tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", self->cost.session_prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", self->cost.session_completion_tokens);
    ufo_value_map_set (event, "tokens", &tokens);
    ops->progress (ops->arg, &event);

    ufo_value_destroy (&self->decision);
    self->decision = decision ? ufo_value_dup (decision) : NULL;
    ufo_value_destroy (&record);
    ufo_value_destroy (&messages);
    ufo_llm_response_destroy (&resp);
    self->step++;
    self->round_step++;
    self->agent_step++;
    return next;
}
