/*  test_llm_config.c - engine settings from the configuration, endpoint URLs, client set-up. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_wire.h"
#include "ufo_config.h"
#include "ufo_cassette.h"
#include "ufo_test.h"

static ufo_config_t *
s_config (const char *text, char **envp)
{
    ufo_error_t err;
    ufo_config_t *c = ufo_config_new ();
    if (text && ufo_config_load_text (c, text, strlen (text), &err))
        fprintf (stderr, "config: %s\n", err.message);
    char *empty [] = { NULL };
    if (ufo_config_apply_env (c, envp ? envp : empty, &err))
        fprintf (stderr, "env: %s\n", err.message);
    return c;
}

UFO_TEST (test_blocks_and_fallbacks)
{
    unsetenv ("OPENAI_API_KEY");
    unsetenv ("AZURE_OPENAI_API_KEY");
    char *envp [] = { "UFO_HOST_AGENT__API_KEY=sk-from-env-1234", NULL };
    ufo_config_t *c = s_config ("{\"MAX_TOKENS\": 1500, \"TEMPERATURE\": 0.3, \"TIMEOUT\": 30,"
                                " \"HOST_AGENT\": {\"API_TYPE\": \"ollama\", \"API_BASE\": \"http://localhost:11434/\","
                                "   \"API_MODEL\": \"llava\", \"MAX_TOKENS\": 500, \"VISUAL_MODE\": false},"
                                " \"APP_AGENT\": {\"API_MODEL\": \"gpt-4o-mini\", \"MAX_RETRY\": 1},"
                                " \"EVALUATION_AGENT\": {\"TOP_P\": 0.9}}", envp);
    REQUIRE (c);
    ufo_llm_config_t cfg;
    ufo_error_t err;
    CHECK_INT (ufo_llm_config_from (c, "HOST_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.name, "HOST_AGENT");
    CHECK_STR (cfg.api_type, "ollama");
    CHECK_STR (cfg.api_key, "sk-from-env-1234");
    CHECK_INT (cfg.max_tokens, 500);
    CHECK (fabs (cfg.temperature - 0.3) < 1e-12);
    CHECK (fabs (cfg.timeout_s - 30) < 1e-12);
    CHECK (!cfg.visual_mode);
    char url [1200];
    CHECK_INT (ufo_llm_config_url (&cfg, url, sizeof url), 0);
    CHECK_STR (url, "http://localhost:11434/v1/chat/completions");
    char model [200];
    ufo_llm_config_model_name (&cfg, model, sizeof model);
    CHECK_STR (model, "ollama/llava");

    CHECK_INT (ufo_llm_config_from (c, "EVALUATION_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.api_model, "gpt-4o-mini");       //  from APP_AGENT
    CHECK_INT (cfg.max_retry, 1);                   //  from APP_AGENT
    CHECK (fabs (cfg.top_p - 0.9) < 1e-12);         //  its own
    CHECK_INT (cfg.max_tokens, 1500);               //  top level
    CHECK (cfg.visual_mode);                        //  APP_AGENT's default
    CHECK_INT (ufo_llm_config_url (&cfg, url, sizeof url), 0);
    CHECK_STR (url, "https://api.openai.com/v1/chat/completions");
    CHECK_STR (cfg.api_key, "");

    CHECK (cfg.json_mode);
    ufo_config_t *off = s_config ("{\"llm\": {\"json_mode\": false}}", NULL);
    CHECK_INT (ufo_llm_config_from (off, "APP_AGENT", &cfg, &err), 0);
    CHECK (!cfg.json_mode);
    ufo_config_destroy (&off);

    setenv ("OPENAI_API_KEY", "sk-openai-env-5678", 1);
    CHECK_INT (ufo_llm_config_from (c, "APP_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.api_key, "sk-openai-env-5678");
    unsetenv ("OPENAI_API_KEY");
    ufo_config_destroy (&c);
}

UFO_TEST (test_urls)
{
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    char url [1200];
    const struct { const char *type, *base, *expect; } cases [] = {
        { "openai", "https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions" },
        { "openai", "https://api.openai.com/v1/chat/completions/", "https://api.openai.com/v1/chat/completions" },
        { "openai_compatible", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions" },
        { "ollama", "http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions" },
        { "ollama", "http://localhost:11434", "http://localhost:11434/v1/chat/completions" },
        { "aoai", "https://x.openai.azure.com/", "https://x.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2024-02-15-preview" },
        { "azure_ad", "https://x.openai.azure.com", "https://x.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2024-02-15-preview" },
        { "claude", "https://api.anthropic.com", "https://api.anthropic.com/v1/messages" },
        { "claude", "https://api.anthropic.com/v1/", "https://api.anthropic.com/v1/messages" },
        { "claude", "http://127.0.0.1:9/v1/messages", "http://127.0.0.1:9/v1/messages" },
        { "gemini", "https://generativelanguage.googleapis.com/v1beta/openai/",
          "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions" },
    };
    snprintf (cfg.api_deployment_id, sizeof cfg.api_deployment_id, "dep");
    snprintf (cfg.api_version, sizeof cfg.api_version, "2024-02-15-preview");
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        snprintf (cfg.api_type, sizeof cfg.api_type, "%s", cases [i].type);
        snprintf (cfg.api_base, sizeof cfg.api_base, "%s", cases [i].base);
        CHECK_INT (ufo_llm_config_url (&cfg, url, sizeof url), 0);
        CHECK_STR (url, cases [i].expect);
    }
}

//  The one model setting: UFO_API_* reach every block still at its default, in every block
//  reader; a block's own value (file or UFO_<BLOCK>__KEY) wins; EVALUATION_AGENT follows.
UFO_TEST (test_one_setting)
{
    unsetenv ("OPENAI_API_KEY");
    char *envp [] = { "UFO_API_BASE=http://127.0.0.1:9/v1", "UFO_API_MODEL=llava", "UFO_API_TYPE=ollama",
                      "UFO_API_KEY=sk-one-setting-42", "UFO_APP_AGENT__API_MODEL=qwen2.5vl", NULL };
    ufo_config_t *c = s_config (NULL, envp);
    REQUIRE (c);
    ufo_llm_config_t cfg;
    ufo_error_t err;
    const char *blocks [] = { "HOST_AGENT", "APP_AGENT", "BACKUP_AGENT", "EVALUATION_AGENT" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        CHECK_INT (ufo_llm_config_from (c, blocks [i], &cfg, &err), 0);
        CHECK_STR (cfg.api_base, "http://127.0.0.1:9/v1");
        CHECK_STR (cfg.api_type, "ollama");
        CHECK_STR (cfg.api_key, "sk-one-setting-42");
        CHECK_STR (cfg.api_model, !strcmp (blocks [i], "HOST_AGENT") || !strcmp (blocks [i], "BACKUP_AGENT")
                                  ? "llava" : "qwen2.5vl");
    }
    ufo_config_destroy (&c);
    //  A block that sets its own endpoint in the file keeps it; the others take the setting.
    c = s_config ("{\"HOST_AGENT\": {\"API_BASE\": \"https://own.example/v1\", \"API_MODEL\": \"own\"}}", envp);
    CHECK_INT (ufo_llm_config_from (c, "HOST_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.api_base, "https://own.example/v1");
    CHECK_STR (cfg.api_model, "own");
    CHECK_STR (cfg.api_type, "ollama");         //  API_TYPE was still the default
    CHECK_INT (ufo_llm_config_from (c, "APP_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.api_base, "http://127.0.0.1:9/v1");
    ufo_config_destroy (&c);
    //  An empty variable is not a setting (compose passes every variable, set or not).
    char *empty [] = { "UFO_API_BASE=", "UFO_API_MODEL=", NULL };
    c = s_config (NULL, empty);
    CHECK_INT (ufo_llm_config_from (c, "HOST_AGENT", &cfg, &err), 0);
    CHECK_STR (cfg.api_base, "https://api.openai.com/v1/chat/completions");
    CHECK_STR (cfg.api_model, "gpt-4o");
    ufo_config_destroy (&c);
    //  A bad type through the one setting is refused, naming the variable.
    char *bad [] = { "UFO_API_TYPE=bard", NULL };
    c = ufo_config_new ();
    CHECK_INT (ufo_config_apply_env (c, bad, &err), -1);
    CHECK_CONTAINS (err.message, "UFO_API_TYPE");
    CHECK_CONTAINS (err.message, "claude");
    ufo_config_destroy (&c);
}

UFO_TEST (test_reasoning_settings)
{
    char *envp [] = { "UFO_REASONING_MODEL=true", "UFO_APP_AGENT__REASONING_EFFORT=low", NULL };
    ufo_config_t *c = s_config ("{\"HOST_AGENT\": {\"REASONING_MODEL\": false}}", envp);
    ufo_llm_config_t cfg;
    ufo_error_t err;
    CHECK_INT (ufo_llm_config_from (c, "HOST_AGENT", &cfg, &err), 0);
    CHECK (!cfg.reasoning_model);
    CHECK_INT (ufo_llm_config_from (c, "APP_AGENT", &cfg, &err), 0);
    CHECK (cfg.reasoning_model);
    CHECK_STR (cfg.reasoning_effort, "low");
    CHECK_INT (ufo_llm_config_from (c, "EVALUATION_AGENT", &cfg, &err), 0);
    CHECK (cfg.reasoning_model);
    CHECK_STR (cfg.reasoning_effort, "low");    //  follows APP_AGENT
    //  The body: max_completion_tokens and reasoning_effort, no max_tokens/temperature/top_p.
    ufo_value_t *msgs = ufo_json_parse_str ("[{\"role\": \"user\", \"content\": \"hi\"}]", NULL);
    size_t len;
    char *body = ufo_llm_wire_body (&cfg, msgs, true, &len);
    CHECK_CONTAINS (body, "\"max_completion_tokens\":2000");
    CHECK_CONTAINS (body, "\"reasoning_effort\":\"low\"");
    CHECK (!strstr (body, "\"max_tokens\"") && !strstr (body, "temperature") && !strstr (body, "top_p"));
    free (body);
    cfg.reasoning_model = false;
    body = ufo_llm_wire_body (&cfg, msgs, false, &len);
    CHECK_CONTAINS (body, "\"max_tokens\":2000");
    CHECK_CONTAINS (body, "\"temperature\"");
    CHECK (!strstr (body, "max_completion_tokens") && !strstr (body, "response_format"));
    free (body);
    ufo_value_destroy (&msgs);
    ufo_config_destroy (&c);
}

//  The Messages API shape (claude): top-level system, roles, image blocks, no top_p, no JSON
//  mode; its reply: text blocks joined, usage input/output_tokens, max_tokens = cut off.
UFO_TEST (test_claude_wire)
{
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    snprintf (cfg.api_type, sizeof cfg.api_type, "claude");
    snprintf (cfg.api_model, sizeof cfg.api_model, "claude-sonnet-4-5");
    snprintf (cfg.api_key, sizeof cfg.api_key, "sk-ant-test-1234");
    cfg.temperature = 1.5;
    ufo_value_t *msgs = ufo_json_parse_str (
        "[{\"role\": \"system\", \"content\": \"rules one\"},"
        " {\"role\": \"system\", \"content\": [{\"type\": \"text\", \"text\": \"rules two\"}]},"
        " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"look\"},"
        "   {\"type\": \"image_url\", \"image_url\": {\"url\": \"data:image/jpeg;base64,QUJD\"}},"
        "   {\"type\": \"image_url\", \"image_url\": {\"url\": \"https://example.org/a.png\"}}]},"
        " {\"role\": \"assistant\", \"content\": \"ok\"}]", NULL);
    size_t len;
    char *text = ufo_llm_wire_body (&cfg, msgs, true, &len);
    ufo_value_t *body = ufo_json_parse (text, len, NULL, NULL);
    CHECK_STR (ufo_value_map_str (body, "system", ""), "rules one\n\nrules two");
    CHECK_INT (ufo_value_size (ufo_value_map_get (body, "messages")), 2);
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.role")), "user");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.content.1.type")), "image");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.content.1.source.type")), "base64");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.content.1.source.media_type")), "image/jpeg");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.content.1.source.data")), "QUJD");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.0.content.2.source.type")), "url");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "messages.1.content")), "ok");
    CHECK_INT (ufo_value_map_int (body, "max_tokens", 0), 2000);
    CHECK (fabs (ufo_value_float (ufo_value_map_get (body, "temperature")) - 1.0) < 1e-12);    //  capped
    CHECK (!ufo_value_map_has (body, "top_p") && !ufo_value_map_has (body, "response_format"));
    ufo_value_destroy (&body);
    free (text);
    cfg.reasoning_model = true;
    text = ufo_llm_wire_body (&cfg, msgs, true, &len);
    CHECK (!strstr (text, "temperature") && strstr (text, "\"max_tokens\":2000"));
    free (text);
    ufo_value_destroy (&msgs);

    ufo_llm_headers_t h;
    ufo_llm_wire_headers (&cfg, "AppAgent", &h);
    CHECK_STR (h.list [0], "Content-Type: application/json");
    CHECK_STR (h.list [1], "x-api-key: sk-ant-test-1234");
    CHECK_STR (h.list [2], "anthropic-version: " UFO_LLM_ANTHROPIC_VERSION);
    CHECK_STR (h.list [3], "X-UFO-Agent: AppAgent");
    CHECK (h.list [4] == NULL);
    ufo_llm_wire_headers_wipe (&h);
    CHECK (!strstr (h.lines [1], "sk-ant"));

    ufo_value_t *reply = ufo_json_parse_str (
        "{\"type\": \"message\", \"content\": [{\"type\": \"text\", \"text\": \"{\\\"a\\\": \"},"
        " {\"type\": \"text\", \"text\": \"1}\"}], \"stop_reason\": \"max_tokens\","
        " \"usage\": {\"input_tokens\": 12, \"output_tokens\": 3}}", NULL);
    char *content = NULL, finish [32], why [64];
    int64_t pt, ct;
    CHECK_INT (ufo_llm_wire_reply (&cfg, reply, &content, &pt, &ct, finish, sizeof finish, why, sizeof why), 0);
    CHECK_STR (content, "{\"a\": 1}");
    CHECK_INT (pt, 12);
    CHECK_INT (ct, 3);
    CHECK_STR (finish, "length");
    free (content);
    ufo_value_destroy (&reply);
    //  An OpenAI-shaped reply is not a Messages reply.
    reply = ufo_json_parse_str ("{\"choices\": [{\"message\": {\"content\": \"x\"}}]}", NULL);
    CHECK_INT (ufo_llm_wire_reply (&cfg, reply, &content, &pt, &ct, finish, sizeof finish, why, sizeof why), -1);
    CHECK_STR (why, "no content blocks");
    CHECK (content == NULL);
    ufo_value_destroy (&reply);
}

//  An HTTP error is explained with the setting to change.
UFO_TEST (test_error_hints)
{
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    snprintf (cfg.name, sizeof cfg.name, "APP_AGENT");
    snprintf (cfg.api_model, sizeof cfg.api_model, "o3-mini");
    char out [1000];
    const struct { long status; const char *body, *want; } cases [] = {
        { 400, "{\"error\": {\"message\": \"Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.\", \"param\": \"max_tokens\", \"code\": \"unsupported_parameter\"}}",
          "set APP_AGENT.REASONING_MODEL true" },
        //  No param field: the parameter named first in the message decides.
        { 400, "{\"error\": {\"message\": \"Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.\"}}", "set APP_AGENT.REASONING_MODEL true" },
        { 400, "{\"error\": {\"message\": \"Unsupported value: 'temperature' does not support 0 with this model.\"}}",
          "REASONING_MODEL true" },
        { 400, "{\"error\": {\"message\": \"Unrecognized request argument supplied: max_completion_tokens\"}}",
          "set APP_AGENT.REASONING_MODEL false" },
        { 400, "{\"error\": {\"message\": \"Unrecognized request argument supplied: reasoning_effort\"}}",
          "APP_AGENT.REASONING_EFFORT" },
        { 400, "{\"error\": {\"message\": \"Invalid content type. image_url is only supported by certain models.\"}}",
          "APP_AGENT.VISUAL_MODE false" },
        { 400, "{\"error\": {\"message\": \"'response_format' of type 'json_object' is not supported with this model.\"}}",
          "llm.json_mode false" },
        { 401, "{\"error\": {\"message\": \"Incorrect API key provided\"}}", "set APP_AGENT.API_KEY" },
        { 404, "{\"error\": {\"message\": \"The model `o3-mini` does not exist\"}}", "check APP_AGENT.API_MODEL" },
        { 404, "not found", "check APP_AGENT.API_BASE" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_llm_wire_explain (&cfg, cases [i].status, cases [i].body, strlen (cases [i].body), out, sizeof out);
        CHECK_CONTAINS (out, cases [i].want);
    }
    //  A plain 400 gets no invented hint.
    const char *plain = "{\"error\": {\"message\": \"messages: too long\"}}";
    ufo_llm_wire_explain (&cfg, 400, plain, strlen (plain), out, sizeof out);
    CHECK_STR (out, "messages: too long");
}

UFO_TEST (test_errors)
{
    ufo_config_t *c = s_config ("{\"APP_AGENT\": {\"API_TYPE\": \"aoai\", \"API_BASE\": \"https://x\"}}", NULL);
    ufo_llm_config_t cfg;
    ufo_error_t err;
    CHECK_INT (ufo_llm_config_from (c, "APP_AGENT", &cfg, &err), -1);
    CHECK_CONTAINS (err.message, "API_DEPLOYMENT_ID");
    ufo_llm_t *llm = ufo_llm_new_from_config (c, "APP_AGENT", NULL, NULL, &err);
    CHECK (llm == NULL);
    ufo_config_destroy (&c);

    c = s_config (NULL, NULL);
    llm = ufo_llm_new_from_config (c, "HOST_AGENT", "replay", NULL, &err);
    CHECK (llm == NULL);
    CHECK_CONTAINS (err.message, "cassette");
    llm = ufo_llm_new_from_config (c, "HOST_AGENT", "sometimes", NULL, &err);
    CHECK (llm == NULL);
    CHECK_CONTAINS (err.message, "sometimes");
    llm = ufo_llm_new_from_config (c, "HOST_AGENT", "replay", "/nonexistent/cassette.jsonl", &err);
    CHECK (llm == NULL);
    CHECK_INT (err.code, UFO_E_IO);
    //  Live with the defaults: a client, and no backup (BACKUP_AGENT has no key).
    llm = ufo_llm_new_from_config (c, "HOST_AGENT", NULL, NULL, &err);
    REQUIRE (llm);
    CHECK (!ufo_llm_has_backup (llm));
    ufo_llm_destroy (&llm);
    ufo_llm_destroy (&llm);
    ufo_config_destroy (&c);

    char *envp [] = { "UFO_BACKUP_AGENT__API_KEY=sk-backup-9999", NULL };
    c = s_config ("{\"HOST_AGENT\": {\"API_TYPE\": \"ollama\", \"API_BASE\": \"http://localhost:11434\"}}", envp);
    llm = ufo_llm_new_from_config (c, "HOST_AGENT", NULL, NULL, &err);
    REQUIRE (llm);
    CHECK (ufo_llm_has_backup (llm));
    ufo_llm_destroy (&llm);
    ufo_config_destroy (&c);
}

UFO_TEST (test_bad_messages)
{
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    snprintf (cfg.api_base, sizeof cfg.api_base, "http://127.0.0.1:1/v1");
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    REQUIRE (llm);
    const char *bad [] = {
        "[]", "{}", "[1]", "[{\"content\": \"x\"}]", "[{\"role\": \"user\", \"content\": 3}]",
        "[{\"role\": \"user\", \"content\": [{\"type\": \"video\"}]}]",
        "[{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {}}]}]",
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        ufo_value_t *m = ufo_json_parse_str (bad [i], NULL);
        CHECK (ufo_llm_complete (llm, m, NULL, &err) == NULL);
        CHECK_INT (err.code, UFO_E_INVALID);
        ufo_value_destroy (&m);
    }
    CHECK_INT (ufo_llm_pending (llm), 0);
    ufo_llm_destroy (&llm);
    ufo_llm_config_t none;
    ufo_llm_config_defaults (&none);
    CHECK (ufo_llm_new (&none, NULL, &err) == NULL);
    CHECK_CONTAINS (err.message, "API_BASE");
}

//  A refused connection (nothing listens on port 1) is retried, then reported clearly.
UFO_TEST (test_connection_refused)
{
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    snprintf (cfg.name, sizeof cfg.name, "HOST_AGENT");
    snprintf (cfg.api_base, sizeof cfg.api_base, "http://127.0.0.1:1/v1");
    cfg.max_retry = 2;
    cfg.backoff_base_ms = 1;
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    ufo_value_t *m = ufo_json_parse_str ("[{\"role\": \"user\", \"content\": \"hi\"}]", NULL);
    ufo_llm_opts_t opts = { "HostAgent", 4, 0, 0 };
    ufo_llm_response_t *r = ufo_llm_complete (llm, m, &opts, &err);
    REQUIRE (r);
    CHECK_INT (r->code, UFO_E_UNAVAILABLE);
    CHECK_INT (r->attempts, 3);
    CHECK_CONTAINS (r->error, "HostAgent step 4");
    CHECK_CONTAINS (r->error, "http://127.0.0.1:1/v1/chat/completions");
    CHECK_CONTAINS (r->error, "gave up after 3 attempts");
    ufo_llm_response_destroy (&r);
    ufo_value_destroy (&m);
    ufo_llm_destroy (&llm);
}

int
main (void)
{
    ufo_log_set_level (UFO_LOG_ERROR);
    UFO_RUN (test_blocks_and_fallbacks);
    UFO_RUN (test_urls);
    UFO_RUN (test_one_setting);
    UFO_RUN (test_reasoning_settings);
    UFO_RUN (test_claude_wire);
    UFO_RUN (test_error_hints);
    UFO_RUN (test_errors);
    UFO_RUN (test_bad_messages);
    UFO_RUN (test_connection_refused);
    return UFO_TEST_END ();
}
