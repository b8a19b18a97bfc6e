/*  test_eval.c - the EvaluationAgent (common/eval/ufo_eval) against the scripted LLM server over
    real HTTP, on log directories with realistic response.log records and real PNG files:
    complete / incomplete / unsure verdicts, all vs first-and-last screenshots (counted by
    the server), the image budget fallback, garbage answers, a host-only session, per-round
    evaluation of a two-round session, evaluation.log and the blackboard item, bad inputs,
    and `ufo eval` end to end. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_eval.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_prompt.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "llm_server_fixture.h"
#include "eval_fixture.h"
#include "test_files.h"
#include <signal.h>
#include <sys/wait.h>

static char s_dir [256];
static char s_logs [300];
static char s_server_log [300];
static pid_t s_server = -1;
static int s_port = 0;

#define EVAL_JSON(complete, scores) \
    "{\"reason\": \"Step 2 typed the text and step 3 saved it; the last screenshot shows notes.txt.\", " \
    "\"sub_scores\": " scores ", \"complete\": \"" complete "\"}"

static const char *s_script =
"{\"entries\": [\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:complete]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"Step 1 typed the text and step 2 saved it; the last screenshot shows notes.txt.\",\n"
"                   \"sub_scores\": {\"text typed\": \"yes\", \"file saved\": \"yes\"}, \"complete\": \"yes\"},\n"
"  \"usage\": {\"prompt_tokens\": 3000, \"completion_tokens\": 80}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:incomplete]\"}, \"times\": 0,\n"
"  \"content\": \"Here is my judgement:\\n```json\\n{\\\"reason\\\": \\\"The text was typed but no step saved the file.\\\", "
"\\\"sub_scores\\\": {\\\"text typed\\\": \\\"Yes\\\", \\\"file saved\\\": \\\"no\\\"}, \\\"complete\\\": \\\"NO\\\"}\\n```\"},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:unsure]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"No screenshot shows the saved file.\", \"sub_scores\": {\"text typed\": \"yes\", "
"\"file saved\": \"unsure\"}, \"complete\": \"unsure\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:garbage]\"}, \"times\": 0,\n"
"  \"content\": \"Looks fine to me! {not json at all\"},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:badscore]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"r\", \"sub_scores\": {\"a\": \"maybe\"}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[host-only-marker]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"The HostAgent answered from the window list.\", \"sub_scores\": "
"{\"open applications named\": \"yes\"}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:host]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"No step is recorded.\", \"sub_scores\": {}, \"complete\": \"unsure\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:tworounds] round 1\", \"not_contains\": \"[step-of-round-0]\"},\n"
"  \"times\": 0, \"content_json\": {\"reason\": \"round 1 only\", \"sub_scores\": {\"second line\": \"yes\"}, \"complete\": \"yes\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:tworounds]\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"saw round 0\", \"sub_scores\": {\"first line\": \"yes\"}, \"complete\": \"no\"}},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:backup]\", \"model\": \"primary\"}, \"times\": 0,\n"
"  \"fault\": \"500\"},\n"
" {\"match\": {\"agent\": \"EvaluationAgent\", \"contains\": \"[case:backup]\", \"model\": \"backup\"}, \"times\": 0,\n"
"  \"content_json\": {\"reason\": \"from the backup\", \"sub_scores\": {}, \"complete\": \"yes\"}}\n"
"]}\n";

static int
s_server_start (void)
{
    int port = llmfx_start_script (s_dir, s_script, 300, s_server_log, sizeof s_server_log, &s_server);
    s_port = port > 0 ? port : 0;
    return s_port ? 0 : -1;
}

static void
s_server_stop (void)
{
    llmfx_stop (&s_server);
}

//  The configuration text every case starts from (extra: more top-level keys).
static char *
s_config_text (const char *extra)
{
    ufo_buf_t b = { 0 };
    ufo_buf_printf (&b, "{\"EVALUATION_AGENT\": {\"API_TYPE\": \"openai_compatible\", "
                    "\"API_BASE\": \"http://127.0.0.1:%d/v1\", \"API_MODEL\": \"primary\", "
                    "\"API_KEY\": \"sk-eval-SECRET-123456\", \"MAX_RETRY\": 0, \"TIMEOUT\": 10}, "
                    "\"JSON_PARSING_RETRY\": 2%s%s}", s_port, extra ? ", " : "", extra ? extra : "");
    ufo_buf_putc (&b, '\0');
    return ufo_buf_detach (&b, NULL);
}

typedef struct {
    ufo_config_t *config;
    ufo_llm_t *llm;
    ufo_prompts_t *prompts;
    ufo_eval_t *eval;
} s_env_t;

static int
s_env (s_env_t *env, const char *extra)
{
    memset (env, 0, sizeof *env);
    env->config = ufo_config_new ();
    char *text = s_config_text (extra);
    ufo_error_t err;
    int rc = ufo_config_load_text (env->config, text, strlen (text), &err);
    free (text);
    if (rc != 0) {
        fprintf (stderr, "config: %s\n", err.message);
        return -1;
    }
    env->llm = ufo_llm_new_from_config (env->config, "EVALUATION_AGENT", NULL, NULL, &err);
    if (!env->llm) {
        fprintf (stderr, "llm: %s\n", err.message);
        return -1;
    }
    char prompts [PATH_MAX];
    snprintf (prompts, sizeof prompts, "%s/prompts", getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : "..");
    env->prompts = ufo_prompts_new (prompts, &err);
    if (!env->prompts) {
        fprintf (stderr, "prompts: %s\n", err.message);
        return -1;
    }
    env->eval = ufo_eval_new (env->config, env->llm, env->prompts, &err);
    return env->eval ? 0 : -1;
}

static void
s_env_free (s_env_t *env)
{
    ufo_eval_destroy (&env->eval);
    ufo_prompts_destroy (&env->prompts);
    ufo_llm_destroy (&env->llm);
    ufo_config_destroy (&env->config);
}

//  The server's logged requests whose last message contains tag: count, and the image
//  count and last text of the latest one.
static int
s_logged (const char *tag, int64_t *images, char **last)
{
    char *text = tf_read_text (s_server_log);
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        ufo_value_t *v = ufo_json_parse_str (line, NULL);
        const char *l = ufo_value_map_str (v, "last", "");
        if (strstr (l, tag)) {
            n++;
            if (images)
                *images = ufo_value_map_int (v, "images", -1);
            if (last) {
                free (*last);
                *last = ufo_strdup (l);
            }
        }
        ufo_value_destroy (&v);
    }
    free (text);
    return n;
}

static ufo_value_t *
s_json_text (const char *text)
{
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str (text, &err);
    if (!v)
        fprintf (stderr, "test JSON: %s\n", err.message);
    return v ? v : ufo_value_new_map ();
}

//  Requests the server has logged so far.
static int
s_log_lines (void)
{
    char *text = tf_read_text (s_server_log);
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    free (text);
    return n;
}

static ufo_value_t *
s_eval_session (s_env_t *env, const char *task, const char *level, int64_t round, int all)
{
    ufo_eval_request_t req = { .log_root = s_logs, .task = task, .level = level, .round = round,
                               .all_screenshots = all };
    return ufo_eval_run (env->eval, &req);
}

static ufo_value_t *
s_last_eval_line (const char *task)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s/evaluation.log", s_logs, task);
    char *text = tf_read_text (path);
    ufo_value_t *last = NULL;
    char *save = NULL;
    for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save)) {
        ufo_value_destroy (&last);
        last = ufo_json_parse_str (line, NULL);
    }
    free (text);
    return last;
}

UFO_TEST (test_complete_all_screenshots)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "complete", "[case:complete]", &o, &info) == 0);
    CHECK_INT (info.shots, 6);      //  desktop, three steps, subtask end, round end
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    ufo_value_t *r = s_eval_session (&env, "complete", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "yes");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r, "sub_scores"), "file saved", ""), "yes");
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "all");
    CHECK_INT (ufo_value_map_int (r, "images", 0), 6);
    CHECK_INT (ufo_value_map_int (r, "steps", 0), 5);
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (r, "cost"), "prompt_tokens", 0), 3000);
    CHECK_CONTAINS (ufo_value_map_str (r, "request", ""), "meeting at 10");
    int64_t images = -1;
    char *last = NULL;
    CHECK_INT (s_logged ("[case:complete]", &images, &last), 1);
    CHECK_INT (images, 6);          //  what the server received
    //  The prompt: request, steps, action descriptions from the catalogue, subtasks.
    CHECK_CONTAINS (last, "[User Request:]");
    CHECK_CONTAINS (last, "\"Observation\": \"An empty document [step-of-round-0].\"");
    CHECK_CONTAINS (last, "[Actions Used:]");
    CHECK_CONTAINS (last, "- \"set_edit_text\": put text into an editable control.");
    CHECK_CONTAINS (last, "- \"keyboard_input\":");
    CHECK_CONTAINS (last, "- \"ASSIGN\" (HostAgent)");
    CHECK (!strstr (last, "\"wheel_mouse_input\""));        //  only the actions used
    CHECK_CONTAINS (last, "- Type the text and save the file -> FINISH");
    CHECK_CONTAINS (last, "Screenshot of step 1 (AppAgent/mousepad), before its action:");
    CHECK_CONTAINS (last, "Final screenshot of round 0:");
    free (last);
    //  evaluation.log, with the field names of docs/LOGS.md, and no API key.
    ufo_value_t *line = s_last_eval_line ("complete");
    REQUIRE (line);
    CHECK_STR (ufo_value_map_str (line, "level", ""), "session");
    CHECK (!ufo_value_map_has (line, "Round"));
    CHECK_STR (ufo_value_map_str (line, "complete", ""), "yes");
    CHECK_STR (ufo_value_map_str (line, "screenshots", ""), "all");
    CHECK_CONTAINS (ufo_value_map_str (line, "request", ""), "notes.txt");
    CHECK (ufo_value_map_get (line, "Cost") != NULL);
    CHECK_INT (ufo_value_size (ufo_value_map_get (line, "sub_scores")), 2);
    ufo_value_destroy (&line);
    //  request.log: the prompt as sent, image data replaced by the file names.
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/complete/request.log", s_logs);
    char *reqlog = tf_read_text (path);
    CHECK_CONTAINS (reqlog, "\"Agent\":\"EvaluationAgent\"");
    CHECK_CONTAINS (reqlog, "\"url\":\"action_step1.png\"");
    CHECK_CONTAINS (reqlog, "\"url\":\"action_round_0_final.png\"");
    CHECK (!strstr (reqlog, "base64"));
    CHECK (!strstr (reqlog, "sk-eval-SECRET"));
    free (reqlog);
    //  The blackboard item.
    ufo_value_t *item = ufo_eval_board_item (r);
    const ufo_value_t *inner = ufo_value_map_get (item, "evaluation_session");
    REQUIRE (inner);
    CHECK_STR (ufo_value_map_str (inner, "complete", ""), "yes");
    ufo_value_destroy (&item);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_incomplete_first_last)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "incomplete", "[case:incomplete]", &o, &info) == 0);
    s_env_t env;
    REQUIRE (s_env (&env, "\"EVA_ALL_SCREENSHOTS\": false") == 0);
    ufo_value_t *r = s_eval_session (&env, "incomplete", "session", 0, -1);     //  from config
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "no");      //  "NO" normalised
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r, "sub_scores"), "text typed", ""), "yes");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r, "sub_scores"), "file saved", ""), "no");
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "first_last");
    CHECK_INT (ufo_value_map_int (r, "images", 0), 2);
    CHECK_STR (ufo_value_map_str (r, "screenshot_note", "?"), "");     //  asked for, not a fallback
    int64_t images = -1;
    char *last = NULL;
    CHECK_INT (s_logged ("[case:incomplete]", &images, &last), 1);
    CHECK_INT (images, 2);
    CHECK_CONTAINS (last, "only the first and the last of 6 screenshots are shown");
    free (last);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_unsure_and_text_only)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "unsure", "[case:unsure]", &o, &info) == 0);
    s_env_t env;
    //  A text-only evaluator (VISUAL_MODE false): no image travels.
    REQUIRE (s_env (&env, "\"APP_AGENT\": {\"VISUAL_MODE\": false}") == 0);
    ufo_value_t *r = s_eval_session (&env, "unsure", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "unsure");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r, "sub_scores"), "file saved", ""), "unsure");
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "none");
    int64_t images = -1;
    char *last = NULL;
    CHECK_INT (s_logged ("[case:unsure]", &images, &last), 1);
    CHECK_INT (images, 0);
    CHECK (!strstr (last, "screenshots above"));
    free (last);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_budget_fallback)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true, .shot_width = 200, .shot_height = 150 };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "budget", "[case:complete] budget", &o, &info) == 0);
    REQUIRE (info.shot_bytes > 50000);
    s_env_t env;
    //  A budget below the session's screenshots but above two of them.
    char extra [128];
    snprintf (extra, sizeof extra, "\"eval\": {\"max_image_bytes\": %ld}", info.shot_bytes / 2);
    REQUIRE (s_env (&env, extra) == 0);
    ufo_value_t *r = s_eval_session (&env, "budget", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "first_last");
    CHECK_INT (ufo_value_map_int (r, "images", 0), 2);
    CHECK_CONTAINS (ufo_value_map_str (r, "screenshot_note", ""), "exceed the image budget");
    int64_t images = -1;
    char *last = NULL;
    CHECK_INT (s_logged ("[case:complete] budget", &images, &last), 1);
    CHECK_INT (images, 2);
    CHECK_CONTAINS (last, "exceed the image budget");        //  the model is told too
    CHECK_CONTAINS (last, "Final screenshot of round 0:");   //  the last one is the round's end
    free (last);
    ufo_value_t *line = s_last_eval_line ("budget");
    CHECK_CONTAINS (ufo_value_map_str (line, "screenshot_note", ""), "eval.max_image_bytes");
    ufo_value_destroy (&line);
    ufo_value_destroy (&r);
    //  The trajectory text counts too: a budget the screenshots alone just fit in.
    ufo_eval_set_max_image_bytes (env.eval, info.shot_bytes);
    r = s_eval_session (&env, "budget", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "first_last");
    CHECK_INT (ufo_value_map_int (r, "images", 0), 2);
    CHECK_CONTAINS (ufo_value_map_str (r, "screenshot_note", ""), "with the trajectory text (");
    CHECK (!strstr (ufo_value_map_str (r, "screenshot_note", ""), "even the first"));
    ufo_value_destroy (&r);
    //  A budget below the first and the last alone: they are sent, and the note says so.
    ufo_eval_set_max_image_bytes (env.eval, 1000);
    r = s_eval_session (&env, "budget", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_INT (ufo_value_map_int (r, "images", 0), 2);
    CHECK_CONTAINS (ufo_value_map_str (r, "screenshot_note", ""), "so only the first and the last are shown; "
                    "even the first and the last screenshots (");
    CHECK_CONTAINS (ufo_value_map_str (r, "screenshot_note", ""), "are over the budget of 1000 bytes");
    char *prompt = NULL;
    CHECK (s_logged ("[case:complete] budget", NULL, &prompt) >= 3);
    CHECK_CONTAINS (prompt, "they are sent anyway");        //  the model is told too
    free (prompt);
    ufo_value_destroy (&r);
    //  The same with the first and the last asked for: only the "over" sentence.
    r = s_eval_session (&env, "budget", "session", 0, 0);
    REQUIRE (r);
    CHECK_INT (ufo_value_map_int (r, "images", 0), 2);
    CHECK_CONTAINS (ufo_value_map_str (r, "screenshot_note", ""), "even the first and the last screenshots");
    ufo_value_destroy (&r);
    //  The same budget via the setter; 0 = no limit sends all of them.
    ufo_eval_set_max_image_bytes (env.eval, 0);
    r = s_eval_session (&env, "budget", "session", 0, 1);
    CHECK_STR (ufo_value_map_str (r, "screenshots", ""), "all");
    CHECK_INT (ufo_value_map_int (r, "images", 0), info.shots);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_garbage_answers)
{
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = false };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "garbage", "[case:garbage]", &o, &info) == 0);
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    int before = s_log_lines ();
    ufo_value_t *r = s_eval_session (&env, "garbage", "session", 0, 1);
    REQUIRE (r);
    //  JSON_PARSING_RETRY 2: three replies (the first, two corrective re-asks), then a clear
    //  error result.
    CHECK_INT (s_log_lines () - before, 3);
    char *last = NULL;
    CHECK_INT (s_logged ("could not be used", NULL, &last), 2);
    free (last);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "no usable EvaluationAgent response");
    CHECK_CONTAINS (ufo_value_map_str (r, "reason", ""), "could not be made");
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "unsure");
    CHECK_INT (ufo_value_size (ufo_value_map_get (r, "sub_scores")), 0);
    ufo_value_t *line = s_last_eval_line ("garbage");
    CHECK_CONTAINS (ufo_value_map_str (line, "error", ""), "EvaluationAgent");
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/garbage/evaluation.log", s_logs);
    char *text = tf_read_text (path);
    CHECK (!strstr (text, "sk-eval-SECRET"));
    free (text);
    ufo_value_destroy (&line);
    ufo_value_destroy (&r);
    //  A sub-score outside yes / no / unsure is not accepted either.
    REQUIRE (eval_fixture_make (s_logs, "badscore", "[case:badscore]", &o, &info) == 0);
    before = s_log_lines ();
    r = s_eval_session (&env, "badscore", "session", 0, 1);
    CHECK_INT (s_log_lines () - before, 3);
    CHECK (*ufo_value_map_str (r, "error", "") != '\0');
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_host_only)
{
    eval_fixture_opts_t o = { .rounds = 1, .host_only = true, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "hostonly", "[case:host]", &o, &info) == 0);
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    ufo_value_t *r = s_eval_session (&env, "hostonly", "session", 0, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "yes");
    CHECK_INT (ufo_value_map_int (r, "steps", 0), 1);
    CHECK_INT (ufo_value_map_int (r, "images", 0), 1);
    char *last = NULL;
    CHECK_INT (s_logged ("[host-only-marker]", NULL, &last), 1);
    CHECK_CONTAINS (last, "\"Comment\": \"Open: xterm and Mousepad.\"");
    CHECK (!strstr (last, "[Subtasks and their Reported Status:]"));
    free (last);
    ufo_value_destroy (&r);
    //  No response.log at all (the HostAgent never logged a step): judged from the request.
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/hostonly/response.log", s_logs);
    unlink (path);
    r = s_eval_session (&env, "hostonly", "session", 0, 1);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_INT (ufo_value_map_int (r, "steps", -1), 0);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_two_rounds)
{
    eval_fixture_opts_t o = { .rounds = 2, .screenshots = true, .no_request_json = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "tworounds", "[case:tworounds]", &o, &info) == 0);
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    ufo_value_t *r = s_eval_session (&env, "tworounds", "round", 1, 1);
    REQUIRE (r);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "level", ""), "round");
    CHECK_INT (ufo_value_map_int (r, "round", -1), 1);
    CHECK_STR (ufo_value_map_str (r, "reason", ""), "round 1 only");
    CHECK_INT (ufo_value_map_int (r, "steps", 0), 5);
    CHECK_INT (ufo_value_map_int (r, "images", 0), info.shots_round [1]);
    //  The request comes from the records (no request.json), round 1's only.
    CHECK_CONTAINS (ufo_value_map_str (r, "request", ""), "bring slides");
    CHECK (!strstr (ufo_value_map_str (r, "request", ""), "meeting at 10"));
    char *last = NULL;
    int64_t images = -1;
    REQUIRE (s_logged ("round 1", &images, &last) >= 1);
    CHECK_CONTAINS (last, "[step-of-round-1]");
    CHECK (!strstr (last, "[step-of-round-0]"));
    CHECK (!strstr (last, "desktop_step0"));
    CHECK_CONTAINS (last, "Final screenshot of round 1:");
    CHECK (!strstr (last, "Final screenshot of round 0:"));
    CHECK_INT (images, info.shots_round [1]);
    free (last);
    ufo_value_t *line = s_last_eval_line ("tworounds");
    CHECK_STR (ufo_value_map_str (line, "level", ""), "round");
    CHECK_INT (ufo_value_map_int (line, "Round", -1), 1);
    ufo_value_destroy (&line);
    ufo_value_t *item = ufo_eval_board_item (r);
    CHECK (ufo_value_map_get (item, "evaluation_round_1") != NULL);
    ufo_value_destroy (&item);
    ufo_value_destroy (&r);
    //  The HostAgent sends only the round's own request at round level.
    ufo_value_t *one = ufo_value_new_list ();
    ufo_value_list_push_str (one, "[case:tworounds] round 1 as the HostAgent sends it");
    ufo_eval_request_t req = { .log_root = s_logs, .task = "tworounds", .level = "round", .round = 1,
                               .requests = one, .all_screenshots = 1 };
    r = ufo_eval_run (env.eval, &req);
    CHECK_STR (ufo_value_map_str (r, "request", ""), "[case:tworounds] round 1 as the HostAgent sends it");
    CHECK_STR (ufo_value_map_str (r, "reason", ""), "round 1 only");
    ufo_value_destroy (&r);
    ufo_value_destroy (&one);
    //  Round 0 sees round 0 only; the session sees both requests.
    r = s_eval_session (&env, "tworounds", "round", 0, 1);
    CHECK_STR (ufo_value_map_str (r, "reason", ""), "saw round 0");
    CHECK_INT (ufo_value_map_int (r, "images", 0), info.shots_round [0]);
    ufo_value_destroy (&r);
    r = s_eval_session (&env, "tworounds", "session", 0, 1);
    CHECK_CONTAINS (ufo_value_map_str (r, "request", ""), "Round 0: [case:tworounds] round 0");
    CHECK_CONTAINS (ufo_value_map_str (r, "request", ""), "Round 1: [case:tworounds] round 1");
    CHECK_INT (ufo_value_map_int (r, "steps", 0), 10);
    CHECK_INT (ufo_value_map_int (r, "images", 0), info.shots);
    ufo_value_destroy (&r);
    //  A round that does not exist: a clear error, nothing sent.
    r = s_eval_session (&env, "tworounds", "round", 7, 1);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "no request is recorded for round 7");
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_backup_engine)
{
    eval_fixture_opts_t o = { .rounds = 1 };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "backup", "[case:backup]", &o, &info) == 0);
    s_env_t env;
    char extra [512];
    snprintf (extra, sizeof extra, "\"BACKUP_AGENT\": {\"API_TYPE\": \"openai_compatible\", "
              "\"API_BASE\": \"http://127.0.0.1:%d/v1\", \"API_MODEL\": \"backup\", \"API_KEY\": \"sk-b-1234\", "
              "\"MAX_RETRY\": 0}", s_port);
    REQUIRE (s_env (&env, extra) == 0);
    ufo_value_t *r = s_eval_session (&env, "backup", "session", 0, 1);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "reason", ""), "from the backup");
    CHECK_STR (ufo_value_map_str (r, "engine", ""), "BACKUP_AGENT");
    ufo_value_destroy (&r);
    s_env_free (&env);
}

UFO_TEST (test_bad_inputs)
{
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    ufo_eval_request_t req = { .log_root = s_logs, .task = "no-such-task", .level = "session",
                               .all_screenshots = 1 };
    ufo_value_t *r = ufo_eval_run (env.eval, &req);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "does not exist");
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "unsure");
    ufo_value_destroy (&r);
    req.task = "../etc";
    r = ufo_eval_run (env.eval, &req);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "one path component");
    ufo_value_destroy (&r);
    req.task = "complete";
    req.level = "weekly";
    r = ufo_eval_run (env.eval, &req);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "level must be");
    ufo_value_destroy (&r);
    //  Hostile records: wrong types, paths outside the directory, a fake PNG, garbage lines.
    char dir [PATH_MAX], path [PATH_MAX + 32];
    snprintf (dir, sizeof dir, "%s/hostile", s_logs);
    mkdir (dir, 0755);
    snprintf (path, sizeof path, "%s/response.log", dir);
    tf_write (path,
        "{\"Step\": \"zero\", \"Round\": \"x\", \"Agent\": 7, \"Request\": \"[case:complete] hostile\", "
        "\"ScreenshotPath\": \"../../../etc/passwd\"}\n"
        "not json at all\n"
        "[1, 2, 3]\n"
        "{\"Step\": 1, \"Round\": -5, \"Request\": 3}\n"
        "{\"Step\": 2, \"Round\": 0, \"Agent\": \"AppAgent\", \"ScreenshotPath\": \"fake.png\", "
        "\"Observation\": {\"deep\": [1, {\"x\": null}]}, \"FunctionCall\": \"no_such_action\"}\n");
    snprintf (path, sizeof path, "%s/fake.png", dir);
    tf_write (path, "this is not a PNG file");
    req.task = "hostile";
    req.level = "session";
    r = ufo_eval_run (env.eval, &req);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_INT (ufo_value_map_int (r, "images", -1), 0);       //  fake PNG left out
    CHECK_INT (ufo_value_map_int (r, "steps", 0), 2);
    char *last = NULL;
    CHECK_INT (s_logged ("hostile", NULL, &last), 1);
    CHECK_CONTAINS (last, "- \"no_such_action\": (not in the action catalogue)");
    CHECK (!strstr (last, "root:"));
    free (last);
    ufo_value_destroy (&r);
    s_env_free (&env);
}

//  The logs are on another machine: the session's board stands in for them.
UFO_TEST (test_board_only)
{
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    //  A real PNG for the board's screenshot item (as the worker gets it: image_str filled).
    eval_fixture_opts_t o = { .rounds = 1, .screenshots = true };
    eval_fixture_t info;
    REQUIRE (eval_fixture_make (s_logs, "pngsource", "[unused]", &o, &info) == 0);
    ufo_error_t err;
    char *url = NULL;
    {
        char path [PATH_MAX];
        snprintf (path, sizeof path, "%s/pngsource/action_step1.png", s_logs);
        ufo_board_t *b = ufo_board_new ();
        ufo_value_t *meta = s_json_text ("{\"Round\": 1, \"Step\": 7, \"reason\": \"the saved file\"}");
        ufo_board_add_image (b, path, meta);
        ufo_value_destroy (&meta);
        ufo_value_t *map = ufo_board_to_map (b);
        url = ufo_strdup (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (map, "screenshots"), 0),
                                             "image_str", ""));
        ufo_value_destroy (&map);
        ufo_board_destroy (&b);
    }
    REQUIRE (strncmp (url, "data:image/png;base64,", 22) == 0);
    ufo_value_t *board = s_json_text (
        "{\"questions\": [], \"requests\": [{\"request_0\": \"[case:complete] board round 0\"}, "
        "{\"evaluation_round_0\": {\"complete\": \"yes\"}}, {\"request_1\": \"[case:complete] board round 1\"}], "
        "\"trajectories\": [{\"Step\": 1, \"Subtask\": \"type\", \"Action\": {\"function\": \"set_edit_text\"}, "
        "\"UserConfirm\": \"\", \"Round\": 0, \"SubtaskIndex\": 0, \"Application\": \"mousepad\", \"Status\": \"FINISH\"}, "
        "{\"Step\": 6, \"Subtask\": \"save again [board-round-1]\", \"Action\": {\"function\": \"keyboard_input\"}, "
        "\"UserConfirm\": \"\", \"Round\": 1, \"SubtaskIndex\": 0, \"Application\": \"mousepad\", \"Status\": \"FINISH\"}], "
        "\"screenshots\": [{\"metadata\": {\"Round\": 0}, \"image_path\": \"x.png\", \"blob\": \"00\"}]}");
    //  The screenshot item whose blob was fetched, then one that was not (no image_str).
    ufo_value_t *shot = ufo_value_new_map ();
    ufo_value_t *meta = s_json_text ("{\"Round\": 1, \"reason\": \"the saved file\"}");
    ufo_value_map_set (shot, "metadata", &meta);
    ufo_value_map_set_str (shot, "image_path", "/far/away/action_step6.png");
    ufo_value_map_set_str (shot, "image_str", url);
    ufo_value_list_push (ufo_value_map_get (board, "screenshots"), &shot);
    free (url);
    ufo_eval_request_t req = { .log_root = s_logs, .task = "on-another-machine", .level = "round",
                               .round = 1, .all_screenshots = 1, .board = board };
    ufo_value_t *result = NULL;
    ufo_value_t *messages = ufo_eval_prompt (env.eval, &req, &result, &err);
    REQUIRE (messages);
    CHECK_STR (ufo_value_map_str (result, "source", ""), "board");
    CHECK_STR (ufo_value_map_str (result, "request", ""), "[case:complete] board round 1");
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 1);
    CHECK_INT (ufo_value_map_int (result, "images", 0), 1);
    char *text = ufo_json_dump (messages, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (text, "[board-round-1]");
    CHECK (!strstr (text, "\"Step\\\": 1,"));
    CHECK_CONTAINS (text, "Screenshot saved on the blackboard (the saved file):");
    CHECK_CONTAINS (text, "- \\\"keyboard_input\\\":");
    free (text);
    ufo_value_destroy (&messages);
    ufo_value_destroy (&result);
    //  Evaluated for real: the verdict, and no evaluation.log created anywhere.
    ufo_value_t *r = ufo_eval_run (env.eval, &req);
    CHECK_STR (ufo_value_map_str (r, "error", "?"), "");
    CHECK_STR (ufo_value_map_str (r, "complete", ""), "yes");
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/on-another-machine", s_logs);
    CHECK (access (path, F_OK) != 0);
    ufo_value_destroy (&r);
    //  Session level: both rounds' requests and steps.
    req.level = "session";
    messages = ufo_eval_prompt (env.eval, &req, &result, &err);
    REQUIRE (messages);
    CHECK_CONTAINS (ufo_value_map_str (result, "request", ""), "Round 0: [case:complete] board round 0");
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 2);
    ufo_value_destroy (&messages);
    ufo_value_destroy (&result);
    ufo_value_destroy (&board);
    s_env_free (&env);
}

//  A long log with interleaved rounds and more screenshots than are ever considered: the
//  prompt is still built, at most 2,000 screenshots are kept and the last one stays the latest.
UFO_TEST (test_big_log)
{
    s_env_t env;
    REQUIRE (s_env (&env, "\"eval\": {\"max_image_bytes\": 0}") == 0);
    char dir [PATH_MAX], path [PATH_MAX + 32];
    snprintf (dir, sizeof dir, "%s/biglog", s_logs);
    mkdir (dir, 0755);
    snprintf (path, sizeof path, "%s/response.log", dir);
    FILE *f = fopen (path, "w");
    REQUIRE (f);
    for (int i = 0; i < 2500; i++) {
        fprintf (f, "{\"Step\": %d, \"Round\": %d, \"SubtaskIndex\": %d, \"Agent\": \"AppAgent\", "
                 "\"Request\": \"[case:complete] big log\", \"ScreenshotPath\": \"s%d.png\", "
                 "\"FunctionCall\": \"wait\", \"Observation\": \"step %d\"}\n", i, i % 3, i % 7, i, i);
        char shot [PATH_MAX + 32];
        snprintf (shot, sizeof shot, "%s/s%d.png", dir, i);
        FILE *png = fopen (shot, "wb");
        REQUIRE (png);
        fwrite ("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 1, 16, png);
        fclose (png);
    }
    fclose (f);
    ufo_eval_request_t req = { .log_root = s_logs, .task = "biglog", .level = "session", .all_screenshots = 1 };
    ufo_value_t *result = NULL;
    ufo_error_t err;
    ufo_value_t *messages = ufo_eval_prompt (env.eval, &req, &result, &err);
    REQUIRE (messages);
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 2500);
    CHECK_INT (ufo_value_map_int (result, "images", 0), 2000);
    CHECK_STR (ufo_value_map_str (result, "screenshots", ""), "all");
    //  The last image part is the latest step's screenshot (label before it).
    const ufo_value_t *parts = ufo_value_map_get (ufo_value_list_at (messages, 1), "content");
    size_t n = ufo_value_size (parts);
    REQUIRE (n >= 3);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (parts, n - 3), "text", ""), "step 2499");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (parts, n - 1), "text", ""), "\"Observation\": \"step 2499\"");
    //  Round 1 alone: a third of the steps.
    req.level = "round";
    req.round = 1;
    ufo_value_destroy (&messages);
    ufo_value_destroy (&result);
    messages = ufo_eval_prompt (env.eval, &req, &result, &err);
    REQUIRE (messages);
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 833);
    CHECK_INT (ufo_value_map_int (result, "images", 0), 833);
    ufo_value_destroy (&messages);
    ufo_value_destroy (&result);
    s_env_free (&env);
}

//  Asynchronous use, as the worker does: two evaluations in flight, one cancelled.
static void
s_collect (ufo_value_t **result_p, void *arg)
{
    ufo_value_t *list = arg;
    ufo_value_list_push (list, result_p);
}

UFO_TEST (test_async_and_cancel)
{
    s_env_t env;
    REQUIRE (s_env (&env, NULL) == 0);
    ufo_value_t *results = ufo_value_new_list ();
    ufo_eval_request_t a = { .log_root = s_logs, .task = "complete", .level = "session", .all_screenshots = 0 };
    ufo_eval_request_t b = { .log_root = s_logs, .task = "incomplete", .level = "session", .all_screenshots = 0 };
    int64_t ida = ufo_eval_start (env.eval, &a, s_collect, results);
    int64_t idb = ufo_eval_start (env.eval, &b, s_collect, results);
    CHECK (ida > 0 && idb > 0 && ida != idb);
    CHECK_INT (ufo_eval_pending (env.eval), 2);
    CHECK_INT (ufo_eval_cancel (env.eval, idb), 0);
    CHECK_INT (ufo_eval_cancel (env.eval, idb), -1);
    for (int i = 0; i < 200 && ufo_value_size (results) < 1; i++)
        ufo_llm_poll (env.llm, 50);
    CHECK_INT (ufo_value_size (results), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (results, 0), "complete", ""), "yes");
    CHECK_INT (ufo_eval_pending (env.eval), 0);
    //  A bad request completes inside start (id 0) and still calls back.
    ufo_eval_request_t bad = { .log_root = s_logs, .task = "missing", .level = "session" };
    CHECK_INT (ufo_eval_start (env.eval, &bad, s_collect, results), 0);
    CHECK_INT (ufo_value_size (results), 2);
    //  Destroying with one in flight cancels it quietly.
    ufo_eval_start (env.eval, &a, s_collect, results);
    ufo_value_destroy (&results);
    s_env_free (&env);
}

//  `ufo eval` end to end: the verdict and one line per sub-score with its symbol.
UFO_TEST (test_cli)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    REQUIRE (build);
    char cfg [PATH_MAX], cmd [PATH_MAX * 8], out [PATH_MAX];
    snprintf (cfg, sizeof cfg, "%s/eval-config.json", s_dir);
    char *text = s_config_text ("\"EVA_ALL_SCREENSHOTS\": false");
    tf_write (cfg, text);
    free (text);
    snprintf (out, sizeof out, "%s/cli.out", s_dir);
    snprintf (cmd, sizeof cmd, "UFO_PROMPTS_DIR=%s/prompts %s/cli/ufo eval %s/incomplete --config %s > %s 2>&1",
              getenv ("UFO_SOURCE_DIR"), build, s_logs, cfg, out);
    int rc = system (cmd);
    char *output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 0);
    CHECK_CONTAINS (output, "\xE2\x9D\x8C complete: no");
    CHECK_CONTAINS (output, "\xE2\x9C\x85 text typed: yes");
    CHECK_CONTAINS (output, "\xE2\x9D\x8C file saved: no");
    CHECK_CONTAINS (output, "first_last");
    free (output);
    //  Round level, and a round filter on the unsure session.
    snprintf (cmd, sizeof cmd, "UFO_PROMPTS_DIR=%s/prompts %s/cli/ufo eval %s/unsure --level round --round 0 "
              "--config %s > %s 2>&1", getenv ("UFO_SOURCE_DIR"), build, s_logs, cfg, out);
    rc = system (cmd);
    output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 0);
    CHECK_CONTAINS (output, "Evaluation of round 0: \xE2\x9D\x93 complete: unsure");
    free (output);
    //  --dry-run prints the prompt and asks nothing.
    int before = s_log_lines ();
    snprintf (cmd, sizeof cmd, "UFO_PROMPTS_DIR=%s/prompts %s/cli/ufo eval %s/complete --dry-run --all-screenshots "
              "--config %s > %s 2>&1", getenv ("UFO_SOURCE_DIR"), build, s_logs, cfg, out);
    rc = system (cmd);
    output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 0);
    CHECK_CONTAINS (output, "===== system =====");
    CHECK_CONTAINS (output, "You are the EvaluationAgent");
    CHECK_CONTAINS (output, "[Actions Used:]");
    CHECK_CONTAINS (output, "Final screenshot of round 0:\n[image: ");
    CHECK_INT (s_log_lines (), before);
    free (output);
    //  Record, then replay against a dead endpoint: the same verdict, no network.
    char cassette [PATH_MAX], dead [PATH_MAX];
    snprintf (cassette, sizeof cassette, "%s/eval-cassette.jsonl", s_dir);
    snprintf (dead, sizeof dead, "%s/dead-config.json", s_dir);
    tf_write (dead, "{\"EVALUATION_AGENT\": {\"API_TYPE\": \"openai_compatible\", "
                  "\"API_BASE\": \"http://127.0.0.1:9/v1\", \"API_MODEL\": \"primary\", \"MAX_RETRY\": 0}}");
    snprintf (cmd, sizeof cmd, "UFO_PROMPTS_DIR=%s/prompts %s/cli/ufo eval %s/incomplete --config %s "
              "--llm-mode record --llm-cassette %s > %s 2>&1", getenv ("UFO_SOURCE_DIR"), build, s_logs,
              cfg, cassette, out);
    rc = system (cmd);
    CHECK_INT (WEXITSTATUS (rc), 0);
    before = s_log_lines ();
    snprintf (cmd, sizeof cmd, "UFO_PROMPTS_DIR=%s/prompts %s/cli/ufo eval %s/incomplete --config %s "
              "--first-last --llm-mode replay --llm-cassette %s > %s 2>&1", getenv ("UFO_SOURCE_DIR"), build,
              s_logs, dead, cassette, out);
    rc = system (cmd);
    output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 0);
    CHECK_CONTAINS (output, "\xE2\x9D\x8C file saved: no");
    CHECK_INT (s_log_lines (), before);
    free (output);
    //  A failed evaluation exits 1 and says why; bad usage exits 2.
    snprintf (cmd, sizeof cmd, "%s/cli/ufo eval %s/garbage --config %s > %s 2>&1", build, s_logs, cfg, out);
    rc = system (cmd);
    output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 1);
    CHECK_CONTAINS (output, "no usable EvaluationAgent response");
    free (output);
    snprintf (cmd, sizeof cmd, "%s/cli/ufo eval %s/garbage --level weekly > %s 2>&1", build, s_logs, out);
    rc = system (cmd);
    CHECK_INT (WEXITSTATUS (rc), 2);
    snprintf (cmd, sizeof cmd, "%s/cli/ufo eval > %s 2>&1", build, out);
    rc = system (cmd);
    CHECK_INT (WEXITSTATUS (rc), 2);
    //  A task name longer than a path component can be is a usage error, not cut short.
    char long_name [300];
    memset (long_name, 'a', sizeof long_name - 1);
    long_name [sizeof long_name - 1] = 0;
    snprintf (cmd, sizeof cmd, "%s/cli/ufo eval %s/%s --config %s > %s 2>&1", build, s_logs, long_name, cfg, out);
    rc = system (cmd);
    output = tf_read_text (out);
    CHECK_INT (WEXITSTATUS (rc), 2);
    CHECK_CONTAINS (output, "the task name (the last component of");
    CHECK_CONTAINS (output, "is longer than 255 bytes");
    free (output);
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-test-eval-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    snprintf (s_logs, sizeof s_logs, "%s/logs", s_dir);
    mkdir (s_logs, 0755);
    if (s_server_start () != 0) {
        fprintf (stderr, "cannot start ufo-llm-server\n");
        return 1;
    }
    UFO_RUN (test_complete_all_screenshots);
    UFO_RUN (test_incomplete_first_last);
    UFO_RUN (test_unsure_and_text_only);
    UFO_RUN (test_budget_fallback);
    UFO_RUN (test_garbage_answers);
    UFO_RUN (test_host_only);
    UFO_RUN (test_two_rounds);
    UFO_RUN (test_backup_engine);
    UFO_RUN (test_bad_inputs);
    UFO_RUN (test_board_only);
    UFO_RUN (test_big_log);
    UFO_RUN (test_async_and_cancel);
    UFO_RUN (test_cli);
    s_server_stop ();
    int rc = UFO_TEST_END ();
    if (rc == 0) {
        char cmd [400];
        snprintf (cmd, sizeof cmd, "rm -rf %s", s_dir);
        if (system (cmd) != 0)
            fprintf (stderr, "could not remove %s\n", s_dir);
    }
    return rc;
}
