/*  step_bench - a whole AppAgent step as the user waits for it, phase by phase, against the
    OSWorld-style observation in the same run (issue 18).

    In a private headless session, per application (mousepad GTK3, zenity GTK3,
    gnome-calculator and gnome-clocks GTK4, featherpad Qt5) three sessions of STEPS steps:
    a real `ufo-app --subtask` with a real ufo-broker and the scripted LLM server answering at
    once (the "instant model"), whose replies pick controls by what the prompt shows
    (`vars`). Every step does a real action (typing, reading, clicking; in mousepad ^s opens
    the Save As dialog and Escape closes it, in gnome-clocks Add Location opens its dialog, a
    city is typed and Cancel closes it, then it waits 0.5 s for the dialog to go; so steps on
    a window new to the agent recur). Per step, from response.log's time_cost and
    the step progress: screenshot (capture; its PNG is written by the writer thread), control
    snapshot, annotation (boxes), blackboard (the board's prompt part from the broker), prompt (build +
    request.log), model (HTTP to the scripted server), parse (+ the selected-control image),
    action (incl. the wait for its effect), action_wait (that wait: the application's own
    reaction), record (response.log, board items, progress); p50 / p95 per phase; "own" = the
    step without the model and the action's wait (sending the action is ours); prompt tokens (bytes / 4
    of the messages as logged).
    Same windows, same run: our standalone cold snapshot (a fresh desktop handle, as
    ufo-desktop) and the baseline, bench/baseline/osworld_observe.py (pyatspi tree walked
    into XML + a PNG of the window; interpreter start-up not timed).
    Targets: first step on a window new to the agent (its snapshot) <= 2x the standalone
    snapshot; own p50 >= 10x faster than the baseline's observation; own p50 <= 50 ms on GTK3.
    Exit status 0 when every target is met, 1 otherwise, 2 when the setup failed.

    usage: step_bench [STEPS [APPLICATION]]   (default 24 steps, every application)
    STEP_BENCH_STEPS=1 prints each step's phases on stderr. */
#include "bench_stats.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"
#include <math.h>

#define WAIT_MS 60000
#define S_RUNS 3                //  sessions per application

typedef struct {
    const char *name;           //  application name of the subtask
    const char *toolkit;
    const char *launcher;       //  argv as a JSON list
    const char *title;          //  window title part to wait for (NULL: any)
    const char *ready_type, *ready_text;
    const char *const *cycle;   //  reply templates, one per step, repeated
    size_t cycle_len;
    bool gtk3;
    //  the dialog its cycle opens: the control and action that open it, its title
    const char *dialog_type, *dialog_text, *dialog_function, *dialog_args, *dialog_title;
} s_app_t;

//  A reply: FUNCTION, ARGS (JSON), LABEL ("" none); vars: JSON map or "".
#define S_REPLY(vars, label, function, args) \
    "{\"vars\": {" vars "}, \"content_json\": {\"Observation\": \"o\", \"Thought\": \"t\"," \
    " \"ControlLabel\": \"" label "\", \"ControlText\": \"\", \"Function\": \"" function "\"," \
    " \"Args\": " args ", \"Status\": \"CONTINUE\", \"Plan\": [], \"Comment\": \"\"," \
    " \"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}}}"
#define S_VAR(name, line) "\"" name "\": {\"line\": \"" line "\", \"after\": \"label \\\"\", \"before\": \"\\\"\"}"

static const char *const s_mousepad [] = {
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "set_edit_text", "{\"text\": \"one line\", \"clear_current_text\": true}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "texts", "{}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "keyboard_input", "{\"keys\": \"^s\"}"),
    S_REPLY ("", "", "keyboard_input", "{\"keys\": \"{ESC}\", \"control_focus\": false}"),
};
static const char *const s_zenity [] = {
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "set_edit_text", "{\"text\": \"a name\", \"clear_current_text\": true}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "texts", "{}"),
};
static const char *const s_calculator [] = {
    S_REPLY (S_VAR ("L", "name \\\"1\\\""), "${L}", "click_input", "{}"),
    S_REPLY (S_VAR ("L", "name \\\"+\\\""), "${L}", "click_input", "{}"),
    S_REPLY (S_VAR ("L", "name \\\"2\\\""), "${L}", "click_input", "{}"),
    S_REPLY (S_VAR ("L", "name \\\"=\\\""), "${L}", "click_input", "{}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "texts", "{}"),
};
static const char *const s_clocks [] = {
    S_REPLY (S_VAR ("L", "name \\\"Add Location\\\""), "${L}", "click_input", "{}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "set_edit_text", "{\"text\": \"Ber\", \"clear_current_text\": true}"),
    S_REPLY (S_VAR ("L", "Cancel\\\""), "${L}", "click_input", "{}"),
    S_REPLY ("", "", "wait", "{\"seconds\": 0.5}"),
};
static const char *const s_featherpad [] = {
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "set_edit_text", "{\"text\": \"one line\", \"clear_current_text\": true}"),
    S_REPLY (S_VAR ("L", "type Edit"), "${L}", "texts", "{}"),
};

static const s_app_t s_apps [] = {
    { "mousepad", "GTK3", "[\"mousepad\"]", "Mousepad", "Edit", NULL, s_mousepad,
      UFO_ARRAY_SIZE (s_mousepad), true, "Edit", NULL, "keyboard_input", "{\"keys\": \"^s\"}", "Save As" },
    { "zenity", "GTK3", "[\"zenity\", \"--entry\", \"--title=Name\", \"--text=Your name:\"]", "Name",
      "Edit", NULL, s_zenity, UFO_ARRAY_SIZE (s_zenity), true, NULL, NULL, NULL, NULL, NULL },
    { "gnome-calculator", "GTK4", "[\"gnome-calculator\"]", NULL, "Button", "=", s_calculator,
      UFO_ARRAY_SIZE (s_calculator), false, NULL, NULL, NULL, NULL, NULL },
    { "gnome-clocks", "GTK4", "[\"gnome-clocks\"]", "Clocks", "Button", "Add Location", s_clocks,
      UFO_ARRAY_SIZE (s_clocks), false, "Button", "Add Location", "click_input", "{}", "Add a New World Clock" },
    { "featherpad", "Qt5", "[\"featherpad\", \"--standalone\"]", NULL, "Edit", NULL, s_featherpad,
      UFO_ARRAY_SIZE (s_featherpad), false, NULL, NULL, NULL, NULL, NULL },
};

static const char *const s_phases [] = {
    "screenshot", "control_info", "annotation", "blackboard", "prompt", "llm", "parse", "action",
    "action_wait", "other", "record", "total", "own"
};
//  the phases the bench computes (the others are time_cost's); "other": the step's time in
//  no phase (between the model's answer and the action, after the action)
enum { S_CONTROLS = 1, S_LLM = 5, S_ACTION = 7, S_WAIT = 8, S_OTHER = 9, S_RECORD = 10,
       S_TOTAL = 11, S_OWN = 12 };
#define S_NPHASES (sizeof s_phases / sizeof s_phases [0])

//  A cold standalone snapshot (fresh desktop handle, as ufo-desktop does), ms; -1 on failure.
static double
s_standalone (int64_t xid, int *controls)
{
    ufo_desktop_t *desk = ufo_desktop_new (NULL, NULL);
    if (!desk)
        return -1;
    double t0 = (1e3 * ufo_time_mono_s ());
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
    ufo_value_t *r = ufo_desktop_op_run (desk, &op);
    double ms = (1e3 * ufo_time_mono_s ()) - t0;
    bool ok = ufo_value_map_bool (r, "success", false);
    if (!ok)
        fprintf (stderr, "step_bench: standalone snapshot of %" PRId64 ": %s\n", xid,
                 ufo_value_map_str (r, "error", "?"));
    *controls = (int) ufo_value_size (ufo_value_map_get (r, "controls"));
    ufo_value_destroy (&r);
    ufo_desktop_destroy (&desk);
    return ok ? ms : -1;
}

//  The baseline's observation of a window: p50 of runs (ms), -1 on failure.
static double
s_baseline (int pid, const char *title, int runs, int *nodes)
{
    char cmd [1400], quoted [600];
    size_t q = 0;
    for (const char *s = title; *s && q + 5 < sizeof quoted; s++) {
        if (*s == '\'') {
            memcpy (quoted + q, "'\\''", 4);
            q += 4;
        }
        else
            quoted [q++] = *s;
    }
    quoted [q] = '\0';
    snprintf (cmd, sizeof cmd, "/usr/bin/python3 '%s/bench/baseline/osworld_observe.py' %d '%s' %d",
              getenv ("UFO_SOURCE_DIR"), pid, quoted, runs);
    FILE *p = popen (cmd, "r");
    if (!p)
        return -1;
    char line [8192] = "";
    if (!fgets (line, sizeof line, p))
        line [0] = '\0';
    pclose (p);
    ufo_value_t *v = ufo_json_parse_str (line, NULL);
    const ufo_value_t *t = ufo_value_map_get (v, "total_ms");
    double vals [64];
    size_t n = 0;
    for (size_t i = 0; i < ufo_value_size (t) && n < 64; i++)
        vals [n++] = ufo_value_float (ufo_value_list_at (t, i));
    *nodes = (int) ufo_value_map_int (v, "nodes", 0);
    ufo_value_destroy (&v);
    return n ? bench_pct (vals, n, 50) : -1;
}

//  Writes the script: steps replies cycling through the app's templates, then FINISH.
static int
s_script (const s_app_t *app, int steps, const char *path)
{
    ufo_value_t *entries = ufo_value_new_list ();
    for (int i = 0; i < steps; i++) {
        ufo_value_t *e = ufo_json_parse_str (app->cycle [(size_t) i % app->cycle_len], NULL);
        if (!e) {
            fprintf (stderr, "step_bench: bad reply template %zu of %s\n",
                     (size_t) i % app->cycle_len, app->name);
            ufo_value_destroy (&entries);
            return -1;
        }
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "agent", "AppAgent");
        ufo_value_map_set (e, "match", &m);
        ufo_value_list_push (entries, &e);
    }
    ufo_value_t *fin = ufo_json_parse_str (
        "{\"match\": {\"agent\": \"AppAgent\"}, \"content_json\": {\"Observation\": \"o\", \"Thought\": \"t\","
        " \"ControlLabel\": \"\", \"ControlText\": \"\", \"Function\": \"\", \"Args\": {}, \"Status\": \"FINISH\","
        " \"Plan\": [], \"Comment\": \"done\", \"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}}}", NULL);
    ufo_value_list_push (entries, &fin);
    ufo_value_t *script = ufo_value_new_map ();
    ufo_value_map_set (script, "entries", &entries);
    char *text = ufo_json_dump (script, 0, NULL);
    afx_write (path, text);
    free (text);
    ufo_value_destroy (&script);
    return 0;
}

//  Bytes of the text of a request.log line's messages.
static size_t
s_prompt_bytes (const ufo_value_t *line)
{
    size_t n = 0;
    const ufo_value_t *msgs = ufo_value_map_get (line, "prompt");
    for (size_t i = 0; i < ufo_value_size (msgs); i++) {
        const ufo_value_t *c = ufo_value_map_get (ufo_value_list_at (msgs, i), "content");
        if (ufo_value_type (c) == UFO_TSTRING)
            n += strlen (ufo_value_str (c));
        for (size_t k = 0; ufo_value_type (c) == UFO_TLIST && k < ufo_value_size (c); k++)
            n += strlen (ufo_value_map_str (ufo_value_list_at (c, k), "text", ""));
    }
    return n;
}

typedef struct {
    double standalone_ms;       //  p50 cold standalone snapshot of the main window
    double baseline_ms;         //  p50 baseline observation of the main window
    double dialog_standalone_ms, dialog_baseline_ms;
    bool met;
} s_outcome_t;

//  Opens the application's dialog from the bench's own desktop; returns its xid or 0.
static int64_t
s_open_dialog (const s_app_t *app, int64_t xid, int pid)
{
    ufo_value_t *snap = dfx_wait_control (afx_.desk, xid, app->dialog_type, app->dialog_text, WAIT_MS);
    const char *label = snap ? dfx_find (snap, app->dialog_type, app->dialog_text) : NULL;
    ufo_value_t *r = label ? dfx_act (afx_.desk, xid, label, app->dialog_function, app->dialog_args)
                           : NULL;
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    return dfx_wait_window (afx_.desk, pid, app->dialog_title, WAIT_MS);
}

static int
s_run_app (const s_app_t *app, int steps, s_outcome_t *out)
{
    memset (out, 0, sizeof *out);
    out->met = true;
    char launchers [600];
    snprintf (launchers, sizeof launchers, "{\"launchers\": {\"%s\": %s}}", app->name, app->launcher);
    ufo_value_t *opts = ufo_json_parse_str (launchers, NULL);
    ufo_desktop_destroy (&afx_.desk);
    afx_.desk = ufo_desktop_new (opts, NULL);
    ufo_value_destroy (&opts);
    if (!afx_.desk)
        return -1;
    ufo_error_t err;
    int pid = ufo_desktop_launch (afx_.desk, app->name, &err);
    if (pid < 0) {
        fprintf (stderr, "step_bench: %s: %s\n", app->name, err.message);
        return -1;
    }
    int64_t xid = dfx_wait_window (afx_.desk, pid, app->title, WAIT_MS);
    ufo_value_t *ready = xid ? dfx_wait_control (afx_.desk, xid, app->ready_type, app->ready_text, WAIT_MS) : NULL;
    if (!ready) {
        fprintf (stderr, "step_bench: %s: no window or no %s control\n", app->name, app->ready_type);
        kill (pid, SIGKILL);
        return -1;
    }
    char title [400];
    snprintf (title, sizeof title, "%s", ufo_value_map_str (ufo_value_map_get (ready, "window"), "title", ""));
    ufo_value_destroy (&ready);
    //  S_RUNS sessions (a fresh ufo-app each: its first step meets the window anew), each
    //  with the scripted server, a config and a subtask
    size_t cap = (size_t) S_RUNS * ((size_t) steps + 2);
    double *ph [S_NPHASES];
    for (size_t k = 0; k < S_NPHASES; k++)
        ph [k] = calloc (cap, sizeof (double));
    double *tokens = calloc (cap, sizeof (double));
    //  tokens by step of a session (max over the sessions): how the prompt grows
    size_t nsteps = (size_t) steps + 2;
    double *tok_step = calloc (nsteps, sizeof (double));
    double first_main [S_RUNS], first_tokens [S_RUNS], first_dialog [64];
    size_t n_first_main = 0, n_first_dialog = 0, m = 0;
    for (int run = 0; run < S_RUNS; run++) {
        char script [500], port_file [500], log [500], subtask [500];
        snprintf (script, sizeof script, "%s/script-%s.json", afx_.broker.dir, app->name);
        snprintf (port_file, sizeof port_file, "%s/port-%s-%d", afx_.broker.dir, app->name, run);
        snprintf (log, sizeof log, "%s/llm-%s-%d.jsonl", afx_.broker.dir, app->name, run);
        if (s_script (app, steps, script) < 0)
            return -1;
        afx_llm_stop ();
        int port = llmfx_start (script, port_file, log, 900, &afx_.llm);
        if (port <= 0)
            return -1;
        afx_.port = port;
        const char *config = afx_config (getenv ("STEP_BENCH_DEBUG") ? "\"log\": {\"level\": \"debug\"}"
                                                                     : "\"log\": {\"level\": \"warn\"}");
        char task [64];
        snprintf (task, sizeof task, "bench-%s-%d", app->name, run);
        char body [4000];
        snprintf (body, sizeof body,
                  "{\"body\": {\"session\": \"%s\", \"task\": \"%s\", \"log_root\": \"%s/logs\", \"subtask\": "
                  "\"Work in the window\", \"request\": \"Benchmark steps\", \"application\": \"%s\", "
                  "\"window\": {\"xid\": %" PRId64 "}, \"max_steps\": %d}}",
                  task, task, afx_.broker.dir, app->name, xid, steps + 1);
        snprintf (subtask, sizeof subtask, "%s/subtask-%s-%d.json", afx_.broker.dir, app->name, run);
        afx_write (subtask, body);
        ufo_value_t *lines = NULL;
        int rc = afx_run_subtask (config, subtask, 600000, &lines);
        const ufo_value_t *result = afx_result (lines);
        if (rc != 0 || !result || strcmp (ufo_value_map_str (result, "status", ""), "FINISH") != 0) {
            fprintf (stderr, "step_bench: %s: ufo-app ended %d (%s: %s)\n", app->name, rc,
                     ufo_value_map_str (result, "status", "?"), ufo_value_map_str (result, "error", ""));
            ufo_value_destroy (&lines);
            kill (pid, SIGKILL);
            return -1;
        }
        //  per step: phases (ms), tokens, window
        char path [600];
        ufo_value_t *resp = afx_lines (afx_log_path (task, "response.log", path, sizeof path));
        ufo_value_t *reqs = afx_lines (afx_log_path (task, "request.log", path, sizeof path));
        size_t n = ufo_value_size (resp), rec_i = 0;
        int64_t last_xid = 0;
        for (size_t i = 0; i < n && m < cap; i++) {
            const ufo_value_t *r = ufo_value_list_at (resp, i);
            const ufo_value_t *tc = ufo_value_map_get (r, "time_cost");
            //  the step progress lines carry record_s, in order
            double record = 0;
            for (; rec_i < ufo_value_size (lines); rec_i++) {
                const ufo_value_t *l = ufo_value_list_at (lines, rec_i);
                if (strcmp (ufo_value_map_str (l, "kind", ""), "step") == 0) {
                    record = ufo_value_map_float (l, "record_s", 0) * 1e3;
                    rec_i++;
                    break;
                }
            }
            if (!strcmp (ufo_value_map_str (r, "Status", ""), "FINISH"))
                continue;       //  the last step acts on nothing
            for (size_t k = 0; k < S_NPHASES; k++)
                ph [k][m] = ufo_value_map_float (tc, s_phases [k], 0) * 1e3;
            ph [S_RECORD][m] = record;
            ph [S_OTHER][m] = ufo_value_map_float (tc, "total", 0) * 1e3;
            for (size_t k = 0; k <= S_ACTION; k++)
                ph [S_OTHER][m] -= ph [k][m];
            ph [S_TOTAL][m] = ufo_value_map_float (tc, "total", 0) * 1e3 + record;
            //  ours: all but the model and the application's reaction to the action (the
            //  action's wait for its effect); sending the action and reading are ours
            ph [S_OWN][m] = ph [S_TOTAL][m] - ph [S_LLM][m] - ph [S_WAIT][m];
            tokens [m] = (double) s_prompt_bytes (ufo_value_list_at (reqs, i)) / 4.0;
            if (i < nsteps && tokens [m] > tok_step [i])
                tok_step [i] = tokens [m];
            const ufo_value_t *w = ufo_value_map_get (r, "Window");
            int64_t wx = ufo_value_map_int (w, "xid", 0);
            //  a first step's snapshot: the snapshot runs while the window is captured, so
            //  both phases are counted (an upper bound)
            if (wx != last_xid) {
                if (i == 0) {
                    first_tokens [n_first_main] = tokens [m];
                    first_main [n_first_main++] = ph [0][m] + ph [S_CONTROLS][m];
                }
                else
                if (ufo_value_map_bool (w, "dialog", false) && n_first_dialog < 64)
                    first_dialog [n_first_dialog++] = ph [0][m] + ph [S_CONTROLS][m];
            }
            last_xid = wx;
            if (getenv ("STEP_BENCH_STEPS"))    //  each step's phases (ms), for a breakdown
                fprintf (stderr, "step %zu %-14s shot %.2f controls %.2f annot %.2f prompt %.2f parse %.2f"
                         " action %.2f wait %.2f other %.2f record %.2f own %.2f\n", i,
                         ufo_value_map_str (r, "Function", ""), ph [0][m], ph [S_CONTROLS][m],
                         ph [2][m], ph [4][m], ph [6][m], ph [S_ACTION][m], ph [S_WAIT][m],
                         ph [S_OTHER][m], ph [S_RECORD][m], ph [S_OWN][m]);
            m++;
        }
        ufo_value_destroy (&resp);
        ufo_value_destroy (&reqs);
        ufo_value_destroy (&lines);
    }
    printf ("\n%s (%s): %zu steps in %d sessions\n", app->name, app->toolkit, m, S_RUNS);
    printf ("  %-14s %9s %9s\n", "phase (ms)", "p50", "p95");
    for (size_t k = 0; k < S_NPHASES; k++) {
        double copy [4096];
        size_t c = m < 4096 ? m : 4096;
        memcpy (copy, ph [k], c * sizeof (double));
        double p50 = bench_pct (copy, c, 50), p95 = bench_pct (copy, c, 95);
        printf ("  %-14s %9.2f %9.2f\n", s_phases [k], p50, p95);
    }
    double own50;
    {
        double copy [4096];
        size_t c = m < 4096 ? m : 4096;
        memcpy (copy, ph [S_OWN], c * sizeof (double));
        own50 = bench_pct (copy, c, 50);
    }
    double own_na50;            //  own with the whole action left out (the former accounting)
    {
        double copy [4096];
        size_t c = m < 4096 ? m : 4096;
        for (size_t k = 0; k < c; k++)
            copy [k] = ph [S_OWN][k] + ph [S_WAIT][k] - ph [S_ACTION][k];
        own_na50 = bench_pct (copy, c, 50);
    }
    double own_nr50;            //  own without the record phase (the board write)
    {
        double copy [4096];
        size_t c = m < 4096 ? m : 4096;
        for (size_t k = 0; k < c; k++)
            copy [k] = ph [S_OWN][k] - ph [S_RECORD][k];
        own_nr50 = bench_pct (copy, c, 50);
    }
    printf ("  own p50 %.2f ms, without the record phase %.2f ms, without the whole action %.2f ms\n",
            own50, own_nr50, own_na50);
    printf ("  prompt tokens by step (max of the sessions):");
    for (size_t k = 0; k < nsteps; k++)
        if (tok_step [k] > 0)
            printf (" %.0f", tok_step [k]);
    printf ("\n");
    free (tok_step);
    double tok50 = bench_pct (tokens, m, 50), tokmax = m ? tokens [m - 1] : 0;
    double tok_first = bench_pct (first_tokens, n_first_main, 50);
    printf ("  prompt tokens (bytes/4): first step %.0f, p50 %.0f, max %.0f (memory and blackboard grow"
            " with the steps)\n", tok_first, tok50, tokmax);
    double first = bench_pct (first_main, n_first_main, 50);
    //  the same windows from outside: standalone cold snapshot, baseline observation
    double sa [7];
    int controls = 0, nodes = 0;
    for (int i = 0; i < 7; i++)
        sa [i] = s_standalone (xid, &controls);
    out->standalone_ms = bench_pct (sa, 7, 50);
    out->baseline_ms = s_baseline (pid, title, 5, &nodes);
    printf ("  first step's snapshot p50 %.1f ms (%zu sessions); standalone cold snapshot p50 %.1f ms"
            " (%d controls): %.2fx\n", first, n_first_main, out->standalone_ms, controls,
            first / out->standalone_ms);
    printf ("  baseline observation p50 %.1f ms (%d nodes); own step p50 %.1f ms: %.1fx faster\n",
            out->baseline_ms, nodes, own50, out->baseline_ms / own50);
    bool ok_first = first > 0 && first <= 2 * out->standalone_ms;
    bool ok_ratio = out->baseline_ms > 0 && out->baseline_ms >= 10 * own50;
    bool ok_gtk3 = !app->gtk3 || own50 <= 50;
    if (n_first_dialog && app->dialog_title) {
        int64_t dxid = s_open_dialog (app, xid, pid);
        double dsa [7], dfirst = bench_pct (first_dialog, n_first_dialog, 50);
        int dcontrols = 0, dnodes = 0;
        for (int i = 0; dxid && i < 7; i++)
            dsa [i] = s_standalone (dxid, &dcontrols);
        out->dialog_standalone_ms = dxid ? bench_pct (dsa, 7, 50) : -1;
        out->dialog_baseline_ms = dxid ? s_baseline (pid, app->dialog_title, 3, &dnodes) : -1;
        printf ("  dialog: first step's snapshot p50 %.1f ms (%zu times); standalone cold p50 %.1f ms"
                " (%d controls): %.2fx; baseline observation p50 %.1f ms (%d nodes)\n", dfirst,
                n_first_dialog, out->dialog_standalone_ms, dcontrols, dfirst / out->dialog_standalone_ms,
                out->dialog_baseline_ms, dnodes);
        ok_first = ok_first && dfirst <= 2 * out->dialog_standalone_ms;
    }
    printf ("  targets: first step <= 2x standalone %s; own >= 10x faster than baseline %s; "
            "own p50 <= 50 ms on GTK3 %s\n", ok_first ? "met" : "MISSED", ok_ratio ? "met" : "MISSED",
            app->gtk3 ? (ok_gtk3 ? "met" : "MISSED") : "n/a");
    out->met = ok_first && ok_ratio && ok_gtk3;
    for (size_t k = 0; k < S_NPHASES; k++)
        free (ph [k]);
    free (tokens);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return 0;
}

int
main (int argc, char **argv)
{
    (void) ufo_test_failures_;     //  app_fixture.h brings the test macros along
    (void) ufo_test_passed_;
    (void) ufo_test_failed_;
    int steps = argc > 1 ? atoi (argv [1]) : 24;
    if (steps < 1 || steps > 2000)
        steps = 24;
    if (!getenv ("UFO_SOURCE_DIR"))
        setenv ("UFO_SOURCE_DIR", UFO_SOURCE_DIR, 1);
    if (!getenv ("UFO_BUILD_DIR"))
        setenv ("UFO_BUILD_DIR", UFO_BUILD_DIR, 1);
    //  Qt exposes its accessibility tree only when asked to
    setenv ("QT_ACCESSIBILITY", "1", 1);
    setenv ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1", 1);
    if (afx_setup ("step-bench") < 0) {
        afx_teardown ();
        return 2;
    }
    printf ("step_bench: %d steps per application, instant scripted model, text mode\n", steps);
    bool all = true;
    int ran = 0;
    const char *only = argc > 2 ? argv [2] : NULL;     //  one application (name)
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_apps); i++) {
        if (only && strcmp (only, s_apps [i].name) != 0)
            continue;
        char which [300];
        snprintf (which, sizeof which, "command -v %s >/dev/null 2>&1",
                  strcmp (s_apps [i].name, "zenity") ? s_apps [i].name : "zenity");
        if (system (which) != 0) {
            printf ("\n%s: not installed, skipped\n", s_apps [i].name);
            continue;
        }
        s_outcome_t out;
        if (s_run_app (&s_apps [i], steps, &out) < 0) {
            all = false;
            continue;
        }
        ran++;
        all = all && out.met;
    }
    afx_teardown ();
    printf ("\nstep_bench: %s\n", all && ran ? "all targets met" : "some targets missed");
    return ran == 0 ? 2 : all ? 0 : 1;
}
