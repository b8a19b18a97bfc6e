/*  test_experience.c - experience (issue 23) through the real processes: ufo-broker,
    ufo-host, ufo-app, ufo-eval and `ufo run` on real mousepad, the scripted LLM server
    (tests/data/host_agent/experience.json, whose ExperienceSummarizer builds the record from
    the steps it reads in its prompt).
      1. SAVE_EXPERIENCE auto: a session whose evaluation says complete becomes a record on
         the broker (request, applications, subtasks, steps by control name and action).
      2. RAG_EXPERIENCE: a second session with a similar request gets it in the HostAgent's
         and the AppAgent's prompts (request.log experience_examples).
      3. The broker restarted: the record is still there (`ufo knowledge list`).
      4. A HostAgent of another device gets it too, over its one command connection to the
         broker (counted by tests/tools/ufo_test_proxy.c in front of the broker): the
         experience index's calls share it.
      5. A record with missing fields on the broker is skipped with a log line; delete works.
      6. RAG_ONLINE_SEARCH against tests/ufo-search-server (SearXNG shape): the results are in
         both agents' prompts and request.log (online_docs); a search endpoint too slow for
         knowledge.search_timeout_ms leaves the session as it was, with a log line.
      7. RAG_DEMONSTRATION: a demonstration on the broker reaches the AppAgent's prompt
         (demonstration_examples), not the HostAgent's. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "host_fixture.h"
#include "proxy_stats.h"
#include "search_server_fixture.h"

#define S_REQUEST "Write 'Hello from the HostAgent' in a new Mousepad note"

static ufo_value_t *
s_requests_of (const char *agent)
{
    ufo_value_t *all = hfx_log ("request.log"), *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (all); i++) {
        const ufo_value_t *r = ufo_value_list_at (all, i);
        if (strcmp (ufo_value_map_str (r, "Agent", ""), agent) == 0)
            ufo_value_list_push (out, &(ufo_value_t *) { ufo_value_dup (r) });
    }
    ufo_value_destroy (&all);
    return out;
}

//  Every request.log line of agent carries one experience record of S_REQUEST, and the
//  prompt shows it.
static void
s_check_examples (const char *agent, size_t want_min)
{
    ufo_value_t *reqs = s_requests_of (agent);
    CHECK (ufo_value_size (reqs) >= 1);
    for (size_t i = 0; i < ufo_value_size (reqs); i++) {
        const ufo_value_t *r = ufo_value_list_at (reqs, i);
        const ufo_value_t *ex = ufo_value_map_get (r, "experience_examples");
        if (ufo_value_size (ex) < want_min) {
            UFO_FAIL_ ("%s request.log line %zu: %zu experience examples", agent, i, ufo_value_size (ex));
            continue;
        }
        const ufo_value_t *e0 = ufo_value_list_at (ex, 0);
        CHECK_STR (ufo_value_map_str (e0, "request", ""), S_REQUEST);
        CHECK_STR (ufo_value_str (ufo_value_path (e0, "subtasks.0.steps.0.action")), "set_edit_text");
        char *prompt = ufo_json_dump (ufo_value_map_get (r, "prompt"), 0, NULL);
        CHECK_CONTAINS (prompt, "[Experience from Similar Requests Done Before:]");
        CHECK_CONTAINS (prompt, "set_edit_text on \\\"");
        free (prompt);
    }
    ufo_value_destroy (&reqs);
}

//  Runs `ufo knowledge ARGS` against the fixture's broker (afx_cli).
static int
s_cli (const char *args, char *out, size_t size)
{
    char line [1200];
    snprintf (line, sizeof line, "knowledge %s", args);
    return afx_cli (line, out, size);
}

static char s_id [80];


UFO_TEST (test_saved_when_complete)
{
    REQUIRE (hfx_start ("experience.json", "\"SAVE_EXPERIENCE\": \"auto\", \"RAG_EXPERIENCE\": true", 1) == 0);
    const char *args [] = { S_REQUEST, "--device", "t0", "--task", "exp-1", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_str (ufo_value_path (hfx_.result, "evaluation.complete")), "yes");
    //  nothing to retrieve yet: an empty list in request.log, no block in the prompt
    ufo_value_t *reqs = s_requests_of ("HostAgent");
    const ufo_value_t *r0 = ufo_value_list_at (reqs, 0);
    CHECK (ufo_value_map_has (r0, "experience_examples"));
    CHECK_INT (ufo_value_size (ufo_value_map_get (r0, "experience_examples")), 0);
    ufo_value_destroy (&reqs);
    //  the record, read from the broker by the test itself
    ufo_error_t err = {0};
    ufo_value_t *records = ufo_experience_list (afx_.bb, "experience", &err);
    REQUIRE (records && ufo_value_size (records) == 1);
    const ufo_value_t *e = ufo_value_list_at (records, 0);
    snprintf (s_id, sizeof s_id, "%s", ufo_value_map_str (e, "id", ""));
    const ufo_value_t *rec = ufo_value_map_get (e, "record");
    CHECK_STR (ufo_value_map_str (rec, "request", ""), S_REQUEST);
    CHECK_STR (ufo_value_str (ufo_value_path (rec, "applications.0")), "mousepad");
    CHECK_STR (ufo_value_str (ufo_value_path (rec, "subtasks.0.subtask")),
               "Type 'Hello from the HostAgent' into the Mousepad document");
    CHECK_STR (ufo_value_str (ufo_value_path (rec, "subtasks.0.steps.0.action")), "set_edit_text");
    CHECK_STR (ufo_value_map_str (rec, "session", ""), hfx_.session);
    CHECK_STR (ufo_value_map_str (rec, "device", ""), "t0");
    CHECK_STR (ufo_value_map_str (rec, "evaluation", ""), "yes");
    //  the control is named as the board's trajectory names it (its name, not a label)
    ufo_value_t *board = hfx_board ();
    ufo_value_t *traj = ufo_experience_trajectory (board);
    REQUIRE (ufo_value_size (traj) >= 1);
    CHECK_STR (ufo_value_str (ufo_value_path (rec, "subtasks.0.steps.0.control")),
               ufo_value_map_str (ufo_value_list_at (traj, 0), "control", "?"));
    ufo_value_destroy (&traj);
    ufo_value_destroy (&board);
    ufo_value_destroy (&records);
    //  the summariser was asked once, and the note is really there
    ufo_value_t *calls = hfx_llm_lines ("ExperienceSummarizer");
    CHECK_INT (ufo_value_size (calls), 1);
    ufo_value_destroy (&calls);
    int64_t xid = hfx_mousepad_xid ();
    REQUIRE (xid);
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello from the HostAgent");
    free (text);
    hfx_stop_all ();
}

UFO_TEST (test_retrieved_in_both_prompts)
{
    REQUIRE (*s_id);
    //  a similar request; this session is not saved (always_not)
    REQUIRE (hfx_start ("experience.json", "\"SAVE_EXPERIENCE\": \"always_not\", \"RAG_EXPERIENCE\": true", 1) == 0);
    const char *args [] = { "Write 'Hello' in a new Mousepad note", "--device", "t0", "--task", "exp-2", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    s_check_examples ("HostAgent", 1);
    s_check_examples ("AppAgent", 1);
    ufo_error_t err = {0};
    ufo_value_t *records = ufo_experience_list (afx_.bb, "experience", &err);
    CHECK_INT (ufo_value_size (records), 1);
    ufo_value_destroy (&records);
    hfx_stop_all ();
}

UFO_TEST (test_broker_restart_and_other_device)
{
    REQUIRE (*s_id);
    //  the broker stopped and started again on the same data directory
    CHECK_INT (bb_test_stop (&afx_.broker, SIGTERM), 0);
    bb_test_start (&afx_.broker, NULL);
    char out [8192];
    int rc = -1;
    for (int i = 0; i < 50 && rc != 0; i++) {
        rc = s_cli ("list", out, sizeof out);
        if (rc != 0)
            usleep (100000);
    }
    CHECK_INT (rc, 0);
    CHECK_CONTAINS (out, s_id);
    CHECK_CONTAINS (out, "1 experience record");
    CHECK_INT (s_cli ("show", out, sizeof out), 2);
    char args [200];
    snprintf (args, sizeof args, "show %s", s_id);
    CHECK_INT (s_cli (args, out, sizeof out), 0);
    CHECK_CONTAINS (out, S_REQUEST);
    CHECK_CONTAINS (out, "set_edit_text on \"");

    //  a HostAgent and an AppAgent of device t1 (the t0 agents are not running); the
    //  HostAgent talks to the broker through a proxy that counts its connections
    REQUIRE (hfx_start ("experience.json", "\"RAG_EXPERIENCE\": true", 0) == 0);
    hfx_kill (&hfx_.host);
    char bin [600], log [400], front [400], stats [400];
    snprintf (front, sizeof front, "ipc://%s/proxy", afx_.broker.dir);
    snprintf (stats, sizeof stats, "%s/proxy.stats", afx_.broker.dir);
    snprintf (bin, sizeof bin, "%s/tests/ufo-test-proxy", afx_build ());
    pid_t proxy = fork ();
    if (proxy == 0) {
        execl (bin, bin, "--front", front, "--back", afx_.broker.cmd, "--stats", stats, (char *) NULL);
        _exit (127);
    }
    REQUIRE (proxy > 0);
    WAIT_UNTIL (proxy_connections (stats) == 0, 10000);
    snprintf (bin, sizeof bin, "%s/host_agent/ufo-host", afx_build ());
    snprintf (log, sizeof log, "%s/host2.log", afx_.broker.dir);
    const char *hargs [] = { "--device", "t1", "--config", hfx_.cfg, "--broker", front, "--bus", afx_.broker.bus, NULL };
    hfx_.host2 = hfx_spawn (bin, hargs, log);
    snprintf (bin, sizeof bin, "%s/app_agent/ufo-app", afx_build ());
    snprintf (log, sizeof log, "%s/app-1.log", afx_.broker.dir);
    const char *aargs [] = { "--app", "mousepad", "--device", "t1", "--config", hfx_.cfg, "--broker", afx_.broker.cmd, NULL };
    hfx_.app [1] = hfx_spawn (bin, aargs, log);
    CHECK (hfx_wait_worker ("host", "t1", 30000));     //  else `ufo run --device t1` is refused
    const char *run [] = { "Write 'Hello' in a new Mousepad note", "--device", "t1", "--task", "exp-3", "--yes", NULL };
    CHECK_INT (hfx_run (run, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    s_check_examples ("HostAgent", 1);
    s_check_examples ("AppAgent", 1);
    //  the session retrieved experience (bb.list, bb.snapshot) on the host's one connection
    CHECK_INT (proxy_connections (stats), 1);
    hfx_stop_all ();
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
}

UFO_TEST (test_bad_record_and_delete)
{
    REQUIRE (*s_id);
    //  a board that looks like a record but lacks fields: skipped with a log line
    ufo_value_t *item = ufo_json_parse_str ("{\"experience\": {\"request\": \"x\", \"subtasks\": 3}}", NULL);
    ufo_error_t err = {0};
    REQUIRE (ufo_bb_client_add (afx_.bb, "experience:broken-1", "requests", &item, NULL, NULL, &err) == 0);
    char out [8192];
    CHECK_INT (s_cli ("list", out, sizeof out), 0);
    CHECK_CONTAINS (out, "experience board experience:broken-1 skipped");
    CHECK_CONTAINS (out, "1 experience record");
    //  the same record through the store's own check
    ufo_value_t *bad = ufo_json_parse_str ("{\"request\": \"x\", \"applications\": [], \"subtasks\": [{\"subtask\": \"s\"}]}", NULL);
    char id [64];
    CHECK_INT (ufo_experience_save (afx_.bb, "experience", &bad, id, &err), -1);
    CHECK_CONTAINS (err.message, "subtasks [0]");
    char args [200];
    snprintf (args, sizeof args, "delete %s", s_id);
    CHECK_INT (s_cli (args, out, sizeof out), 0);
    CHECK_INT (s_cli (args, out, sizeof out), 1);           //  gone
    CHECK_INT (s_cli ("delete ../etc", out, sizeof out), 1);
    CHECK_CONTAINS (out, "not an experience id");
    CHECK_INT (s_cli ("list", out, sizeof out), 0);
    CHECK_CONTAINS (out, "0 experience records");
}

UFO_TEST (test_online_search_in_prompts)
{
    char port_file [400], log [400];
    snprintf (port_file, sizeof port_file, "%s/search-port", afx_.broker.dir);
    snprintf (log, sizeof log, "%s/search.log", afx_.broker.dir);
    pid_t server = 0;
    int port = ssfx_start (port_file, log, &server);
    REQUIRE (port > 0);
    char extra [600];
    snprintf (extra, sizeof extra, "\"RAG_ONLINE_SEARCH\": true, \"RAG_ONLINE_RETRIEVED_TOPK\": 1,"
              " \"knowledge\": {\"search_provider\": \"searxng\", \"search_endpoint\": \"http://127.0.0.1:%d/searxng/search\"}",
              port);
    REQUIRE (hfx_start ("experience.json", extra, 1) == 0);
    const char *args [] = { S_REQUEST, "--device", "t0", "--task", "web-1", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    const char *agents [] = { "HostAgent", "AppAgent" };
    for (int k = 0; k < 2; k++) {
        ufo_value_t *reqs = s_requests_of (agents [k]);
        CHECK (ufo_value_size (reqs) >= 1);
        for (size_t i = 0; i < ufo_value_size (reqs); i++) {
            const ufo_value_t *r = ufo_value_list_at (reqs, i);
            const ufo_value_t *docs = ufo_value_map_get (r, "online_docs");
            //  the AppAgent adds its own search for the subtask once it has come (it never
            //  waits for it): the HostAgent's result first, then at most one of its own
            if (k == 0)
                CHECK_INT (ufo_value_size (docs), 1);
            else {
                CHECK (ufo_value_size (docs) >= 1 && ufo_value_size (docs) <= 2);
                if (ufo_value_size (docs) == 2) {
                    const char *own = ufo_value_str (ufo_value_path (docs, "1.title"));
                    CHECK (own && strncmp (own, "SearXNG result 1 about ", 23) == 0
                           && strcmp (own, "SearXNG result 1 about " S_REQUEST) != 0);
                }
            }
            CHECK_STR (ufo_value_str (ufo_value_path (docs, "0.title")), "SearXNG result 1 about " S_REQUEST);
            CHECK_STR (ufo_value_str (ufo_value_path (docs, "0.url")), "https://example.org/searx/1");
            char *prompt = ufo_json_dump (ufo_value_map_get (r, "prompt"), 0, NULL);
            CHECK_CONTAINS (prompt, "[Web Search Results:]\\n- SearXNG result 1 about");
            free (prompt);
        }
        ufo_value_destroy (&reqs);
    }
    hfx_stop_all ();
    //  two searches reached the server: the HostAgent's for the request, the AppAgent's for
    //  its subtask
    char *search_log = afx_read (log);
    int searches = 0;
    for (const char *p = search_log; p && (p = strstr (p, "/searxng/search?q=")); p++)
        searches++;
    CHECK_INT (searches, 2);
    free (search_log);

    //  too slow: the round goes on after the timeout, without results
    snprintf (extra, sizeof extra, "\"RAG_ONLINE_SEARCH\": true, \"knowledge\": {\"search_provider\": \"searxng\","
              " \"search_endpoint\": \"http://127.0.0.1:%d/slow\", \"search_timeout_ms\": 1000}", port);
    REQUIRE (hfx_start ("experience.json", extra, 1) == 0);
    const char *args2 [] = { S_REQUEST, "--device", "t0", "--task", "web-2", "--yes", NULL };
    CHECK_INT (hfx_run (args2, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    ufo_value_t *reqs = s_requests_of ("HostAgent");
    const ufo_value_t *docs = ufo_value_map_get (ufo_value_list_at (reqs, 0), "online_docs");
    CHECK (docs && ufo_value_size (docs) == 0);
    ufo_value_destroy (&reqs);
    char path [500];
    snprintf (path, sizeof path, "%s/host.log", afx_.broker.dir);
    char *host_log = afx_read (path);
    CHECK_CONTAINS (host_log, "online search failed, going on without it");
    CHECK_CONTAINS (host_log, "timed out after 1000 ms");
    free (host_log);
    hfx_stop_all ();
    ssfx_stop (&server);
}

UFO_TEST (test_demonstration_in_app_prompt)
{
    //  a demonstration as `ufo record` saves it, of a subtask like the one the HostAgent assigns
    ufo_value_t *demo = ufo_json_parse_str (
        "{\"request\": \"Type a greeting into the Mousepad document\", \"applications\": [\"mousepad\"],"
        " \"subtasks\": [{\"subtask\": \"Type a greeting into the Mousepad document\", \"application\": \"mousepad\","
        " \"steps\": [{\"control\": \"\", \"control_type\": \"Edit\", \"action\": \"click_input\", \"args\": {\"button\": \"left\"}},"
        " {\"control\": \"\", \"control_type\": \"Edit\", \"action\": \"keyboard_input\", \"args\": {\"keys\": \"Hello there\"}}]}],"
        " \"source\": \"recorded\"}", NULL);
    REQUIRE (demo);
    char id [64];
    ufo_error_t err = {0};
    REQUIRE (ufo_experience_save (afx_.bb, "demonstration", &demo, id, &err) == 0);
    REQUIRE (hfx_start ("experience.json", "\"RAG_DEMONSTRATION\": true, \"RAG_DEMONSTRATION_RETRIEVED_TOPK\": 1", 1) == 0);
    const char *args [] = { S_REQUEST, "--device", "t0", "--task", "demo-1", "--yes", NULL };
    CHECK_INT (hfx_run (args, NULL, NULL), 0);
    REQUIRE (hfx_.result);
    CHECK_STR (ufo_value_map_str (hfx_.result, "status", ""), "FINISH");
    ufo_value_t *reqs = s_requests_of ("AppAgent");
    CHECK (ufo_value_size (reqs) >= 1);
    for (size_t i = 0; i < ufo_value_size (reqs); i++) {
        const ufo_value_t *r = ufo_value_list_at (reqs, i);
        const ufo_value_t *ex = ufo_value_map_get (r, "demonstration_examples");
        CHECK_INT (ufo_value_size (ex), 1);
        CHECK_STR (ufo_value_str (ufo_value_path (ex, "0.id")), id);
        char *prompt = ufo_json_dump (ufo_value_map_get (r, "prompt"), 0, NULL);
        CHECK_CONTAINS (prompt, "[Demonstrations by a Person of Similar Tasks:]");
        CHECK_CONTAINS (prompt, "keyboard_input on");
        free (prompt);
    }
    ufo_value_destroy (&reqs);
    //  the HostAgent's own prompts do not carry them (as in the original)
    reqs = s_requests_of ("HostAgent");
    for (size_t i = 0; i < ufo_value_size (reqs); i++)
        CHECK (!ufo_value_map_has (ufo_value_list_at (reqs, i), "demonstration_examples"));
    ufo_value_destroy (&reqs);
    CHECK_INT (ufo_experience_delete (afx_.bb, "demonstration", id, &err), 0);
    hfx_stop_all ();
}

int
main (void)
{
    if (afx_setup ("test_experience") != 0) {
        fprintf (stderr, "no desktop / broker\n");
        afx_teardown ();
        return 1;
    }
    UFO_RUN (test_saved_when_complete);
    UFO_RUN (test_retrieved_in_both_prompts);
    UFO_RUN (test_broker_restart_and_other_device);
    UFO_RUN (test_bad_record_and_delete);
    UFO_RUN (test_online_search_in_prompts);
    UFO_RUN (test_demonstration_in_app_prompt);
    hfx_stop_all ();
    afx_teardown ();
    return UFO_TEST_END ();
}
