/*  ufo_cmd_batch.c - `ufo batch DIR [--yes] [--broker EP] [--config FILE] [--timeout S]
    [--model NAME --api-base URL ...]`:
    runs every task file of DIR (*.json: {"task", "request" | "requests", "plan"?}) as a
    session, all submitted at once: the broker hands them to the free HostAgents, so they
    run concurrently over the available devices. Ends with a summary table.
    Exit code 0 only when every task completed. */
#include "ufo_prelude.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_outcome.h"
#include "ufo_value.h"
#include <dirent.h>
#include "ufo_cli.h"
#include "ufo_cli_model.h"
#include "ufo_cli_session.h"
#include "ufo_cli_term.h"
#include "ufo_tasks.h"

#define S_MAX_TASKS 1000

static volatile sig_atomic_t s_interrupted = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_interrupted++;
}

typedef struct {
    char file [256];
    char task [256];            //  room for any file name (a task named after its file)
    char session [128];
    char id [33];
    ufo_value_t *result;        //  the session result, once known
    char failure [512];         //  the task failed without a session result
    double submitted, started, ended;   //  seconds since the batch started
    char task_status [16];      //  the dispatch status when the task ended without a session result
    double cost;
    bool running;
    ufo_value_t *pending_step;  //  a step line waits for the cost message that follows it
} s_entry_t;

static int
s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

//  Loads one task file into the entry's spec. NULL with err.
static ufo_value_t *
s_load (const char *dir, s_entry_t *e, const char *log_root, bool yes, int64_t deadline_ms, ufo_error_t *err)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, e->file);
    ufo_value_t *doc = ufo_json_parse_file (path, NULL, err);
    if (!doc)
        return NULL;
    ufo_value_t *requests = ufo_value_new_list ();
    const ufo_value_t *r = ufo_value_map_get (doc, "requests");
    const char *one = ufo_value_map_str (doc, "request", NULL);
    if (one)
        ufo_value_list_push_str (requests, one);
    for (size_t i = 0; ufo_value_type (r) == UFO_TLIST && i < ufo_value_size (r); i++)
        if (ufo_value_str (ufo_value_list_at (r, i)))
            ufo_value_list_push_str (requests, ufo_value_str (ufo_value_list_at (r, i)));
    const ufo_value_t *plan = ufo_value_map_get (doc, "plan");
    if (ufo_value_type (doc) != UFO_TMAP || ufo_value_size (requests) == 0)
        ufo_error_set (err, UFO_E_INVALID, "%s: needs \"request\" or \"requests\" (texts)", e->file);
    else if (plan && ufo_value_type (plan) != UFO_TLIST)
        ufo_error_set (err, UFO_E_TYPE, "%s: \"plan\" must be a list of subtasks", e->file);
    if (err->code) {
        ufo_value_destroy (&doc);
        ufo_value_destroy (&requests);
        return NULL;
    }
    const char *task = ufo_value_map_str (doc, "task", NULL);
    if (task && strlen (task) >= sizeof e->task) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "%s: \"task\" is longer than %zu bytes", e->file, sizeof e->task - 1);
        ufo_value_destroy (&doc);
        ufo_value_destroy (&requests);
        return NULL;
    }
    if (task && *task && !strchr (task, '/'))
        snprintf (e->task, sizeof e->task, "%s", task);
    else {
        snprintf (e->task, sizeof e->task, "%s", e->file);
        char *dot = strrchr (e->task, '.');
        if (dot)
            *dot = 0;
    }
    //  a task name names one session's logs: a used one is not run again
    char used [PATH_MAX + 300];
    snprintf (used, sizeof used, "%s/%s/request.json", log_root, e->task);
    if (access (used, F_OK) == 0) {
        ufo_error_set (err, UFO_E_INVALID, "the task name \"%s\" is already used (logs in %s/%s); rename the task",
                       e->task, log_root, e->task);
        ufo_value_destroy (&doc);
        ufo_value_destroy (&requests);
        return NULL;
    }
    ufo_cli_new_id (e->session, sizeof e->session, "s");
    ufo_value_t *spec = ufo_cli_session_spec (e->session, e->task, log_root, requests,
                                              plan && ufo_value_size (plan) ? plan : NULL, NULL, false, yes,
                                              deadline_ms);
    if (!(plan && ufo_value_size (plan)))   //  the original's name for a batch session
        ufo_value_map_set_str (ufo_value_map_get (spec, "body"), "mode", "batch_normal");
    ufo_value_destroy (&doc);
    ufo_value_destroy (&requests);
    return spec;
}

static double
s_elapsed (const struct timespec *t0)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
s_table (s_entry_t *entries, size_t n)
{
    printf ("\n%-28s %-9s %6s %6s %-10s %9s %8s\n", "task", "status", "rounds", "steps", "evaluation", "cost", "time");
    int done = 0;
    for (size_t i = 0; i < n; i++) {
        s_entry_t *e = &entries [i];
        //  one vocabulary with ufo run: FINISH, FAIL, ERROR, CANCELLED ("-": never submitted)
        const char *status = e->result || e->task_status [0] ? ufo_outcome_session_status (e->result, e->task_status)
                           : "-";
        const char *complete = ufo_value_str (ufo_value_path (e->result, "evaluation.complete"));
        char eval [32];
        snprintf (eval, sizeof eval, "%s %s", ufo_cli_mark (complete), complete ? complete : "-");
        bool ok = e->result && ufo_cli_exit_code (e->result) == 0;
        done += ok;
        //  time: from submission to the result, what the user waited for
        printf ("%-28.28s %-9s %6" PRId64 " %6" PRId64 " %-12s $%8.4f %7.1fs\n", e->task, status,
                ufo_value_map_int (e->result, "rounds", 0), ufo_value_map_int (e->result, "steps", 0), eval,
                ufo_value_map_float (ufo_value_map_get (e->result, "cost"), "total", e->cost),
                e->ended > e->submitted ? e->ended - e->submitted : 0);
        const char *error = e->failure [0] ? e->failure : ufo_value_map_str (e->result, "error", "");
        if (*error)
            printf ("    %s\n", error);
    }
    printf ("%d of %zu task(s) completed\n", done, n);
}

int
ufo_cmd_batch (int argc, char **argv)
{
    const char *dir = NULL, *broker = NULL, *config_path = NULL;
    bool yes = false;
    double timeout_s = 7200;
    ufo_llm_override_t override;        //  the sessions' model (--model, --api-base, ...)
    ufo_llm_override_init (&override);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        int taken = ufo_cli_model_override_arg (&override, argc, argv, &i, "ufo batch");
        if (taken < 0)
            return UFO_CLI_USAGE;
        if (taken)
            continue;
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            ufo_cli_usage (stdout, "batch");
            printf ("\nTask files: DIR/*.json, each {\"task\": name, \"request\": text | \"requests\": [texts],\n"
                    "\"plan\": [subtasks] (optional, follower mode)}. Sessions run without a user:\n"
                    "questions get \"no answer available, proceed\"; confirmations are refused unless --yes.\n"
                    "Model of these sessions only (the agents keep `ufo up`'s for other sessions):\n"
                    UFO_CLI_OVERRIDE_HELP ("   ") "\n");
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--yes") == 0 || strcmp (arg, "-y") == 0)
            yes = true;
        else if ((strcmp (arg, "--broker") == 0 || strcmp (arg, "--config") == 0
                  || strcmp (arg, "--timeout") == 0) && i + 1 < argc) {
            if (strcmp (arg, "--broker") == 0)
                broker = argv [++i];
            else if (strcmp (arg, "--config") == 0)
                config_path = argv [++i];
            else
                timeout_s = atof (argv [++i]);
        }
        else if (arg [0] == '-' || dir) {
            fprintf (stderr, "ufo batch: unexpected %s\n", arg);
            ufo_cli_usage (stderr, "batch");
            return UFO_CLI_USAGE;
        }
        else
            dir = arg;
    }
    if (!dir || timeout_s <= 0) {
        ufo_cli_usage (stderr, "batch");
        return UFO_CLI_USAGE;
    }
    DIR *d = opendir (dir);
    if (!d) {
        fprintf (stderr, "ufo batch: %s: %s\n", dir, strerror (errno));
        return UFO_CLI_FAIL;
    }
    char *names [S_MAX_TASKS];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir (d)) && n < S_MAX_TASKS) {
        size_t len = strlen (de->d_name);
        if (len > 5 && len < 200 && strcmp (de->d_name + len - 5, ".json") == 0 && de->d_name [0] != '.')
            names [n++] = ufo_strdup (de->d_name);
    }
    closedir (d);
    qsort (names, n, sizeof names [0], s_cmp);
    if (n == 0) {
        fprintf (stderr, "ufo batch: no task files (*.json) in %s\n", dir);
        return UFO_CLI_FAIL;
    }
    ufo_error_t err = { 0 };
    ufo_config_t *config = ufo_config_load (config_path, &err);
    char endpoint [512], log_root [PATH_MAX];
    if (!config || ufo_cli_broker (broker, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0
    ||  ufo_security_init (config, "client", &err) < 0) {
        fprintf (stderr, "ufo batch: %s\n", err.message);
        ufo_config_destroy (&config);
        for (size_t i = 0; i < n; i++)
            free (names [i]);
        return UFO_CLI_FAIL;
    }
    bool ready = ufo_cli_model_override_ready (config, &override, "ufo batch");
    ufo_config_destroy (&config);
    if (!ready) {
        for (size_t i = 0; i < n; i++)
            free (names [i]);
        return UFO_CLI_USAGE;
    }
    ufo_value_t *probe = ufo_cli_broker_state (endpoint, "ufo-batch", 1000, &err);
    if (!probe) {
        fprintf (stderr, "ufo batch: %s\n", err.message);
        for (size_t i = 0; i < n; i++)
            free (names [i]);
        return UFO_CLI_FAIL;
    }
    ufo_value_destroy (&probe);
    s_entry_t *entries = (s_entry_t *) ufo_calloc (n, sizeof *entries);
    char name [128];
    snprintf (name, sizeof name, "ufo-batch:%d", (int) getpid ());
    ufo_tasks_t *tasks = ufo_tasks_new (endpoint, name, NULL, NULL, &err);
    int code = UFO_CLI_FAIL;
    if (!tasks) {
        fprintf (stderr, "ufo batch: %s\n", err.message);
        goto done;
    }
    struct timespec t0;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    size_t pending = 0;
    for (size_t i = 0; i < n; i++) {
        s_entry_t *e = &entries [i];
        snprintf (e->file, sizeof e->file, "%s", names [i]);
        ufo_error_clear (&err);
        ufo_value_t *spec = s_load (dir, e, log_root, yes, (int64_t) (timeout_s * 1000), &err);
        ufo_value_t *model = spec ? ufo_llm_override_to_value (&override) : NULL;
        if (model)
            ufo_value_map_set (ufo_value_map_get (spec, "body"), "model", &model);
        if (!spec || ufo_tasks_submit (tasks, &spec, e->id, &err) != 0) {
            snprintf (e->failure, sizeof e->failure, "not run: %s", err.message);
            if (!e->task [0])
                snprintf (e->task, sizeof e->task, "%s", e->file);
            ufo_value_destroy (&spec);
            continue;
        }
        pending++;
        e->submitted = s_elapsed (&t0);
        fprintf (stderr, "[%s] submitted (%s)\n", e->task, e->session);
    }
    fprintf (stderr, "%zu session(s) submitted to %s; logs under %s\n", pending, endpoint, log_root);
    ufo_cli_term_setup (stdout);
    struct sigaction sa = { .sa_handler = s_on_signal };
    sigaction (SIGINT, &sa, NULL);
    bool cancelled = false;
    while (pending > 0 && s_interrupted < 2) {
        if ((s_interrupted || s_elapsed (&t0) > timeout_s) && !cancelled) {
            fprintf (stderr, "ufo batch: cancelling the sessions still running\n");
            for (size_t i = 0; i < n; i++)
                if (entries [i].id [0] && !entries [i].result && !entries [i].failure [0])
                    ufo_tasks_cancel (tasks, entries [i].id);
            cancelled = true;
        }
        ufo_value_t *event = ufo_tasks_next (tasks, 200);
        if (!event)
            continue;
        const char *id = ufo_value_map_str (event, "task", "");
        s_entry_t *e = NULL;
        for (size_t i = 0; i < n && !e; i++)
            if (strcmp (entries [i].id, id) == 0)
                e = &entries [i];
        const char *kind = ufo_value_map_str (event, "kind", "");
        const ufo_value_t *body = ufo_value_map_get (event, "body");
        if (e && strcmp (kind, "progress") == 0) {
            if (!e->running) {
                e->running = true;
                e->started = s_elapsed (&t0);
            }
            const char *pk = ufo_value_map_str (body, "kind", "");
            char prefix [sizeof e->task + 2];
            snprintf (prefix, sizeof prefix, "[%s]", e->task);
            if (strcmp (pk, "cost") == 0)
                e->cost = ufo_value_map_float (body, "session", e->cost);
            if (e->pending_step) {
                ufo_cli_print_step (stdout, prefix, e->pending_step, e->cost);
                ufo_value_destroy (&e->pending_step);
            }
            if (strcmp (pk, "step") == 0)
                e->pending_step = ufo_value_dup (ufo_value_map_get (body, "record"));
            else if (strcmp (pk, "confirm") == 0 && ufo_value_map_str (body, "answered", NULL)) {
                //  decided by the AppAgent already: report it, send nothing
                const char *answered = ufo_value_map_str (body, "answered", "");
                printf ("%s %s wanted to run %s: %s by policy (%s)\n", prefix,
                         ufo_value_map_str (body, "from", "the agent"), ufo_value_map_str (body, "function", "?"),
                         strcmp (answered, "yes") == 0 ? "allowed" : "refused",
                         ufo_value_map_str (body, "by", "the AppAgent"));
            }
            else if (strcmp (pk, "question") == 0 || strcmp (pk, "confirm") == 0) {
                //  nobody to ask: the placeholder answer, or the --yes policy
                ufo_value_t *input = ufo_value_new_map ();
                ufo_value_map_set_str (input, "qid", ufo_value_map_str (body, "qid", ""));
                if (strcmp (pk, "confirm") == 0)
                    ufo_value_map_set_bool (input, "confirm", yes);
                else {
                    ufo_value_t *answers = ufo_value_new_list ();
                    for (size_t k = 0; k < ufo_value_size (ufo_value_map_get (body, "questions")); k++)
                        ufo_value_list_push_str (answers, "no answer available, proceed");
                    ufo_value_map_set (input, "answers", &answers);
                }
                ufo_tasks_input (tasks, e->id, &input);
                ufo_value_destroy (&input);
            }
        }
        else if (e && strcmp (kind, "result") == 0 && !e->result && !e->failure [0]) {
            if (e->pending_step) {
                char prefix [sizeof e->task + 2];
                snprintf (prefix, sizeof prefix, "[%s]", e->task);
                ufo_cli_print_step (stdout, prefix, e->pending_step, e->cost);
                ufo_value_destroy (&e->pending_step);
            }
            e->ended = s_elapsed (&t0);
            if (!e->running)
                e->started = e->ended;
            if (ufo_value_type (body) == UFO_TMAP && ufo_value_map_has (body, "status"))
                e->result = ufo_value_dup (body);
            else {
                snprintf (e->task_status, sizeof e->task_status, "%s", ufo_value_map_str (event, "status", "failed"));
                snprintf (e->failure, sizeof e->failure, "the task %.40s: %.400s", e->task_status,
                          ufo_value_map_str (event, "reason", ""));
            }
            fprintf (stderr, "[%s] ended: %s%s%s%s\n", e->task, ufo_outcome_session_status (e->result, e->task_status),
                     e->result ? "" : " (", e->result ? "" : e->failure, e->result ? "" : ")");
            pending--;
        }
        ufo_value_destroy (&event);
    }
    s_table (entries, n);
    code = UFO_CLI_OK;
    for (size_t i = 0; i < n; i++)
        if (!entries [i].result || ufo_cli_exit_code (entries [i].result) != 0)
            code = UFO_CLI_FAIL;
done:
    ufo_tasks_destroy (&tasks);
    for (size_t i = 0; i < n; i++) {
        ufo_value_destroy (&entries [i].result);
        ufo_value_destroy (&entries [i].pending_step);
        free (names [i]);
    }
    free (entries);
    return code;
}
