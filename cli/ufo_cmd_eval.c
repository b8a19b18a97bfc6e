/*  ufo_cmd_eval.c - `ufo eval LOGDIR [--level session|round] [--round R] [--config F]
    [--llm-mode M] [--llm-cassette F] [--all-screenshots | --first-last] [--json] [--dry-run]`:
    re-evaluates a finished session from its log directory, offline from the bus (no broker
    needed): the EvaluationAgent's prompt is built from the logs, the EVALUATION_AGENT model
    judges, the result is appended to LOGDIR/evaluation.log and printed with ✅ / ❌ / ❓ per
    sub-score (docs/EVALUATION.md). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_eval.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_prompt.h"
#include "ufo_report.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_model.h"

static void
s_help (void)
{
    ufo_cli_usage (stdout, "eval");
    printf ("\nOptions:\n"
            "  --level LEVEL       session (default: every round) or round\n"
            "  --round R           the round judged at round level (default 0)\n"
            "  --config FILE       configuration (EVALUATION_AGENT block, EVA_ALL_SCREENSHOTS, ...)\n"
            "  --llm-mode MODE     live, record or replay (overrides llm.mode)\n"
            "  --llm-cassette F    cassette file for record / replay\n"
            "  --all-screenshots   send every screenshot (within eval.max_image_bytes)\n"
            "  --first-last        send the first and the last screenshot only\n"
            "  --json              print the result as JSON instead of text\n"
            "  --dry-run           print the prompt that would be sent, without asking the model\n"
            UFO_CLI_MODEL_HELP ("      ")
            "Exit status: 0 judged (whatever the verdict), 1 the evaluation failed, 2 bad usage.\n");
}

//  The prompt as text: each message under its role, images as a placeholder with their size.
static void
s_print_prompt (const ufo_value_t *messages)
{
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        printf ("===== %s =====\n", ufo_value_map_str (m, "role", "?"));
        const ufo_value_t *content = ufo_value_map_get (m, "content");
        if (ufo_value_type (content) == UFO_TSTRING) {
            printf ("%s\n", ufo_value_str (content));
            continue;
        }
        for (size_t k = 0; k < ufo_value_size (content); k++) {
            const ufo_value_t *part = ufo_value_list_at (content, k);
            const char *text = ufo_value_map_str (part, "text", NULL);
            const char *url = ufo_value_map_str (ufo_value_map_get (part, "image_url"), "url", NULL);
            if (text)
                printf ("%s\n", text);
            else
            if (url)
                printf ("[image: %zu bytes of data URL]\n", strlen (url));
        }
    }
}

int
ufo_cmd_eval (int argc, char **argv)
{
    const char *logdir = NULL, *level = "session", *config_path = NULL, *mode = NULL, *cassette = NULL;
    int64_t round = 0;
    int all = -1;
    bool json = false, dry_run = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_help ();
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--all-screenshots") == 0)
            all = 1;
        else
        if (strcmp (arg, "--first-last") == 0)
            all = 0;
        else
        if (strcmp (arg, "--json") == 0)
            json = true;
        else
        if (strcmp (arg, "--dry-run") == 0)
            dry_run = true;
        else
        if (i + 1 < argc && ufo_cli_model_option (arg, argv [i + 1]))
            i++;            //  --api-type / --api-base / --model
        else
        if (strcmp (arg, "--level") == 0 || strcmp (arg, "--round") == 0
        ||  strcmp (arg, "--config") == 0 || strcmp (arg, "--llm-mode") == 0
        ||  strcmp (arg, "--llm-cassette") == 0) {
            if (i + 1 >= argc) {
                fprintf (stderr, "ufo eval: %s needs a value\n", arg);
                return UFO_CLI_USAGE;
            }
            const char *value = argv [++i];
            if (strcmp (arg, "--level") == 0)
                level = value;
            else
            if (strcmp (arg, "--config") == 0)
                config_path = value;
            else
            if (strcmp (arg, "--llm-mode") == 0)
                mode = value;
            else
            if (strcmp (arg, "--llm-cassette") == 0)
                cassette = value;
            else {
                char *end = NULL;
                errno = 0;
                long long r = strtoll (value, &end, 10);
                if (errno || !end || *end || end == value || r < 0 || r > 100000) {
                    fprintf (stderr, "ufo eval: --round needs a round number (0..100000), got \"%s\"\n",
                             value);
                    return UFO_CLI_USAGE;
                }
                round = r;
                level = strcmp (level, "session") == 0 ? "round" : level;
            }
        }
        else
        if (arg [0] == '-' && arg [1] != '\0') {
            fprintf (stderr, "ufo eval: unknown option %s\n", arg);
            ufo_cli_usage (stderr, "eval");
            return UFO_CLI_USAGE;
        }
        else
        if (!logdir)
            logdir = arg;
        else {
            fprintf (stderr, "ufo eval: one log directory only (got %s and %s)\n", logdir, arg);
            return UFO_CLI_USAGE;
        }
    }
    if (!logdir) {
        fprintf (stderr, "ufo eval: which log directory?\n");
        ufo_cli_usage (stderr, "eval");
        return UFO_CLI_USAGE;
    }
    if (strcmp (level, "session") != 0 && strcmp (level, "round") != 0) {
        fprintf (stderr, "ufo eval: --level is session or round, not \"%s\"\n", level);
        return UFO_CLI_USAGE;
    }
    //  logs/<task>: the task is the last component, the root what comes before it. Neither
    //  is cut short: a name that does not fit is a usage error.
    char root [PATH_MAX], task [NAME_MAX + 1];
    size_t len = strlen (logdir);
    if (len >= sizeof root) {
        fprintf (stderr, "ufo eval: the log directory path is longer than %zu bytes\n", sizeof root - 1);
        return UFO_CLI_USAGE;
    }
    memcpy (root, logdir, len + 1);
    while (len > 1 && root [len - 1] == '/')
        root [--len] = '\0';
    char *slash = strrchr (root, '/');
    const char *name = slash ? slash + 1 : root;
    size_t name_len = strlen (name);
    if (name_len >= sizeof task) {
        fprintf (stderr, "ufo eval: the task name (the last component of %s) is longer than %zu bytes\n",
                 logdir, sizeof task - 1);
        return UFO_CLI_USAGE;
    }
    memcpy (task, name, name_len + 1);
    if (!slash)
        snprintf (root, sizeof root, ".");
    else
    if (slash == root)
        root [1] = '\0';
    else
        *slash = '\0';
    ufo_error_t lerr = { 0 };
    if (!ufo_report_is_session_log (logdir, &lerr)) {
        //  nothing is written into a folder that is not a session's logs
        fprintf (stderr, "ufo eval: %s\n", lerr.message);
        return UFO_CLI_FAIL;
    }
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo eval: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_config_apply_log (config);
    ufo_llm_t *llm = ufo_llm_new_from_config (config, "EVALUATION_AGENT", mode, cassette, &err);
    ufo_prompts_t *prompts = llm ? ufo_prompts_new (NULL, &err) : NULL;
    ufo_eval_t *eval = prompts ? ufo_eval_new (config, llm, prompts, &err) : NULL;
    int rc = UFO_CLI_FAIL;
    if (!eval)
        fprintf (stderr, "ufo eval: %s\n", err.message);
    else
    if (dry_run) {
        ufo_eval_request_t req = { .log_root = root, .task = task, .level = level, .round = round,
                                   .all_screenshots = all };
        ufo_value_t *messages = ufo_eval_prompt (eval, &req, NULL, &err);
        if (messages) {
            s_print_prompt (messages);
            rc = UFO_CLI_OK;
        }
        else
            fprintf (stderr, "ufo eval: %s\n", err.message);
        ufo_value_destroy (&messages);
    }
    else {
        ufo_eval_request_t req = { .log_root = root, .task = task, .level = level, .round = round,
                                   .all_screenshots = all, .by = "ufo eval" };
        ufo_value_t *result = ufo_eval_run (eval, &req);
        if (json) {
            char *text = ufo_json_dump (result, UFO_JSON_PRETTY, NULL);
            printf ("%s\n", text);
            free (text);
        }
        else
            ufo_eval_print (stdout, result);
        const char *error = ufo_value_map_str (result, "error", "");
        if (*error)
            fprintf (stderr, "ufo eval: %s\n(logged in evaluation.log as a failed evaluation; the verdicts "
                     "before it stand)\n", error);
        else
            rc = UFO_CLI_OK;
        ufo_value_destroy (&result);
    }
    ufo_eval_destroy (&eval);
    ufo_prompts_destroy (&prompts);
    ufo_llm_destroy (&llm);
    ufo_config_destroy (&config);
    return rc;
}
