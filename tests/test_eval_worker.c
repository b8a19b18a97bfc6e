/*  test_eval_worker.c - ufo-eval on the bus: a real ufo-broker, the scripted LLM server and
    ufo-eval processes; evaluation tasks submitted through ufo_tasks as the HostAgent does.
    Checks the result body, evaluation.log, the verdict on the session board, an evaluation
    from the board alone (logs on another machine: trajectory, request, screenshot blob), a malformed
    body (failed, with the reason), cancellation of an evaluation in flight, redelivery to a
    new ufo-eval after the first one is killed mid-evaluation, and a clean SIGTERM exit that
    hands the evaluation in flight back to the broker. The first ufo-eval reaches the broker
    through tests/tools/ufo_test_proxy.c, which counts its connections: one (worker side and
    blackboard calls on one socket). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "ufo_wait.h"
#include "bb_test_util.h"
#include "eval_fixture.h"
#include "proxy_stats.h"

static bb_test_broker_t s_broker;
static char s_logs [400];
static char s_config [400];
static char s_server_log [400];
static pid_t s_server = -1;
static int s_port = 0;

static const char *s_script =
"{\"entries\": [\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:bus]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"Step 2 saved notes.txt.\", \"sub_scores\": {\"text typed\": \"yes\", "
"\"file saved\": \"yes\"}, \"complete\": \"yes\"}, \"usage\": {\"prompt_tokens\": 2000, \"completion_tokens\": 50}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:rounds] round 1\", \"not_contains\": \"[step-of-round-0]\"},\n"
"  \"times\": 0, \"content_json\": {\"reason\": \"round 1 only\", \"sub_scores\": {\"second line\": \"yes\"}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:slow]\"}, \"times\": 0, \"latency_ms\": 30000,\n"
"  \"content_json\": {\"reason\": \"too late\", \"sub_scores\": {}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:requeue]\"}, \"times\": 1, \"latency_ms\": 30000,\n"
"  \"content_json\": {\"reason\": \"first worker\", \"sub_scores\": {}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:requeue]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"second worker\", \"sub_scores\": {\"done\": \"no\"}, \"complete\": \"no\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:term]\"}, \"times\": 1, \"latency_ms\": 30000,\n"
"  \"content_json\": {\"reason\": \"stopped worker\", \"sub_scores\": {}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:term]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"after SIGTERM\", \"sub_scores\": {}, \"complete\": \"unsure\"}}\n"
"]}\n";

static char s_proxy_front [400];       //  the first ufo-eval's endpoint (ufo-test-proxy)
static char s_proxy_stats [400];

static pid_t
s_eval_start (int n)
{
    char bin [PATH_MAX], prompts [PATH_MAX], log [PATH_MAX];
    snprintf (bin, sizeof bin, "%s/eval_agent/ufo-eval", getenv ("UFO_BUILD_DIR"));
    snprintf (prompts, sizeof prompts, "%s/prompts", getenv ("UFO_SOURCE_DIR"));
    snprintf (log, sizeof log, "%s/eval-%d.log", s_broker.dir, n);
    pid_t pid = fork ();
    if (pid == 0) {
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0)
            dup2 (fd, STDERR_FILENO);
        execl (bin, bin, "--config", s_config, "--broker", n == 1 ? s_proxy_front : s_broker.cmd, "--prompts", prompts,
               "--capacity", "2", "--name", n == 1 ? "eval-one" : n == 2 ? "eval-two" : "eval-three", (char *) NULL);
        _exit (127);
    }
    return pid;
}

//  Submits an evaluation task; returns its id in id_out.
static int
s_submit (ufo_tasks_t *tasks, const char *session, ufo_value_t **body_p, char id_out [33])
{
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "eval");
    ufo_value_map_set_str (spec, "session", session);
    ufo_value_map_set (spec, "body", body_p);
    ufo_error_t err;
    int rc = ufo_tasks_submit (tasks, &spec, id_out, &err);
    if (rc != 0)
        fprintf (stderr, "submit: %s\n", err.message);
    return rc;
}

static ufo_value_t *
s_body (const char *session, const char *task, const char *level, int64_t round, const char *request)
{
    ufo_value_t *b = ufo_value_new_map ();
    ufo_value_map_set_str (b, "session", session);
    ufo_value_map_set_str (b, "task", task);
    ufo_value_map_set_str (b, "log_root", s_logs);
    ufo_value_map_set_str (b, "level", level);
    if (round >= 0)
        ufo_value_map_set_int (b, "round", round);
    ufo_value_t *requests = ufo_value_new_list ();
    if (request)
        ufo_value_list_push_str (requests, request);
    ufo_value_map_set (b, "requests", &requests);
    ufo_value_map_set_bool (b, "all_screenshots", true);
    return b;
}

//  The result event of task id (caller owns), waiting at most timeout_ms.
static ufo_value_t *
s_result (ufo_tasks_t *tasks, const char *id, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 100) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        if (!ev)
            continue;
        if (strcmp (ufo_value_map_str (ev, "kind", ""), "result") == 0
        &&  strcmp (ufo_value_map_str (ev, "task", ""), id) == 0)
            return ev;
        ufo_value_destroy (&ev);
    }
    return NULL;
}

//  True once the LLM server has logged a request whose last message contains tag.
static bool
s_server_saw (const char *tag, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 50) {
        FILE *f = fopen (s_server_log, "r");
        bool seen = false;
        char line [65536];
        while (f && !seen && fgets (line, sizeof line, f))
            seen = strstr (line, tag) != NULL;
        if (f)
            fclose (f);
        if (seen)
            return true;
        usleep (50000);
    }
    return false;
}

UFO_TEST (test_on_the_bus)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "bus", "[case:bus]", &o, &info) == 0);
    eval_fixture_opts_t o2 = { .rounds = 2, .screenshots = true };
    REQUIRE (eval_fixture_make (s_logs, "rounds", "[case:rounds]", &o2, &info) == 0);
    eval_fixture_opts_t o3 = { .rounds = 1 };
    REQUIRE (eval_fixture_make (s_logs, "slow", "[case:slow]", &o3, &info) == 0);
    REQUIRE (eval_fixture_make (s_logs, "requeue", "[case:requeue]", &o3, &info) == 0);
    REQUIRE (eval_fixture_make (s_logs, "term", "[case:term]", &o3, &info) == 0);

    char proxy_bin [PATH_MAX];
    snprintf (proxy_bin, sizeof proxy_bin, "%s/tests/ufo-test-proxy", getenv ("UFO_BUILD_DIR"));
    snprintf (s_proxy_front, sizeof s_proxy_front, "ipc://%s/proxy", s_broker.dir);
    snprintf (s_proxy_stats, sizeof s_proxy_stats, "%s/proxy.stats", s_broker.dir);
    pid_t proxy = fork ();
    if (proxy == 0) {
        execl (proxy_bin, proxy_bin, "--front", s_proxy_front, "--back", s_broker.cmd, "--stats", s_proxy_stats,
               (char *) NULL);
        _exit (127);
    }
    WAIT_UNTIL (proxy_connections (s_proxy_stats) == 0, 10000);
    pid_t eval1 = s_eval_start (1);
    ufo_error_t err;
    ufo_tasks_t *tasks = ufo_tasks_new (s_broker.cmd, "test-eval-worker", NULL, NULL, &err);
    REQUIRE (tasks);

    //  1. A session evaluation: result, evaluation.log, board.
    char id [33];
    ufo_value_t *body = s_body ("sess-bus", "bus", "session", -1, NULL);
    REQUIRE (s_submit (tasks, "sess-bus", &body, id) == 0);
    ufo_value_t *ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "done");
    const ufo_value_t *res = ufo_value_map_get (ev, "body");
    CHECK_STR (ufo_value_map_str (res, "complete", ""), "yes");
    CHECK_STR (ufo_value_map_str (res, "screenshots", ""), "all");
    CHECK_INT (ufo_value_map_int (res, "images", 0), 6);
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (res, "cost"), "prompt_tokens", 0), 2000);
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (res, "sub_scores"), "file saved", ""), "yes");
    ufo_value_destroy (&ev);
    //  the first ufo-eval holds one connection to the broker (through the proxy)
    CHECK_INT (proxy_connections (s_proxy_stats), 1);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/bus/evaluation.log", s_logs);
    CHECK (access (path, R_OK) == 0);
    ufo_bb_client_t *bb = ufo_bb_client_new (s_broker.cmd, NULL, &err);
    REQUIRE (bb);
    ufo_value_t *snap = ufo_bb_client_snapshot (bb, "sess-bus", "requests", 0, &err);
    REQUIRE (snap);
    char *text = ufo_json_dump (snap, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (text, "\"evaluation_session\":{\"level\":\"session\",\"complete\":\"yes\"");
    free (text);
    ufo_value_destroy (&snap);

    //  2. Round level with the HostAgent's one-element requests list.
    body = s_body ("sess-rounds", "rounds", "round", 1, "[case:rounds] round 1: add a second line");
    REQUIRE (s_submit (tasks, "sess-rounds", &body, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    res = ufo_value_map_get (ev, "body");
    CHECK_STR (ufo_value_map_str (res, "reason", ""), "round 1 only");
    CHECK_STR (ufo_value_map_str (res, "level", ""), "round");
    CHECK_INT (ufo_value_map_int (res, "round", -1), 1);
    ufo_value_destroy (&ev);
    snap = ufo_bb_client_snapshot (bb, "sess-rounds", "requests", 0, &err);
    text = ufo_json_dump (snap, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (text, "evaluation_round_1");
    free (text);
    ufo_value_destroy (&snap);

    //  3. A malformed body: failed, with the reason; the worker keeps serving.
    ufo_value_t *bad = ufo_value_new_map ();
    ufo_value_map_set_int (bad, "task", 5);
    REQUIRE (s_submit (tasks, "sess-bad", &bad, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_map_str (ev, "reason", ""), "\"task\"");
    ufo_value_destroy (&ev);
    bad = ufo_value_new_string ("not even a map");
    REQUIRE (s_submit (tasks, "sess-bad", &bad, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "failed");
    ufo_value_destroy (&ev);

    //  4. Cancelling an evaluation in flight (its LLM reply would take 30 s).
    body = s_body ("sess-slow", "slow", "session", -1, NULL);
    REQUIRE (s_submit (tasks, "sess-slow", &body, id) == 0);
    CHECK (s_server_saw ("[case:slow]", 20000));
    CHECK_INT (ufo_tasks_cancel (tasks, id), 0);
    ev = s_result (tasks, id, 10000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "cancelled");
    ufo_value_destroy (&ev);

    //  4b. Logs on another machine: the verdict comes from the session's board (trajectory
    //  items, the round's request, a screenshot blob).
    {
        ufo_value_t *items = ufo_json_parse_str (
            "[{\"Step\": 1, \"Subtask\": \"type the note [remote-step]\", \"Action\": {\"function\": "
            "\"set_edit_text\"}, \"UserConfirm\": \"\", \"Round\": 0, \"SubtaskIndex\": 0, "
            "\"Application\": \"mousepad\", \"Status\": \"FINISH\"}]", &err);
        REQUIRE (ufo_bb_client_add (bb, "sess-remote", "trajectories", &items, NULL, NULL, &err) == 0);
        items = ufo_json_parse_str ("{\"request_0\": \"[case:bus] remote session\"}", &err);
        REQUIRE (ufo_bb_client_add (bb, "sess-remote", "requests", &items, NULL, NULL, &err) == 0);
        snprintf (path, sizeof path, "%s/bus/action_step1.png", s_logs);
        FILE *f = fopen (path, "rb");
        REQUIRE (f);
        char png [1 << 20];
        size_t len = fread (png, 1, sizeof png, f);
        fclose (f);
        char hex [65];
        REQUIRE (ufo_bb_client_blob_put (bb, png, len, hex, &err) == 0);
        ufo_value_t *shot = ufo_json_parse_str ("{\"metadata\": {\"Round\": 0, \"reason\": \"typed\"}, "
                                                "\"image_path\": \"action_step1.png\", \"mime\": \"image/png\"}", &err);
        ufo_value_map_set_str (shot, "blob", hex);
        REQUIRE (ufo_bb_client_add (bb, "sess-remote", "screenshots", &shot, NULL, NULL, &err) == 0);
        ufo_value_t *remote = s_body ("sess-remote", "remote", "session", -1, NULL);
        ufo_value_map_set_str (remote, "log_root", "/nonexistent/ufo-logs");
        REQUIRE (s_submit (tasks, "sess-remote", &remote, id) == 0);
        ev = s_result (tasks, id, 30000);
        REQUIRE (ev);
        res = ufo_value_map_get (ev, "body");
        CHECK_STR (ufo_value_map_str (ev, "status", ""), "done");
        CHECK_STR (ufo_value_map_str (res, "error", "?"), "");
        CHECK_STR (ufo_value_map_str (res, "source", ""), "board");
        CHECK_STR (ufo_value_map_str (res, "request", ""), "[case:bus] remote session");
        CHECK_INT (ufo_value_map_int (res, "images", 0), 1);
        CHECK_STR (ufo_value_map_str (res, "complete", ""), "yes");
        ufo_value_destroy (&ev);
        CHECK (s_server_saw ("[remote-step]", 1000));
    }

    //  A log_root that climbs out with "..": refused, nothing read or written there.
    body = s_body ("sess-escape", "escape", "session", -1, "[case:bus] escape");
    ufo_value_map_set_str (body, "log_root", "/tmp/../etc");
    REQUIRE (s_submit (tasks, "sess-escape", &body, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (ev, "body.error")), "log_root");
    ufo_value_destroy (&ev);

    //  A session's own model that cannot be used (a key on the bus, a key variable this
    //  worker lacks): refused with the reason, nothing asked, the worker keeps serving.
    body = s_body ("sess-model", "escape", "session", -1, "[case:bus] model");
    ufo_value_map_set (body, "model", &(ufo_value_t *) { ufo_json_parse_str ("{\"api_key\": \"sk-leak-0000\"}", NULL) });
    REQUIRE (s_submit (tasks, "sess-model", &body, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (ev, "body.error")), "API keys never travel");
    CHECK (!strstr (ufo_value_str (ufo_value_path (ev, "body.error")) ?: "", "sk-leak"));
    ufo_value_destroy (&ev);
    unsetenv ("UFO_TEST_NO_SUCH_KEY");
    body = s_body ("sess-model2", "escape", "session", -1, "[case:bus] model");
    ufo_value_map_set (body, "model", &(ufo_value_t *) { ufo_json_parse_str (
        "{\"model\": \"m2\", \"api_key_env\": \"UFO_TEST_NO_SUCH_KEY\"}", NULL) });
    REQUIRE (s_submit (tasks, "sess-model2", &body, id) == 0);
    ev = s_result (tasks, id, 30000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "failed");
    CHECK_CONTAINS (ufo_value_str (ufo_value_path (ev, "body.error")),
                    "EVALUATION_AGENT: the model override's key variable UFO_TEST_NO_SUCH_KEY is not set");
    ufo_value_destroy (&ev);
    CHECK (!s_server_saw ("[case:bus] model", 200));

    //  5. The worker dies mid-evaluation: the task is redelivered to a new ufo-eval.
    body = s_body ("sess-requeue", "requeue", "session", -1, NULL);
    REQUIRE (s_submit (tasks, "sess-requeue", &body, id) == 0);
    CHECK (s_server_saw ("[case:requeue]", 20000));
    kill (eval1, SIGKILL);
    waitpid (eval1, NULL, 0);
    pid_t eval2 = s_eval_start (2);
    ev = s_result (tasks, id, 40000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "done");
    CHECK (ufo_value_map_int (ev, "attempts", 0) >= 2);
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (ev, "body"), "reason", ""), "second worker");
    ufo_value_destroy (&ev);

    //  6. SIGTERM with an evaluation in flight: a clean exit, and the task is handed back
    //  to the broker at once and completed by the next ufo-eval.
    body = s_body ("sess-term", "term", "session", -1, NULL);
    REQUIRE (s_submit (tasks, "sess-term", &body, id) == 0);
    CHECK (s_server_saw ("[case:term]", 20000));
    kill (eval2, SIGTERM);
    CHECK_INT (ufo_wait_exit (eval2, 10000), 0);
    pid_t eval3 = s_eval_start (3);
    ev = s_result (tasks, id, 40000);
    REQUIRE (ev);
    CHECK_STR (ufo_value_map_str (ev, "status", ""), "done");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (ev, "body"), "reason", ""), "after SIGTERM");
    ufo_value_destroy (&ev);
    kill (eval3, SIGTERM);
    CHECK_INT (ufo_wait_exit (eval3, 10000), 0);
    ufo_bb_client_destroy (&bb);
    ufo_tasks_destroy (&tasks);
    kill (proxy, SIGTERM);
    CHECK (ufo_wait_exit (proxy, 10000) >= 0);
    //  In a sanitizer build the ufo-eval processes report there (eval1 was SIGKILLed).
    for (int n = 2; n <= 3; n++) {
        char log [PATH_MAX], line [4096];
        snprintf (log, sizeof log, "%s/eval-%d.log", s_broker.dir, n);
        FILE *f = fopen (log, "r");
        while (f && fgets (line, sizeof line, f)) {
            CHECK (!strstr (line, "Sanitizer"));
            CHECK (!strstr (line, "runtime error"));
        }
        if (f)
            fclose (f);
    }
}

int
main (void)
{
    if (!getenv ("UFO_BUILD_DIR") || !getenv ("UFO_SOURCE_DIR")) {
        fprintf (stderr, "UFO_BUILD_DIR and UFO_SOURCE_DIR are required\n");
        return 1;
    }
    bb_test_init (&s_broker, "test-eval-worker");
    snprintf (s_logs, sizeof s_logs, "%s/logs", s_broker.dir);
    mkdir (s_logs, 0755);
    s_port = eval_fixture_server_start (s_broker.dir, s_script, s_server_log, sizeof s_server_log, &s_server);
    if (s_port <= 0) {
        fprintf (stderr, "cannot start ufo-llm-server\n");
        return 1;
    }
    snprintf (s_config, sizeof s_config, "%s/ufo.json", s_broker.dir);
    FILE *f = fopen (s_config, "w");
    if (!f)
        return 1;
    fprintf (f, "{\"EVALUATION_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": "
             "\"http://127.0.0.1:%d/v1\", \"API_MODEL\": \"scripted\", \"MAX_RETRY\": 0, \"TIMEOUT\": 60},\n"
             " \"dispatch\": {\"heartbeat_ivl_ms\": 100, \"heartbeat_liveness\": 5},\n"
             " \"broker\": {\"fsync\": \"no\"}, \"llm\": {\"prices_file\": \"config/prices.json\"}}\n", s_port);
    fclose (f);
    const char *extra [] = { "--config", s_config, NULL };
    bb_test_start (&s_broker, extra);
    UFO_RUN (test_on_the_bus);
    bb_test_stop (&s_broker, SIGTERM);
    eval_fixture_server_stop (&s_server);
    int rc = UFO_TEST_END ();
    if (rc == 0)
        bb_test_rmtree (s_broker.dir);
    else
        fprintf (stderr, "logs kept in %s\n", s_broker.dir);
    return rc;
}
