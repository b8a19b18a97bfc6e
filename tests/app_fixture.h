/*  app_fixture.h - helpers for the AppAgent system tests: a private desktop with mousepad,
    the scripted LLM server with a script from tests/data/app_agent/, a real ufo-broker,
    a configuration file, and ufo-app runs as child processes (bounded, output captured).
    Header-only, for test programs. */
#ifndef APP_FIXTURE_H_INCLUDED
#define APP_FIXTURE_H_INCLUDED

#include "ufo_bb_client.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "bb_test_util.h"
#include "desktop_fixture.h"
#include "ufo_test.h"
#include "llm_server_fixture.h"

#define AFX_WAIT_MS 60000

//  Runs a case unless AFX_ONLY names another one (for debugging a single case).
#define AFX_RUN(name) do { \
    const char *only_ = getenv ("AFX_ONLY"); \
    if (!only_ || strstr (#name, only_)) UFO_RUN (name); \
} while (0)       //  generous: 2 shared cores under load

typedef struct {
    bb_test_broker_t broker;    //  its dir is the test's temporary directory
    ufo_bb_client_t *bb;
    ufo_desktop_t *desk;
    pid_t llm;
    int port;
    char llm_log [400];
    int runs;
} afx_t;

static afx_t afx_;

static inline const char *
afx_build (void)
{
    const char *b = getenv ("UFO_BUILD_DIR");
    return b ? b : ".";
}

static inline char *
afx_read (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    ufo_buf_t b;
    ufo_buf_init (&b);
    char chunk [8192];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
        ufo_buf_append (&b, chunk, n);
    fclose (f);
    ufo_buf_putc (&b, '\0');
    return ufo_buf_detach (&b, NULL);
}

static inline void
afx_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (f) {
        fputs (text, f);
        fclose (f);
    }
}

//  The JSON lines of a file as a list (bad lines skipped). Caller owns.
static inline ufo_value_t *
afx_lines (const char *path)
{
    ufo_value_t *list = ufo_value_new_list ();
    char *text = afx_read (path);
    for (char *line = text ? strtok (text, "\n") : NULL; line; line = strtok (NULL, "\n")) {
        ufo_value_t *v = ufo_json_parse_str (line, NULL);
        if (v)
            ufo_value_list_push (list, &v);
    }
    free (text);
    return list;
}

//  Starts the desktop session, the broker and a desktop handle. Returns 0 or -1.
static inline int
afx_setup (const char *name)
{
    memset (&afx_, 0, sizeof afx_);
    afx_.llm = -1;
    if (dfx_session_start () < 0)
        return -1;
    bb_test_init (&afx_.broker, name);
    bb_test_start (&afx_.broker, NULL);
    afx_.bb = ufo_bb_client_new (afx_.broker.cmd, NULL, NULL);
    if (!afx_.bb)
        return -1;
    ufo_bb_client_set_timeout (afx_.bb, 5000);
    //  wait (bounded) for the broker to answer
    bool up = false;
    for (int i = 0; i < 100 && !up; i++) {
        ufo_value_t *r = ufo_bb_client_snapshot (afx_.bb, "ping", NULL, 0, NULL);
        up = r != NULL;
        ufo_value_destroy (&r);
        if (!up)
            usleep (100000);
    }
    if (!up)
        return -1;
    ufo_value_t *opts = ufo_json_parse_str (
        "{\"launchers\": {\"mousepad\": [\"mousepad\"]}, \"action_timeout_ms\": 8000}", NULL);
    ufo_error_t err;
    afx_.desk = ufo_desktop_new (opts, &err);
    ufo_value_destroy (&opts);
    if (!afx_.desk) {
        fprintf (stderr, "desktop: %s\n", err.message);
        return -1;
    }
    return 0;
}

static inline void
afx_llm_stop (void)
{
    llmfx_stop (&afx_.llm);
    afx_.port = 0;
}

static inline void
afx_teardown (void)
{
    afx_llm_stop ();
    ufo_desktop_destroy (&afx_.desk);
    ufo_bb_client_destroy (&afx_.bb);
    bb_test_cleanup (&afx_.broker);
    dfx_session_stop ();
}

//  Starts the scripted LLM server with tests/data/app_agent/<script>. Returns 0 or -1.
static inline int
afx_llm_start (const char *script)
{
    afx_llm_stop ();
    static int starts = 0;
    starts++;
    char path [600], port_file [400];
    snprintf (path, sizeof path, "%s/data/app_agent/%s", getenv ("UFO_TEST_DATA"), script);
    snprintf (port_file, sizeof port_file, "%s/llm-port-%d", afx_.broker.dir, starts);
    snprintf (afx_.llm_log, sizeof afx_.llm_log, "%s/llm-%d.jsonl", afx_.broker.dir, starts);
    unlink (afx_.llm_log);
    int port = llmfx_start (path, port_file, afx_.llm_log, 500, &afx_.llm);
    afx_.port = port > 0 ? port : 0;
    return afx_.port ? 0 : -1;
}

//  Requests the LLM server has logged so far.
static inline size_t
afx_llm_requests (void)
{
    ufo_value_t *l = afx_lines (afx_.llm_log);
    size_t n = ufo_value_size (l);
    ufo_value_destroy (&l);
    return n;
}

//  Writes a configuration for ufo-app (extra: more top-level JSON members, or "").
//  Returns the path (static buffer).
static inline const char *
afx_config_ex (bool visual, const char *desktop_extra, const char *extra)
{
    static char path [400];
    snprintf (path, sizeof path, "%s/config-%d.json", afx_.broker.dir, afx_.runs);
    char text [4096];
    snprintf (text, sizeof text,
        "{\"APP_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": \"http://127.0.0.1:%d/v1\","
        " \"API_KEY\": \"sk-afx-secret-0123456789\", \"API_MODEL\": \"scripted\", \"VISUAL_MODE\": %s},"
        " %s\"ASK_QUESTION\": true, \"MAX_RETRY\": 1, \"TIMEOUT\": 30,"
        " \"JSON_PARSING_RETRY\": 2, \"log\": {\"level\": \"info\"},"
        " \"desktop\": {\"action_timeout_ms\": 8000, \"launchers\": {\"mousepad\": [\"mousepad\"]}%s%s}%s%s}",
        afx_.port, visual ? "true" : "false",
        extra && strstr (extra, "SLEEP_TIME") ? "" : "\"SLEEP_TIME\": 0, ",
        desktop_extra && *desktop_extra ? ", " : "", desktop_extra ? desktop_extra : "",
        extra && *extra ? ", " : "", extra ? extra : "");
    afx_write (path, text);
    return path;
}

static inline const char *
afx_config (const char *extra)
{
    return afx_config_ex (false, "", extra);
}

//  Launches mousepad and waits for its document control. *label_p gets the label of the
//  text control (static buffer). Returns the xid, or 0.
static inline int64_t
afx_mousepad (int *pid_p, const char **label_p)
{
    static char label [16];
    int pid = ufo_desktop_launch (afx_.desk, "mousepad", NULL);
    if (pid < 0)
        return 0;
    *pid_p = pid;
    ufo_desktop_cache_clear (afx_.desk);
    int64_t xid = dfx_wait_window (afx_.desk, pid, "Mousepad", AFX_WAIT_MS);
    if (!xid)
        return 0;
    ufo_value_t *snap = dfx_wait_control (afx_.desk, xid, "Edit", NULL, AFX_WAIT_MS);
    const char *l = snap ? dfx_find (snap, "Edit", NULL) : NULL;
    snprintf (label, sizeof label, "%s", l ? l : "");
    ufo_value_destroy (&snap);
    *label_p = label;
    return l ? xid : 0;
}

//  The start of most AppAgent tests: mousepad launched (afx_mousepad; *label_p, when not
//  NULL, gets its text control's label) and the scripted LLM server started with
//  tests/data/app_agent/<script>. Returns mousepad's xid, or 0 when either did not start.
static inline int64_t
afx_mousepad_scripted (const char *script, int *pid_p, const char **label_p)
{
    const char *label = NULL;
    int64_t xid = afx_mousepad (pid_p, &label);
    if (label_p)
        *label_p = label;
    return xid && afx_llm_start (script) == 0 ? xid : 0;
}

//  Kills mousepad (no save dialog) and waits (bounded) for its window to go.
static inline void
afx_mousepad_kill (int pid, int64_t xid)
{
    if (pid <= 0)
        return;
    kill (pid, SIGKILL);
    int64_t end = ufo_time_mono_ms () + 20000;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
        bool alive = false;
        for (size_t i = 0; i < ufo_value_size (wins); i++)
            alive |= ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid;
        ufo_value_destroy (&wins);
        if (!alive)
            break;
        ufo_desktop_iterate (afx_.desk, 50);
    }
}

//  The text of a control read through AT-SPI by the test itself (caller frees; NULL on
//  failure). A fresh snapshot first, so the labels are current.
static inline char *
afx_text (int64_t xid)
{
    //  A desktop of its own per read: the shared handle's cache keeps nodes of killed
    //  applications whose X window ids were reused (reported to the desktop area).
    ufo_value_t *opts = ufo_json_parse_str ("{\"action_timeout_ms\": 8000}", NULL);
    ufo_desktop_t *desk = ufo_desktop_new (opts, NULL);
    ufo_value_destroy (&opts);
    if (!desk)
        return NULL;
    ufo_value_t *snap = dfx_wait_control (desk, xid, "Edit", NULL, AFX_WAIT_MS);
    const char *label = snap ? dfx_find (snap, "Edit", NULL) : NULL;
    char *text = NULL;
    if (label) {
        ufo_value_t *r = dfx_act (desk, xid, label, "texts", NULL);
        if (ufo_value_map_bool (r, "success", false))
            text = strdup (ufo_value_map_str (r, "text", ""));
        else
            fprintf (stderr, "afx_text: texts failed: %s\n", ufo_value_map_str (r, "error", "?"));
        ufo_value_destroy (&r);
    }
    else
        fprintf (stderr, "afx_text: no Edit control in window %" PRId64 "\n", xid);
    ufo_value_destroy (&snap);
    ufo_desktop_destroy (&desk);
    return text;
}

//  Writes a subtask file. body_extra: more members of the body (JSON text, may be "").
//  file_extra: more members of the file ("answers", "attempt"). Returns the path (static).
static inline const char *
afx_subtask (const char *session, const char *subtask, int64_t xid, const char *body_extra,
             const char *file_extra)
{
    static char path [400];
    snprintf (path, sizeof path, "%s/subtask-%d.json", afx_.broker.dir, afx_.runs);
    char text [8192];
    snprintf (text, sizeof text,
        "{\"body\": {\"session\": \"%s\", \"task\": \"%s\", \"log_root\": \"%s/logs\","
        " \"round\": 0, \"subtask_index\": 0, \"subtask\": \"%s\", \"request\": \"Write a note in Mousepad\","
        " \"tips\": [\"Use the text area\"], \"previous_subtasks\": [], \"application\": \"mousepad\","
        " \"window\": {\"title\": \"\", \"pid\": 0, \"xid\": %" PRId64 "}, \"step_base\": 0,"
        " \"max_steps\": 10, \"interactive\": false, \"auto_confirm\": false%s%s}%s%s}",
        session, session, afx_.broker.dir, subtask, xid,
        body_extra && *body_extra ? ", " : "", body_extra ? body_extra : "",
        file_extra && *file_extra ? ", " : "", file_extra ? file_extra : "");
    afx_write (path, text);
    return path;
}

//  Runs ufo-app with args (NULL-terminated, after the binary) for at most timeout_ms.
//  stdout lines are returned in *lines_p (caller owns). Returns the exit status, 128+sig
//  when killed, -1 on timeout.
static inline int
afx_run_app (const char *const *args, int timeout_ms, ufo_value_t **lines_p)
{
    afx_.runs++;
    char out [400], errlog [400], bin [600];
    snprintf (out, sizeof out, "%s/app-out-%d.jsonl", afx_.broker.dir, afx_.runs);
    snprintf (errlog, sizeof errlog, "%s/app-err-%d.log", afx_.broker.dir, afx_.runs);
    snprintf (bin, sizeof bin, "%s/app_agent/ufo-app", afx_build ());
    const char *argv [40];
    int n = 0;
    argv [n++] = bin;
    for (int i = 0; args [i] && n < 38; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        int fo = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open (errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2 (fo, STDOUT_FILENO);
        dup2 (fe, STDERR_FILENO);
        execv (bin, (char *const *) argv);
        _exit (127);
    }
    int status = 0, rc = -1;
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < end) {
        if (waitpid (pid, &status, WNOHANG) == pid) {
            rc = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
            break;
        }
        ufo_desktop_iterate (afx_.desk, 20);
    }
    if (rc == -1) {
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
    }
    if (lines_p)
        *lines_p = afx_lines (out);
    if (rc != 0) {
        char *e = afx_read (errlog);
        fprintf (stderr, "ufo-app exit %d; its stderr:\n%s\n", rc, e ? e : "");
        free (e);
    }
    return rc;
}

//  Runs `ufo-app --subtask file --config config` against the fixture's broker, as
//  afx_run_app does (stdout lines into *lines_p). Returns the exit status.
static inline int
afx_run_subtask (const char *config, const char *file, int timeout_ms, ufo_value_t **lines_p)
{
    const char *args [] = { "--subtask", file, "--config", config, "--broker", afx_.broker.cmd, NULL };
    return afx_run_app (args, timeout_ms, lines_p);
}

//  The last line of kind "result": its body (borrowed from lines), or NULL.
static inline const ufo_value_t *
afx_result (const ufo_value_t *lines)
{
    const ufo_value_t *found = NULL;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        if (!strcmp (ufo_value_map_str (l, "kind", ""), "result"))
            found = ufo_value_map_get (l, "body");
    }
    return found;
}

//  Lines of a kind in the output.
static inline size_t
afx_count (const ufo_value_t *lines, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        n += !strcmp (ufo_value_map_str (ufo_value_list_at (lines, i), "kind", ""), kind);
    return n;
}

//  A log file of a session's task directory: path into out.
static inline const char *
afx_log_path (const char *task, const char *name, char *out, size_t size)
{
    snprintf (out, size, "%s/logs/%s/%s", afx_.broker.dir, task, name);
    return out;
}

//  The lines of a JSON-lines log file of a session's task directory (caller owns).
static inline ufo_value_t *
afx_log (const char *task, const char *name)
{
    char path [600];
    return afx_lines (afx_log_path (task, name, path, sizeof path));
}

//  Runs `ufo ARGS --broker <the fixture's broker>` (args: a shell-quoted argument string),
//  its output (stdout and stderr) into out[size]. Returns its exit status, -1 if it did not exit.
static inline int
afx_cli (const char *args, char *out, size_t size)
{
    char cmd [4096], path [500];
    snprintf (path, sizeof path, "%s/cli.out", afx_.broker.dir);
    snprintf (cmd, sizeof cmd, "'%s/cli/ufo' %s --broker '%s' > '%s' 2>&1", afx_build (), args,
              afx_.broker.cmd, path);
    int rc = system (cmd);
    char *text = afx_read (path);
    snprintf (out, size, "%s", text ? text : "");
    free (text);
    return WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

//  The board of a session from the broker (caller owns), {"questions": [...], ...}.
static inline ufo_value_t *
afx_board (const char *session)
{
    ufo_value_t *r = ufo_bb_client_snapshot (afx_.bb, session, NULL, 0, NULL);
    ufo_value_t *b = r ? ufo_value_dup (ufo_value_map_get (r, "board")) : NULL;
    ufo_value_destroy (&r);
    return b;
}

#endif
