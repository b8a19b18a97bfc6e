/*  app_step.c - one ReAct step of the AppAgent (see app_step.h). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_llm_override.h"
#include "ufo_log.h"
#include "ufo_mcp_hub.h"
#include "ufo_prompt.h"
#include "ufo_rag.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "app_history.h"
#include "app_int.h"

#define S_NAME 96

struct _app_step_t {
    app_agent_t *agent;             //  owner
    app_step_phase_t phase;
    int64_t step, agent_step;
    int64_t t0, t_mark;             //  us: step start, start of the current phase
    ufo_value_t *time_cost;         //  seconds per phase (map)
    ufo_image_t *shot;              //  clean screenshot
    char shot_name [S_NAME], annotated_name [S_NAME], concat_name [S_NAME], selected_name [S_NAME];
    int64_t xid;                    //  the application's window this step works on
    ufo_value_t *window;            //  its entry of the window list (owned)
    char *main_title;               //  the main window's title when this is another window
    ufo_value_t *window_log;        //  {"xid", "title", "dialog"} for response.log
    int restarts;                   //  observations restarted (the window closed meanwhile)
    int64_t observe_at;             //  monotonic ms: observe (again) not before
    ufo_desktop_op_t *op;           //  snapshot or action in flight
    ufo_mcp_op_t *mcp_op;           //  API tool call in flight (MCP)
    int64_t mcp_wait_until;         //  monotonic ms: waiting for the MCP servers to start
    ufo_value_t *snapshot;          //  the control snapshot result
    int64_t llm_id;                 //  request in flight (0 none)
    ufo_llm_response_t *response;   //  the model's answer
    const ufo_value_t *decision;    //  in response, or own_decision
    ufo_value_t *own_decision;      //  ACTION_SEQUENCE: the decision of one action of a list
    int seq_index, seq_total;       //  this step runs action seq_index of seq_total (0: no list)
    const ufo_value_t *control;     //  selected control (in snapshot)
    ufo_value_t *action;            //  as executed
    ufo_value_t *action_result;     //  desktop result
    char status [16];
    char user_confirm [4];
    char *error;
    char *shot_url;                 //  data URL of the image to show next step
};

static void
s_phase_time (app_step_t *self, const char *name)
{
    int64_t now = ufo_time_mono_us ();
    ufo_value_map_set_float (self->time_cost, name, (double) (now - self->t_mark) / 1e6);
    self->t_mark = now;
}

//  Ends the step in ERROR with a reason (the agent records it).
static void
s_fail (app_step_t *self, const char *format, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_fail (app_step_t *self, const char *format, ...)
{
    char text [1024];
    va_list ap;
    va_start (ap, format);
    vsnprintf (text, sizeof text, format, ap);
    va_end (ap);
    free (self->error);
    self->error = ufo_strdup (text);
    snprintf (self->status, sizeof self->status, "ERROR");
    ufo_desktop_op_destroy (&self->op);
    self->phase = APP_STEP_ACTED;
    ufo_warn ("%s step %" PRId64 ": %s", self->agent->agent_name, self->step, text);
}

static void s_save (app_step_t *self, ufo_image_t **img_p, const char *name);

app_step_t *
app_step_new (app_agent_t *agent)
{
    app_step_t *self = ufo_malloc (sizeof *self);
    memset (self, 0, sizeof *self);
    self->agent = agent;
    self->agent_step = agent->agent_step;
    self->step = agent->step_base + agent->agent_step;
    self->time_cost = ufo_value_new_map ();
    self->phase = APP_STEP_OBSERVE;
    return self;
}

void
app_step_destroy (app_step_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_step_t *self = *self_p;
    if (self->llm_id > 0)
        ufo_llm_cancel (self->agent->ctx->llm, self->llm_id);
    ufo_desktop_op_destroy (&self->op);
    ufo_mcp_op_destroy (&self->mcp_op);
    if (self->shot && self->shot_name [0])
        s_save (self, &self->shot, self->shot_name);    //  a step that ended unrecorded
    ufo_image_destroy (&self->shot);
    ufo_value_destroy (&self->snapshot);
    ufo_value_destroy (&self->window);
    ufo_value_destroy (&self->window_log);
    ufo_llm_response_destroy (&self->response);
    ufo_value_destroy (&self->own_decision);
    ufo_value_destroy (&self->action);
    ufo_value_destroy (&self->action_result);
    ufo_value_destroy (&self->time_cost);
    free (self->error);
    free (self->shot_url);
    free (self->main_title);
    free (self);
    *self_p = NULL;
}

app_step_phase_t
app_step_phase (const app_step_t *self)
{
    return self->phase;
}

const ufo_value_t *
app_step_decision (const app_step_t *self)
{
    return self->decision;
}

const char *
app_step_status (const app_step_t *self)
{
    return self->status;
}

const char *
app_step_error (const app_step_t *self)
{
    return self->error;
}

const ufo_value_t *
app_step_control (const app_step_t *self)
{
    return self->control;
}

int64_t
app_step_number (const app_step_t *self)
{
    return self->step;
}

int64_t
app_step_deadline (const app_step_t *self)
{
    return self->op ? ufo_desktop_op_deadline (self->op) : 0;
}

//  True when window xid is still on the desktop.
static bool
s_window_alive (app_ctx_t *ctx, int64_t xid)
{
    ufo_error_t err;
    ufo_value_t *wins = ufo_desktop_windows (ctx->desktop, &err);
    if (!wins)
        return true;            //  cannot tell: the capture will say
    bool alive = false;
    for (size_t i = 0; i < ufo_value_size (wins) && !alive; i++)
        alive = ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid;
    ufo_value_destroy (&wins);
    return alive;
}

//  Chooses the window of the application this step works on (app_window.h): a dialog it
//  opened, else its main window. Returns false when the application has no window left.
static bool
s_pick_window (app_step_t *self)
{
    app_agent_t *a = self->agent;
    ufo_error_t err;
    ufo_value_t *wins = ufo_desktop_windows (a->ctx->desktop, &err);
    if (!wins) {
        self->xid = a->window_xid;      //  cannot tell: the capture will say
        return true;
    }
    const ufo_value_t *w = app_window_pick (wins, a->pid, a->xid, a->window_xid);
    ufo_value_destroy (&self->window);
    free (self->main_title);
    self->main_title = NULL;
    if (w) {
        self->xid = ufo_value_map_int (w, "xid", 0);
        self->window = ufo_value_dup (w);
        for (size_t i = 0; i < ufo_value_size (wins) && self->xid != a->xid; i++)
            if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == a->xid)
                self->main_title = ufo_strdup (ufo_value_map_str (ufo_value_list_at (wins, i), "title", ""));
        if (self->xid != a->window_xid)
            ufo_info ("%s step %" PRId64 ": now on the %s '%s' (window %" PRId64 ")", a->agent_name,
                      self->step, ufo_value_map_bool (w, "dialog", false) ? "dialog" : "window",
                      ufo_value_map_str (w, "title", ""), self->xid);
        a->window_xid = self->xid;
    }
    ufo_value_destroy (&wins);
    return w != NULL;
}

typedef struct {
    ufo_image_t *img;
    char path [1024];
    int level;
} s_save_job_t;

static void
s_save_run (void *arg)
{
    s_save_job_t *job = arg;
    ufo_error_t err;
    if (ufo_image_save_png (job->img, job->path, job->level, &err) < 0)
        ufo_warn ("app: cannot save %s: %s", job->path, err.message);
}

static void
s_save_free (void *arg)
{
    s_save_job_t *job = arg;
    ufo_image_destroy (&job->img);
    free (job);
}

//  Saves *img_p as name in the log directory, in the background (app_writer.h); takes the
//  image (*img_p becomes NULL). Failures are logged. Safe with *img_p NULL.
static void
s_save (app_step_t *self, ufo_image_t **img_p, const char *name)
{
    if (!*img_p)
        return;
    app_agent_t *a = self->agent;
    s_save_job_t *job = ufo_malloc (sizeof *job);
    job->img = *img_p;
    *img_p = NULL;
    job->level = a->ctx->png_level;
    ufo_tasklog_path (a->log, name, job->path, sizeof job->path);
    app_writer_submit (a->writer, s_save_run, s_save_free, job);
}

//  A data URL of img (PNG), or NULL (logged).
static char *
s_url (app_step_t *self, const ufo_image_t *img)
{
    void *png = NULL;
    size_t len = 0;
    ufo_error_t err;
    if (ufo_image_encode_png (img, self->agent->ctx->png_level, &png, &len, &err) < 0) {
        ufo_warn ("%s: cannot encode a screenshot: %s", self->agent->agent_name, err.message);
        return NULL;
    }
    char *url = app_data_url ("image/png", png, len);
    free (png);
    return url;
}

//  The step's window closed between choosing it and reading it, or showed nothing (a
//  dialog that was going away): observe again after delay_ms, on the window the
//  application shows then. False when this happened too often (the caller goes on without).
static bool
s_observe_again (app_step_t *self, int delay_ms)
{
    if (self->restarts >= 3)
        return false;
    self->restarts++;
    self->observe_at = ufo_time_mono_ms () + delay_ms;
    ufo_image_destroy (&self->shot);
    ufo_value_destroy (&self->snapshot);
    ufo_desktop_op_destroy (&self->op);
    self->phase = APP_STEP_OBSERVE;
    return true;
}

static void
s_observe (app_step_t *self)
{
    app_agent_t *a = self->agent;
    app_ctx_t *ctx = a->ctx;
    if (self->observe_at && ufo_time_mono_ms () < self->observe_at)
        return;
    int64_t begun = ufo_time_mono_us ();    //  the step's time counts from here
    //  the board's part of the prompt is read while the desktop is observed (app_board.h)
    app_board_prompt_start (ctx->board, a->session);
    //  the API tools are in the prompt: wait (bounded) for the MCP servers to start
    ufo_mcp_hub_t *mcp = app_ctx_mcp (ctx, a->application);
    if (!ufo_mcp_hub_settled (mcp)) {
        if (!self->mcp_wait_until)
            self->mcp_wait_until = ufo_time_mono_ms () + 2 * (int64_t) (ufo_config_float (ctx->config,
                                   "MCP_TOOL_TIMEOUT", 30.0) * 1000.0) + 1000;
        if (ufo_time_mono_ms () < self->mcp_wait_until)
            return;
        ufo_warn ("%s: MCP servers still starting; their tools are left out of this step",
                  a->agent_name);
    }
    self->t_mark = begun;
    if (!self->t0)
        self->t0 = self->t_mark;    //  a step observed again counts from its first attempt
    if (!s_pick_window (self)) {
        self->phase = APP_STEP_CLOSED;
        return;
    }
    //  the control snapshot first: its D-Bus replies come while the window is captured
    ufo_value_t *opts = ufo_value_new_map ();
    if (ctx->save_ui_tree)
        ufo_value_map_set_bool (opts, "tree", true);
    self->op = ufo_desktop_controls_begin (ctx->desktop, self->xid, opts);
    ufo_value_destroy (&opts);
    ufo_error_t err;
    self->shot = ufo_desktop_capture_window (ctx->desktop, self->xid, &err);
    if (!self->shot) {
        if (!s_window_alive (ctx, self->xid)) {
            if (!s_observe_again (self, 0))
                self->phase = APP_STEP_CLOSED;
        }
        else
            s_fail (self, "screenshot of the window failed: %s", err.message);
        return;
    }
    //  written when the step is recorded (the image is used until then)
    snprintf (self->shot_name, S_NAME, "action_step%" PRId64 ".png", self->step);
    if (ctx->save_full_screen) {
        ufo_image_t *screen = ufo_desktop_capture_screen (ctx->desktop, &err);
        char name [S_NAME];
        snprintf (name, S_NAME, "desktop_step%" PRId64 ".png", self->step);
        if (screen)
            s_save (self, &screen, name);
        else
            ufo_warn ("%s: full-screen capture failed: %s", a->agent_name, err.message);
    }
    s_phase_time (self, "screenshot");
    self->phase = APP_STEP_CONTROLS;
}

//  The controls to annotate: all, or (after SCREENSHOT) those the model named.
static ufo_value_t *
s_annotated_controls (app_step_t *self, const ufo_value_t *controls)
{
    const ufo_value_t *only = self->agent->annotate_labels;
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        bool take = !only || ufo_value_size (only) == 0;
        for (size_t k = 0; !take && k < ufo_value_size (only); k++)
            take = strcmp (ufo_value_str (ufo_value_list_at (only, k)) ?: "",
                           ufo_value_map_str (c, "label", "")) == 0;
        if (take)
            ufo_value_list_push (list, &(ufo_value_t *) { ufo_value_dup (c) });
    }
    return list;
}

//  The template variables of the AppAgent prompt.
static ufo_value_t *
s_vars (app_step_t *self, const ufo_value_t *controls)
{
    app_agent_t *a = self->agent;
    ufo_value_t *vars = ufo_value_new_map ();
    ufo_value_map_set_str (vars, "application", a->application);
    ufo_value_map_set_str (vars, "request", a->request);
    ufo_value_map_set_str (vars, "subtask", a->subtask);
    ufo_value_t *tips = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (a->tips); i++) {
        const ufo_value_t *t = ufo_value_list_at (a->tips, i);
        if (ufo_value_type (t) == UFO_TSTRING)
            ufo_value_list_push_str (tips, ufo_value_str (t));
    }
    ufo_value_map_set (vars, "host_message", &tips);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        //  one line per control: label, type, name, value, states (ufo_desktop.h)
        ufo_value_t *e = ufo_desktop_control_prompt (ufo_value_list_at (controls, i));
        ufo_value_list_push (list, &e);
    }
    ufo_value_map_set (vars, "controls", &list);
    //  the window the controls belong to: its title, and "dialog" when it is one (for X a
    //  dialog type, transient or modal window; for AT-SPI a dialog, file chooser or alert
    //  role, or the modal state); a dialog names the window it is in front of
    const ufo_value_t *info = ufo_value_map_get (self->snapshot, "window");
    const char *title = ufo_value_map_str (self->window, "title", ufo_value_map_str (info, "title", ""));
    bool dialog = ufo_value_map_bool (self->window, "dialog", false)
               || ufo_value_map_bool (self->window, "modal", false)
               || ufo_value_map_int (self->window, "transient_for", 0) > 0
               || ufo_value_map_bool (info, "dialog", false);
    ufo_value_map_set_str (vars, "window_title", *title ? title : a->application);
    ufo_value_map_set_str (vars, "window_kind", dialog ? "dialog" : "window");
    ufo_value_map_set_str (vars, "main_window", self->main_title && dialog ? self->main_title : "");
    ufo_value_destroy (&self->window_log);
    self->window_log = ufo_value_new_map ();
    ufo_value_map_set_int (self->window_log, "xid", self->xid);
    ufo_value_map_set_str (self->window_log, "title", title);
    ufo_value_map_set_bool (self->window_log, "dialog", dialog);
    ufo_value_t *prev = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (a->previous_subtasks); i++) {
        const ufo_value_t *p = ufo_value_list_at (a->previous_subtasks, i);
        if (ufo_value_type (p) == UFO_TMAP)
            ufo_value_list_push (prev, &(ufo_value_t *) { ufo_value_dup (p) });
    }
    ufo_value_map_set (vars, "previous_subtasks", &prev);
    ufo_value_map_set_copy (vars, "plan", a->plan);
    ufo_value_map_set_str (vars, "last_result", a->last_result ? a->last_result : "");
    ufo_value_map_set_copy (vars, "user_answers", a->user_answers);
    ufo_value_map_set_str (vars, "tips", "");
    ufo_mcp_hub_t *mcp = a->ctx->mcp;
    ufo_value_map_set (vars, "api_tools", &(ufo_value_t *) { ufo_mcp_hub_prompt_tools (mcp) });
    ufo_value_map_set_bool (vars, "api_preferred", ufo_mcp_hub_preferred (mcp));
    ufo_value_map_set_bool (vars, "action_sequence", a->ctx->action_sequence);
    //  a spreadsheet on screen: the spreadsheet actions are offered (actions.tmpl)
    ufo_value_map_set_bool (vars, "spreadsheet", ufo_value_map_get (self->snapshot, "spreadsheet") != NULL);
    return vars;
}

static void s_on_llm (ufo_llm_response_t **response_p, void *arg);
static void s_decided (app_step_t *self);
static bool s_seq_next (app_step_t *self);
static void s_seq_begin (app_step_t *self);

//  Tells the user what the step is doing now: an "activity" progress body (what "model" |
//  "action", phase "start" | "retry" | "end"; extra's fields added, ownership taken).
static void
s_activity (app_step_t *self, const char *what, const char *phase, const char *detail, ufo_value_t *extra)
{
    app_agent_t *a = self->agent;
    ufo_value_t *body = extra ? extra : ufo_value_new_map ();
    ufo_value_map_set_str (body, "kind", "activity");
    ufo_value_map_set_str (body, "agent", a->agent_name);
    ufo_value_map_set_str (body, "what", what);
    ufo_value_map_set_str (body, "phase", phase);
    ufo_value_map_set_str (body, "detail", detail ? detail : "");
    ufo_value_map_set_int (body, "step", self->step);
    app_agent_emit (a, &body);
}

static void
s_on_llm_retry (void *arg, int attempt, int64_t wait_ms, const char *why)
{
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_int (extra, "attempt", attempt);
    ufo_value_map_set_int (extra, "wait_ms", wait_ms);
    ufo_value_map_set_str (extra, "reason", why);
    s_activity ((app_step_t *) arg, "model", "retry", NULL, extra);
}

static void
s_controls_done (app_step_t *self)
{
    app_agent_t *a = self->agent;
    app_ctx_t *ctx = a->ctx;
    self->snapshot = ufo_desktop_op_take_result (self->op);
    ufo_desktop_op_destroy (&self->op);
    const ufo_value_t *controls = ufo_value_map_get (self->snapshot, "controls");
    if (ufo_value_type (controls) != UFO_TLIST) {
        if (!s_window_alive (ctx, self->xid)) {
            if (!s_observe_again (self, 0))
                self->phase = APP_STEP_CLOSED;
            return;
        }
        s_fail (self, "control snapshot failed: %s",
                ufo_value_map_str (self->snapshot, "error", "no control list"));
        return;
    }
    //  a dialog that shows no control at all is usually going away (its accessible
    //  contents are gone before its X window): look again a little later
    if (ufo_value_size (controls) == 0 && self->xid != a->xid && s_observe_again (self, 150)) {
        ufo_debug ("%s step %" PRId64 ": window %" PRId64 " shows no control; observing again",
                   a->agent_name, self->step, self->xid);
        return;
    }
    s_phase_time (self, "control_info");
    ufo_debug ("%s step %" PRId64 ": snapshot of window %" PRId64 " in %.1f ms: %" PRId64 " nodes, %"
               PRId64 " fetched, %" PRId64 " calls, %" PRId64 " rewalks", a->agent_name, self->step,
               self->xid, ufo_value_map_float (self->time_cost, "control_info", 0) * 1e3,
               ufo_value_map_int (self->snapshot, "nodes", 0), ufo_value_map_int (self->snapshot, "fetched", 0),
               ufo_value_map_int (self->snapshot, "calls", 0), ufo_value_map_int (self->snapshot, "rewalks", 0));
    //  annotated (and concatenated) screenshots
    ufo_value_t *marked = s_annotated_controls (self, controls);
    ufo_value_destroy (&a->annotate_labels);
    ufo_image_t *annotated = ufo_image_annotate (self->shot, marked, NULL);
    ufo_value_destroy (&marked);
    snprintf (self->annotated_name, S_NAME, "action_step%" PRId64 "_annotated.png", self->step);

    ufo_image_t *concat = NULL;
    if (ctx->concat_screenshot) {
        concat = ufo_image_concat (self->shot, annotated);
        snprintf (self->concat_name, S_NAME, "action_step%" PRId64 "_concat.png", self->step);

    }
    if (ctx->save_ui_tree) {
        char name [S_NAME];
        snprintf (name, S_NAME, "ui_trees/ui_tree_step%" PRId64 ".json", self->step);
        const ufo_value_t *tree = ufo_value_map_get (self->snapshot, "tree");
        ufo_error_t err;
        if (tree && ufo_tasklog_write_json (a->log, name, tree, &err) < 0)
            ufo_warn ("%s: %s", a->agent_name, err.message);
    }
    //  the next action of the model's ActionList, if it still fits the window: no model call
    if (s_seq_next (self)) {
        ufo_image_destroy (&concat);
        ufo_image_destroy (&annotated);
        return;
    }
    //  images for the model, in the original's order
    ufo_value_t *images = ufo_value_new_list ();
    const char *urls [4] = { 0 }, *names [4] = { 0 };
    char *owned [3] = { 0 };
    size_t n = 0;
    if (ctx->visual) {
        if (ctx->include_last_screenshot && a->last_shot_url) {
            urls [n] = a->last_shot_url;
            names [n++] = "previous step screenshot";
        }
        if (concat) {
            owned [0] = s_url (self, concat);
            urls [n] = owned [0];
            names [n++] = self->concat_name;
        }
        else {
            owned [0] = s_url (self, self->shot);
            urls [n] = owned [0];
            names [n++] = self->shot_name;
            owned [1] = s_url (self, annotated);
            urls [n] = owned [1];
            names [n++] = self->annotated_name;
        }
        static const char *const labels_concat [] = {
            "Screenshot of the previous step:",
            "Current screenshot (left) and the same with the controls annotated (right):" };
        static const char *const labels_plain [] = {
            "Screenshot of the previous step:", "Current screenshot:",
            "Current screenshot with the controls annotated:" };
        size_t first = ctx->include_last_screenshot && a->last_shot_url ? 0 : 1;
        for (size_t i = 0; i < n; i++) {
            if (!urls [i])
                continue;
            ufo_value_t *img = ufo_value_new_map ();
            ufo_value_map_set_str (img, "label", concat ? labels_concat [i + first]
                                                        : labels_plain [i + first]);
            ufo_value_map_set_str (img, "url", urls [i]);
            ufo_value_list_push (images, &img);
        }
    }
    s_save (self, &concat, self->concat_name);
    s_save (self, &annotated, self->annotated_name);
    s_phase_time (self, "annotation");
    //  the blackboard and the agent's own memory
    ufo_error_t err;
    ufo_value_t *board = app_board_prompt_take (ctx->board, a->session, a->round, a->subtask_index, &err);
    if (!board)
        ufo_warn ("%s: blackboard unavailable for the prompt: %s", a->agent_name, err.message);
    s_phase_time (self, "blackboard");
    ufo_value_t *memory = app_history_lines (a->memory, (size_t) ctx->memory_steps,
                                             APP_HISTORY_DETAILED);
    ufo_value_t *vars = s_vars (self, controls);
    //  knowledge (docs/KNOWLEDGE.md): into the prompt's variables and request.log
    ufo_value_t *knowledge = ufo_rag_for_app (ctx->rag, a->subtask,
                                              strcmp (ctx->app, "*") ? ctx->app : a->application);
    if (a->experience)          //  retrieved by the HostAgent (RAG_EXPERIENCE)
        ufo_value_map_set_copy (knowledge, "experience_examples", a->experience);
    if (a->online) {            //  web search by the HostAgent (RAG_ONLINE_SEARCH), then ours
        ufo_value_t *online = ufo_value_dup (a->online);
        const ufo_value_t *own = ufo_value_map_get (knowledge, "online_docs");
        for (size_t i = 0; i < ufo_value_size (own); i++)
            ufo_value_list_push (online, &(ufo_value_t *) { ufo_value_dup (ufo_value_list_at (own, i)) });
        ufo_value_map_set (knowledge, "online_docs", &online);
    }
    if (a->demonstrations)      //  retrieved by the HostAgent for this subtask (RAG_DEMONSTRATION)
        ufo_value_map_set_copy (knowledge, "demonstration_examples", a->demonstrations);
    ufo_rag_merge (vars, knowledge);
    ufo_prompt_input_t in = {
        .schema = UFO_SCHEMA_APP, .visual = ctx->visual, .vars = vars, .images = images,
        .blackboard = board, .memory = memory
    };
    ufo_value_t *messages = ufo_prompt_messages (ctx->prompts, &in, &err);
    ufo_value_destroy (&vars);
    ufo_value_destroy (&memory);
    ufo_value_destroy (&board);
    ufo_value_destroy (&images);
    if (messages)
        app_record_request (a, self->step, messages, urls, names, n, knowledge);
    ufo_value_destroy (&knowledge);
    free (owned [0]);
    free (owned [1]);
    if (!messages) {
        s_fail (self, "prompt: %s", err.message);
        return;
    }
    s_phase_time (self, "prompt");
    ufo_llm_opts_t opts = {
        .agent = "AppAgent", .step = self->step, .schema = UFO_SCHEMA_APP,
        .json_retry = ctx->json_retry, .on_retry = s_on_llm_retry, .retry_arg = self
    };
    //  the session's model override, if any (checked when the subtask came)
    if (ufo_llm_engines_for (ctx->engines, ctx->config, "APP_AGENT", ufo_value_map_get (a->body, "model"),
                             &opts.engine, &err)) {
        ufo_value_destroy (&messages);
        s_fail (self, "%s", err.message);
        return;
    }
    int64_t id = ufo_llm_submit (ctx->llm, messages, &opts, s_on_llm, self, &err);
    ufo_value_destroy (&messages);
    if (id < 0) {
        s_fail (self, "LLM request rejected: %s", err.message);
        return;
    }
    s_activity (self, "model", "start", NULL, NULL);
    self->llm_id = id;
    self->phase = APP_STEP_LLM;
}

//  The control of the snapshot with this label, or NULL.
static const ufo_value_t *
s_find_control (const ufo_value_t *snapshot, const char *label)
{
    if (!label || !*label)
        return NULL;
    const ufo_value_t *controls = ufo_value_map_get (snapshot, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (strcmp (ufo_value_map_str (c, "label", ""), label) == 0)
            return c;
    }
    return NULL;
}

//  --- ACTION_SEQUENCE ------------------------------------------------------------------------

//  A decision for one entry of the ActionList: the model's decision with the entry's action.
static ufo_value_t *
s_seq_decision (const ufo_value_t *decision, const ufo_value_t *entry, const char *status)
{
    ufo_value_t *d = ufo_value_dup (decision);
    ufo_value_map_remove (d, "ActionList");
    ufo_value_map_set_str (d, "Function", ufo_value_map_str (entry, "Function", ""));
    ufo_value_map_set_copy (d, "Args", ufo_value_map_get (entry, "Args"));
    ufo_value_map_set_str (d, "ControlLabel", ufo_value_map_str (entry, "ControlLabel", ""));
    ufo_value_map_set_str (d, "ControlText", ufo_value_map_str (entry, "ControlText", ""));
    ufo_value_map_set_str (d, "Status", status);
    return d;
}

//  "click_input on control 5 'Open'"
static void
s_seq_describe (const ufo_value_t *decision, char *out, size_t size)
{
    const char *label = ufo_value_map_str (decision, "ControlLabel", "");
    if (*label)
        snprintf (out, size, "%s on control %s '%.60s'", ufo_value_map_str (decision, "Function", ""), label,
                  ufo_value_map_str (decision, "ControlText", ""));
    else
        snprintf (out, size, "%s", ufo_value_map_str (decision, "Function", ""));
}

//  The model answered an ActionList: this step runs its first action, the others are queued
//  with the name and type their controls have now (checked again before each runs).
static void
s_seq_begin (app_step_t *self)
{
    app_agent_t *a = self->agent;
    const ufo_value_t *list = ufo_value_map_get (self->decision, "ActionList");
    size_t n = ufo_value_size (list);
    ufo_value_destroy (&a->action_queue);
    if (n == 0)
        return;
    const char *last_status = ufo_value_map_str (self->decision, "Status", "CONTINUE");
    a->action_queue = ufo_value_new_list ();
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *e = ufo_value_list_at (list, i);
        const char *status = ufo_value_map_str (e, "Status", i + 1 == n ? last_status : "CONTINUE");
        ufo_value_t *d = s_seq_decision (self->decision, e, status);
        if (i == 0) {
            self->own_decision = d;
            continue;
        }
        const ufo_value_t *c = s_find_control (self->snapshot, ufo_value_map_str (e, "ControlLabel", ""));
        ufo_value_t *q = ufo_value_new_map ();
        ufo_value_map_set (q, "decision", &d);
        ufo_value_map_set_bool (q, "has_control", c != NULL);
        ufo_value_map_set_str (q, "expect_text", c ? ufo_value_map_str (c, "control_text", "") : "");
        ufo_value_map_set_str (q, "expect_type", c ? ufo_value_map_str (c, "control_type", "") : "");
        ufo_value_map_set_int (q, "index", (int64_t) i + 1);
        ufo_value_map_set_int (q, "total", (int64_t) n);
        ufo_value_map_set_int (q, "xid", self->xid);   //  the window the list was made for
        ufo_value_list_push (a->action_queue, &q);
    }
    self->decision = self->own_decision;
    self->seq_index = 1;
    self->seq_total = (int) n;
}

//  Drops the rest of the sequence; the next prompt's last result says what ran and why it stopped.
static void
s_seq_stop (app_agent_t *a, int index, int total, const char *why)
{
    char note [700];
    snprintf (note, sizeof note, "The action sequence stopped before action %d of %d (actions 1 to %d ran): %s",
              index, total, index - 1, why);
    ufo_info ("%s: %s", a->agent_name, note);
    char *text = NULL;
    if (asprintf (&text, "%s%s%s", a->last_result ? a->last_result : "", a->last_result ? "\n" : "", note) < 0)
        abort ();
    free (a->last_result);
    a->last_result = text;
    ufo_value_destroy (&a->action_queue);
}

//  The next queued action, if the step works on the same window the list was made for and the
//  action's control is still the one the model meant (same label, name and type in this step's
//  fresh snapshot): decided without a model call.
//  Returns false when there is none or it no longer fits (the queue is dropped, with a note).
static bool
s_seq_next (app_step_t *self)
{
    app_agent_t *a = self->agent;
    if (ufo_value_size (a->action_queue) == 0)
        return false;
    ufo_value_t *q = ufo_value_dup (ufo_value_list_at (a->action_queue, 0));
    ufo_value_list_remove (a->action_queue, 0);
    const ufo_value_t *d = ufo_value_map_get (q, "decision");
    int index = (int) ufo_value_map_int (q, "index", 0), total = (int) ufo_value_map_int (q, "total", 0);
    const char *label = ufo_value_map_str (d, "ControlLabel", "");
    char what [200], why [400] = "";
    s_seq_describe (d, what, sizeof what);
    int64_t made_for = ufo_value_map_int (q, "xid", 0);
    if (made_for && self->xid != made_for)
        //  a dialog opened (or the window went): also an action without a control must not
        //  land in another window than the one the model saw
        snprintf (why, sizeof why, "%s: the window changed (this step works on window %" PRId64
                  ", the list was made for window %" PRId64 ")", what, self->xid, made_for);
    else
    if (*label) {
        const ufo_value_t *c = s_find_control (self->snapshot, label);
        const char *text = c ? ufo_value_map_str (c, "control_text", "") : "";
        const char *type = c ? ufo_value_map_str (c, "control_type", "") : "";
        if (!ufo_value_map_bool (q, "has_control", false))
            snprintf (why, sizeof why, "%s names control %s, which the window did not have", what, label);
        else
        if (!c)
            snprintf (why, sizeof why, "%s: the control is no longer in the window", what);
        else
        if (strcmp (text, ufo_value_map_str (q, "expect_text", "")) || strcmp (type, ufo_value_map_str (q, "expect_type", "")))
            snprintf (why, sizeof why, "%s: control %s is now %s '%.60s', not %s '%.60s'", what, label, type, text,
                      ufo_value_map_str (q, "expect_type", ""), ufo_value_map_str (q, "expect_text", ""));
    }
    if (*why) {
        s_seq_stop (a, index, total, why);
        ufo_value_destroy (&q);
        return false;
    }
    self->own_decision = ufo_value_dup (d);
    self->decision = self->own_decision;
    self->seq_index = index;
    self->seq_total = total;
    ufo_value_destroy (&q);
    ufo_value_map_set_float (self->time_cost, "llm", 0.0);
    s_decided (self);
    return true;
}

static void
s_on_llm (ufo_llm_response_t **response_p, void *arg)
{
    app_step_t *self = arg;
    app_agent_t *a = self->agent;
    self->llm_id = 0;
    self->response = *response_p;
    *response_p = NULL;
    ufo_llm_response_t *r = self->response;
    s_phase_time (self, "llm");
    ufo_value_t *extra = ufo_value_new_map ();
    ufo_value_map_set_bool (extra, "ok", r->code == UFO_OK && r->decision);
    if (r->code != UFO_OK)
        ufo_value_map_set_str (extra, "error", r->error ? r->error : ufo_errcode_name (r->code));
    ufo_value_map_set_float (extra, "seconds", r->latency_s);
    s_activity (self, "model", "end", NULL, extra);
    ufo_cost_add (&a->cost, r->cost, r->prompt_tokens, r->completion_tokens);
    if (r->code != UFO_OK || !r->decision) {
        s_fail (self, "LLM: %s", r->error ? r->error : ufo_errcode_name (r->code));
        return;
    }
    self->decision = r->decision;
    if (a->ctx->action_sequence)
        s_seq_begin (self);
    s_decided (self);
}

//  The decision is made (by the model, or as the next action of its list): the selected
//  control, its screenshot, the plan. Moves to DECIDED.
static void
s_decided (app_step_t *self)
{
    app_agent_t *a = self->agent;
    snprintf (self->status, sizeof self->status, "%s",
              ufo_value_map_str (self->decision, "Status", "ERROR"));
    const char *label = ufo_value_map_str (self->decision, "ControlLabel", "");
    self->control = s_find_control (self->snapshot, label);
    if (self->control) {
        ufo_image_t *sel = ufo_image_highlight (self->shot, self->control);
        snprintf (self->selected_name, S_NAME, "action_step%" PRId64 "_selected_controls.png",
                  self->step);

        if (a->ctx->visual && a->ctx->include_last_screenshot)
            self->shot_url = s_url (self, sel);
        s_save (self, &sel, self->selected_name);
    }
    else
    if (a->ctx->visual && a->ctx->include_last_screenshot)
        self->shot_url = s_url (self, self->shot);
    const ufo_value_t *plan = ufo_value_map_get (self->decision, "Plan");
    if (ufo_value_type (plan) == UFO_TLIST) {
        ufo_value_destroy (&a->plan);
        a->plan = ufo_value_dup (plan);
    }
    s_phase_time (self, "parse");
    self->phase = APP_STEP_DECIDED;
}

//  "UIControl" for actions done through the control's accessibility interface, "Input"
//  for synthetic input, "" when nothing runs.
static const char *
s_action_type (const char *function)
{
    static const char *const input [] = {
        "click_on_coordinates", "drag_on_coordinates", "keyboard_input", "wheel_mouse_input" };
    if (!function || !*function)
        return "";
    if (ufo_mcp_hub_is_tool_name (function))
        return "MCP";
    for (size_t i = 0; i < UFO_ARRAY_SIZE (input); i++)
        if (strcmp (function, input [i]) == 0)
            return "Input";
    return "UIControl";
}

void
app_step_act (app_step_t *self, const char *confirmed)
{
    assert (self->phase == APP_STEP_DECIDED);
    app_agent_t *a = self->agent;
    snprintf (self->user_confirm, sizeof self->user_confirm, "%s", confirmed ? confirmed : "");
    const char *function = ufo_value_map_str (self->decision, "Function", "");
    const ufo_value_t *args = ufo_value_map_get (self->decision, "Args");
    const char *label = ufo_value_map_str (self->decision, "ControlLabel", "");
    self->action = ufo_value_new_map ();
    ufo_value_map_set_str (self->action, "function", function);
    ufo_value_map_set_copy (self->action, "args", args);
    ufo_value_map_set_str (self->action, "control_label", label);
    ufo_value_map_set_str (self->action, "control_text", self->control
                           ? ufo_value_map_str (self->control, "control_text", "")
                           : ufo_value_map_str (self->decision, "ControlText", ""));
    ufo_value_map_set_str (self->action, "control_type", self->control
                           ? ufo_value_map_str (self->control, "control_type", "") : "");
    if (strcmp (self->status, "CONFIRM") == 0)
        snprintf (self->status, sizeof self->status, "CONTINUE");
    if (confirmed && strcmp (confirmed, "no") == 0) {
        snprintf (self->status, sizeof self->status, "FINISH");
        self->phase = APP_STEP_ACTED;
        return;
    }
    if (!*function) {
        self->phase = APP_STEP_ACTED;
        return;
    }
    self->t_mark = ufo_time_mono_us ();
    s_activity (self, "action", "start", function, NULL);
    if (ufo_mcp_hub_is_tool_name (function))
        self->mcp_op = ufo_mcp_hub_call (app_ctx_mcp (a->ctx, a->application), function, args);
    else
        self->op = ufo_desktop_act_begin (a->ctx->desktop, self->xid, *label ? label : NULL,
                                          function, args);
    self->phase = APP_STEP_ACT;
}

app_step_phase_t
app_step_advance (app_step_t *self)
{
    switch (self->phase) {
        case APP_STEP_OBSERVE:
            s_observe (self);
            if (self->phase == APP_STEP_OBSERVE)
                break;              //  still waiting for the MCP servers
            if (self->phase == APP_STEP_CONTROLS && ufo_desktop_op_done (self->op)
            &&  app_board_prompt_ready (self->agent->ctx->board, self->agent->session))
                s_controls_done (self);
            break;
        case APP_STEP_CONTROLS:
            //  the snapshot and the board read started with it
            if (ufo_desktop_op_done (self->op)
            &&  app_board_prompt_ready (self->agent->ctx->board, self->agent->session))
                s_controls_done (self);
            if (self->phase == APP_STEP_OBSERVE)
                s_observe (self);       //  the window closed meanwhile: the one shown now
            break;
        case APP_STEP_ACT:
            if (self->mcp_op ? ufo_mcp_op_done (self->mcp_op) : ufo_desktop_op_done (self->op)) {
                self->action_result = self->mcp_op ? ufo_mcp_op_take_result (self->mcp_op)
                                                   : ufo_desktop_op_take_result (self->op);
                ufo_desktop_op_destroy (&self->op);
                ufo_mcp_op_destroy (&self->mcp_op);
                s_phase_time (self, "action");
                //  of which the wait for the application's effect (its own reaction time)
                ufo_value_map_set_float (self->time_cost, "action_wait",
                                         ufo_value_map_float (self->action_result, "wait_s", 0));
                ufo_value_t *extra = ufo_value_new_map ();
                bool ok = ufo_value_map_bool (self->action_result, "success", false);
                ufo_value_map_set_bool (extra, "ok", ok);
                if (!ok)
                    ufo_value_map_set_str (extra, "error", ufo_value_map_str (self->action_result, "error", "failed"));
                s_activity (self, "action", "end", ufo_value_map_str (self->action, "function", ""), extra);
                self->phase = APP_STEP_ACTED;
            }
            break;
        default:
            break;
    }
    return self->phase;
}

void
app_step_finish (app_step_t *self, const ufo_value_t *answers)
{
    assert (self->phase == APP_STEP_ACTED);
    app_agent_t *a = self->agent;
    if (!ufo_value_map_has (self->time_cost, "action"))
        ufo_value_map_set_float (self->time_cost, "action", 0.0);
    ufo_value_map_set_float (self->time_cost, "total", (double) (ufo_time_mono_us () - self->t0) / 1e6);
    const char *function = ufo_value_map_str (self->action, "function", "");
    const char *text = NULL;
    if (self->action_result) {
        bool ok = ufo_value_map_bool (self->action_result, "success", false);
        text = ok ? ufo_value_map_str (self->action_result, "text", "")
                  : ufo_value_map_str (self->action_result, "error", "failed");
        free (a->last_result);
        if (ok)
            a->last_result = ufo_strdup (text);
        else {
            char buf [1400];
            bool api = ufo_mcp_hub_is_tool_name (function);
            snprintf (buf, sizeof buf, "The action %s failed: %s%s", function, text,
                      api && ufo_mcp_hub_fallback (a->ctx->mcp)
                      ? "\nThe API tool did not work: do it through the GUI controls instead." : "");
            a->last_result = ufo_strdup (buf);
        }
        if (ok && (!strcmp (function, "texts") || !strcmp (function, "summary")
                   || !strcmp (function, "get_range_values")))
            ufo_value_list_push_str (a->results, text);
        if (ok && !strcmp (function, "annotation")) {
            const ufo_value_t *labels = ufo_value_map_get (self->action_result, "control_labels");
            ufo_value_destroy (&a->annotate_labels);
            a->annotate_labels = labels ? ufo_value_dup (labels) : NULL;
        }
    }
    else {
        free (a->last_result);
        a->last_result = NULL;
    }
    if (self->seq_total > 0) {
        bool ok = self->action_result && ufo_value_map_bool (self->action_result, "success", false);
        bool more = ufo_value_size (a->action_queue) > 0;
        if (self->action_result && !ok && more)
            s_seq_stop (a, self->seq_index + 1, self->seq_total, "the action before it failed");
        else
        if (!more && self->seq_index == self->seq_total) {
            char *note = NULL;
            if (asprintf (&note, "%s%sAll %d actions of the sequence ran.", a->last_result ? a->last_result : "",
                          a->last_result && *a->last_result ? "\n" : "", self->seq_total) < 0)
                abort ();
            free (a->last_result);
            a->last_result = note;
        }
    }
    s_save (self, &self->shot, self->shot_name);
    const ufo_llm_response_t *r = self->response;
    app_record_t rec = {
        .decision = self->decision, .status = self->status, .error = self->error,
        .step = self->step, .agent_step = self->agent_step,
        .action = self->action, .action_result = self->action_result,
        .action_type = s_action_type (self->action_result ? function : ""),
        .control = self->control, .user_confirm = self->user_confirm,
        .questions = self->decision ? ufo_value_map_get (self->decision, "Questions") : NULL,
        .answers = answers,
        .shot = self->shot_name, .annotated = self->annotated_name,
        .selected = self->selected_name, .time_cost = self->time_cost,
        .cost = r ? r->cost : 0, .prompt_tokens = r ? r->prompt_tokens : 0,
        .completion_tokens = r ? r->completion_tokens : 0,
        .results = self->action_result && text ? text : "",
        .window = self->window_log,
        .model = r && r->model [0] ? r->model : NULL
    };
    app_record_step (a, &rec);
    if (self->shot_url) {
        free (a->last_shot_url);
        a->last_shot_url = self->shot_url;
        self->shot_url = NULL;
    }
    self->phase = APP_STEP_DONE;
}
