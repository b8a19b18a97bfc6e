/*  ufo_embed.c - embeddings from an OpenAI-compatible endpoint (see ufo_embed.h). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_http.h"
#include "ufo_embed.h"

#define S_MAX_TEXTS 256
#define S_MAX_DIM 65536

bool
ufo_embed_opts_from_config (ufo_embed_opts_t *opts, const ufo_config_t *config)
{
    memset (opts, 0, sizeof *opts);
    opts->url = ufo_config_str (config, "knowledge.embeddings_url", "");
    opts->model = ufo_config_str (config, "knowledge.embeddings_model", "text-embedding-3-small");
    opts->api_key = ufo_config_str (config, "knowledge.embeddings_api_key", "");
    opts->timeout_ms = (long) ufo_config_int (config, "knowledge.search_timeout_ms", 3000) * 10;
    return opts->url && *opts->url;
}

typedef struct {
    bool done;
    long status;
    char error [256];
    char *body;
    size_t len;
} s_reply_t;

static void
s_done (const ufo_http_result_t *r, void *arg)
{
    s_reply_t *reply = arg;
    reply->done = true;
    reply->status = r->status;
    if (r->transport)
        snprintf (reply->error, sizeof reply->error, "%s", r->timed_out ? "timed out" : r->error);
    else {
        reply->body = ufo_strndup (r->body, r->body_len);
        reply->len = r->body_len;
    }
}

size_t
ufo_embed_floats (const ufo_value_t *vector, float *out, size_t max)
{
    size_t n = ufo_value_size (vector);
    if (ufo_value_type (vector) != UFO_TLIST || n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *x = ufo_value_list_at (vector, i);
        if (ufo_value_type (x) == UFO_TFLOAT)
            out [i] = (float) ufo_value_float (x);
        else
        if (ufo_value_type (x) == UFO_TINT)
            out [i] = (float) ufo_value_int (x);
        else
            return 0;
    }
    return n;
}

static ufo_value_t *
s_parse (const s_reply_t *reply, size_t count, ufo_error_t *err)
{
    ufo_value_t *doc = ufo_json_parse (reply->body, reply->len, NULL, err);
    if (!doc)
        return NULL;
    const ufo_value_t *data = ufo_value_map_get (doc, "data");
    ufo_value_t *out = NULL;
    if (ufo_value_type (data) != UFO_TLIST || ufo_value_size (data) != count)
        ufo_error_set (err, UFO_E_TYPE, "embeddings reply: \"data\" must list %zu vectors", count);
    else {
        out = ufo_value_new_list ();
        for (size_t i = 0; i < count; i++)
            ufo_value_list_push (out, &(ufo_value_t *) { ufo_value_new_null () });
        size_t dim = 0;
        for (size_t i = 0; i < count && out; i++) {
            const ufo_value_t *d = ufo_value_list_at (data, i);
            int64_t index = ufo_value_map_int (d, "index", (int64_t) i);
            const ufo_value_t *vec = ufo_value_map_get (d, "embedding");
            size_t n = ufo_value_type (vec) == UFO_TLIST ? ufo_value_size (vec) : 0;
            bool numbers = true;
            for (size_t k = 0; k < n && numbers; k++) {
                int type = ufo_value_type (ufo_value_list_at (vec, k));
                numbers = type == UFO_TFLOAT || type == UFO_TINT;
            }
            if (index < 0 || (size_t) index >= count || n == 0 || n > S_MAX_DIM || !numbers
            ||  (dim && n != dim) || ufo_value_type (ufo_value_list_at (out, (size_t) index)) != UFO_TNULL) {
                ufo_error_set (err, UFO_E_TYPE, "embeddings reply: data [%zu] is not a vector of the batch", i);
                ufo_value_destroy (&out);
                break;
            }
            dim = n;
            ufo_value_list_set (out, (size_t) index, &(ufo_value_t *) { ufo_value_dup (vec) });
        }
    }
    ufo_value_destroy (&doc);
    return out;
}

//  Starts the POST of texts on http; done(result, arg) as ufo_http_post. Returns the id or -1.
static int64_t
s_post (ufo_http_t *http, const ufo_embed_opts_t *opts, const ufo_value_t *texts,
        ufo_http_done_fn *done, void *arg, ufo_error_t *err)
{
    size_t count = ufo_value_size (texts);
    if (!opts->url || !*opts->url)
        return ufo_error_set (err, UFO_E_INVALID, "no embeddings endpoint (knowledge.embeddings_url)"), -1;
    if (count == 0 || count > S_MAX_TEXTS)
        return ufo_error_set (err, UFO_E_INVALID, "%zu texts to embed (1..%d)", count, S_MAX_TEXTS), -1;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "model", opts->model ? opts->model : "");
    ufo_value_map_set_copy (body, "input", texts);
    size_t len = 0;
    char *json = ufo_json_dump (body, UFO_JSON_COMPACT, &len);
    ufo_value_destroy (&body);
    char auth [600];
    const char *headers [3] = { "Content-Type: application/json", NULL, NULL };
    if (opts->api_key && *opts->api_key) {
        snprintf (auth, sizeof auth, "Authorization: Bearer %s", opts->api_key);
        headers [1] = auth;
    }
    int64_t id = ufo_http_post (http, opts->url, headers, json, len, opts->timeout_ms, 0, done, arg, err);
    free (json);
    return id;
}

//  The vectors of a finished reply, or NULL with err.
static ufo_value_t *
s_result (const ufo_embed_opts_t *opts, const s_reply_t *reply, size_t count, ufo_error_t *err)
{
    if (!reply->body)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "embeddings %s: %s", opts->url, reply->error), NULL;
    if (reply->status != 200)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "embeddings %s: HTTP %ld", opts->url, reply->status), NULL;
    return s_parse (reply, count, err);
}

ufo_value_t *
ufo_embed_texts (const ufo_embed_opts_t *opts, const ufo_value_t *texts, ufo_error_t *err)
{
    ufo_http_t *http = ufo_http_new ();
    if (!http)
        return ufo_error_set (err, UFO_E_INTERNAL, "cannot start an HTTP client"), NULL;
    s_reply_t reply = {0};
    int64_t id = s_post (http, opts, texts, s_done, &reply, err);
    //  curl's own timeout ends the transfer; the wait's bound is only a backstop
    if (id > 0)
        ufo_http_wait (http, &reply.done, (int) opts->timeout_ms + 5000);
    ufo_http_destroy (&http);
    ufo_value_t *out = id > 0 ? s_result (opts, &reply, ufo_value_size (texts), err) : NULL;
    free (reply.body);
    return out;
}

//  State of one asynchronous request (freed when it completes or is cancelled).
struct _ufo_embed_req_t {
    ufo_http_t *http;
    int64_t id;
    size_t count;
    char url [1024];
    ufo_embed_fn *done;
    void *arg;
};

static void
s_async_done (const ufo_http_result_t *r, void *arg)
{
    ufo_embed_req_t *req = arg;
    s_reply_t reply = {0};
    s_done (r, &reply);
    ufo_embed_opts_t opts = { .url = req->url };
    ufo_error_t err = {0};
    ufo_value_t *vectors = s_result (&opts, &reply, req->count, &err);
    free (reply.body);
    req->done (&vectors, vectors ? NULL : err.message, req->arg);
    ufo_value_destroy (&vectors);
    free (req);
}

ufo_embed_req_t *
ufo_embed_start (ufo_http_t *http, const ufo_embed_opts_t *opts, const ufo_value_t *texts,
                 ufo_embed_fn *done, void *arg, ufo_error_t *err)
{
    ufo_embed_req_t *req = ufo_calloc (1, sizeof *req);
    req->http = http;
    req->count = ufo_value_size (texts);
    snprintf (req->url, sizeof req->url, "%s", opts->url ? opts->url : "");
    req->done = done;
    req->arg = arg;
    req->id = s_post (http, opts, texts, s_async_done, req, err);
    if (req->id <= 0) {
        free (req);
        return NULL;
    }
    return req;
}

void
ufo_embed_cancel (ufo_embed_req_t **req_p)
{
    if (!req_p || !*req_p)
        return;
    ufo_http_cancel ((*req_p)->http, (*req_p)->id);
    free (*req_p);
    *req_p = NULL;
}
