/*  test_llm_config.c - engine settings from the configuration, endpoint URLs, client set-up. */
#include "ufo_prelude.h"
#include "ufo_llm.h"
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
    UFO_RUN (test_errors);
    UFO_RUN (test_bad_messages);
    UFO_RUN (test_connection_refused);
    return UFO_TEST_END ();
}
