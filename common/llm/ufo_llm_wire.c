/*  ufo_llm_wire.c - request bodies, headers, reply fields and error hints per API_TYPE. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_value.h"
#include "ufo_llm_wire.h"

bool
ufo_llm_wire_is_claude (const ufo_llm_config_t *cfg)
{
    return !strcmp (cfg->api_type, "claude");
}

static bool
s_is_azure_key (const ufo_llm_config_t *cfg)
{
    return !strcmp (cfg->api_type, "aoai") || !strcmp (cfg->api_type, "azure");
}

//  --- Anthropic Messages API ------------------------------------------------------------

//  One chat-completions content part as an Anthropic content block (NULL: skipped).
static ufo_value_t *
s_claude_block (const ufo_value_t *part)
{
    const char *type = ufo_value_map_str (part, "type", "");
    ufo_value_t *block = ufo_value_new_map ();
    if (!strcmp (type, "text")) {
        ufo_value_map_set_str (block, "type", "text");
        ufo_value_map_set_str (block, "text", ufo_value_map_str (part, "text", ""));
        return block;
    }
    const char *url = ufo_value_str (ufo_value_path (part, "image_url.url"));
    if (!url) {
        ufo_value_destroy (&block);
        return NULL;
    }
    ufo_value_map_set_str (block, "type", "image");
    ufo_value_t *source = ufo_value_new_map ();
    const char *comma = strchr (url, ',');
    const char *b64 = strstr (url, ";base64,");
    if (!strncmp (url, "data:", 5) && b64 && comma && b64 + 7 == comma) {
        char media [64];
        snprintf (media, sizeof media, "%.*s", (int) (b64 - url - 5), url + 5);
        ufo_value_map_set_str (source, "type", "base64");
        ufo_value_map_set_str (source, "media_type", media);
        ufo_value_map_set_str (source, "data", comma + 1);
    }
    else {
        ufo_value_map_set_str (source, "type", "url");
        ufo_value_map_set_str (source, "url", url);
    }
    ufo_value_map_set (block, "source", &source);
    return block;
}

static void
s_claude_messages (ufo_value_t *body, const ufo_value_t *messages)
{
    ufo_buf_t system = { 0 };
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        const char *role = ufo_value_map_str (m, "role", "user");
        const ufo_value_t *content = ufo_value_map_get (m, "content");
        if (!strcmp (role, "system") || !strcmp (role, "developer")) {
            //  The Messages API takes the system prompt as a top-level field.
            if (system.len)
                ufo_buf_puts (&system, "\n\n");
            if (ufo_value_type (content) == UFO_TSTRING)
                ufo_buf_puts (&system, ufo_value_str (content));
            for (size_t k = 0; ufo_value_type (content) == UFO_TLIST && k < ufo_value_size (content); k++)
                ufo_buf_puts (&system, ufo_value_map_str (ufo_value_list_at (content, k), "text", ""));
            continue;
        }
        ufo_value_t *msg = ufo_value_new_map ();
        ufo_value_map_set_str (msg, "role", !strcmp (role, "assistant") ? "assistant" : "user");
        if (ufo_value_type (content) == UFO_TSTRING)
            ufo_value_map_set_copy (msg, "content", content);
        else {
            ufo_value_t *blocks = ufo_value_new_list ();
            for (size_t k = 0; k < ufo_value_size (content); k++) {
                ufo_value_t *block = s_claude_block (ufo_value_list_at (content, k));
                if (block)
                    ufo_value_list_push (blocks, &block);
            }
            ufo_value_map_set (msg, "content", &blocks);
        }
        ufo_value_list_push (out, &msg);
    }
    if (system.len)
        ufo_value_map_set_str (body, "system", system.data);
    ufo_buf_free (&system);
    ufo_value_map_set (body, "messages", &out);
}

//  --- Bodies ----------------------------------------------------------------------------

char *
ufo_llm_wire_body (const ufo_llm_config_t *cfg, const ufo_value_t *messages, bool json, size_t *len_p)
{
    ufo_value_t *body = ufo_value_new_map ();
    if (*cfg->api_model)
        ufo_value_map_set_str (body, "model", cfg->api_model);
    if (ufo_llm_wire_is_claude (cfg)) {
        s_claude_messages (body, messages);
        ufo_value_map_set_int (body, "max_tokens", cfg->max_tokens);
        //  Newer Claude models refuse temperature and top_p together: temperature only.
        if (!cfg->reasoning_model)
            ufo_value_map_set_float (body, "temperature", cfg->temperature > 1 ? 1 : cfg->temperature);
    }
    else {
        ufo_value_map_set_copy (body, "messages", messages);
        if (cfg->reasoning_model) {
            //  o-series / GPT-5: max_tokens and a non-default temperature or top_p are refused.
            ufo_value_map_set_int (body, "max_completion_tokens", cfg->max_tokens);
            if (*cfg->reasoning_effort)
                ufo_value_map_set_str (body, "reasoning_effort", cfg->reasoning_effort);
        }
        else {
            ufo_value_map_set_int (body, "max_tokens", cfg->max_tokens);
            ufo_value_map_set_float (body, "temperature", cfg->temperature);
            ufo_value_map_set_float (body, "top_p", cfg->top_p);
        }
        if (json) {
            ufo_value_t *fmt = ufo_value_new_map ();
            ufo_value_map_set_str (fmt, "type", "json_object");
            ufo_value_map_set (body, "response_format", &fmt);
        }
    }
    char *text = ufo_json_dump (body, UFO_JSON_COMPACT, len_p);
    ufo_value_destroy (&body);
    return text;
}

void
ufo_llm_wire_headers (const ufo_llm_config_t *cfg, const char *agent, ufo_llm_headers_t *h)
{
    memset (h, 0, sizeof *h);
    size_t n = 0;
    snprintf (h->lines [n++], sizeof h->lines [0], "Content-Type: application/json");
    bool claude = ufo_llm_wire_is_claude (cfg);
    if (*cfg->api_key)
        snprintf (h->lines [n++], sizeof h->lines [0],
                  claude ? "x-api-key: %s" : s_is_azure_key (cfg) ? "api-key: %s" : "Authorization: Bearer %s",
                  cfg->api_key);
    if (claude)
        snprintf (h->lines [n++], sizeof h->lines [0], "anthropic-version: %s", UFO_LLM_ANTHROPIC_VERSION);
    if (agent && *agent)
        snprintf (h->lines [n++], sizeof h->lines [0], "X-UFO-Agent: %s", agent);
    for (size_t i = 0; i < n; i++)
        h->list [i] = h->lines [i];
    h->list [n] = NULL;
}

void
ufo_llm_wire_headers_wipe (ufo_llm_headers_t *h)
{
    volatile char *p = (volatile char *) h->lines;
    for (size_t i = 0; i < sizeof h->lines; i++)
        p [i] = 0;
}

//  --- Replies ---------------------------------------------------------------------------

int
ufo_llm_wire_reply (const ufo_llm_config_t *cfg, const ufo_value_t *body, char **content_p,
                    int64_t *pt, int64_t *ct, char *finish, size_t finish_size, char *why, size_t why_size)
{
    *content_p = NULL;
    *pt = *ct = 0;
    finish [0] = 0;
    if (ufo_llm_wire_is_claude (cfg)) {
        const ufo_value_t *blocks = ufo_value_map_get (body, "content");
        if (ufo_value_type (blocks) != UFO_TLIST) {
            snprintf (why, why_size, "no content blocks");
            return -1;
        }
        ufo_buf_t text = { 0 };
        ufo_buf_puts (&text, "");
        bool any = false;
        for (size_t i = 0; i < ufo_value_size (blocks); i++) {
            const ufo_value_t *b = ufo_value_list_at (blocks, i);
            if (!strcmp (ufo_value_map_str (b, "type", ""), "text")) {
                ufo_buf_puts (&text, ufo_value_map_str (b, "text", ""));
                any = true;
            }
        }
        if (!any) {
            ufo_buf_free (&text);
            snprintf (why, why_size, "no text content block");
            return -1;
        }
        *content_p = ufo_buf_detach (&text, NULL);
        *pt = ufo_value_int (ufo_value_path (body, "usage.input_tokens"));
        *ct = ufo_value_int (ufo_value_path (body, "usage.output_tokens"));
        const char *stop = ufo_value_map_str (body, "stop_reason", "");
        snprintf (finish, finish_size, "%s", !strcmp (stop, "max_tokens") ? "length" : stop);
    }
    else {
        const ufo_value_t *content = ufo_value_path (body, "choices.0.message.content");
        if (ufo_value_type (content) != UFO_TSTRING) {
            snprintf (why, why_size, "no choices[0].message.content");
            return -1;
        }
        *content_p = ufo_strdup (ufo_value_str (content));
        *pt = ufo_value_int (ufo_value_path (body, "usage.prompt_tokens"));
        *ct = ufo_value_int (ufo_value_path (body, "usage.completion_tokens"));
        const char *reason = ufo_value_str (ufo_value_path (body, "choices.0.finish_reason"));
        snprintf (finish, finish_size, "%s", reason ? reason : "");
    }
    if (*pt < 0)
        *pt = 0;
    if (*ct < 0)
        *ct = 0;
    return 0;
}

//  --- Errors ----------------------------------------------------------------------------

//  The parameter an error is about: error.param, else the known parameter named first in
//  the message ("'max_tokens' is not supported ... use 'max_completion_tokens'" is about
//  max_tokens). "" when none.
static const char *
s_subject (const char *lower, const char *param)
{
    static const char *const words [] = { "max_completion_tokens", "max_tokens", "temperature", "top_p",
                                          "reasoning_effort", "response_format" };
    if (param && *param)
        for (size_t i = 0; i < UFO_ARRAY_SIZE (words); i++)
            if (!strcmp (param, words [i]))
                return words [i];
    const char *best = "", *at = NULL;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (words); i++) {
        const char *hit = strstr (lower, words [i]);
        if (hit && (!at || hit < at)) {
            at = hit;
            best = words [i];
        }
    }
    return best;
}

void
ufo_llm_wire_explain (const ufo_llm_config_t *cfg, long status, const char *body, size_t len,
                      char *out, size_t size)
{
    ufo_value_t *v = ufo_json_parse (body, len, NULL, NULL);
    const char *msg = ufo_value_str (ufo_value_path (v, "error.message"));
    if (!msg)
        msg = ufo_value_str (ufo_value_map_get (v, "error"));
    if (!msg)
        msg = ufo_value_str (ufo_value_map_get (v, "message"));
    if (msg)
        snprintf (out, size, "%s", msg);
    else {
        size_t n = 0;
        for (size_t i = 0; i < len && n + 1 < size && n < 200; i++)
            out [n++] = isprint ((unsigned char) body [i]) ? body [i] : ' ';
        out [n] = 0;
        if (!n)
            snprintf (out, size, "(empty body)");
    }
    const char *param = ufo_value_str (ufo_value_path (v, "error.param"));
    char lower [600];
    size_t n = 0;
    for (const char *c = out; *c && n + 1 < sizeof lower; c++)
        lower [n++] = (char) tolower ((unsigned char) *c);
    lower [n] = 0;
    char hint [400] = "";
    const char *b = cfg->name;
    bool unsupported = strstr (lower, "unsupported") || strstr (lower, "not supported")
                    || strstr (lower, "unrecognized") || strstr (lower, "unknown parameter")
                    || strstr (lower, "does not support") || strstr (lower, "extra inputs")
                    || (param && *param);
    const char *subject = s_subject (lower, param);
    if (status == 400 || status == 422) {
        if (unsupported && !strcmp (subject, "max_completion_tokens"))
            snprintf (hint, sizeof hint, "the server does not know max_completion_tokens: set %s.REASONING_MODEL "
                      "false (for aoai a newer API_VERSION may be needed)", b);
        else
        if (unsupported && !strcmp (subject, "reasoning_effort"))
            snprintf (hint, sizeof hint, "this model takes no reasoning effort: set %s.REASONING_EFFORT \"\"", b);
        else
        if (unsupported && (!strcmp (subject, "max_tokens") || !strcmp (subject, "temperature")
                        ||  !strcmp (subject, "top_p")))
            snprintf (hint, sizeof hint, "%s is a reasoning model (o-series, GPT-5): set %s.REASONING_MODEL "
                      "true (or UFO_REASONING_MODEL=true for every agent)",
                      *cfg->api_model ? cfg->api_model : "the model", b);
        else
        if (!strcmp (subject, "response_format") || strstr (lower, "json_object"))
            snprintf (hint, sizeof hint, "this model has no JSON mode: set llm.json_mode false");
        else
        if (strstr (lower, "image"))
            snprintf (hint, sizeof hint, "this model takes no images: set %s.VISUAL_MODE false or use a "
                      "vision model", b);
    }
    if (status == 401 || status == 403)
        snprintf (hint, sizeof hint, "the key was refused: set %s.API_KEY (or UFO_API_KEY%s)", b,
                  ufo_llm_wire_is_claude (cfg) ? ", ANTHROPIC_API_KEY" : !strcmp (cfg->api_type, "gemini")
                  ? ", GEMINI_API_KEY" : s_is_azure_key (cfg) ? ", AZURE_OPENAI_API_KEY" : ", OPENAI_API_KEY");
    else
    if (status == 404 && (strstr (lower, "model") || strstr (lower, "deployment")))
        snprintf (hint, sizeof hint, "the server does not know model \"%s\": check %s.API_MODEL%s",
                  *cfg->api_model ? cfg->api_model : cfg->api_deployment_id, b,
                  s_is_azure_key (cfg) ? " and API_DEPLOYMENT_ID" : " (or UFO_API_MODEL)");
    else
    if (status == 404)
        snprintf (hint, sizeof hint, "no such endpoint: check %s.API_BASE and API_TYPE (%s)", b, cfg->api_type);
    if (*hint) {
        size_t used = strlen (out);
        snprintf (out + used, size > used ? size - used : 0, " - %s", hint);
    }
    ufo_value_destroy (&v);
}
