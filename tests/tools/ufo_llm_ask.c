/*  ufo_llm_ask.c - one LLM exchange from the command line, through the production client.

    ufo-llm-ask [--config FILE] [--block HOST_AGENT|APP_AGENT|EVALUATION_AGENT]
                [--llm-mode live|record|replay] [--llm-cassette FILE]
                ( --text "a question"
                | --agent host|app|eval --vars FILE.json [--images FILE.json] [--text-only] )

    --text sends one user message and prints the reply. --agent renders that agent's prompt
    from prompts/ with the variables in FILE (a JSON object, see docs/LLM.md), asks for its
    JSON decision (with corrective re-asks, JSON_PARSING_RETRY), and prints the decision.
    Either way a last line on stderr gives tokens, cost, attempts and latency. Useful to try
    a real endpoint (openai, aoai, ollama) or the scripted server by hand.
    Exit status: 0 success, 1 the request failed, 2 bad usage or configuration. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_prompt.h"
#include "ufo_config.h"

static int
s_usage (void)
{
    fprintf (stderr, "usage: ufo-llm-ask [--config FILE] [--block BLOCK] [--llm-mode MODE] [--llm-cassette FILE]\n"
                     "                   (--text TEXT | --agent host|app|eval --vars FILE [--images FILE] [--text-only])\n");
    return 2;
}

int
main (int argc, char **argv)
{
    const char *config_path = NULL, *block = NULL, *mode = NULL, *cassette = NULL;
    const char *text = NULL, *agent = NULL, *vars_path = NULL, *images_path = NULL;
    bool text_only = false;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (!strcmp (argv [i], "--config") && more) config_path = argv [++i];
        else if (!strcmp (argv [i], "--block") && more) block = argv [++i];
        else if (!strcmp (argv [i], "--llm-mode") && more) mode = argv [++i];
        else if (!strcmp (argv [i], "--llm-cassette") && more) cassette = argv [++i];
        else if (!strcmp (argv [i], "--text") && more) text = argv [++i];
        else if (!strcmp (argv [i], "--agent") && more) agent = argv [++i];
        else if (!strcmp (argv [i], "--vars") && more) vars_path = argv [++i];
        else if (!strcmp (argv [i], "--images") && more) images_path = argv [++i];
        else if (!strcmp (argv [i], "--text-only")) text_only = true;
        else return s_usage ();
    }
    if (!text == !agent)
        return s_usage ();
    ufo_schema_t schema = UFO_SCHEMA_NONE;
    const char *agent_name = "LLM";
    if (agent) {
        if (!strcmp (agent, "host")) { schema = UFO_SCHEMA_HOST; agent_name = "HostAgent"; }
        else if (!strcmp (agent, "app")) { schema = UFO_SCHEMA_APP; agent_name = "AppAgent"; }
        else if (!strcmp (agent, "eval")) { schema = UFO_SCHEMA_EVAL; agent_name = "EvaluationAgent"; }
        else return s_usage ();
        if (!vars_path)
            return s_usage ();
    }
    if (!block)
        block = schema == UFO_SCHEMA_HOST ? "HOST_AGENT" : schema == UFO_SCHEMA_EVAL ? "EVALUATION_AGENT" : "APP_AGENT";
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo-llm-ask: %s\n", err.message);
        return 2;
    }
    ufo_llm_t *llm = ufo_llm_new_from_config (config, block, mode, cassette, &err);
    if (!llm) {
        fprintf (stderr, "ufo-llm-ask: %s\n", err.message);
        ufo_config_destroy (&config);
        return 2;
    }
    ufo_value_t *messages = NULL;
    if (text) {
        messages = ufo_value_new_list ();
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "role", "user");
        ufo_value_map_set_str (m, "content", text);
        ufo_value_list_push (messages, &m);
    }
    else {
        ufo_value_t *vars = ufo_json_parse_file (vars_path, NULL, &err);
        ufo_value_t *images = images_path ? ufo_json_parse_file (images_path, NULL, &err) : NULL;
        ufo_prompts_t *prompts = ufo_prompts_new (NULL, &err);
        if (vars && (images || !images_path) && prompts) {
            char key [64];
            snprintf (key, sizeof key, "%s.VISUAL_MODE", block);
            ufo_prompt_input_t in = { schema, !text_only && ufo_config_bool (config, key, true), vars, images, NULL, NULL };
            messages = ufo_prompt_messages (prompts, &in, &err);
        }
        ufo_value_destroy (&vars);
        ufo_value_destroy (&images);
        ufo_prompts_destroy (&prompts);
        if (!messages) {
            fprintf (stderr, "ufo-llm-ask: %s\n", err.message);
            ufo_llm_destroy (&llm);
            ufo_config_destroy (&config);
            return 2;
        }
    }
    ufo_llm_opts_t opts = { agent_name, 1, schema, (int) ufo_config_int (config, "JSON_PARSING_RETRY", 3) };
    ufo_llm_response_t *r = ufo_llm_complete (llm, messages, &opts, &err);
    int status = 1;
    if (!r)
        fprintf (stderr, "ufo-llm-ask: %s\n", err.message);
    else {
        if (r->code == UFO_OK) {
            if (r->decision) {
                char *json = ufo_json_dump (r->decision, UFO_JSON_PRETTY, NULL);
                printf ("%s\n", json);
                free (json);
            }
            else
                printf ("%s\n", r->content);
            status = 0;
        }
        else
            fprintf (stderr, "ufo-llm-ask: %s\n", r->error);
        fprintf (stderr, "engine %s, model %s, tokens %" PRId64 " + %" PRId64 ", cost $%.6f, attempts %d, "
                         "replies %d, %.3f s%s\n", r->engine, r->model, r->prompt_tokens, r->completion_tokens,
                 r->cost, r->attempts, r->asks, r->latency_s, r->from_cassette ? ", replayed" : "");
    }
    ufo_llm_response_destroy (&r);
    ufo_value_destroy (&messages);
    ufo_llm_destroy (&llm);
    ufo_config_destroy (&config);
    return status;
}
