/*  ufo_cost.c - price table and cost accumulator. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_cost.h"

struct _ufo_prices_t {
    ufo_value_t *table;         //  "provider/model" -> {"input":, "output":}
    ufo_value_t *warned;        //  keys already warned about (map key -> true)
};

ufo_prices_t *
ufo_prices_new (void)
{
    ufo_prices_t *self = ufo_calloc (1, sizeof (ufo_prices_t));
    self->table = ufo_value_new_map ();
    self->warned = ufo_value_new_map ();
    return self;
}

void
ufo_prices_destroy (ufo_prices_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_value_destroy (&(*self_p)->table);
    ufo_value_destroy (&(*self_p)->warned);
    free (*self_p);
    *self_p = NULL;
}

static bool
s_is_price (const ufo_value_t *v)
{
    ufo_type_t t = ufo_value_type (v);
    return (t == UFO_TINT || t == UFO_TFLOAT) && ufo_value_float (v) >= 0
        && isfinite (ufo_value_float (v));
}

static ufo_prices_t *
s_from_value (ufo_value_t *root, const char *origin, ufo_error_t *err)
{
    if (ufo_value_type (root) != UFO_TMAP) {
        ufo_error_set (err, UFO_E_TYPE, "%s: prices must be a JSON object", origin);
        return NULL;
    }
    ufo_prices_t *self = ufo_prices_new ();
    for (size_t i = 0; i < ufo_value_size (root); i++) {
        const char *key = ufo_value_map_key_at (root, i);
        if (key [0] == '_')
            continue;           //  "_comment" and the like
        const ufo_value_t *entry = ufo_value_map_value_at (root, i);
        const ufo_value_t *in = ufo_value_map_get (entry, "input");
        const ufo_value_t *out = ufo_value_map_get (entry, "output");
        if (ufo_value_type (entry) != UFO_TMAP || !s_is_price (in) || !s_is_price (out)) {
            ufo_error_set (err, UFO_E_TYPE,
                           "%s: price \"%s\" must be {\"input\": n, \"output\": n} with n >= 0",
                           origin, key);
            ufo_prices_destroy (&self);
            return NULL;
        }
        ufo_value_t *e = ufo_value_new_map ();
        ufo_value_map_set_float (e, "input", ufo_value_float (in));
        ufo_value_map_set_float (e, "output", ufo_value_float (out));
        ufo_value_map_set (self->table, key, &e);
    }
    return self;
}

ufo_prices_t *
ufo_prices_parse (const char *text, size_t len, ufo_error_t *err)
{
    ufo_value_t *root = ufo_json_parse (text, len, NULL, err);
    if (!root)
        return NULL;
    ufo_prices_t *self = s_from_value (root, "prices", err);
    ufo_value_destroy (&root);
    return self;
}

ufo_prices_t *
ufo_prices_load (const char *path, ufo_error_t *err)
{
    ufo_value_t *root = ufo_json_parse_file (path, NULL, err);
    if (!root)
        return NULL;
    ufo_prices_t *self = s_from_value (root, path, err);
    ufo_value_destroy (&root);
    return self;
}

const char *
ufo_prices_provider (const char *api_type)
{
    if (!api_type || !*api_type)
        return "openai";
    if (strcasecmp (api_type, "aoai") == 0 || strcasecmp (api_type, "azure") == 0
    ||  strcasecmp (api_type, "azure_ad") == 0)
        return "azure";
    return api_type;
}

double
ufo_prices_cost (ufo_prices_t *self, const char *provider, const char *model,
                 int64_t prompt_tokens, int64_t completion_tokens, bool *known)
{
    char key [320];
    snprintf (key, sizeof key, "%s/%s", provider ? provider : "", model ? model : "");
    const ufo_value_t *e = self ? ufo_value_map_get (self->table, key) : NULL;
    if (known)
        *known = e != NULL;
    if (!e) {
        if (self && !ufo_value_map_has (self->warned, key)) {
            ufo_value_map_set_bool (self->warned, key, true);
            ufo_warn ("llm: no price for model \"%s\" (config/prices.json); its cost counts as 0", key);
        }
        return 0.0;
    }
    if (prompt_tokens < 0)
        prompt_tokens = 0;
    if (completion_tokens < 0)
        completion_tokens = 0;
    return (double) prompt_tokens * ufo_value_map_float (e, "input", 0) / 1000.0
         + (double) completion_tokens * ufo_value_map_float (e, "output", 0) / 1000.0;
}

bool
ufo_prices_known (const ufo_prices_t *self, const char *provider, const char *model)
{
    char key [320];
    snprintf (key, sizeof key, "%s/%s", provider ? provider : "", model ? model : "");
    return self && ufo_value_map_get (self->table, key) != NULL;
}

size_t
ufo_prices_size (const ufo_prices_t *self)
{
    return self ? ufo_value_size (self->table) : 0;
}

void
ufo_cost_add (ufo_cost_t *self, double dollars, int64_t prompt_tokens, int64_t completion_tokens)
{
    assert (self);
    self->step += dollars;
    self->round += dollars;
    self->session += dollars;
    self->step_prompt_tokens += prompt_tokens;
    self->round_prompt_tokens += prompt_tokens;
    self->session_prompt_tokens += prompt_tokens;
    self->step_completion_tokens += completion_tokens;
    self->round_completion_tokens += completion_tokens;
    self->session_completion_tokens += completion_tokens;
    self->calls++;
}

void
ufo_cost_next_step (ufo_cost_t *self)
{
    self->step = 0;
    self->step_prompt_tokens = self->step_completion_tokens = 0;
}

void
ufo_cost_next_round (ufo_cost_t *self)
{
    ufo_cost_next_step (self);
    self->round = 0;
    self->round_prompt_tokens = self->round_completion_tokens = 0;
}

ufo_value_t *
ufo_cost_to_value (const ufo_cost_t *self)
{
    ufo_value_t *v = ufo_value_new_map ();
    ufo_value_map_set_float (v, "step", self->step);
    ufo_value_map_set_float (v, "round", self->round);
    ufo_value_map_set_float (v, "session", self->session);
    ufo_value_map_set_int (v, "prompt_tokens", self->session_prompt_tokens);
    ufo_value_map_set_int (v, "completion_tokens", self->session_completion_tokens);
    ufo_value_map_set_int (v, "calls", self->calls);
    return v;
}
