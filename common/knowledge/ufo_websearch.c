/*  ufo_websearch.c - web search for the agents' prompts (see ufo_websearch.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_http.h"
#include "ufo_websearch.h"

#define S_MAX_BODY (4u << 20)

typedef struct {
    char provider [16];
    size_t count, max_text;
    long timeout_ms;
    ufo_websearch_fn *done;
    void *arg;
} s_search_t;

void
ufo_websearch_opts_from_config (ufo_websearch_opts_t *opts, const ufo_config_t *config)
{
    memset (opts, 0, sizeof *opts);
    opts->provider = ufo_config_str (config, "knowledge.search_provider", "bing");
    opts->endpoint = ufo_config_str (config, "knowledge.search_endpoint", "");
    opts->key = ufo_config_str (config, "BING_API_KEY", "");
    opts->timeout_ms = (long) ufo_config_int (config, "knowledge.search_timeout_ms", 3000);
    opts->count = (size_t) ufo_config_int (config, "RAG_ONLINE_SEARCH_TOPK", 5);
    opts->max_text = (size_t) ufo_config_int (config, "knowledge.prompt_bytes", 1500);
}

static bool
s_provider_ok (const char *p)
{
    return p && (strcmp (p, "bing") == 0 || strcmp (p, "searxng") == 0);
}

static void
s_escape (ufo_buf_t *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (isalnum (*p) || strchr ("-_.~", *p))
            ufo_buf_putc (out, (char) *p);
        else
            ufo_buf_printf (out, "%%%02X", *p);
    }
}

static ufo_value_t *
s_result (const char *title, const char *url, const char *snippet, size_t max_text)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "title", title);
    ufo_value_map_set_str (r, "url", url);
    size_t len = strlen (snippet);
    if (max_text && len > max_text) {
        size_t cut = ufo_utf8_prefix (snippet, len, max_text);
        ufo_value_map_set (r, "snippet", &(ufo_value_t *) { ufo_value_new_stringf ("%.*s...", (int) cut, snippet) });
    }
    else
        ufo_value_map_set_str (r, "snippet", snippet);
    return r;
}

ufo_value_t *
ufo_websearch_parse (const char *provider, const char *body, size_t len, size_t count,
                     size_t max_text, ufo_error_t *err)
{
    if (!s_provider_ok (provider))
        return ufo_error_set (err, UFO_E_INVALID, "unknown search provider '%s'", provider ? provider : ""), NULL;
    ufo_value_t *doc = ufo_json_parse (body, len, NULL, err);
    if (!doc)
        return NULL;
    bool bing = strcmp (provider, "bing") == 0;
    const ufo_value_t *list = bing ? ufo_value_path (doc, "webPages.value") : ufo_value_map_get (doc, "results");
    ufo_value_t *out = NULL;
    if (ufo_value_type (doc) != UFO_TMAP || (list && ufo_value_type (list) != UFO_TLIST)
    ||  (!list && !bing))
        ufo_error_set (err, UFO_E_TYPE, "%s reply: no %s list", provider, bing ? "webPages.value" : "results");
    else {
        //  Bing answers without webPages when nothing was found
        out = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (list) && ufo_value_size (out) < count; i++) {
            const ufo_value_t *r = ufo_value_list_at (list, i);
            const char *title = ufo_value_map_str (r, bing ? "name" : "title", NULL);
            const char *url = ufo_value_map_str (r, "url", NULL);
            const char *snippet = ufo_value_map_str (r, bing ? "snippet" : "content", "");
            if (!title || !url)
                continue;           //  an entry without title or URL is of no use
            ufo_value_t *e = s_result (title, url, snippet, max_text);
            ufo_value_list_push (out, &e);
        }
    }
    ufo_value_destroy (&doc);
    return out;
}

static void
s_done (const ufo_http_result_t *r, void *arg)
{
    s_search_t *s = arg;
    char error [320] = "";
    ufo_value_t *results = NULL;
    if (r->transport) {
        if (r->timed_out)
            snprintf (error, sizeof error, "timed out after %ld ms", s->timeout_ms);
        else
            snprintf (error, sizeof error, "%s", r->error);
    }
    else
    if (r->status != 200)
        snprintf (error, sizeof error, "HTTP %ld", r->status);
    else {
        ufo_error_t err = {0};
        results = ufo_websearch_parse (s->provider, r->body, r->body_len, s->count, s->max_text, &err);
        if (!results)
            snprintf (error, sizeof error, "%s", err.message);
    }
    s->done (&results, results ? NULL : error, s->arg);
    ufo_value_destroy (&results);
    free (s);
}

int64_t
ufo_websearch_start (ufo_http_t *http, const ufo_websearch_opts_t *opts, const char *query,
                     ufo_websearch_fn *done, void *arg, ufo_error_t *err)
{
    assert (http && opts && done);
    if (!s_provider_ok (opts->provider))
        return ufo_error_set (err, UFO_E_INVALID, "unknown search provider '%s' (bing, searxng)",
                              opts->provider ? opts->provider : "");
    if (!query || !*query)
        return ufo_error_set (err, UFO_E_INVALID, "empty search query");
    if (!opts->endpoint || !*opts->endpoint)
        return ufo_error_set (err, UFO_E_INVALID, "no search endpoint (knowledge.search_endpoint)");
    ufo_buf_t url = {0};
    ufo_buf_puts (&url, opts->endpoint);
    ufo_buf_puts (&url, strchr (opts->endpoint, '?') ? "&q=" : "?q=");
    s_escape (&url, query);
    bool bing = strcmp (opts->provider, "bing") == 0;
    if (bing)
        ufo_buf_printf (&url, "&count=%zu", opts->count ? opts->count : 5);
    else
        ufo_buf_puts (&url, "&format=json");
    char key_header [300];
    const char *headers [3] = { "Accept: application/json", NULL, NULL };
    if (bing && opts->key && *opts->key) {
        snprintf (key_header, sizeof key_header, "Ocp-Apim-Subscription-Key: %s", opts->key);
        headers [1] = key_header;
    }
    s_search_t *s = ufo_calloc (1, sizeof *s);
    snprintf (s->provider, sizeof s->provider, "%s", opts->provider);
    s->count = opts->count ? opts->count : 5;
    s->max_text = opts->max_text;
    s->timeout_ms = opts->timeout_ms;
    s->done = done;
    s->arg = arg;
    int64_t id = ufo_http_get (http, url.data, headers, opts->timeout_ms, S_MAX_BODY, s_done, s, err);
    ufo_buf_free (&url);
    if (id < 0)
        free (s);
    return id;
}
