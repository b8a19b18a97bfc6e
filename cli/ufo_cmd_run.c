/*  ufo_cmd_run.c - `ufo run "REQUEST" [--request R2 ...] [--device ID] [--task NAME] [--yes]
    [--json] [--plan FILE] [--broker EP] [--config FILE] [--timeout S] [--model NAME --api-base URL
    --api-type T --api-key-env NAME ...]`: submits a session to
    service "host", shows its progress, answers its questions and confirmations from the
    terminal, prints the evaluation and the cost, and points to the report.
    Exit code 0 only when the request completed (FINISH, evaluation not "no"). */
#include "ufo_prelude.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_outcome.h"
#include "ufo_report.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include "ufo_cli_model.h"
#include "ufo_cli_term.h"
#include "ufo_tasks.h"

#define S_ACCEPT_TIMEOUT_S 15
#define S_DEVICE_GRACE_MS 15000     //  how long after the broker's start HostAgents may still connect

static volatile sig_atomic_t s_interrupted = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_interrupted++;
}

static void
s_help (void)
{
    ufo_cli_usage (stdout, "run");
    printf ("\nOptions:\n"
            "  --request TEXT   the request of the next round (repeatable; more than MAX_ROUND is refused)\n"
            "  --device ID      run on this device (default: any free one)\n"
            "  --task NAME      log directory name under the log root (default: a timestamped name);\n"
            "                   a name already used is refused\n"
            "  --resume         with --task NAME: continue that session (same session id, same logs)\n"
            "  --plan FILE      follower mode: follow these subtasks (JSON list, {\"plan\": [...]}, or lines)\n"
            "  --yes            confirm sensitive actions without asking; never ask questions\n"
            "  --json           print every event and the result as JSON lines\n"
            "  --interactive    read answers from stdin even when it is not a terminal\n"
            "  --broker EP      broker command endpoint (default: the one `ufo up` started, else config)\n"
            "  --config FILE    configuration file\n"
            "  --timeout S      give up after S seconds (default 3600)\n"
            "Model of this session only (the agents keep `ufo up`'s for other sessions):\n"
            UFO_CLI_OVERRIDE_HELP ("   ") "\n"
            "Without a terminal and without --yes, confirmations are refused and questions get\n"
            "\"no answer available, proceed\". Exit status: 0 when the request was completed.\n");
}

//  Reads one line from the terminal into out (without the newline). false on EOF.
static bool
s_read_line (char *out, size_t size)
{
    if (!fgets (out, (int) size, stdin))
        return false;
    out [strcspn (out, "\r\n")] = 0;
    return true;
}

static void
s_answer_question (ufo_tasks_t *tasks, const char *id, const ufo_value_t *q, bool interactive)
{
    ufo_value_t *answers = ufo_value_new_list ();
    const ufo_value_t *questions = ufo_value_map_get (q, "questions");
    fprintf (stderr, "\n❔ %s asks:\n", ufo_value_map_str (q, "from", "the agent"));
    for (size_t i = 0; i < ufo_value_size (questions); i++) {
        const char *text = ufo_value_str (ufo_value_list_at (questions, i));
        fprintf (stderr, "   %s\n   > ", text ? text : "?");
        char line [4096] = "";
        if (!interactive || !s_read_line (line, sizeof line) || !*line)
            snprintf (line, sizeof line, "no answer available, proceed");
        if (!interactive)
            fprintf (stderr, "%s\n", line);
        ufo_value_list_push_str (answers, line);
    }
    ufo_value_t *input = ufo_value_new_map ();
    ufo_value_map_set_str (input, "qid", ufo_value_map_str (q, "qid", ""));
    ufo_value_map_set (input, "answers", &answers);
    if (ufo_tasks_input (tasks, id, &input) != 0)
        fprintf (stderr, "ufo run: the answer could not be sent\n");
    ufo_value_destroy (&input);
}

static void
s_answer_confirm (ufo_tasks_t *tasks, const char *id, const ufo_value_t *c, bool interactive, bool yes)
{
    char *args = ufo_json_dump (ufo_value_map_get (c, "args"), UFO_JSON_COMPACT, NULL);
    const ufo_value_t *control = ufo_value_map_get (c, "control");
    fprintf (stderr, "\n⚠️  %s wants to run %s%s on [%s] %s \"%s\"\n   reason: %s\n",
             ufo_value_map_str (c, "from", "the agent"), ufo_value_map_str (c, "function", "?"),
             args ? args : "", ufo_value_map_str (control, "label", ""), ufo_value_map_str (control, "type", ""),
             ufo_value_map_str (control, "name", ""), ufo_value_map_str (c, "reason", ""));
    free (args);
    const char *answered = ufo_value_map_str (c, "answered", NULL);
    if (answered) {
        //  decided by the AppAgent already (policy, --yes, no user): report it, send nothing
        bool allowed = strcmp (answered, "yes") == 0;
        fprintf (stderr, "   %s by policy (%s)\n", allowed ? "allowed" : "refused",
                 ufo_value_map_str (c, "by", "the AppAgent"));
        return;
    }
    bool ok = yes;
    if (yes)
        fprintf (stderr, "   allowed (--yes)\n");
    else if (!interactive)
        fprintf (stderr, "   refused (no terminal; use --yes to allow)\n");
    else {
        fprintf (stderr, "   allow? [y/N] ");
        char line [64] = "";
        ok = s_read_line (line, sizeof line) && (line [0] == 'y' || line [0] == 'Y');
    }
    ufo_value_t *input = ufo_value_new_map ();
    ufo_value_map_set_str (input, "qid", ufo_value_map_str (c, "qid", ""));
    ufo_value_map_set_bool (input, "confirm", ok);
    if (ufo_tasks_input (tasks, id, &input) != 0)
        fprintf (stderr, "ufo run: the confirmation could not be sent\n");
    ufo_value_destroy (&input);
}

//  The summary after the result; returns the exit code.
static int
s_summary (const ufo_value_t *result, bool json)
{
    const ufo_value_t *cost = ufo_value_map_get (result, "cost");
    const char *logdir = ufo_value_map_str (result, "logdir", "");
    char report [PATH_MAX] = "";
    if (*logdir) {
        snprintf (report, sizeof report, "%s/report.html", logdir);
        if (access (report, R_OK) != 0 && access (logdir, R_OK) == 0
        &&  ufo_report_write (logdir, report, NULL, NULL) != 0)
            report [0] = 0;
    }
    int code = ufo_cli_exit_code (result);
    if (json)
        return code;
    ufo_cli_live_clear ();
    const char *status = ufo_outcome_session_status (result, NULL);
    bool completed = ufo_outcome_completed (result);
    //  one mark for the whole session: ✅ only when it was completed (FINISH, evaluation not "no")
    printf ("\n%s session %s%s%s: %" PRId64 " round(s), %" PRId64 " step(s)\n", completed ? "✅" : "❌",
            ufo_cli_color (ufo_cli_status_color (status)), status, ufo_cli_color ("off"),
            ufo_value_map_int (result, "rounds", 0), ufo_value_map_int (result, "steps", 0));
    const char *error = ufo_value_map_str (result, "error", "");
    if (*error)
        printf ("   %serror: %s%s\n", ufo_cli_color ("red"), error, ufo_cli_color ("off"));
    ufo_cli_print_evaluation (stdout, "evaluation", ufo_value_map_get (result, "evaluation"));
    char disagree [200];
    if (ufo_outcome_disagreement (result, disagree, sizeof disagree))
        printf ("%s⚠ %s%s\n", ufo_cli_color ("yellow"), disagree, ufo_cli_color ("off"));
    printf ("cost: $%.4f (%" PRId64 " prompt + %" PRId64 " completion tokens)\n",
            ufo_value_map_float (cost, "total", 0), ufo_value_map_int (cost, "prompt_tokens", 0),
            ufo_value_map_int (cost, "completion_tokens", 0));
    if (*logdir)
        printf ("logs:   %s\n", logdir);
    if (*report)
        printf ("report: %s\n", report);
    printf ("%s\n", code == 0 ? "the request was completed" : "the request was NOT completed");
    return code;
}

int
ufo_cmd_run (int argc, char **argv)
{
    const char *device = NULL, *task = NULL, *plan_path = NULL, *broker = NULL, *config_path = NULL;
    bool yes = false, json = false, force_interactive = false, resume = false;
    double timeout_s = 3600;
    ufo_value_t *requests = ufo_value_new_list ();
    ufo_llm_override_t override;        //  this session's model (--model, --api-base, ...)
    ufo_llm_override_init (&override);
    int code = UFO_CLI_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        const char **slot = NULL;
        int taken = ufo_cli_model_override_arg (&override, argc, argv, &i, "ufo run");
        if (taken < 0)
            goto done;
        if (taken)
            continue;
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_help ();
            ufo_value_destroy (&requests);
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--yes") == 0 || strcmp (arg, "-y") == 0) { yes = true; continue; }
        if (strcmp (arg, "--json") == 0) { json = true; continue; }
        if (strcmp (arg, "--resume") == 0) { resume = true; continue; }
        if (strcmp (arg, "--interactive") == 0) { force_interactive = true; continue; }
        if (strcmp (arg, "--device") == 0) slot = &device;
        else if (strcmp (arg, "--task") == 0) slot = &task;
        else if (strcmp (arg, "--plan") == 0) slot = &plan_path;
        else if (strcmp (arg, "--broker") == 0) slot = &broker;
        else if (strcmp (arg, "--config") == 0) slot = &config_path;
        else if (strcmp (arg, "--request") == 0 || strcmp (arg, "--timeout") == 0) {
            if (i + 1 >= argc) {
                fprintf (stderr, "ufo run: %s needs a value\n", arg);
                goto done;
            }
            if (strcmp (arg, "--request") == 0)
                ufo_value_list_push_str (requests, argv [++i]);
            else if ((timeout_s = atof (argv [++i])) <= 0) {
                fprintf (stderr, "ufo run: --timeout needs a positive number of seconds\n");
                goto done;
            }
            continue;
        }
        else if (arg [0] == '-' && arg [1]) {
            fprintf (stderr, "ufo run: unknown option %s\n", arg);
            ufo_cli_usage (stderr, "run");
            goto done;
        }
        else {
            //  the first request goes first, whatever the order of the options
            ufo_value_t *first = ufo_value_new_list ();
            ufo_value_list_push_str (first, arg);
            for (size_t k = 0; k < ufo_value_size (requests); k++)
                ufo_value_list_push_str (first, ufo_value_str (ufo_value_list_at (requests, k)));
            ufo_value_destroy (&requests);
            requests = first;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf (stderr, "ufo run: %s needs a value\n", arg);
            goto done;
        }
        *slot = argv [++i];
    }
    if (resume && !task) {
        fprintf (stderr, "ufo run: --resume needs --task NAME (the session to continue)\n");
        goto done;
    }
    if (ufo_value_size (requests) == 0) {
        fprintf (stderr, "ufo run: what should be done? ufo run \"REQUEST\"\n");
        ufo_cli_usage (stderr, "run");
        goto done;
    }
    code = UFO_CLI_FAIL;
    ufo_error_t err = { 0 };
    ufo_value_t *plan = NULL;
    if (plan_path && !(plan = ufo_cli_load_plan (plan_path, &err))) {
        fprintf (stderr, "ufo run: %s\n", err.message);
        goto done;
    }
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo run: configuration: %s\n", err.message);
        ufo_value_destroy (&plan);
        goto done;
    }
    if (!ufo_cli_model_override_ready (config, &override, "ufo run")) {
        ufo_config_destroy (&config);
        ufo_value_destroy (&plan);
        code = UFO_CLI_USAGE;
        goto done;
    }
    if (!*override.model)
        ufo_cli_model_warn_unpriced (config, stderr, "ufo run");     //  costs would show $0
    int64_t max_round = ufo_config_int (config, "MAX_ROUND", 1);
    if (max_round > 0 && (int64_t) ufo_value_size (requests) > max_round) {
        //  the HostAgent would refuse the session: say so before anything is submitted
        fprintf (stderr, "ufo run: %zu requests but MAX_ROUND is %" PRId64 "; give at most %" PRId64
                 " (one per round) or raise MAX_ROUND in the configuration\n", ufo_value_size (requests),
                 max_round, max_round);
        ufo_config_destroy (&config);
        ufo_value_destroy (&plan);
        code = UFO_CLI_USAGE;
        goto done;
    }
    char endpoint [512], log_root [PATH_MAX];
    if (ufo_cli_broker (broker, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0) {
        fprintf (stderr, "ufo run: broker: %s\n", err.message);
        ufo_config_destroy (&config);
        ufo_value_destroy (&plan);
        goto done;
    }
    if (ufo_security_init (config, "client", &err) < 0) {
        fprintf (stderr, "ufo run: security: %s\n", err.message);
        ufo_config_destroy (&config);
        ufo_value_destroy (&plan);
        goto done;
    }
    ufo_config_destroy (&config);
    //  fail fast: no broker, or a device no HostAgent serves (right after `ufo up` started,
    //  HostAgents may still be connecting: a bounded wait, S_DEVICE_GRACE_MS after the
    //  broker's start at most)
    bool no_host = false;
    int served = ufo_cli_device_check (endpoint, "ufo-run", device, S_DEVICE_GRACE_MS, json, &no_host, &err);
    if (served <= 0) {
        fprintf (stderr, "ufo run: %s\n", err.message);
        ufo_value_destroy (&plan);
        goto done;
    }
    if (no_host && !json)
        fprintf (stderr, "ufo run: no HostAgent is connected yet; the session waits for one\n");
    char session [128], task_name [160];
    ufo_cli_new_id (session, sizeof session, "s");
    if (task)
        snprintf (task_name, sizeof task_name, "%s", task);
    else
        ufo_cli_new_id (task_name, sizeof task_name, "run");
    //  a task name names one session's logs: a used one is refused, or continued with --resume
    char used [PATH_MAX + 200];
    snprintf (used, sizeof used, "%s/%s/request.json", log_root, task_name);
    ufo_value_t *earlier = access (used, F_OK) == 0 ? ufo_json_parse_file (used, NULL, NULL) : NULL;
    const char *earlier_session = ufo_value_map_str (earlier, "session", "");
    if (access (used, F_OK) == 0 && !resume) {
        fprintf (stderr, "ufo run: the task name \"%s\" is already used (logs in %s/%s%s%s); choose another "
                 "--task, or add --resume to continue that session\n", task_name, log_root, task_name,
                 *earlier_session ? ", session " : "", earlier_session);
        ufo_value_destroy (&earlier);
        ufo_value_destroy (&plan);
        goto done;
    }
    if (resume && !*earlier_session) {
        fprintf (stderr, "ufo run: --resume: no session logged in %s/%s (no request.json with a session)\n",
                 log_root, task_name);
        ufo_value_destroy (&earlier);
        ufo_value_destroy (&plan);
        goto done;
    }
    if (resume)
        snprintf (session, sizeof session, "%s", earlier_session);
    ufo_value_destroy (&earlier);
    bool interactive = !yes && (force_interactive || isatty (STDIN_FILENO));
    char name [128], host [64] = "";
    gethostname (host, sizeof host - 1);
    snprintf (name, sizeof name, "ufo-run@%s:%d", host, (int) getpid ());
    ufo_tasks_t *tasks = ufo_tasks_new (endpoint, name, NULL, NULL, &err);
    if (!tasks) {
        fprintf (stderr, "ufo run: %s\n", err.message);
        ufo_value_destroy (&plan);
        goto done;
    }
    ufo_value_t *spec = ufo_cli_session_spec (session, task_name, log_root, requests, plan, device,
                                              interactive, yes, (int64_t) (timeout_s * 1000));
    ufo_value_destroy (&plan);
    ufo_value_t *model = ufo_llm_override_to_value (&override);
    if (model)
        ufo_value_map_set (ufo_value_map_get (spec, "body"), "model", &model);
    if (resume) {
        //  a new task that continues the session: its own idempotency key, "resume" in the body
        char key [200];
        ufo_cli_new_id (key, sizeof key, "resume");
        char full [400];
        snprintf (full, sizeof full, "%.120s:%s", session, key);
        ufo_value_map_set_str (spec, "idempotency_key", full);
        ufo_value_map_set_bool (ufo_value_map_get (spec, "body"), "resume", true);
    }
    char id [33];
    if (ufo_tasks_submit (tasks, &spec, id, &err) != 0) {
        fprintf (stderr, "ufo run: %s\n", err.message);
        ufo_value_destroy (&spec);
        ufo_tasks_destroy (&tasks);
        goto done;
    }
    if (!json) {
        ufo_cli_term_setup (stdout);
        fprintf (stderr, "session %s, task %s (%zu round(s)%s%s) -> %s\nlogs: %s/%s\n", session, task_name,
                 ufo_value_size (requests), plan_path ? ", following the plan" : "", resume ? ", resumed" : "",
                 endpoint, log_root, task_name);
    if (!json && !ufo_llm_override_empty (&override))
        fprintf (stderr, "model (this session, every agent): %s%s%s%s%s%s%s\n", *override.api_type ? override.api_type : "",
                 *override.api_type ? " " : "", *override.api_base ? override.api_base : "(the agents' endpoint)",
                 *override.model ? " model " : "", override.model,
                 *override.api_key_env ? ", key from $" : "", override.api_key_env);
    }
    struct sigaction sa = { .sa_handler = s_on_signal }, old_int, old_term;
    sigaction (SIGINT, &sa, &old_int);
    sigaction (SIGTERM, &sa, &old_term);
    struct timespec t0;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    bool accepted = false, cancelling = false, header_done = false, started = false;
    double cost = 0, cancel_at = 0;
    ufo_value_t *result = NULL, *pending_step = NULL;
    while (!result) {
        struct timespec now;
        clock_gettime (CLOCK_MONOTONIC, &now);
        double elapsed = (double) (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
        if (s_interrupted && !cancelling) {
            fprintf (stderr, "\nufo run: cancelling the session (Ctrl-C again to leave at once)\n");
            ufo_tasks_cancel (tasks, id);
            cancelling = true;
            cancel_at = elapsed;
        }
        if (s_interrupted > 1 || (cancelling && elapsed - cancel_at > 20)) {
            fprintf (stderr, "ufo run: left without the result\n");
            break;
        }
        if (!accepted && elapsed > S_ACCEPT_TIMEOUT_S) {
            fprintf (stderr, "ufo run: no broker answered at %s within %d s (is `ufo up` running?)\n",
                     endpoint, S_ACCEPT_TIMEOUT_S);
            break;
        }
        if (elapsed > timeout_s && !cancelling) {
            fprintf (stderr, "ufo run: --timeout %.0f s reached\n", timeout_s);
            s_interrupted = 1;
            continue;
        }
        if (!json)
            ufo_cli_live_tick ();
        ufo_value_t *event = ufo_tasks_next (tasks, 200);
        if (!event)
            continue;
        const char *kind = ufo_value_map_str (event, "kind", "");
        //  a step line waits for the cost message that follows its step, so it shows the
        //  cost including that step
        bool is_cost = strcmp (kind, "progress") == 0
                    && strcmp (ufo_value_map_str (ufo_value_map_get (event, "body"), "kind", ""), "cost") == 0;
        if (pending_step && is_cost) {
            cost = ufo_value_map_float (ufo_value_map_get (event, "body"), "session", cost);
            ufo_cli_live_clear ();
            ufo_cli_print_step (stdout, NULL, pending_step, cost);
            ufo_value_destroy (&pending_step);
        }
        else if (pending_step) {
            ufo_cli_live_clear ();
            ufo_cli_print_step (stdout, NULL, pending_step, cost);
            ufo_value_destroy (&pending_step);
        }
        if (json) {
            if (strcmp (kind, "result") == 0) {
                //  one vocabulary: "status" is the session's (FINISH, FAIL, ERROR, CANCELLED), the
                //  dispatch status of the task stays as "task_status"
                const ufo_value_t *b = ufo_value_map_get (event, "body");
                char task_status [32];
                snprintf (task_status, sizeof task_status, "%s", ufo_value_map_str (event, "status", ""));
                ufo_value_map_set_str (event, "status", ufo_outcome_session_status (
                    ufo_value_type (b) == UFO_TMAP && ufo_value_map_has (b, "status") ? b : NULL, task_status));
                ufo_value_map_set_str (event, "task_status", task_status);
                ufo_value_map_set_bool (event, "completed", ufo_value_type (b) == UFO_TMAP
                                                          && ufo_outcome_completed (b));
            }
            else
            if (strcmp (kind, "progress") == 0) {
                //  a step's outcome, spelled out: "success" false when the step failed
                ufo_value_t *b = ufo_value_map_get (event, "body");
                const ufo_value_t *rec = ufo_value_map_get (b, "record");
                if (strcmp (ufo_value_map_str (b, "kind", ""), "step") == 0 && rec) {
                    const char *why = NULL;
                    bool failed = ufo_outcome_step_failed (rec, &why);
                    ufo_value_map_set_bool (b, "success", !failed);
                    if (failed)
                        ufo_value_map_set_str (b, "failure", why);
                }
            }
            char *text = ufo_json_dump (event, UFO_JSON_COMPACT, NULL);
            printf ("%s\n", text);
            fflush (stdout);
            free (text);
        }
        if (strcmp (kind, "accepted") == 0) {
            accepted = true;
            //  the HostAgent says when it takes the session (an "activity" progress event)
            if (!json && !header_done && !started && strcmp (ufo_value_map_str (event, "state", ""), "queued") == 0)
                fprintf (stderr, "accepted; queued for a HostAgent%s%s\n", device ? " on device " : "",
                         device ? device : "");
        }
        else if (strcmp (kind, "progress") == 0) {
            accepted = true;
            const ufo_value_t *body = ufo_value_map_get (event, "body");
            const char *pk = ufo_value_map_str (body, "kind", "");
            if (strcmp (pk, "cost") == 0)
                cost = ufo_value_map_float (body, "session", cost);
            else if (strcmp (pk, "activity") == 0 && !json) {
                started = true;
                ufo_cli_live_event (body);
            }
            else if (strcmp (pk, "step") == 0 && !json) {
                ufo_cli_live_clear ();
                if (!header_done)
                    ufo_cli_print_step_header (stdout);
                header_done = true;
                pending_step = ufo_value_dup (ufo_value_map_get (body, "record"));
            }
            else if (strcmp (pk, "question") == 0) {
                ufo_cli_live_clear ();
                s_answer_question (tasks, id, body, interactive);
            }
            else if (strcmp (pk, "confirm") == 0) {
                ufo_cli_live_clear ();
                s_answer_confirm (tasks, id, body, interactive, yes);
            }
            else if (strcmp (pk, "evaluation") == 0 && !json
                     && strcmp (ufo_value_map_str (body, "level", ""), "session") != 0) {
                char title [64];
                snprintf (title, sizeof title, "%s evaluation%s", ufo_value_map_str (body, "level", ""), "");
                if (strcmp (ufo_value_map_str (body, "level", ""), "round") == 0)
                    snprintf (title, sizeof title, "round %" PRId64 " evaluation", ufo_value_map_int (body, "round", 0));
                ufo_cli_live_clear ();
                ufo_cli_print_evaluation (stdout, title, ufo_value_map_get (body, "result"));
            }
        }
        else if (strcmp (kind, "result") == 0) {
            accepted = true;
            const char *status = ufo_value_map_str (event, "status", "");
            const ufo_value_t *body = ufo_value_map_get (event, "body");
            if (ufo_value_type (body) == UFO_TMAP && ufo_value_map_has (body, "status"))
                result = ufo_value_dup (body);
            else {
                ufo_cli_live_clear ();
                fprintf (stderr, "ufo run: session %s (the task %s: %s)\n", ufo_outcome_session_status (NULL, status),
                         status, ufo_value_map_str (event, "reason", "no reason given"));
                ufo_value_destroy (&event);
                break;
            }
        }
        else if (strcmp (kind, "disconnected") == 0 && !json)
            fprintf (stderr, "ufo run: lost the broker; reconnecting...\n");
        ufo_value_destroy (&event);
    }
    ufo_cli_live_clear ();
    if (pending_step)
        ufo_cli_print_step (stdout, NULL, pending_step, cost);
    ufo_value_destroy (&pending_step);
    sigaction (SIGINT, &old_int, NULL);
    sigaction (SIGTERM, &old_term, NULL);
    code = result ? s_summary (result, json) : UFO_CLI_FAIL;
    ufo_value_destroy (&result);
    ufo_tasks_destroy (&tasks);
done:
    ufo_value_destroy (&requests);
    return code;
}
