/*  ufo_llm_override.c - a session's model override: parsing, checks, the key from the
    environment, and a bounded cache of the engines it gives (see ufo_llm_override.h). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_override.h"

//  The API types the configuration allows (ufo_config_schema.c UFO_API_TYPES).
static const char *const s_types [] = {
    "openai", "aoai", "azure_ad", "ollama", "openai_compatible", "claude", "gemini"
};
static const char *const s_efforts [] = { "", "minimal", "low", "medium", "high" };

void
ufo_llm_override_init (ufo_llm_override_t *self)
{
    assert (self);
    memset (self, 0, sizeof *self);
    self->reasoning_model = -1;
}

bool
ufo_llm_override_empty (const ufo_llm_override_t *self)
{
    return !self || (!*self->api_type && !*self->api_base && !*self->model && !*self->api_key_env
                     && self->reasoning_model < 0 && !self->effort_set);
}

static bool
s_one_of (const char *value, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp (value, list [i]))
            return true;
    return false;
}

//  Copies value into out (size bytes) or fails naming the field.
static int
s_copy (char *out, size_t size, const char *field, const char *value, ufo_error_t *err)
{
    if (strlen (value) >= size)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "model override: %s is too long (at most %zu bytes)",
                              field, size - 1);
    snprintf (out, size, "%s", value);
    return 0;
}

static int
s_bool (const char *value, int *out, ufo_error_t *err)
{
    if (!strcmp (value, "true") || !strcmp (value, "1") || !strcmp (value, "yes"))
        *out = 1;
    else
    if (!strcmp (value, "false") || !strcmp (value, "0") || !strcmp (value, "no"))
        *out = 0;
    else
        return ufo_error_set (err, UFO_E_INVALID, "model override: reasoning_model must be true or false, "
                              "not \"%.40s\"", value);
    return 0;
}

int
ufo_llm_override_option (ufo_llm_override_t *self, const char *option, const char *value,
                         ufo_error_t *err)
{
    assert (self && option);
    static const char *const names [] = {
        "--model", "--api-base", "--api-type", "--api-key-env", "--reasoning-model", "--reasoning-effort"
    };
    if (!s_one_of (option, names, UFO_ARRAY_SIZE (names)))
        return 0;
    if (!value)
        return ufo_error_set (err, UFO_E_MISSING, "%s needs a value", option);
    int rc;
    if (!strcmp (option, "--model"))
        rc = s_copy (self->model, sizeof self->model, "the model", value, err);
    else
    if (!strcmp (option, "--api-base"))
        rc = s_copy (self->api_base, sizeof self->api_base, "the API base", value, err);
    else
    if (!strcmp (option, "--api-type"))
        rc = s_copy (self->api_type, sizeof self->api_type, "the API type", value, err);
    else
    if (!strcmp (option, "--api-key-env"))
        rc = s_copy (self->api_key_env, sizeof self->api_key_env, "the key variable", value, err);
    else
    if (!strcmp (option, "--reasoning-model"))
        rc = s_bool (value, &self->reasoning_model, err);
    else {
        rc = s_copy (self->reasoning_effort, sizeof self->reasoning_effort, "the reasoning effort", value, err);
        self->effort_set = rc == 0;
    }
    return rc ? -1 : 1;
}

//  A text that may go into a URL, a JSON body, a header or a log line: printable ASCII or
//  UTF-8, no control characters; spaces only where allowed.
static bool
s_printable (const char *s, bool spaces)
{
    for (const unsigned char *c = (const unsigned char *) s; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (!spaces && *c == ' '))
            return false;
    return true;
}

int
ufo_llm_override_check (const ufo_llm_override_t *self, ufo_error_t *err)
{
    assert (self);
    if (*self->api_type && !s_one_of (self->api_type, s_types, UFO_ARRAY_SIZE (s_types)))
        return ufo_error_set (err, UFO_E_INVALID, "model override: API type \"%.31s\" is not one of openai, aoai, "
                              "azure_ad, ollama, openai_compatible, claude, gemini", self->api_type);
    if (*self->api_base) {
        const char *b = self->api_base;
        const char *host = !strncmp (b, "http://", 7) ? b + 7 : !strncmp (b, "https://", 8) ? b + 8 : NULL;
        if (!host || !*host || *host == '/' || !s_printable (b, false))
            return ufo_error_set (err, UFO_E_INVALID, "model override: API base \"%.200s\" is not an http:// or "
                                  "https:// URL with a host (e.g. http://localhost:11434/v1)", b);
    }
    if (*self->model && !s_printable (self->model, false))
        return ufo_error_set (err, UFO_E_INVALID, "model override: the model name has spaces or control characters");
    if (*self->api_key_env) {
        const char *v = self->api_key_env;
        bool ok = isalpha ((unsigned char) *v) || *v == '_';
        for (const char *c = v; ok && *c; c++)
            ok = isalnum ((unsigned char) *c) || *c == '_';
        if (!ok)
            return ufo_error_set (err, UFO_E_INVALID, "model override: the key variable \"%.20s%s\" is not an "
                                  "environment variable name: give the NAME of the variable that holds the key "
                                  "(letters, digits, _), never the key", v, strlen (v) > 20 ? "..." : "");
    }
    if (self->effort_set && !s_one_of (self->reasoning_effort, s_efforts, UFO_ARRAY_SIZE (s_efforts)))
        return ufo_error_set (err, UFO_E_INVALID, "model override: reasoning effort \"%.15s\" is not one of minimal, "
                              "low, medium, high", self->reasoning_effort);
    if (self->reasoning_model < -1 || self->reasoning_model > 1)
        return ufo_error_set (err, UFO_E_INVALID, "model override: reasoning_model must be true or false");
    return 0;
}

ufo_value_t *
ufo_llm_override_to_value (const ufo_llm_override_t *self)
{
    if (ufo_llm_override_empty (self))
        return NULL;
    ufo_value_t *v = ufo_value_new_map ();
    if (*self->api_type)
        ufo_value_map_set_str (v, "api_type", self->api_type);
    if (*self->api_base)
        ufo_value_map_set_str (v, "api_base", self->api_base);
    if (*self->model)
        ufo_value_map_set_str (v, "model", self->model);
    if (*self->api_key_env)
        ufo_value_map_set_str (v, "api_key_env", self->api_key_env);
    if (self->reasoning_model >= 0)
        ufo_value_map_set_bool (v, "reasoning_model", self->reasoning_model == 1);
    if (self->effort_set)
        ufo_value_map_set_str (v, "reasoning_effort", self->reasoning_effort);
    return v;
}

int
ufo_llm_override_from_value (const ufo_value_t *value, ufo_llm_override_t *self, ufo_error_t *err)
{
    assert (self);
    ufo_llm_override_init (self);
    if (!value || ufo_value_type (value) == UFO_TNULL)
        return 0;
    if (ufo_value_type (value) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "model override: \"model\" must be a map of api_type, api_base, "
                              "model, api_key_env, reasoning_model, reasoning_effort");
    int rc = 0;
    for (size_t i = 0; i < ufo_value_size (value) && rc == 0; i++) {
        const char *key = ufo_value_map_key_at (value, i);
        const ufo_value_t *v = ufo_value_map_value_at (value, i);
        if (!strcmp (key, "reasoning_model")) {
            if (ufo_value_type (v) != UFO_TBOOL)
                rc = ufo_error_set (err, UFO_E_TYPE, "model override: reasoning_model must be true or false");
            else
                self->reasoning_model = ufo_value_bool (v) ? 1 : 0;
            continue;
        }
        static const char *const texts [] = {
            "api_type", "api_base", "model", "api_key_env", "reasoning_effort"
        };
        if (!s_one_of (key, texts, UFO_ARRAY_SIZE (texts))) {
            if (strstr (key, "key") || strstr (key, "KEY"))
                rc = ufo_error_set (err, UFO_E_DENIED, "model override: \"%.40s\" refused: API keys never travel "
                                    "on the bus; name the agents' variable with api_key_env", key);
            else
                rc = ufo_error_set (err, UFO_E_INVALID, "model override: unknown field \"%.40s\" (known: api_type, "
                                    "api_base, model, api_key_env, reasoning_model, reasoning_effort)", key);
            continue;
        }
        if (ufo_value_type (v) != UFO_TSTRING || ufo_value_strlen (v) != strlen (ufo_value_str (v))) {
            rc = ufo_error_set (err, UFO_E_TYPE, "model override: %s must be a text", key);
            continue;
        }
        const char *s = ufo_value_str (v);
        if (!strcmp (key, "api_type"))
            rc = s_copy (self->api_type, sizeof self->api_type, key, s, err);
        else if (!strcmp (key, "api_base"))
            rc = s_copy (self->api_base, sizeof self->api_base, key, s, err);
        else if (!strcmp (key, "model"))
            rc = s_copy (self->model, sizeof self->model, key, s, err);
        else if (!strcmp (key, "api_key_env"))
            rc = s_copy (self->api_key_env, sizeof self->api_key_env, key, s, err);
        else {
            rc = s_copy (self->reasoning_effort, sizeof self->reasoning_effort, key, s, err);
            self->effort_set = true;
        }
    }
    if (rc == 0)
        rc = ufo_llm_override_check (self, err);
    if (rc)
        ufo_llm_override_init (self);
    return rc ? -1 : 0;
}

static bool
s_azure (const char *type)
{
    return !strcmp (type, "aoai") || !strcmp (type, "azure") || !strcmp (type, "azure_ad");
}

//  The provider's usual key variable for an API type, or NULL (local servers need none).
static const char *
s_provider_var (const char *type)
{
    if (s_azure (type))
        return "AZURE_OPENAI_API_KEY";
    if (!strcmp (type, "claude"))
        return "ANTHROPIC_API_KEY";
    if (!strcmp (type, "gemini"))
        return "GEMINI_API_KEY";
    if (!strcmp (type, "openai"))
        return "OPENAI_API_KEY";
    return NULL;
}

//  True when the override picks another endpoint than base: the block's key is not for it.
static bool
s_endpoint_changed (const ufo_llm_override_t *self, const ufo_llm_config_t *base)
{
    return (*self->api_base && strcmp (self->api_base, base->api_base))
        || (*self->api_type && strcmp (self->api_type, base->api_type));
}

void
ufo_llm_override_key_var (const ufo_llm_override_t *self, const ufo_llm_config_t *base, char *var,
                          size_t size)
{
    assert (self && base && var && size);
    var [0] = 0;
    if (*self->api_key_env)
        snprintf (var, size, "%s", self->api_key_env);
    else
    if (s_endpoint_changed (self, base)) {
        const char *type = *self->api_type ? self->api_type : base->api_type;
        const char *p = s_provider_var (type);
        snprintf (var, size, "%s%sUFO_API_KEY", p ? p : "", p ? " or " : "");
    }
}

int
ufo_llm_override_apply (const ufo_llm_override_t *self, const ufo_llm_config_t *base,
                        ufo_llm_config_t *out, ufo_error_t *err)
{
    assert (self && base && out);
    *out = *base;
    if (*self->api_type)
        snprintf (out->api_type, sizeof out->api_type, "%s", self->api_type);
    if (*self->api_base)
        snprintf (out->api_base, sizeof out->api_base, "%s", self->api_base);
    if (*self->model)
        snprintf (out->api_model, sizeof out->api_model, "%s", self->model);
    if (self->reasoning_model >= 0)
        out->reasoning_model = self->reasoning_model == 1;
    if (self->effort_set)
        snprintf (out->reasoning_effort, sizeof out->reasoning_effort, "%s", self->reasoning_effort);
    const char *key = NULL;
    if (*self->api_key_env) {
        key = getenv (self->api_key_env);
        if (!key || !*key) {
            memset (out->api_key, 0, sizeof out->api_key);
            return ufo_error_set (err, UFO_E_MISSING, "%s: the model override's key variable %s is not set in "
                                  "this agent's environment (set it where `ufo up` runs, or drop --api-key-env)",
                                  base->name, self->api_key_env);
        }
    }
    else
    if (s_endpoint_changed (self, base)) {
        const char *p = s_provider_var (out->api_type);
        key = p ? getenv (p) : NULL;
        if (!key || !*key)
            key = getenv ("UFO_API_KEY");
        if ((!key || !*key) && ufo_llm_config_needs_key (out)) {
            memset (out->api_key, 0, sizeof out->api_key);
            return ufo_error_set (err, UFO_E_MISSING, "%s: the model override (%s at %.200s) needs a key and "
                                  "neither %s%sUFO_API_KEY is set in this agent's environment (or name the "
                                  "variable with --api-key-env)", base->name, out->api_type, out->api_base,
                                  p ? p : "", p ? " nor " : "");
        }
        if (!key)
            key = "";
    }
    if (key) {
        if (strlen (key) >= sizeof out->api_key) {
            memset (out->api_key, 0, sizeof out->api_key);
            return ufo_error_set (err, UFO_E_TOO_LARGE, "%s: the model override's key is too long", base->name);
        }
        snprintf (out->api_key, sizeof out->api_key, "%s", key);
    }
    if (!ufo_llm_config_ok (out)) {
        memset (out->api_key, 0, sizeof out->api_key);
        return ufo_error_set (err, UFO_E_MISSING, "%s: the model override gives no usable endpoint (%s)", base->name,
                              s_azure (out->api_type) ? "aoai needs the block's API_DEPLOYMENT_ID and API_VERSION"
                                                      : "no API_BASE");
    }
    if (s_azure (out->api_type) && !*out->api_version) {
        memset (out->api_key, 0, sizeof out->api_key);
        return ufo_error_set (err, UFO_E_MISSING, "%s: the model override needs API_VERSION for aoai", base->name);
    }
    return 0;
}

//  --- The cache -------------------------------------------------------------------------------

typedef struct {
    char block [32];
    ufo_llm_override_t override;
    ufo_llm_config_t engine;
    uint64_t used;              //  tick of the last use, for dropping the least recent
} s_entry_t;

struct _ufo_llm_engines_t {
    s_entry_t *entries;
    size_t size, max;
    uint64_t tick;
};

ufo_llm_engines_t *
ufo_llm_engines_new (size_t max)
{
    assert (max >= 1);
    ufo_llm_engines_t *self = ufo_calloc (1, sizeof *self);
    self->entries = ufo_calloc (max, sizeof (s_entry_t));
    self->max = max;
    return self;
}

void
ufo_llm_engines_destroy (ufo_llm_engines_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_llm_engines_t *self = *self_p;
    memset (self->entries, 0, self->max * sizeof (s_entry_t));
    free (self->entries);
    free (self);
    *self_p = NULL;
}

static bool
s_same (const ufo_llm_override_t *a, const ufo_llm_override_t *b)
{
    return !strcmp (a->api_type, b->api_type) && !strcmp (a->api_base, b->api_base)
        && !strcmp (a->model, b->model) && !strcmp (a->api_key_env, b->api_key_env)
        && a->reasoning_model == b->reasoning_model && a->effort_set == b->effort_set
        && !strcmp (a->reasoning_effort, b->reasoning_effort);
}

const ufo_llm_config_t *
ufo_llm_engines_get (ufo_llm_engines_t *self, const ufo_llm_config_t *base,
                     const ufo_llm_override_t *override, ufo_error_t *err)
{
    assert (self && base && override);
    self->tick++;
    for (size_t i = 0; i < self->size; i++) {
        s_entry_t *e = &self->entries [i];
        if (!strcmp (e->block, base->name) && s_same (&e->override, override)) {
            e->used = self->tick;
            return &e->engine;
        }
    }
    ufo_llm_config_t engine;
    if (ufo_llm_override_apply (override, base, &engine, err))
        return NULL;
    size_t slot = self->size;
    if (slot == self->max) {
        slot = 0;
        for (size_t i = 1; i < self->size; i++)
            if (self->entries [i].used < self->entries [slot].used)
                slot = i;
    }
    else
        self->size++;
    s_entry_t *e = &self->entries [slot];
    memset (e, 0, sizeof *e);
    snprintf (e->block, sizeof e->block, "%s", base->name);
    e->override = *override;
    e->engine = engine;
    e->used = self->tick;
    memset (engine.api_key, 0, sizeof engine.api_key);
    return &e->engine;
}

int
ufo_llm_engines_for (ufo_llm_engines_t *self, const ufo_config_t *config, const char *block,
                     const ufo_value_t *model, const ufo_llm_config_t **engine, ufo_error_t *err)
{
    assert (block && engine);
    *engine = NULL;
    ufo_llm_override_t override;
    if (ufo_llm_override_from_value (model, &override, err))
        return -1;
    if (ufo_llm_override_empty (&override))
        return 0;
    assert (self && config);
    ufo_llm_config_t base;
    if (ufo_llm_config_from (config, block, &base, err))
        return -1;
    *engine = ufo_llm_engines_get (self, &base, &override, err);
    memset (base.api_key, 0, sizeof base.api_key);
    return *engine ? 0 : -1;
}

size_t
ufo_llm_engines_size (const ufo_llm_engines_t *self)
{
    return self->size;
}
