/*  ufo_cli_model.c - the model settings as the commands show and take them. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_paths.h"
#include "ufo_cli.h"
#include "ufo_cli_model.h"

bool
ufo_cli_model_option (const char *arg, const char *value)
{
    const char *var = !strcmp (arg, "--api-type") ? "UFO_API_TYPE"
                    : !strcmp (arg, "--api-base") ? "UFO_API_BASE"
                    : !strcmp (arg, "--model") ? "UFO_API_MODEL" : NULL;
    if (!var || !value)
        return false;
    setenv (var, value, 1);
    return true;
}

bool
ufo_cli_model_refuse (const char *arg, const char *prog)
{
    if (strcmp (arg, "--api-type") && strcmp (arg, "--api-base") && strcmp (arg, "--model")
    &&  strcmp (arg, "--api-key"))
        return false;
    fprintf (stderr, "%s: %s: the agents' model is chosen when they start: stop `ufo up` and start it "
             "again with %s (or UFO_API_TYPE / UFO_API_BASE / UFO_API_MODEL / UFO_API_KEY in its "
             "environment); `ufo up` prints what each agent uses, `ufo doctor` checks it\n", prog, arg,
             strcmp (arg, "--api-key") ? arg : "UFO_API_KEY set");
    return true;
}

static bool
s_same_engine (const ufo_llm_config_t *a, const ufo_llm_config_t *b)
{
    char ua [1200], ub [1200];
    return ufo_llm_config_url (a, ua, sizeof ua) == 0 && ufo_llm_config_url (b, ub, sizeof ub) == 0
        && !strcmp (ua, ub) && !strcmp (a->api_model, b->api_model) && !strcmp (a->api_key, b->api_key);
}

bool
ufo_cli_model_backup_used (const ufo_config_t *config)
{
    ufo_llm_config_t backup, agent;
    ufo_error_t err;
    if (ufo_llm_config_from (config, "BACKUP_AGENT", &backup, &err) || !ufo_llm_config_ok (&backup))
        return false;
    if (ufo_llm_config_needs_key (&backup) && !*backup.api_key)
        return false;
    const char *blocks [] = { "HOST_AGENT", "APP_AGENT", "EVALUATION_AGENT" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++)
        if (ufo_llm_config_from (config, blocks [i], &agent, &err) == 0 && !s_same_engine (&agent, &backup))
            return true;
    return false;
}

ufo_prices_t *
ufo_cli_model_prices (const ufo_config_t *config, ufo_error_t *err)
{
    const char *file = ufo_config_str (config, "llm.prices_file", "config/prices.json");
    char path [1200];
    if (!*file || !ufo_data_find (file, path, sizeof path)) {
        ufo_error_set (err, UFO_E_NOT_FOUND, "no price file %s", *file ? file : "(llm.prices_file is empty)");
        return NULL;
    }
    return ufo_prices_load (path, err);
}

void
ufo_cli_model_print (const ufo_config_t *config, FILE *out)
{
    const char *blocks [] = UFO_CLI_MODEL_BLOCKS;
    bool backup = ufo_cli_model_backup_used (config);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        ufo_llm_config_t cfg;
        ufo_error_t err;
        if (!strcmp (blocks [i], "BACKUP_AGENT") && !backup) {
            fprintf (out, "  %-17s not used (not configured, same as the agents', or no key)\n", blocks [i]);
            continue;
        }
        if (ufo_llm_config_from (config, blocks [i], &cfg, &err)) {
            fprintf (out, "  %-17s configuration error: %s\n", blocks [i], err.message);
            continue;
        }
        char url [1200] = "(no API_BASE)";
        if (ufo_llm_config_ok (&cfg))
            ufo_llm_config_url (&cfg, url, sizeof url);
        fprintf (out, "  %-17s %s %s model %s%s, %s\n", blocks [i], cfg.api_type, url,
                 *cfg.api_model ? cfg.api_model : cfg.api_deployment_id,
                 cfg.reasoning_model ? " (reasoning)" : "", *cfg.api_key ? "key set" : "no key");
    }
}

int
ufo_cli_model_warn_unpriced (const ufo_config_t *config, FILE *out, const char *prog)
{
    ufo_error_t err;
    ufo_prices_t *prices = ufo_cli_model_prices (config, &err);
    const char *blocks [] = UFO_CLI_MODEL_BLOCKS;
    bool backup = ufo_cli_model_backup_used (config);
    char missing [1024] = "", first [200] = "";
    int n = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        ufo_llm_config_t cfg;
        if ((!strcmp (blocks [i], "BACKUP_AGENT") && !backup) || ufo_llm_config_from (config, blocks [i], &cfg, &err))
            continue;
        char name [200];
        ufo_llm_config_model_name (&cfg, name, sizeof name);
        const char *model = *cfg.api_model ? cfg.api_model : cfg.api_deployment_id;
        if (ufo_prices_known (prices, ufo_prices_provider (cfg.api_type), model) || strstr (missing, name))
            continue;
        if (!n)
            snprintf (first, sizeof first, "%s", name);
        size_t used = strlen (missing);
        snprintf (missing + used, sizeof missing - used, "%s%s", n ? ", " : "", name);
        n++;
    }
    if (n)
        fprintf (out, "%s: warning: no price for %s in %s: costs will show as $0 (add e.g. \"%s\": "
                 "{\"input\": <$ per 1k tokens>, \"output\": <$ per 1k tokens>})\n", prog, missing,
                 ufo_config_str (config, "llm.prices_file", "config/prices.json"), first);
    ufo_prices_destroy (&prices);
    return n;
}

void
ufo_cli_model_at_start (const ufo_config_t *config, FILE *out, const char *prog)
{
    fprintf (out, "%s: models (ufo doctor checks them with a real request):\n", prog);
    ufo_cli_model_print (config, out);
    ufo_cli_model_warn_unpriced (config, out, prog);
    ufo_cli_doctor_quick (config, out, prog);
    fflush (out);
}
