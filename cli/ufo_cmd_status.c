/*  ufo_cmd_status.c - `ufo status [--broker EP] [--json]`: the broker's current workers,
    service queues and tasks in flight, once (the dispatch.state request, docs/PROTOCOL.md 3). */
#include "ufo_prelude.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"

static const char *
s_c (bool color, const char *code)
{
    return color ? code : "";
}

//  A running session's progress from its logs (when they are readable here): the round and
//  step of the last response.log line and the summed cost. false when not found.
static bool
s_session_progress (const char *log_root, const char *name, int64_t *round, int64_t *step, double *cost)
{
    if (!log_root || !*log_root || !name || !*name || strchr (name, '/'))
        return false;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s/response.log", log_root, name);
    struct stat st;
    //  only a log that is here (opening the directory would create it) and not huge
    if (stat (path, &st) != 0 || st.st_size > 64 * 1024 * 1024)
        return false;
    ufo_tasklog_t *log = ufo_tasklog_open (log_root, name, NULL);
    ufo_value_t *lines = log ? ufo_tasklog_read_lines (log, "response.log") : NULL;
    ufo_tasklog_destroy (&log);
    *cost = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *rec = ufo_value_list_at (lines, i);
        *round = ufo_value_map_int (rec, "Round", *round);
        *step = ufo_value_map_int (rec, "Step", *step);
        *cost += ufo_value_map_float (rec, "Cost", 0);
    }
    bool found = lines != NULL;
    ufo_value_destroy (&lines);
    return found;
}

void
ufo_cli_print_state (FILE *out, const ufo_value_t *state, bool color, const char *log_root)
{
    const char *bold = s_c (color, "\033[1m"), *dim = s_c (color, "\033[2m"), *off = s_c (color, "\033[0m");
    const ufo_value_t *workers = ufo_value_map_get (state, "workers");
    const ufo_value_t *services = ufo_value_map_get (state, "services");
    const ufo_value_t *tasks = ufo_value_map_get (state, "tasks");
    size_t sessions = 0;
    for (size_t i = 0; i < ufo_value_size (tasks); i++)
        sessions += strcmp (ufo_value_map_str (ufo_value_list_at (tasks, i), "service", ""), "host") == 0;
    fprintf (out, "%sbroker at seq %" PRId64 "%s: %zu session%s, %zu worker%s, %zu other task%s in flight\n", bold,
             ufo_value_map_int (state, "seq", 0), off, sessions, sessions == 1 ? "" : "s",
             ufo_value_size (workers), ufo_value_size (workers) == 1 ? "" : "s",
             ufo_value_size (tasks) - sessions, ufo_value_size (tasks) - sessions == 1 ? "" : "s");
    if (sessions) {
        fprintf (out, "%sSESSIONS%s\n  %-30s %-8s %5s %5s %9s %9s  %-8s %s\n", bold, off, "name", "device", "round",
                 "step", "elapsed", "cost", "state", "HostAgent");
        int64_t now_us = ufo_time_now_us ();
        for (size_t i = 0; i < ufo_value_size (tasks); i++) {
            const ufo_value_t *t = ufo_value_list_at (tasks, i);
            if (strcmp (ufo_value_map_str (t, "service", ""), "host") != 0)
                continue;
            const char *name = ufo_value_map_str (t, "name", ufo_value_map_str (t, "session", ""));
            int64_t round = -1, step = -1;
            double cost = 0;
            bool known = s_session_progress (log_root, ufo_value_map_str (t, "name", NULL), &round, &step, &cost);
            char r [24] = "-", st [24] = "-", c [24] = "-", elapsed [24];
            if (known && step >= 0) {
                snprintf (r, sizeof r, "%" PRId64, round);
                snprintf (st, sizeof st, "%" PRId64, step);
            }
            if (known)
                snprintf (c, sizeof c, "$%.4f", cost);
            double secs = (double) (now_us - ufo_value_map_int (t, "submitted_us", now_us)) / 1e6;
            snprintf (elapsed, sizeof elapsed, "%.0f s", secs > 0 ? secs : 0);
            fprintf (out, "  %-30s %-8s %5s %5s %9s %9s  %-8s %s\n", name, ufo_value_map_str (t, "device", "any"), r, st,
                     elapsed, c, ufo_value_map_str (t, "state", ""), ufo_value_map_str (t, "worker", ""));
        }
    }
    if (ufo_value_size (workers)) {
        fprintf (out, "%sWORKERS%s\n  %-16s %-8s %5s  %s\n", bold, off, "service", "device", "busy", "name");
        for (size_t i = 0; i < ufo_value_size (workers); i++) {
            const ufo_value_t *w = ufo_value_list_at (workers, i);
            const ufo_value_t *ids = ufo_value_map_get (w, "tasks");
            char busy [32];
            snprintf (busy, sizeof busy, "%zu/%" PRId64, ufo_value_size (ids), ufo_value_map_int (w, "capacity", 1));
            const char *service = ufo_value_map_str (w, "service", "");
            fprintf (out, "  %-16s %-8s %5s  %s", strcmp (service, "app:*") == 0 ? "app:* (any)" : service,
                     ufo_value_map_str (w, "device", "-"), busy, ufo_value_map_str (w, "name", ""));
            if (ufo_value_map_int (w, "stale", 0))
                fprintf (out, " %s(+%" PRId64 " stale)%s", dim, ufo_value_map_int (w, "stale", 0), off);
            fputc ('\n', out);
        }
    }
    if (ufo_value_size (services)) {
        fprintf (out, "%sQUEUES%s\n  %-28s %7s %7s %7s\n", bold, off, "service", "queued", "running", "workers");
        for (size_t i = 0; i < ufo_value_size (services); i++) {
            const ufo_value_t *s = ufo_value_list_at (services, i);
            fprintf (out, "  %-28s %7" PRId64 " %7" PRId64 " %7" PRId64 "\n", ufo_value_map_str (s, "service", ""),
                     ufo_value_map_int (s, "queued", 0), ufo_value_map_int (s, "running", 0),
                     ufo_value_map_int (s, "workers", 0));
        }
    }
    if (ufo_value_size (tasks) > sessions) {
        fprintf (out, "%sSUBTASKS AND EVALUATIONS%s\n  %-16s %-8s %-7s %-32s %s\n", bold, off, "service", "state",
                 "attempt", "session", "worker");
        for (size_t i = 0; i < ufo_value_size (tasks); i++) {
            const ufo_value_t *t = ufo_value_list_at (tasks, i);
            if (strcmp (ufo_value_map_str (t, "service", ""), "host") == 0)
                continue;
            char attempt [32];
            snprintf (attempt, sizeof attempt, "%" PRId64 "/%" PRId64, ufo_value_map_int (t, "attempts", 0),
                      ufo_value_map_int (t, "max_attempts", 0));
            fprintf (out, "  %-16s %-8s %-7s %-32s %s\n", ufo_value_map_str (t, "service", ""),
                     ufo_value_map_str (t, "state", ""), attempt, ufo_value_map_str (t, "session", ""),
                     ufo_value_map_str (t, "worker", ""));
        }
    }
}

int
ufo_cmd_status (int argc, char **argv)
{
    const char *broker = NULL, *config_path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            ufo_cli_usage (stdout, "status");
            printf ("\nOptions:\n"
                    "  --broker EP      broker command endpoint (default: the one `ufo up` started, else config)\n"
                    "  --config FILE    configuration file\n"
                    "  --json           print the state as one JSON object\n");
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--json") == 0)
            json = true;
        else
        if ((strcmp (arg, "--broker") == 0 || strcmp (arg, "--config") == 0) && i + 1 < argc) {
            if (arg [2] == 'b')
                broker = argv [++i];
            else
                config_path = argv [++i];
        }
        else {
            fprintf (stderr, "ufo status: unknown argument '%s'\n", arg);
            ufo_cli_usage (stderr, "status");
            return UFO_CLI_USAGE;
        }
    }
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo status: configuration: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    char endpoint [512], log_root [PATH_MAX];
    int rc = UFO_CLI_FAIL;
    if (ufo_cli_broker (broker, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0
    ||  ufo_security_init (config, "monitor", &err) < 0)
        fprintf (stderr, "ufo status: %s\n", err.message);
    else {
        //  a quick answer or none: a broker that does not answer within 1 s is not there
        ufo_value_t *state = ufo_cli_broker_state (endpoint, "ufo-status", 1000, &err);
        if (!state)
            fprintf (stderr, "ufo status: %s\n", err.message);
        else {
            if (json) {
                char *text = ufo_json_dump (state, UFO_JSON_COMPACT, NULL);
                printf ("%s\n", text);
                free (text);
            }
            else
                ufo_cli_print_state (stdout, state, isatty (STDOUT_FILENO) && !(getenv ("NO_COLOR")
                                     && *getenv ("NO_COLOR")), log_root);
            rc = UFO_CLI_OK;
        }
        ufo_value_destroy (&state);
    }
    ufo_config_destroy (&config);
    return rc;
}
