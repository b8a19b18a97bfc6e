/*  test_llm_override.c - a session's model override: options, checks, the body's "model"
    value (bad input from the bus refused with a clear error), the key from the environment,
    the bounded engine cache, and a request sent to an override engine (its URL in the
    error, its key never). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_override.h"
#include "ufo_test.h"

static void
s_base (ufo_llm_config_t *cfg, const char *name)
{
    ufo_llm_config_defaults (cfg);
    snprintf (cfg->name, sizeof cfg->name, "%s", name);
    snprintf (cfg->api_type, sizeof cfg->api_type, "openai_compatible");
    snprintf (cfg->api_base, sizeof cfg->api_base, "http://127.0.0.1:7001/v1");
    snprintf (cfg->api_model, sizeof cfg->api_model, "m1");
    snprintf (cfg->api_key, sizeof cfg->api_key, "sk-key-of-A-1234");
}

static ufo_value_t *
s_json (const char *text)
{
    return ufo_json_parse (text, strlen (text), NULL, NULL);
}

UFO_TEST (test_options)
{
    ufo_llm_override_t ov;
    ufo_llm_override_init (&ov);
    ufo_error_t err;
    CHECK (ufo_llm_override_empty (&ov));
    CHECK_INT (ufo_llm_override_option (&ov, "--task", "x", &err), 0);
    CHECK_INT (ufo_llm_override_option (&ov, "--model", "m2", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--api-base", "http://127.0.0.1:7002/v1", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--api-type", "openai_compatible", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--api-key-env", "B_KEY", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--reasoning-model", "true", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--reasoning-effort", "low", &err), 1);
    CHECK_INT (ufo_llm_override_option (&ov, "--model", NULL, &err), -1);
    CHECK_CONTAINS (err.message, "--model needs a value");
    CHECK_INT (ufo_llm_override_option (&ov, "--reasoning-model", "maybe", &err), -1);
    char huge [600];
    memset (huge, 'a', sizeof huge - 1);
    huge [sizeof huge - 1] = 0;
    CHECK_INT (ufo_llm_override_option (&ov, "--model", huge, &err), -1);
    CHECK_CONTAINS (err.message, "too long");
    CHECK (!ufo_llm_override_empty (&ov));
    CHECK_INT (ufo_llm_override_check (&ov, &err), 0);
    //  round trip through the body's value
    ufo_value_t *v = ufo_llm_override_to_value (&ov);
    REQUIRE (v);
    char *text = ufo_json_dump (v, UFO_JSON_COMPACT, NULL);
    CHECK_STR (text, "{\"api_type\":\"openai_compatible\",\"api_base\":\"http://127.0.0.1:7002/v1\",\"model\":\"m2\","
                     "\"api_key_env\":\"B_KEY\",\"reasoning_model\":true,\"reasoning_effort\":\"low\"}");
    free (text);
    ufo_llm_override_t back;
    CHECK_INT (ufo_llm_override_from_value (v, &back, &err), 0);
    CHECK_STR (back.model, "m2");
    CHECK_STR (back.api_key_env, "B_KEY");
    CHECK_INT (back.reasoning_model, 1);
    CHECK (back.effort_set);
    ufo_value_destroy (&v);
    ufo_llm_override_init (&ov);
    CHECK (ufo_llm_override_to_value (&ov) == NULL);
}

UFO_TEST (test_checks)
{
    struct { const char *option, *value, *says; } bad [] = {
        { "--api-type", "opena1", "is not one of openai" },
        { "--api-base", "127.0.0.1:9/v1", "is not an http:// or https:// URL" },
        { "--api-base", "http://", "is not an http:// or https:// URL" },
        { "--api-base", "ftp://host/v1", "is not an http:// or https:// URL" },
        { "--api-base", "http://host/v1 x", "is not an http:// or https:// URL" },
        { "--model", "gpt 4o", "spaces or control characters" },
        { "--api-key-env", "sk-secret-key-0123456789", "never the key" },
        { "--api-key-env", "1ABC", "not an environment variable name" },
        { "--reasoning-effort", "extreme", "is not one of minimal" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        ufo_llm_override_t ov;
        ufo_llm_override_init (&ov);
        ufo_error_t err = { 0 };
        CHECK_INT (ufo_llm_override_option (&ov, bad [i].option, bad [i].value, &err), 1);
        CHECK_INT (ufo_llm_override_check (&ov, &err), -1);
        CHECK_CONTAINS (err.message, bad [i].says);
        //  the key-like value is not echoed whole
        if (!strcmp (bad [i].option, "--api-key-env"))
            CHECK (!strstr (err.message, "0123456789"));
    }
    ufo_llm_override_t ok;
    ufo_llm_override_init (&ok);
    ufo_error_t err;
    const char *good [] = { "https://api.openai.com/v1", "http://localhost:11434", "http://[::1]:8000/v1" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (good); i++) {
        ufo_llm_override_option (&ok, "--api-base", good [i], &err);
        CHECK_INT (ufo_llm_override_check (&ok, &err), 0);
    }
}

//  Whatever the bus brings: refused with a clear error, the override left empty.
UFO_TEST (test_from_bus)
{
    struct { const char *json, *says; } bad [] = {
        { "\"gpt-4o\"", "must be a map" },
        { "[1, 2]", "must be a map" },
        { "{\"api_key\": \"sk-leak-1234\"}", "API keys never travel" },
        { "{\"API_KEY\": \"sk-leak-1234\"}", "API keys never travel" },
        { "{\"temperature\": 1}", "unknown field" },
        { "{\"model\": 5}", "model must be a text" },
        { "{\"model\": null}", "model must be a text" },
        { "{\"reasoning_model\": \"yes\"}", "reasoning_model must be true or false" },
        { "{\"api_type\": \"nope\"}", "is not one of openai" },
        { "{\"api_base\": \"file:///etc/passwd\"}", "is not an http:// or https:// URL" },
        { "{\"model\": \"m\\u0000x\"}", "model must be a text" },
        { "{\"model\": \"line\\nbreak\"}", "control characters" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        ufo_value_t *v = s_json (bad [i].json);
        REQUIRE (v);
        ufo_llm_override_t ov;
        ufo_error_t err = { 0 };
        CHECK_INT (ufo_llm_override_from_value (v, &ov, &err), -1);
        CHECK_CONTAINS (err.message, bad [i].says);
        CHECK (!strstr (err.message, "sk-leak"));
        CHECK (ufo_llm_override_empty (&ov));
        ufo_value_destroy (&v);
    }
    ufo_llm_override_t ov;
    ufo_error_t err;
    CHECK_INT (ufo_llm_override_from_value (NULL, &ov, &err), 0);
    CHECK (ufo_llm_override_empty (&ov));
    ufo_value_t *null = ufo_value_new_null ();
    CHECK_INT (ufo_llm_override_from_value (null, &ov, &err), 0);
    ufo_value_destroy (&null);
}

UFO_TEST (test_key_resolution)
{
    ufo_llm_config_t base, out;
    s_base (&base, "HOST_AGENT");
    ufo_llm_override_t ov;
    ufo_error_t err;
    char var [128];
    unsetenv ("OPENAI_API_KEY");
    unsetenv ("UFO_API_KEY");
    unsetenv ("ANTHROPIC_API_KEY");
    unsetenv ("B_KEY");

    //  only the model: the block's endpoint and key stay
    ufo_llm_override_init (&ov);
    ufo_llm_override_option (&ov, "--model", "m2", &err);
    ufo_llm_override_key_var (&ov, &base, var, sizeof var);
    CHECK_STR (var, "");
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_model, "m2");
    CHECK_STR (out.api_key, "sk-key-of-A-1234");
    CHECK_STR (out.api_base, base.api_base);
    CHECK_STR (out.name, "HOST_AGENT");

    //  a named variable: required, and named when missing
    ufo_llm_override_option (&ov, "--api-base", "http://127.0.0.1:7002/v1", &err);
    ufo_llm_override_option (&ov, "--api-key-env", "B_KEY", &err);
    ufo_llm_override_key_var (&ov, &base, var, sizeof var);
    CHECK_STR (var, "B_KEY");
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), -1);
    CHECK_CONTAINS (err.message, "HOST_AGENT: the model override's key variable B_KEY is not set");
    CHECK_STR (out.api_key, "");
    setenv ("B_KEY", "sk-key-of-B-5678", 1);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_key, "sk-key-of-B-5678");
    CHECK_STR (out.api_base, "http://127.0.0.1:7002/v1");

    //  another endpoint without a variable: a local server may go without a key ...
    ufo_llm_override_init (&ov);
    ufo_llm_override_option (&ov, "--api-base", "http://127.0.0.1:7002/v1", &err);
    ufo_llm_override_key_var (&ov, &base, var, sizeof var);
    CHECK_STR (var, "UFO_API_KEY");
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_key, "");            //  never A's key for B
    setenv ("UFO_API_KEY", "sk-ufo-api-key-0000", 1);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_key, "sk-ufo-api-key-0000");
    unsetenv ("UFO_API_KEY");
    //  ... a hosted API needs one: the provider's variable, then UFO_API_KEY
    ufo_llm_override_option (&ov, "--api-type", "claude", &err);
    ufo_llm_override_key_var (&ov, &base, var, sizeof var);
    CHECK_STR (var, "ANTHROPIC_API_KEY or UFO_API_KEY");
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), -1);
    CHECK_CONTAINS (err.message, "neither ANTHROPIC_API_KEY nor UFO_API_KEY is set");
    setenv ("UFO_API_KEY", "sk-ufo-api-key-0000", 1);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_key, "sk-ufo-api-key-0000");
    setenv ("ANTHROPIC_API_KEY", "sk-ant-1111", 1);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK_STR (out.api_key, "sk-ant-1111");
    unsetenv ("ANTHROPIC_API_KEY");
    unsetenv ("UFO_API_KEY");
    ufo_llm_override_init (&ov);
    ufo_llm_override_option (&ov, "--api-type", "openai", &err);
    ufo_llm_override_key_var (&ov, &base, var, sizeof var);
    CHECK_STR (var, "OPENAI_API_KEY or UFO_API_KEY");

    //  aoai without the block's deployment cannot be served
    ufo_llm_override_init (&ov);
    ufo_llm_override_option (&ov, "--api-type", "aoai", &err);
    setenv ("AZURE_OPENAI_API_KEY", "az-2222", 1);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), -1);
    CHECK_CONTAINS (err.message, "API_DEPLOYMENT_ID");
    unsetenv ("AZURE_OPENAI_API_KEY");

    //  reasoning
    ufo_llm_override_init (&ov);
    ufo_llm_override_option (&ov, "--reasoning-model", "true", &err);
    ufo_llm_override_option (&ov, "--reasoning-effort", "high", &err);
    CHECK_INT (ufo_llm_override_apply (&ov, &base, &out, &err), 0);
    CHECK (out.reasoning_model);
    CHECK_STR (out.reasoning_effort, "high");
    unsetenv ("B_KEY");
}

UFO_TEST (test_cache_bounded)
{
    ufo_llm_config_t host, app;
    s_base (&host, "HOST_AGENT");
    s_base (&app, "APP_AGENT");
    ufo_llm_engines_t *cache = ufo_llm_engines_new (2);
    REQUIRE (cache);
    ufo_error_t err;
    ufo_llm_override_t a, b, c;
    ufo_llm_override_init (&a);
    ufo_llm_override_option (&a, "--model", "ma", &err);
    ufo_llm_override_init (&b);
    ufo_llm_override_option (&b, "--model", "mb", &err);
    ufo_llm_override_init (&c);
    ufo_llm_override_option (&c, "--model", "mc", &err);
    const ufo_llm_config_t *e1 = ufo_llm_engines_get (cache, &host, &a, &err);
    REQUIRE (e1);
    CHECK_STR (e1->api_model, "ma");
    //  the same override again: the same engine, nothing new
    CHECK (ufo_llm_engines_get (cache, &host, &a, &err) == e1);
    CHECK_INT (ufo_llm_engines_size (cache), 1);
    //  another block is another engine
    const ufo_llm_config_t *e2 = ufo_llm_engines_get (cache, &app, &a, &err);
    REQUIRE (e2);
    CHECK_STR (e2->name, "APP_AGENT");
    CHECK_INT (ufo_llm_engines_size (cache), 2);
    //  host/ma used last, then a third engine: the least recently used (app/ma) is dropped
    CHECK (ufo_llm_engines_get (cache, &host, &a, &err) != NULL);
    const ufo_llm_config_t *e3 = ufo_llm_engines_get (cache, &host, &b, &err);
    REQUIRE (e3);
    CHECK_STR (e3->api_model, "mb");
    CHECK_INT (ufo_llm_engines_size (cache), 2);
    //  host/ma stayed, app/ma was dropped
    CHECK_STR (ufo_llm_engines_get (cache, &host, &a, &err)->api_model, "ma");
    for (int i = 0; i < 100; i++) {
        ufo_llm_override_t x;
        ufo_llm_override_init (&x);
        char m [32];
        snprintf (m, sizeof m, "m%d", i);
        ufo_llm_override_option (&x, "--model", m, &err);
        REQUIRE (ufo_llm_engines_get (cache, &host, &x, &err));
    }
    CHECK_INT (ufo_llm_engines_size (cache), 2);
    //  a failing resolution is not cached
    ufo_llm_override_option (&c, "--api-key-env", "NOT_SET_ANYWHERE_42", &err);
    unsetenv ("NOT_SET_ANYWHERE_42");
    CHECK (ufo_llm_engines_get (cache, &host, &c, &err) == NULL);
    CHECK_CONTAINS (err.message, "NOT_SET_ANYWHERE_42");
    ufo_llm_engines_destroy (&cache);
    CHECK (cache == NULL);
    ufo_llm_engines_destroy (&cache);
}

//  What an agent calls: the body's "model" on top of its block from the configuration.
UFO_TEST (test_engines_for)
{
    ufo_error_t err;
    ufo_config_t *config = ufo_config_new ();
    const char *text = "{\"APP_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": "
                       "\"http://127.0.0.1:7001/v1\", \"API_MODEL\": \"m1\", \"API_KEY\": \"sk-key-of-A-1234\"}}";
    REQUIRE (ufo_config_load_text (config, text, strlen (text), &err) == 0);
    ufo_llm_engines_t *cache = ufo_llm_engines_new (4);
    const ufo_llm_config_t *engine = (const ufo_llm_config_t *) 1;
    //  no override: no engine, the client's own
    CHECK_INT (ufo_llm_engines_for (cache, config, "APP_AGENT", NULL, &engine, &err), 0);
    CHECK (engine == NULL);
    ufo_value_t *model = s_json ("{\"model\": \"m2\"}");
    CHECK_INT (ufo_llm_engines_for (cache, config, "APP_AGENT", model, &engine, &err), 0);
    REQUIRE (engine);
    CHECK_STR (engine->name, "APP_AGENT");
    CHECK_STR (engine->api_model, "m2");
    CHECK_STR (engine->api_base, "http://127.0.0.1:7001/v1");
    CHECK_STR (engine->api_key, "sk-key-of-A-1234");
    //  EVALUATION_AGENT follows APP_AGENT, as its own engine does
    CHECK_INT (ufo_llm_engines_for (cache, config, "EVALUATION_AGENT", model, &engine, &err), 0);
    REQUIRE (engine);
    CHECK_STR (engine->name, "EVALUATION_AGENT");
    CHECK_STR (engine->api_base, "http://127.0.0.1:7001/v1");
    CHECK_INT (ufo_llm_engines_size (cache), 2);
    ufo_value_destroy (&model);
    model = s_json ("{\"api_key\": \"sk-leak-0000\"}");
    CHECK_INT (ufo_llm_engines_for (cache, config, "APP_AGENT", model, &engine, &err), -1);
    CHECK (engine == NULL);
    CHECK_CONTAINS (err.message, "API keys never travel");
    ufo_value_destroy (&model);
    ufo_llm_engines_destroy (&cache);
    ufo_config_destroy (&config);
}

//  A request with an override engine goes to that engine alone: its URL in the error (a
//  port nothing listens on), its key nowhere, no fallback to the client's own engine.
UFO_TEST (test_request_engine)
{
    ufo_llm_config_t base;
    s_base (&base, "HOST_AGENT");
    base.max_retry = 0;
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&base, NULL, &err);
    REQUIRE (llm);
    ufo_llm_config_t own = base;
    snprintf (own.api_base, sizeof own.api_base, "http://127.0.0.1:1/v1");
    snprintf (own.api_model, sizeof own.api_model, "m2");
    snprintf (own.api_key, sizeof own.api_key, "sk-own-secret-9876");
    ufo_value_t *messages = s_json ("[{\"role\": \"user\", \"content\": \"sk-own-secret-9876 hi\"}]");
    ufo_llm_opts_t opts = { .agent = "HostAgent", .step = 3, .engine = &own };
    ufo_llm_response_t *r = ufo_llm_complete (llm, messages, &opts, &err);
    REQUIRE (r);
    CHECK (r->code != UFO_OK);
    CHECK_CONTAINS (r->error, "http://127.0.0.1:1/v1/chat/completions");
    CHECK (!strstr (r->error, "7001"));
    CHECK (!strstr (r->error, "sk-own-secret"));
    CHECK (!r->used_backup);
    ufo_llm_response_destroy (&r);
    //  an engine that names no endpoint is refused at submit
    own.api_base [0] = 0;
    CHECK (ufo_llm_complete (llm, messages, &opts, &err) == NULL);
    CHECK_CONTAINS (err.message, "no usable LLM endpoint");
    ufo_value_destroy (&messages);
    ufo_llm_destroy (&llm);
}

int
main (void)
{
    UFO_RUN (test_options);
    UFO_RUN (test_checks);
    UFO_RUN (test_from_bus);
    UFO_RUN (test_key_resolution);
    UFO_RUN (test_cache_bounded);
    UFO_RUN (test_engines_for);
    UFO_RUN (test_request_engine);
    return UFO_TEST_END ();
}
