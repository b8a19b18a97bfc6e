/*  test_llm_recipes.c - every recipe of docs/QUICKSTART.md, as a user sets it up (the one model
    setting in the environment over the shipped config/ufo.json), through the production path
    (ufo_config_load -> ufo_llm_new_from_config -> a request with an image and JSON mode)
    against the scripted server standing in for the provider: the request path, the key's
    header, the provider's own headers and the body's shape are checked in the server's log,
    and the reply is read in that provider's shape (tokens, cost). Also the reasoning-model
    recipe: refused as the provider refuses it (HTTP 400 naming max_tokens) with the setting
    to change in the error, then accepted with REASONING_MODEL. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_config.h"
#include "ufo_test.h"
#include "llm_server_fixture.h"
#include "test_files.h"
#include <signal.h>
#include <sys/wait.h>

#define KEY "sk-RECIPE-3c9e1a7b5d"

static char s_dir [256];
static char s_log_path [300];
static char s_config_path [1200];
static pid_t s_server = -1;
static int s_port = 0;

#define OK_JSON "{\\\"ok\\\": true}"

//  Entries match on the model each recipe names; reasoning models refuse like OpenAI's.
static const char *s_script =
"{\"entries\": [\n"
" {\"match\": {\"model\": \"o3-mini\"}, \"times\": 0, \"reject_params\": [\"max_tokens\", \"temperature\", \"top_p\"],\n"
"  \"require_key\": \"" KEY "\", \"content\": \"" OK_JSON "\", \"usage\": {\"prompt_tokens\": 50, \"completion_tokens\": 5}},\n"
" {\"match\": {\"model\": \"text-only\"}, \"times\": 0, \"no_images\": true, \"content\": \"" OK_JSON "\"},\n"
" {\"match\": {}, \"times\": 0, \"models\": [\"gpt-4o\", \"llava\", \"Qwen/Qwen2.5-VL-7B-Instruct\", \"claude-sonnet-4-5\",\n"
"  \"gemini-2.5-flash\", \"o3-mini\", \"text-only\"], \"content\": \"" OK_JSON "\",\n"
"  \"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 100}}\n"
"]}\n";

static const char *s_vars [] = { "UFO_API_TYPE", "UFO_API_BASE", "UFO_API_KEY", "UFO_API_MODEL",
                                 "UFO_API_VERSION", "UFO_API_DEPLOYMENT_ID", "UFO_REASONING_MODEL",
                                 "UFO_REASONING_EFFORT", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY",
                                 "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "UFO_CONFIG", NULL };

static void
s_clear_env (void)
{
    for (const char **v = s_vars; *v; v++)
        unsetenv (*v);
}

//  "NAME=VALUE" pairs, with PORT in a value replaced by the server's port.
static void
s_env (const char *const *pairs)
{
    s_clear_env ();
    for (size_t i = 0; pairs [i]; i++) {
        char name [64], value [512];
        const char *eq = strchr (pairs [i], '=');
        snprintf (name, sizeof name, "%.*s", (int) (eq - pairs [i]), pairs [i]);
        const char *port = strstr (eq + 1, "PORT");
        if (port)
            snprintf (value, sizeof value, "%.*s%d%s", (int) (port - eq - 1), eq + 1, s_port, port + 4);
        else
            snprintf (value, sizeof value, "%s", eq + 1);
        setenv (name, value, 1);
    }
}

static ufo_value_t *
s_messages (void)
{
    return ufo_json_parse_str (
        "[{\"role\": \"system\", \"content\": \"You are the AppAgent. Answer in JSON.\"},"
        " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"[recipe] reply {\\\"ok\\\": true}\"},"
        "   {\"type\": \"image_url\", \"image_url\": {\"url\": \"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\"}}]}]",
        NULL);
}

//  Runs one request of block through the configuration as loaded now. Returns the response
//  (caller destroys), NULL when the client could not be made; *line_p gets the server's log
//  line of the last request (caller destroys).
static ufo_llm_response_t *
s_ask (const char *block, ufo_value_t **line_p)
{
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (s_config_path, &err);
    if (!config) {
        fprintf (stderr, "    config: %s\n", err.message);
        return NULL;
    }
    ufo_llm_t *llm = ufo_llm_new_from_config (config, block, NULL, NULL, &err);
    ufo_config_destroy (&config);
    if (!llm) {
        fprintf (stderr, "    client: %s\n", err.message);
        return NULL;
    }
    ufo_value_t *msgs = s_messages ();
    ufo_llm_opts_t opts = { "AppAgent", 1, UFO_SCHEMA_OBJECT, 0 };
    ufo_llm_response_t *r = ufo_llm_complete (llm, msgs, &opts, &err);
    ufo_value_destroy (&msgs);
    ufo_llm_destroy (&llm);
    if (r && r->code != UFO_OK)
        fprintf (stderr, "    (%s: %s)\n", ufo_errcode_name (r->code), r->error);
    char *log = tf_read_text (s_log_path);
    char *last = NULL;
    for (char *line = strtok (log, "\n"); line; line = strtok (NULL, "\n"))
        last = line;
    *line_p = last ? ufo_json_parse_str (last, NULL) : NULL;
    free (log);
    return r;
}

static const char *
s_str (const ufo_value_t *v, const char *path)
{
    const char *s = ufo_value_str (ufo_value_path (v, path));
    return s ? s : "";
}

static bool
s_has_key (const ufo_value_t *line, const char *key)
{
    const ufo_value_t *keys = ufo_value_map_get (line, "keys");
    for (size_t i = 0; i < ufo_value_size (keys); i++)
        if (!strcmp (ufo_value_str (ufo_value_list_at (keys, i)), key))
            return true;
    return false;
}

//  The chat-completions shape with the usual sampling settings, JSON mode and an image part.
static void
s_check_chat_shape (const ufo_value_t *line)
{
    CHECK (s_has_key (line, "model") && s_has_key (line, "messages") && s_has_key (line, "max_tokens")
           && s_has_key (line, "temperature") && s_has_key (line, "top_p") && s_has_key (line, "response_format"));
    CHECK_STR (ufo_value_map_str (line, "image_shape", ""), "image_url");
    CHECK_STR (s_str (line, "headers.Content-Type"), "application/json");
}

UFO_TEST (test_openai)
{
    const char *env [] = { "UFO_API_BASE=http://127.0.0.1:PORT/v1", "OPENAI_API_KEY=" KEY, "UFO_API_MODEL=gpt-4o", NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("HOST_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/v1/chat/completions");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "bearer");
    CHECK_STR (ufo_value_map_str (line, "model", ""), "gpt-4o");
    s_check_chat_shape (line);
    CHECK_STR (r->model, "openai/gpt-4o");
    CHECK (fabs (r->cost - (1000 * 0.0025 + 100 * 0.01) / 1000) < 1e-12);      //  priced
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

UFO_TEST (test_azure)
{
    const char *env [] = { "UFO_API_TYPE=aoai", "UFO_API_BASE=http://127.0.0.1:PORT", "UFO_API_DEPLOYMENT_ID=gpt4o-prod",
                           "UFO_API_VERSION=2024-10-21", "UFO_API_MODEL=gpt-4o", "AZURE_OPENAI_API_KEY=" KEY, NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("APP_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "api-key");
    s_check_chat_shape (line);
    CHECK_STR (r->model, "azure/gpt-4o");
    CHECK (r->cost > 0);
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

UFO_TEST (test_ollama)
{
    const char *env [] = { "UFO_API_TYPE=ollama", "UFO_API_BASE=http://127.0.0.1:PORT", "UFO_API_MODEL=llava", NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("EVALUATION_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/v1/chat/completions");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "none");
    CHECK_STR (ufo_value_map_str (line, "model", ""), "llava");
    s_check_chat_shape (line);
    CHECK_STR (r->model, "ollama/llava");
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

//  vLLM, the llama.cpp server and LM Studio: the same recipe, openai_compatible.
UFO_TEST (test_openai_compatible)
{
    const char *env [] = { "UFO_API_TYPE=openai_compatible", "UFO_API_BASE=http://127.0.0.1:PORT/v1",
                           "UFO_API_MODEL=Qwen/Qwen2.5-VL-7B-Instruct", "UFO_API_KEY=" KEY, NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("APP_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/v1/chat/completions");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "bearer");
    s_check_chat_shape (line);
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

UFO_TEST (test_claude)
{
    const char *env [] = { "UFO_API_TYPE=claude", "UFO_API_BASE=http://127.0.0.1:PORT", "UFO_API_MODEL=claude-sonnet-4-5",
                           "ANTHROPIC_API_KEY=" KEY, NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("APP_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/v1/messages");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "x-api-key");
    CHECK_STR (s_str (line, "headers.anthropic-version"), "2023-06-01");
    CHECK_CONTAINS (ufo_value_map_str (line, "system", ""), "You are the AppAgent");
    CHECK_STR (ufo_value_map_str (line, "image_shape", ""), "image/base64");
    CHECK_INT (ufo_value_map_int (line, "images", 0), 1);
    CHECK (s_has_key (line, "max_tokens") && s_has_key (line, "system") && !s_has_key (line, "top_p")
           && !s_has_key (line, "response_format"));
    CHECK_STR (ufo_value_map_str (line, "agent", ""), "AppAgent");
    //  The reply in the Messages shape: text blocks, usage input/output_tokens.
    CHECK (ufo_value_map_bool (r->decision, "ok", false));
    CHECK_INT (r->prompt_tokens, 1000);
    CHECK_INT (r->completion_tokens, 100);
    CHECK_STR (r->model, "claude/claude-sonnet-4-5");
    CHECK (fabs (r->cost - (1000 * 0.003 + 100 * 0.015) / 1000) < 1e-12);
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

UFO_TEST (test_gemini)
{
    const char *env [] = { "UFO_API_TYPE=gemini", "UFO_API_BASE=http://127.0.0.1:PORT/v1beta/openai/",
                           "UFO_API_MODEL=gemini-2.5-flash", "GEMINI_API_KEY=" KEY, NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("HOST_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_STR (ufo_value_map_str (line, "path", ""), "/v1beta/openai/chat/completions");
    CHECK_STR (ufo_value_map_str (line, "auth", ""), "bearer");
    s_check_chat_shape (line);
    CHECK_STR (r->model, "gemini/gemini-2.5-flash");
    CHECK (r->cost > 0);
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

UFO_TEST (test_reasoning_model)
{
    const char *env [] = { "UFO_API_BASE=http://127.0.0.1:PORT/v1", "OPENAI_API_KEY=" KEY, "UFO_API_MODEL=o3-mini", NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("HOST_AGENT", &line);
    REQUIRE (r && line);
    //  Refused as OpenAI refuses it, not retried, and the error says what to set.
    CHECK_INT (r->code, UFO_E_INVALID);
    CHECK_INT (r->http_status, 400);
    CHECK_INT (r->attempts, 1);
    CHECK_CONTAINS (r->error, "max_tokens");
    CHECK_CONTAINS (r->error, "set HOST_AGENT.REASONING_MODEL true");
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);

    const char *env2 [] = { "UFO_API_BASE=http://127.0.0.1:PORT/v1", "OPENAI_API_KEY=" KEY, "UFO_API_MODEL=o3-mini",
                            "UFO_REASONING_MODEL=true", "UFO_REASONING_EFFORT=low", NULL };
    s_env (env2);
    r = s_ask ("HOST_AGENT", &line);
    REQUIRE (r && line);
    CHECK_INT (r->code, UFO_OK);
    CHECK_INT (ufo_value_map_int (line, "max_completion_tokens", -1), 2000);
    CHECK_STR (ufo_value_map_str (line, "reasoning_effort", ""), "low");
    CHECK (!s_has_key (line, "max_tokens") && !s_has_key (line, "temperature") && !s_has_key (line, "top_p"));
    CHECK (ufo_value_map_bool (line, "key_ok", false));
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

//  The usual mistakes, each with the setting to change in the error.
UFO_TEST (test_mistakes)
{
    const char *env [] = { "UFO_API_BASE=http://127.0.0.1:PORT/v1", "UFO_API_MODEL=gpt-4-nonexistent", NULL };
    s_env (env);
    ufo_value_t *line = NULL;
    ufo_llm_response_t *r = s_ask ("APP_AGENT", &line);
    REQUIRE (r);
    CHECK_INT (r->http_status, 404);
    CHECK_CONTAINS (r->error, "check APP_AGENT.API_MODEL");
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
    const char *env2 [] = { "UFO_API_BASE=http://127.0.0.1:PORT/v1", "UFO_API_MODEL=text-only", NULL };
    s_env (env2);
    r = s_ask ("APP_AGENT", &line);
    REQUIRE (r);
    CHECK_INT (r->http_status, 400);
    CHECK_CONTAINS (r->error, "set APP_AGENT.VISUAL_MODE false");
    ufo_value_destroy (&line);
    ufo_llm_response_destroy (&r);
}

int
main (void)
{
    setenv ("no_proxy", "127.0.0.1,localhost", 1);    //  loopback never through a proxy
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-recipes-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    const char *src = getenv ("UFO_SOURCE_DIR");
    snprintf (s_config_path, sizeof s_config_path, "%s/config/ufo.json", src ? src : "..");
    s_port = llmfx_start_script (s_dir, s_script, 120, s_log_path, sizeof s_log_path, &s_server);
    if (s_port <= 0) {
        fprintf (stderr, "cannot start ufo-llm-server\n");
        return 1;
    }
    UFO_RUN (test_openai);
    UFO_RUN (test_azure);
    UFO_RUN (test_ollama);
    UFO_RUN (test_openai_compatible);
    UFO_RUN (test_claude);
    UFO_RUN (test_gemini);
    UFO_RUN (test_reasoning_model);
    UFO_RUN (test_mistakes);
    s_clear_env ();
    llmfx_stop (&s_server);
    char cmd [400];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
