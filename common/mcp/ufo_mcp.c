/*  ufo_mcp.c - a client of one MCP server over stdio or Streamable HTTP (see ufo_mcp.h).
    JSON-RPC and the lifecycle are here; the two transports are in ufo_mcp_io.c. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_mcp.h"
#include "ufo_value.h"
#include "ufo_mcp_int.h"
#include "ufo_mcp_spec.h"

const char *const ufo_mcp_versions [] = { "2025-06-18", "2025-03-26", "2024-11-05", NULL };


static void s_start (ufo_mcp_t *self);

int64_t
ufo_mcp_now_ (void)
{
    return ufo_time_mono_ms ();
}

//  A printable excerpt of text (control characters as '?').
void
ufo_mcp_excerpt_ (char *out, size_t size, const char *text, size_t len)
{
    size_t n = len < size - 1 ? len : size - 1;
    if (n > UFO_MCP_EXCERPT)
        n = UFO_MCP_EXCERPT;
    for (size_t i = 0; i < n; i++)
        out [i] = (unsigned char) text [i] < 32 ? '?' : text [i];
    out [n] = 0;
}

//  --- requests ---------------------------------------------------------------------------

ufo_mcp_req_t *
ufo_mcp_req_take_ (ufo_mcp_t *self, int64_t id)
{
    for (ufo_mcp_req_t **p = &self->reqs; *p; p = &(*p)->next)
        if ((*p)->id == id) {
            ufo_mcp_req_t *r = *p;
            *p = r->next;
            r->next = NULL;
            return r;
        }
    return NULL;
}

ufo_mcp_req_t *
ufo_mcp_req_find_ (ufo_mcp_t *self, int64_t id)
{
    for (ufo_mcp_req_t *r = self->reqs; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

static void
s_req_free (ufo_mcp_t *self, ufo_mcp_req_t *r)
{
    if (r->xfer > 0 && self->client)
        ufo_http_cancel (self->client, r->xfer);
    free (r);
}

//  Completes r (already taken out of the list) with result or err, then frees it.
static void
s_complete (ufo_mcp_t *self, ufo_mcp_req_t *r, const ufo_value_t *result, const ufo_error_t *err)
{
    if (r->xfer > 0 && self->client)
        ufo_http_cancel (self->client, r->xfer);
    r->xfer = 0;
    if (r->reply)
        r->reply (r->arg, result, err);
    free (r);
}

void
ufo_mcp_req_fail_ (ufo_mcp_t *self, ufo_mcp_req_t *r, int code, const char *format, ...)
{
    ufo_error_t err = { .code = code };
    va_list ap;
    va_start (ap, format);
    vsnprintf (err.message, sizeof err.message, format, ap);
    va_end (ap);
    s_complete (self, r, NULL, &err);
}

//  Sends one message (not owned). Returns 0, or -1 with err.
static int
s_send (ufo_mcp_t *self, const ufo_value_t *msg, ufo_mcp_req_t *req, ufo_error_t *err)
{
    if (self->http)
        return ufo_mcp_http_post_ (self, msg, req, err);
    if (self->in_fd < 0)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "MCP server %s is not running", self->name);
    if (self->outq.len - self->outq_off > UFO_MCP_MAX_OUTQ)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "MCP server %s does not read its input (%zu bytes queued)",
                              self->name, self->outq.len - self->outq_off);
    ufo_json_append (&self->outq, msg, UFO_JSON_COMPACT);
    ufo_buf_putc (&self->outq, '\n');
    return 0;
}

static void
s_notify (ufo_mcp_t *self, const char *method, ufo_value_t **params_p)
{
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "jsonrpc", "2.0");
    ufo_value_map_set_str (msg, "method", method);
    if (params_p && *params_p)
        ufo_value_map_set (msg, "params", params_p);
    ufo_error_t err;
    if (s_send (self, msg, NULL, &err) < 0)
        ufo_warn ("MCP %s: cannot send %s: %s", self->name, method, err.message);
    ufo_value_destroy (&msg);
}

//  Sends a request whatever the state (the lifecycle's own requests go through here).
static int64_t
s_request (ufo_mcp_t *self, const char *method, ufo_value_t **params_p, int64_t timeout_ms,
           ufo_mcp_progress_fn *progress, ufo_mcp_reply_fn *reply, void *arg, ufo_error_t *err)
{
    ufo_mcp_req_t *r = ufo_calloc (1, sizeof *r);
    r->owner = self;
    r->id = self->next_id++;
    snprintf (r->method, sizeof r->method, "%s", method);
    r->timeout_ms = timeout_ms > 0 ? timeout_ms : self->timeout_ms;
    r->deadline_ms = ufo_time_mono_ms () + r->timeout_ms;
    r->progress = progress;
    r->reply = reply;
    r->arg = arg;
    ufo_value_t *params = params_p && *params_p ? *params_p : ufo_value_new_map ();
    if (params_p)
        *params_p = NULL;
    if (progress && ufo_value_type (params) == UFO_TMAP) {
        ufo_value_t *meta = ufo_value_map_get (params, "_meta");
        if (ufo_value_type (meta) != UFO_TMAP)
            meta = ufo_value_map_set (params, "_meta", &(ufo_value_t *) { ufo_value_new_map () });
        ufo_value_map_set_int (meta, "progressToken", r->id);
    }
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "jsonrpc", "2.0");
    ufo_value_map_set_int (msg, "id", r->id);
    ufo_value_map_set_str (msg, "method", method);
    ufo_value_map_set (msg, "params", &params);
    //  in the list before sending: an HTTP reply may complete inside s_send
    r->next = self->reqs;
    self->reqs = r;
    int64_t id = r->id;
    int rc = s_send (self, msg, r, err);
    ufo_value_destroy (&msg);
    if (rc < 0) {
        ufo_mcp_req_t *t = ufo_mcp_req_take_ (self, id);
        if (t)
            s_req_free (self, t);
        return -1;
    }
    return id;
}

int64_t
ufo_mcp_request (ufo_mcp_t *self, const char *method, ufo_value_t **params_p, int64_t timeout_ms,
                 ufo_mcp_progress_fn *progress, ufo_mcp_reply_fn *reply, void *arg, ufo_error_t *err)
{
    assert (self && method);
    if (self->state != UFO_MCP_READY) {
        if (params_p)
            ufo_value_destroy (params_p);
        if (self->state == UFO_MCP_FAILED)
            return ufo_error_set (err, UFO_E_UNAVAILABLE, "MCP server %s is unavailable: %s", self->name,
                                  self->error);
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "MCP server %s is still starting", self->name);
    }
    return s_request (self, method, params_p, timeout_ms, progress, reply, arg, err);
}

int64_t
ufo_mcp_call_tool (ufo_mcp_t *self, const char *name, const ufo_value_t *arguments, int64_t timeout_ms,
                   ufo_mcp_progress_fn *progress, ufo_mcp_reply_fn *reply, void *arg, ufo_error_t *err)
{
    ufo_value_t *params = ufo_value_new_map ();
    ufo_value_map_set_str (params, "name", name);
    ufo_value_map_set (params, "arguments", &(ufo_value_t *) {
        ufo_value_type (arguments) == UFO_TMAP ? ufo_value_dup (arguments) : ufo_value_new_map () });
    return ufo_mcp_request (self, "tools/call", &params, timeout_ms, progress, reply, arg, err);
}

int
ufo_mcp_cancel (ufo_mcp_t *self, int64_t id, const char *reason)
{
    ufo_mcp_req_t *r = ufo_mcp_req_take_ (self, id);
    if (!r)
        return -1;
    ufo_value_t *params = ufo_value_new_map ();
    ufo_value_map_set_int (params, "requestId", id);
    ufo_value_map_set_str (params, "reason", reason ? reason : "cancelled");
    s_req_free (self, r);
    s_notify (self, "notifications/cancelled", &params);
    return 0;
}

//  --- lifecycle ---------------------------------------------------------------------------

//  The server is dead or unusable: handled by ufo_mcp_process once the transport's
//  callbacks have returned (the HTTP client must not be destroyed inside its own callback).
static void
s_dead (ufo_mcp_t *self, const char *why)
{
    if (!self->dead_pending) {
        self->dead_pending = true;
        snprintf (self->dead_why, sizeof self->dead_why, "%s", why);
    }
}

//  The transport died or the server misbehaved past recovery: fail everything in flight,
//  restart once, else FAILED.
static void
s_die (ufo_mcp_t *self, const char *why)
{
    ufo_mcp_req_t *list = self->reqs;
    self->reqs = NULL;
    ufo_mcp_stop_transport_ (self, 0);
    self->dead_pending = false;
    char reason [700];
    snprintf (reason, sizeof reason, "MCP server %s %s", self->name, why);
    if (self->restarts < 1 && self->state != UFO_MCP_FAILED) {
        self->restarts++;
        ufo_warn ("%s; restarting it (once)", reason);
        snprintf (self->error, sizeof self->error, "%s; it was restarted", reason);
        s_start (self);
    }
    else {
        ufo_warn ("%s; giving up on it", reason);
        snprintf (self->error, sizeof self->error, "%s", reason);
        self->state = UFO_MCP_FAILED;
    }
    while (list) {
        ufo_mcp_req_t *r = list;
        list = r->next;
        r->xfer = 0;                //  the transfers were aborted with the transport
        if (strcmp (r->method, "initialize") && strcmp (r->method, "tools/list"))
            ufo_mcp_req_fail_ (self, r, UFO_E_UNAVAILABLE, "%s", reason);
        else
            free (r);
    }
}

static void s_list_next (ufo_mcp_t *self, const char *cursor);

static void
s_on_list (void *arg, const ufo_value_t *result, const ufo_error_t *err)
{
    ufo_mcp_t *self = arg;
    if (err) {
        if (err->code == UFO_E_TIMEOUT)
            s_dead (self, "did not answer tools/list in time");
        else {
            char why [400];
            snprintf (why, sizeof why, "failed tools/list: %s", err->message);
            self->state = UFO_MCP_FAILED;       //  an error answer: restarting will not help
            snprintf (self->error, sizeof self->error, "MCP server %s %s", self->name, why);
            ufo_warn ("%s", self->error);
        }
        return;
    }
    const ufo_value_t *tools = ufo_value_map_get (result, "tools");
    if (ufo_value_type (tools) != UFO_TLIST) {
        self->state = UFO_MCP_FAILED;
        snprintf (self->error, sizeof self->error, "MCP server %s: tools/list result has no \"tools\" list",
                  self->name);
        ufo_warn ("%s", self->error);
        return;
    }
    for (size_t i = 0; i < ufo_value_size (tools); i++) {
        const ufo_value_t *t = ufo_value_list_at (tools, i);
        const char *name = ufo_value_map_str (t, "name", NULL);
        if (ufo_value_type (t) != UFO_TMAP || !name || !*name || strlen (name) > 128) {
            ufo_warn ("MCP %s: tools/list entry %zu is not a tool with a name; ignored", self->name, i);
            continue;
        }
        ufo_value_list_push (self->listing, &(ufo_value_t *) { ufo_value_dup (t) });
    }
    self->pages++;
    const char *cursor = ufo_value_map_str (result, "nextCursor", NULL);
    if (cursor && *cursor) {
        if (self->pages >= UFO_MCP_MAX_PAGES) {
            self->state = UFO_MCP_FAILED;
            snprintf (self->error, sizeof self->error, "MCP server %s: tools/list has more than %d pages",
                      self->name, UFO_MCP_MAX_PAGES);
            ufo_warn ("%s", self->error);
            return;
        }
        s_list_next (self, cursor);
        return;
    }
    ufo_value_destroy (&self->tools);
    self->tools = self->listing;
    self->listing = NULL;
    self->listed_pages = self->pages;
    self->state = UFO_MCP_READY;
    ufo_info ("MCP %s: ready, protocol %s, %zu tools in %d page(s)", self->name, self->protocol,
              ufo_value_size (self->tools), self->pages);
}

static void
s_list_next (ufo_mcp_t *self, const char *cursor)
{
    if (!cursor) {
        ufo_value_destroy (&self->listing);
        self->listing = ufo_value_new_list ();
        self->pages = 0;
    }
    ufo_value_t *params = ufo_value_new_map ();
    if (cursor)
        ufo_value_map_set_str (params, "cursor", cursor);
    ufo_error_t err;
    if (s_request (self, "tools/list", &params, 0, NULL, s_on_list, self, &err) < 0)
        s_dead (self, err.message);
}

static void
s_on_init (void *arg, const ufo_value_t *result, const ufo_error_t *err)
{
    ufo_mcp_t *self = arg;
    if (err) {
        char why [400];
        snprintf (why, sizeof why, "failed initialize: %s", err->message);
        s_dead (self, why);
        return;
    }
    const char *version = ufo_value_map_str (result, "protocolVersion", "");
    bool known = false;
    for (size_t i = 0; ufo_mcp_versions [i]; i++)
        known = known || !strcmp (ufo_mcp_versions [i], version);
    if (!known) {
        self->state = UFO_MCP_FAILED;       //  the transport is stopped by ufo_mcp_process
        snprintf (self->error, sizeof self->error,
                  "MCP server %s: protocol version \"%.40s\" is not one we speak (%s, %s, %s)", self->name,
                  version, ufo_mcp_versions [0], ufo_mcp_versions [1], ufo_mcp_versions [2]);
        ufo_warn ("%s", self->error);
        return;
    }
    snprintf (self->protocol, sizeof self->protocol, "%s", version);
    s_notify (self, "notifications/initialized", NULL);
    if (ufo_value_map_get (ufo_value_map_get (result, "capabilities"), "tools") == NULL) {
        ufo_value_destroy (&self->tools);
        self->tools = ufo_value_new_list ();
        self->state = UFO_MCP_READY;
        ufo_info ("MCP %s: ready, protocol %s, no tools capability", self->name, self->protocol);
        return;
    }
    s_list_next (self, NULL);
}

//  --- incoming messages ---------------------------------------------------------------------

static void
s_answer (ufo_mcp_t *self, const ufo_value_t *id, int code, const char *message)
{
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "jsonrpc", "2.0");
    ufo_value_map_set_copy (msg, "id", id);
    if (message) {
        ufo_value_t *e = ufo_value_new_map ();
        ufo_value_map_set_int (e, "code", code);
        ufo_value_map_set_str (e, "message", message);
        ufo_value_map_set (msg, "error", &e);
    }
    else
        ufo_value_map_set (msg, "result", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_error_t err;
    if (s_send (self, msg, NULL, &err) < 0)
        ufo_warn ("MCP %s: cannot answer: %s", self->name, err.message);
    ufo_value_destroy (&msg);
}

static void
s_garbage (ufo_mcp_t *self, const char *what, const char *text, size_t len)
{
    char ex [UFO_MCP_EXCERPT + 8];
    ufo_mcp_excerpt_ (ex, sizeof ex, text, len);
    snprintf (self->garbage, sizeof self->garbage, "%s", ex);
    ufo_warn ("MCP %s: %s: '%s'", self->name, what, ex);
    //  Before the server is ready, anything that is not JSON-RPC ends the start-up at once.
    if (self->state == UFO_MCP_STARTING && !self->dead_pending) {
        char why [400];
        snprintf (why, sizeof why, "%s during start-up: '%s'", what, ex);
        self->dead_pending = true;
        snprintf (self->dead_why, sizeof self->dead_why, "%s", why);
    }
}

static void
s_on_progress (ufo_mcp_t *self, const ufo_value_t *params)
{
    const ufo_value_t *token = ufo_value_map_get (params, "progressToken");
    if (ufo_value_type (token) != UFO_TINT)
        return;
    ufo_mcp_req_t *r = ufo_mcp_req_find_ (self, ufo_value_int (token));
    if (!r || !r->progress)
        return;
    const ufo_value_t *p = ufo_value_map_get (params, "progress");
    const ufo_value_t *t = ufo_value_map_get (params, "total");
    double progress = ufo_value_type (p) == UFO_TINT || ufo_value_type (p) == UFO_TFLOAT
                    ? ufo_value_float (p) : 0;
    double total = ufo_value_type (t) == UFO_TINT || ufo_value_type (t) == UFO_TFLOAT
                 ? ufo_value_float (t) : -1;
    r->progress (r->arg, progress, total, ufo_value_map_str (params, "message", NULL));
}

static void
s_on_log (ufo_mcp_t *self, const ufo_value_t *params)
{
    const char *level = ufo_value_map_str (params, "level", "info");
    const ufo_value_t *data = ufo_value_map_get (params, "data");
    char *json = ufo_value_type (data) == UFO_TSTRING ? ufo_strdup (ufo_value_str (data))
                                                      : ufo_json_dump (data, UFO_JSON_COMPACT, NULL);
    ufo_log_level_t lv = !strcmp (level, "debug") ? UFO_LOG_DEBUG
                       : (!strcmp (level, "info") || !strcmp (level, "notice")) ? UFO_LOG_INFO
                       : !strcmp (level, "warning") ? UFO_LOG_WARN : UFO_LOG_ERROR;
    ufo_log (lv, "MCP %s log%s%s: %.2000s", self->name, ufo_value_map_has (params, "logger") ? " " : "",
             ufo_value_map_str (params, "logger", ""), json ? json : "");
    free (json);
}

static void
s_on_message (ufo_mcp_t *self, const ufo_value_t *msg, const char *text, size_t len)
{
    if (ufo_value_type (msg) != UFO_TMAP || strcmp (ufo_value_map_str (msg, "jsonrpc", ""), "2.0")) {
        //  invalid JSON-RPC; if it names a request of ours, that request fails with it
        const ufo_value_t *id = ufo_value_map_get (msg, "id");
        ufo_mcp_req_t *r = ufo_value_type (id) == UFO_TINT ? ufo_mcp_req_take_ (self, ufo_value_int (id)) : NULL;
        char ex [UFO_MCP_EXCERPT + 8];
        ufo_mcp_excerpt_ (ex, sizeof ex, text, len);
        if (r)
            ufo_mcp_req_fail_ (self, r, UFO_E_SYNTAX, "MCP server %s sent an invalid JSON-RPC response: '%s'",
                        self->name, ex);
        else
            s_garbage (self, "invalid JSON-RPC message", text, len);
        return;
    }
    const char *method = ufo_value_map_str (msg, "method", NULL);
    const ufo_value_t *id = ufo_value_map_get (msg, "id");
    if (method && id) {
        if (!strcmp (method, "ping"))
            s_answer (self, id, 0, NULL);
        else
            s_answer (self, id, -32601, "method not supported by this client");
        return;
    }
    if (method) {
        const ufo_value_t *params = ufo_value_map_get (msg, "params");
        if (!strcmp (method, "notifications/progress"))
            s_on_progress (self, params);
        else
        if (!strcmp (method, "notifications/message"))
            s_on_log (self, params);
        else
        if (!strcmp (method, "notifications/tools/list_changed") && self->state == UFO_MCP_READY) {
            ufo_info ("MCP %s: the tool list changed; listing again", self->name);
            s_list_next (self, NULL);
        }
        return;
    }
    const ufo_value_t *result = ufo_value_map_get (msg, "result");
    const ufo_value_t *error = ufo_value_map_get (msg, "error");
    ufo_mcp_req_t *r = ufo_value_type (id) == UFO_TINT ? ufo_mcp_req_take_ (self, ufo_value_int (id)) : NULL;
    if (!r) {
        ufo_debug ("MCP %s: a response to no request of ours; ignored", self->name);
        return;
    }
    if (ufo_value_type (error) == UFO_TMAP)
        ufo_mcp_req_fail_ (self, r, UFO_E_INVALID, "MCP server %s: %s failed (%" PRId64 "): %.180s", self->name,
                    r->method, ufo_value_map_int (error, "code", 0),
                    ufo_value_map_str (error, "message", "no message"));
    else
    if (ufo_value_type (result) == UFO_TMAP)
        s_complete (self, r, result, NULL);
    else {
        char ex [UFO_MCP_EXCERPT + 8];
        ufo_mcp_excerpt_ (ex, sizeof ex, text, len);
        ufo_mcp_req_fail_ (self, r, UFO_E_SYNTAX,
                    "MCP server %s sent an invalid JSON-RPC response to %s (no result object): '%s'",
                    self->name, r->method, ex);
    }
}

//  One JSON text from the server (a line, or an SSE event's data, or an HTTP body).
void
ufo_mcp_on_text_ (ufo_mcp_t *self, const char *text, size_t len)
{
    while (len && isspace ((unsigned char) *text))
        text++, len--;
    if (!len)
        return;
    ufo_json_limits_t limits = { .max_depth = 64 };
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse (text, len, &limits, &err);
    if (!v) {
        s_garbage (self, "output that is not JSON", text, len);
        return;
    }
    unsigned gen = self->gen;
    if (ufo_value_type (v) == UFO_TLIST)
        for (size_t i = 0; i < ufo_value_size (v) && gen == self->gen; i++)
            s_on_message (self, ufo_value_list_at (v, i), text, len);
    else
        s_on_message (self, v, text, len);
    ufo_value_destroy (&v);
}

//  --- the client ------------------------------------------------------------------------------

static void
s_start (ufo_mcp_t *self)
{
    self->gen++;
    self->state = UFO_MCP_STARTING;
    self->protocol [0] = 0;
    self->session [0] = 0;
    self->garbage [0] = 0;
    self->dead_pending = false;
    ufo_error_t err;
    if (self->http) {
        self->client = ufo_http_new ();
        if (!self->client) {
            self->state = UFO_MCP_FAILED;
            snprintf (self->error, sizeof self->error, "MCP server %s: HTTP client unavailable", self->name);
            return;
        }
    }
    else
    if (ufo_mcp_spawn_ (self, &err) < 0) {
        self->state = UFO_MCP_FAILED;
        snprintf (self->error, sizeof self->error, "%s", err.message);
        ufo_warn ("%s", self->error);
        return;
    }
    ufo_value_t *params = ufo_value_new_map ();
    ufo_value_map_set_str (params, "protocolVersion", ufo_mcp_versions [0]);
    ufo_value_map_set (params, "capabilities", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_t *info = ufo_value_new_map ();
    ufo_value_map_set_str (info, "name", "ufobus");
    ufo_value_map_set_str (info, "version", "1.0");
    ufo_value_map_set (params, "clientInfo", &info);
    if (s_request (self, "initialize", &params, 0, NULL, s_on_init, self, &err) < 0) {
        self->dead_pending = true;
        snprintf (self->dead_why, sizeof self->dead_why, "cannot be initialized: %s", err.message);
    }
}

ufo_mcp_t *
ufo_mcp_new (const ufo_value_t *spec, const ufo_mcp_options_t *options, ufo_error_t *err)
{
    if (ufo_mcp_spec_check (spec, "MCP server", err) < 0)
        return NULL;
    //  a write to a server that just died must be an error, not the end of this process
    struct sigaction sa;
    if (sigaction (SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
        signal (SIGPIPE, SIG_IGN);
    ufo_mcp_t *self = ufo_calloc (1, sizeof *self);
    self->spec = ufo_value_dup (spec);
    snprintf (self->name, sizeof self->name, "%s", ufo_value_map_str (spec, "name", ""));
    self->http = !strcmp (ufo_value_map_str (spec, "type", "stdio"), "http");
    self->timeout_ms = options && options->timeout_ms > 0 ? options->timeout_ms : UFO_MCP_DEFAULT_TIMEOUT_MS;
    self->max_message = options && options->max_message > 0 ? options->max_message : UFO_MCP_DEFAULT_MAX;
    self->next_id = 1;
    self->in_fd = self->out_fd = self->err_fd = -1;
    self->tools = ufo_value_new_list ();
    ufo_buf_init (&self->outq);
    ufo_buf_init (&self->line);
    ufo_buf_init (&self->errline);
    s_start (self);
    if (self->state == UFO_MCP_FAILED) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "%s", self->error);
        ufo_mcp_destroy (&self);
        return NULL;
    }
    return self;
}

void
ufo_mcp_destroy (ufo_mcp_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_mcp_t *self = *self_p;
    if (!self->http && self->in_fd >= 0)
        ufo_mcp_flush_ (self);
    while (self->reqs) {
        ufo_mcp_req_t *r = self->reqs;
        self->reqs = r->next;
        s_req_free (self, r);
    }
    ufo_mcp_stop_transport_ (self, 200);
    ufo_value_destroy (&self->spec);
    ufo_value_destroy (&self->tools);
    ufo_value_destroy (&self->listing);
    ufo_buf_free (&self->outq);
    ufo_buf_free (&self->line);
    ufo_buf_free (&self->errline);
    free (self);
    *self_p = NULL;
}

const char *
ufo_mcp_name (const ufo_mcp_t *self)
{
    return self->name;
}

ufo_mcp_state_t
ufo_mcp_state (const ufo_mcp_t *self)
{
    return self->state;
}

const char *
ufo_mcp_error (const ufo_mcp_t *self)
{
    return self->error;
}

int
ufo_mcp_restarts (const ufo_mcp_t *self)
{
    return self->restarts;
}

const char *
ufo_mcp_protocol (const ufo_mcp_t *self)
{
    return self->protocol;
}

const ufo_value_t *
ufo_mcp_tools (const ufo_mcp_t *self)
{
    return self->tools;
}

int
ufo_mcp_list_pages (const ufo_mcp_t *self)
{
    return self->listed_pages;
}

size_t
ufo_mcp_fds (const ufo_mcp_t *self, ufo_http_fd_t *fds, size_t max)
{
    if (self->http)
        return self->client ? ufo_http_fds (self->client, fds, max) : 0;
    size_t n = 0;
    const int list [3] = { self->out_fd, self->err_fd, self->in_fd };
    for (int i = 0; i < 3; i++) {
        if (list [i] < 0)
            continue;
        if (i == 2 && self->outq_off >= self->outq.len)
            continue;
        if (n < max) {
            fds [n].fd = list [i];
            fds [n].events = i == 2 ? UFO_HTTP_OUT : UFO_HTTP_IN;
            fds [n].revents = 0;
        }
        n++;
    }
    return n;
}

int
ufo_mcp_timeout (const ufo_mcp_t *self)
{
    if (self->dead_pending)
        return 0;
    int64_t now = ufo_time_mono_ms ();
    int64_t best = -1;
    for (ufo_mcp_req_t *r = self->reqs; r; r = r->next) {
        int64_t left = r->deadline_ms - now;
        if (left < 0)
            left = 0;
        if (best < 0 || left < best)
            best = left;
    }
    if (self->http && self->client) {
        int h = ufo_http_timeout (self->client);
        if (h >= 0 && (best < 0 || h < best))
            best = h;
    }
    if (!self->http && self->outq_off < self->outq.len && (best < 0 || best > 50))
        best = 50;
    return best < 0 ? -1 : best > INT_MAX ? INT_MAX : (int) best;
}

void
ufo_mcp_process (ufo_mcp_t *self, const ufo_http_fd_t *fds, size_t n)
{
    if (self->http) {
        if (self->client)
            ufo_http_process (self->client, fds, n);
    }
    else
    if (self->out_fd >= 0 || self->err_fd >= 0)
        ufo_mcp_stdio_io_ (self);
    if (self->dead_pending) {
        char why [512];
        snprintf (why, sizeof why, "%s", self->dead_why);
        s_die (self, why);
        return;
    }
    if (self->state == UFO_MCP_FAILED && (self->client || self->in_fd >= 0 || self->out_fd >= 0)) {
        ufo_mcp_stop_transport_ (self, 0);
        return;
    }
    //  deadlines
    int64_t now = ufo_time_mono_ms ();
    for (bool again = true; again; ) {
        again = false;
        for (ufo_mcp_req_t *r = self->reqs; r; r = r->next) {
            if (r->deadline_ms > now)
                continue;
            ufo_mcp_req_t *t = ufo_mcp_req_take_ (self, r->id);
            if (!strcmp (t->method, "initialize") || !strcmp (t->method, "tools/list")) {
                char why [400];
                snprintf (why, sizeof why, "did not answer %s within %.1f s%s%s%s", t->method,
                          (double) t->timeout_ms / 1000.0, self->garbage [0] ? " (it wrote: '" : "",
                          self->garbage, self->garbage [0] ? "')" : "");
                s_req_free (self, t);
                s_die (self, why);
                return;
            }
            ufo_value_t *params = ufo_value_new_map ();
            ufo_value_map_set_int (params, "requestId", t->id);
            ufo_value_map_set_str (params, "reason", "timed out");
            s_notify (self, "notifications/cancelled", &params);
            char extra [UFO_MCP_EXCERPT + 40] = "";
            if (self->garbage [0])
                snprintf (extra, sizeof extra, " (it wrote: '%s')", self->garbage);
            ufo_mcp_req_fail_ (self, t, UFO_E_TIMEOUT, "MCP server %s: %s timed out after %.1f s and was cancelled%s",
                        self->name, t->method, (double) t->timeout_ms / 1000.0, extra);
            again = true;
            break;
        }
    }
    if (!self->http)
        ufo_mcp_flush_ (self);
}
