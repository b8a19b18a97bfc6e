/*  app_ctx.c - the resources a ufo-app process shares between its subtasks. */
#include "ufo_prelude.h"
#include "ufo_bb_proto.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_llm.h"
#include "ufo_mcp_hub.h"
#include "ufo_policy.h"
#include "ufo_prompt.h"
#include "ufo_rag.h"
#include "ufo_value.h"
#include "ufo_log.h"
#include "app_ctx.h"
#include "ufo_loop.h"

static void
s_copy (char *dst, size_t size, const char *src)
{
    snprintf (dst, size, "%s", src ? src : "");
}

//  The desktop options from the desktop.* keys of the configuration.
static ufo_value_t *
s_desktop_options (const ufo_config_t *config)
{
    ufo_value_t *opts = ufo_value_new_map ();
    const ufo_value_t *v = ufo_config_get (config, "desktop.launchers");
    if (v)
        ufo_value_map_set_copy (opts, "launchers", v);
    ufo_value_map_set_int (opts, "action_timeout_ms",
                           ufo_config_int (config, "desktop.action_timeout_ms", 3000));
    ufo_value_map_set_int (opts, "settle_ms", ufo_config_int (config, "desktop.settle_ms", 60));
    ufo_value_map_set_int (opts, "text_excerpt",
                           ufo_config_int (config, "desktop.text_excerpt", 120));
    v = ufo_config_get (config, "CONTROL_LIST");
    if (v)
        ufo_value_map_set_copy (opts, "control_list", v);
    return opts;
}

//  --- The loop's sources: the desktop's descriptor and the MCP servers (the hub may change
//  between subtasks, so it is looked up every turn) ---------------------------------------

static void
s_desktop_readable (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    app_ctx_t *ctx = arg;
    ufo_desktop_pump (ctx->desktop);
}

//  The X connection is readable: its events are applied; once the display is gone its
//  descriptor (readable for ever) leaves the loop.
static void
s_x_readable (ufo_loop_t *loop, void *arg)
{
    app_ctx_t *ctx = arg;
    ufo_desktop_pump (ctx->desktop);
    if (ufo_desktop_x_fd (ctx->desktop) < 0 && ctx->x_reader) {
        ufo_loop_remove (loop, ctx->x_reader);
        ctx->x_reader = 0;
    }
}

static ufo_mcp_hub_t *s_mcp_polled;     //  the hub whose descriptors this turn polls

static size_t
s_mcp_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    app_ctx_t *ctx = arg;
    s_mcp_polled = ctx->mcp;
    if (!ctx->mcp)
        return 0;
    ufo_http_fd_t fds [32];
    size_t n = ufo_mcp_hub_fds (ctx->mcp, fds, 32);
    *timeout_ms = ufo_mcp_hub_timeout (ctx->mcp);
    return ufo_loop_items_from_http (items, max, fds, n > 32 ? 32 : n);
}

static void
s_mcp_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    app_ctx_t *ctx = arg;
    if (!ctx->mcp)
        return;
    if (ctx->mcp != s_mcp_polled)
        n = 0;                          //  replaced during the turn: its own descriptors next time
    ufo_http_fd_t fds [32];
    n = ufo_loop_items_to_http (fds, items, n > 32 ? 32 : n);
    ufo_mcp_hub_process (ctx->mcp, fds, n);
}

//  The knowledge's transfers (the subtask's embedding and web search, ufo_rag.h) as a source.
static size_t
s_rag_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    app_ctx_t *ctx = arg;
    ufo_http_fd_t fds [8];
    size_t n = ufo_rag_fds (ctx->rag, fds, 8);
    *timeout_ms = ufo_rag_timeout (ctx->rag);
    return ufo_loop_items_from_http (items, max, fds, n > 8 ? 8 : n);
}

static void
s_rag_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    app_ctx_t *ctx = arg;
    ufo_http_fd_t fds [8];
    n = ufo_loop_items_to_http (fds, items, n > 8 ? 8 : n);
    ufo_rag_process (ctx->rag, fds, n);
}

//  An event of the broker connection, for whoever serves tasks (app_worker.c).
static void
s_conn_event (void *arg, ufo_value_t **event_p)
{
    app_ctx_t *ctx = arg;
    if (ctx->on_conn_event)
        ctx->on_conn_event (ctx->on_conn_arg, event_p);
    else
        ufo_debug ("broker connection: %s", ufo_value_map_str (*event_p, "kind", "?"));
}

//  The LLM client of APP_AGENT (in the loop), the engines of model overrides, the prompts.
static int
s_open_model (app_ctx_t *ctx, const app_ctx_options_t *options, ufo_error_t *err)
{
    const ufo_config_t *c = ctx->config;
    ufo_llm_config_t llm_cfg;
    ufo_llm_config_defaults (&llm_cfg);
    if (ufo_llm_config_from (c, "APP_AGENT", &llm_cfg, err) < 0)
        return -1;
    ctx->visual = llm_cfg.visual_mode;
    s_copy (ctx->api_key, sizeof ctx->api_key, llm_cfg.api_key);
    ufo_llm_config_model_name (&llm_cfg, ctx->model, sizeof ctx->model);
    ctx->llm = ufo_llm_new_from_config (c, "APP_AGENT", options->llm_mode, options->llm_cassette, err);
    if (!ctx->llm)
        return -1;
    ufo_loop_add_llm (ctx->loop, ctx->llm);
    ctx->engines = ufo_llm_engines_new (8);
    ctx->prompts = ufo_prompts_new (NULL, err);
    return ctx->prompts ? 0 : -1;
}

int
app_ctx_open (app_ctx_t *ctx, const app_ctx_options_t *options, ufo_error_t *err)
{
    memset (ctx, 0, sizeof *ctx);
    ctx->loop = ufo_loop_new ();
    ctx->app = options->app ? options->app : "*";
    ctx->device = options->device ? options->device : "";
    ctx->config = ufo_config_load (options->config_path, err);
    if (!ctx->config)
        return -1;
    ufo_config_apply_log (ctx->config);
    const ufo_config_t *c = ctx->config;
    //  the model and the prompts (an AppAgent's; the desktop service has neither)
    if (!options->desktop_service && s_open_model (ctx, options, err) < 0)
        goto fail;
    ufo_value_t *dopts = s_desktop_options (c);
    ctx->desktop = ufo_desktop_new (dopts, err);
    ufo_value_destroy (&dopts);
    if (!ctx->desktop)
        goto fail;
    //  the desktop's wake-up fd: a D-Bus reply or AT-SPI event is queued. Without it every
    //  round trip of a control snapshot waited for the loop's timeout (10 ms), which made
    //  a first snapshot 3-5x slower than the same walk from ufo-desktop
    if (ufo_desktop_fd (ctx->desktop) >= 0)
        ufo_loop_reader_add (ctx->loop, NULL, ufo_desktop_fd (ctx->desktop), s_desktop_readable, ctx);
    //  the X connection: its events keep the window list current (ufo_desktop_x_fd)
    if (ufo_desktop_x_fd (ctx->desktop) >= 0)
        ctx->x_reader = ufo_loop_reader_add (ctx->loop, NULL, ufo_desktop_x_fd (ctx->desktop),
                                             s_x_readable, ctx);
    if (!options->desktop_service) {
        ufo_loop_source_t mcp = { NULL, s_mcp_items, s_mcp_dispatch };
        ufo_loop_source_add (ctx->loop, &mcp, ctx);
        ufo_loop_source_t rag = { NULL, s_rag_items, s_rag_dispatch };
        ufo_loop_source_add (ctx->loop, &rag, ctx);
    }
    if (!options->local_board) {
        //  CURVE (security.*): the default of every bus socket of this process
        if (ufo_security_init (c, "agent", err) < 0)
            goto fail;
        //  --broker, else broker.cmd_endpoint, else the default ipc endpoint of this machine
        const char *configured = options->broker && *options->broker ? options->broker
                               : ufo_config_str (c, "broker.cmd_endpoint", "");
        if (ufo_bb_endpoint (configured, "cmd", ctx->endpoint, sizeof ctx->endpoint, err) < 0)
            goto fail;
    }
    if (options->desktop_service) {
        ctx->png_level = (int) ufo_config_int (c, "desktop.png_compression", 1);
        return 0;               //  the desktop service opens its one connection itself
    }
    if (!options->local_board) {
        //  one DEALER for the worker side and every blackboard call (ufo_conn.h)
        char service [200];
        snprintf (service, sizeof service, "app:%s", ctx->app);
        ufo_conn_config_t cc = {
            .endpoint = ctx->endpoint, .service = options->worker ? service : NULL,
            .device = ctx->device, .capacity = 1,
            .heartbeat_ivl_ms = (int) ufo_config_int (c, "dispatch.heartbeat_ivl_ms", 0),
            .heartbeat_liveness = (int) ufo_config_int (c, "dispatch.heartbeat_liveness", 0)
        };
        ctx->conn = ufo_conn_new (&cc, ctx->loop, s_conn_event, ctx, err);
        if (!ctx->conn)
            goto fail;
    }
    ctx->board = app_board_new (ctx->conn);

    ctx->json_retry = (int) ufo_config_int (c, "JSON_PARSING_RETRY", 3);
    ctx->safe_guard = ufo_config_bool (c, "SAFE_GUARD", true);
    ctx->ask_question = ufo_config_bool (c, "ASK_QUESTION", false);
    if (ufo_config_bool (c, "USE_CUSTOMIZATION", false))
        ctx->qa_pair_file = ufo_config_str (c, "QA_PAIR_FILE", NULL);
    ctx->include_last_screenshot = ufo_config_bool (c, "INCLUDE_LAST_SCREENSHOT", true);
    ctx->concat_screenshot = ufo_config_bool (c, "CONCAT_SCREENSHOT", false);
    ctx->save_ui_tree = ufo_config_bool (c, "SAVE_UI_TREE", false);
    ctx->save_full_screen = ufo_config_bool (c, "SAVE_FULL_SCREEN", false);
    ctx->screenshot_to_memory = ufo_config_bool (c, "SCREENSHOT_TO_MEMORY", true);
    ctx->sleep_time = ufo_config_float (c, "SLEEP_TIME", 1.0);
    ctx->png_level = (int) ufo_config_int (c, "desktop.png_compression", 1);
    s_copy (ctx->confirm_policy, sizeof ctx->confirm_policy,
            ufo_config_str (c, "desktop.confirm_policy", "ask"));
    ctx->confirm_controls = ufo_config_get (c, "desktop.confirm_controls");
    ctx->confirm_actions = ufo_config_get (c, "desktop.confirm_actions");
    ctx->history_keys = ufo_config_get (c, "HISTORY_KEYS");
    ctx->control_list = ufo_config_get (c, "CONTROL_LIST");
    ctx->memory_steps = 20;
    ctx->rag = ufo_rag_new (c);
    ctx->action_sequence = ufo_config_bool (c, "ACTION_SEQUENCE", false);
    return 0;
fail:
    app_ctx_close (ctx);
    return -1;
}

void
app_ctx_close (app_ctx_t *ctx)
{
    ufo_mcp_hub_destroy (&ctx->mcp);
    free (ctx->mcp_app);
    ctx->mcp_app = NULL;
    app_board_destroy (&ctx->board);        //  flushes its writes (bounded) over conn
    ufo_conn_destroy (&ctx->conn);          //  a worker leaves: the broker requeues what it ran
    ufo_rag_destroy (&ctx->rag);
    ufo_desktop_destroy (&ctx->desktop);
    ufo_prompts_destroy (&ctx->prompts);
    ufo_llm_destroy (&ctx->llm);
    ufo_llm_engines_destroy (&ctx->engines);
    ufo_config_destroy (&ctx->config);
    ufo_loop_destroy (&ctx->loop);
}

//  First pattern of list (strings) matching text, case-insensitively, or NULL.
bool
app_ctx_policy_requires (const app_ctx_t *ctx, const char *function, const char *control_name,
                         char *why, size_t size)
{
    if (!function || !*function)
        return false;
    const char *hit = ufo_policy_match (ctx->confirm_actions, function);
    if (hit) {
        snprintf (why, size, "the action %s matches the confirmation policy '%s'", function, hit);
        return true;
    }
    //  reading and answering change nothing: no confirmation for them
    static const char *const harmless [] = { "texts", "summary", "annotation", "wait",
                                              "get_range_values" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (harmless); i++)
        if (strcmp (function, harmless [i]) == 0)
            return false;
    if (control_name && *control_name) {
        hit = ufo_policy_match (ctx->confirm_controls, control_name);
        if (hit) {
            snprintf (why, size, "the control '%s' matches the confirmation policy '%s'",
                      control_name, hit);
            return true;
        }
    }
    return false;
}

ufo_mcp_hub_t *
app_ctx_mcp (app_ctx_t *ctx, const char *application)
{
    const char *app = application && *application ? application : ctx->app;
    if (ctx->mcp && ctx->mcp_app && !strcasecmp (ctx->mcp_app, app))
        return ctx->mcp;
    ufo_mcp_hub_destroy (&ctx->mcp);
    free (ctx->mcp_app);
    ctx->mcp_app = ufo_strdup (app);
    ufo_error_t err;
    ctx->mcp = ufo_mcp_hub_new (ctx->config, "APP_AGENT", strcmp (app, "*") ? app : NULL, NULL, &err);
    assert (ctx->mcp);              //  only a named server can be missing, and we name none
    return ctx->mcp;
}

static void
s_extra_readable (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    UFO_UNUSED (arg);                   //  only wakes the turn; the caller reads it
}

void
app_ctx_wait (app_ctx_t *ctx, int extra_fd, int timeout_ms)
{
    int extra = extra_fd >= 0 ? ufo_loop_reader_add (ctx->loop, NULL, extra_fd, s_extra_readable, NULL) : 0;
    ufo_loop_run_once (ctx->loop, timeout_ms);
    ufo_loop_remove (ctx->loop, extra);
    ufo_desktop_pump (ctx->desktop);
}
