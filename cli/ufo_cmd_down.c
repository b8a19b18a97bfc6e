/*  ufo_cmd_down.c - `ufo down [--timeout S]`: stops what `ufo up` started on this machine.
    Reads RUN_DIR/up.json, sends SIGTERM to that `ufo up` (which stops its children, the
    broker last, and its virtual desktops) and waits until it has exited. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"

//  Whether pid still runs: it exists and is not a zombie (an exited `ufo up` whose parent has
//  not reaped it yet has stopped everything already).
static bool
s_running (pid_t pid)
{
    if (kill (pid, 0) != 0 && errno == ESRCH)
        return false;
    char path [64], buf [512];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return true;            //  no /proc: kill (pid, 0) is all we know
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf [n] = 0;
    const char *close = strrchr (buf, ')');
    return !(close && close [1] == ' ' && close [2] == 'Z');
}

int
ufo_cmd_down (int argc, char **argv)
{
    double timeout_s = 30;
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv [i], "--help") == 0 || strcmp (argv [i], "-h") == 0) {
            ufo_cli_usage (stdout, "down");
            printf ("\nOptions:\n  --timeout S   wait at most S seconds for everything to stop (default 30)\n");
            return UFO_CLI_OK;
        }
        if (strcmp (argv [i], "--timeout") == 0 && i + 1 < argc && atof (argv [i + 1]) > 0)
            timeout_s = atof (argv [++i]);
        else {
            fprintf (stderr, "ufo down: unexpected %s\n", argv [i]);
            ufo_cli_usage (stderr, "down");
            return UFO_CLI_USAGE;
        }
    }
    ufo_error_t err = { 0 };
    char run_dir [256], path [300];
    if (ufo_cli_run_dir (run_dir, sizeof run_dir, &err) != 0) {
        fprintf (stderr, "ufo down: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    snprintf (path, sizeof path, "%s/up.json", run_dir);
    ufo_value_t *state = access (path, R_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
    int64_t pid = ufo_value_map_int (state, "pid", 0);
    ufo_value_destroy (&state);
    if (pid <= 1 || !s_running ((pid_t) pid)) {
        fprintf (stderr, "ufo down: nothing to stop (no `ufo up` running for %s)\n", run_dir);
        return UFO_CLI_OK;
    }
    if (kill ((pid_t) pid, SIGTERM) != 0) {
        fprintf (stderr, "ufo down: cannot stop pid %" PRId64 ": %s\n", pid, strerror (errno));
        return UFO_CLI_FAIL;
    }
    fprintf (stderr, "ufo down: stopping `ufo up` (pid %" PRId64 ")...\n", pid);
    struct timespec t0, now;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    for (;;) {
        //  `ufo up` is not our child: we cannot wait for it, only look
        if (!s_running ((pid_t) pid)) {
            fprintf (stderr, "ufo down: stopped\n");
            return UFO_CLI_OK;
        }
        clock_gettime (CLOCK_MONOTONIC, &now);
        if ((double) (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 > timeout_s)
            break;
        usleep (100 * 1000);
    }
    fprintf (stderr, "ufo down: `ufo up` (pid %" PRId64 ") still runs after %.0f s\n", pid, timeout_s);
    return UFO_CLI_FAIL;
}
