/*  ufo_llm.c - the LLM client's request state machine.

    A request goes: attempt on the primary engine -> (retriable failure: wait with backoff or
    Retry-After, attempt again, up to MAX_RETRY) -> (still failing: the backup engine, same
    rules) -> a reply -> (schema asked: extract + validate; unusable: append the reply and a
    corrective message and ask again, up to JSON_PARSING_RETRY) -> done. Every wait is a
    deadline checked by ufo_llm_process, never a sleep. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_llm_wire.h"
#include "ufo_http.h"
#include "ufo_cost.h"
#include "ufo_cassette.h"
#include <poll.h>

#define S_MAX_FDS 64

//  ufo_llm_fd_t is handed to the HTTP layer as ufo_http_fd_t: same layout, same bits.
_Static_assert (sizeof (ufo_llm_fd_t) == sizeof (ufo_http_fd_t), "fd struct layouts differ");
_Static_assert (offsetof (ufo_llm_fd_t, revents) == offsetof (ufo_http_fd_t, revents), "fd struct layouts differ");
_Static_assert (UFO_LLM_IN == UFO_HTTP_IN && UFO_LLM_OUT == UFO_HTTP_OUT && UFO_LLM_ERR == UFO_HTTP_ERR,
                "fd event bits differ");

typedef struct _s_req_t s_req_t;
struct _s_req_t {
    int64_t id;
    ufo_llm_t *owner;
    ufo_value_t *messages;      //  the conversation, growing with re-asks
    char agent [48];
    int64_t step;
    int schema;
    int json_retry;
    ufo_llm_done_fn *done;
    void *arg;
    void (*on_retry) (void *arg, int attempt, int64_t wait_ms, const char *why);
    void *retry_arg;
    int engine;                 //  0 primary, 1 backup
    ufo_llm_config_t *own;      //  this request's own engine (ufo_llm_opts_t.engine), or NULL
    char *own_url;              //  its URL and "provider/model" (owned with it)
    char *own_model;
    int tries;                  //  attempts on the current engine
    int64_t http_id;            //  transfer in flight, 0 when none
    int64_t due_ms;             //  next attempt time, -1 when not waiting
    bool finished;              //  resp is ready for the callback
    int64_t submitted_ms;
    char *primary_why;          //  why the primary engine failed, once the backup is in use
    ufo_llm_response_t *resp;
    s_req_t *next;
};

struct _ufo_llm_t {
    ufo_llm_config_t engines [2];
    int nengines;
    char urls [2][1200];
    char models [2][192];
    ufo_http_t *http;
    ufo_prices_t *prices;       //  owned
    ufo_cassette_t *cassette;   //  owned
    s_req_t *reqs;
    int64_t next_id;
    uint64_t rng;
};

static void s_start (s_req_t *req);

void
ufo_llm_response_destroy (ufo_llm_response_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_llm_response_t *self = *self_p;
    free (self->error);
    free (self->content);
    ufo_value_destroy (&self->decision);
    ufo_value_destroy (&self->messages);
    free (self);
    *self_p = NULL;
}

//  Every text that leaves the client goes through here: every engine's key is masked, and
//  the request's own engine's key (req may be NULL).
static char *
s_clean (const ufo_llm_t *self, const s_req_t *req, char *text)
{
    for (int i = 0; i < self->nengines; i++)
        ufo_llm_redact (text, self->engines [i].api_key);
    if (req && req->own)
        ufo_llm_redact (text, req->own->api_key);
    return text;
}

//  The engine, URL and "provider/model" the request's current attempt goes to.
static const ufo_llm_config_t *
s_cfg (const s_req_t *req)
{
    return req->own ? req->own : &req->owner->engines [req->engine];
}

static const char *
s_url (const s_req_t *req)
{
    return req->own ? req->own_url : req->owner->urls [req->engine];
}

static const char *
s_model (const s_req_t *req)
{
    return req->own ? req->own_model : req->owner->models [req->engine];
}

//  A decision may hold the key even though the text did not (JSON escapes such as \u0041):
//  masks it in the parsed value too.
static void
s_clean_value (const ufo_llm_t *self, const s_req_t *req, ufo_value_t **value_p)
{
    if (!*value_p)
        return;
    size_t len = 0;
    char *text = ufo_json_dump (*value_p, UFO_JSON_COMPACT, &len);
    bool found = false;
    for (int i = 0; i < self->nengines; i++)
        if (strlen (self->engines [i].api_key) >= 4 && strstr (text, self->engines [i].api_key))
            found = true;
    if (req->own && strlen (req->own->api_key) >= 4 && strstr (text, req->own->api_key))
        found = true;
    if (found) {
        s_clean (self, req, text);
        ufo_value_t *clean = ufo_json_parse (text, strlen (text), NULL, NULL);
        if (clean) {
            ufo_value_destroy (value_p);
            *value_p = clean;
        }
    }
    free (text);
}

ufo_llm_t *
ufo_llm_new (const ufo_llm_config_t *primary, const ufo_llm_config_t *backup, ufo_error_t *err)
{
    if (!primary || !ufo_llm_config_ok (primary)) {
        ufo_error_set (err, UFO_E_MISSING, "%s: no usable LLM endpoint (API_BASE%s)",
                       primary ? primary->name : "LLM",
                       primary && !strcmp (primary->api_type, "aoai") ? ", API_DEPLOYMENT_ID" : "");
        return NULL;
    }
    ufo_llm_t *self = ufo_calloc (1, sizeof (ufo_llm_t));
    self->engines [0] = *primary;
    self->nengines = 1;
    if (backup && ufo_llm_config_ok (backup))
        self->engines [self->nengines++] = *backup;
    for (int i = 0; i < self->nengines; i++) {
        if (ufo_llm_config_url (&self->engines [i], self->urls [i], sizeof self->urls [i])) {
            ufo_error_set (err, UFO_E_TOO_LARGE, "%s: API_BASE is too long", self->engines [i].name);
            free (self);
            return NULL;
        }
        ufo_llm_config_model_name (&self->engines [i], self->models [i], sizeof self->models [i]);
    }
    self->http = ufo_http_new ();
    if (!self->http) {
        ufo_error_set (err, UFO_E_INTERNAL, "cannot start the HTTP client (curl)");
        free (self);
        return NULL;
    }
    self->next_id = 1;
    self->rng = (uint64_t) ufo_time_mono_ms () * 6364136223846793005ULL ^ (uint64_t) getpid ();
    return self;
}

static void
s_req_free (s_req_t *req)
{
    ufo_value_destroy (&req->messages);
    ufo_llm_response_destroy (&req->resp);
    free (req->primary_why);
    if (req->own)
        memset (req->own->api_key, 0, sizeof req->own->api_key);
    free (req->own);
    free (req->own_url);
    free (req->own_model);
    free (req);
}

void
ufo_llm_destroy (ufo_llm_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_llm_t *self = *self_p;
    while (self->reqs) {
        s_req_t *req = self->reqs;
        self->reqs = req->next;
        s_req_free (req);
    }
    ufo_http_destroy (&self->http);
    ufo_cassette_destroy (&self->cassette);
    ufo_prices_destroy (&self->prices);
    free (self);
    *self_p = NULL;
}

void
ufo_llm_set_prices (ufo_llm_t *self, ufo_prices_t **prices_p)
{
    ufo_prices_destroy (&self->prices);
    if (prices_p) {
        self->prices = *prices_p;
        *prices_p = NULL;
    }
}

void
ufo_llm_set_cassette (ufo_llm_t *self, ufo_cassette_t **cassette_p)
{
    ufo_cassette_destroy (&self->cassette);
    if (cassette_p) {
        self->cassette = *cassette_p;
        *cassette_p = NULL;
    }
}

//  --- Validation of what the caller gives us --------------------------------------------

static int
s_check_messages (const ufo_value_t *messages, ufo_error_t *err)
{
    if (ufo_value_type (messages) != UFO_TLIST || ufo_value_size (messages) == 0)
        return ufo_error_set (err, UFO_E_INVALID, "messages must be a non-empty list");
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        const ufo_value_t *content = ufo_value_map_get (m, "content");
        if (ufo_value_type (m) != UFO_TMAP || !ufo_value_map_str (m, "role", NULL))
            return ufo_error_set (err, UFO_E_INVALID, "message %zu needs a string \"role\"", i);
        if (ufo_value_type (content) == UFO_TSTRING)
            continue;
        if (ufo_value_type (content) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_INVALID, "message %zu: \"content\" must be a string or a list of parts", i);
        for (size_t k = 0; k < ufo_value_size (content); k++) {
            const ufo_value_t *part = ufo_value_list_at (content, k);
            const char *type = ufo_value_map_str (part, "type", "");
            if (!strcmp (type, "text") && ufo_value_map_str (part, "text", NULL))
                continue;
            if (!strcmp (type, "image_url") && ufo_value_path (part, "image_url.url"))
                continue;
            return ufo_error_set (err, UFO_E_INVALID, "message %zu part %zu must be a text or image_url part", i, k);
        }
    }
    return 0;
}

//  --- Completion -------------------------------------------------------------------------

static void
s_finish (s_req_t *req, int code, const char *format, ...) __attribute__ ((format (printf, 3, 4)));

static void
s_finish (s_req_t *req, int code, const char *format, ...)
{
    ufo_llm_response_t *r = req->resp;
    r->code = code;
    if (code != UFO_OK && format) {
        ufo_buf_t b = { 0 };
        va_list ap;
        va_start (ap, format);
        char tmp [2048];
        vsnprintf (tmp, sizeof tmp, format, ap);
        va_end (ap);
        ufo_buf_puts (&b, tmp);
        r->error = s_clean (req->owner, req, ufo_buf_detach (&b, NULL));
    }
    r->latency_s = (double) (ufo_time_mono_ms () - req->submitted_ms) / 1000.0;
    ufo_value_destroy (&r->messages);
    r->messages = ufo_cassette_normalize (req->messages);
    req->finished = true;
    req->due_ms = -1;
}

//  The primary engine has failed for good: go to the backup, or end the request.
static void
s_engine_failed (s_req_t *req, int code, const char *why)
{
    ufo_llm_t *self = req->owner;
    if (req->engine == 0 && self->nengines > 1 && !req->own) {
        ufo_warn ("llm: %s failed (%s); using %s", self->engines [0].name, why, self->engines [1].name);
        free (req->primary_why);
        req->primary_why = ufo_strdup (why);
        req->engine = 1;
        req->tries = 0;
        req->resp->used_backup = true;
        s_start (req);
        return;
    }
    if (req->primary_why)
        s_finish (req, code, "%s step %" PRId64 ": %s: %s; before that %s: %s", *req->agent ? req->agent : "LLM",
                  req->step, self->engines [1].name, why, self->engines [0].name, req->primary_why);
    else
        s_finish (req, code, "%s step %" PRId64 ": %s", *req->agent ? req->agent : "LLM", req->step, why);
}

static int64_t
s_backoff_ms (ufo_llm_t *self, const ufo_llm_config_t *cfg, int tries)
{
    double d = (double) cfg->backoff_base_ms;
    for (int i = 1; i < tries && d < cfg->backoff_max_ms; i++)
        d *= 2;
    if (d > cfg->backoff_max_ms)
        d = cfg->backoff_max_ms;
    self->rng ^= self->rng << 13;
    self->rng ^= self->rng >> 7;
    self->rng ^= self->rng << 17;
    double jitter = (double) (self->rng % 1000) / 1000.0;
    return (int64_t) (d / 2 + d / 2 * jitter);
}

//  A retriable failure: try again later, or give up on this engine.
static void
s_retry (s_req_t *req, double retry_after_s, const char *why)
{
    ufo_llm_t *self = req->owner;
    const ufo_llm_config_t *cfg = s_cfg (req);
    if (req->tries > cfg->max_retry) {
        char msg [2600];
        snprintf (msg, sizeof msg, "%s (gave up after %d attempts)", why, req->tries);
        s_engine_failed (req, strstr (why, "timed out") ? UFO_E_TIMEOUT : UFO_E_UNAVAILABLE, msg);
        return;
    }
    int64_t delay;
    if (retry_after_s < 0)
        delay = s_backoff_ms (self, cfg, req->tries);
    else
    if (retry_after_s * 1000.0 >= cfg->backoff_max_ms)
        delay = cfg->backoff_max_ms;        //  also guards the conversion of a huge value
    else
        delay = (int64_t) (retry_after_s * 1000.0);
    ufo_info ("llm: %s attempt %d failed (%s); retrying in %" PRId64 " ms", cfg->name, req->tries, why, delay);
    req->due_ms = ufo_time_mono_ms () + delay;
    if (req->on_retry)
        req->on_retry (req->retry_arg, req->tries, delay, why);
}

//  A reply text arrived (network or cassette). finish is the API's finish_reason ("" if none).
static void
s_on_reply (s_req_t *req, const char *content, int64_t pt, int64_t ct, double latency_s, bool replayed,
            const char *finish)
{
    bool cut_off = !strcmp (finish, "length");
    ufo_llm_t *self = req->owner;
    const ufo_llm_config_t *cfg = s_cfg (req);
    ufo_llm_response_t *r = req->resp;
    r->prompt_tokens += pt;
    r->completion_tokens += ct;
    if (self->prices)
        r->cost += ufo_prices_cost (self->prices, ufo_prices_provider (cfg->api_type),
                                    *cfg->api_model ? cfg->api_model : cfg->api_deployment_id, pt, ct, NULL);
    r->asks++;
    r->from_cassette = replayed;
    snprintf (r->engine, sizeof r->engine, "%s", cfg->name);
    snprintf (r->model, sizeof r->model, "%s", s_model (req));
    free (r->content);
    r->content = s_clean (self, req, ufo_strdup (content));
    if (!replayed && self->cassette && ufo_cassette_mode (self->cassette) == UFO_CASSETTE_RECORD) {
        ufo_error_t err;
        if (ufo_cassette_record (self->cassette, req->agent, req->step, req->own ? req->own_model : self->models [0], req->messages,
                                 r->content, finish, pt, ct, latency_s, &err))
            ufo_warn ("llm: cannot record to %s: %s", ufo_cassette_path (self->cassette), err.message);
    }
    if (req->schema == UFO_SCHEMA_NONE) {
        s_finish (req, UFO_OK, NULL);
        return;
    }
    ufo_error_t perr;
    ufo_error_clear (&perr);
    ufo_value_destroy (&r->decision);
    //  Parse the redacted text: the reason a reply is unusable quotes it, and that reason goes
    //  to the log, into the re-ask prompt (and so the cassette) and into the error.
    r->decision = ufo_llm_extract_json (r->content, strlen (r->content), (ufo_schema_t) req->schema, &perr);
    s_clean (self, req, perr.message);
    s_clean_value (self, req, &r->decision);
    if (r->decision) {
        s_finish (req, UFO_OK, NULL);
        return;
    }
    if (cut_off) {
        size_t n = strlen (perr.message);
        snprintf (perr.message + n, sizeof perr.message - n, "; the reply hit the token limit, answer more briefly");
    }
    if (r->asks > req->json_retry) {
        s_finish (req, perr.code ? perr.code : UFO_E_SYNTAX,
                  "%s step %" PRId64 ": no usable %s response after %d replies: %s", req->agent, req->step,
                  ufo_schema_name ((ufo_schema_t) req->schema), r->asks, perr.message);
        return;
    }
    ufo_info ("llm: %s step %" PRId64 ": unusable reply (%s); asking again", req->agent, req->step, perr.message);
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "assistant");
    ufo_value_map_set_str (m, "content", r->content);
    ufo_value_list_push (req->messages, &m);
    char *fix = ufo_llm_corrective_message ((ufo_schema_t) req->schema, perr.message);
    m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "user");
    ufo_value_map_set_str (m, "content", fix);
    ufo_value_list_push (req->messages, &m);
    free (fix);
    req->tries = 0;
    s_start (req);
}

static void
s_on_http (const ufo_http_result_t *res, void *arg)
{
    s_req_t *req = (s_req_t *) arg;
    ufo_llm_t *self = req->owner;
    const ufo_llm_config_t *cfg = s_cfg (req);
    req->http_id = 0;
    req->resp->http_status = res->status;
    char why [2400];
    if (res->transport) {
        if (res->timed_out)
            snprintf (why, sizeof why, "POST %s timed out after %g s", s_url (req), cfg->timeout_s);
        else
            snprintf (why, sizeof why, "POST %s failed: %s", s_url (req), res->error);
        s_clean (self, req, why);
        s_retry (req, -1, why);
        return;
    }
    if (res->status >= 200 && res->status < 300) {
        ufo_error_t perr;
        ufo_value_t *body = ufo_json_parse (res->body, res->body_len, NULL, &perr);
        char *text = NULL, finish [32] = "", bad [64] = "malformed JSON body";
        int64_t pt = 0, ct = 0;
        if (!body || ufo_llm_wire_reply (cfg, body, &text, &pt, &ct, finish, sizeof finish, bad, sizeof bad)) {
            snprintf (why, sizeof why, "POST %s: HTTP %ld with %s%s", s_url (req), res->status,
                      body ? "" : "a ", bad);
            ufo_value_destroy (&body);
            s_retry (req, -1, why);
            return;
        }
        ufo_value_destroy (&body);
        s_on_reply (req, text, pt, ct, res->elapsed_s, false, finish);
        free (text);
        return;
    }
    char api [1000];
    ufo_llm_wire_explain (cfg, res->status, res->body, res->body_len, api, sizeof api);
    snprintf (why, sizeof why, "POST %s -> HTTP %ld: %s", s_url (req), res->status, api);
    s_clean (self, req, why);
    if (res->status == 429 || res->status == 408 || res->status >= 500)
        s_retry (req, res->retry_after_s, why);
    else {
        strncat (why, " (not retried)", sizeof why - strlen (why) - 1);
        int code = res->status == 401 || res->status == 403 ? UFO_E_DENIED : UFO_E_INVALID;
        s_engine_failed (req, code, why);
    }
}

//  Starts the next attempt of req now.
static void
s_start (s_req_t *req)
{
    ufo_llm_t *self = req->owner;
    req->due_ms = -1;
    if (self->cassette && ufo_cassette_mode (self->cassette) == UFO_CASSETTE_REPLAY) {
        char *content = NULL, *why = NULL;
        char finish [UFO_CASSETTE_FINISH_MAX] = "";
        int64_t pt = 0, ct = 0;
        double latency = 0;
        if (ufo_cassette_lookup (self->cassette, req->agent, req->step, req->own ? req->own_model : self->models [0], req->messages,
                                 &content, finish, &pt, &ct, &latency, &why) == 0) {
            s_on_reply (req, content, pt, ct, latency, true, finish);
            free (content);
        }
        else {
            s_finish (req, UFO_E_NOT_FOUND, "%s", why ? why : "replay miss");
            free (why);
        }
        return;
    }
    const ufo_llm_config_t *cfg = s_cfg (req);
    req->tries++;
    req->resp->attempts++;
    size_t len = 0;
    char *text = ufo_llm_wire_body (cfg, req->messages, cfg->json_mode && req->schema != UFO_SCHEMA_NONE, &len);
    ufo_llm_headers_t headers;
    ufo_llm_wire_headers (cfg, req->agent, &headers);
    ufo_error_t err;
    long timeout_ms = (long) (cfg->timeout_s * 1000.0);
    req->http_id = ufo_http_post (self->http, s_url (req), headers.list, text, len,
                                  timeout_ms > 0 ? timeout_ms : 1, 0, s_on_http, req, &err);
    ufo_llm_wire_headers_wipe (&headers);
    free (text);
    if (req->http_id < 0) {
        req->http_id = 0;
        s_finish (req, UFO_E_INTERNAL, "%s: %s", cfg->name, err.message);
    }
}

//  --- Public request API ---------------------------------------------------------------

int64_t
ufo_llm_submit (ufo_llm_t *self, const ufo_value_t *messages, const ufo_llm_opts_t *opts,
                ufo_llm_done_fn *done, void *arg, ufo_error_t *err)
{
    assert (self && done);
    if (s_check_messages (messages, err))
        return -1;
    char own_url [1200];
    const ufo_llm_config_t *own = opts ? opts->engine : NULL;
    if (own && !ufo_llm_config_ok (own))
        return ufo_error_set (err, UFO_E_INVALID, "%s: no usable LLM endpoint (API_BASE%s)", own->name,
                              !strcmp (own->api_type, "aoai") ? ", API_DEPLOYMENT_ID" : "");
    if (own && ufo_llm_config_url (own, own_url, sizeof own_url))
        return ufo_error_set (err, UFO_E_TOO_LARGE, "%s: API_BASE is too long", own->name);
    s_req_t *req = ufo_calloc (1, sizeof (s_req_t));
    if (own) {
        req->own = ufo_malloc (sizeof *req->own);
        *req->own = *own;
        req->own_url = ufo_strdup (own_url);
        char model [192];
        ufo_llm_config_model_name (own, model, sizeof model);
        req->own_model = ufo_strdup (model);
    }
    req->id = self->next_id++;
    req->owner = self;
    req->messages = ufo_value_dup (messages);
    req->done = done;
    req->arg = arg;
    req->json_retry = 3;
    req->due_ms = -1;
    if (opts) {
        //  The agent name goes into an HTTP header: keep only safe characters.
        size_t n = 0;
        for (const char *c = opts->agent; c && *c && n + 1 < sizeof req->agent; c++)
            if (isalnum ((unsigned char) *c) || *c == '_' || *c == '-' || *c == '.')
                req->agent [n++] = *c;
        req->agent [n] = 0;
        req->step = opts->step;
        req->schema = opts->schema;
        req->json_retry = opts->json_retry >= 0 ? opts->json_retry : 0;
        req->on_retry = opts->on_retry;
        req->retry_arg = opts->retry_arg;
    }
    req->submitted_ms = ufo_time_mono_ms ();
    req->resp = ufo_calloc (1, sizeof (ufo_llm_response_t));
    req->resp->id = req->id;
    req->next = self->reqs;
    self->reqs = req;
    s_start (req);
    return req->id;
}

int
ufo_llm_cancel (ufo_llm_t *self, int64_t id)
{
    for (s_req_t **pp = &self->reqs; *pp; pp = &(*pp)->next) {
        s_req_t *req = *pp;
        if (req->id != id)
            continue;
        *pp = req->next;
        if (req->http_id)
            ufo_http_cancel (self->http, req->http_id);
        s_req_free (req);
        return 0;
    }
    return -1;
}

bool
ufo_llm_has_backup (const ufo_llm_t *self)
{
    return self->nengines > 1;
}

size_t
ufo_llm_pending (const ufo_llm_t *self)
{
    size_t n = 0;
    for (s_req_t *req = self->reqs; req; req = req->next)
        n++;
    return n;
}

size_t
ufo_llm_fds (const ufo_llm_t *self, ufo_llm_fd_t *fds, size_t max)
{
    //  ufo_llm_fd_t and ufo_http_fd_t have the same layout and bit values.
    return ufo_http_fds (self->http, (ufo_http_fd_t *) fds, max);
}

int
ufo_llm_timeout (const ufo_llm_t *self)
{
    int64_t best = ufo_http_timeout (self->http);
    int64_t now = ufo_time_mono_ms ();
    for (s_req_t *req = self->reqs; req; req = req->next) {
        int64_t t;
        if (req->finished)
            t = 0;
        else
        if (req->due_ms >= 0)
            t = req->due_ms > now ? req->due_ms - now : 0;
        else
            continue;
        if (best < 0 || t < best)
            best = t;
    }
    return best > INT_MAX ? INT_MAX : (int) best;
}

int
ufo_llm_process (ufo_llm_t *self, const ufo_llm_fd_t *fds, size_t n)
{
    assert (self);
    ufo_http_process (self->http, (const ufo_http_fd_t *) fds, n);
    int64_t now = ufo_time_mono_ms ();
    for (s_req_t *req = self->reqs; req; req = req->next)
        if (!req->finished && req->due_ms >= 0 && req->due_ms <= now)
            s_start (req);
    int calls = 0;
    for (;;) {
        s_req_t **pp = &self->reqs;
        while (*pp && !(*pp)->finished)
            pp = &(*pp)->next;
        if (!*pp)
            break;
        s_req_t *req = *pp;
        *pp = req->next;
        ufo_llm_response_t *resp = req->resp;
        req->resp = NULL;
        req->done (&resp, req->arg);
        ufo_llm_response_destroy (&resp);
        s_req_free (req);
        calls++;
    }
    return calls;
}

int
ufo_llm_poll (ufo_llm_t *self, int timeout_ms)
{
    ufo_llm_fd_t fds [S_MAX_FDS];
    size_t n = ufo_llm_fds (self, fds, S_MAX_FDS);
    if (n > S_MAX_FDS)
        n = S_MAX_FDS;
    struct pollfd pfd [S_MAX_FDS];
    for (size_t i = 0; i < n; i++) {
        pfd [i].fd = fds [i].fd;
        pfd [i].events = (short) (((fds [i].events & UFO_LLM_IN) ? POLLIN : 0)
                                | ((fds [i].events & UFO_LLM_OUT) ? POLLOUT : 0));
        pfd [i].revents = 0;
    }
    int t = ufo_llm_timeout (self);
    if (t < 0 || (timeout_ms >= 0 && timeout_ms < t))
        t = timeout_ms;
    int rc = poll (pfd, (nfds_t) n, t);
    for (size_t i = 0; i < n; i++) {
        fds [i].revents = 0;
        if (rc > 0) {
            if (pfd [i].revents & (POLLIN | POLLHUP))
                fds [i].revents |= UFO_LLM_IN;
            if (pfd [i].revents & POLLOUT)
                fds [i].revents |= UFO_LLM_OUT;
            if (pfd [i].revents & (POLLERR | POLLNVAL))
                fds [i].revents |= UFO_LLM_ERR;
        }
    }
    return ufo_llm_process (self, fds, n);
}

typedef struct {
    bool done;
    ufo_llm_response_t *resp;
} s_wait_t;

static void
s_wait_done (ufo_llm_response_t **response_p, void *arg)
{
    s_wait_t *w = (s_wait_t *) arg;
    w->resp = *response_p;
    *response_p = NULL;
    w->done = true;
}

ufo_llm_response_t *
ufo_llm_complete (ufo_llm_t *self, const ufo_value_t *messages, const ufo_llm_opts_t *opts,
                  ufo_error_t *err)
{
    s_wait_t w = { false, NULL };
    if (ufo_llm_submit (self, messages, opts, s_wait_done, &w, err) < 0)
        return NULL;
    //  Bounded: every attempt has a timeout and the number of attempts and re-asks is finite.
    while (!w.done)
        ufo_llm_poll (self, 1000);
    return w.resp;
}
