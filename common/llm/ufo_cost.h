/*  ufo_cost.h - LLM prices and cost accounting.

    Prices come from config/prices.json: {"provider/model": {"input": $ per 1k prompt tokens,
    "output": $ per 1k completion tokens}, ...}. Cost of a call = prompt_tokens * input / 1000
    + completion_tokens * output / 1000. An unknown model costs 0 and is warned about once.
    Keys starting with "_" are comments. The accumulator sums per step, per round and per session; agents publish the numbers. */
#ifndef UFO_COST_H_INCLUDED
#define UFO_COST_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_prices_t ufo_prices_t;

//  Creates an empty price table (every model unknown).
ufo_prices_t *ufo_prices_new (void);

//  Loads a price table from a JSON file. Returns NULL with err (naming the file and the
//  offending entry) if the file cannot be read or an entry is not {"input": n, "output": n}
//  with non-negative numbers.
ufo_prices_t *ufo_prices_load (const char *path, ufo_error_t *err);

//  Same from JSON text.
ufo_prices_t *ufo_prices_parse (const char *text, size_t len, ufo_error_t *err);

//  Destroys the table; sets *self_p to NULL. Safe with NULL.
void ufo_prices_destroy (ufo_prices_t **self_p);

//  The provider name used in price keys for an API_TYPE: "aoai" and "azure" -> "azure",
//  "openai" -> "openai", "ollama" -> "ollama", anything else unchanged (lower-cased caller side).
const char *ufo_prices_provider (const char *api_type);

//  Cost in dollars of one call. Looks up "provider/model"; when it is unknown returns 0,
//  sets *known (optional) to false and logs one warning per key for the table's lifetime.
double ufo_prices_cost (ufo_prices_t *self, const char *provider, const char *model,
                        int64_t prompt_tokens, int64_t completion_tokens, bool *known);

//  True when "provider/model" has a price (no warning either way).
bool ufo_prices_known (const ufo_prices_t *self, const char *provider, const char *model);

//  Number of priced models.
size_t ufo_prices_size (const ufo_prices_t *self);

//  Accumulated cost and tokens. A plain struct: zero-initialise it.
typedef struct {
    double step, round, session;                //  dollars
    int64_t step_prompt_tokens, step_completion_tokens;
    int64_t round_prompt_tokens, round_completion_tokens;
    int64_t session_prompt_tokens, session_completion_tokens;
    int64_t calls;                              //  LLM calls in the session
} ufo_cost_t;

//  Adds one call to the step, round and session totals.
void ufo_cost_add (ufo_cost_t *self, double dollars, int64_t prompt_tokens, int64_t completion_tokens);

//  Starts a new step (step totals back to 0) / a new round (round and step totals back to 0).
void ufo_cost_next_step (ufo_cost_t *self);
void ufo_cost_next_round (ufo_cost_t *self);

//  The totals as a map {"step":, "round":, "session":, "prompt_tokens":, "completion_tokens":,
//  "calls":} (session tokens), owned by the caller, ready to publish.
ufo_value_t *ufo_cost_to_value (const ufo_cost_t *self);

#endif
