/*  ufo_llm_override.h - a session's model override: `ufo run --model/--api-base/--api-type/
    --reasoning-model/--reasoning-effort/--api-key-env` (also `ufo batch`, the MCP server's
    run tool).

    The override travels in the session's task body as "model" (PROTOCOL.md, docs/AGENTS.md)
    and from the HostAgent on in every subtask and evaluation of the session; each agent
    applies it on top of its own block (HOST_AGENT, APP_AGENT, EVALUATION_AGENT) for that
    session's calls only. API keys never travel: the broker persists task bodies. An agent
    resolves the key in its own environment: the variable named by api_key_env; without it,
    when the override changes the endpoint or the API type, the provider's usual variable
    (OPENAI_API_KEY; AZURE_OPENAI_API_KEY for aoai / azure_ad, ANTHROPIC_API_KEY for claude,
    GEMINI_API_KEY for gemini), then UFO_API_KEY; otherwise the block's own key.

    The same checks run at `ufo run` and in each agent (a body from the bus may hold
    anything): a known API type, an http(s) URL, printable bounded texts, no unknown field. */
#ifndef UFO_LLM_OVERRIDE_H_INCLUDED
#define UFO_LLM_OVERRIDE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_value.h"

//  A plain struct: an empty text is "not overridden". Start with ufo_llm_override_init.
typedef struct {
    char api_type [32];         //  "openai", "aoai", "azure_ad", "ollama", "openai_compatible",
                                //  "claude", "gemini"
    char api_base [512];        //  http:// or https:// URL
    char model [128];           //  API_MODEL
    char api_key_env [64];      //  the environment variable holding the key (a name, never a key)
    int reasoning_model;        //  -1 not set, 0 false, 1 true
    char reasoning_effort [16]; //  "", minimal, low, medium, high (set when effort_set)
    bool effort_set;
} ufo_llm_override_t;

//  Clears self: nothing overridden.
void ufo_llm_override_init (ufo_llm_override_t *self);

//  True when nothing is overridden.
bool ufo_llm_override_empty (const ufo_llm_override_t *self);

//  Takes one command-line option: --model, --api-base, --api-type, --api-key-env,
//  --reasoning-model (true|false), --reasoning-effort (minimal|low|medium|high). Returns 1
//  when option is one of them (value stored), 0 when it is not, -1 with err when the
//  value is missing, too long or not allowed.
int ufo_llm_override_option (ufo_llm_override_t *self, const char *option, const char *value,
                             ufo_error_t *err);

//  Checks a filled override (known API type, URL form, texts, variable name). Returns 0,
//  or -1 with err naming the field and what is allowed.
int ufo_llm_override_check (const ufo_llm_override_t *self, ufo_error_t *err);

//  The override as the session body carries it: a map of the fields that are set
//  ("api_type", "api_base", "model", "api_key_env", "reasoning_model", "reasoning_effort"),
//  or NULL when empty. Caller owns.
ufo_value_t *ufo_llm_override_to_value (const ufo_llm_override_t *self);

//  Reads the body's "model" value into self. NULL or null: nothing overridden, 0. Returns
//  -1 with err (self cleared) when it is not a map, has an unknown field (an "api_key" is
//  refused: keys never travel), a field of the wrong type, or fails ufo_llm_override_check.
int ufo_llm_override_from_value (const ufo_value_t *value, ufo_llm_override_t *self,
                                 ufo_error_t *err);

//  The variable the key would be read from for base (a block's engine) with this override,
//  into var ("" when the block's own key stays: nothing that picks the endpoint changed and
//  no api_key_env). For `ufo run`'s early warning and for error texts.
void ufo_llm_override_key_var (const ufo_llm_override_t *self, const ufo_llm_config_t *base,
                               char *var, size_t size);

//  The engine for base with the override applied, into out (base copied, the set fields
//  replaced, the key resolved from this process's environment, see above). Returns 0, or
//  -1 with err when the key variable is not set (naming it and the agent's block), or the
//  result is not usable (aoai without a deployment). out's name is base's.
int ufo_llm_override_apply (const ufo_llm_override_t *self, const ufo_llm_config_t *base,
                            ufo_llm_config_t *out, ufo_error_t *err);

//  --- A bounded cache of overridden engines ------------------------------------------------

//  An agent keeps one: the engines it resolved for the overrides of its sessions, at most
//  max of them (the least recently used is dropped). ufo_llm_submit copies the engine, so
//  dropping one never touches a request in flight; every request goes through the agent's
//  one client (one HTTP connection pool, one loop source), not one client per override.
typedef struct _ufo_llm_engines_t ufo_llm_engines_t;

//  Creates a cache for at most max engines (max >= 1).
ufo_llm_engines_t *ufo_llm_engines_new (size_t max);

//  Frees the cache (keys wiped); sets *self_p to NULL. Safe with NULL.
void ufo_llm_engines_destroy (ufo_llm_engines_t **self_p);

//  The engine of base with override applied (ufo_llm_override_apply), from the cache or
//  resolved now. The pointer stays valid until the next call. NULL with err as apply.
const ufo_llm_config_t *ufo_llm_engines_get (ufo_llm_engines_t *self, const ufo_llm_config_t *base,
                                             const ufo_llm_override_t *override, ufo_error_t *err);

//  What an agent calls for a task: the engine of block (its configuration's engine) with
//  the override value of the task body ("model"; NULL or null: none) applied. Returns 0 with
//  *engine NULL when there is no override, 0 with *engine set (valid until the next call),
//  or -1 with err (the override is invalid, its key variable is not set, the block's
//  configuration is unusable): the task or step fails with err's message.
int ufo_llm_engines_for (ufo_llm_engines_t *self, const ufo_config_t *config, const char *block,
                         const ufo_value_t *model, const ufo_llm_config_t **engine, ufo_error_t *err);

//  Engines held now (for tests).
size_t ufo_llm_engines_size (const ufo_llm_engines_t *self);

#endif
