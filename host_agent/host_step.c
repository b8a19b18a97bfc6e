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
#include "host_confirm.h"

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
    if (ufo_value_size (self->st.tools) > 0)      //  API tools of the HostAgent's MCP servers
        ufo_value_map_set_copy (vars, "api_tools", self->st.tools);
    return vars;
}

//  Builds the chat messages of this step (the blackboard's parts and the tools are in
//  self->st). NULL with err.
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
    ufo_prompt_input_t in = { .schema = UFO_SCHEMA_HOST, .visual = self->cfg->visual, .vars = vars,
                              .images = images, .blackboard = self->st.parts, .memory = self->memory };
    ufo_value_t *messages = ufo_prompt_messages (self->cfg->prompts, &in, err);
    ufo_value_destroy (&vars);
    ufo_value_destroy (&images);
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


#define S_PLACEHOLDER "no answer available, proceed"

void
host_step_clear (host_t *self)
{
    host_step_t *st = &self->st;
    free (st->url);
    ufo_value_destroy (&st->parts);
    ufo_value_destroy (&st->tools);
    ufo_value_destroy (&st->messages);
    ufo_llm_response_destroy (&st->resp);
    ufo_value_destroy (&st->record);
    free (st->subtask);
    free (st->application);
    ufo_value_destroy (&st->answers);
    ufo_value_destroy (&st->given);
    memset (st, 0, sizeof *st);
}

//  HP_STEP: look at the desktop.
static void
s_begin (host_t *self)
{
    host_step_t *st = &self->st;
    host_step_clear (self);
    st->t0 = st->t_shot = st->t_prompt = st->t_llm = ufo_time_mono_s ();
    ufo_cost_next_step (&self->cost);
    snprintf (st->shot_name, sizeof st->shot_name, "desktop_step%" PRId64 ".png", self->step);
    ufo_tasklog_path (self->log, st->shot_name, st->shot_path, sizeof st->shot_path);
    st->record = ufo_value_new_map ();
    st->next = HOST_ERROR;
    st->function = "";
    st->action_type = "Host";
    st->user_confirm = "";
    st->success = true;
    host_start (self, HP_STEP_WINDOWS);
    self->ops->windows (self->ops->arg, st->shot_path, self->cfg->visual);
}

//  HP_STEP_WINDOWS: the windows are known; the blackboard for the prompt.
static void
s_windows (host_t *self)
{
    host_step_t *st = &self->st;
    host_reply_t *reply = host_reply (self);
    st->t_shot = ufo_time_mono_s ();
    ufo_value_destroy (&self->windows);
    self->windows = reply->value;
    reply->value = NULL;
    st->url = reply->url;
    reply->url = NULL;
    if (ufo_value_type (self->windows) != UFO_TLIST) {
        snprintf (st->error, sizeof st->error, "desktop: %s", reply->err.message);
        ufo_value_destroy (&self->windows);
        self->windows = ufo_value_new_list ();
        st->shot_name [0] = 0;
        self->phase = HP_STEP_ASK;          //  no prompt, no model call: the step ends in ERROR
        return;
    }
    if (access (st->shot_path, F_OK) != 0)
        st->shot_name [0] = 0;
    host_start (self, HP_STEP_BOARD);
    if (self->ops->board_prompt)
        self->ops->board_prompt (self->ops->arg);
    else
        self->ops->board_get (self->ops->arg);
}

//  HP_STEP_BOARD: the blackboard's prompt parts; the API tools next.
static void
s_board (host_t *self)
{
    host_step_t *st = &self->st;
    host_reply_t *reply = host_reply (self);
    ufo_error_t board_err = reply->err;
    if (self->ops->board_prompt) {
        st->parts = reply->value;
        reply->value = NULL;
    }
    else if (reply->value) {
        ufo_board_t *board = ufo_board_new ();
        if (ufo_board_from_map (board, reply->value, &board_err) == 0 && !ufo_board_is_empty (board))
            st->parts = ufo_board_to_prompt (board);
        ufo_board_destroy (&board);
    }
    if (board_err.code)
        ufo_warn ("host: blackboard not in the prompt: %s", board_err.message);
    if (self->ops->mcp && !self->ops->cancelled (self->ops->arg)) {
        host_start (self, HP_STEP_TOOLS);
        self->ops->mcp (self->ops->arg, NULL, NULL);
    }
    else
        self->phase = HP_STEP_TOOLS;
}

//  HP_STEP_TOOLS: the prompt is made and the model asked.
static void
s_tools (host_t *self)
{
    host_step_t *st = &self->st;
    if (self->ops->mcp) {
        st->tools = host_reply (self)->value;
        host_reply (self)->value = NULL;
    }
    ufo_error_t err = { 0 };
    st->messages = s_messages (self, st->url, &err);
    st->t_prompt = ufo_time_mono_s ();
    if (!st->messages) {
        snprintf (st->error, sizeof st->error, "prompt: %s", err.message);
        self->phase = HP_STEP_ASK;
        return;
    }
    if (self->ops->cancelled (self->ops->arg)) {
        snprintf (st->error, sizeof st->error, "llm: session cancelled before the LLM call");
        self->phase = HP_STEP_ASK;
        return;
    }
    st->opts = (ufo_llm_opts_t) { .agent = "HostAgent", .step = self->step, .schema = UFO_SCHEMA_HOST,
                                  .json_retry = self->cfg->json_retry };
    host_start (self, HP_STEP_ASK);
    self->ops->ask (self->ops->arg, st->messages, &st->opts);
}

//  HP_STEP_ASK: the model's decision (or the step's error); the action starts.
static void
s_ask (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    host_step_t *st = &self->st;
    if (!*st->error) {
        host_reply_t *reply = host_reply (self);
        st->resp = reply->response;
        reply->response = NULL;
        if (!st->resp)
            snprintf (st->error, sizeof st->error, "llm: %s", reply->err.message);
        else {
            ufo_cost_add (&self->cost, st->resp->cost, st->resp->prompt_tokens, st->resp->completion_tokens);
            if (st->resp->code != UFO_OK || !st->resp->decision)
                snprintf (st->error, sizeof st->error, "llm: %s", st->resp->error ? st->resp->error : "no decision");
        }
        st->t_llm = ufo_time_mono_s ();
    }
    else
        st->t_llm = st->t_prompt = ufo_time_mono_s ();

    //  the model's own fields first, as the original logs them
    const ufo_value_t *decision = st->resp && !*st->error ? st->resp->decision : NULL;
    ufo_value_t *record = st->record;
    for (size_t i = 0; i < ufo_value_size (decision); i++)
        ufo_value_map_set_copy (record, ufo_value_map_key_at (decision, i), ufo_value_map_value_at (decision, i));
    const char *status = ufo_value_map_str (decision, "Status", "ERROR");
    const char *bash = ufo_value_map_str (decision, "Bash", "");
    int parsed = host_state_parse (status);
    st->next = *st->error ? HOST_ERROR : parsed < 0 ? HOST_ERROR : (host_state_t) parsed;
    if (!*st->error && parsed < 0)
        snprintf (st->error, sizeof st->error, "unknown Status \"%s\"", status);
    ufo_value_destroy (&self->tips);
    self->tips = ufo_value_new_list ();
    self->phase = HP_STEP_LOG;

    const char *tool = ufo_value_map_str (decision, "Function", "");
    const ufo_value_t *tool_args = ufo_value_map_get (decision, "Args");
    if (st->next == HOST_CONTINUE && self->ops->mcp && ufo_mcp_hub_is_tool_name (tool)) {
        //  an API tool of an MCP server configured for the HostAgent: its result is the
        //  step's result, and the next prompt's tip
        st->function = tool;
        st->action_type = "MCP";
        //  the confirmation policy first (host_confirm.h): decided now, or the user is asked
        //  and HP_STEP_CONFIRM takes the answer
        st->user_confirm = host_confirm_start (self, tool, ufo_value_type (tool_args) == UFO_TMAP ? tool_args : NULL,
                                               HP_STEP_CONFIRM);
        if (st->user_confirm)
            self->phase = HP_STEP_CONFIRM;
    }
    else if (st->next == HOST_CONTINUE && *bash) {
        st->function = "Bash";
        st->action_type = "Bash";
        host_start (self, HP_STEP_ACTED);
        self->ops->launch (self->ops->arg, bash);
    }
    else if (st->next == HOST_ASSIGN) {
        st->function = "select_application_window";
        const char *label = ufo_value_map_str (decision, "ControlLabel", "");
        const ufo_value_t *w = s_find_window (self->windows, label,
                                              ufo_value_map_str (decision, "ControlText", ""));
        const char *subtask = ufo_value_map_str (decision, "CurrentSubtask", "");
        bool follower = cfg->plan && self->round == 0
                        && self->follow_index < (int64_t) ufo_value_size (cfg->plan);
        if (follower)
            subtask = ufo_value_str (ufo_value_list_at (cfg->plan, (size_t) self->follow_index));
        if (!*subtask)
            subtask = self->request;
        st->subtask = ufo_strdup (subtask);
        if (w && !*ufo_value_map_str (w, "name", "")) {
            //  no application name (no WM_CLASS): no AppAgent service can be named for it
            st->success = false;
            snprintf (st->action_error, sizeof st->action_error, "window \"%s\" has no application name", label);
            ufo_value_list_push (self->tips, &(ufo_value_t *) {
                ufo_value_new_stringf ("The window with label \"%s\" belongs to no known application and cannot "
                                       "be assigned; choose another window or launch the application.", label) });
            st->next = HOST_CONTINUE;
        }
        else if (!w) {
            st->success = false;
            snprintf (st->action_error, sizeof st->action_error, "no window with label \"%s\" in the list", label);
            ufo_value_list_push (self->tips, &(ufo_value_t *) {
                ufo_value_new_stringf ("Your last choice (label \"%s\") is not in the window list; choose "
                                       "a label from the list or launch the application.", label) });
            st->next = HOST_CONTINUE;
        }
        else {
            const char *application = ufo_value_map_str (w, "name", "");
            st->application = ufo_strdup (application);
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
            snprintf (st->result, sizeof st->result, "assigned to %s (window \"%s\")", application,
                      ufo_value_map_str (w, "title", ""));
            ufo_value_map_set_str (record, "CurrentSubtask", subtask);
        }
    }
    else if (st->next == HOST_PENDING) {
        //  the Questions go to the user (or get the placeholder answer); each pair goes to
        //  the blackboard and into the next prompt, and the answers into this step's record
        st->function = "ask_user";
        const ufo_value_t *questions = ufo_value_map_get (decision, "Questions");
        st->given = ufo_value_new_list ();
        self->phase = HP_STEP_ANSWERS;
        if (cfg->interactive && ufo_value_size (questions) > 0 && !self->ops->cancelled (self->ops->arg)) {
            ufo_value_t *event = ufo_value_new_map ();
            ufo_value_map_set_str (event, "kind", "question");
            ufo_value_map_set (event, "qid", &(ufo_value_t *) {
                ufo_value_new_stringf ("%s-host-%" PRId64, cfg->session, self->step) });
            ufo_value_map_set_str (event, "from", "HostAgent");
            ufo_value_map_set (event, "questions", &(ufo_value_t *) { host_str_list (questions) });
            st->asked = true;
            host_start (self, HP_STEP_ANSWERS);
            self->ops->ask_user (self->ops->arg, &event);
        }
    }
}

//  The outcome of the API tool call (r, or NULL with error): the step's result and the next
//  prompt's tip.
static void
s_tool_result (host_t *self, const ufo_value_t *r, const char *error)
{
    host_step_t *st = &self->st;
    const char *tool = st->function;
    st->success = r && ufo_value_map_bool (r, "success", false);
    const char *text = ufo_value_map_str (r, "text", "");
    if (st->success)
        snprintf (st->result, sizeof st->result, "%s", text);
    else
        snprintf (st->action_error, sizeof st->action_error, "%s",
                  r ? ufo_value_map_str (r, "error", *text ? text : "failed") : error);
    ufo_value_list_push (self->tips, &(ufo_value_t *) { st->success
        ? ufo_value_new_stringf ("The API tool %s returned: %s", tool, st->result)
        : ufo_value_new_stringf ("The API tool %s failed: %s", tool, st->action_error) });
}

//  HP_STEP_CONFIRM: the API tool is called when the confirmation policy lets it (decided in
//  HP_STEP_ASK, or the user's answer to the question asked there); a refused call is not made.
static void
s_confirm (host_t *self)
{
    host_step_t *st = &self->st;
    const char *tool = st->function;
    if (!st->user_confirm)
        st->user_confirm = host_confirm_answer (self, tool);
    self->phase = HP_STEP_LOG;
    if (strcmp (st->user_confirm, "no") == 0) {
        ufo_value_t *refused = host_confirm_refused (tool);
        s_tool_result (self, refused, NULL);
        ufo_value_destroy (&refused);
        return;
    }
    if (self->ops->cancelled (self->ops->arg)) {
        //  confirmed, but the session was cancelled meanwhile: nothing new starts
        char why [300];
        snprintf (why, sizeof why, "the session was cancelled before %s was called", tool);
        s_tool_result (self, NULL, why);
        return;
    }
    const ufo_value_t *tool_args = ufo_value_map_get (st->resp->decision, "Args");
    host_start (self, HP_STEP_ACTED);
    self->ops->mcp (self->ops->arg, tool, ufo_value_type (tool_args) == UFO_TMAP ? tool_args : NULL);
}

//  HP_STEP_ACTED: the result of an API tool call or a launch.
static void
s_acted (host_t *self)
{
    host_step_t *st = &self->st;
    host_reply_t *reply = host_reply (self);
    self->phase = HP_STEP_LOG;
    if (strcmp (st->action_type, "MCP") == 0) {
        s_tool_result (self, reply->value, reply->err.message);
        return;
    }
    const char *bash = ufo_value_map_str (st->resp->decision, "Bash", "");
    int64_t pid = reply->number;
    st->success = pid > 0;
    if (st->success)
        snprintf (st->result, sizeof st->result, "launched \"%s\" (pid %" PRId64 ")", bash, pid);
    else {
        snprintf (st->action_error, sizeof st->action_error, "%s", reply->err.message);
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("Bash \"%s\" was refused: %s", bash, reply->err.message) });
    }
}

//  HP_STEP_ANSWERS: the user's answers (if asked); HP_STEP_QA puts each pair on the board.
static void
s_answers (host_t *self)
{
    host_step_t *st = &self->st;
    const ufo_value_t *reply = host_reply (self)->value;
    if (st->asked && reply)
        st->answers = host_str_list (ufo_value_map_get (reply, "answers"));
    st->qa_index = 0;
    self->phase = HP_STEP_QA;
}

static void
s_qa (host_t *self)
{
    host_step_t *st = &self->st;
    if (st->qa_index > 0 && host_reply (self)->number != 0)
        ufo_warn ("host: question not on the blackboard: %s", host_reply (self)->err.message);
    const ufo_value_t *questions = ufo_value_map_get (st->resp->decision, "Questions");
    while (st->qa_index < ufo_value_size (questions)) {
        size_t i = st->qa_index++;
        const char *q = ufo_value_str (ufo_value_list_at (questions, i));
        if (!q)
            continue;
        const char *a = ufo_value_str (ufo_value_list_at (st->answers, i));
        if (!a || !*a)
            a = S_PLACEHOLDER;
        ufo_value_list_push (self->tips, &(ufo_value_t *) {
            ufo_value_new_stringf ("You asked the user: \"%s\" The answer: \"%s\"", q, a) });
        ufo_value_list_push_str (st->given, a);
        ufo_value_t *qa = ufo_value_new_map ();
        ufo_value_map_set_str (qa, "question", q);
        ufo_value_map_set_str (qa, "answer", a);
        host_start (self, HP_STEP_QA);
        self->ops->board_add (self->ops->arg, "questions", &qa);
        return;
    }
    ufo_value_map_set (st->record, "Answers", &st->given);
    self->phase = HP_STEP_LOG;
}

//  HP_STEP_LOG: the step's record (response.log, request.log), memory and progress events.
static void
s_log (host_t *self)
{
    host_step_t *st = &self->st;
    const host_ops_t *ops = self->ops;
    const ufo_value_t *decision = st->resp && !*st->error ? st->resp->decision : NULL;
    ufo_value_t *record = st->record;
    host_state_t next = st->next;
    const char *function = st->function;
    const char *bash = ufo_value_map_str (decision, "Bash", "");
    const ufo_value_t *tool_args = ufo_value_map_get (decision, "Args");
    const char *subtask = st->subtask ? st->subtask : "";
    const char *application = st->application ? st->application : "";
    bool success = st->success;
    if (decision) {
        ufo_value_destroy (&self->plan);
        self->plan = ufo_value_dup (ufo_value_map_get (decision, "Plan"));
        if (ufo_value_type (self->plan) != UFO_TLIST) {
            ufo_value_destroy (&self->plan);
            self->plan = ufo_value_new_list ();
        }
    }
    if (*st->error) {
        next = HOST_ERROR;
        snprintf (self->error, sizeof self->error, "%s", st->error);
        ufo_value_map_set_str (record, "Status", "ERROR");
        success = false;            //  an ERROR step did not do what it was for
        if (!*st->action_error)
            snprintf (st->action_error, sizeof st->action_error, "%s", st->error);
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
    else if (strcmp (st->action_type, "MCP") == 0 && ufo_value_type (tool_args) == UFO_TMAP)
        ufo_value_map_set_copy (action, "args", tool_args);
    ufo_value_map_set_str (action, "control_label", ufo_value_map_str (decision, "ControlLabel", ""));
    ufo_value_map_set_str (action, "control_text", ufo_value_map_str (decision, "ControlText", ""));
    ufo_value_map_set_str (action, "control_type", next == HOST_ASSIGN ? "Window" : "");
    ufo_value_map_set (record, "Action", &action);
    s_action_result (record, success, st->result, st->action_error);
    ufo_value_map_set_str (record, "ActionType", st->action_type);
    ufo_value_map_set_str (record, "Request", self->request);
    ufo_value_map_set_str (record, "Agent", "HostAgent");
    ufo_value_map_set_str (record, "AgentName", "HostAgent");
    ufo_value_map_set_str (record, "Application", next == HOST_ASSIGN ? application : "");
    ufo_value_map_set_float (record, "Cost", self->cost.step);
    ufo_value_map_set_str (record, "Model", st->resp && st->resp->model [0] ? st->resp->model : "");  //  who answered
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", self->cost.step_prompt_tokens);
    ufo_value_map_set_int (tokens, "completion", self->cost.step_completion_tokens);
    ufo_value_map_set (record, "Tokens", &tokens);
    ufo_value_map_set_str (record, "Results", st->result);
    ufo_value_map_set_str (record, "error", st->error);
    ufo_value_t *tc = ufo_value_new_map ();
    ufo_value_map_set_float (tc, "screenshot", st->t_shot - st->t0);
    ufo_value_map_set_float (tc, "control_info", 0.0);
    ufo_value_map_set_float (tc, "prompt", st->t_prompt - st->t_shot);
    ufo_value_map_set_float (tc, "llm", st->t_llm - st->t_prompt);
    ufo_value_map_set_float (tc, "parse", 0.0);
    ufo_value_map_set_float (tc, "action", t_end - st->t_llm);
    ufo_value_map_set_float (tc, "total", t_end - st->t0);
    ufo_value_map_set (record, "time_cost", &tc);
    ufo_value_map_set (record, "ControlLog", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_str (record, "UserConfirm", st->user_confirm ? st->user_confirm : "");
    if (!ufo_value_map_has (record, "Questions"))
        ufo_value_map_set (record, "Questions", &(ufo_value_t *) { ufo_value_new_list () });
    ufo_value_map_set_str (record, "ScreenshotPath", st->shot_name);
    ufo_value_map_set_str (record, "AnnotatedScreenshotPath", "");
    ufo_value_map_set_str (record, "SelectedControlScreenshotPath", "");
    char now [40];
    ufo_time_iso (now);
    ufo_value_map_set_str (record, "Timestamp", now);

    ufo_error_t lerr = { 0 };
    if (ufo_tasklog_append (self->log, "response.log", record, &lerr) != 0)
        ufo_warn ("host: response.log: %s", lerr.message);
    if (st->messages) {
        ufo_value_t *req = ufo_value_new_map ();
        ufo_value_map_set_int (req, "Step", self->step);
        ufo_value_map_set_str (req, "Agent", "HostAgent");
        ufo_value_map_set_str (req, "AgentName", "HostAgent");
        ufo_value_map_set_int (req, "Round", self->round);
        ufo_value_map_set (req, "prompt", &(ufo_value_t *) {
            s_elide_images (st->messages, st->shot_name [0] ? st->shot_name : NULL) });
        ufo_value_map_set_str (req, "model", st->resp ? st->resp->model : "");
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
    host_step_clear (self);
    self->step++;
    self->round_step++;
    self->agent_step++;
    self->state = next;
    self->phase = HP_STATE;
}

void
host_step_phase (host_t *self)
{
    switch (self->phase) {
        case HP_STEP:           s_begin (self); break;
        case HP_STEP_WINDOWS:   s_windows (self); break;
        case HP_STEP_BOARD:     s_board (self); break;
        case HP_STEP_TOOLS:     s_tools (self); break;
        case HP_STEP_ASK:       s_ask (self); break;
        case HP_STEP_CONFIRM:   s_confirm (self); break;
        case HP_STEP_ACTED:     s_acted (self); break;
        case HP_STEP_ANSWERS:   s_answers (self); break;
        case HP_STEP_QA:        s_qa (self); break;
        case HP_STEP_LOG:       s_log (self); break;
        default:                assert (false);
    }
}
