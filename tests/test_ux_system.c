/*  test_ux_system.c - what a person sees, through the real processes (ufo-broker, ufo-host,
    ufo-app, ufo-eval, the `ufo` tool) and the scripted LLM server on a private virtual desktop
    (issue 20): failed actions marked in `ufo run` (✗ and the error), in the report and in
    --json; one status vocabulary and the note when the evaluation disagrees with FINISH; a
    used task name refused (the HostAgent refuses it too) or continued with --resume; `ufo
    eval` keeping every verdict and a failed one kept apart; eval / report refusing a folder
    that is not a session log; fast failures (unknown device, no broker); live progress as
    plain lines and --json activity events while the model answers 500 twice and then drips
    its reply; and, in tmux, the live line redrawn in place and the table in 80 columns with
    colour (none with NO_COLOR). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "host_fixture.h"
#include "ufo_tasks.h"

static char s_norun [400];          //  an empty run directory: no `ufo up` state is found

//  Runs the ufo tool with args (NULL-terminated) in the test directory, output (stdout and
//  stderr) into out; returns the exit status (-1 on timeout) and the time it took.
static int
s_ufo (const char *const *args, const char *out, int timeout_ms, int64_t *took_ms)
{
    char bin [600];
    snprintf (bin, sizeof bin, "%s/cli/ufo", afx_build ());
    const char *argv [40];
    int n = 0;
    argv [n++] = bin;
    for (int i = 0; args [i] && n < 39; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    int64_t t0 = ufo_time_mono_ms ();
    pid_t pid = fork ();
    if (pid == 0) {
        if (chdir (afx_.broker.dir) != 0)
            _exit (126);
        int fo = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fi = open ("/dev/null", O_RDONLY);
        dup2 (fi, STDIN_FILENO);
        dup2 (fo, STDOUT_FILENO);
        dup2 (fo, STDERR_FILENO);
        if (*hfx_.cfg)
            setenv ("UFO_CONFIG", hfx_.cfg, 1);
        execv (bin, (char *const *) argv);
        _exit (127);
    }
    int status = 0, rc = -1;
    while (ufo_time_mono_ms () - t0 < timeout_ms) {
        if (waitpid (pid, &status, WNOHANG) == pid) {
            rc = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
            break;
        }
        usleep (10000);
    }
    if (rc == -1) {
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
    }
    if (took_ms)
        *took_ms = ufo_time_mono_ms () - t0;
    return rc;
}

//  Occurrences of needle in hay.
static size_t
s_count (const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)) != NULL; p += strlen (needle))
        n++;
    return n;
}

//  Characters (UTF-8) of the longest line of text, escape sequences not counted.
static size_t
s_widest (const char *text)
{
    size_t widest = 0, chars = 0;
    for (const char *p = text; p && *p; p++) {
        if (*p == '\n') {
            widest = chars > widest ? chars : widest;
            chars = 0;
        }
        else
        if (*p == '\033' && p [1] == '[') {
            p += 2;
            while (*p && !isalpha ((unsigned char) *p))
                p++;
            if (!*p)
                break;
        }
        else
            chars += ((unsigned char) *p & 0xC0) != 0x80;
    }
    return chars > widest ? chars : widest;
}

static void
s_logdir (char *out, size_t size, const char *task)
{
    snprintf (out, size, "%s/logs/%s", afx_.broker.dir, task);
}

//  --- Honest outcomes ---------------------------------------------------------------------

//  A refused launcher, a launcher whose program does not exist and a window label that is not
//  there: each step is marked failed in `ufo run` (✗ + the error), in the report's timeline
//  and step cards, and in --json; the model's FINISH against the evaluation's "no" is one line.
UFO_TEST (test_failed_actions_flagged)
{
    setenv ("UFO_DESKTOP__LAUNCHERS", "{\"mousepad\": [\"mousepad\"], \"ghost\": [\"/nonexistent/ufo-ghost-app\"]}", 1);
    int started = hfx_start ("../ux/failed_actions.json", "", 0);
    unsetenv ("UFO_DESKTOP__LAUNCHERS");
    REQUIRE (started == 0);
    hfx_json = false;
    const char *args [] = { "Write a note", "--device", "t0", "--task", "failed-human", "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    hfx_json = true;
    CHECK_INT (rc, 1);
    char *text = afx_read (hfx_.out);
    REQUIRE (text);
    //  the model's launcher name carries ESC [2J (clear screen): it never reaches the terminal
    CHECK_CONTAINS (text, "\xE2\x9C\x97 launcher 'nosuch-launcher [2J' is not in desktop.launchers");
    CHECK (!strchr (text, '\033'));
    CHECK_CONTAINS (text, "\xE2\x9C\x97 cannot start launcher 'ghost'");
    CHECK_CONTAINS (text, "\xE2\x9C\x97 no window with label \"99\" in the list");
    CHECK_CONTAINS (text, "\xE2\x9D\x8C session FINISH");
    CHECK_CONTAINS (text, "the agents said FINISH, but the evaluation found the request not completed");
    CHECK_CONTAINS (text, "the request was NOT completed");
    CHECK (s_count (text, "\xE2\x9C\x97") >= 6);    //  a mark on the step line and on its error line
    CHECK (s_widest (text) <= 80 || strstr (text, "reason:"));
    //  the table itself never passes 80 columns when the output is not a terminal
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = 0;
        if (strncmp (line, "step", 4) == 0 || (strlen (line) > 4 && isdigit ((unsigned char) line [3])))
            if (s_widest (line) > 80)
                UFO_FAIL_ ("table line wider than 80 columns: %s", line);
    }
    free (text);
    char dir [700], path [800];
    s_logdir (dir, sizeof dir, "failed-human");
    snprintf (path, sizeof path, "%s/report.html", dir);
    char *html = afx_read (path);
    REQUIRE (html);
    CHECK_INT (s_count (html, "class=\"row host failed\""), 3);
    CHECK (s_count (html, "\xE2\x9C\x98 failed") >= 6);     //  timeline and step cards
    CHECK_CONTAINS (html, "the agents said FINISH, but the evaluation found the request not completed");
    free (html);
    //  --json: every step says whether it succeeded; the result speaks the session's words
    const char *jargs [] = { "Write a note", "--device", "t0", "--task", "failed-json", "--yes", NULL };
    CHECK_INT (hfx_run (jargs, NULL, NULL), 1);
    ufo_value_t *lines = afx_lines (hfx_.out);
    size_t failed = 0, ok = 0;
    const ufo_value_t *result = NULL;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *e = ufo_value_list_at (lines, i);
        const ufo_value_t *body = ufo_value_map_get (e, "body");
        if (strcmp (ufo_value_map_str (e, "kind", ""), "result") == 0)
            result = e;
        if (strcmp (ufo_value_map_str (body, "kind", ""), "step") != 0)
            continue;
        if (ufo_value_map_bool (body, "success", true))
            ok++;
        else {
            failed++;
            CHECK (strlen (ufo_value_map_str (body, "failure", "")) > 0);
        }
    }
    CHECK_INT (failed, 3);
    CHECK_INT (ok, 1);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_map_str (result, "task_status", ""), "done");
    CHECK (!ufo_value_map_bool (result, "completed", true));
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  A step that ends in ERROR is no success anywhere: --json says success false and the result's
//  status is ERROR (not the task's "done"); the report's step card says failed, never "ok".
UFO_TEST (test_error_step_is_no_success)
{
    REQUIRE (hfx_start ("garbage.json", "", 0) == 0);
    const char *args [] = { "Do something", "--device", "t0", "--task", "error-json", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 1);
    ufo_value_t *lines = afx_lines (hfx_.out);
    bool step_failed = false;
    const ufo_value_t *result = NULL;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *e = ufo_value_list_at (lines, i);
        const ufo_value_t *body = ufo_value_map_get (e, "body");
        if (strcmp (ufo_value_map_str (body, "kind", ""), "step") == 0)
            step_failed = !ufo_value_map_bool (body, "success", true);
        if (strcmp (ufo_value_map_str (e, "kind", ""), "result") == 0)
            result = e;
    }
    CHECK (step_failed);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_STR (ufo_value_map_str (result, "task_status", ""), "done");
    ufo_value_destroy (&lines);
    char path [800];
    snprintf (path, sizeof path, "%s/report.html", hfx_.logdir);
    char *html = afx_read (path);
    REQUIRE (html);
    CHECK (!strstr (html, "\xE2\x9C\x94 ok"));
    CHECK_CONTAINS (html, "\xE2\x9C\x98 failed");
    free (html);
    hfx_stop_all ();
}

//  --- Logs never mixed --------------------------------------------------------------------

UFO_TEST (test_task_name_reuse)
{
    REQUIRE (hfx_start ("finish.json", "", 0) == 0);
    const char *args [] = { "Nothing to do", "--device", "t0", "--task", "reuse", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    char dir [700];
    snprintf (dir, sizeof dir, "%s", hfx_.logdir);
    char session [160];
    snprintf (session, sizeof session, "%s", hfx_.session);
    REQUIRE (*dir && *session);
    ufo_value_t *lines = hfx_log ("response.log");
    size_t before = ufo_value_size (lines);
    ufo_value_destroy (&lines);
    CHECK (before >= 1);
    //  the same name again: refused at once, nothing appended
    char out [500];
    snprintf (out, sizeof out, "%s/reuse-again.out", afx_.broker.dir);
    int64_t took = 0;
    const char *again [] = { "run", "Something else", "--device", "t0", "--task", "reuse", "--yes", "--broker",
                             afx_.broker.cmd, NULL };
    CHECK_INT (s_ufo (again, out, 30000, &took), 1);
    CHECK (took < UFO_AT_ONCE_MS);              //  refused before anything was submitted (30 s bound)
    char *text = afx_read (out);
    CHECK_CONTAINS (text, "the task name \"reuse\" is already used");
    CHECK_CONTAINS (text, "--resume");
    free (text);
    char path [800];
    snprintf (path, sizeof path, "%s/response.log", dir);
    lines = afx_lines (path);
    CHECK_INT (ufo_value_size (lines), before);
    ufo_value_destroy (&lines);
    //  the HostAgent refuses another session under a used name too (a client that skipped the check)
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test-reuse", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "host");
    ufo_value_map_set_str (spec, "device", "t0");
    ufo_value_map_set_int (spec, "max_attempts", 1);
    char body [1200];
    snprintf (body, sizeof body, "{\"session\": \"s-other-session\", \"task\": \"reuse\", \"requests\": [\"x\"], "
              "\"log_root\": \"%s/logs\"}", afx_.broker.dir);
    ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_json_parse_str (body, NULL) });
    char id [33];
    REQUIRE (ufo_tasks_submit (tasks, &spec, id, NULL) == 0);
    ufo_value_t *result = NULL;
    int64_t end = ufo_time_mono_ms () + 30000;
    while (!result && ufo_time_mono_ms () < end) {
        ufo_value_t *e = ufo_tasks_next (tasks, 100);
        if (e && !strcmp (ufo_value_map_str (e, "kind", ""), "result") && !strcmp (ufo_value_map_str (e, "task", ""), id))
            result = e;
        else
            ufo_value_destroy (&e);
    }
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (result, "body.error")), "is already used by session");
    ufo_value_destroy (&result);
    ufo_tasks_destroy (&tasks);
    lines = afx_lines (path);
    CHECK_INT (ufo_value_size (lines), before);
    ufo_value_destroy (&lines);
    //  --resume continues the same session: same id in request.json, no step number twice
    const char *resume [] = { "Nothing to do", "--device", "t0", "--task", "reuse", "--resume", "--yes", NULL };
    int rc = hfx_run (resume, NULL, NULL);
    CHECK (rc == 0 || rc == 1);
    REQUIRE (hfx_.result);
    CHECK_STR (hfx_.session, session);
    lines = afx_lines (path);
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        for (size_t k = i + 1; k < ufo_value_size (lines); k++)
            if (ufo_value_map_int (ufo_value_list_at (lines, i), "Step", -1)
                == ufo_value_map_int (ufo_value_list_at (lines, k), "Step", -2))
                UFO_FAIL_ ("response.log has step %" PRId64 " twice after --resume",
                           ufo_value_map_int (ufo_value_list_at (lines, i), "Step", -1));
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  `ufo eval` keeps every verdict (by whom, when); a failed re-evaluation is kept apart and the
//  report still shows the good verdict; eval and report refuse a folder that is no session log.
UFO_TEST (test_eval_verdicts_kept)
{
    REQUIRE (hfx_start ("finish.json", "", 0) == 0);
    const char *args [] = { "Nothing to do", "--device", "t0", "--task", "verdicts", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    char dir [700], path [800], out [500], dead [500];
    snprintf (dir, sizeof dir, "%s", hfx_.logdir);
    snprintf (path, sizeof path, "%s/evaluation.log", dir);
    snprintf (out, sizeof out, "%s/eval.out", afx_.broker.dir);
    snprintf (dead, sizeof dead, "%s/dead.json", afx_.broker.dir);
    afx_write (dead, "{\"EVALUATION_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": "
                     "\"http://127.0.0.1:9/v1\", \"API_MODEL\": \"scripted\", \"MAX_RETRY\": 0}}");
    ufo_value_t *lines = afx_lines (path);
    CHECK_INT (ufo_value_size (lines), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, 0), "by", ""), "EvaluationAgent");
    ufo_value_destroy (&lines);
    //  the model is unreachable: exit 1, the failure logged apart, the good verdict stands
    const char *failing [] = { "eval", dir, "--config", dead, NULL };
    CHECK_INT (s_ufo (failing, out, 60000, NULL), 1);
    char *text = afx_read (out);
    CHECK_CONTAINS (text, "the verdicts before it stand");
    free (text);
    lines = afx_lines (path);
    REQUIRE (ufo_value_size (lines) == 2);
    const ufo_value_t *bad = ufo_value_list_at (lines, 1);
    CHECK_STR (ufo_value_map_str (bad, "by", ""), "ufo eval");
    CHECK (strlen (ufo_value_map_str (bad, "error", "")) > 0);
    CHECK (strlen (ufo_value_map_str (bad, "Timestamp", "")) > 0);
    ufo_value_destroy (&lines);
    const char *report [] = { "report", dir, NULL };
    CHECK_INT (s_ufo (report, out, 60000, NULL), 0);
    snprintf (path, sizeof path, "%s/report.html", dir);
    char *html = afx_read (path);
    REQUIRE (html);
    char *header_end = strstr (html, "</header>");
    REQUIRE (header_end);
    *header_end = 0;
    CHECK_CONTAINS (html, "verdict-yes");        //  the header's verdict is the good one
    CHECK (!strstr (html, "verdict-unsure"));
    *header_end = '<';
    CHECK_CONTAINS (html, "failed evaluation, kept apart");
    CHECK_CONTAINS (html, "ufo eval");
    free (html);
    //  a live re-evaluation is added, not replacing anything
    const char *good [] = { "eval", dir, NULL };
    CHECK_INT (s_ufo (good, out, 60000, NULL), 0);
    snprintf (path, sizeof path, "%s/evaluation.log", dir);
    lines = afx_lines (path);
    CHECK_INT (ufo_value_size (lines), 3);
    ufo_value_destroy (&lines);
    //  a folder that is not a session log: refused, nothing written
    char other [600];
    snprintf (other, sizeof other, "%s/not-a-session", afx_.broker.dir);
    mkdir (other, 0755);
    snprintf (path, sizeof path, "%s/notes.txt", other);
    afx_write (path, "my notes\n");
    const char *eval_other [] = { "eval", other, NULL };
    CHECK_INT (s_ufo (eval_other, out, 30000, NULL), 1);
    text = afx_read (out);
    CHECK_CONTAINS (text, "is not a session log directory");
    free (text);
    const char *report_other [] = { "report", other, NULL };
    CHECK_INT (s_ufo (report_other, out, 30000, NULL), 1);
    DIR *d = opendir (other);
    size_t entries = 0;
    for (struct dirent *e; d && (e = readdir (d)) != NULL;)
        entries += e->d_name [0] != '.';
    if (d)
        closedir (d);
    CHECK_INT (entries, 1);
    hfx_stop_all ();
}

//  --- Fast, clear failures ----------------------------------------------------------------

UFO_TEST (test_fast_failures)
{
    REQUIRE (hfx_start ("finish.json", "", 0) == 0);
    char out [500];
    snprintf (out, sizeof out, "%s/fast.out", afx_.broker.dir);
    //  the HostAgent of t0 registers within a few seconds; then d9 is refused at once
    int64_t took = 0;
    const char *status [] = { "status", "--broker", afx_.broker.cmd, NULL };
    char *text = NULL;
    for (int i = 0; i < 100; i++) {
        s_ufo (status, out, 10000, NULL);
        free (text);
        text = afx_read (out);
        if (text && strstr (text, "WORKERS") && strstr (text, " t0 "))
            break;                                  //  the eval worker may register first
        usleep (100000);
    }
    CHECK_CONTAINS (text, "WORKERS");               //  the HostAgent of t0 is there
    CHECK_CONTAINS (text, " t0 ");
    free (text);
    const char *device [] = { "run", "hello", "--device", "d9", "--broker", afx_.broker.cmd, NULL };
    CHECK_INT (s_ufo (device, out, 30000, &took), 1);
    CHECK (took < UFO_AT_ONCE_MS);              //  not the session deadline (an hour)
    text = afx_read (out);
    CHECK_CONTAINS (text, "no HostAgent serves device \"d9\"; known devices: t0");
    free (text);
    //  no broker: a missing ipc socket fails at once, a silent tcp port within about a second
    const char *missing = "ipc:///nonexistent-ufo-dir/broker-cmd";
    const char *silent = "tcp://127.0.0.1:9";
    const char *eps [] = { missing, silent };
    for (size_t k = 0; k < 2; k++) {
        const char *run [] = { "run", "hello", "--broker", eps [k], NULL };
        const char *st [] = { "status", "--broker", eps [k], NULL };
        const char *mon [] = { "monitor", "--broker", eps [k], "--bus", "tcp://127.0.0.1:9", NULL };
        const char *const *cmds [] = { run, st, mon };
        for (size_t c = 0; c < 3; c++) {
            CHECK_INT (s_ufo (cmds [c], out, 30000, &took), 1);
            //  the check itself: no socket at all, or one second without an answer; the
            //  messages below say which (and that the probe waited 1.0 s, not a call's 5 s
            //  timeout), the time only that it was not a deadline (docs/BENCHMARKS.md)
            if (took >= UFO_AT_ONCE_MS)
                UFO_FAIL_ ("ufo %s --broker %s took %" PRId64 " ms", cmds [c][0], eps [k], took);
            text = afx_read (out);
            CHECK_CONTAINS (text, "start one with `ufo up`");
            CHECK_CONTAINS (text, k == 0 ? "(the socket does not exist)" : "within 1.0 s");
            free (text);
        }
    }
    hfx_stop_all ();
}

//  --- Live progress -------------------------------------------------------------------------

//  `ufo status` once, while a session runs (a during () callback of hfx_run).
static char *s_status_seen;
static int64_t s_status_at;

static void
s_status_during (void)
{
    if (s_status_seen || ufo_time_mono_ms () < s_status_at)
        return;
    char out [500];
    snprintf (out, sizeof out, "%s/status-during.out", afx_.broker.dir);
    const char *args [] = { "status", "--broker", afx_.broker.cmd, NULL };
    s_ufo (args, out, 5000, NULL);
    s_status_seen = afx_read (out);
}

//  The model answers HTTP 500 twice, then drips its reply: `ufo run` without a terminal prints
//  the model call, each retry with its reason and wait; --json carries the activity events.
UFO_TEST (test_live_progress_plain)
{
    setenv ("UFO_HOST_AGENT__MAX_RETRY", "3", 1);
    int started = hfx_start ("../ux/slow_retry.json", "", 0);
    unsetenv ("UFO_HOST_AGENT__MAX_RETRY");
    REQUIRE (started == 0);
    char out [500];
    snprintf (out, sizeof out, "%s/live-plain.out", afx_.broker.dir);
    const char *args [] = { "run", "Nothing to do", "--device", "t0", "--task", "live-plain", "--yes", "--broker",
                            afx_.broker.cmd, NULL };
    CHECK_INT (s_ufo (args, out, 120000, NULL), 0);
    char *text = afx_read (out);
    CHECK_CONTAINS (text, "HostAgent has the session on device t0");
    CHECK_CONTAINS (text, "step 0 HostAgent: asking the model");
    CHECK_CONTAINS (text, "step 0 HostAgent: model call retry 1 in ");
    CHECK_CONTAINS (text, "step 0 HostAgent: model call retry 2 in ");
    CHECK_CONTAINS (text, " s: HTTP 500");
    CHECK (!strstr (text, "waiting for a HostAgent"));
    CHECK (!strstr (text, "\033["));             //  no colour when not a terminal
    free (text);
    hfx_stop_all ();
    //  --json: the same as events (a fresh server: the faults again)
    setenv ("UFO_HOST_AGENT__MAX_RETRY", "3", 1);
    started = hfx_start ("../ux/slow_retry.json", "", 0);
    unsetenv ("UFO_HOST_AGENT__MAX_RETRY");
    REQUIRE (started == 0);
    const char *jargs [] = { "Nothing to do", "--device", "t0", "--task", "live-json", "--yes", NULL };
    s_status_seen = NULL;
    s_status_at = ufo_time_mono_ms () + 1500;
    CHECK_INT (hfx_run (jargs, NULL, s_status_during), 0);
    //  `ufo status` while the model was being asked: the session by its task name, its device,
    //  its state and the HostAgent that runs it, by its full name
    REQUIRE (s_status_seen);
    if (getenv ("UX_TEST_VERBOSE"))
        fprintf (stderr, "ufo status during the session:\n%s\n", s_status_seen);
    CHECK_CONTAINS (s_status_seen, "SESSIONS");
    CHECK_CONTAINS (s_status_seen, "live-json");
    CHECK_CONTAINS (s_status_seen, " t0 ");
    CHECK_CONTAINS (s_status_seen, "running");
    CHECK_CONTAINS (s_status_seen, "host@");
    free (s_status_seen);
    s_status_seen = NULL;
    ufo_value_t *lines = afx_lines (hfx_.out);
    size_t starts = 0, retries = 0, ends = 0, sessions = 0, judging = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *b = ufo_value_map_get (ufo_value_list_at (lines, i), "body");
        if (strcmp (ufo_value_map_str (b, "kind", ""), "activity") != 0)
            continue;
        const char *what = ufo_value_map_str (b, "what", ""), *phase = ufo_value_map_str (b, "phase", "");
        sessions += !strcmp (what, "session");
        judging += !strcmp (ufo_value_map_str (b, "agent", ""), "EvaluationAgent") && !strcmp (phase, "end")
                && ufo_value_map_bool (b, "ok", false);
        if (strcmp (what, "model") == 0 && strcmp (ufo_value_map_str (b, "agent", ""), "HostAgent") == 0) {
            starts += !strcmp (phase, "start");
            ends += !strcmp (phase, "end") && ufo_value_map_bool (b, "ok", false);
            if (!strcmp (phase, "retry")) {
                retries++;
                CHECK (ufo_value_map_int (b, "wait_ms", 0) > 0);
                CHECK_CONTAINS (ufo_value_map_str (b, "reason", ""), "500");
            }
        }
    }
    CHECK_INT (sessions, 1);
    CHECK_INT (starts, 1);
    CHECK_INT (retries, 2);
    CHECK_INT (ends, 1);
    CHECK_INT (judging, 1);                     //  the EvaluationAgent's, relayed by the HostAgent
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  `ufo batch`: the session vocabulary in its table, the time column from submission to the
//  result (the model took seconds: two HTTP 500 and a dripping reply), a used task name not run.
UFO_TEST (test_batch_status_and_time)
{
    setenv ("UFO_HOST_AGENT__MAX_RETRY", "3", 1);
    int started = hfx_start ("../ux/slow_retry.json", "", 0);
    unsetenv ("UFO_HOST_AGENT__MAX_RETRY");
    REQUIRE (started == 0);
    char dir [600], path [800], out [600];
    snprintf (dir, sizeof dir, "%s/batch-tasks", afx_.broker.dir);
    mkdir (dir, 0755);
    snprintf (path, sizeof path, "%s/a.json", dir);
    afx_write (path, "{\"task\": \"batch-slow\", \"request\": \"Nothing to do\"}");
    snprintf (path, sizeof path, "%s/b.json", dir);
    afx_write (path, "{\"task\": \"batch-used\", \"request\": \"Nothing to do\"}");
    snprintf (path, sizeof path, "%s/logs", afx_.broker.dir);
    mkdir (path, 0755);
    snprintf (path, sizeof path, "%s/logs/batch-used", afx_.broker.dir);
    mkdir (path, 0755);
    snprintf (path, sizeof path, "%s/logs/batch-used/request.json", afx_.broker.dir);
    afx_write (path, "{\"task\": \"batch-used\", \"session\": \"s-earlier\"}");
    snprintf (out, sizeof out, "%s/batch.out", afx_.broker.dir);
    const char *args [] = { "batch", dir, "--yes", "--broker", afx_.broker.cmd, NULL };
    int64_t took = 0;
    CHECK_INT (s_ufo (args, out, 180000, &took), 1);       //  b.json was not run
    char *text = afx_read (out);
    REQUIRE (text);
    const char *row = strstr (text, "\nbatch-slow ");
    REQUIRE (row);
    CHECK (strncmp (row + 1 + 28 + 1, "FINISH", 6) == 0);
    //  the last field of the row is the time, "12.3s"
    const char *eol = strchr (row + 1, '\n');
    REQUIRE (eol);
    const char *p = eol;
    while (p > row && p [-1] != ' ')
        p--;
    double secs = atof (p);
    CHECK (secs >= 2.0);                        //  the session took seconds, not the last step's
    CHECK (secs * 1000 <= (double) took + 100);  //  the column is rounded to 0.1 s
    CHECK_CONTAINS (text, "the task name \"batch-used\" is already used");
    CHECK (!strstr (text, "FAILED"));
    CHECK_CONTAINS (text, "1 of 2 task(s) completed");
    if (secs < 2.0)
        fprintf (stderr, "%s\n", text);
    free (text);
    hfx_stop_all ();
}

//  tmux: `ufo run` on an 80-column terminal: the live line is redrawn in place while the model
//  answers (with the retries), is gone at the end, the table fits (no wrapped line) and has
//  colour; with NO_COLOR the same output has none.
static char s_tmux_sock [64];

static char *
s_tmux_capture (bool escapes)
{
    char cmd [800], path [500];
    snprintf (path, sizeof path, "%s/pane.txt", afx_.broker.dir);
    snprintf (cmd, sizeof cmd, "tmux -L %s capture-pane -p -J %s -t ux > '%s' 2>/dev/null", s_tmux_sock,
              escapes ? "-e" : "", path);
    if (system (cmd) != 0)
        return NULL;
    return afx_read (path);
}

static int
s_tmux_run (const char *task, bool no_color, char **live_p, char **final_p)
{
    char cmd [4000];
    snprintf (s_tmux_sock, sizeof s_tmux_sock, "ufo-ux-%d-%s", (int) getpid (), task);
    snprintf (cmd, sizeof cmd, "tmux -L %s kill-server 2>/dev/null; tmux -L %s new-session -d -s ux -x 80 -y 50 "
              "\"cd '%s' && env %s UFO_CONFIG='%s' UFO_RUN_DIR='%s' '%s/cli/ufo' run 'Nothing to do' --device t0 "
              "--task %s --yes --broker '%s'; echo UFO-EXIT=\\$?; sleep 300\"", s_tmux_sock, s_tmux_sock,
              afx_.broker.dir, no_color ? "NO_COLOR=1" : "-u NO_COLOR", hfx_.cfg, s_norun, afx_build (), task,
              afx_.broker.cmd);
    if (system (cmd) != 0)
        return -1;
    int64_t end = ufo_time_mono_ms () + 120000;
    while (ufo_time_mono_ms () < end) {
        char *pane = s_tmux_capture (false);
        if (pane && strstr (pane, "\xE2\x8F\xB3 step") && strstr (pane, "retry 2") && !*live_p)
            *live_p = ufo_strdup (pane);
        if (pane && strstr (pane, "UFO-EXIT=")) {
            free (pane);
            *final_p = s_tmux_capture (true);
            snprintf (cmd, sizeof cmd, "tmux -L %s kill-server 2>/dev/null", s_tmux_sock);
            if (system (cmd) != 0) {}
            return 0;
        }
        free (pane);
        usleep (100000);
    }
    snprintf (cmd, sizeof cmd, "tmux -L %s kill-server 2>/dev/null", s_tmux_sock);
    if (system (cmd) != 0) {}
    return -1;
}

UFO_TEST (test_tmux_live_line_and_80_columns)
{
    if (system ("command -v tmux >/dev/null 2>&1") != 0) {
        fprintf (stderr, "tmux is not installed (scripts/bootstrap installs it)\n");
        CHECK (false);
        return;
    }
    setenv ("UFO_HOST_AGENT__MAX_RETRY", "3", 1);
    int started = hfx_start ("../ux/slow_retry.json", "", 0);
    unsetenv ("UFO_HOST_AGENT__MAX_RETRY");
    REQUIRE (started == 0);
    char *live = NULL, *final = NULL;
    CHECK_INT (s_tmux_run ("tmux-colour", false, &live, &final), 0);
    if (getenv ("UX_TEST_VERBOSE"))
        fprintf (stderr, "live pane:\n%s\nfinal pane:\n%s\n", live ? live : "", final ? final : "");
    //  the live line, caught while the model dripped its reply after two HTTP 500
    REQUIRE (live);
    CHECK_CONTAINS (live, "\xE2\x8F\xB3 step 0 \xC2\xB7 HostAgent \xC2\xB7 asking the model");
    CHECK_CONTAINS (live, "retry 2 in ");
    CHECK_CONTAINS (live, " s: HTTP 500");      //  the reason fits in 80 columns
    CHECK_CONTAINS (live, " s \xC2\xB7 ");       //  elapsed seconds
    CHECK_INT (s_count (live, "\xE2\x8F\xB3"), 1);  //  one line, redrawn in place
    REQUIRE (final);
    CHECK_CONTAINS (final, "UFO-EXIT=0");
    CHECK (!strstr (final, "\xE2\x8F\xB3"));        //  gone when the session ended
    CHECK_CONTAINS (final, "step  agent");
    CHECK_CONTAINS (final, "FINISH");
    CHECK_CONTAINS (final, "\033[");               //  colour on a terminal
    //  the table, from its header to the blank line after it: -J joins wrapped lines, so a
    //  row that did not fit would show here as one wider line
    char *table = strstr (final, "step  agent");
    REQUIRE (table);
    char *table_end = strstr (table, "\n\n");
    REQUIRE (table_end);
    *table_end = 0;
    CHECK (s_count (table, "\n") >= 1);
    if (s_widest (table) > 80)
        UFO_FAIL_ ("a table line is wider than 80 columns:\n%s", table);
    *table_end = '\n';
    free (live);
    free (final);
    live = final = NULL;
    //  NO_COLOR: no escape sequence at all (the model answers at once now)
    CHECK_INT (s_tmux_run ("tmux-nocolor", true, &live, &final), 0);
    REQUIRE (final);
    CHECK_CONTAINS (final, "UFO-EXIT=0");
    CHECK_CONTAINS (final, "step  agent");
    CHECK (!strstr (final, "\033[3") && !strstr (final, "\033[1m") && !strstr (final, "\033[2m"));
    free (live);
    free (final);
    hfx_stop_all ();
}

int
main (void)
{
    char supp [600];
    snprintf (supp, sizeof supp, "suppressions=%s/data/host_agent/lsan.supp", getenv ("UFO_TEST_DATA"));
    if (getenv ("UFO_TEST_DATA") && !getenv ("LSAN_OPTIONS"))
        setenv ("LSAN_OPTIONS", supp, 1);
    (void) hfx_board;               //  fixture helpers this program does not need
    (void) hfx_mousepad_xid;
    (void) hfx_llm_lines;
    unsetenv ("COLUMNS");
    unsetenv ("NO_COLOR");
    if (afx_setup ("test_ux_system") != 0) {
        fprintf (stderr, "no desktop / broker\n");
        afx_teardown ();
        return 1;
    }
    //  clients find no `ufo up` state: an empty run directory of their own
    snprintf (s_norun, sizeof s_norun, "%s/norun", afx_.broker.dir);
    mkdir (s_norun, 0700);
    setenv ("UFO_RUN_DIR", s_norun, 1);
    //  UX_TEST_ONLY=name runs one case (debugging)
    const char *only = getenv ("UX_TEST_ONLY");
#define S_CASE(name) if (!only || strstr (#name, only)) UFO_RUN (name)
    S_CASE (test_failed_actions_flagged);
    S_CASE (test_error_step_is_no_success);
    S_CASE (test_task_name_reuse);
    S_CASE (test_eval_verdicts_kept);
    S_CASE (test_fast_failures);
    S_CASE (test_live_progress_plain);
    S_CASE (test_batch_status_and_time);
    S_CASE (test_tmux_live_line_and_80_columns);
    hfx_stop_all ();
    afx_teardown ();
    return UFO_TEST_END ();
}
