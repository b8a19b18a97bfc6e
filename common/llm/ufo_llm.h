/*  ufo_llm.h - the LLM client: OpenAI-compatible chat completions (openai, aoai, ollama,
    gemini and any OpenAI-compatible server) and Anthropic's Messages API (claude), with retries, a backup engine, cost, JSON decisions with
    corrective re-asks, and record/replay cassettes.

    The client never blocks: requests run on curl's multi interface and are driven by the
    caller's event loop (ufo_llm_fds / ufo_llm_timeout / ufo_llm_process, or the all-in-one
    step ufo_llm_poll). A completion callback delivers each response. ufo_llm_complete is a
    blocking convenience over the same code path, for tools and tests.

    API keys are secrets: they go into the HTTP header and nowhere else (not into logs, error
    texts, cassettes or responses). See docs/LLM.md. */
#ifndef UFO_LLM_H_INCLUDED
#define UFO_LLM_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_cassette.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_config_t ufo_config_t;
typedef struct _ufo_prices_t ufo_prices_t;
typedef struct _ufo_cassette_t ufo_cassette_t;
typedef struct _ufo_llm_t ufo_llm_t;

//  One engine's settings (a HOST_AGENT / APP_AGENT / BACKUP_AGENT / EVALUATION_AGENT block).
//  A plain struct so tests and tools can fill it directly; start from ufo_llm_config_defaults.
typedef struct {
    char name [32];             //  block name, shown in errors ("HOST_AGENT")
    char api_type [32];         //  API_TYPE: "openai", "aoai" (Azure), "ollama", "claude"
                                //  (Anthropic), "gemini", or any other name for an
                                //  OpenAI-compatible server
    char api_base [512];        //  API_BASE
    char api_key [512];         //  API_KEY (secret; from config or environment)
    char api_version [64];      //  API_VERSION (aoai)
    char api_model [128];       //  API_MODEL
    char api_deployment_id [128]; //  API_DEPLOYMENT_ID (aoai)
    bool visual_mode;           //  VISUAL_MODE
    int max_tokens;             //  MAX_TOKENS (2000)
    double temperature;         //  TEMPERATURE (0)
    double top_p;               //  TOP_P (0)
    double timeout_s;           //  TIMEOUT for one HTTP attempt (60)
    int max_retry;              //  MAX_RETRY: retries after the first attempt (3)
    bool json_mode;             //  ask for response_format {"type":"json_object"} (true)
    int backoff_base_ms;        //  first retry delay before jitter (1000), doubled per retry
    int backoff_max_ms;         //  cap on one delay, also on Retry-After (60000)
    bool reasoning_model;       //  REASONING_MODEL: max_completion_tokens, no temperature/top_p
    char reasoning_effort [16]; //  REASONING_EFFORT: "" (not sent), minimal, low, medium, high
} ufo_llm_config_t;

//  Fills cfg with the original's defaults (api_type "openai", no base, no key).
void ufo_llm_config_defaults (ufo_llm_config_t *cfg);

//  Fills cfg from a configuration block ("HOST_AGENT", ...). Keys missing from the block fall
//  back to the top level (MAX_TOKENS, TEMPERATURE, TOP_P, TIMEOUT, MAX_RETRY), and for
//  EVALUATION_AGENT to APP_AGENT (also REASONING_MODEL, REASONING_EFFORT). An empty API_KEY
//  is taken from the environment: for aoai AZURE_OPENAI_API_KEY, for claude
//  ANTHROPIC_API_KEY, for gemini GEMINI_API_KEY, then OPENAI_API_KEY. Returns 0, or -1 with err naming the block and
//  key when a value is unusable (unknown API_TYPE shape, aoai without deployment...).
//  A block without API_BASE is "not configured": 0 is returned and ufo_llm_config_ok is false.
int ufo_llm_config_from (const ufo_config_t *config, const char *block, ufo_llm_config_t *cfg,
                         ufo_error_t *err);

//  The usual set-up of an agent's client: the engine of block ("HOST_AGENT", ...); the
//  BACKUP_AGENT engine when it is configured, differs from the primary and (for openai / aoai
//  / azure_ad) has a key; prices from llm.prices_file (looked up in the working directory,
//  the source tree, then the installed data; missing: costs 0 with a warning); a cassette
//  from llm.mode (live | record | replay) and llm.cassette. mode / cassette (the
//  --llm-mode / --llm-cassette options) override the configuration when not NULL.
//  Returns NULL with err on a configuration error or an unreadable cassette.
ufo_llm_t *ufo_llm_new_from_config (const ufo_config_t *config, const char *block, const char *mode,
                                    const char *cassette, ufo_error_t *err);

//  True when cfg names an endpoint (API_BASE set; for aoai also a deployment).
bool ufo_llm_config_ok (const ufo_llm_config_t *cfg);

//  True for the hosted APIs, which refuse a request without a key (openai, aoai, azure_ad,
//  claude, gemini); false for ollama and other OpenAI-compatible servers.
bool ufo_llm_config_needs_key (const ufo_llm_config_t *cfg);

//  Writes the request URL for cfg into buf (chat completions; for claude API_BASE +
//  /v1/messages). Returns 0, or -1 if it does not fit.
int ufo_llm_config_url (const ufo_llm_config_t *cfg, char *buf, size_t size);

//  "provider/model" for prices and cassettes ("openai/gpt-4o", "azure/gpt-4o").
void ufo_llm_config_model_name (const ufo_llm_config_t *cfg, char *buf, size_t size);

//  --- Requests ----------------------------------------------------------------------------

//  What to ask. Only messages is required.
typedef struct {
    const char *agent;          //  "HostAgent", "AppAgent", "EvaluationAgent": named in errors,
                                //  cassettes, and sent as the X-UFO-Agent header
    int64_t step;               //  session step, named in errors and cassettes
    int schema;                 //  ufo_schema_t: UFO_SCHEMA_NONE returns text only; otherwise the
                                //  reply is extracted and validated, with corrective re-asks
    int json_retry;             //  JSON_PARSING_RETRY: re-asks after an unusable reply (3)
    //  Called (from inside ufo_llm_process / ufo_llm_poll) when an HTTP attempt failed and
    //  will be tried again after wait_ms; why names the failure. NULL = not told. Lets an
    //  agent show retries to the user while they happen.
    void (*on_retry) (void *arg, int attempt, int64_t wait_ms, const char *why);
    void *retry_arg;
    //  NULL: the client's engines (the primary, then the backup). Otherwise this engine
    //  alone answers this request (copied at submit; no backup): a session's model override
    //  (ufo_llm_override.h). Its key is redacted like the client's own.
    const ufo_llm_config_t *engine;
} ufo_llm_opts_t;

//  The outcome of one request (including its retries, backup and re-asks).
typedef struct {
    int64_t id;                 //  as returned by ufo_llm_submit
    int code;                   //  UFO_OK, or a ufo_errcode_t (UFO_E_UNAVAILABLE, UFO_E_DENIED,
                                //  UFO_E_TIMEOUT, UFO_E_SYNTAX (no usable JSON), UFO_E_NOT_FOUND
                                //  (replay miss), UFO_E_CANCELLED, ...)
    char *error;                //  the reason when code != UFO_OK, else NULL (owned)
    long http_status;           //  status of the last HTTP attempt (0 when none)
    char *content;              //  the last reply text (owned), NULL when none
    ufo_value_t *decision;      //  the validated object when a schema was asked for (owned)
    int64_t prompt_tokens;      //  summed over every HTTP exchange of this request
    int64_t completion_tokens;
    double cost;                //  dollars, summed likewise (0 without a price table)
    double latency_s;           //  from submit to completion
    int attempts;               //  HTTP attempts made (all engines, all asks)
    int asks;                   //  model replies obtained (1 + corrective re-asks)
    bool used_backup;           //  the answer came from BACKUP_AGENT
    bool from_cassette;         //  replayed, no network
    char engine [32];           //  block name of the engine that answered
    char model [192];           //  "provider/model" that answered
    ufo_value_t *messages;      //  the final conversation sent (with re-asks), images elided (owned)
} ufo_llm_response_t;

//  Destroys a response; sets *self_p to NULL. Safe with NULL.
void ufo_llm_response_destroy (ufo_llm_response_t **self_p);

//  Completion callback, called from inside ufo_llm_process / ufo_llm_poll (never from
//  ufo_llm_submit). It may take the response (set *response_p to NULL and destroy it later);
//  otherwise the client destroys it after the call. It may submit or cancel, but must not
//  destroy the client.
typedef void (ufo_llm_done_fn) (ufo_llm_response_t **response_p, void *arg);

//  Creates a client for a primary engine and an optional backup (NULL or not configured:
//  none). The configs are copied. Returns NULL with err if the primary is not usable or
//  the HTTP layer cannot start.
ufo_llm_t *ufo_llm_new (const ufo_llm_config_t *primary, const ufo_llm_config_t *backup,
                        ufo_error_t *err);

//  Cancels everything in flight (no callbacks), frees the client, sets *self_p to NULL.
void ufo_llm_destroy (ufo_llm_t **self_p);

//  Uses a price table for costs (ownership taken; NULL removes it: costs are 0).
void ufo_llm_set_prices (ufo_llm_t *self, ufo_prices_t **prices_p);

//  Records to / replays from a cassette (ownership taken; NULL removes it). In replay mode
//  no request touches the network.
void ufo_llm_set_cassette (ufo_llm_t *self, ufo_cassette_t **cassette_p);

//  Starts a request for the chat messages (a list of {"role", "content"} maps, content a
//  string or a list of {"type":"text"|"image_url", ...} parts; copied). opts may be NULL.
//  Returns a positive request id, or -1 with err (invalid messages). The callback is called
//  exactly once unless the request is cancelled or the client destroyed.
int64_t ufo_llm_submit (ufo_llm_t *self, const ufo_value_t *messages, const ufo_llm_opts_t *opts,
                        ufo_llm_done_fn *done, void *arg, ufo_error_t *err);

//  Cancels a request (its transfer is aborted, its callback is not called).
//  Returns 0, or -1 if id is unknown or already completed.
int ufo_llm_cancel (ufo_llm_t *self, int64_t id);

//  True when the client has a backup engine.
bool ufo_llm_has_backup (const ufo_llm_t *self);

//  Requests not yet completed.
size_t ufo_llm_pending (const ufo_llm_t *self);

//  --- Event-loop integration ----------------------------------------------------------------

//  One socket for the caller's poll (same bits as POLLIN / POLLOUT / POLLERR).
#define UFO_LLM_IN   1
#define UFO_LLM_OUT  2
#define UFO_LLM_ERR  4
typedef struct {
    int fd;
    int events;                 //  wanted
    int revents;                //  set by the caller after polling
} ufo_llm_fd_t;

//  Copies up to max sockets to watch; returns how many there are (may exceed max).
size_t ufo_llm_fds (const ufo_llm_t *self, ufo_llm_fd_t *fds, size_t max);

//  Milliseconds the caller may sleep before calling ufo_llm_process; -1: no deadline.
int ufo_llm_timeout (const ufo_llm_t *self);

//  Handles ready sockets (revents set; fds may be NULL with n 0), due timers and retries,
//  and calls completion callbacks. Returns the number of callbacks made.
int ufo_llm_process (ufo_llm_t *self, const ufo_llm_fd_t *fds, size_t n);

//  One loop step for programs without their own loop: polls the client's sockets for at
//  most timeout_ms (less when a timer is due) and processes. Returns callbacks made.
int ufo_llm_poll (ufo_llm_t *self, int timeout_ms);

//  Blocking convenience: submits and polls until the request completes. Returns the response
//  (caller owns; check ->code), never NULL unless the messages are invalid (err filled).
ufo_llm_response_t *ufo_llm_complete (ufo_llm_t *self, const ufo_value_t *messages,
                                      const ufo_llm_opts_t *opts, ufo_error_t *err);

//  Replaces every occurrence of secret in text with "***" (in place). Used on every text
//  that leaves the client; exposed for the agents' own logs.
void ufo_llm_redact (char *text, const char *secret);

#endif
