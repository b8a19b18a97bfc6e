/*  ufo_cmd_report.c - `ufo report LOGDIR [--out FILE] [--link-images]`: writes the
    self-contained HTML report of a session (see docs/REPORT.md). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_report.h"
#include "ufo_cli.h"

int
ufo_cmd_report (int argc, char **argv)
{
    const char *logdir = NULL, *out = NULL, *title = NULL;
    ufo_report_options_t opts = {0};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            ufo_cli_usage (stdout, "report");
            printf ("\nOptions:\n"
                    "  --out FILE      where to write (default LOGDIR/report.html)\n"
                    "  --link-images   refer to the screenshots beside the logs instead of\n"
                    "                  embedding them (smaller file, for huge sessions)\n"
                    "  --title TEXT    page title (default: ufo report: TASK)\n");
            return UFO_CLI_OK;
        }
        else
        if (strcmp (arg, "--out") == 0 || strcmp (arg, "-o") == 0
        ||  strcmp (arg, "--title") == 0) {
            if (i + 1 >= argc) {
                fprintf (stderr, "ufo report: %s needs a value\n", arg);
                return UFO_CLI_USAGE;
            }
            if (strcmp (arg, "--title") == 0)
                title = argv [++i];
            else
                out = argv [++i];
        }
        else
        if (strncmp (arg, "--out=", 6) == 0)
            out = arg + 6;
        else
        if (strcmp (arg, "--link-images") == 0)
            opts.link_images = true;
        else
        if (arg [0] == '-' && arg [1] != '\0') {
            fprintf (stderr, "ufo report: unknown option %s\n", arg);
            ufo_cli_usage (stderr, "report");
            return UFO_CLI_USAGE;
        }
        else
        if (!logdir)
            logdir = arg;
        else {
            fprintf (stderr, "ufo report: one log directory only (got %s and %s)\n", logdir, arg);
            return UFO_CLI_USAGE;
        }
    }
    if (!logdir) {
        fprintf (stderr, "ufo report: which log directory?\n");
        ufo_cli_usage (stderr, "report");
        return UFO_CLI_USAGE;
    }
    ufo_error_t lerr = { 0 };
    if (!ufo_report_is_session_log (logdir, &lerr)) {
        //  nothing is written into a folder that is not a session's logs
        fprintf (stderr, "ufo report: %s\n", lerr.message);
        return UFO_CLI_FAIL;
    }
    opts.title = title;
    char default_out [PATH_MAX];
    if (!out) {
        snprintf (default_out, sizeof default_out, "%s/report.html", logdir);
        out = default_out;
    }
    ufo_report_stats_t stats;
    ufo_error_t err;
    if (ufo_report_write_stats (logdir, out, &opts, &stats, &err) != 0) {
        fprintf (stderr, "ufo report: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    printf ("%s: %zu steps, %zu rounds, %zu evaluations, %zu images embedded, %zu linked, "
            "%zu missing, %zu problems noted, %zu bytes\n", out, stats.steps, stats.rounds,
            stats.evaluations, stats.images_embedded, stats.images_linked, stats.images_missing,
            stats.notes, stats.bytes);
    return UFO_CLI_OK;
}
