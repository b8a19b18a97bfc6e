/*  test_host_system.c - whole sessions through the real processes: ufo-broker (with task
    dispatch), ufo-host, ufo-app, ufo-eval and `ufo run` as the client, against real
    mousepad on a private virtual desktop, with the scripted LLM server (scripts in
    tests/data/host_agent/). The test checks the application through AT-SPI itself, the
    blackboard through its own broker client, the logs, and the server's request log. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "host_fixture.h"
#include "ufo_tasks.h"
#include "report_browser.h"

#define S_HOST_KEY "sk-env-planted-host-5e1f0a9b7c"
#define S_APP_KEY "sk-env-planted-app-3d2c1b0a99"

UFO_TEST (test_one_round_mousepad)
{
    hfx_host_visual = true;                       //  the HostAgent sends the desktop screenshot
    REQUIRE (hfx_start ("one_round.json", "", 1) == 0);
    hfx_host_visual = false;
    const char *args [] = { "Write 'Hello from the HostAgent' in a new Mousepad note", "--device", "t0",
                            "--task", "one-round", "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_str (ufo_value_path (hfx_.result, "evaluation.complete")), "yes");
    CHECK (ufo_value_map_int (hfx_.result, "steps", 0) == 5);     //  3 HostAgent + 2 AppAgent
    //  the application, read by the test through AT-SPI
    int64_t xid = hfx_mousepad_xid ();
    REQUIRE (xid);
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello from the HostAgent");
    free (text);
    //  the blackboard
    ufo_value_t *board = hfx_board ();
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.0.request_0")),
               "Write 'Hello from the HostAgent' in a new Mousepad note");
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    CHECK (ufo_value_size (traj) >= 2);
    const ufo_value_t *t0 = ufo_value_list_at (traj, 0);
    static const char *tkeys [] = { "Step", "Subtask", "Action", "UserConfirm", "Round", "SubtaskIndex", "Application",
                                    "Status" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (tkeys); i++)
        if (!ufo_value_map_has (t0, tkeys [i]))
            UFO_FAIL_ ("trajectory item lacks %s", tkeys [i]);
    ufo_value_destroy (&board);
    //  response.log: HostAgent and AppAgent lines with their fields
    ufo_value_t *lines = hfx_log ("response.log");
    CHECK_INT (ufo_value_size (lines), 5);
    static const char *fields [] = { "Step", "RoundStep", "AgentStep", "Round", "Subtask", "SubtaskIndex",
        "FunctionCall", "Action", "ActionSuccess", "ActionType", "Request", "Agent", "AgentName", "Application",
        "Cost", "Results", "error", "time_cost", "ControlLog", "UserConfirm", "Status", "Observation", "Thought" };
    size_t host = 0, app = 0;
    for (size_t k = 0; k < ufo_value_size (lines); k++) {
        const ufo_value_t *l = ufo_value_list_at (lines, k);
        for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++)
            if (!ufo_value_map_has (l, fields [i]))
                UFO_FAIL_ ("response.log line %zu lacks %s", k, fields [i]);
        host += !strcmp (ufo_value_map_str (l, "Agent", ""), "HostAgent");
        app += !strcmp (ufo_value_map_str (l, "Agent", ""), "AppAgent");
    }
    CHECK_INT (host, 3);
    CHECK_INT (app, 2);
    ufo_value_destroy (&lines);
    char path [700];
    const char *files [] = { "session.json", "blackboard.json", "output.md", "report.html", "desktop_step0.png",
                             "action_round_0_final.png", "evaluation.log", "request.log" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (files); i++) {
        snprintf (path, sizeof path, "%s/%s", hfx_.logdir, files [i]);
        if (access (path, R_OK) != 0)
            UFO_FAIL_ ("%s is missing", files [i]);
    }
    //  the HostAgent's prompts carried the desktop screenshot; request.log names its file instead
    ufo_value_t *host_calls = hfx_llm_lines ("HostAgent");
    for (size_t i = 0; i < ufo_value_size (host_calls); i++)
        CHECK_INT (ufo_value_map_int (ufo_value_list_at (host_calls, i), "images", 0), 1);
    ufo_value_destroy (&host_calls);
    snprintf (path, sizeof path, "%s/request.log", hfx_.logdir);
    char *reqlog = afx_read (path);
    CHECK_CONTAINS (reqlog, "\"url\":\"desktop_step0.png\"");
    CHECK (!strstr (reqlog, "data:image/png;base64"));
    free (reqlog);
    //  no API key in any log
    snprintf (path, sizeof path, "grep -rq 'sk-afx-secret' '%s'", hfx_.logdir);
    CHECK (system (path) != 0);
    hfx_stop_all ();
}

//  Loads page in headless Chromium (DOM dump to dom_path) with the browser's HOME and XDG
//  directories in the test directory and no display, then gives this process its
//  environment back (the desktop session needs DISPLAY and the session bus).
static int
s_load_in_chromium (const char *page, const char *dom_path)
{
    static const char *names [] = { "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "DISPLAY",
                                    "DBUS_SESSION_BUS_ADDRESS" };
    char *saved [UFO_ARRAY_SIZE (names)];
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names); i++)
        saved [i] = getenv (names [i]) ? ufo_strdup (getenv (names [i])) : NULL;
    snprintf (s_tmp, sizeof s_tmp, "%s/browser", afx_.broker.dir);
    mkdir (s_tmp, 0700);
    if (getenv ("UFO_CHROMIUM"))
        s_chromium_bin = getenv ("UFO_CHROMIUM");
    s_browser_env ();
    int rc = s_chromium (page, dom_path, NULL, NULL, NULL);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names); i++) {
        if (saved [i])
            setenv (names [i], saved [i], 1);
        else
            unsetenv (names [i]);
        free (saved [i]);
    }
    return rc;
}

//  Fails the case when a planted key appears in the file, or anywhere under a directory.
static void
s_check_no_key (const char *path)
{
    static const char *keys [] = { "sk-afx-secret", S_HOST_KEY, S_APP_KEY };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        char cmd [1400];
        snprintf (cmd, sizeof cmd, "grep -rqa -- '%s' '%s'", keys [i], path);
        if (system (cmd) == 0)
            UFO_FAIL_ ("the key %s appears in %s", keys [i], path);
    }
}

//  One session as a person sees it (no --json): the step lines, the round and session
//  evaluations with their icons, the summary and the exit code. Then the report the agents
//  wrote, loaded in headless Chromium; and no planted API key (in the configuration and in
//  the agents' environment) on the bus (`ufo monitor --json`), in the agents' own logs, in
//  the output or in logs/<task>.
UFO_TEST (test_human_output_report_no_keys)
{
    //  keys planted in the agents' environment too (the configuration holds sk-afx-secret);
    //  the script answers the HostAgent and the AppAgent only when they send these keys
    setenv ("UFO_HOST_AGENT__API_KEY", S_HOST_KEY, 1);
    setenv ("UFO_APP_AGENT__API_KEY", S_APP_KEY, 1);
    int started = hfx_start ("human.json", "\"EVA_ROUND\": true", 1);
    unsetenv ("UFO_HOST_AGENT__API_KEY");
    unsetenv ("UFO_APP_AGENT__API_KEY");
    REQUIRE (started == 0);
    //  the bus, as `ufo monitor --json` sees it, for the whole session
    char bin [600], monitor_log [400];
    snprintf (bin, sizeof bin, "%s/cli/ufo", afx_build ());
    snprintf (monitor_log, sizeof monitor_log, "%s/monitor.jsonl", afx_.broker.dir);
    const char *margs [] = { "monitor", "--json", "--broker", afx_.broker.cmd, "--bus", afx_.broker.bus,
                             "--config", hfx_.cfg, "--timeout", "600", NULL };
    pid_t monitor = hfx_spawn (bin, margs, monitor_log);
    hfx_json = false;
    const char *args [] = { "Write 'Hello from the HostAgent' in a new Mousepad note", "--device", "t0",
                            "--task", "human", "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    hfx_json = true;
    hfx_kill (&monitor);
    CHECK_INT (rc, 1);                          //  FINISH, but the evaluation says "no"
    char *out = afx_read (hfx_.out);
    REQUIRE (out);
    CHECK (!strstr (out, "\"kind\":"));         //  no JSON lines
    CHECK_CONTAINS (out, "set_edit_text");      //  a step line
    CHECK_CONTAINS (out, "round 0 evaluation: \xE2\x9D\x8C complete: no\n"
                         "  \xE2\x9C\x85 Mousepad opened: yes\n"
                         "  \xE2\x9D\x8C note saved: no\n"
                         "  \xE2\x9D\x93 note formatted: unsure\n"
                         "  reason: The note is typed but was not saved.\n");
    //  one mark for the session: ❌ (not completed), and a line on the disagreement
    CHECK_CONTAINS (out, "\n\xE2\x9D\x8C session FINISH: 1 round(s), 5 step(s)\n");
    CHECK_CONTAINS (out, "the agents said FINISH, but the evaluation found the request not completed\n");
    CHECK_CONTAINS (out, "\nevaluation: \xE2\x9D\x8C complete: no\n  \xE2\x9C\x85 Mousepad opened: yes\n");
    CHECK_CONTAINS (out, "cost: $");
    CHECK_CONTAINS (out, "report: ");
    CHECK_CONTAINS (out, "the request was NOT completed\n");
    //  the report the agents wrote, in a real browser: every step, the verdict, every image
    snprintf (hfx_.logdir, sizeof hfx_.logdir, "%s/logs/human", afx_.broker.dir);
    char page [700], dom_path [700];
    snprintf (page, sizeof page, "%s/report.html", hfx_.logdir);
    snprintf (dom_path, sizeof dom_path, "%s/report.dom.html", afx_.broker.dir);
    CHECK_CONTAINS (out, page);
    free (out);
    ufo_value_t *lines = hfx_log ("response.log");
    CHECK_INT (ufo_value_size (lines), 5);
    ufo_value_destroy (&lines);
    REQUIRE (s_load_in_chromium (page, dom_path) == 0);
    char *dom = afx_read (dom_path);
    REQUIRE (dom);
    CHECK_INT (s_count (dom, "<details class=\"step "), 5);
    CHECK_CONTAINS (dom, "<span class=\"verdict-no\"><span class=\"icon\">\xE2\x9D\x8C</span> Complete: "
                         "<span class=\"status st-no\">no</span>");
    CHECK_INT (s_body_attr (dom, "data-js"), 1);
    long images = s_body_attr (dom, "data-images-total");
    CHECK (images >= 2);                        //  the desktop screenshot, the AppAgent's, the final one
    CHECK_INT (s_body_attr (dom, "data-images-loaded"), images);
    CHECK_INT (s_count (dom, "data-loaded=\"1\""), images);
    free (dom);
    //  the monitor saw the session's traffic (tasks and board changes)
    char *bus = afx_read (monitor_log);
    REQUIRE (bus);
    CHECK_CONTAINS (bus, "Hello from the HostAgent");
    CHECK (s_count (bus, "\n") > 10);
    free (bus);
    //  no key anywhere
    const char *agent_logs [] = { "host.log", "eval.log", "app-0.log", "monitor.jsonl", "run-" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (agent_logs); i++) {
        char path [700];
        if (!strcmp (agent_logs [i], "run-"))
            snprintf (path, sizeof path, "%s", hfx_.out);
        else
            snprintf (path, sizeof path, "%s/%s", afx_.broker.dir, agent_logs [i]);
        char *text = afx_read (path);
        CHECK (text && *text);                  //  there is something to search
        free (text);
        s_check_no_key (path);
    }
    s_check_no_key (hfx_.logdir);
    s_check_no_key (afx_.llm_log);
    //  the grep finds a planted key where there is one (the configuration file)
    char cmd [1000];
    snprintf (cmd, sizeof cmd, "grep -qa -- 'sk-afx-secret' '%s'", hfx_.cfg);
    CHECK (system (cmd) == 0);
    hfx_stop_all ();
}

UFO_TEST (test_two_rounds_history)
{
    REQUIRE (hfx_start ("two_rounds.json", "\"MAX_ROUND\": 3", 1) == 0);
    const char *args [] = { "Write 'Hello from the HostAgent' in a new Mousepad note", "--request",
                            "Add a second line 'Round two' to the note", "--device", "t0", "--task", "two-rounds",
                            "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK_INT (ufo_value_map_int (hfx_.result, "rounds", 0), 2);
    //  round 1's history in round 2's first HostAgent prompt (the server's log of it)
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    const char *round2 = NULL;
    for (size_t i = 0; i < ufo_value_size (host) && !round2; i++) {
        const char *last = ufo_value_map_str (ufo_value_list_at (host, i), "last", "");
        if (strstr (last, "Add a second line"))
            round2 = last;
    }
    REQUIRE (round2);
    CHECK_CONTAINS (round2, "[Request History:]");
    CHECK_CONTAINS (round2, "request_0");
    CHECK_CONTAINS (round2, "Write 'Hello from the HostAgent' in a new Mousepad note");
    CHECK_CONTAINS (round2, "Step Trajectories Completed Previously");
    CHECK_CONTAINS (round2, "set_edit_text");
    ufo_value_destroy (&host);
    int64_t xid = hfx_mousepad_xid ();
    char *text = xid ? afx_text (xid) : NULL;
    CHECK_CONTAINS (text, "Hello from the HostAgent");
    CHECK_CONTAINS (text, "Round two");
    free (text);
    ufo_value_t *board = hfx_board ();
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.1.request_1")), "Add a second line 'Round two' to the note");
    ufo_value_destroy (&board);
    hfx_stop_all ();
}

UFO_TEST (test_pending_answered_through_client)
{
    REQUIRE (hfx_start ("pending.json", "", 0) == 0);
    const char *args [] = { "Write a note", "--device", "t0", "--task", "pending", "--interactive", NULL };
    int rc = hfx_run (args, "my answer is 42\n", NULL);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    char *out = afx_read (hfx_.out);
    CHECK_CONTAINS (out, "What should the note say?");
    free (out);
    ufo_value_t *board = hfx_board ();
    CHECK_STR (ufo_value_str (ufo_value_path (board, "questions.0.question")), "What should the note say?");
    CHECK_STR (ufo_value_str (ufo_value_path (board, "questions.0.answer")), "my answer is 42");
    ufo_value_destroy (&board);
    ufo_value_t *lines = hfx_log ("response.log");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (lines, 0), "Answers.0")), "my answer is 42");
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  An AppAgent's question goes through the HostAgent to the client and the answer back.
UFO_TEST (test_app_question_relayed)
{
    REQUIRE (hfx_start ("app_pending.json", "", 1) == 0);
    const char *args [] = { "Type what I tell you in Mousepad", "--device", "t0", "--task", "app-question",
                            "--interactive", NULL };
    int rc = hfx_run (args, "words: relayed through the HostAgent\n", NULL);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    char *out = afx_read (hfx_.out);
    CHECK_CONTAINS (out, "Which words should I type?");
    CHECK_CONTAINS (out, "\"from\":\"AppAgent/mousepad\"");
    free (out);
    int64_t xid = hfx_mousepad_xid ();
    char *text = xid ? afx_text (xid) : NULL;
    CHECK_STR (text, "relayed through the HostAgent");
    free (text);
    hfx_stop_all ();
}

UFO_TEST (test_confirm_refused)
{
    REQUIRE (hfx_start ("confirm.json", "", 1) == 0);
    //  the AppAgent's confirmation reaches the client, whose user says no
    const char *args [] = { "Replace the note's text", "--device", "t0", "--task", "confirm", "--interactive", NULL };
    hfx_run (args, "n\n", NULL);
    REQUIRE (hfx_.result);
    int64_t xid = hfx_mousepad_xid ();
    REQUIRE (xid);
    char *text = afx_text (xid);
    CHECK_STR (text, "");                       //  unchanged: nothing was overwritten
    free (text);
    char *out = afx_read (hfx_.out);
    CHECK_CONTAINS (out, "\"kind\":\"confirm\"");
    free (out);
    ufo_value_t *lines = hfx_log ("response.log");
    bool refused = false;
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        refused |= !strcmp (ufo_value_map_str (ufo_value_list_at (lines, i), "UserConfirm", ""), "no");
    CHECK (refused);
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  --yes: the AppAgent decides the confirmation itself and reports it ("answered"); the
//  client shows the decision and sends nothing back (no stray input reaches the agents).
UFO_TEST (test_confirm_answered_by_policy)
{
    REQUIRE (hfx_start ("confirm.json", "", 1) == 0);
    const char *args [] = { "Replace the note's text", "--device", "t0", "--task", "confirm-yes", "--yes", NULL };
    hfx_run (args, NULL, NULL);
    REQUIRE (hfx_.result);
    char *out = afx_read (hfx_.out);
    CHECK_CONTAINS (out, "\"answered\":\"yes\"");
    free (out);
    static const char *logs [] = { "app-0.log", "host.log" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (logs); i++) {
        char path [600];
        snprintf (path, sizeof path, "%s/%s", afx_.broker.dir, logs [i]);
        char *log = afx_read (path);
        REQUIRE (log);
        CHECK (!strstr (log, "nothing waits for it"));
        CHECK (!strstr (log, "is gone"));
        free (log);
    }
    hfx_stop_all ();
}

//  request.json names the LLM mode ufo-host really uses (--llm-mode over llm.mode) and the
//  endpoint without credentials.
UFO_TEST (test_request_json_llm_mode)
{
    REQUIRE (hfx_start ("finish.json", "", 0) == 0);
    hfx_kill (&hfx_.host);
    char bin [600], log [400], cassette [400];
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host2.log", afx_.broker.dir);
    snprintf (cassette, sizeof cassette, "%s/host.cassette", afx_.broker.dir);
    const char *hargs [] = { "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd,
                             "--llm-mode", "record", "--llm-cassette", cassette, NULL };
    hfx_.host2 = hfx_spawn (bin, hargs, log);
    const char *args [] = { "Nothing to do", "--device", "t0", "--task", "llm-mode", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    char path [700];
    snprintf (path, sizeof path, "%s/request.json", hfx_.logdir);
    ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
    CHECK_STR (ufo_value_str (ufo_value_path (req, "llm.mode")), "record");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (req, "llm.endpoint")), "http://127.0.0.1:");
    CHECK_STR (ufo_value_map_str (req, "mode", ""), "normal");
    ufo_value_destroy (&req);
    hfx_stop_all ();
}

//  ASSIGN to mousepad with no AppAgent worker: the HostAgent does not queue a subtask nobody
//  takes (it hung until the session deadline); the model hears so and ends the round.
UFO_TEST (test_assign_without_app_worker)
{
    REQUIRE (hfx_start ("no_worker.json", "", 0) == 0);
    const char *args [] = { "Write a note in Mousepad", "--device", "t0", "--task", "no-worker", "--yes",
                            "--timeout", "120", NULL };
    int64_t t0 = ufo_time_mono_ms ();
    int rc = hfx_run (args, NULL, NULL);
    CHECK (ufo_time_mono_ms () - t0 < 60000);
    CHECK_INT (rc, 1);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FAIL");
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    CHECK_INT (ufo_value_size (host), 3);       //  launch, assign, then FAIL after the tip
    ufo_value_destroy (&host);
    hfx_stop_all ();
}

UFO_TEST (test_garbage_ends_in_error)
{
    REQUIRE (hfx_start ("garbage.json", "", 0) == 0);
    const char *args [] = { "Do something", "--device", "t0", "--task", "garbage", "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    CHECK_INT (rc, 1);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "ERROR");
    CHECK (strlen (ufo_value_map_str (hfx_.result, "error", "")) > 0);
    ufo_value_t *lines = hfx_log ("response.log");
    REQUIRE (ufo_value_size (lines) == 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, 0), "Status", ""), "ERROR");
    CHECK (strlen (ufo_value_map_str (ufo_value_list_at (lines, 0), "error", "")) > 0);
    ufo_value_destroy (&lines);
    char path [700];
    snprintf (path, sizeof path, "%s/session.json", hfx_.logdir);
    ufo_value_t *session = ufo_json_parse_file (path, NULL, NULL);
    CHECK_STR (ufo_value_map_str (session, "status", ""), "ERROR");
    CHECK (strlen (ufo_value_map_str (session, "error", "")) > 0);
    ufo_value_destroy (&session);
    ufo_value_t *eval = hfx_llm_lines ("EvaluationAgent");
    CHECK_INT (ufo_value_size (eval), 0);       //  no evaluation after ERROR
    ufo_value_destroy (&eval);
    //  the HostAgent is still serving: a second session is accepted and ends the same way
    const char *again [] = { "Again", "--device", "t0", "--task", "garbage2", "--yes", NULL };
    hfx_run (again, NULL, NULL);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "ERROR");
    hfx_stop_all ();
}

//  Follower mode: the subtasks come from the plan file, in order; the model only picks the
//  window, and the round ends when the plan is done (no FINISH asked of the model).
UFO_TEST (test_follower_plan)
{
    REQUIRE (hfx_start ("follower.json", "", 1) == 0);
    char plan [400];
    snprintf (plan, sizeof plan, "%s/plan.txt", afx_.broker.dir);
    afx_write (plan, "Type the word First into the document\nType the word Second after it\n");
    const char *args [] = { "Write two words in Mousepad", "--plan", plan, "--device", "t0", "--task", "follower",
                            "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    CHECK_INT (ufo_value_size (host), 3);       //  launch, window for subtask 1, window for subtask 2
    ufo_value_destroy (&host);
    ufo_value_t *lines = hfx_log ("response.log");
    size_t n = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        if (!strcmp (ufo_value_map_str (l, "Agent", ""), "AppAgent") && !strcmp (ufo_value_map_str (l, "Status", ""), "FINISH"))
            CHECK_STR (ufo_value_map_str (l, "Subtask", ""), n++ == 0 ? "Type the word First into the document"
                                                                      : "Type the word Second after it");
    }
    CHECK_INT (n, 2);
    ufo_value_destroy (&lines);
    char path [700];
    snprintf (path, sizeof path, "%s/request.json", hfx_.logdir);
    ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
    CHECK_STR (ufo_value_map_str (req, "mode", ""), "follower");
    ufo_value_destroy (&req);
    int64_t xid = hfx_mousepad_xid ();
    char *text = xid ? afx_text (xid) : NULL;
    CHECK_CONTAINS (text, "First");
    CHECK_CONTAINS (text, "Second");
    free (text);
    hfx_stop_all ();
}

//  The HostAgent dies in round 1: the broker delivers the session again, to the second
//  HostAgent of the device, which resumes at round 1 instead of redoing round 0.
static void
s_kill_first_host (void)
{
    static int64_t seen_at = 0, checked_at = 0;
    if (hfx_.host <= 0 || hfx_.host2 > 0)
        return;
    int64_t now = ufo_time_mono_ms ();
    if (!seen_at && now - checked_at > 200) {
        checked_at = now;
        char path [600];
        snprintf (path, sizeof path, "%s/logs/host-resume/request.json", afx_.broker.dir);
        ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
        snprintf (hfx_.session, sizeof hfx_.session, "%s", ufo_value_map_str (req, "session", ""));
        ufo_value_destroy (&req);
        ufo_value_t *board = hfx_.session [0] ? hfx_board () : NULL;
        if (ufo_value_size (ufo_value_map_get (board, "requests")) >= 1)
            seen_at = now;                  //  round 0 is over; round 1's first call is slow
        ufo_value_destroy (&board);
    }
    if (!seen_at || now - seen_at < 1000)
        return;
    seen_at = 0;
    kill (hfx_.host, SIGKILL);
    waitpid (hfx_.host, NULL, 0);
    hfx_.host = 0;
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host2.log", afx_.broker.dir);
    const char *hargs [] = { "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, "--bus", afx_.broker.bus, NULL };
    hfx_.host2 = hfx_spawn (bin, hargs, log);
}

UFO_TEST (test_host_killed_session_resumes)
{
    REQUIRE (hfx_start ("host_resume.json", "\"MAX_ROUND\": 3", 0) == 0);
    hfx_.session [0] = 0;
    const char *args [] = { "Do the first request", "--request", "Do the second request", "--device", "t0",
                            "--task", "host-resume", "--yes", NULL };
    int rc = hfx_run (args, NULL, s_kill_first_host);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK (hfx_.host2 > 0);                       //  the first HostAgent was killed
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (hfx_.result, "rounds", 0), 2);
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    size_t first = 0;
    for (size_t i = 0; i < ufo_value_size (host); i++)
        first += strstr (ufo_value_map_str (ufo_value_list_at (host, i), "last", ""), "[User Request:]\nDo the first request") != NULL;
    CHECK_INT (first, 1);                       //  round 0 was not run again
    ufo_value_destroy (&host);
    ufo_value_t *board = hfx_board ();
    const ufo_value_t *requests = ufo_value_map_get (board, "requests");
    size_t r0 = 0, r1 = 0;
    for (size_t i = 0; i < ufo_value_size (requests); i++) {
        r0 += ufo_value_map_has (ufo_value_list_at (requests, i), "request_0");
        r1 += ufo_value_map_has (ufo_value_list_at (requests, i), "request_1");
    }
    CHECK_INT (r0, 1);
    CHECK_INT (r1, 1);
    ufo_value_destroy (&board);
    hfx_stop_all ();
}

//  Kills the first HostAgent once the first subtask of round 0 has ended (its AppAgent's
//  FINISH step is in response.log) and the HostAgent waits for a slow reply; starts a second.
static void
s_kill_host_mid_round (void)
{
    static int64_t seen_at = 0, checked_at = 0;
    if (hfx_.host <= 0 || hfx_.host2 > 0)
        return;
    int64_t now = ufo_time_mono_ms ();
    if (!seen_at && now - checked_at > 200) {
        checked_at = now;
        char path [600];
        snprintf (path, sizeof path, "%s/logs/host-midround/response.log", afx_.broker.dir);
        ufo_value_t *lines = afx_lines (path);
        for (size_t i = 0; i < ufo_value_size (lines); i++) {
            const ufo_value_t *l = ufo_value_list_at (lines, i);
            if (!strcmp (ufo_value_map_str (l, "Agent", ""), "AppAgent") && !strcmp (ufo_value_map_str (l, "Status", ""), "FINISH"))
                seen_at = now;
        }
        ufo_value_destroy (&lines);
    }
    if (!seen_at || now - seen_at < 1000)
        return;
    seen_at = 0;
    kill (hfx_.host, SIGKILL);
    waitpid (hfx_.host, NULL, 0);
    hfx_.host = 0;
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host2.log", afx_.broker.dir);
    const char *hargs [] = { "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, "--bus", afx_.broker.bus, NULL };
    hfx_.host2 = hfx_spawn (bin, hargs, log);
}

//  The HostAgent dies mid-round, after its first subtask ended: the second HostAgent goes on
//  with the round (the first subtask is not submitted again) and the session completes.
UFO_TEST (test_host_killed_mid_round_continues)
{
    REQUIRE (hfx_start ("host_midround.json", "", 1) == 0);
    const char *args [] = { "Write two lines in Mousepad", "--device", "t0", "--task", "host-midround", "--yes", NULL };
    int rc = hfx_run (args, NULL, s_kill_host_mid_round);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK (hfx_.host2 > 0);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    //  two AppAgent steps per subtask, each subtask once: the first was not run again
    ufo_value_t *app = hfx_llm_lines ("AppAgent");
    CHECK_INT (ufo_value_size (app), 4);
    ufo_value_destroy (&app);
    ufo_value_t *lines = hfx_log ("response.log");
    size_t first = 0, second = 0;
    int64_t last = -1;
    bool ordered = true;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        if (!strcmp (ufo_value_map_str (l, "Agent", ""), "AppAgent")) {
            first += ufo_value_map_int (l, "SubtaskIndex", -1) == 0;
            second += ufo_value_map_int (l, "SubtaskIndex", -1) == 1;
        }
        ordered &= ufo_value_map_int (l, "Step", -1) > last;
        last = ufo_value_map_int (l, "Step", -1);
    }
    CHECK_INT (first, 2);
    CHECK_INT (second, 2);                      //  numbered after the first
    CHECK (ordered);                            //  step numbers go on
    ufo_value_destroy (&lines);
    char path [600];
    snprintf (path, sizeof path, "%s/host2.log", afx_.broker.dir);
    char *log = afx_read (path);
    CHECK_CONTAINS (log, "1 subtask(s) done");
    free (log);
    ufo_value_t *evals = hfx_llm_lines ("EvaluationAgent");
    CHECK_INT (ufo_value_size (evals), 1);      //  one session evaluation over both attempts
    ufo_value_destroy (&evals);
    ufo_value_t *elog = hfx_log ("evaluation.log");
    CHECK_INT (ufo_value_size (elog), 1);
    ufo_value_destroy (&elog);
    int64_t xid = hfx_mousepad_xid ();
    char *text = xid ? afx_text (xid) : NULL;
    CHECK_STR (text, "first line second line");
    free (text);
    hfx_stop_all ();
}

//  Kills the first HostAgent while its session evaluation runs (the EvaluationAgent's slow
//  reply has been asked for) and starts a second one, which gets the session again.
static void
s_kill_host_during_evaluation (void)
{
    if (hfx_.host <= 0 || hfx_.host2 > 0)
        return;
    ufo_value_t *eval = hfx_llm_lines ("EvaluationAgent");
    size_t asked = ufo_value_size (eval);
    ufo_value_destroy (&eval);
    if (asked == 0)
        return;
    kill (hfx_.host, SIGKILL);
    waitpid (hfx_.host, NULL, 0);
    hfx_.host = 0;
    char bin [600], log [400];
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host2.log", afx_.broker.dir);
    const char *hargs [] = { "--device", "t0", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, "--bus", afx_.broker.bus, NULL };
    hfx_.host2 = hfx_spawn (bin, hargs, log);
}

//  The HostAgent dies while the session evaluation runs: the second HostAgent (attempt 2)
//  does not evaluate the session again; it follows the evaluation already submitted
//  (idempotency key eval:<session>:session:-1) and reports its result.
UFO_TEST (test_host_killed_during_evaluation_evaluates_once)
{
    REQUIRE (hfx_start ("eval_kill.json", "", 0) == 0);
    const char *args [] = { "Read the request", "--device", "t0", "--task", "host-evalkill", "--yes", NULL };
    int rc = hfx_run (args, NULL, s_kill_host_during_evaluation);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK (hfx_.host2 > 0);                       //  the first HostAgent was killed
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_str (ufo_value_path (hfx_.result, "evaluation.complete")), "yes");
    ufo_value_t *eval = hfx_llm_lines ("EvaluationAgent");
    CHECK_INT (ufo_value_size (eval), 1);       //  the EvaluationAgent was asked once
    ufo_value_destroy (&eval);
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    CHECK_INT (ufo_value_size (host), 1);       //  the finished round was not run again
    ufo_value_destroy (&host);
    ufo_value_t *lines = hfx_log ("evaluation.log");
    size_t session = 0;
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        session += strcmp (ufo_value_map_str (ufo_value_list_at (lines, i), "level", ""), "session") == 0;
    CHECK_INT (session, 1);                     //  one session evaluation in the log
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  Ctrl-C on `ufo run` once two steps have shown: the session is cancelled.
static void
s_interrupt_after_two_steps (void)
{
    static int64_t sent = 0;
    if (hfx_run_pid <= 0)
        return;
    char *out = afx_read (hfx_.out);
    int steps = 0;
    for (const char *p = out; p && (p = strstr (p, "\"kind\":\"step\"")); p++)
        steps++;
    free (out);
    if (steps >= 2 && !sent) {
        kill (hfx_run_pid, SIGINT);
        sent = ufo_time_mono_ms ();
    }
    if (steps < 2)
        sent = 0;
}

UFO_TEST (test_cancel_from_client)
{
    REQUIRE (hfx_start ("loop_slow.json", "", 0) == 0);
    const char *args [] = { "Look until I stop you", "--device", "t0", "--task", "cancel", "--yes", NULL };
    int rc = hfx_run (args, NULL, s_interrupt_after_two_steps);
    CHECK_INT (rc, 1);
    char path [600];
    snprintf (path, sizeof path, "%s/host.log", afx_.broker.dir);
    char *log = afx_read (path);
    CHECK_CONTAINS (log, "cancelled by its submitter");
    free (log);
    snprintf (path, sizeof path, "%s/logs/cancel/session.json", afx_.broker.dir);
    ufo_value_t *session = ufo_json_parse_file (path, NULL, NULL);
    CHECK_CONTAINS (ufo_value_map_str (session, "error", ""), "cancelled");
    CHECK_STR (ufo_value_map_str (session, "status", ""), "ERROR");
    ufo_value_destroy (&session);
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    CHECK (ufo_value_size (host) < 10);          //  it stopped asking (MAX_STEP is 50)
    ufo_value_destroy (&host);
    hfx_stop_all ();
}

//  Ctrl-C while the HostAgent's model or blackboard call is in flight: test_host_cancel.c.

//  Session bodies that cannot be used end the task "failed" with the reason; the HostAgent
//  keeps serving (the next session completes).
UFO_TEST (test_bad_session_bodies)
{
    REQUIRE (hfx_start ("finish.json", "", 0) == 0);
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test-client", NULL, NULL, NULL);
    REQUIRE (tasks);
    static const char *bodies [] = {
        "\"not a map\"",
        "{\"session\": \"../escape\", \"task\": \"t\", \"requests\": [\"x\"]}",
        "{\"session\": \"s1\", \"task\": \"a/b\", \"requests\": [\"x\"]}",
        "{\"session\": \"s2\", \"task\": \"t2\", \"requests\": []}",
        "{\"session\": \"s3\", \"task\": \"t3\", \"requests\": [1, 2]}",
        "{\"session\": \"s4\", \"task\": \"t4\", \"requests\": [\"x\"], \"mode\": \"follower\", \"plan\": 7}",
        "{\"session\": \"s5\", \"task\": \"t5\", \"requests\": [\"x\"], \"log_root\": \"/tmp/../etc\"}",
        "{\"session\": \"s6\", \"task\": \"t6\", \"requests\": [\"x\"], \"log_root\": 42}",
        //  a session's own model (ufo_llm_override.h): never a key, a known type, a URL
        "{\"session\": \"s7\", \"task\": \"t7\", \"requests\": [\"x\"], \"model\": {\"api_key\": \"sk-leak-0000\"}}",
        "{\"session\": \"s8\", \"task\": \"t8\", \"requests\": [\"x\"], \"model\": {\"api_base\": \"file:///etc\"}}",
        "{\"session\": \"s9\", \"task\": \"t9\", \"requests\": [\"x\"], \"model\": \"gpt-4o\"}",
        "{\"session\": \"s10\", \"task\": \"t10\", \"requests\": [\"x\"], \"model\": {\"api_type\": 3}}",
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bodies); i++) {
        ufo_value_t *spec = ufo_value_new_map ();
        ufo_value_map_set_str (spec, "service", "host");
        ufo_value_map_set_str (spec, "device", "t0");
        ufo_value_map_set_int (spec, "max_attempts", 1);
        ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_json_parse_str (bodies [i], NULL) });
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
        const char *error = ufo_value_str (ufo_value_path (result, "body.error"));
        CHECK (error && *error);
        if (strstr (bodies [i], "\"model\"")) {
            CHECK_CONTAINS (error, "model override");
            CHECK (error && !strstr (error, "sk-leak"));
        }
        ufo_value_destroy (&result);
    }
    ufo_tasks_destroy (&tasks);
    const char *args [] = { "Still serving?", "--device", "t0", "--task", "after-bad", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    hfx_stop_all ();
}

UFO_TEST (test_max_step_and_round)
{
    REQUIRE (hfx_start ("loop.json", "\"MAX_STEP\": 3", 0) == 0);
    const char *args [] = { "Look forever", "--device", "t0", "--task", "maxstep", "--yes", NULL };
    int rc = hfx_run (args, NULL, NULL);
    CHECK_INT (rc, 1);
    REQUIRE (hfx_.result);
    CHECK_INT (ufo_value_map_int (hfx_.result, "steps", 0), 3);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FAIL");
    ufo_value_t *host = hfx_llm_lines ("HostAgent");
    CHECK_INT (ufo_value_size (host), 3);
    ufo_value_destroy (&host);
    hfx_stop_all ();

    REQUIRE (hfx_start ("finish.json", "\"MAX_ROUND\": 2", 0) == 0);
    const char *three [] = { "one", "--request", "two", "--request", "three", "--device", "t0", "--task", "maxround",
                             "--yes", NULL };
    rc = hfx_run (three, NULL, NULL);
    CHECK_INT (rc, 2);                          //  `ufo run` refuses: a usage error, nothing submitted
    CHECK (hfx_.result == NULL);
    //  a session body with more requests than MAX_ROUND (another client): FAIL, nothing run
    ufo_tasks_t *tasks = ufo_tasks_new (afx_.broker.cmd, "test-client", NULL, NULL, NULL);
    REQUIRE (tasks);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "host");
    ufo_value_map_set_str (spec, "device", "t0");
    ufo_value_map_set (spec, "body", &(ufo_value_t *) { ufo_json_parse_str (
        "{\"session\": \"s-maxround\", \"task\": \"maxround\", \"requests\": [\"one\", \"two\", \"three\"]}", NULL) });
    char id [33];
    REQUIRE (ufo_tasks_submit (tasks, &spec, id, NULL) == 0);
    ufo_value_t *result = NULL;
    int64_t end = ufo_time_mono_ms () + 60000;
    while (!result && ufo_time_mono_ms () < end) {
        ufo_value_t *e = ufo_tasks_next (tasks, 100);
        if (e && !strcmp (ufo_value_map_str (e, "kind", ""), "result") && !strcmp (ufo_value_map_str (e, "task", ""), id))
            result = e;
        else
            ufo_value_destroy (&e);
    }
    REQUIRE (result);
    CHECK_STR (ufo_value_str (ufo_value_path (result, "body.status")), "FAIL");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (result, "body.error")), "MAX_ROUND is 2");
    CHECK_INT (ufo_value_int (ufo_value_path (result, "body.rounds")), 0);
    ufo_value_destroy (&result);
    ufo_tasks_destroy (&tasks);
    ufo_value_t *host2 = hfx_llm_lines ("HostAgent");
    CHECK_INT (ufo_value_size (host2), 0);      //  no round ran
    ufo_value_destroy (&host2);
    hfx_stop_all ();
}

//  Kills the first AppAgent worker once it waits for its second (slow) model reply, and
//  starts a second worker that gets the retried subtask.
static void
s_kill_first_app (void)
{
    static int64_t typed_at = 0, checked_at = 0;
    if (hfx_.app [0] <= 0) {
        typed_at = 0;
        return;
    }
    int64_t now = ufo_time_mono_ms ();
    if (!typed_at && now - checked_at > 200) {
        //  the first step is on the board: the worker is now waiting for its slow second reply
        checked_at = now;
        ufo_value_t *board = hfx_.session [0] ? hfx_board () : NULL;
        if (ufo_value_size (ufo_value_map_get (board, "trajectories")) >= 1)
            typed_at = now;
        ufo_value_destroy (&board);
        if (!hfx_.session [0]) {
            //  the session id is in request.json once the HostAgent has started
            char cmd [700];
            snprintf (cmd, sizeof cmd, "%s/logs/resume/request.json", afx_.broker.dir);
            ufo_value_t *req = ufo_json_parse_file (cmd, NULL, NULL);
            snprintf (hfx_.session, sizeof hfx_.session, "%s", ufo_value_map_str (req, "session", ""));
            ufo_value_destroy (&req);
        }
    }
    if (!typed_at || now - typed_at < 1500)
        return;
    typed_at = 0;
    kill (hfx_.app [0], SIGKILL);
    waitpid (hfx_.app [0], NULL, 0);
    hfx_.app [0] = 0;
    hfx_.app [1] = hfx_start_app (1);
}

UFO_TEST (test_app_worker_killed_resumes)
{
    REQUIRE (hfx_start ("resume.json", "", 1) == 0);
    hfx_.session [0] = 0;
    const char *args [] = { "Write the resume note in a new Mousepad note", "--device", "t0", "--task", "resume",
                            "--yes", NULL };
    int rc = hfx_run (args, NULL, s_kill_first_app);
    CHECK_INT (rc, 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    CHECK (hfx_.app [0] == 0);                    //  the first worker was killed mid-subtask
    int64_t xid = hfx_mousepad_xid ();
    char *text = xid ? afx_text (xid) : NULL;
    CHECK_STR (text, "Typed once");             //  typed once: the retry did not repeat the step
    free (text);
    ufo_value_t *app = hfx_llm_lines ("AppAgent");
    CHECK_INT (ufo_value_size (app), 3);        //  type, slow call (lost), finish after resuming
    ufo_value_destroy (&app);
    //  the retried worker's step numbers follow the recorded ones
    ufo_value_t *lines = hfx_log ("response.log");
    int64_t last = -1;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        int64_t step = ufo_value_map_int (ufo_value_list_at (lines, i), "Step", -1);
        CHECK (step > last);
        last = step;
    }
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

//  MCP servers configured for the HostAgent (issue 22): a real stdio server (node,
//  tests/mcp/scripted_server.js, whose tools are "good" and one with a broken schema) is
//  started by ufo-host; its usable tool is in the HostAgent's prompt, the scripted model
//  calls the tool it reads there, the call reaches the server with the reply's Args, and
//  the result is the step's result and the next prompt's tip (quoted in the final Comment).
UFO_TEST (test_host_mcp_tools)
{
    REQUIRE (hfx_start_host_mcp (NULL) == 0);
    const char *args [] = { "Add a note saying hello", "--device", "t0", "--task", "host-mcp", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    ufo_value_t *lines = hfx_log ("response.log");
    REQUIRE (ufo_value_size (lines) >= 2);
    const ufo_value_t *call = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (call, "ActionType", ""), "MCP");
    CHECK_STR (ufo_value_str (ufo_value_path (call, "Action.function")), "notes.good");
    CHECK_STR (ufo_value_str (ufo_value_path (call, "Action.args.text")), "hello from the HostAgent");
    //  the server's own answer: "called good with {...}"
    CHECK_CONTAINS (ufo_value_map_str (call, "Results", ""), "called good with {\"text\":\"hello from the HostAgent\"}");
    const ufo_value_t *last = ufo_value_list_at (lines, 1);
    CHECK_CONTAINS (ufo_value_map_str (last, "Comment", ""), "tool said: called good with");
    ufo_value_destroy (&lines);
    //  the broken tool was left out of the prompt
    ufo_value_t *req = hfx_log ("request.log");
    REQUIRE (ufo_value_size (req) >= 1);
    char *prompt = ufo_json_dump (ufo_value_list_at (req, 0), UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (prompt, "notes.good");
    CHECK (!strstr (prompt, "notes.broken"));
    free (prompt);
    ufo_value_destroy (&req);
    hfx_stop_all ();
}

//  The HostAgent's API tools follow the confirmation policy (desktop.confirm_actions): the
//  client's user is asked (a "confirm" event from the HostAgent, relayed by `ufo run`) and says
//  no; the tool is not called, the refusal is the step's result and the next prompt's tip.
UFO_TEST (test_host_mcp_confirm)
{
    REQUIRE (hfx_start_host_mcp ("[\"notes.*\"]") == 0);
    const char *args [] = { "Add a note saying hello", "--device", "t0", "--task", "host-mcp-confirm", "--interactive", NULL };
    hfx_run (args, "n\n", NULL);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    char *out = afx_read (hfx_.out);
    CHECK_CONTAINS (out, "\"kind\":\"confirm\"");
    CHECK_CONTAINS (out, "\"from\":\"HostAgent\"");
    free (out);
    ufo_value_t *lines = hfx_log ("response.log");
    REQUIRE (ufo_value_size (lines) >= 2);
    const ufo_value_t *call = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (call, "ActionType", ""), "MCP");
    CHECK_STR (ufo_value_map_str (call, "UserConfirm", ""), "no");
    const ufo_value_t *ok = ufo_value_list_at (ufo_value_map_get (call, "ActionSuccess"), 0);
    CHECK (!ufo_value_map_bool (ok, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (ok, "error", ""), "the user did not confirm the API tool notes.good");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (lines, 1), "Comment", ""), "refused: the user did not confirm");
    //  the tool never ran: its answer is nowhere
    char *all = ufo_json_dump (lines, UFO_JSON_COMPACT, NULL);
    CHECK (!strstr (all, "called good with"));
    free (all);
    ufo_value_destroy (&lines);
    hfx_stop_all ();
}

int
main (void)
{
    if (hfx_setup ("test_host_system") != 0)
        return 1;
    //  HOST_TEST_ONLY=name runs one case (debugging)
    const char *only = getenv ("HOST_TEST_ONLY");
#define S_CASE(name) if (!only || strstr (#name, only)) UFO_RUN (name)
    S_CASE (test_one_round_mousepad);
    S_CASE (test_human_output_report_no_keys);
    S_CASE (test_two_rounds_history);
    S_CASE (test_pending_answered_through_client);
    S_CASE (test_app_question_relayed);
    S_CASE (test_confirm_refused);
    S_CASE (test_confirm_answered_by_policy);
    S_CASE (test_request_json_llm_mode);
    S_CASE (test_assign_without_app_worker);
    S_CASE (test_garbage_ends_in_error);
    S_CASE (test_follower_plan);
    S_CASE (test_host_killed_session_resumes);
    S_CASE (test_host_killed_mid_round_continues);
    S_CASE (test_host_killed_during_evaluation_evaluates_once);
    S_CASE (test_cancel_from_client);
    S_CASE (test_bad_session_bodies);
    S_CASE (test_max_step_and_round);
    S_CASE (test_app_worker_killed_resumes);
    S_CASE (test_host_mcp_tools);
    S_CASE (test_host_mcp_confirm);
    hfx_stop_all ();
    afx_teardown ();
    return UFO_TEST_END ();
}
