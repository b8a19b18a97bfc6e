/*  test_ux_up.c - `ufo up` as a new user starts it: without --apps (the default "*": one
    AppAgent worker for any application) on a virtual desktop it starts itself, with the
    default launchers of the applications installed here. A session through it launches
    Mousepad with a launcher and has the any-application worker type the note (the worker-
    presence check and dispatch treat app:* as serving app:mousepad). Around it: an unknown
    application in --apps refused with the launchers known, `ufo status` showing the session
    and the workers by their full names (the device's desktop service among them), `ufo monitor` showing session-level lines (no
    plumbing), an unknown device and a used task name refused at once, and `ufo down`
    stopping everything `ufo up` started. Scripted LLM server (tests/data/host_agent/
    one_round.json: the replies pick the window and the control by what the prompt lists). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <sys/wait.h>
#include "ufo_test.h"
#include "ufo_wait.h"
#include "up_fixture.h"
#include "llm_server_fixture.h"

static char s_dir [256];
static char s_ufo [400];

static pid_t
s_spawn (const char *const *args, const char *out)
{
    const char *argv [32];
    int n = 0;
    argv [n++] = s_ufo;
    for (int i = 0; args [i] && n < 31; i++)
        argv [n++] = args [i];
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        if (chdir (s_dir) != 0)
            _exit (126);
        int fd = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644), in = open ("/dev/null", O_RDONLY);
        dup2 (in, STDIN_FILENO);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        execv (s_ufo, (char *const *) argv);
        _exit (127);
    }
    return pid;
}

//  Runs `ufo args...` to completion (bounded); returns its exit status and the time taken.
static int
s_run (const char *const *args, const char *out, int timeout_ms, int64_t *took_ms)
{
    int64_t t0 = ufo_time_mono_ms ();
    int rc = ufo_wait_exit (s_spawn (args, out), timeout_ms);
    if (took_ms)
        *took_ms = ufo_time_mono_ms () - t0;
    return rc;
}

UFO_TEST (test_up_without_apps_serves_any_application)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    const char *data = getenv ("UFO_TEST_DATA");
    REQUIRE (build && data);
    snprintf (s_ufo, sizeof s_ufo, "%s/cli/ufo", build);
    char cfg [400], out [400];
    pid_t llm = -1;
    REQUIRE (up_scripted_model (s_dir, "one_round.json", 400, &llm, cfg, sizeof cfg) > 0);
    char run_dir [300], data_dir [300];
    snprintf (run_dir, sizeof run_dir, "%s/run", s_dir);
    snprintf (data_dir, sizeof data_dir, "%s/data", s_dir);
    setenv ("UFO_RUN_DIR", run_dir, 1);
    setenv ("UFO_CONFIG", cfg, 1);
    unsetenv ("DISPLAY");                   //  ufo up starts its own virtual desktop
    unsetenv ("UFO_DESKTOP__LAUNCHERS");    //  the default launchers: what is installed here
    unsetenv ("NO_COLOR");

    //  an application without a launcher: refused before anything starts
    snprintf (out, sizeof out, "%s/up-bad.out", s_dir);
    int64_t took = 0;
    const char *bad [] = { "up", "--apps", "mousepad,nosuchapp", "--data-dir", data_dir, NULL };
    CHECK_INT (s_run (bad, out, 30000, &took), 2);
    CHECK (took < UFO_AT_ONCE_MS);
    char *text = up_read (out);
    CHECK_CONTAINS (text, "no launcher for \"nosuchapp\"; launchers known: mousepad");
    free (text);
    ufo_value_t *state = up_state (s_dir);
    CHECK (state == NULL);
    ufo_value_destroy (&state);

    //  no --apps
    char up_out [400];
    snprintf (up_out, sizeof up_out, "%s/up.out", s_dir);
    const char *up_args [] = { "up", "--data-dir", data_dir, NULL };
    pid_t up = s_spawn (up_args, up_out);
    for (int i = 0; i < 400 && !state; i++) {
        state = up_state (s_dir);
        if (!state)
            usleep (50000);
    }
    REQUIRE (state);
    int64_t any = up_child_pid (state, "app-d0-any-1");
    CHECK (up_alive (any));
    ufo_value_destroy (&state);
    //  the workers, by their full names, once they have registered
    snprintf (out, sizeof out, "%s/status.out", s_dir);
    const char *status [] = { "status", NULL };
    text = NULL;
    for (int i = 0; i < 300; i++) {
        free (text);
        s_run (status, out, 10000, NULL);
        text = up_read (out);
        if (text && strstr (text, "app:* (any)") && strstr (text, "\n  host ") && strstr (text, "\n  eval ")
        &&  strstr (text, "\n  desktop "))
            break;
        usleep (100000);
    }
    CHECK_CONTAINS (text, "app:* (any)");
    CHECK_CONTAINS (text, "app:*@");               //  the worker's full name (service@host:pid), not cut
    CHECK_CONTAINS (text, "\n  desktop ");          //  the device's desktop service ...
    CHECK_CONTAINS (text, " d0 ");
    CHECK_CONTAINS (text, "  desktop@");            //  ... by its own name (ufo-app --desktop-service)
    free (text);
    //  a monitor for people during the session
    char mon_out [400];
    snprintf (mon_out, sizeof mon_out, "%s/monitor.out", s_dir);
    const char *mon_args [] = { "monitor", "--timeout", "200", NULL };
    pid_t monitor = s_spawn (mon_args, mon_out);
    for (int i = 0; i < 100; i++) {
        text = up_read (mon_out);
        bool joined = text && strstr (text, "joined");
        free (text);
        if (joined)
            break;
        usleep (100000);
    }
    //  the session: the HostAgent launches Mousepad through its launcher, the any-application
    //  worker types the note
    char run_out [400];
    snprintf (run_out, sizeof run_out, "%s/run.out", s_dir);
    const char *run [] = { "run", "Write 'Hello from the HostAgent' in a new Mousepad note", "--task", "any-app",
                           "--yes", "--json", NULL };
    int rc = s_run (run, run_out, 180000, NULL);
    CHECK_INT (rc, 0);
    text = up_read (run_out);
    ufo_value_t *result = NULL;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr (line, '\n');
        if (next)
            *next++ = 0;
        ufo_value_t *e = ufo_json_parse_str (line, NULL);
        if (strcmp (ufo_value_map_str (e, "kind", ""), "result") == 0) {
            ufo_value_destroy (&result);
            result = ufo_value_dup (ufo_value_map_get (e, "body"));
        }
        ufo_value_destroy (&e);
    }
    if (rc != 0) {
        char *log = up_read (up_out);
        fprintf (stderr, "ufo up:\n%s\n", log ? log : "");
        free (log);
    }
    free (text);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_str (ufo_value_path (result, "evaluation.complete")), "yes");
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 5);     //  3 HostAgent + 2 AppAgent
    ufo_value_destroy (&result);
    char path [600];
    snprintf (path, sizeof path, "%s/logs/any-app/response.log", data_dir);
    text = up_read (path);
    CHECK_CONTAINS (text, "\"AgentName\":\"AppAgent/mousepad\"");
    CHECK (!strstr (text, "no AppAgent serves"));
    free (text);
    //  typos and reuse fail at once
    const char *device [] = { "run", "hello", "--device", "d9", NULL };
    CHECK_INT (s_run (device, out, 30000, &took), 1);
    CHECK (took < UFO_AT_ONCE_MS);
    text = up_read (out);
    CHECK_CONTAINS (text, "no HostAgent serves device \"d9\"; known devices: d0");
    free (text);
    const char *again [] = { "run", "hello", "--task", "any-app", NULL };
    CHECK_INT (s_run (again, out, 30000, &took), 1);
    CHECK (took < UFO_AT_ONCE_MS);
    text = up_read (out);
    CHECK_CONTAINS (text, "is already used");
    free (text);
    //  the monitor showed the session for people: its name, steps, the end; no plumbing
    kill (monitor, SIGINT);
    ufo_wait_exit (monitor, 10000);
    text = up_read (mon_out);
    CHECK_CONTAINS (text, "any-app  submitted");
    CHECK_CONTAINS (text, "any-app  r0 s0 ");
    CHECK_CONTAINS (text, "AppAgent/mousepad");
    CHECK_CONTAINS (text, "any-app  ended FINISH, evaluation: complete yes");
    CHECK (!strstr (text, "task.progress"));
    CHECK (!strstr (text, "broker.stats"));
    free (text);
    //  ufo down stops what ufo up started
    state = up_state (s_dir);
    snprintf (out, sizeof out, "%s/down.out", s_dir);
    const char *down [] = { "down", NULL };
    CHECK_INT (s_run (down, out, 60000, NULL), 0);
    CHECK_INT (ufo_wait_exit (up, 30000), 0);
    const ufo_value_t *kids = ufo_value_map_get (state, "children");
    for (size_t i = 0; i < ufo_value_size (kids); i++) {
        int64_t pid = ufo_value_map_int (ufo_value_list_at (kids, i), "pid", 0);
        if (up_alive (pid))
            UFO_FAIL_ ("child %s (pid %" PRId64 ") survived ufo down",
                       ufo_value_map_str (ufo_value_list_at (kids, i), "name", ""), pid);
    }
    ufo_value_destroy (&state);
    state = up_state (s_dir);
    CHECK (state == NULL);
    ufo_value_destroy (&state);
    CHECK_INT (s_run (down, out, 30000, NULL), 0);      //  nothing left: says so, exit 0
    text = up_read (out);
    CHECK_CONTAINS (text, "nothing to stop");
    free (text);
    llmfx_stop (&llm);
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-test-ux-up.%d", (int) getpid ());
    mkdir (s_dir, 0700);
    UFO_RUN (test_up_without_apps_serves_any_application);
    char cmd [300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
