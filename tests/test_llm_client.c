/*  test_llm_client.c - the LLM client against the scripted server (ufo-llm-server), over
    real HTTP on loopback: replies, every fault, retries, backup, re-asks, timeouts,
    cancellation, an event loop that keeps running, Azure paths, cassettes, key secrecy. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_cost.h"
#include "ufo_cassette.h"
#include "ufo_http.h"
#include "ufo_test.h"
#include "llm_server_fixture.h"
#include "test_files.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define KEY "sk-PLANTED-7f3a9c1e5b2d4f60aa"
#define BACKUP_KEY "sk-BACKUP-PLANTED-0c1d2e3f4a5b"

static char s_dir [256];
static char s_log_path [300];       //  the server's request log
static char s_client_log [300];     //  our own log output
static FILE *s_client_log_f;
static pid_t s_server = -1;
static int s_port = 0;

#define APP_JSON(status, fn, args) \
    "{\\\"Observation\\\": \\\"o\\\", \\\"Thought\\\": \\\"t\\\", \\\"ControlLabel\\\": \\\"1\\\", " \
    "\\\"ControlText\\\": \\\"Edit\\\", \\\"Function\\\": \\\"" fn "\\\", \\\"Args\\\": " args ", " \
    "\\\"Status\\\": \\\"" status "\\\", \\\"Plan\\\": [], \\\"Comment\\\": \\\"\\\"}"

//  Each case tags its prompt with "[case:NAME]"; the script matches on it.
static const char *s_script =
"{\"entries\": [\n"
" {\"match\": {\"contains\": \"[case:ok]\"}, \"times\": 0, \"require_key\": \"" KEY "\",\n"
"  \"content\": \"hello from the script\", \"usage\": {\"prompt_tokens\": 1200, \"completion_tokens\": 300}},\n"
" {\"match\": {\"contains\": \"[case:429]\"}, \"fault\": \"429\", \"retry_after\": 1},\n"
" {\"match\": {\"contains\": \"[case:429]\"}, \"content\": \"after 429\", \"usage\": {\"prompt_tokens\": 1, \"completion_tokens\": 1}},\n"
" {\"match\": {\"contains\": \"[case:500]\"}, \"fault\": \"500\"},\n"
" {\"match\": {\"contains\": \"[case:500]\"}, \"content\": \"after 500\"},\n"
" {\"match\": {\"contains\": \"[case:reset]\"}, \"fault\": \"reset\"},\n"
" {\"match\": {\"contains\": \"[case:reset]\"}, \"content\": \"after reset\"},\n"
" {\"match\": {\"contains\": \"[case:malformed]\"}, \"fault\": \"malformed\"},\n"
" {\"match\": {\"contains\": \"[case:malformed]\"}, \"content\": \"after malformed\"},\n"
" {\"match\": {\"contains\": \"[case:truncated]\"}, \"fault\": \"truncated\"},\n"
" {\"match\": {\"contains\": \"[case:truncated]\"}, \"content\": \"after truncated\"},\n"
" {\"match\": {\"contains\": \"[case:401]\"}, \"times\": 0, \"fault\": \"status\", \"status\": 401,\n"
"  \"error\": \"Incorrect API key provided: " KEY "\"},\n"
" {\"match\": {\"contains\": \"[case:400]\"}, \"times\": 0, \"fault\": \"status\", \"status\": 400,\n"
"  \"error\": \"Invalid image_url: the image is too large\"},\n"
" {\"match\": {\"contains\": \"[case:backup]\", \"model\": \"primary-model\"}, \"times\": 0, \"fault\": \"500\"},\n"
" {\"match\": {\"contains\": \"[case:backup]\", \"model\": \"backup-model\"}, \"times\": 0,\n"
"  \"content\": \"from the backup\", \"usage\": {\"prompt_tokens\": 10, \"completion_tokens\": 2}},\n"
" {\"match\": {\"contains\": \"[case:slow]\"}, \"times\": 0, \"latency_ms\": 4000, \"content\": \"too late\"},\n"
" {\"match\": {\"contains\": \"[case:drip]\"}, \"fault\": \"drip\", \"drip_bytes\": 8, \"drip_ms\": 30,\n"
"  \"content\": \"a reply that arrives eight bytes at a time, slowly\"},\n"
" {\"match\": {\"contains\": \"[case:reask]\", \"last_contains\": \"could not be used\"}, \"times\": 0,\n"
"  \"content\": \"Sorry. ```json\\n" APP_JSON ("CONTINUE", "set_edit_text", "{\\\"text\\\": \\\"hi\\\"}") "\\n```\"},\n"
" {\"match\": {\"contains\": \"[case:reask]\"}, \"times\": 0,\n"
"  \"content\": \"" APP_JSON ("DONE", "", "{}") "\"},\n"
" {\"match\": {\"contains\": \"[case:cutoff]\"}, \"times\": 0, \"finish_reason\": \"length\",\n"
"  \"content\": \"{\\\"Observation\\\": \\\"a very long observation that goes on and\"},\n"
" {\"match\": {\"contains\": \"[case:escaped]\"}, \"times\": 0,\n"
"  \"content\": \"" APP_JSON ("FINISH", "summary", "{\\\"text\\\": \\\"key \\\\u0073k-PLANTED-7f3a9c1e5b2d4f60aa\\\"}") "\"},\n"
" {\"match\": {\"contains\": \"[case:echo]\"}, \"times\": 0,\n"
"  \"content\": \"" APP_JSON (KEY, "", "{}") "\"},\n"
" {\"match\": {\"contains\": \"[case:hopeless]\"}, \"times\": 0, \"content\": \"I would rather chat.\"},\n"
" {\"match\": {\"path\": \"/openai/deployments/dep-1/\"}, \"times\": 0, \"content\": \"azure ok\"},\n"
" {\"match\": {\"agent\": \"AppAgent\", \"contains\": \"[case:tool]\"}, \"times\": 0,\n"
"  \"content\": \"Here you go:\\n" APP_JSON ("FINISH", "summary", "{\\\"text\\\": \\\"tool ok\\\"}") "\",\n"
"  \"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 100}},\n"
" {\"match\": {\"contains\": \"[case:capture]\"}, \"times\": 0,\n"
"  \"vars\": {\"LABEL\": {\"line\": \"Mousepad\", \"after\": \"label \\\"\", \"before\": \"\\\"\"},\n"
"            \"TITLE\": {\"line\": \"label \\\"7\\\"\", \"after\": \": \"},\n"
"            \"NONE\": {\"line\": \"no such line\", \"after\": \"x\"}},\n"
"  \"content_json\": {\"label\": \"${LABEL}\", \"title\": \"${TITLE}\", \"none\": \"${NONE}\", \"keep\": \"${OTHER}\"}},\n"
" {\"match\": {\"agent\": \"HostAgent\", \"contains\": \"[case:session]\"}, \"times\": 0,\n"
"  \"content\": \"{\\\"Observation\\\": \\\"o\\\", \\\"Thought\\\": \\\"t\\\", \\\"CurrentSubtask\\\": \\\"type\\\", "
"\\\"ControlLabel\\\": \\\"2\\\", \\\"ControlText\\\": \\\"Mousepad\\\", \\\"Status\\\": \\\"ASSIGN\\\"}\",\n"
"  \"usage\": {\"prompt_tokens\": 100, \"completion_tokens\": 20}},\n"
" {\"match\": {\"agent\": \"AppAgent\", \"contains\": \"[case:session]\"}, \"times\": 0,\n"
"  \"content\": \"" APP_JSON ("FINISH", "summary", "{\\\"text\\\": \\\"done\\\"}") "\",\n"
"  \"usage\": {\"prompt_tokens\": 200, \"completion_tokens\": 30}}\n"
"]}\n";

static int
s_server_start (void)
{
    int port = llmfx_start_script (s_dir, s_script, 300, s_log_path, sizeof s_log_path, &s_server);
    s_port = port > 0 ? port : 0;
    return s_port ? 0 : -1;
}

static void
s_server_stop (void)
{
    CHECK_INT (llmfx_stop (&s_server), 0);
}

static void
s_config (ufo_llm_config_t *cfg, const char *name, const char *model, const char *key)
{
    ufo_llm_config_defaults (cfg);
    snprintf (cfg->name, sizeof cfg->name, "%s", name);
    snprintf (cfg->api_type, sizeof cfg->api_type, "openai_compatible");
    snprintf (cfg->api_base, sizeof cfg->api_base, "http://127.0.0.1:%d/v1", s_port);
    snprintf (cfg->api_model, sizeof cfg->api_model, "%s", model);
    snprintf (cfg->api_key, sizeof cfg->api_key, "%s", key);
    cfg->timeout_s = 5;
    cfg->max_retry = 2;
    cfg->backoff_base_ms = 20;
    cfg->backoff_max_ms = 3000;
}

static ufo_value_t *
s_messages (const char *system, const char *user)
{
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "system");
    ufo_value_map_set_str (m, "content", system);
    ufo_value_list_push (list, &m);
    m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "user");
    ufo_value_t *parts = ufo_value_new_list ();
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "type", "text");
    ufo_value_map_set_str (p, "text", user);
    ufo_value_list_push (parts, &p);
    p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "type", "image_url");
    ufo_value_t *url = ufo_value_new_map ();
    ufo_value_map_set_str (url, "url", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");
    ufo_value_map_set (p, "image_url", &url);
    ufo_value_list_push (parts, &p);
    ufo_value_map_set (m, "content", &parts);
    ufo_value_list_push (list, &m);
    return list;
}

static ufo_llm_response_t *
s_ask (ufo_llm_t *llm, const char *tag, int schema)
{
    ufo_value_t *msgs = s_messages ("You are the AppAgent of a test.", tag);
    ufo_llm_opts_t opts = { "AppAgent", 1, schema, 2 };
    ufo_error_t err;
    ufo_llm_response_t *r = ufo_llm_complete (llm, msgs, &opts, &err);
    ufo_value_destroy (&msgs);
    if (r && r->code != UFO_OK)
        fprintf (stderr, "    (%s -> %s: %s)\n", tag, ufo_errcode_name (r->code), r->error);
    return r;
}

//  Requests the server logged whose last message contains tag.
static int
s_logged (const char *tag, int64_t *t_ms, size_t max)
{
    char *text = tf_read_text (s_log_path);
    int n = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n")) {
        ufo_value_t *v = ufo_json_parse_str (line, NULL);
        if (strstr (ufo_value_map_str (v, "last", ""), tag)) {
            if (t_ms && (size_t) n < max)
                t_ms [n] = ufo_value_map_int (v, "t_ms", 0);
            n++;
        }
        ufo_value_destroy (&v);
    }
    free (text);
    return n;
}

static ufo_llm_t *
s_client (void)
{
    ufo_llm_config_t cfg;
    s_config (&cfg, "APP_AGENT", "ufo-scripted", KEY);
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    const char *prices = "{\"openai_compatible/ufo-scripted\": {\"input\": 0.0025, \"output\": 0.01}}";
    ufo_prices_t *p = ufo_prices_parse (prices, strlen (prices), &err);
    ufo_llm_set_prices (llm, &p);
    return llm;
}

UFO_TEST (test_ok_and_cost)
{
    ufo_llm_t *llm = s_client ();
    REQUIRE (llm);
    ufo_llm_response_t *r = s_ask (llm, "[case:ok]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (r->content, "hello from the script");
    CHECK_INT (r->prompt_tokens, 1200);
    CHECK_INT (r->completion_tokens, 300);
    //  1200 * 0.0025 / 1000 + 300 * 0.01 / 1000 = 0.006
    CHECK (fabs (r->cost - 0.006) < 1e-12);
    CHECK_INT (r->attempts, 1);
    CHECK_STR (r->model, "openai_compatible/ufo-scripted");
    //  The image travelled (and is elided in the response's copy of the messages).
    char *log = tf_read_text (s_log_path);
    CHECK_CONTAINS (log, "\"images\":1");
    CHECK_CONTAINS (log, "\"key_ok\":true");
    CHECK_CONTAINS (log, "\"auth\":\"bearer\"");
    CHECK_CONTAINS (log, "\"path\":\"/v1/chat/completions\"");
    free (log);
    char *msgs = ufo_json_dump (r->messages, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (msgs, "image:");
    CHECK (!strstr (msgs, "iVBORw0KGgo"));
    free (msgs);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_retry_after_429)
{
    ufo_llm_t *llm = s_client ();
    ufo_llm_response_t *r = s_ask (llm, "[case:429]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (r->content, "after 429");
    CHECK_INT (r->attempts, 2);
    int64_t t [4];
    CHECK_INT (s_logged ("[case:429]", t, 4), 2);
    //  Retry-After: 1 was honoured (our own backoff here is 20 ms).
    CHECK (t [1] - t [0] >= 950);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_transient_faults_retried)
{
    const char *cases [][2] = {
        { "[case:500]", "after 500" }, { "[case:reset]", "after reset" },
        { "[case:malformed]", "after malformed" }, { "[case:truncated]", "after truncated" },
    };
    //  A fresh client per case: on a reused connection curl itself silently retries a
    //  request whose connection was reset, which would hide our own retry.
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_llm_t *llm = s_client ();
        ufo_llm_response_t *r = s_ask (llm, cases [i][0], UFO_SCHEMA_NONE);
        REQUIRE (r);
        CHECK_INT (r->code, UFO_OK);
        CHECK_STR (r->content, cases [i][1]);
        if (r->attempts != 2)
            UFO_FAIL_ ("%s: %d attempts", cases [i][0], r->attempts);
        CHECK_INT (s_logged (cases [i][0], NULL, 0), 2);
        ufo_llm_response_destroy (&r);
        ufo_llm_destroy (&llm);
    }
}

UFO_TEST (test_no_retry_on_401_400)
{
    ufo_llm_t *llm = s_client ();
    ufo_llm_response_t *r = s_ask (llm, "[case:401]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_DENIED);
    CHECK_INT (r->attempts, 1);
    CHECK_INT (r->http_status, 401);
    char url [128];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", s_port);
    CHECK_CONTAINS (r->error, url);
    CHECK_CONTAINS (r->error, "HTTP 401");
    CHECK_CONTAINS (r->error, "Incorrect API key provided");
    CHECK_CONTAINS (r->error, "AppAgent step 1");
    CHECK_INT (s_logged ("[case:401]", NULL, 0), 1);
    ufo_llm_response_destroy (&r);
    r = s_ask (llm, "[case:400]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_INVALID);
    CHECK_INT (r->attempts, 1);
    CHECK_CONTAINS (r->error, "image is too large");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_backup_engine)
{
    ufo_llm_config_t primary, backup;
    s_config (&primary, "APP_AGENT", "primary-model", KEY);
    s_config (&backup, "BACKUP_AGENT", "backup-model", BACKUP_KEY);
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&primary, &backup, &err);
    REQUIRE (llm);
    ufo_llm_response_t *r = s_ask (llm, "[case:backup]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (r->content, "from the backup");
    CHECK (r->used_backup);
    CHECK_STR (r->engine, "BACKUP_AGENT");
    //  MAX_RETRY 2: three attempts on the primary, then one on the backup.
    CHECK_INT (r->attempts, 4);
    CHECK_INT (s_logged ("[case:backup]", NULL, 0), 4);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
    //  Both engines failing: the error tells both stories.
    ufo_llm_config_t dead = backup;
    snprintf (dead.api_base, sizeof dead.api_base, "http://127.0.0.1:1/v1");
    dead.max_retry = 0;
    llm = ufo_llm_new (&primary, &dead, &err);
    r = s_ask (llm, "[case:backup]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_UNAVAILABLE);
    CHECK_CONTAINS (r->error, "BACKUP_AGENT");
    CHECK_CONTAINS (r->error, "http://127.0.0.1:1/v1/chat/completions");
    CHECK_CONTAINS (r->error, "before that APP_AGENT");
    CHECK_CONTAINS (r->error, "HTTP 500");
    CHECK_INT (r->attempts, 4);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
    //  Without a backup the same request ends in a clear error after MAX_RETRY.
    llm = ufo_llm_new (&primary, NULL, &err);
    r = s_ask (llm, "[case:backup]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_UNAVAILABLE);
    CHECK_CONTAINS (r->error, "HTTP 500");
    CHECK_CONTAINS (r->error, "gave up after 3 attempts");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_timeout)
{
    ufo_llm_config_t cfg;
    s_config (&cfg, "APP_AGENT", "ufo-scripted", KEY);
    cfg.timeout_s = 0.3;
    cfg.max_retry = 1;
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    ufo_llm_response_t *r = s_ask (llm, "[case:slow]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_TIMEOUT);
    CHECK_CONTAINS (r->error, "timed out");
    CHECK_INT (r->attempts, 2);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

typedef struct {
    int calls;
    ufo_llm_response_t *resp;
} s_sink_t;

static void
s_sink (ufo_llm_response_t **response_p, void *arg)
{
    s_sink_t *s = (s_sink_t *) arg;
    s->calls++;
    s->resp = *response_p;
    *response_p = NULL;
}

UFO_TEST (test_cancel)
{
    ufo_llm_t *llm = s_client ();
    ufo_value_t *msgs = s_messages ("You are the AppAgent.", "[case:slow] cancel me");
    s_sink_t sink = { 0, NULL };
    ufo_llm_opts_t opts = { "AppAgent", 3, UFO_SCHEMA_NONE, 0 };
    int64_t id = ufo_llm_submit (llm, msgs, &opts, s_sink, &sink, NULL);
    REQUIRE (id > 0);
    //  Until the server has the request, then cancel it mid-flight.
    for (int i = 0; i < 300 && s_logged ("cancel me", NULL, 0) == 0; i++)
        ufo_llm_poll (llm, 10);
    CHECK_INT (s_logged ("cancel me", NULL, 0), 1);
    CHECK_INT (ufo_llm_pending (llm), 1);
    CHECK_INT (ufo_llm_cancel (llm, id), 0);
    CHECK_INT (ufo_llm_cancel (llm, id), -1);
    CHECK_INT (ufo_llm_pending (llm), 0);
    for (int i = 0; i < 20; i++)
        ufo_llm_poll (llm, 10);
    CHECK_INT (sink.calls, 0);
    ufo_value_destroy (&msgs);
    ufo_llm_destroy (&llm);
}

//  The caller's loop keeps running while a reply trickles in: a timer in the same loop
//  fires many times before the completion arrives.
UFO_TEST (test_loop_not_blocked)
{
    ufo_llm_t *llm = s_client ();
    ufo_value_t *msgs = s_messages ("You are the AppAgent.", "[case:drip]");
    s_sink_t sink = { 0, NULL };
    int64_t id = ufo_llm_submit (llm, msgs, NULL, s_sink, &sink, NULL);
    REQUIRE (id > 0);
    int ticks = 0;
    int64_t next_tick = ufo_time_mono_ms ();
    for (int i = 0; i < 2000 && !sink.calls; i++) {
        ufo_llm_poll (llm, 5);
        int64_t now = ufo_time_mono_ms ();
        if (now >= next_tick) {
            ticks++;            //  the "heartbeat" timer of the agent's loop
            next_tick = now + 20;
        }
    }
    CHECK_INT (sink.calls, 1);
    REQUIRE (sink.resp);
    CHECK_INT (sink.resp->code, UFO_OK);
    CHECK_STR (sink.resp->content, "a reply that arrives eight bytes at a time, slowly");
    //  The reply takes ~30 drips of 30 ms; a blocking client would allow 1 or 2 ticks.
    CHECK (ticks >= 10);
    fprintf (stderr, "    ticks during the dripping reply: %d\n", ticks);
    ufo_llm_response_destroy (&sink.resp);
    ufo_value_destroy (&msgs);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_reask)
{
    ufo_llm_t *llm = s_client ();
    ufo_llm_response_t *r = s_ask (llm, "[case:reask]", UFO_SCHEMA_APP);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    REQUIRE (r->decision);
    CHECK_STR (ufo_value_map_str (r->decision, "Function", ""), "set_edit_text");
    CHECK_INT (r->asks, 2);
    //  The second request carried the bad reply and the corrective message.
    CHECK_INT (ufo_value_size (r->messages), 4);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (r->messages, 2), "role", ""), "assistant");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (r->messages, 3), "content", ""), "DONE");
    ufo_llm_response_destroy (&r);
    //  A reply cut at MAX_TOKENS: the corrective message says so.
    r = s_ask (llm, "[case:cutoff]", UFO_SCHEMA_APP);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_TRUNCATED);
    CHECK_CONTAINS (r->error, "token limit");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (r->messages, 3), "content", ""), "answer more briefly");
    ufo_llm_response_destroy (&r);
    //  A model that never answers in JSON: JSON_PARSING_RETRY (2) re-asks, then an error.
    r = s_ask (llm, "[case:hopeless]", UFO_SCHEMA_APP);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_SYNTAX);
    CHECK_INT (r->asks, 3);
    CHECK_CONTAINS (r->error, "AppAgent step 1");
    CHECK_CONTAINS (r->error, "no JSON object");
    CHECK_STR (r->content, "I would rather chat.");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

UFO_TEST (test_azure)
{
    ufo_llm_config_t cfg;
    s_config (&cfg, "APP_AGENT", "gpt-4o", KEY);
    snprintf (cfg.api_type, sizeof cfg.api_type, "aoai");
    snprintf (cfg.api_base, sizeof cfg.api_base, "http://127.0.0.1:%d/", s_port);
    snprintf (cfg.api_deployment_id, sizeof cfg.api_deployment_id, "dep-1");
    snprintf (cfg.api_version, sizeof cfg.api_version, "2024-02-15-preview");
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    REQUIRE (llm);
    ufo_llm_response_t *r = s_ask (llm, "[case:azure]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK_STR (r->content, "azure ok");
    CHECK_STR (r->model, "azure/gpt-4o");
    char *log = tf_read_text (s_log_path);
    CHECK_CONTAINS (log, "/openai/deployments/dep-1/chat/completions?api-version=2024-02-15-preview");
    CHECK_CONTAINS (log, "\"auth\":\"api-key\"");
    free (log);
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

//  A two-step "session" (Host decides, App decides), recorded, then replayed without a
//  server: identical decisions. Then a changed prompt: a clear miss.
static void
s_session (ufo_llm_t *llm, ufo_value_t **host_p, ufo_value_t **app_p, int *code_p)
{
    ufo_value_t *m1 = s_messages ("You are the HostAgent.", "[case:session] write a note");
    ufo_value_t *m2 = s_messages ("You are the AppAgent.", "[case:session] subtask: type");
    ufo_llm_opts_t o1 = { "HostAgent", 1, UFO_SCHEMA_HOST, 1 };
    ufo_llm_opts_t o2 = { "AppAgent", 2, UFO_SCHEMA_APP, 1 };
    ufo_llm_response_t *r1 = ufo_llm_complete (llm, m1, &o1, NULL);
    ufo_llm_response_t *r2 = ufo_llm_complete (llm, m2, &o2, NULL);
    *host_p = r1 && r1->decision ? ufo_value_dup (r1->decision) : NULL;
    *app_p = r2 && r2->decision ? ufo_value_dup (r2->decision) : NULL;
    *code_p = (r1 ? r1->code : -1) | (r2 ? r2->code : -1);
    ufo_llm_response_destroy (&r1);
    ufo_llm_response_destroy (&r2);
    ufo_value_destroy (&m1);
    ufo_value_destroy (&m2);
}

UFO_TEST (test_record_replay)
{
    char cassette [300];
    snprintf (cassette, sizeof cassette, "%s/cassette.jsonl", s_dir);
    ufo_error_t err;
    ufo_llm_t *llm = s_client ();
    ufo_cassette_t *c = ufo_cassette_open (cassette, UFO_CASSETTE_RECORD, &err);
    REQUIRE (c);
    ufo_llm_set_cassette (llm, &c);
    CHECK (c == NULL);
    ufo_value_t *host = NULL, *app = NULL;
    int code = -1;
    s_session (llm, &host, &app, &code);
    CHECK_INT (code, UFO_OK);
    REQUIRE (host && app);
    CHECK_STR (ufo_value_map_str (host, "Status", ""), "ASSIGN");
    ufo_llm_destroy (&llm);
    int before = s_logged ("[case:session]", NULL, 0);

    //  Replay against a dead port: nothing may touch the network.
    ufo_llm_config_t cfg;
    s_config (&cfg, "APP_AGENT", "ufo-scripted", KEY);
    snprintf (cfg.api_base, sizeof cfg.api_base, "http://127.0.0.1:1/v1");
    llm = ufo_llm_new (&cfg, NULL, &err);
    c = ufo_cassette_open (cassette, UFO_CASSETTE_REPLAY, &err);
    REQUIRE (c);
    CHECK_INT (ufo_cassette_size (c), 2);
    ufo_llm_set_cassette (llm, &c);
    ufo_value_t *host2 = NULL, *app2 = NULL;
    s_session (llm, &host2, &app2, &code);
    CHECK_INT (code, UFO_OK);
    CHECK (ufo_value_equal (host, host2));
    CHECK (ufo_value_equal (app, app2));
    CHECK_INT (s_logged ("[case:session]", NULL, 0), before);

    //  A different screenshot with the same text still replays: images do not take part.
    ufo_value_t *mi = s_messages ("You are the HostAgent.", "[case:session] write a note");
    ufo_value_t *img = ufo_value_path (mi, "1.content.1.image_url");
    REQUIRE (img);
    ufo_value_map_set_str (img, "url", "data:image/png;base64,AAAAAAAAAAAAAAAAAAAA");
    ufo_llm_opts_t oi = { "HostAgent", 9, UFO_SCHEMA_HOST, 1 };
    ufo_llm_response_t *ri = ufo_llm_complete (llm, mi, &oi, NULL);
    REQUIRE (ri);
    CHECK_INT (ri->code, UFO_OK);
    CHECK (ri->from_cassette);
    CHECK (ufo_value_equal (ri->decision, host));
    ufo_llm_response_destroy (&ri);
    ufo_value_destroy (&mi);

    //  A prompt that was never recorded.
    ufo_value_t *m = s_messages ("You are the AppAgent.", "[case:session] subtask: type slowly");
    ufo_llm_opts_t o = { "AppAgent", 7, UFO_SCHEMA_APP, 1 };
    ufo_llm_response_t *r = ufo_llm_complete (llm, m, &o, NULL);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_NOT_FOUND);
    CHECK_CONTAINS (r->error, "replay miss: AppAgent step 7");
    CHECK_CONTAINS (r->error, "closest recording: AppAgent step 2");
    CHECK_CONTAINS (r->error, "message 1, user part 0 (text)");
    CHECK_CONTAINS (r->error, "type slowly");
    fprintf (stderr, "    miss message:\n%s\n", r->error);
    ufo_llm_response_destroy (&r);
    ufo_value_destroy (&m);
    ufo_value_destroy (&host);
    ufo_value_destroy (&app);
    ufo_value_destroy (&host2);
    ufo_value_destroy (&app2);
    ufo_llm_destroy (&llm);

    //  A reply cut at max_tokens (finish_reason "length"): the re-ask says "answer more
    //  briefly"; the cassette keeps the finish_reason, so the replayed re-ask is the same
    //  prompt and hits.
    char cut_cassette [300];
    snprintf (cut_cassette, sizeof cut_cassette, "%s/cutoff-cassette.jsonl", s_dir);
    ufo_llm_response_t *rec = NULL, *rep = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            llm = s_client ();
        else
            llm = ufo_llm_new (&cfg, NULL, &err);       //  the dead port
        REQUIRE (llm);
        c = ufo_cassette_open (cut_cassette, pass == 0 ? UFO_CASSETTE_RECORD : UFO_CASSETTE_REPLAY, &err);
        REQUIRE (c);
        ufo_llm_set_cassette (llm, &c);
        ufo_value_t *mc = s_messages ("You are the AppAgent.", "[case:cutoff] write a long note");
        ufo_llm_opts_t oc = { "AppAgent", 3, UFO_SCHEMA_APP, 1 };
        ufo_llm_response_t *rc = ufo_llm_complete (llm, mc, &oc, NULL);
        ufo_value_destroy (&mc);
        ufo_llm_destroy (&llm);
        if (pass == 0)
            rec = rc;
        else
            rep = rc;
    }
    REQUIRE (rec && rep);
    CHECK_INT (rec->code, UFO_E_TRUNCATED);
    CHECK_INT (rec->asks, 2);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (rec->messages, 3), "content", ""), "answer more briefly");
    char *lines = tf_read_text (cut_cassette);
    CHECK_CONTAINS (lines, "\"finish_reason\":\"length\"");
    free (lines);
    if (rep->code != UFO_E_TRUNCATED)
        fprintf (stderr, "    cutoff replay: %s\n", rep->error ? rep->error : "(no error)");
    CHECK_INT (rep->code, UFO_E_TRUNCATED);
    CHECK_INT (rep->asks, 2);
    CHECK (rep->from_cassette);
    CHECK_STR (rep->error, rec->error);
    CHECK (ufo_value_equal (rep->messages, rec->messages));
    ufo_llm_response_destroy (&rec);
    ufo_llm_response_destroy (&rep);
}

//  Sends raw bytes to the server and returns what it answers (up to 4 KB, 2 s at most).
static char *
s_raw (const char *request, size_t len)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    addr.sin_port = htons ((uint16_t) s_port);
    struct timeval tv = { 2, 0 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char *out = NULL;
    if (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0 && send (fd, request, len, 0) == (ssize_t) len) {
        char buf [4096];
        ssize_t n = recv (fd, buf, sizeof buf - 1, 0);
        if (n > 0) {
            buf [n] = 0;
            out = ufo_strdup (buf);
        }
    }
    close (fd);
    return out ? out : ufo_strdup ("");
}

//  Bad input never stops the server: it answers or drops, then keeps serving.
UFO_TEST (test_server_robust)
{
    const char *get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    char *r = s_raw (get, strlen (get));
    CHECK_CONTAINS (r, "HTTP/1.1 404");
    free (r);
    const char *bad = "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 9\r\n\r\n{not json";
    r = s_raw (bad, strlen (bad));
    CHECK_CONTAINS (r, "HTTP/1.1 400");
    free (r);
    const char *huge = "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n";
    r = s_raw (huge, strlen (huge));
    CHECK_STR (r, "");          //  dropped
    free (r);
    char junk [512];
    for (size_t i = 0; i < sizeof junk; i++)
        junk [i] = (char) (i * 7 + 1);
    r = s_raw (junk, sizeof junk);
    free (r);
    ufo_llm_t *llm = s_client ();
    ufo_llm_response_t *resp = s_ask (llm, "[case:ok]", UFO_SCHEMA_NONE);
    REQUIRE (resp);
    CHECK_INT (resp->code, UFO_OK);
    ufo_llm_response_destroy (&resp);
    ufo_llm_destroy (&llm);
}

//  Replies can quote labels from the request (the server's "vars" captures).
UFO_TEST (test_captures)
{
    ufo_llm_t *llm = s_client ();
    ufo_llm_response_t *r = s_ask (llm, "[case:capture]\n- label \"3\": Terminal\n- label \"7\": Untitled 1 - Mousepad \"x\"",
                                   UFO_SCHEMA_OBJECT);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    REQUIRE (r->decision);
    CHECK_STR (ufo_value_map_str (r->decision, "label", ""), "7");
    CHECK_STR (ufo_value_map_str (r->decision, "title", ""), "Untitled 1 - Mousepad \"x\"");
    CHECK_STR (ufo_value_map_str (r->decision, "none", "?"), "");
    CHECK_STR (ufo_value_map_str (r->decision, "keep", ""), "${OTHER}");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
}

//  The command-line tool: a real AppAgent prompt from prompts/, configured through the
//  environment, answered by the server, decision printed.
UFO_TEST (test_ask_tool)
{
    const char *src = getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : "..";
    const char *build = getenv ("UFO_BUILD_DIR") ? getenv ("UFO_BUILD_DIR") : ".";
    char vars [400], out [400], err_path [400], cmd [4096];
    snprintf (vars, sizeof vars, "%s/vars.json", s_dir);
    snprintf (out, sizeof out, "%s/ask.out", s_dir);
    snprintf (err_path, sizeof err_path, "%s/ask.err", s_dir);
    tf_write (vars, "{\"request\": \"[case:tool] write a note\", \"subtask\": \"type it\","
                        " \"application\": \"Mousepad\", \"controls\": [{\"label\": \"1\", \"type\": \"Edit\", \"name\": \"Text\"}]}");
    snprintf (cmd, sizeof cmd,
              "env UFO_CONFIG='%s/config/ufo.json' UFO_PROMPTS_DIR='%s/prompts' "
              "UFO_APP_AGENT__API_TYPE=openai_compatible UFO_APP_AGENT__API_BASE=http://127.0.0.1:%d/v1 "
              "UFO_APP_AGENT__API_MODEL=ufo-scripted UFO_APP_AGENT__API_KEY=" KEY " UFO_LLM__PRICES_FILE='%s/config/prices.json' "
              "'%s/tests/ufo-llm-ask' --agent app --vars '%s' --text-only > '%s' 2> '%s'",
              src, src, s_port, src, build, vars, out, err_path);
    int rc = system (cmd);
    CHECK_INT (rc, 0);
    char *text = tf_read_text (out);
    CHECK_CONTAINS (text, "\"Function\": \"summary\"");
    CHECK_CONTAINS (text, "\"text\": \"tool ok\"");
    free (text);
    text = tf_read_text (err_path);
    //  1000 * 0.0025 / 1000 + 100 * 0.01 / 1000 with the shipped prices
    CHECK_CONTAINS (text, "cost $0.003500");
    CHECK (!strstr (text, KEY));
    free (text);

    //  --llm-mode record, then replay against a dead port: the same decision, no network.
    char cassette [400], out2 [400];
    snprintf (cassette, sizeof cassette, "%s/ask-cassette.jsonl", s_dir);
    snprintf (out2, sizeof out2, "%s/ask2.out", s_dir);
    const char *modes [2] = { "record", "replay" };
    for (int i = 0; i < 2; i++) {
        snprintf (cmd, sizeof cmd,
                  "env UFO_CONFIG='%s/config/ufo.json' UFO_PROMPTS_DIR='%s/prompts' "
                  "UFO_APP_AGENT__API_TYPE=openai_compatible UFO_APP_AGENT__API_BASE=http://127.0.0.1:%d/v1 "
                  "UFO_APP_AGENT__API_MODEL=ufo-scripted UFO_APP_AGENT__API_KEY=" KEY " "
                  "'%s/tests/ufo-llm-ask' --agent app --vars '%s' --text-only --llm-mode %s --llm-cassette '%s' "
                  "> '%s' 2> '%s'",
                  src, src, i == 0 ? s_port : 1, build, vars, modes [i], cassette, i == 0 ? out : out2, err_path);
        CHECK_INT (system (cmd), 0);
    }
    char *a = tf_read_text (out), *b = tf_read_text (out2);
    CHECK (strlen (a) > 0);
    CHECK_STR (a, b);
    free (a);
    free (b);
    text = tf_read_text (err_path);
    CHECK_CONTAINS (text, "replayed");
    free (text);
}

//  Runs last: everything we wrote (our log, the cassette, responses) is free of the keys.
UFO_TEST (test_keys_never_leak)
{
    //  A model that echoes the key in an invalid reply (as the Status): the reason it is
    //  unusable goes to our log, into the re-ask prompt and the cassette, all masked.
    char echo_cassette [300];
    snprintf (echo_cassette, sizeof echo_cassette, "%s/echo-cassette.jsonl", s_dir);
    ufo_error_t err;
    ufo_llm_t *echo = s_client ();
    ufo_cassette_t *c = ufo_cassette_open (echo_cassette, UFO_CASSETTE_RECORD, &err);
    REQUIRE (c);
    ufo_llm_set_cassette (echo, &c);
    ufo_llm_response_t *r = s_ask (echo, "[case:echo]", UFO_SCHEMA_APP);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_RANGE);
    CHECK_INT (r->asks, 3);
    CHECK_CONTAINS (r->error, "\"Status\": \"***\" is not allowed");
    char *msgs = ufo_json_dump (r->messages, UFO_JSON_COMPACT, NULL);
    CHECK (!strstr (msgs, KEY));
    CHECK_CONTAINS (msgs, "Your previous reply could not be used: \\\"Status\\\": \\\"***\\\"");
    free (msgs);
    ufo_llm_response_destroy (&r);
    //  The key spelled with a JSON escape in a valid reply: masked in the decision too.
    r = s_ask (echo, "[case:escaped]", UFO_SCHEMA_APP);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_str (ufo_value_path (r->decision, "Args.text")), "key ***");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&echo);
    CHECK (s_logged ("\"Status\": \"***\" is not allowed", NULL, 0) >= 2);
    fflush (s_client_log_f);
    char *client_log = tf_read_text (s_client_log);
    CHECK_CONTAINS (client_log, "unusable reply (\"Status\": \"***\" is not allowed");
    free (client_log);

    const char *files [] = { s_client_log, "cassette.jsonl", "requests.jsonl", "ask.out", "ask.err",
                             "ask-cassette.jsonl", "echo-cassette.jsonl" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (files); i++) {
        char path [400];
        if (files [i][0] == '/')
            snprintf (path, sizeof path, "%s", files [i]);
        else
            snprintf (path, sizeof path, "%s/%s", s_dir, files [i]);
        char *text = tf_read_text (path);
        CHECK (strlen (text) > 0);
        if (strstr (text, KEY) || strstr (text, BACKUP_KEY))
            UFO_FAIL_ ("an API key appears in %s", path);
        free (text);
    }
    //  The API echoes the key in its error message: we pass the message on, masked.
    ufo_llm_t *llm = s_client ();
    r = s_ask (llm, "[case:401]", UFO_SCHEMA_NONE);
    REQUIRE (r);
    CHECK (r->error && !strstr (r->error, KEY));
    CHECK_CONTAINS (r->error, "Incorrect API key provided: ***");
    ufo_llm_response_destroy (&r);
    ufo_llm_destroy (&llm);
    char buf [128] = "key=" KEY " again " KEY;
    ufo_llm_redact (buf, KEY);
    CHECK_STR (buf, "key=*** again ***");
}

int
main (void)
{
    setenv ("no_proxy", "127.0.0.1,localhost", 1);    //  loopback never through a proxy
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-llm-test-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    snprintf (s_client_log, sizeof s_client_log, "%s/client.log", s_dir);
    s_client_log_f = fopen (s_client_log, "w");
    ufo_log_set_stream (s_client_log_f);
    ufo_log_set_level (UFO_LOG_DEBUG);
    if (s_server_start ()) {
        fprintf (stderr, "cannot start ufo-llm-server\n");
        return 1;
    }
    UFO_RUN (test_ok_and_cost);
    UFO_RUN (test_retry_after_429);
    UFO_RUN (test_transient_faults_retried);
    UFO_RUN (test_no_retry_on_401_400);
    UFO_RUN (test_backup_engine);
    UFO_RUN (test_timeout);
    UFO_RUN (test_cancel);
    UFO_RUN (test_loop_not_blocked);
    UFO_RUN (test_reask);
    UFO_RUN (test_azure);
    UFO_RUN (test_record_replay);
    UFO_RUN (test_server_robust);
    UFO_RUN (test_captures);
    UFO_RUN (test_ask_tool);
    UFO_RUN (test_keys_never_leak);
    s_server_stop ();
    ufo_log_set_stream (NULL);
    fclose (s_client_log_f);
    if (!getenv ("KEEP_LLM_TEST_DIR")) {
        char cmd [400];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
        if (system (cmd) != 0)
            fprintf (stderr, "could not remove %s\n", s_dir);
    }
    return UFO_TEST_END ();
}
