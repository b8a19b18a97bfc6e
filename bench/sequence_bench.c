/*  sequence_bench - model calls and wall time per task with and without ACTION_SEQUENCE.

    The task: 2+3= in the real gnome-calculator, run by ufo-app (the AppAgent) with the
    scripted model (bench/data/calc_single.json: one button per reply, picked from the
    prompt's control list and the steps already taken; calc_sequence.json: the four buttons
    in one ActionList). A private headless desktop and a real ufo-broker; the display is read
    back after each task (it must show 5). Each mode runs REPS tasks with an instant model,
    then again with a model that takes LATENCY_MS per reply (the scripted server's latency_ms),
    which is closer to what a user waits for with a real model. Medians are printed.
    Exit status 0 when every task computed 5, 1 otherwise, 2 when the setup failed. */
#include "bench_stats.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "../tests/app_fixture.h"

#define REPS 5
#define LATENCY_MS 1500

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}


//  Copies script src to dst with latency_ms on every entry. Returns 0 or -1.
static int
s_script (const char *src, const char *dst, int latency_ms)
{
    ufo_error_t err;
    ufo_value_t *s = ufo_json_parse_file (src, NULL, &err);
    if (!s) {
        fprintf (stderr, "%s: %s\n", src, err.message);
        return -1;
    }
    const ufo_value_t *entries = ufo_value_map_get (s, "entries");
    for (size_t i = 0; i < ufo_value_size (entries); i++)
        ufo_value_map_set_int (ufo_value_list_at (entries, i), "latency_ms", latency_ms);
    char *text = ufo_json_dump (s, UFO_JSON_COMPACT, NULL);
    afx_write (dst, text);
    free (text);
    ufo_value_destroy (&s);
    return 0;
}

//  The subtask file of one task on the calculator window.
static const char *
s_subtask (const char *session, int64_t xid)
{
    static char path [400];
    snprintf (path, sizeof path, "%s/subtask-%s.json", afx_.broker.dir, session);
    char text [2048];
    snprintf (text, sizeof text,
        "{\"body\": {\"session\": \"%s\", \"task\": \"%s\", \"log_root\": \"%s/logs\", \"round\": 0,"
        " \"subtask_index\": 0, \"subtask\": \"Compute 2+3 with the buttons\", \"request\": \"What is 2+3?\","
        " \"tips\": [], \"previous_subtasks\": [], \"application\": \"gnome-calculator\","
        " \"window\": {\"title\": \"\", \"pid\": 0, \"xid\": %" PRId64 "}, \"step_base\": 0,"
        " \"max_steps\": 10, \"interactive\": false, \"auto_confirm\": false}}",
        session, session, afx_.broker.dir, xid);
    afx_write (path, text);
    return path;
}

//  The calculator's display, read by a desktop handle of its own (caller frees), or NULL.
static char *
s_display (int64_t xid)
{
    ufo_desktop_t *desk = ufo_desktop_new (NULL, NULL);
    if (!desk)
        return NULL;
    ufo_value_t *snap = dfx_wait_control (desk, xid, "Edit", NULL, AFX_WAIT_MS);
    const char *label = snap ? dfx_find (snap, "Edit", NULL) : NULL;
    char *text = NULL;
    if (label) {
        ufo_value_t *r = dfx_act (desk, xid, label, "texts", NULL);
        if (ufo_value_map_bool (r, "success", false))
            text = strdup (ufo_value_map_str (r, "text", ""));
        ufo_value_destroy (&r);
    }
    ufo_value_destroy (&snap);
    ufo_desktop_destroy (&desk);
    return text;
}

typedef struct {
    double calls, steps, wall_ms;
    int ok;
} s_result_t;

static s_result_t
s_mode (int64_t xid, const char *script, bool sequence, int latency_ms, int reps)
{
    s_result_t res = { 0 };
    char src [600], dst [600];
    snprintf (src, sizeof src, "%s/bench/data/%s", getenv ("UFO_SOURCE_DIR"), script);
    snprintf (dst, sizeof dst, "%s/script-%s-%d.json", afx_.broker.dir, sequence ? "seq" : "single", latency_ms);
    if (s_script (src, dst, latency_ms) < 0)
        return res;
    afx_llm_stop ();
    char port_file [600];
    snprintf (port_file, sizeof port_file, "%s/port-%s-%d", afx_.broker.dir, sequence ? "seq" : "single", latency_ms);
    snprintf (afx_.llm_log, sizeof afx_.llm_log, "%s/llm-%s-%d.jsonl", afx_.broker.dir,
              sequence ? "seq" : "single", latency_ms);
    int port = llmfx_start (dst, port_file, afx_.llm_log, 900, &afx_.llm);
    if (port <= 0)
        return res;
    afx_.port = port;
    char extra [200];
    snprintf (extra, sizeof extra, "\"ACTION_SEQUENCE\": %s, \"SLEEP_TIME\": 0.5", sequence ? "true" : "false");
    const char *config = afx_config (extra);
    double calls [REPS], steps [REPS], wall [REPS];
    for (int i = 0; i < reps; i++) {
        ufo_value_t *r = dfx_act (afx_.desk, xid, NULL, "keyboard_input", "{\"keys\": \"{ESC}\", \"control_focus\": false}");
        ufo_value_destroy (&r);
        char session [64];
        snprintf (session, sizeof session, "calc-%s-%d-%d", sequence ? "seq" : "single", latency_ms, i);
        const char *file = s_subtask (session, xid);
        size_t before = afx_llm_requests ();
        ufo_value_t *lines = NULL;
        double t0 = s_now ();
        int rc = afx_run_subtask (config, file, 120000, &lines);
        wall [i] = s_now () - t0;
        const ufo_value_t *result = afx_result (lines);
        steps [i] = (double) ufo_value_map_int (result, "steps", 0);
        calls [i] = (double) (afx_llm_requests () - before);
        char *display = s_display (xid);
        bool ok = rc == 0 && display && strstr (display, "5") && !strstr (display, "2+3");
        if (!ok)
            fprintf (stderr, "  task %s: exit %d, status %s, display '%s'\n", session, rc,
                     ufo_value_map_str (result, "status", "?"), display ? display : "(unreadable)");
        res.ok += ok;
        free (display);
        ufo_value_destroy (&lines);
    }
    res.calls = bench_median (calls, reps);
    res.steps = bench_median (steps, reps);
    res.wall_ms = bench_median (wall, reps);
    return res;
}

int
main (int argc, char **argv)
{
    int reps = argc > 1 && !strcmp (argv [1], "--quick") ? 2 : REPS;
    setenv ("UFO_TEST_DATA", getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : ".", 0);
    if (afx_setup ("sequence_bench") < 0) {
        fprintf (stderr, "sequence_bench: set-up failed\n");
        afx_teardown ();
        return 2;
    }
    pid_t pid = fork ();
    if (pid == 0) {
        int devnull = open ("/dev/null", O_WRONLY);
        dup2 (devnull, 1);
        dup2 (devnull, 2);
        execlp ("gnome-calculator", "gnome-calculator", (char *) NULL);
        _exit (127);
    }
    int64_t xid = dfx_wait_window (afx_.desk, pid, NULL, AFX_WAIT_MS);
    ufo_value_t *snap = xid ? dfx_wait_control (afx_.desk, xid, "Button", "=", AFX_WAIT_MS) : NULL;
    if (!snap) {
        fprintf (stderr, "sequence_bench: gnome-calculator did not come up\n");
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
        afx_teardown ();
        return 2;
    }
    ufo_value_destroy (&snap);
    printf ("2+3= in gnome-calculator by ufo-app, scripted model, SLEEP_TIME 0.5 s, %d tasks per row (medians)\n", reps);
    printf ("%-34s %12s %7s %14s %8s\n", "mode", "model calls", "steps", "wall per task", "correct");
    int failures = 0;
    const int latencies [] = { 0, LATENCY_MS };
    for (size_t l = 0; l < 2; l++) {
        s_result_t one = s_mode (xid, "calc_single.json", false, latencies [l], reps);
        s_result_t seq = s_mode (xid, "calc_sequence.json", true, latencies [l], reps);
        char name [64];
        snprintf (name, sizeof name, "one action per call, model %d ms", latencies [l]);
        printf ("%-34s %12.0f %7.0f %11.0f ms %5d/%d\n", name, one.calls, one.steps, one.wall_ms, one.ok, reps);
        snprintf (name, sizeof name, "ACTION_SEQUENCE, model %d ms", latencies [l]);
        printf ("%-34s %12.0f %7.0f %11.0f ms %5d/%d\n", name, seq.calls, seq.steps, seq.wall_ms, seq.ok, reps);
        if (seq.calls > 0)
            printf ("  -> %.1fx fewer model calls, %.2fx the wall time\n", one.calls / seq.calls,
                    one.wall_ms > 0 ? seq.wall_ms / one.wall_ms : 0);
        failures += (reps - one.ok) + (reps - seq.ok);
        fflush (stdout);
    }
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    afx_teardown ();
    UFO_UNUSED (ufo_test_failures_);        //  the fixture's test counters are not used here
    UFO_UNUSED (ufo_test_passed_);
    UFO_UNUSED (ufo_test_failed_);
    return failures ? 1 : 0;
}
