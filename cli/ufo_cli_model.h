/*  ufo_cli_model.h - private to the `ufo` tool: the model settings as commands show and take
    them (`ufo up`, `ufo eval`, `ufo run`, `ufo doctor`). */
#ifndef UFO_CLI_MODEL_H_INCLUDED
#define UFO_CLI_MODEL_H_INCLUDED

#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_llm_override.h"

//  The agent blocks in the order they are shown and checked.
#define UFO_CLI_MODEL_BLOCKS { "HOST_AGENT", "APP_AGENT", "EVALUATION_AGENT", "BACKUP_AGENT" }

//  Help lines of the model options for a command's --help; PAD (a string literal of
//  spaces) aligns the text with the command's other options (the names take 16 columns).
#define UFO_CLI_MODEL_HELP(PAD) \
    "  --api-type T  " PAD "API_TYPE of every agent not set otherwise (sets UFO_API_TYPE)\n" \
    "  --api-base URL" PAD "API_BASE of every agent not set otherwise (sets UFO_API_BASE)\n" \
    "  --model NAME  " PAD "API_MODEL of every agent not set otherwise (sets UFO_API_MODEL)\n" \
    "                " PAD "(the key: UFO_API_KEY or OPENAI_API_KEY in the environment)\n"

//  Takes --api-type / --api-base / --model VALUE: sets UFO_API_TYPE / UFO_API_BASE /
//  UFO_API_MODEL for this process and every process it starts, before the configuration is
//  loaded. Returns true when arg was one of them.
bool ufo_cli_model_option (const char *arg, const char *value);

//  For commands that submit to a running system (`ufo run`, `ufo batch`): when arg is
//  --api-key, says on stderr that keys never travel (--api-key-env NAME names the agents'
//  variable) and returns true (the caller fails with usage); false for any other arg.
bool ufo_cli_model_refuse (const char *arg, const char *prog);

//  Help lines of the per-session model override of `ufo run` / `ufo batch` (PAD as above).
#define UFO_CLI_OVERRIDE_HELP(PAD) \
    "  --model NAME  " PAD "this session's API_MODEL for every agent, instead of `ufo up`'s\n" \
    "  --api-base URL" PAD "this session's API_BASE (an http:// or https:// URL)\n" \
    "  --api-type T  " PAD "this session's API_TYPE (openai, aoai, ollama, openai_compatible, ...)\n" \
    "  --api-key-env NAME\n" \
    "                " PAD "the variable holding the key in the AGENTS' environment (keys never\n" \
    "                " PAD "travel; default with another endpoint: the provider's, then UFO_API_KEY)\n" \
    "  --reasoning-model true|false, --reasoning-effort minimal|low|medium|high\n" \
    "                " PAD "REASONING_MODEL / REASONING_EFFORT for this session"

//  `ufo run` / `ufo batch`: takes argv[*i] when it is a model override option (its value
//  argv[*i + 1]; *i advanced past it) and checks it. Returns 1 taken, 0 not one, -1 refused
//  (an unusable value, or --api-key: the reason on stderr; the caller fails with usage).
int ufo_cli_model_override_arg (ufo_llm_override_t *override, int argc, char **argv, int *i,
                                const char *prog);

//  `ufo run` / `ufo batch`: after the override options were taken (ufo_llm_override_option),
//  checks them (false with the reason on stderr: the caller fails with usage) and warns on
//  stderr when the key the agents would need is visibly missing: in the environment of the
//  local `ufo up` (its up.json names its pid) when readable, else in this process's; and
//  when the override's model has no price.
bool ufo_cli_model_override_ready (const ufo_config_t *config, const ufo_llm_override_t *override,
                                   const char *prog);

//  True when BACKUP_AGENT would be used by an agent (configured, not the same engine as
//  the agents', and with a key where the API needs one).
bool ufo_cli_model_backup_used (const ufo_config_t *config);

//  Loads the price table of the configuration (llm.prices_file). NULL when there is none
//  or it is unreadable (why in err).
ufo_prices_t *ufo_cli_model_prices (const ufo_config_t *config, ufo_error_t *err);

//  Prints, per agent, the API type, the endpoint and the model it uses (the key only as
//  "key set" / "no key").
void ufo_cli_model_print (const ufo_config_t *config, FILE *out);

//  Prints one warning line to out when a model of the agents has no price (costs would
//  show $0), naming the models and the file. Returns the number of unpriced models.
int ufo_cli_model_warn_unpriced (const ufo_config_t *config, FILE *out, const char *prog);

//  What `ufo up` says about the model at start: the per-agent lines, the unpriced warning
//  and the quick checks of `ufo doctor` (configuration, key, endpoint reachable; no tokens
//  spent) as warnings. Never fails.
void ufo_cli_model_at_start (const ufo_config_t *config, FILE *out, const char *prog);

//  The quick model checks of `ufo doctor` (ufo_cmd_doctor.c), printed as warnings to out.
//  Returns the number of problems.
int ufo_cli_doctor_quick (const ufo_config_t *config, FILE *out, const char *prog);

#endif
