/*  ufo_cmd_status.c - `ufo status [--broker EP] [--json]`: the broker's current workers,
    service queues and tasks in flight, once (the dispatch.state request, docs/PROTOCOL.md 3). */
#include "ufo_prelude.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"

static const char *
s_c (bool color, const char *code)
{
    return color ? code : "";
}

void
ufo_cli_print_state (FILE *out, const ufo_value_t *state, bool color)
{
    const char *bold = s_c (color, "\033[1m"), *dim = s_c (color, "\033[2m"), *off = s_c (color, "\033[0m");
    const ufo_value_t *workers = ufo_value_map_get (state, "workers");
    const ufo_value_t *services = ufo_value_map_get (state, "services");
    const ufo_value_t *tasks = ufo_value_map_get (state, "tasks");
    fprintf (out, "%sbroker at seq %" PRId64 "%s: %zu worker%s, %zu service%s, %zu task%s in flight\n", bold,
             ufo_value_map_int (state, "seq", 0), off, ufo_value_size (workers), ufo_value_size (workers) == 1 ? "" : "s",
             ufo_value_size (services), ufo_value_size (services) == 1 ? "" : "s",
             ufo_value_size (tasks), ufo_value_size (tasks) == 1 ? "" : "s");
    if (ufo_value_size (workers)) {
        fprintf (out, "%sWORKERS%s\n  %-28s %-20s %-10s %5s %s\n", bold, off, "name", "service", "device", "busy", "tasks");
        for (size_t i = 0; i < ufo_value_size (workers); i++) {
            const ufo_value_t *w = ufo_value_list_at (workers, i);
            const ufo_value_t *ids = ufo_value_map_get (w, "tasks");
            char busy [32];
            snprintf (busy, sizeof busy, "%zu/%" PRId64, ufo_value_size (ids), ufo_value_map_int (w, "capacity", 1));
            fprintf (out, "  %-28.28s %-20.20s %-10.10s %5s ", ufo_value_map_str (w, "name", ""),
                     ufo_value_map_str (w, "service", ""), ufo_value_map_str (w, "device", "-"), busy);
            for (size_t j = 0; j < ufo_value_size (ids); j++)
                fprintf (out, "%s%.8s", j ? "," : "", ufo_value_str (ufo_value_list_at (ids, j)));
            if (ufo_value_map_int (w, "stale", 0))
                fprintf (out, " %s(+%" PRId64 " stale)%s", dim, ufo_value_map_int (w, "stale", 0), off);
            fputc ('\n', out);
        }
    }
    if (ufo_value_size (services)) {
        fprintf (out, "%sQUEUES%s\n  %-28s %7s %7s %7s\n", bold, off, "service", "queued", "running", "workers");
        for (size_t i = 0; i < ufo_value_size (services); i++) {
            const ufo_value_t *s = ufo_value_list_at (services, i);
            fprintf (out, "  %-28.28s %7" PRId64 " %7" PRId64 " %7" PRId64 "\n", ufo_value_map_str (s, "service", ""),
                     ufo_value_map_int (s, "queued", 0), ufo_value_map_int (s, "running", 0),
                     ufo_value_map_int (s, "workers", 0));
        }
    }
    if (ufo_value_size (tasks)) {
        fprintf (out, "%sTASKS%s\n  %-32s %-16s %-8s %-7s %-20s %s\n", bold, off, "task", "service", "state",
                 "attempt", "worker", "session");
        for (size_t i = 0; i < ufo_value_size (tasks); i++) {
            const ufo_value_t *t = ufo_value_list_at (tasks, i);
            char attempt [32];
            snprintf (attempt, sizeof attempt, "%" PRId64 "/%" PRId64, ufo_value_map_int (t, "attempts", 0),
                      ufo_value_map_int (t, "max_attempts", 0));
            fprintf (out, "  %-32.32s %-16.16s %-8s %-7s %-20.20s %s\n", ufo_value_map_str (t, "task", ""),
                     ufo_value_map_str (t, "service", ""), ufo_value_map_str (t, "state", ""), attempt,
                     ufo_value_map_str (t, "worker", ""), ufo_value_map_str (t, "session", ""));
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
        ufo_bb_client_t *client = ufo_bb_client_new (endpoint, NULL, &err);
        ufo_value_t *state = NULL;
        if (client) {
            ufo_bb_client_set_timeout (client, 5000);
            ufo_bb_client_set_sender (client, "ufo-status");
            state = ufo_bb_client_call (client, "dispatch.state", NULL, NULL, 0, NULL, NULL, &err);
        }
        if (!state)
            fprintf (stderr, "ufo status: no answer from the broker at %s: %s\n", endpoint, err.message);
        else {
            if (json) {
                char *text = ufo_json_dump (state, UFO_JSON_COMPACT, NULL);
                printf ("%s\n", text);
                free (text);
            }
            else
                ufo_cli_print_state (stdout, state, isatty (STDOUT_FILENO));
            rc = UFO_CLI_OK;
        }
        ufo_value_destroy (&state);
        ufo_bb_client_destroy (&client);
    }
    ufo_config_destroy (&config);
    return rc;
}
