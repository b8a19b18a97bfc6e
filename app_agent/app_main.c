/*  app_main.c - ufo-app: the AppAgent process.

    ufo-app --app NAME --device ID [--broker EP] [--config FILE] [--llm-mode MODE]
            [--llm-cassette FILE] [--log-level LEVEL]
        A worker of service app:NAME (or app:* with --app '*') on device ID: runs the
        subtasks the HostAgent dispatches (docs/PROTOCOL.md section 4), one at a time.

    ufo-app --subtask FILE.json [--log-root DIR] [--broker EP] [...]
        Runs one subtask body from a file through the same code path, without the
        dispatch layer (tests, debugging). The file is the body itself, or
        {"body": {...}, "task_id": id, "attempt": n, "answers": [...]}: questions and
        confirmations are answered, in order, from "answers" (a list of strings or a
        string for a question, a bool for a confirmation); when they run out questions get
        the placeholder answer and confirmations are refused. Progress and the result are
        printed on stdout as JSON lines ({"kind": ..., ...}, the last one {"kind":
        "result", "body": {...}}). The board is the broker's with --broker, else an
        in-process one. Exit status: 0 FINISH, 1 FAIL or ERROR, 2 bad usage or set-up.

    ufo-app --desktop-service --device ID [--broker EP] [--config FILE] [--log-level LEVEL]
        The desktop service of device ID (app_desktop_svc.h, docs/PROTOCOL.md 4.5): a
        worker of service "desktop" that answers window lists and screenshots for any
        client of the bus (`ufo mcp-server`), whatever the device's AppAgents are doing.
        No model, prompts or board; one broker connection. `ufo up` starts one per device.

    SIGTERM / SIGINT stop cleanly: a dispatched subtask in progress is released (the
    broker requeues it), a file subtask ends as ERROR. */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "app_agent.h"
#include "app_desktop_svc.h"
#include "app_main.h"

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: ufo-app --app NAME --device ID [--broker EP] [--config FILE]\n"
        "               [--llm-mode live|record|replay] [--llm-cassette FILE] [--log-level L]\n"
        "       ufo-app --subtask FILE.json [--log-root DIR] [--broker EP] [same options]\n"
        "       ufo-app --desktop-service --device ID [--broker EP] [--config FILE] [--log-level L]\n"
        "Runs the AppAgent: a worker of service app:NAME (NAME '*' for any application),\n"
        "or one subtask from a file, or the device's desktop service (window lists and\n"
        "screenshots for `ufo mcp-server`; see the header of app_agent/app_main.c).\n");
}

//  --- file mode -------------------------------------------------------------------

typedef struct {
    const ufo_value_t *answers;     //  from the file
    size_t next;                    //  next answer to use
    ufo_value_t *pending;           //  input to deliver on the next turn
} s_file_io_t;

static void
s_print (const ufo_value_t *v)
{
    char *json = ufo_json_dump (v, UFO_JSON_COMPACT, NULL);
    printf ("%s\n", json);
    fflush (stdout);
    free (json);
}

static void
s_file_emit (void *arg, ufo_value_t **body_p)
{
    s_file_io_t *io = arg;
    ufo_value_t *body = *body_p;
    s_print (body);
    const char *kind = ufo_value_map_str (body, "kind", "");
    bool question = strcmp (kind, "question") == 0;
    if ((!question && strcmp (kind, "confirm") != 0) || ufo_value_map_has (body, "answered"))
        return;             //  nothing to answer (an "answered" confirm only reports a decision)
    const ufo_value_t *a = ufo_value_list_at (io->answers, io->next);
    ufo_value_t *input = ufo_value_new_map ();
    ufo_value_map_set_str (input, "qid", ufo_value_map_str (body, "qid", ""));
    if (question) {
        ufo_value_t *list = ufo_value_new_list ();
        if (ufo_value_type (a) == UFO_TLIST || ufo_value_type (a) == UFO_TSTRING)
            io->next++;
        if (ufo_value_type (a) == UFO_TLIST)
            for (size_t i = 0; i < ufo_value_size (a); i++)
                ufo_value_list_push_str (list, ufo_value_str (ufo_value_list_at (a, i)) ?: "");
        else
        if (ufo_value_type (a) == UFO_TSTRING)
            ufo_value_list_push_str (list, ufo_value_str (a));
        else
            ufo_value_list_push_str (list, "no answer available, proceed");
        ufo_value_map_set (input, "answers", &list);
    }
    else {
        bool yes = ufo_value_type (a) == UFO_TBOOL && ufo_value_bool (a);
        if (ufo_value_type (a) == UFO_TBOOL)
            io->next++;
        ufo_value_map_set_bool (input, "confirm", yes);
    }
    ufo_value_destroy (&io->pending);
    io->pending = input;
}

static int
s_run_file (app_ctx_t *ctx, const char *path, const char *log_root)
{
    ufo_error_t err;
    ufo_value_t *file = ufo_json_parse_file (path, NULL, &err);
    if (!file || ufo_value_type (file) != UFO_TMAP) {
        ufo_error ("%s: %s", path, file ? "not a JSON object" : err.message);
        ufo_value_destroy (&file);
        return 2;
    }
    const ufo_value_t *b = ufo_value_map_get (file, "body");
    ufo_value_t *body = ufo_value_dup (ufo_value_type (b) == UFO_TMAP ? b : file);
    if (log_root)
        ufo_value_map_set_str (body, "log_root", log_root);
    s_file_io_t io = { .answers = ufo_value_map_get (file, "answers") };
    int attempt = (int) ufo_value_map_int (file, "attempt", 1);
    const char *task_id = ufo_value_map_str (file, "task_id", "local");
    app_agent_t *agent = app_agent_new (ctx, task_id, body, attempt, s_file_emit, &io, &err);
    ufo_value_destroy (&body);
    if (!agent) {
        ufo_error ("%s: %s", path, err.message);
        ufo_value_t *r = ufo_value_new_map ();
        ufo_value_map_set_str (r, "kind", "result");
        ufo_value_t *rb = ufo_value_new_map ();
        ufo_value_map_set_str (rb, "status", "ERROR");
        ufo_value_map_set_str (rb, "error", err.message);
        ufo_value_map_set (r, "body", &rb);
        s_print (r);
        ufo_value_destroy (&r);
        ufo_value_destroy (&file);
        return 2;
    }
    while (!app_agent_advance (agent)) {
        if (*ufo_agent_stop_flag ()) {
            app_agent_abort (agent, "ufo-app was stopped");
            break;
        }
        if (io.pending) {
            ufo_value_t *input = io.pending;
            io.pending = NULL;
            if (app_agent_input (agent, input) < 0)
                ufo_warn ("input not accepted");
            ufo_value_destroy (&input);
            continue;
        }
        app_ctx_wait (ctx, -1, app_agent_timeout (agent));
    }
    ufo_value_t *result = app_agent_take_result (agent);
    //  the board writes' outcome (bounded); failures are reported with the result
    app_board_flush (ctx->board, 5000);
    ufo_value_t *board_errors = app_board_take_errors (ctx->board);
    if (board_errors && ufo_value_type (result) == UFO_TMAP)
        ufo_value_map_set (result, "board_errors", &board_errors);
    ufo_value_destroy (&board_errors);
    const char *status = ufo_value_map_str (result, "status", "ERROR");
    int rc = strcmp (status, "FINISH") == 0 ? 0 : 1;
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "kind", "result");
    ufo_value_map_set (r, "body", &result);
    s_print (r);
    ufo_value_destroy (&r);
    ufo_value_destroy (&io.pending);
    app_agent_destroy (&agent);
    ufo_value_destroy (&file);
    return rc;
}

//  --- main ----------------------------------------------------------------------------

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-app");
    ufo_agent_opts_t common = { .program = "ufo-app" };
    const char *app = NULL, *subtask = NULL, *log_root = NULL, *desktop_service = NULL;
    const ufo_agent_opt_t own [] = {
        { "--app", &app }, { "--subtask", &subtask }, { "--log-root", &log_root }, { NULL, NULL }
    };
    const ufo_agent_opt_t flags [] = { { "--desktop-service", &desktop_service }, { NULL, NULL } };
    int rc;
    if (ufo_agent_opts_parse_flags (&common, argc, argv, own, flags, UFO_AGENT_OPT_NAME | UFO_AGENT_OPT_PROMPTS,
                                    s_usage, &rc) < 0)
        return rc;
    if (desktop_service)
        ufo_log_set_name ("ufo-app/desktop");
    if (common.log_level) {
        int level = ufo_log_level_parse (common.log_level);
        if (level < 0) {
            fprintf (stderr, "ufo-app: bad --log-level %s\n", common.log_level);
            return 2;
        }
        setenv ("UFO_LOG_LEVEL", common.log_level, 1);
        ufo_log_set_level ((ufo_log_level_t) level);
    }
    if (desktop_service && (app || subtask || log_root || common.llm_mode || common.llm_cassette)) {
        fprintf (stderr, "ufo-app: --desktop-service serves desktop queries only: no --app, --subtask, "
                 "--log-root or --llm-* with it\n");
        s_usage (stderr);
        return 2;
    }
    if (desktop_service && (!common.device || !*common.device)) {
        fprintf (stderr, "ufo-app: --desktop-service needs --device ID\n");
        s_usage (stderr);
        return 2;
    }
    if (!desktop_service && !subtask && (!app || !*app || !common.device || !*common.device)) {
        fprintf (stderr, "ufo-app: --app NAME and --device ID are required (or --subtask FILE)\n");
        s_usage (stderr);
        return 2;
    }
    //  The configuration and CURVE are loaded by app_ctx_open (not ufo_agent_start): a file
    //  subtask without --broker runs on an in-process board, with no bus and no security.
    app_ctx_options_t opts = {
        .config_path = common.config_path, .broker = common.broker, .llm_mode = common.llm_mode,
        .llm_cassette = common.llm_cassette, .app = app, .device = common.device,
        .local_board = subtask && !common.broker, .worker = !subtask && !desktop_service,
        .desktop_service = desktop_service != NULL
    };
    ufo_agent_signals_install ();
    app_ctx_t ctx;
    ufo_error_t err;
    if (app_ctx_open (&ctx, &opts, &err) < 0) {
        ufo_error ("cannot start: %s", err.message);
        return 2;
    }
    ufo_agent_signals_install ();   //  again: czmq installs its own when it starts
    if (desktop_service)
        rc = app_desktop_svc_run (&ctx);
    else
    if (subtask)
        rc = s_run_file (&ctx, subtask, log_root);
    else
        rc = app_worker_run (&ctx, ctx.endpoint);
    app_ctx_close (&ctx);
    return rc;
}
