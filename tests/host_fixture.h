/*  host_fixture.h - helpers for the HostAgent system tests (test_host_system.c): the agents
    (ufo-host, ufo-app, ufo-eval) as child processes with a configuration pointing at the
    scripted LLM server, `ufo run` as the client (bounded, its JSON output parsed), the
    session's logs, board and the server's request log, and a check that no agent wrote a
    sanitizer report. Builds on app_fixture.h (desktop session, broker, LLM server).
    Header-only, for one test program. */
#ifndef HOST_FIXTURE_H_INCLUDED
#define HOST_FIXTURE_H_INCLUDED

#include "ufo_error.h"
#include "ufo_bb_client.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <sys/wait.h>
#include "app_fixture.h"

#define HFX_RUN_MS 180000

typedef struct {
    pid_t host, host2, eval, app [2];
    char out [400];             //  stdout of the last `ufo run`
    char cfg [400];
    ufo_value_t *result;        //  the session result of the last run
    char logdir [600];
    char session [160];
} hfx_t;

static hfx_t hfx_;
static bool hfx_host_visual = false;     //  HOST_AGENT.VISUAL_MODE of the next hfx_start
static bool hfx_json = true;             //  false: the next hfx_run prints for a person (no --json)
static const char *hfx_stdin = NULL;     //  a path the next hfx_run reads as stdin instead of input
                                         //  (a FIFO: `ufo run` waits at its prompt)

static pid_t
hfx_spawn (const char *bin, const char *const *args, const char *log)
{
    const char *argv [32];
    int n = 0;
    argv [n++] = bin;
    for (int i = 0; args [i] && n < 31; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        execv (bin, (char *const *) argv);
        _exit (127);
    }
    return pid;
}

static void
hfx_kill (pid_t *pid)
{
    if (*pid > 0) {
        kill (*pid, SIGTERM);
        int64_t end = ufo_time_mono_ms () + 10000;
        while (waitpid (*pid, NULL, WNOHANG) == 0 && ufo_time_mono_ms () < end)
            usleep (20000);
        if (kill (*pid, 0) == 0) {
            kill (*pid, SIGKILL);
            waitpid (*pid, NULL, 0);
        }
    }
    *pid = 0;
}

static pid_t
hfx_start_app (int k)
{
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/app_agent/ufo-app", afx_build ());
    snprintf (log, sizeof log, "%s/app-%d.log", afx_.broker.dir, k);
    const char *args [] = { "--app", "mousepad", "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, NULL };
    return hfx_spawn (bin, args, log);
}

//  Starts the scripted server with script and the agents (apps: AppAgent workers).
static int
hfx_start (const char *script, const char *extra, int apps)
{
    char path [300];
    snprintf (path, sizeof path, "../host_agent/%s", script);
    if (afx_llm_start (path) != 0)
        return -1;
    char more [2048];
    snprintf (more, sizeof more,
              "\"HOST_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": \"http://127.0.0.1:%d/v1\","
              " \"API_KEY\": \"sk-afx-secret-0123456789\", \"API_MODEL\": \"scripted\", \"VISUAL_MODE\": %s},"
              " \"dispatch\": {\"heartbeat_ivl_ms\": 200, \"heartbeat_liveness\": 5}%s%s",
              afx_.port, hfx_host_visual ? "true" : "false", extra && *extra ? ", " : "", extra ? extra : "");
    snprintf (hfx_.cfg, sizeof hfx_.cfg, "%s", afx_config (more));
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host.log", afx_.broker.dir);
    const char *hargs [] = { "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, "--bus",
                             afx_.broker.bus, NULL };
    hfx_.host = hfx_spawn (bin, hargs, log);
    snprintf (bin, sizeof bin, "%s/eval_agent/ufo-eval", afx_build ());
    snprintf (log, sizeof log, "%s/eval.log", afx_.broker.dir);
    const char *eargs [] = { "--config", hfx_.cfg, "--broker", afx_.broker.cmd, NULL };
    hfx_.eval = hfx_spawn (bin, eargs, log);
    for (int k = 0; k < apps && k < 2; k++)
        hfx_.app [k] = hfx_start_app (k);
    return 0;
}

//  hfx_start with the scripted model host_mcp.json and one MCP server for the HostAgent,
//  "notes" (node tests/mcp/scripted_server.js schema); confirm_actions (JSON, NULL: none) is
//  the desktop.confirm_actions of the ufo-host started. 0 when started.
static inline int
hfx_start_host_mcp (const char *confirm_actions)
{
    char extra [1200];
    snprintf (extra, sizeof extra, "\"MCP_TOOL_TIMEOUT\": 20, \"MCP_SERVERS\": {\"HOST_AGENT\": {\"*\": [{\"name\": "
              "\"notes\", \"command\": \"node\", \"args\": [\"%s/tests/mcp/scripted_server.js\", \"schema\"]}]}}",
              getenv ("UFO_SOURCE_DIR"));
    if (confirm_actions)
        setenv ("UFO_DESKTOP__CONFIRM_ACTIONS", confirm_actions, 1);    //  read by the ufo-host started here
    int rc = hfx_start ("host_mcp.json", extra, 0);
    unsetenv ("UFO_DESKTOP__CONFIRM_ACTIONS");
    return rc;
}

//  Fails the case when a process wrote a sanitizer report (sanitizer builds) into its log.
static void
hfx_check_sanitizers (void)
{
    static const char *logs [] = { "host.log", "host2.log", "eval.log", "app-0.log", "app-1.log" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (logs); i++) {
        char path [400];
        snprintf (path, sizeof path, "%s/%s", afx_.broker.dir, logs [i]);
        char *text = afx_read (path);
        if (text && (strstr (text, "ERROR: AddressSanitizer") || strstr (text, "ERROR: LeakSanitizer")
                     || strstr (text, "runtime error:")))
            UFO_FAIL_ ("sanitizer report in %s:\n%s", logs [i], text);
        free (text);
        unlink (path);                          //  the next case starts with fresh logs
    }
}

static void
hfx_stop_all (void)
{
    hfx_kill (&hfx_.app [0]);
    hfx_kill (&hfx_.app [1]);
    hfx_kill (&hfx_.host);
    hfx_kill (&hfx_.host2);
    hfx_kill (&hfx_.eval);
    hfx_check_sanitizers ();
    ufo_value_destroy (&hfx_.result);
    //  close every mousepad the session opened
    ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (strcmp (ufo_value_map_str (w, "name", ""), "mousepad") == 0)
            afx_mousepad_kill ((int) ufo_value_map_int (w, "pid", 0), ufo_value_map_int (w, "xid", 0));
    }
    ufo_value_destroy (&wins);
}

//  Runs `ufo run` with args in the test directory (stdin from input, or /dev/null), bounded.
//  Returns its exit status (-1 on timeout); hfx_.result gets the session result (only with
//  hfx_json; else hfx_.out holds the printed lines and hfx_.result stays NULL).
//  Waits (bounded) until a worker of service (e.g. "host") for device is registered at the
//  broker (dispatch.state): a `ufo run --device D` right after starting D's HostAgent would
//  otherwise be refused as an unknown device. True when it is.
static inline bool
hfx_wait_worker (const char *service, const char *device, int timeout_ms)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (afx_.broker.cmd, NULL, &err);
    if (!c)
        return false;
    ufo_bb_client_set_timeout (c, 1000);
    bool ok = false;
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (!ok && ufo_time_mono_ms () < until) {
        ufo_value_t *st = ufo_bb_client_call (c, "dispatch.state", NULL, NULL, 0, NULL, NULL, &err);
        const ufo_value_t *ws = st ? ufo_value_map_get (st, "workers") : NULL;
        for (size_t i = 0; i < ufo_value_size (ws) && !ok; i++) {
            const ufo_value_t *w = ufo_value_list_at (ws, i);
            ok = strcmp (ufo_value_map_str (w, "service", ""), service) == 0
              && strcmp (ufo_value_map_str (w, "device", ""), device) == 0;
        }
        ufo_value_destroy (&st);
        if (!ok)
            usleep (50000);
    }
    ufo_bb_client_destroy (&c);
    return ok;
}

static pid_t hfx_run_pid;                 //  the running `ufo run`, for during () callbacks

static int
hfx_run (const char *const *args, const char *input, void (*during) (void))
{
    char bin [600], in [400];
    snprintf (bin, sizeof bin, "%s/cli/ufo", afx_build ());
    snprintf (hfx_.out, sizeof hfx_.out, "%s/run-%d.out", afx_.broker.dir, ++afx_.runs);
    snprintf (in, sizeof in, "%s/run-%d.in", afx_.broker.dir, afx_.runs);
    afx_write (in, input ? input : "");
    const char *argv [40];
    int n = 0;
    argv [n++] = bin;
    argv [n++] = "run";
    for (int i = 0; args [i] && n < 36; i++)
        argv [n++] = args [i];
    argv [n++] = "--broker";
    argv [n++] = afx_.broker.cmd;
    if (hfx_json)
        argv [n++] = "--json";
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        if (chdir (afx_.broker.dir) != 0)
            _exit (126);
        int fi = open (hfx_stdin ? hfx_stdin : in, O_RDONLY), fo = open (hfx_.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2 (fi, STDIN_FILENO);
        dup2 (fo, STDOUT_FILENO);
        setenv ("UFO_CONFIG", hfx_.cfg, 1);
        execv (bin, (char *const *) argv);
        _exit (127);
    }
    hfx_run_pid = pid;
    int status = 0, rc = -1;
    int64_t end = ufo_time_mono_ms () + HFX_RUN_MS;
    while (ufo_time_mono_ms () < end) {
        if (waitpid (pid, &status, WNOHANG) == pid) {
            rc = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
            break;
        }
        if (during)
            during ();
        ufo_desktop_iterate (afx_.desk, 20);
    }
    if (rc == -1) {
        fprintf (stderr, "ufo run timed out\n");
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
    }
    ufo_value_destroy (&hfx_.result);
    ufo_value_t *lines = afx_lines (hfx_.out);
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *e = ufo_value_list_at (lines, i);
        if (strcmp (ufo_value_map_str (e, "kind", ""), "result") == 0)
            hfx_.result = ufo_value_dup (ufo_value_map_get (e, "body"));
    }
    ufo_value_destroy (&lines);
    snprintf (hfx_.logdir, sizeof hfx_.logdir, "%s", ufo_value_map_str (hfx_.result, "logdir", ""));
    char path [700];
    snprintf (path, sizeof path, "%s/request.json", hfx_.logdir);
    ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
    snprintf (hfx_.session, sizeof hfx_.session, "%s", ufo_value_map_str (req, "session", ""));
    ufo_value_destroy (&req);
    if ((!hfx_.result && (hfx_json || rc < 0)) || getenv ("HOST_TEST_VERBOSE")) {
        char *text = afx_read (hfx_.out);
        fprintf (stderr, "ufo run (exit %d) printed:\n%s\n", rc, text ? text : "");
        free (text);
        snprintf (path, sizeof path, "%s/host.log", afx_.broker.dir);
        text = afx_read (path);
        fprintf (stderr, "ufo-host log:\n%s\n", text ? text : "");
        free (text);
        text = afx_read (afx_.llm_log);
        fprintf (stderr, "LLM server log:\n%s\n", text ? text : "");
        free (text);
        for (int k = 0; k < 2; k++) {
            snprintf (path, sizeof path, "%s/app-%d.log", afx_.broker.dir, k);
            text = afx_read (path);
            if (text)
                fprintf (stderr, "ufo-app %d log:\n%s\n", k, text);
            free (text);
        }
    }
    return rc;
}

static inline ufo_value_t *
hfx_log (const char *name)
{
    char path [700];
    snprintf (path, sizeof path, "%s/%s", hfx_.logdir, name);
    return afx_lines (path);
}

static inline ufo_value_t *
hfx_board (void)
{
    ufo_value_t *snap = ufo_bb_client_snapshot (afx_.bb, hfx_.session, NULL, 0, NULL);
    ufo_value_t *board = ufo_value_dup (ufo_value_map_get (snap, "board"));
    ufo_value_destroy (&snap);
    return board;
}

static inline int64_t
hfx_mousepad_xid (void)
{
    ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
    int64_t xid = 0;
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (strcmp (ufo_value_map_str (ufo_value_list_at (wins, i), "name", ""), "mousepad") == 0)
            xid = ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0);
    ufo_value_destroy (&wins);
    return xid;
}

//  Server log lines of an agent.
static ufo_value_t *
hfx_llm_lines (const char *agent)
{
    ufo_value_t *all = afx_lines (afx_.llm_log), *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (all); i++)
        if (strcmp (ufo_value_map_str (ufo_value_list_at (all, i), "agent", ""), agent) == 0)
            ufo_value_list_push (out, &(ufo_value_t *) { ufo_value_dup (ufo_value_list_at (all, i)) });
    ufo_value_destroy (&all);
    return out;
}

//  A host test program's start: leak reports of fontconfig's process-lifetime caches are
//  suppressed in sanitizer builds, then the AppAgent fixture (desktop, broker) is set up.
//  Returns 0, or -1 (said on stderr, torn down) when there is no desktop or broker.
static inline int
hfx_setup (const char *name)
{
    char supp [600];
    snprintf (supp, sizeof supp, "suppressions=%s/data/host_agent/lsan.supp", getenv ("UFO_TEST_DATA"));
    if (getenv ("UFO_TEST_DATA") && !getenv ("LSAN_OPTIONS"))
        setenv ("LSAN_OPTIONS", supp, 1);
    if (afx_setup (name) != 0) {
        fprintf (stderr, "no desktop / broker\n");
        afx_teardown ();
        return -1;
    }
    return 0;
}

#endif
