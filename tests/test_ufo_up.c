/*  test_ufo_up.c - `ufo up` as a real process: it starts the broker, a HostAgent, AppAgent
    workers and the evaluator on a virtual desktop it starts itself (no DISPLAY), writes
    up.json, restarts a child that was killed, answers `ufo batch` (a folder of task files,
    scripted LLM server), and on SIGTERM stops every child and its desktop and removes up.json. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <sys/wait.h>
#include <dirent.h>
#include "ufo_test.h"
#include "ufo_wait.h"
#include "up_fixture.h"
#include "llm_server_fixture.h"

static char s_dir [256];

static int
s_run (const char *const *argv, const char *out, int timeout_ms)
{
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        execv (argv [0], (char *const *) argv);
        _exit (127);
    }
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    int status;
    while (ufo_time_mono_ms () < end) {
        if (waitpid (pid, &status, WNOHANG) == pid)
            return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
        usleep (50000);
    }
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return -1;
}

UFO_TEST (test_up_restart_batch_stop)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    const char *data = getenv ("UFO_TEST_DATA");
    REQUIRE (build && data);
    char ufo [400], out [400], cfg [400];
    snprintf (ufo, sizeof ufo, "%s/cli/ufo", build);
    //  the scripted model: every HostAgent step finishes, the evaluator says yes
    //  (each HostAgent reply takes 1.5 s, so two sessions submitted together overlap)
    pid_t llm = -1;
    REQUIRE (up_scripted_model (s_dir, "finish_slow.json", 300, &llm, cfg, sizeof cfg) > 0);
    char run_dir [300], data_dir [300];
    snprintf (run_dir, sizeof run_dir, "%s/run", s_dir);
    snprintf (data_dir, sizeof data_dir, "%s/data", s_dir);
    setenv ("UFO_RUN_DIR", run_dir, 1);
    unsetenv ("DISPLAY");                   //  ufo up starts its own virtual desktop

    snprintf (out, sizeof out, "%s/up.out", s_dir);
    pid_t up = fork ();
    if (up == 0) {
        int fd = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        execl (ufo, ufo, "up", "--config", cfg, "--data-dir", data_dir, "--apps", "mousepad", "--devices", "2",
               (char *) NULL);
        _exit (127);
    }
    ufo_value_t *state = NULL;
    for (int i = 0; i < 400 && !state; i++) {
        state = up_state (s_dir);
        if (!state)
            usleep (50000);
    }
    REQUIRE (state);
    CHECK_CONTAINS (ufo_value_map_str (state, "cmd_endpoint", ""), "ipc://");
    CHECK_CONTAINS (ufo_value_map_str (state, "cmd_endpoint", ""), run_dir);
    const char *desk = ufo_value_str (ufo_value_path (state, "devices.0.desktop_session"));
    CHECK (desk && *desk);                  //  a virtual desktop was started
    char desk_dir [400];
    snprintf (desk_dir, sizeof desk_dir, "%s", desk ? desk : "");
    int64_t host = up_child_pid (state, "host-d0");
    int64_t broker = up_child_pid (state, "broker");
    CHECK (up_alive (host));
    CHECK (up_alive (broker));
    CHECK (up_alive (up_child_pid (state, "app-d0-mousepad-1")));
    CHECK (up_alive (up_child_pid (state, "eval")));
    CHECK (up_alive (up_child_pid (state, "host-d1")));   //  the second device has its HostAgent
    CHECK (up_alive (up_child_pid (state, "app-d1-mousepad-1")));
    CHECK (up_alive (up_child_pid (state, "desktop-d0")));      //  each device's desktop service
    CHECK (up_alive (up_child_pid (state, "desktop-d1")));
    CHECK_INT (ufo_value_size (ufo_value_map_get (state, "devices")), 2);
    const char *desk2 = ufo_value_str (ufo_value_path (state, "devices.1.desktop_session"));
    char desk2_dir [400];
    snprintf (desk2_dir, sizeof desk2_dir, "%s", desk2 ? desk2 : "");
    ufo_value_destroy (&state);

    //  a crashed child is restarted
    kill ((pid_t) host, SIGKILL);
    int64_t again = 0;
    for (int i = 0; i < 200 && (again == 0 || again == host); i++) {
        usleep (50000);
        state = up_state (s_dir);
        again = up_child_pid (state, "host-d0");
        ufo_value_destroy (&state);
    }
    CHECK (again != host && up_alive (again));

    //  ufo batch finds the broker through up.json and runs two task files
    char tasks [400], path [500];
    snprintf (tasks, sizeof tasks, "%s/tasks", s_dir);
    mkdir (tasks, 0755);
    snprintf (path, sizeof path, "%s/a.json", tasks);
    FILE *f = fopen (path, "w");
    fputs ("{\"task\": \"batch-a\", \"request\": \"Nothing to do\"}", f);
    fclose (f);
    snprintf (path, sizeof path, "%s/b.json", tasks);
    f = fopen (path, "w");
    fputs ("{\"requests\": [\"Also nothing\"]}", f);
    fclose (f);
    snprintf (path, sizeof path, "%s/c.json", tasks);
    f = fopen (path, "w");
    fputs ("{\"task\": \"bad\"}", f);       //  no request: reported, not run
    fclose (f);
    char bout [400];
    snprintf (bout, sizeof bout, "%s/batch.out", s_dir);
    const char *bargs [] = { ufo, "batch", tasks, "--config", cfg, NULL };
    int rc = s_run (bargs, bout, 120000);
    char *text = up_read (bout);
    CHECK_INT (rc, 1);                      //  c.json was not run
    CHECK_CONTAINS (text, "batch-a");
    CHECK_CONTAINS (text, "\nb ");          //  named after its file
    CHECK_CONTAINS (text, "2 of 3 task(s) completed");
    CHECK_CONTAINS (text, "not run");
    if (rc != 1)
        fprintf (stderr, "%s\n", text ? text : "");
    free (text);
    snprintf (path, sizeof path, "%s/logs/batch-a/session.json", data_dir);
    CHECK (access (path, R_OK) == 0);       //  logs under ufo up's data directory
    //  the two sessions ran at the same time, one on each device
    char devices [2][16] = { "", "" };
    const char *names [] = { "batch-a", "b" };
    for (int i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/logs/%s/request.json", data_dir, names [i]);
        ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
        snprintf (devices [i], sizeof devices [i], "%s", ufo_value_map_str (req, "device", ""));
        CHECK_STR (ufo_value_map_str (req, "mode", ""), "batch_normal");
        ufo_value_destroy (&req);
    }
    CHECK (*devices [0] && *devices [1] && strcmp (devices [0], devices [1]) != 0);

    //  SIGTERM stops everything, desktop included
    state = up_state (s_dir);
    kill (up, SIGTERM);
    int status = 0;
    int64_t end = ufo_time_mono_ms () + 30000;
    bool exited = false;
    while (ufo_time_mono_ms () < end && !exited) {
        exited = waitpid (up, &status, WNOHANG) == up;
        if (!exited)
            usleep (50000);
    }
    CHECK (exited);
    CHECK (exited && WIFEXITED (status) && WEXITSTATUS (status) == 0);     //  (sanitizers: no leak)
    if (!exited) {
        kill (up, SIGKILL);
        waitpid (up, NULL, 0);
    }
    const ufo_value_t *kids = ufo_value_map_get (state, "children");
    for (size_t i = 0; i < ufo_value_size (kids); i++) {
        int64_t pid = ufo_value_map_int (ufo_value_list_at (kids, i), "pid", 0);
        if (up_alive (pid))
            UFO_FAIL_ ("child %s (pid %" PRId64 ") survived", ufo_value_map_str (ufo_value_list_at (kids, i), "name", ""), pid);
    }
    ufo_value_destroy (&state);
    CHECK (access (desk_dir, F_OK) != 0);   //  the desktop sessions are gone
    CHECK (access (desk2_dir, F_OK) != 0);
    state = up_state (s_dir);
    CHECK (state == NULL);                  //  up.json removed
    ufo_value_destroy (&state);
    llmfx_stop (&llm);
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-test-up.%d", (int) getpid ());
    mkdir (s_dir, 0700);
    UFO_RUN (test_up_restart_batch_stop);
    char cmd [300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
