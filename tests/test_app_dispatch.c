/*  test_app_dispatch.c - ufo-app as a dispatched worker of app:mousepad: subtasks submitted
    through a real ufo-broker with common/bus/ufo_tasks.h, progress and the result coming back,
    a question answered through the submitter's input, and an AppAgent SIGKILLed mid-subtask:
    the subtask is re-delivered to a second ufo-app, which resumes after the steps already
    recorded on the blackboard instead of repeating them. Through a proxy that holds the
    broker's blackboard replies (tests/tools/ufo_test_proxy.c): the AppAgent opens one
    connection, keeps heartbeating while its board read waits (the broker does not requeue
    its subtask), and acts on a cancel sent meanwhile; board writes the broker refuses are
    logged and reported in the subtask's result. Also: the device's desktop-service process
    (`ufo-app --desktop-service`) answers its desktop queries while a subtask waits for the
    model, over one connection (counted by the proxy); a screenshot whose blob the broker
    refuses fails with the reason and the service serves on. */
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

static pid_t s_apps [2];
static pid_t s_desk;                //  the desktop-service process

static bool s_exit_after_finish;     //  the next s_start_app sets UFO_APP_TEST_EXIT_AFTER_FINISH=1

static pid_t
s_start_app_at (const char *config, int k, const char *broker)
{
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/app_agent/ufo-app", afx_build ());
    static int starts = 0;
    snprintf (log, sizeof log, "%s/worker-%d-%d.log", afx_.broker.dir, ++starts, k);
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        if (s_exit_after_finish)
            setenv ("UFO_APP_TEST_EXIT_AFTER_FINISH", "1", 1);
        else
            unsetenv ("UFO_APP_TEST_EXIT_AFTER_FINISH");
        execl (bin, bin, "--app", "mousepad", "--device", "t0", "--config", config,
               "--broker", broker, (char *) NULL);
        _exit (127);
    }
    return pid;
}

//  The device's desktop-service process (`ufo-app --desktop-service`) through broker.
static pid_t
s_start_desktop_svc (const char *config, const char *broker)
{
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/app_agent/ufo-app", afx_build ());
    snprintf (log, sizeof log, "%s/desktop-svc.log", afx_.broker.dir);
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2 (fd, STDOUT_FILENO);
        dup2 (fd, STDERR_FILENO);
        execl (bin, bin, "--desktop-service", "--device", "t0", "--config", config, "--broker", broker, (char *) NULL);
        _exit (127);
    }
    return pid;
}

static pid_t
s_start_app (const char *config, int k)
{
    return s_start_app_at (config, k, afx_.broker.cmd);
}

static void
s_stop_app (pid_t *pid)
{
    if (*pid <= 0)
        return;
    kill (*pid, SIGTERM);
    ufo_wait_exit (*pid, 10000);            //  (killed at the deadline)
    *pid = 0;
}

static const char *
s_config (void)
{
    return afx_config ("\"dispatch\": {\"heartbeat_ivl_ms\": 200, \"heartbeat_liveness\": 5}");
}

//  The body of a subtask file written by afx_subtask (caller owns).
static ufo_value_t *
s_body (const char *file)
{
    ufo_value_t *f = ufo_json_parse_file (file, NULL, NULL);
    ufo_value_t *b = ufo_value_dup (ufo_value_map_get (f, "body"));
    ufo_value_destroy (&f);
    return b;
}

static int
s_submit (ufo_tasks_t *tasks, ufo_value_t **body_p, char id [33])
{
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "app:mousepad");
    ufo_value_map_set_str (spec, "device", "t0");
    ufo_value_map_set_int (spec, "max_attempts", 3);
    ufo_value_map_set (spec, "body", body_p);
    ufo_error_t err;
    int rc = ufo_tasks_submit (tasks, &spec, id, &err);
    if (rc < 0)
        fprintf (stderr, "submit: %s\n", err.message);
    return rc;
}

//  Events of the task until its result (bounded). on_progress may send inputs.
//  Returns the result event (caller owns) or NULL.
static ufo_value_t *
s_follow (ufo_tasks_t *tasks, const char *id, void (*on_progress) (ufo_tasks_t *, const char *,
                                                                   const ufo_value_t *),
          int *steps_p)
{
    int64_t end = ufo_time_mono_ms () + RUN_MS;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (!ev)
            continue;
        const char *kind = ufo_value_map_str (ev, "kind", "");
        if (!strcmp (ufo_value_map_str (ev, "task", ""), id)) {
            if (!strcmp (kind, "result"))
                return ev;
            if (!strcmp (kind, "progress")) {
                const ufo_value_t *body = ufo_value_map_get (ev, "body");
                if (steps_p && !strcmp (ufo_value_map_str (body, "kind", ""), "step"))
                    (*steps_p)++;
                if (on_progress)
                    on_progress (tasks, id, body);
            }
        }
        ufo_value_destroy (&ev);
    }
    return NULL;
}

UFO_TEST (test_dispatched_subtask)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("type_text.json") == 0);
    const char *config = s_config ();
    s_apps [0] = s_start_app (config, 0);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-type", "Type 'Hello from ufo-app'", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    int steps = 0;
    ufo_value_t *result = s_follow (tasks, id, NULL, &steps);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "done");
    const ufo_value_t *rb = ufo_value_map_get (result, "body");
    CHECK_STR (ufo_value_map_str (rb, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (rb, "steps", -1), 3);
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (rb, "results"), 0)),
               "Hello from ufo-app");
    CHECK_INT (steps, 3);
    ufo_value_destroy (&result);
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello from ufo-app");
    free (text);
    //  a body the agent cannot use fails the task with the reason; the worker goes on
    ufo_value_t *bad = ufo_json_parse_str ("{\"session\": 7}", NULL);
    REQUIRE (s_submit (tasks, &bad, id) == 0);
    result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_map_get (result, "body"), "error", ""), "session");
    ufo_value_destroy (&result);
    //  a session's own model the agent cannot use (a key on the bus; a key variable it lacks):
    //  the task fails with the reason, no model is asked, the key is not echoed
    unsetenv ("UFO_TEST_NO_SUCH_KEY");
    static const char *const models [][2] = {
        { "{\"model\": \"m2\", \"api_key\": \"sk-leak-0000\"}", "API keys never travel" },
        { "{\"model\": \"m2\", \"api_key_env\": \"UFO_TEST_NO_SUCH_KEY\"}",
          "APP_AGENT: the model override's key variable UFO_TEST_NO_SUCH_KEY is not set" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (models); i++) {
        body = s_body (afx_subtask ("d-model", "Type 'never typed'", xid, "", ""));
        ufo_value_map_set (body, "model", &(ufo_value_t *) { ufo_json_parse_str (models [i][0], NULL) });
        REQUIRE (s_submit (tasks, &body, id) == 0);
        steps = 0;
        result = s_follow (tasks, id, NULL, &steps);
        REQUIRE (result);
        CHECK_STR (ufo_value_map_str (result, "status", ""), "failed");
        const char *error = ufo_value_map_str (ufo_value_map_get (result, "body"), "error", "");
        CHECK_CONTAINS (error, models [i][1]);
        CHECK (!strstr (error, "sk-leak"));
        CHECK_INT (steps, 0);
        ufo_value_destroy (&result);
    }
    text = afx_text (xid);
    CHECK_STR (text, "Hello from ufo-app");
    free (text);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [0]);
    afx_mousepad_kill (pid, xid);
}

static void
s_answer (ufo_tasks_t *tasks, const char *id, const ufo_value_t *progress)
{
    if (strcmp (ufo_value_map_str (progress, "kind", ""), "question"))
        return;
    //  inputs that answer nothing are ignored: the agent keeps waiting for the right one
    static const char *const junk [] = {
        "42", "{\"qid\": \"not-this-one\", \"answers\": [\"x\"]}", "{\"answers\": [\"x\"]}",
        "{\"qid\": \"%s\", \"answers\": \"not a list\"}", "{\"qid\": \"%s\", \"confirm\": true}"
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (junk); i++) {
        char text [256];
        snprintf (text, sizeof text, junk [i], ufo_value_map_str (progress, "qid", ""));
        ufo_value_t *bad = ufo_json_parse_str (text, NULL);
        ufo_tasks_input (tasks, id, &bad);
    }
    ufo_value_t *input = ufo_value_new_map ();
    ufo_value_map_set_str (input, "qid", ufo_value_map_str (progress, "qid", ""));
    ufo_value_t *answers = ufo_value_new_list ();
    ufo_value_list_push_str (answers, "words: over the bus");
    ufo_value_map_set (input, "answers", &answers);
    ufo_tasks_input (tasks, id, &input);
}

UFO_TEST (test_dispatched_question)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("pending.json") == 0);
    const char *config = s_config ();
    s_apps [0] = s_start_app (config, 0);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-question", "Type what the user wants", xid,
                                             "\"interactive\": true", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    ufo_value_t *result = s_follow (tasks, id, s_answer, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (result, "body"), "status", ""), "FINISH");
    ufo_value_destroy (&result);
    char *text = afx_text (xid);
    CHECK_STR (text, "over the bus");
    free (text);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [0]);
    afx_mousepad_kill (pid, xid);
}

//  Trajectories of a session on the board.
static size_t
s_trajectories (const char *session)
{
    ufo_value_t *board = afx_board (session);
    size_t n = ufo_value_size (ufo_value_map_get (board, "trajectories"));
    ufo_value_destroy (&board);
    return n;
}

UFO_TEST (test_killed_worker_resumes)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("resume_kill.json") == 0);
    const char *config = s_config ();
    s_apps [0] = s_start_app (config, 0);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-kill", "Type 'Hello resume'", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    //  the first step is recorded; the second is waiting for the (slow) model: kill it
    int64_t end = ufo_time_mono_ms () + RUN_MS;
    while (s_trajectories ("d-kill") < 1 && ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        ufo_value_destroy (&ev);
    }
    REQUIRE (s_trajectories ("d-kill") == 1);
    kill (s_apps [0], SIGKILL);
    waitpid (s_apps [0], NULL, 0);
    s_apps [0] = 0;
    s_apps [1] = s_start_app (config, 1);
    ufo_value_t *result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "done");
    CHECK (ufo_value_map_int (result, "attempts", 0) >= 2);
    const ufo_value_t *rb = ufo_value_map_get (result, "body");
    CHECK_STR (ufo_value_map_str (rb, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (rb, "resumed_steps", -1), 1);
    CHECK_INT (ufo_value_map_int (rb, "steps", -1), 2);
    ufo_value_destroy (&result);
    //  step 0 was not repeated: one set_edit_text request, the second worker's step is Step 1
    char path [600];
    ufo_value_t *resp = afx_lines (afx_log_path ("d-kill", "response.log", path, sizeof path));
    CHECK_INT (ufo_value_size (resp), 2);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (resp, 1), "Step", -1), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Status", ""), "FINISH");
    ufo_value_destroy (&resp);
    CHECK_INT (s_trajectories ("d-kill"), 2);
    ufo_value_t *reqs = afx_lines (afx_.llm_log);
    int typing = 0;
    for (size_t i = 0; i < ufo_value_size (reqs); i++)
        typing += ufo_value_map_int (ufo_value_list_at (reqs, i), "entry", -1) == 0;
    CHECK_INT (typing, 1);
    ufo_value_destroy (&reqs);
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello resume");
    free (text);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [1]);
    afx_mousepad_kill (pid, xid);
}

//  The worker dies after recording its FINISH step, before the result is sent
//  (UFO_APP_TEST_EXIT_AFTER_FINISH): the second worker completes the subtask from the
//  board and the log, with the recorded status and results, without asking the model.
UFO_TEST (test_finished_worker_resumes_without_model)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("finish_exit.json") == 0);
    const char *config = s_config ();
    s_exit_after_finish = true;
    s_apps [0] = s_start_app (config, 0);
    s_exit_after_finish = false;
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-fin", "Report what the note says", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    //  the worker records its FINISH step and exits with status 9
    int status = 0;
    int64_t end = ufo_time_mono_ms () + RUN_MS;
    pid_t got = 0;
    while ((got = waitpid (s_apps [0], &status, WNOHANG)) == 0 && ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        ufo_value_destroy (&ev);
    }
    REQUIRE (got == s_apps [0]);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 9);
    s_apps [0] = 0;
    CHECK_INT (s_trajectories ("d-fin"), 1);
    s_apps [1] = s_start_app (config, 1);
    ufo_value_t *result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "done");
    CHECK (ufo_value_map_int (result, "attempts", 0) >= 2);
    const ufo_value_t *rb = ufo_value_map_get (result, "body");
    CHECK_STR (ufo_value_map_str (rb, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (rb, "resumed_steps", -1), 1);
    CHECK_INT (ufo_value_map_int (rb, "steps", -1), 1);
    CHECK_INT (ufo_value_size (ufo_value_map_get (rb, "results")), 1);
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (rb, "results"), 0)), "The note says 42");
    CHECK_STR (ufo_value_map_str (rb, "comment", ""), "Reported the note.");
    ufo_value_destroy (&result);
    //  the model was asked once (by the first worker), and no step was added
    ufo_value_t *reqs = afx_lines (afx_.llm_log);
    CHECK_INT (ufo_value_size (reqs), 1);
    ufo_value_destroy (&reqs);
    char path [600];
    ufo_value_t *resp = afx_lines (afx_log_path ("d-fin", "response.log", path, sizeof path));
    CHECK_INT (ufo_value_size (resp), 1);
    ufo_value_destroy (&resp);
    CHECK_INT (s_trajectories ("d-fin"), 1);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [1]);
    afx_mousepad_kill (pid, xid);
}

//  The proxy's figures (tests/tools/ufo_test_proxy.c): connections open, replies held now,
//  replies released after being held. False when the stats file is not there yet.
static bool
s_proxy_stats (const char *path, int *connections, int *held, int *released)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return false;
    bool ok = fscanf (f, "connections %d held %d released %d", connections, held, released) == 3;
    fclose (f);
    return ok;
}

//  The broker's view of a task: state and attempts (task.fetch), "" / -1 when unknown.
static void
s_task_state (ufo_tasks_t *tasks, const char *id, char state [32], int64_t *attempts)
{
    ufo_error_t err;
    ufo_value_t *t = ufo_tasks_fetch (tasks, id, 2000, &err);
    snprintf (state, 32, "%s", ufo_value_map_str (t, "state", ""));
    *attempts = ufo_value_map_int (t, "attempts", -1);
    ufo_value_destroy (&t);
}

//  Starts ufo-test-proxy in front of the broker with one option (name, value).
static pid_t
s_start_proxy (const char *front, const char *stats, const char *opt, const char *value)
{
    char bin [600];
    snprintf (bin, sizeof bin, "%s/tests/ufo-test-proxy", afx_build ());
    pid_t proxy = fork ();
    if (proxy == 0) {
        execl (bin, bin, "--front", front, "--back", afx_.broker.cmd, opt, value, "--stats", stats, (char *) NULL);
        _exit (127);
    }
    return proxy;
}

//  Starts the proxy `name` (front ipc://DIR/<name>, stats DIR/<name>.stats, written into
//  front / stats) with one option and waits (bounded) until it reports.
static pid_t
s_proxy_up (const char *name, const char *opt, const char *value, char front [400], char stats [400])
{
    snprintf (front, 400, "ipc://%s/%s", afx_.broker.dir, name);
    snprintf (stats, 400, "%s/%s.stats", afx_.broker.dir, name);
    pid_t proxy = s_start_proxy (front, stats, opt, value);
    int connections = -1, held = -1, released = -1;
    WAIT_UNTIL (s_proxy_stats (stats, &connections, &held, &released), 10000);
    return proxy;
}

//  The desktop-service process of the device (`ufo-app --desktop-service`, service "desktop",
//  PROTOCOL.md 4.5) answers while the device's AppAgent waits for a slow model (10 s): the
//  window list and a screenshot come back (their deadline, 6 s, is shorter than the model's
//  reply) and the subtask is still running when they do. The service reaches the broker
//  through the proxy, which counts its connections: one, for the worker side and the
//  screenshot's blob.put.
UFO_TEST (test_desktop_query_during_subtask)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("slow_finish.json") == 0);
    const char *config = s_config ();
    char front [400], stats [400];
    pid_t proxy = s_proxy_up ("proxy-desk", "--prefix", "bb.", front, stats);
    int connections = -1, held = -1, released = -1;
    REQUIRE (s_proxy_stats (stats, &connections, &held, &released) && connections == 0);
    s_desk = s_start_desktop_svc (config, front);
    s_apps [0] = s_start_app (config, 0);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-slow", "Check the note", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    //  wait until the step has asked the model
    bool asking = false;
    int64_t end = ufo_time_mono_ms () + RUN_MS;
    while (!asking && ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        const ufo_value_t *b = ufo_value_map_get (ev, "body");
        asking = !strcmp (ufo_value_map_str (ev, "task", ""), id) && !strcmp (ufo_value_map_str (b, "kind", ""), "activity")
              && !strcmp (ufo_value_map_str (b, "what", ""), "model") && !strcmp (ufo_value_map_str (b, "phase", ""), "start");
        ufo_value_destroy (&ev);
    }
    REQUIRE (asking);
    const char *queries [2] = { "{\"op\": \"windows\"}", NULL };
    char shot [120];
    snprintf (shot, sizeof shot, "{\"op\": \"screenshot\", \"xid\": %" PRId64 "}", xid);
    queries [1] = shot;
    char qid [2][33];
    for (int q = 0; q < 2; q++) {
        ufo_value_t *spec = ufo_value_new_map ();
        ufo_value_map_set_str (spec, "service", "desktop");
        ufo_value_map_set_str (spec, "device", "t0");
        ufo_value_map_set_int (spec, "deadline_ms", 6000);
        ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_json_parse_str (queries [q], NULL) });
        ufo_error_t err;
        REQUIRE (ufo_tasks_submit (tasks, &spec, qid [q], &err) == 0);
    }
    ufo_value_t *answer [2] = { NULL, NULL };
    bool subtask_ended = false;
    while ((!answer [0] || !answer [1]) && ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (!strcmp (ufo_value_map_str (ev, "kind", ""), "result")) {
            const char *task = ufo_value_map_str (ev, "task", "");
            int q = !strcmp (task, qid [0]) ? 0 : !strcmp (task, qid [1]) ? 1 : -1;
            if (q >= 0 && !answer [q]) {
                answer [q] = ev;
                continue;
            }
            subtask_ended |= !strcmp (task, id);
        }
        ufo_value_destroy (&ev);
    }
    REQUIRE (answer [0] && answer [1]);
    CHECK_STR (ufo_value_map_str (answer [0], "status", ""), "done");
    CHECK (!subtask_ended);
    const ufo_value_t *wins = ufo_value_path (answer [0], "body.windows");
    bool found = false;
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (ufo_value_map_int (w, "xid", 0) == xid) {
            found = true;
            CHECK_STR (ufo_value_map_str (w, "app", ""), "mousepad");
            CHECK (ufo_value_map_int (w, "pid", 0) == pid);
            CHECK (ufo_value_path (w, "geometry.width") && ufo_value_int (ufo_value_path (w, "geometry.width")) > 0);
        }
    }
    CHECK (found);
    //  the screenshot's PNG went to the blob store over the service's one connection
    CHECK_STR (ufo_value_map_str (answer [1], "status", ""), "done");
    const ufo_value_t *sb = ufo_value_map_get (answer [1], "body");
    CHECK_INT (strlen (ufo_value_map_str (sb, "blob", "")), 64);
    CHECK_INT (ufo_value_map_int (sb, "xid", 0), xid);
    CHECK (ufo_value_map_int (sb, "size", 0) > 0 && ufo_value_map_int (sb, "width", 0) > 0);
    CHECK_STR (ufo_value_map_str (sb, "mime", ""), "image/png");
    CHECK (s_proxy_stats (stats, &connections, &held, &released));
    CHECK_INT (connections, 1);
    ufo_value_destroy (&answer [0]);
    ufo_value_destroy (&answer [1]);
    //  and the subtask ends as the model says
    ufo_value_t *result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_str (ufo_value_path (result, "body.status")), "FINISH");
    ufo_value_destroy (&result);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [0]);
    //  SIGTERM stops the desktop service cleanly
    kill (s_desk, SIGTERM);
    CHECK_INT (ufo_wait_exit (s_desk, 10000), 0);
    s_desk = 0;
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
    afx_mousepad_kill (pid, xid);
}

//  A desktop query's body (JSON) for device t0, submitted; waits (bounded) for its result
//  event (caller owns; NULL when none came).
static ufo_value_t *
s_desktop_query (ufo_tasks_t *tasks, const char *query)
{
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "desktop");
    ufo_value_map_set_str (spec, "device", "t0");
    ufo_value_map_set_int (spec, "deadline_ms", 20000);
    ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_json_parse_str (query, NULL) });
    char qid [33];
    ufo_error_t err;
    if (ufo_tasks_submit (tasks, &spec, qid, &err) < 0)
        return NULL;
    int64_t end = ufo_time_mono_ms () + 30000;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (!strcmp (ufo_value_map_str (ev, "kind", ""), "result") && !strcmp (ufo_value_map_str (ev, "task", ""), qid))
            return ev;
        ufo_value_destroy (&ev);
    }
    return NULL;
}

//  The broker refuses the screenshot's blob.put (the proxy answers it with an error): the
//  screenshot task fails with why, and the desktop service goes on serving.
UFO_TEST (test_desktop_blob_refused)
{
    char front [400], stats [400];
    pid_t proxy = s_proxy_up ("proxy-blob", "--fail-prefix", "blob.put", front, stats);
    s_desk = s_start_desktop_svc (s_config (), front);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *r = s_desktop_query (tasks, "{\"op\": \"screenshot\"}");
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (r, "body.error")) ?: "", "the broker did not store the screenshot: ");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (r, "body.error")) ?: "", "refused by the test proxy");
    ufo_value_destroy (&r);
    r = s_desktop_query (tasks, "{\"op\": \"windows\"}");
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "status", ""), "done");
    CHECK (ufo_value_path (r, "body.windows") != NULL);
    ufo_value_destroy (&r);
    ufo_tasks_destroy (&tasks);
    kill (s_desk, SIGTERM);
    CHECK_INT (ufo_wait_exit (s_desk, 10000), 0);
    s_desk = 0;
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
}

UFO_TEST (test_slow_board_reply)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("type_text.json") == 0);
    char front [400], hold [400], stats [400];
    snprintf (front, sizeof front, "ipc://%s/proxy", afx_.broker.dir);
    snprintf (hold, sizeof hold, "%s/hold", afx_.broker.dir);
    snprintf (stats, sizeof stats, "%s/proxy.stats", afx_.broker.dir);
    afx_write (hold, "hold blackboard replies while this file exists\n");
    pid_t proxy = s_start_proxy (front, stats, "--hold-file", hold);
    int connections = -1, held = -1, released = -1;
    WAIT_UNTIL (s_proxy_stats (stats, &connections, &held, &released), 10000);
    REQUIRE (connections == 0);
    //  heartbeats every 200 ms, the broker drops a worker silent for 1 s
    s_apps [0] = s_start_app_at (s_config (), 0, front);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-slow", "Type 'Hello slow board'", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    //  the first step's board read is held by the proxy
    WAIT_UNTIL (s_proxy_stats (stats, &connections, &held, &released) && held >= 1, 60000);
    CHECK (held >= 1);
    //  (b) one connection per process: worker side and board calls on one socket
    CHECK_INT (connections, 1);
    //  (a) while the reply waits, 3 heartbeat windows pass: the worker stays registered
    //  (a loop blocked in the board call would be dropped after 1 s and its task requeued)
    char state [32] = "";
    int64_t attempts = -1;
    WAIT_UNTIL ((s_task_state (tasks, id, state, &attempts), strcmp (state, "running") != 0 || attempts != 1),
                3000);
    CHECK_STR (state, "running");
    CHECK_INT (attempts, 1);
    s_proxy_stats (stats, &connections, &held, &released);
    CHECK (held >= 1);                  //  still held: the window really passed with the call in flight
    //  a cancel sent meanwhile is acted on while the board reply is still held
    CHECK_INT (ufo_tasks_cancel (tasks, id), 0);
    ufo_value_t *result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "cancelled");
    CHECK_INT (ufo_value_map_int (result, "attempts", -1), 1);
    s_proxy_stats (stats, &connections, &held, &released);
    CHECK_INT (released, 0);
    ufo_value_destroy (&result);
    //  the held reply goes; the late answer is dropped and the worker serves on
    unlink (hold);
    WAIT_UNTIL (s_proxy_stats (stats, &connections, &held, &released) && held == 0 && released >= 1, 10000);
    CHECK (released >= 1);
    CHECK_INT (connections, 1);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [0]);
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
    afx_mousepad_kill (pid, xid);
}

//  Board writes the broker refuses (the proxy answers every bb.add with an error): the
//  subtask goes on without waiting for them, and its result names them in board_errors.
UFO_TEST (test_failed_board_write)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("type_text.json") == 0);
    char front [400], stats [400];
    pid_t proxy = s_proxy_up ("proxy-fail", "--fail-prefix", "bb.add", front, stats);
    s_apps [0] = s_start_app_at (s_config (), 0, front);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test_app_dispatch", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *body = s_body (afx_subtask ("d-fail", "Type 'Hello failed board'", xid, "", ""));
    char id [33];
    REQUIRE (s_submit (tasks, &body, id) == 0);
    ufo_value_t *result = s_follow (tasks, id, NULL, NULL);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "done");
    const ufo_value_t *rb = ufo_value_map_get (result, "body");
    const ufo_value_t *errors = ufo_value_map_get (rb, "board_errors");
    CHECK (ufo_value_size (errors) >= 1);
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (errors, 0)), "refused by the test proxy");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (errors, 0)), "d-fail/trajectories");
    CHECK_INT (s_trajectories ("d-fail"), 0);      //  nothing reached the board
    ufo_value_destroy (&result);
    ufo_tasks_destroy (&tasks);
    s_stop_app (&s_apps [0]);
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
    afx_mousepad_kill (pid, xid);
}

int
main (void)
{
    if (afx_setup ("appd") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_dispatched_subtask);
    AFX_RUN (test_dispatched_question);
    AFX_RUN (test_killed_worker_resumes);
    AFX_RUN (test_finished_worker_resumes_without_model);
    AFX_RUN (test_desktop_query_during_subtask);
    AFX_RUN (test_desktop_blob_refused);
    AFX_RUN (test_slow_board_reply);
    AFX_RUN (test_failed_board_write);
    s_stop_app (&s_apps [0]);
    s_stop_app (&s_apps [1]);
    s_stop_app (&s_desk);
    afx_teardown ();
    return UFO_TEST_END ();
}
