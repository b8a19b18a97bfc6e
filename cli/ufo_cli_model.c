/*  ufo_cli_model.c - the model settings as the commands show and take them. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_paths.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_model.h"
#include "ufo_cli_session.h"

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
    if (strcmp (arg, "--api-key"))
        return false;
    fprintf (stderr, "%s: --api-key: keys never go on a command line or over the bus; set the key in the "
             "agents' environment (where `ufo up` runs) and name its variable with --api-key-env NAME\n", prog);
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

int
ufo_cli_model_override_arg (ufo_llm_override_t *override, int argc, char **argv, int *i, const char *prog)
{
    ufo_error_t err;
    int taken = ufo_llm_override_option (override, argv [*i], *i + 1 < argc ? argv [*i + 1] : NULL, &err);
    if (taken < 0 || (taken && ufo_llm_override_check (override, &err))) {
        fprintf (stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    if (taken)
        (*i)++;
    else
    if (ufo_cli_model_refuse (argv [*i], prog))
        return -1;
    return taken;
}

//  Whether variable name is set (non-empty) in the environment of process pid (0: this one);
//  -1 when that environment cannot be read.
static int
s_env_has (pid_t pid, const char *name)
{
    if (pid == 0) {
        const char *v = getenv (name);
        return v && *v;
    }
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/environ", (int) pid);
    FILE *f = fopen (path, "rb");
    if (!f)
        return -1;
    static char env [1 << 20];
    size_t n = fread (env, 1, sizeof env - 1, f);
    fclose (f);
    env [n] = 0;
    size_t len = strlen (name);
    for (size_t i = 0; i < n; i += strlen (env + i) + 1)
        if (!strncmp (env + i, name, len) && env [i + len] == '=' && env [i + len + 1])
            return 1;
    return 0;
}

bool
ufo_cli_model_override_ready (const ufo_config_t *config, const ufo_llm_override_t *override,
                              const char *prog)
{
    ufo_error_t err;
    if (ufo_llm_override_check (override, &err)) {
        fprintf (stderr, "%s: %s\n", prog, err.message);
        return false;
    }
    if (ufo_llm_override_empty (override))
        return true;
    ufo_llm_config_t base;
    if (ufo_llm_config_from (config, "HOST_AGENT", &base, &err))
        return true;            //  the configuration's own error shows elsewhere
    memset (base.api_key, 0, sizeof base.api_key);
    if (*override->model) {
        //  the session's costs: one visible warning when its model has no price
        //  (without --api-type the agents' own type decides, which this process may not know:
        //  a price under any provider will do)
        static const char *const providers [] = { "openai", "azure", "ollama", "openai_compatible", "claude", "gemini" };
        ufo_prices_t *prices = ufo_cli_model_prices (config, &err);
        bool known = false;
        for (size_t i = 0; i < UFO_ARRAY_SIZE (providers) && !known; i++)
            known = ufo_prices_known (prices, *override->api_type ? ufo_prices_provider (override->api_type)
                                                                  : providers [i], override->model);
        if (!known)
            fprintf (stderr, "%s: warning: no price for %s%s%s in %s: this session's costs will show as $0\n", prog,
                     *override->api_type ? ufo_prices_provider (override->api_type) : "model ",
                     *override->api_type ? "/" : "", override->model,
                     ufo_config_str (config, "llm.prices_file", "config/prices.json"));
        ufo_prices_destroy (&prices);
    }
    char vars [160];
    ufo_llm_override_key_var (override, &base, vars, sizeof vars);
    bool needs = *override->api_key_env != 0;
    if (!needs && *vars) {      //  another endpoint: a key only where the API needs one
        ufo_llm_config_t probe = base;
        if (*override->api_type)
            snprintf (probe.api_type, sizeof probe.api_type, "%s", override->api_type);
        needs = ufo_llm_config_needs_key (&probe);
    }
    if (!needs)
        return true;            //  the block's own key, or a local server that may go without
    //  whose environment: the local `ufo up`'s when it runs, else ours
    pid_t pid = 0;
    char dir [256], path [512];
    if (ufo_cli_run_dir (dir, sizeof dir, NULL) == 0) {
        snprintf (path, sizeof path, "%s/up.json", dir);
        ufo_value_t *state = access (path, R_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
        int64_t up = ufo_value_map_int (state, "pid", 0);
        ufo_value_destroy (&state);
        if (up > 0 && kill ((pid_t) up, 0) == 0)
            pid = (pid_t) up;
    }
    int found = 0;
    char copy [160];
    snprintf (copy, sizeof copy, "%s", vars);
    char *save = NULL;
    for (char *v = strtok_r (copy, " ", &save); v && found == 0; v = strtok_r (NULL, " ", &save)) {
        if (!strcmp (v, "or"))
            continue;
        found = s_env_has (pid, v);
        if (found < 0 && pid) {
            pid = 0;            //  not readable: fall back to ours
            found = s_env_has (0, v);
        }
    }
    if (!found) {
        if (pid)
            fprintf (stderr, "%s: warning: the model override needs %s in the agents' environment, and the running "
                     "`ufo up` (pid %d) has %s: the session will end with that error; start `ufo up` with it set\n",
                     prog, vars, (int) pid, strchr (vars, ' ') ? "neither" : "no such variable");
        else
            fprintf (stderr, "%s: warning: the model override needs %s in the agents' environment; it is not set "
                     "here either (the agents read their own: a session whose agents lack it ends with an error "
                     "naming it)\n", prog, vars);
    }
    return true;
}
