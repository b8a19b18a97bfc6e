/*  ufo_llm_engine.c - an engine's defaults, endpoint URL and names; secret redaction.
    Kept apart from ufo_llm_config.c so that programs which fill ufo_llm_config_t
    themselves do not link the configuration module. */
#include "ufo_prelude.h"
#include "ufo_llm.h"
#include "ufo_cost.h"

void
ufo_llm_config_defaults (ufo_llm_config_t *cfg)
{
    assert (cfg);
    memset (cfg, 0, sizeof *cfg);
    snprintf (cfg->name, sizeof cfg->name, "LLM");
    snprintf (cfg->api_type, sizeof cfg->api_type, "openai");
    cfg->max_tokens = 2000;
    cfg->temperature = 0;
    cfg->top_p = 0;
    cfg->timeout_s = 60;
    cfg->max_retry = 3;
    cfg->json_mode = true;
    cfg->backoff_base_ms = 1000;
    cfg->backoff_max_ms = 60000;
}

bool
ufo_llm_config_ok (const ufo_llm_config_t *cfg)
{
    if (!cfg || !*cfg->api_base)
        return false;
    if (strcmp (cfg->api_type, "aoai") == 0 || strcmp (cfg->api_type, "azure") == 0
    ||  strcmp (cfg->api_type, "azure_ad") == 0)
        return *cfg->api_deployment_id != 0;
    return true;
}

bool
ufo_llm_config_needs_key (const ufo_llm_config_t *cfg)
{
    static const char *const hosted [] = { "openai", "aoai", "azure", "azure_ad", "claude", "gemini" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (hosted); i++)
        if (!strcmp (cfg->api_type, hosted [i]))
            return true;
    return false;
}

static bool
s_ends_with (const char *s, size_t len, const char *suffix)
{
    size_t n = strlen (suffix);
    return len >= n && memcmp (s + len - n, suffix, n) == 0;
}

int
ufo_llm_config_url (const ufo_llm_config_t *cfg, char *buf, size_t size)
{
    size_t len = strlen (cfg->api_base);
    while (len && cfg->api_base [len - 1] == '/')
        len--;
    int n;
    if (strcmp (cfg->api_type, "aoai") == 0 || strcmp (cfg->api_type, "azure") == 0
    ||  strcmp (cfg->api_type, "azure_ad") == 0)
        n = snprintf (buf, size, "%.*s/openai/deployments/%s/chat/completions?api-version=%s",
                      (int) len, cfg->api_base, cfg->api_deployment_id, cfg->api_version);
    else
    if (!strcmp (cfg->api_type, "claude")) {
        if (s_ends_with (cfg->api_base, len, "/messages"))
            n = snprintf (buf, size, "%.*s", (int) len, cfg->api_base);
        else
            n = snprintf (buf, size, "%.*s%s/messages", (int) len, cfg->api_base,
                          s_ends_with (cfg->api_base, len, "/v1") ? "" : "/v1");
    }
    else
    if (s_ends_with (cfg->api_base, len, "/chat/completions"))
        n = snprintf (buf, size, "%.*s", (int) len, cfg->api_base);
    else
    if (strcmp (cfg->api_type, "ollama") == 0 && !s_ends_with (cfg->api_base, len, "/v1"))
        n = snprintf (buf, size, "%.*s/v1/chat/completions", (int) len, cfg->api_base);
    else
        n = snprintf (buf, size, "%.*s/chat/completions", (int) len, cfg->api_base);
    return n < 0 || (size_t) n >= size ? -1 : 0;
}

void
ufo_llm_config_model_name (const ufo_llm_config_t *cfg, char *buf, size_t size)
{
    const char *model = *cfg->api_model ? cfg->api_model : cfg->api_deployment_id;
    snprintf (buf, size, "%s/%s", ufo_prices_provider (cfg->api_type), model);
}

void
ufo_llm_redact (char *text, const char *secret)
{
    if (!text || !secret || strlen (secret) < 4)
        return;                 //  a 1-3 character "secret" would mangle ordinary text
    size_t slen = strlen (secret);
    char *hit;
    while ((hit = strstr (text, secret))) {
        memcpy (hit, "***", 3);
        memmove (hit + 3, hit + slen, strlen (hit + slen) + 1);
    }
}
