/*  ufo_llm_config.c - an engine's settings from the configuration, and its endpoint URL. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_paths.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_cassette.h"

//  The value of key in block, else (for EVALUATION_AGENT) in APP_AGENT, else at top level.
static const ufo_value_t *
s_lookup (const ufo_config_t *config, const char *block, const char *key, bool top_level)
{
    char path [128];
    snprintf (path, sizeof path, "%s.%s", block, key);
    const ufo_value_t *v = ufo_config_get (config, path);
    if ((!v || ufo_value_type (v) == UFO_TNULL) && strcmp (block, "EVALUATION_AGENT") == 0) {
        snprintf (path, sizeof path, "APP_AGENT.%s", key);
        v = ufo_config_get (config, path);
    }
    if ((!v || ufo_value_type (v) == UFO_TNULL) && top_level)
        v = ufo_config_get (config, key);
    return v && ufo_value_type (v) != UFO_TNULL ? v : NULL;
}

static int
s_copy_str (const ufo_config_t *config, const char *block, const char *key, char *out, size_t size,
            ufo_error_t *err)
{
    const ufo_value_t *v = s_lookup (config, block, key, false);
    if (!v)
        return 0;
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "%s.%s must be a string", block, key);
    if (ufo_value_strlen (v) >= size)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "%s.%s is too long (at most %zu bytes)", block, key, size - 1);
    snprintf (out, size, "%s", ufo_value_str (v));
    return 0;
}

static int
s_number (const ufo_config_t *config, const char *block, const char *key, double lo, double hi,
          double *out, ufo_error_t *err)
{
    const ufo_value_t *v = s_lookup (config, block, key, true);
    if (!v)
        return 0;
    ufo_type_t t = ufo_value_type (v);
    if (t != UFO_TINT && t != UFO_TFLOAT)
        return ufo_error_set (err, UFO_E_TYPE, "%s.%s must be a number", block, key);
    double d = ufo_value_float (v);
    if (!(d >= lo && d <= hi))
        return ufo_error_set (err, UFO_E_RANGE, "%s.%s = %g is outside %g..%g", block, key, d, lo, hi);
    *out = d;
    return 0;
}

int
ufo_llm_config_from (const ufo_config_t *config, const char *block, ufo_llm_config_t *cfg,
                     ufo_error_t *err)
{
    assert (config && block && cfg);
    ufo_llm_config_defaults (cfg);
    snprintf (cfg->name, sizeof cfg->name, "%s", block);
    if (s_copy_str (config, block, "API_TYPE", cfg->api_type, sizeof cfg->api_type, err)
    ||  s_copy_str (config, block, "API_BASE", cfg->api_base, sizeof cfg->api_base, err)
    ||  s_copy_str (config, block, "API_KEY", cfg->api_key, sizeof cfg->api_key, err)
    ||  s_copy_str (config, block, "API_VERSION", cfg->api_version, sizeof cfg->api_version, err)
    ||  s_copy_str (config, block, "API_MODEL", cfg->api_model, sizeof cfg->api_model, err)
    ||  s_copy_str (config, block, "API_DEPLOYMENT_ID", cfg->api_deployment_id,
                    sizeof cfg->api_deployment_id, err))
        return -1;
    for (char *c = cfg->api_type; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
    const ufo_value_t *visual = s_lookup (config, block, "VISUAL_MODE", false);
    if (visual && ufo_value_type (visual) != UFO_TBOOL)
        return ufo_error_set (err, UFO_E_TYPE, "%s.VISUAL_MODE must be true or false", block);
    cfg->visual_mode = visual ? ufo_value_bool (visual) : true;
    cfg->json_mode = ufo_config_bool (config, "llm.json_mode", true);
    const ufo_value_t *reasoning = s_lookup (config, block, "REASONING_MODEL", true);
    if (reasoning && ufo_value_type (reasoning) != UFO_TBOOL)
        return ufo_error_set (err, UFO_E_TYPE, "%s.REASONING_MODEL must be true or false", block);
    cfg->reasoning_model = reasoning && ufo_value_bool (reasoning);
    const ufo_value_t *effort = s_lookup (config, block, "REASONING_EFFORT", true);
    if (effort && (ufo_value_type (effort) != UFO_TSTRING || ufo_value_strlen (effort) >= sizeof cfg->reasoning_effort))
        return ufo_error_set (err, UFO_E_TYPE, "%s.REASONING_EFFORT must be minimal, low, medium or high", block);
    if (effort)
        snprintf (cfg->reasoning_effort, sizeof cfg->reasoning_effort, "%s", ufo_value_str (effort));
    double d;
    d = cfg->max_tokens;
    if (s_number (config, block, "MAX_TOKENS", 1, 1e7, &d, err))
        return -1;
    cfg->max_tokens = (int) d;
    if (s_number (config, block, "TEMPERATURE", 0, 2, &cfg->temperature, err)
    ||  s_number (config, block, "TOP_P", 0, 1, &cfg->top_p, err)
    ||  s_number (config, block, "TIMEOUT", 0.001, 3600, &cfg->timeout_s, err))
        return -1;
    d = cfg->max_retry;
    if (s_number (config, block, "MAX_RETRY", 0, 100, &d, err))
        return -1;
    cfg->max_retry = (int) d;
    if (!*cfg->api_key) {
        const char *env = NULL;
        if (strcmp (cfg->api_type, "aoai") == 0 || strcmp (cfg->api_type, "azure") == 0)
            env = getenv ("AZURE_OPENAI_API_KEY");
        if (strcmp (cfg->api_type, "claude") == 0)
            env = getenv ("ANTHROPIC_API_KEY");
        if (strcmp (cfg->api_type, "gemini") == 0)
            env = getenv ("GEMINI_API_KEY");
        if (!env || !*env)
            env = getenv ("OPENAI_API_KEY");
        if (env && strlen (env) < sizeof cfg->api_key)
            snprintf (cfg->api_key, sizeof cfg->api_key, "%s", env);
    }
    if (*cfg->api_base && (strcmp (cfg->api_type, "aoai") == 0 || strcmp (cfg->api_type, "azure") == 0
         || strcmp (cfg->api_type, "azure_ad") == 0)
    &&  (!*cfg->api_deployment_id || !*cfg->api_version))
        return ufo_error_set (err, UFO_E_MISSING,
                              "%s: API_TYPE aoai needs API_DEPLOYMENT_ID and API_VERSION", block);
    return 0;
}

//  A backup engine is worth using when it is configured, is not the primary again, and
//  (for the hosted APIs, ufo_llm_config_needs_key) has a key: the schema gives BACKUP_AGENT the OpenAI defaults,
//  which without a key could only fail.
static bool
s_backup_usable (const ufo_llm_config_t *primary, const ufo_llm_config_t *backup)
{
    if (!ufo_llm_config_ok (backup))
        return false;
    char a [1200], b [1200];
    if (ufo_llm_config_url (primary, a, sizeof a) == 0 && ufo_llm_config_url (backup, b, sizeof b) == 0
    &&  !strcmp (a, b) && !strcmp (primary->api_model, backup->api_model)
    &&  !strcmp (primary->api_key, backup->api_key))
        return false;
    return !ufo_llm_config_needs_key (backup) || *backup->api_key;
}

//  Finds a data file given relative to the working directory, the source tree or the
//  installed data directory. Writes the path that exists into out; false if none.
static bool
s_find_data (const char *path, char *out, size_t size)
{
    return ufo_data_find (path, out, size);
}

ufo_llm_t *
ufo_llm_new_from_config (const ufo_config_t *config, const char *block, const char *mode_override,
                         const char *cassette_override, ufo_error_t *err)
{
    ufo_llm_config_t primary, backup;
    if (ufo_llm_config_from (config, block, &primary, err))
        return NULL;
    ufo_error_t berr;
    bool have_backup = ufo_llm_config_from (config, "BACKUP_AGENT", &backup, &berr) == 0
                    && s_backup_usable (&primary, &backup);
    const char *mode_text = mode_override ? mode_override : ufo_config_str (config, "llm.mode", "live");
    int mode = ufo_cassette_mode_parse (mode_text);
    if (!mode && strcasecmp (mode_text, "live") && *mode_text) {
        ufo_error_set (err, UFO_E_INVALID, "llm.mode \"%s\" is not live, record or replay", mode_text);
        return NULL;
    }
    const char *cassette_path = cassette_override ? cassette_override : ufo_config_str (config, "llm.cassette", "");
    if (mode && !*cassette_path) {
        ufo_error_set (err, UFO_E_MISSING, "llm.mode %s needs a cassette file (llm.cassette / --llm-cassette)",
                       mode_text);
        return NULL;
    }
    if (mode == UFO_CASSETTE_REPLAY && !ufo_llm_config_ok (&primary))
        snprintf (primary.api_base, sizeof primary.api_base, "http://replay.invalid/v1");
    ufo_llm_t *self = ufo_llm_new (&primary, have_backup ? &backup : NULL, err);
    if (!self)
        return NULL;
    if (mode) {
        ufo_cassette_t *cassette = ufo_cassette_open (cassette_path, (ufo_cassette_mode_t) mode, err);
        if (!cassette) {
            ufo_llm_destroy (&self);
            return NULL;
        }
        ufo_llm_set_cassette (self, &cassette);
    }
    const char *prices_file = ufo_config_str (config, "llm.prices_file", "config/prices.json");
    char path [1200];
    if (*prices_file && s_find_data (prices_file, path, sizeof path)) {
        ufo_error_t perr;
        ufo_prices_t *prices = ufo_prices_load (path, &perr);
        if (prices)
            ufo_llm_set_prices (self, &prices);
        else
            ufo_warn ("llm: %s; costs count as 0", perr.message);
    }
    else
    if (*prices_file)
        ufo_warn ("llm: no price file %s; costs count as 0", prices_file);
    return self;
}
