/*  ufo_llm_server.c - a scripted OpenAI-compatible chat-completions server for tests and the demo.

    ufo-llm-server --script FILE [--port-file FILE] [--log FILE] [--port N] [--max-seconds N]

    Replies may quote the request ("${NAME}" captures, e.g. the label of a window in the
    prompt's list). Listens on 127.0.0.1 (port 0 = a free one), prints "port N" on stdout, and answers
    POST .../chat/completions (OpenAI, ollama /v1, and the Azure deployment path) from the
    script: an ordered list of entries, each matching requests by agent, role, content or
    plain order, and giving a reply or a fault (latency, 429 + Retry-After, 500 or any
    status, connection reset, malformed JSON, truncated body, slow drip). It also imitates
    the providers' request checks where a script asks (reject_params, models, no_images) and
    serves POST .../v1/messages in the shape of Anthropic's Messages API (x-api-key and
    anthropic-version required, top-level system, image blocks, usage input/output_tokens).
    Every request is logged as one JSON line with its path, headers of interest, the body's
    top-level keys and the image shape (never the API key). docs/LLM.md describes the script
    format.
    One thread, poll(), bounded buffers; exits cleanly on SIGTERM / SIGINT. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define S_MAX_CLIENTS   64
#define S_MAX_HEADER    (64 * 1024)
#define S_MAX_BODY      (64 * 1024 * 1024)

typedef struct {
    int fd;
    ufo_buf_t in;               //  bytes received, not yet handled
    ufo_buf_t out;              //  response to send
    size_t sent;
    int64_t send_at_ms;         //  latency / drip: do not send before this time
    size_t drip_bytes;          //  > 0: send this many bytes per drip_ms
    int drip_ms;
    size_t cut_at;              //  > 0: close after sending this many bytes (truncated)
    bool close_after;           //  close when out is sent
    bool reset;                 //  reset the connection at send_at_ms
} s_client_t;

static volatile sig_atomic_t s_stop = 0;
static ufo_value_t *s_script = NULL;        //  the "entries" list
static ufo_value_t *s_default = NULL;       //  reply when nothing matches (optional)
static int64_t *s_used = NULL;              //  requests served per entry
static FILE *s_log = NULL;
static int64_t s_requests = 0;
static int64_t s_t0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

//  Concatenated text of a message's content (string or text parts).
static void
s_message_text (const ufo_value_t *m, ufo_buf_t *out)
{
    const ufo_value_t *c = ufo_value_map_get (m, "content");
    if (ufo_value_type (c) == UFO_TSTRING) {
        ufo_buf_append (out, ufo_value_str (c), ufo_value_strlen (c));
        return;
    }
    for (size_t i = 0; i < ufo_value_size (c); i++) {
        const char *t = ufo_value_map_str (ufo_value_list_at (c, i), "text", NULL);
        if (t) {
            ufo_buf_puts (out, t);
            ufo_buf_putc (out, '\n');
        }
    }
}

static int
s_images (const ufo_value_t *messages)
{
    int n = 0;
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        const ufo_value_t *c = ufo_value_map_get (ufo_value_list_at (messages, i), "content");
        for (size_t k = 0; ufo_value_type (c) == UFO_TLIST && k < ufo_value_size (c); k++)
            if (!strcmp (ufo_value_map_str (ufo_value_list_at (c, k), "type", ""), "image_url")
            ||  !strcmp (ufo_value_map_str (ufo_value_list_at (c, k), "type", ""), "image"))
                n++;
    }
    return n;
}

//  True when some message (of role, if given) contains needle.
static bool
s_contains (const ufo_value_t *messages, const char *role, const char *needle, bool last_only)
{
    size_t n = ufo_value_size (messages);
    for (size_t i = last_only && n ? n - 1 : 0; i < n; i++) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        if (role && strcmp (ufo_value_map_str (m, "role", ""), role))
            continue;
        ufo_buf_t t = { 0 };
        s_message_text (m, &t);
        bool hit = t.data && strstr (t.data, needle);
        ufo_buf_free (&t);
        if (hit)
            return true;
    }
    return false;
}

static bool
s_matches (const ufo_value_t *match, const char *agent, const char *path, const ufo_value_t *body)
{
    if (!match)
        return true;
    const ufo_value_t *messages = ufo_value_map_get (body, "messages");
    const char *want = ufo_value_map_str (match, "agent", NULL);
    if (want && strcmp (want, agent))
        return false;
    want = ufo_value_map_str (match, "path", NULL);
    if (want && !strstr (path, want))
        return false;
    want = ufo_value_map_str (match, "model", NULL);
    if (want && strcmp (want, ufo_value_map_str (body, "model", "")))
        return false;
    const char *role = ufo_value_map_str (match, "role", NULL);
    want = ufo_value_map_str (match, "contains", NULL);
    if (want && !s_contains (messages, role, want, false))
        return false;
    want = ufo_value_map_str (match, "last_contains", NULL);
    if (want && !s_contains (messages, NULL, want, true))
        return false;
    want = ufo_value_map_str (match, "not_contains", NULL);
    if (want && s_contains (messages, role, want, false))
        return false;
    if (ufo_value_map_has (match, "messages")
    &&  (int64_t) ufo_value_size (messages) != ufo_value_map_int (match, "messages", -1))
        return false;
    return true;
}

static void
s_respond (s_client_t *c, int status, const char *reason, const char *extra_headers,
           const char *body, size_t len, size_t declared_len)
{
    ufo_buf_printf (&c->out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\n%s\r\n",
                    status, reason, declared_len ? declared_len : len, extra_headers ? extra_headers : "");
    ufo_buf_append (&c->out, body, len);
}

//  An error body: OpenAI's {"error": {"message", "type", "param", "code"}} (param / code
//  when given), which Anthropic's {"type": "error", "error": {"type", "message"}} also fits.
static void
s_error_body (s_client_t *c, int status, const char *message, const char *extra, const char *param,
              const char *code)
{
    ufo_value_t *v = ufo_value_new_map ();
    ufo_value_t *e = ufo_value_new_map ();
    ufo_value_map_set_str (v, "type", "error");
    ufo_value_map_set_str (e, "message", message);
    ufo_value_map_set_str (e, "type", status == 400 ? "invalid_request_error" : "scripted_error");
    if (param)
        ufo_value_map_set_str (e, "param", param);
    if (code)
        ufo_value_map_set_str (e, "code", code);
    ufo_value_map_set (v, "error", &e);
    size_t len;
    char *text = ufo_json_dump (v, UFO_JSON_COMPACT, &len);
    const char *reason = status == 429 ? "Too Many Requests" : status == 401 ? "Unauthorized"
                       : status == 400 ? "Bad Request" : status == 404 ? "Not Found"
                       : status >= 500 ? "Server Error" : "Error";
    s_respond (c, status, reason, extra, text, len, 0);
    free (text);
    ufo_value_destroy (&v);
}

static void
s_error_reply (s_client_t *c, int status, const char *message, const char *extra)
{
    s_error_body (c, status, message, extra, NULL, NULL);
}

//  Captures: "vars": {"NAME": {"line": "Mousepad", "after": "label \"", "before": "\""}} takes,
//  from the first line of the request's user messages (newest first) that contains "line",
//  the text between "after" and "before" on that line; "${NAME}" in the reply is replaced
//  by it ("" when nothing matched). Lets a script answer with labels it cannot know ahead.
static bool
s_capture (const ufo_value_t *messages, const ufo_value_t *rule, char *out, size_t size)
{
    const char *line_has = ufo_value_map_str (rule, "line", "");
    const char *after = ufo_value_map_str (rule, "after", "");
    const char *before = ufo_value_map_str (rule, "before", "");
    out [0] = 0;
    for (size_t i = ufo_value_size (messages); i-- > 0; ) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        if (strcmp (ufo_value_map_str (m, "role", ""), "user"))
            continue;
        ufo_buf_t t = { 0 };
        s_message_text (m, &t);
        for (char *line = t.data; line && *line; ) {
            char *eol = strchr (line, '\n');
            if (eol)
                *eol = 0;
            char *a = strstr (line, line_has);
            char *from = a ? strstr (line, after) : NULL;
            if (from) {
                from += strlen (after);
                char *to = *before ? strstr (from, before) : from + strlen (from);
                if (to) {
                    snprintf (out, size, "%.*s", (int) (to - from), from);
                    ufo_buf_free (&t);
                    return true;
                }
            }
            line = eol ? eol + 1 : NULL;
        }
        ufo_buf_free (&t);
    }
    return false;
}

//  The reply text with ${NAME} replaced by the entry's captures. Caller frees.
static char *
s_substitute (const char *text, const ufo_value_t *entry, const ufo_value_t *body)
{
    const ufo_value_t *vars = ufo_value_map_get (entry, "vars");
    ufo_buf_t out = { 0 };
    ufo_buf_puts (&out, "");
    for (const char *p = text; *p; ) {
        const char *open = strstr (p, "${");
        const char *close = open ? strchr (open, '}') : NULL;
        if (!open || !close) {
            ufo_buf_puts (&out, p);
            break;
        }
        ufo_buf_append (&out, p, (size_t) (open - p));
        char name [64];
        snprintf (name, sizeof name, "%.*s", (int) (close - open - 2), open + 2);
        const ufo_value_t *rule = ufo_value_map_get (vars, name);
        if (rule) {
            //  Inserted JSON-escaped (without quotes): replies are usually JSON text.
            char value [512];
            s_capture (ufo_value_map_get (body, "messages"), rule, value, sizeof value);
            ufo_buf_t q = { 0 };
            ufo_json_append_string (&q, value, strlen (value), UFO_JSON_COMPACT);
            ufo_buf_append (&out, q.data + 1, q.len - 2);
            ufo_buf_free (&q);
        }
        else
            ufo_buf_append (&out, open, (size_t) (close - open) + 1);
        p = close + 1;
    }
    return ufo_buf_detach (&out, NULL);
}

static void
s_ok_reply (s_client_t *c, const ufo_value_t *entry, const ufo_value_t *body, const char *fault,
            bool anthropic)
{
    ufo_value_t *resp = ufo_value_new_map ();
    ufo_value_map_set_str (resp, "id", "chatcmpl-scripted");
    ufo_value_map_set_str (resp, "object", "chat.completion");
    ufo_value_map_set_str (resp, "model", ufo_value_map_str (body, "model", "scripted"));
    ufo_value_t *choices = ufo_value_new_list ();
    ufo_value_t *choice = ufo_value_new_map ();
    ufo_value_map_set_int (choice, "index", 0);
    ufo_value_t *msg = ufo_value_new_map ();
    ufo_value_map_set_str (msg, "role", "assistant");
    const ufo_value_t *cj = ufo_value_map_get (entry, "content_json");
    char *reply = cj ? ufo_json_dump (cj, UFO_JSON_PY, NULL) : ufo_strdup (ufo_value_map_str (entry, "content", ""));
    char *final = s_substitute (reply, entry, body);
    ufo_value_map_set_str (msg, "content", final);
    free (final);
    free (reply);
    ufo_value_map_set (choice, "message", &msg);
    ufo_value_map_set_str (choice, "finish_reason", ufo_value_map_str (entry, "finish_reason", "stop"));
    ufo_value_list_push (choices, &choice);
    ufo_value_map_set (resp, "choices", &choices);
    ufo_value_t *usage = ufo_value_new_map ();
    int64_t pt = ufo_value_int (ufo_value_path (entry, "usage.prompt_tokens"));
    int64_t ct = ufo_value_int (ufo_value_path (entry, "usage.completion_tokens"));
    ufo_value_map_set_int (usage, "prompt_tokens", pt);
    ufo_value_map_set_int (usage, "completion_tokens", ct);
    ufo_value_map_set_int (usage, "total_tokens", pt + ct);
    ufo_value_map_set (resp, "usage", &usage);
    if (anthropic) {
        //  The Messages API's reply: content blocks, stop_reason, usage input/output_tokens.
        ufo_value_t *a = ufo_value_new_map ();
        ufo_value_map_set_str (a, "id", "msg_scripted");
        ufo_value_map_set_str (a, "type", "message");
        ufo_value_map_set_str (a, "role", "assistant");
        ufo_value_map_set_str (a, "model", ufo_value_map_str (body, "model", "scripted"));
        ufo_value_t *blocks = ufo_value_new_list ();
        ufo_value_t *block = ufo_value_new_map ();
        ufo_value_map_set_str (block, "type", "text");
        ufo_value_map_set_str (block, "text", ufo_value_str (ufo_value_path (resp, "choices.0.message.content")));
        ufo_value_list_push (blocks, &block);
        ufo_value_map_set (a, "content", &blocks);
        const char *finish = ufo_value_map_str (entry, "finish_reason", "stop");
        ufo_value_map_set_str (a, "stop_reason", !strcmp (finish, "length") ? "max_tokens" : "end_turn");
        ufo_value_t *au = ufo_value_new_map ();
        ufo_value_map_set_int (au, "input_tokens", pt);
        ufo_value_map_set_int (au, "output_tokens", ct);
        ufo_value_map_set (a, "usage", &au);
        ufo_value_destroy (&resp);
        resp = a;
    }
    size_t len;
    char *text = ufo_json_dump (resp, UFO_JSON_COMPACT, &len);
    ufo_value_destroy (&resp);
    if (!strcmp (fault, "malformed")) {
        //  A JSON body that stops in the middle: complete HTTP, broken JSON.
        size_t half = len / 2;
        s_respond (c, 200, "OK", NULL, text, half, 0);
    }
    else
    if (!strcmp (fault, "truncated")) {
        s_respond (c, 200, "OK", NULL, text, len, 0);
        c->cut_at = c->out.len - len / 2;
        c->close_after = true;
    }
    else
        s_respond (c, 200, "OK", NULL, text, len, 0);
    if (!strcmp (fault, "drip")) {
        c->drip_bytes = (size_t) ufo_value_map_int (entry, "drip_bytes", 16);
        c->drip_ms = (int) ufo_value_map_int (entry, "drip_ms", 50);
        if (c->drip_bytes == 0)
            c->drip_bytes = 1;
    }
    free (text);
}

static bool s_header (const char *head, const char *name, char *out, size_t size);

static void
s_log_request (const char *path, const char *agent, int entry, const char *fault, const char *auth,
               int key_ok, const ufo_value_t *body, const char *head, const ufo_value_t *raw)
{
    if (!s_log)
        return;
    ufo_value_t *l = ufo_value_new_map ();
    ufo_value_map_set_int (l, "n", s_requests);
    ufo_value_map_set_int (l, "t_ms", ufo_time_mono_ms () - s_t0);
    ufo_value_map_set_str (l, "path", path);
    ufo_value_map_set_str (l, "agent", agent);
    ufo_value_map_set_int (l, "entry", entry);
    ufo_value_map_set_str (l, "fault", fault);
    ufo_value_map_set_str (l, "auth", auth);
    if (key_ok >= 0)
        ufo_value_map_set_bool (l, "key_ok", key_ok);
    ufo_value_map_set_str (l, "model", ufo_value_map_str (body, "model", ""));
    const ufo_value_t *messages = ufo_value_map_get (body, "messages");
    ufo_value_map_set_int (l, "messages", (int64_t) ufo_value_size (messages));
    ufo_value_map_set_int (l, "images", s_images (messages));
    ufo_value_map_set_bool (l, "json_mode", ufo_value_path (body, "response_format.type") != NULL);
    ufo_value_map_set_int (l, "max_tokens", ufo_value_map_int (body, "max_tokens", -1));
    ufo_buf_t t = { 0 };
    if (ufo_value_size (messages))
        s_message_text (ufo_value_list_at (messages, ufo_value_size (messages) - 1), &t);
    ufo_value_map_set_str (l, "last", t.data ? t.data : "");
    ufo_buf_free (&t);
    //  The request's shape as sent (before the Messages API form is read as chat messages).
    ufo_value_t *keys = ufo_value_new_list ();
    for (size_t i = 0; ufo_value_type (raw) == UFO_TMAP && i < ufo_value_size (raw); i++)
        ufo_value_list_push_str (keys, ufo_value_map_key_at (raw, i));
    ufo_value_map_set (l, "keys", &keys);
    ufo_value_t *headers = ufo_value_new_map ();
    static const char *const names [] = { "Content-Type", "anthropic-version", "X-UFO-Agent" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names); i++) {
        char value [256];
        if (head && s_header (head, names [i], value, sizeof value))
            ufo_value_map_set_str (headers, names [i], value);
    }
    ufo_value_map_set (l, "headers", &headers);
    const char *shape = "";
    const ufo_value_t *raw_messages = ufo_value_map_get (raw, "messages");
    for (size_t i = 0; i < ufo_value_size (raw_messages); i++) {
        const ufo_value_t *c = ufo_value_map_get (ufo_value_list_at (raw_messages, i), "content");
        for (size_t k = 0; ufo_value_type (c) == UFO_TLIST && k < ufo_value_size (c); k++) {
            const ufo_value_t *part = ufo_value_list_at (c, k);
            if (!strcmp (ufo_value_map_str (part, "type", ""), "image_url"))
                shape = "image_url";
            if (!strcmp (ufo_value_map_str (part, "type", ""), "image"))
                shape = ufo_value_path (part, "source.data") && ufo_value_path (part, "source.media_type")
                      ? "image/base64" : "image/other";
        }
    }
    ufo_value_map_set_str (l, "image_shape", shape);
    if (ufo_value_map_has (raw, "max_completion_tokens"))
        ufo_value_map_set_int (l, "max_completion_tokens", ufo_value_map_int (raw, "max_completion_tokens", -1));
    if (ufo_value_map_has (raw, "reasoning_effort"))
        ufo_value_map_set_str (l, "reasoning_effort", ufo_value_map_str (raw, "reasoning_effort", ""));
    if (ufo_value_type (ufo_value_map_get (raw, "system")) == UFO_TSTRING)
        ufo_value_map_set_str (l, "system", ufo_value_map_str (raw, "system", ""));
    char *text = ufo_json_dump (l, UFO_JSON_COMPACT, NULL);
    fprintf (s_log, "%s\n", text);
    fflush (s_log);
    free (text);
    ufo_value_destroy (&l);
}

//  Finds a header's value in the header block (case-insensitive name). Copies into out.
static bool
s_header (const char *head, const char *name, char *out, size_t size)
{
    size_t nlen = strlen (name);
    for (const char *p = strstr (head, "\r\n"); p; p = strstr (p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp (line, name, nlen) == 0 && line [nlen] == ':') {
            const char *v = line + nlen + 1;
            while (*v == ' ')
                v++;
            const char *e = strstr (v, "\r\n");
            size_t len = e ? (size_t) (e - v) : strlen (v);
            if (len >= size)
                len = size - 1;
            memcpy (out, v, len);
            out [len] = 0;
            return true;
        }
    }
    return false;
}

//  What the Messages API refuses in a request, as it words it; NULL when the request is fine.
static const char *
s_anthropic_refusal (const char *head, const ufo_value_t *raw, int *status)
{
    char value [256];
    *status = 400;
    if (!s_header (head, "x-api-key", value, sizeof value)) {
        *status = 401;
        return "x-api-key header is required";
    }
    if (!s_header (head, "anthropic-version", value, sizeof value))
        return "anthropic-version: header is required";
    if (!ufo_value_map_has (raw, "max_tokens"))
        return "max_tokens: Field required";
    if (ufo_value_map_has (raw, "temperature") && ufo_value_map_has (raw, "top_p"))
        return "`temperature` and `top_p` cannot both be specified for this model. Please use only one.";
    const ufo_value_t *messages = ufo_value_map_get (raw, "messages");
    for (size_t i = 0; i < ufo_value_size (messages); i++) {
        const ufo_value_t *m = ufo_value_list_at (messages, i);
        const char *role = ufo_value_map_str (m, "role", "");
        if (strcmp (role, "user") && strcmp (role, "assistant"))
            return "messages: Unexpected role. The Messages API accepts a top-level `system` parameter, "
                   "not \"system\" as an input message role.";
        const ufo_value_t *c = ufo_value_map_get (m, "content");
        for (size_t k = 0; ufo_value_type (c) == UFO_TLIST && k < ufo_value_size (c); k++) {
            const char *type = ufo_value_map_str (ufo_value_list_at (c, k), "type", "");
            if (strcmp (type, "text") && strcmp (type, "image"))
                return "messages: Input tag does not match any of the expected tags: 'text', 'image', ...";
            if (!strcmp (type, "image")
            &&  !ufo_value_path (ufo_value_list_at (c, k), "source.type"))
                return "messages: image.source: Field required";
        }
    }
    return NULL;
}

//  The Messages API request read as chat messages (the system field first), so that
//  matching, captures and agent detection work the same for both shapes. Caller owns.
static ufo_value_t *
s_from_anthropic (const ufo_value_t *raw)
{
    ufo_value_t *body = ufo_value_dup (raw);
    ufo_value_t *messages = ufo_value_new_list ();
    const char *system = ufo_value_map_str (raw, "system", NULL);
    if (system) {
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "role", "system");
        ufo_value_map_set_str (m, "content", system);
        ufo_value_list_push (messages, &m);
    }
    const ufo_value_t *given = ufo_value_map_get (raw, "messages");
    for (size_t i = 0; i < ufo_value_size (given); i++) {
        ufo_value_t *m = ufo_value_dup (ufo_value_list_at (given, i));
        ufo_value_list_push (messages, &m);
    }
    ufo_value_map_set (body, "messages", &messages);
    return body;
}

//  A request check of the provider that the entry imitates; true when it answered.
static bool
s_provider_refusal (s_client_t *c, const ufo_value_t *entry, const ufo_value_t *raw, const ufo_value_t *body)
{
    const ufo_value_t *models = ufo_value_map_get (entry, "models");
    if (models) {
        const char *model = ufo_value_map_str (raw, "model", "");
        bool known = false;
        for (size_t i = 0; i < ufo_value_size (models); i++)
            if (ufo_value_str (ufo_value_list_at (models, i)) && !strcmp (ufo_value_str (ufo_value_list_at (models, i)), model))
                known = true;
        if (!known) {
            char msg [400];
            snprintf (msg, sizeof msg, "The model `%.200s` does not exist or you do not have access to it.", model);
            s_error_body (c, 404, msg, NULL, NULL, "model_not_found");
            return true;
        }
    }
    if (ufo_value_map_bool (entry, "no_images", false) && s_images (ufo_value_map_get (body, "messages"))) {
        s_error_body (c, 400, "Invalid content type. image_url is only supported by certain models.", NULL,
                      "messages", "invalid_value");
        return true;
    }
    //  OpenAI's reasoning models: "max_tokens" and a non-default temperature / top_p refused.
    const ufo_value_t *reject = ufo_value_map_get (entry, "reject_params");
    for (size_t i = 0; i < ufo_value_size (reject); i++) {
        const char *param = ufo_value_str (ufo_value_list_at (reject, i));
        if (!param || !ufo_value_map_has (raw, param))
            continue;
        char msg [400];
        if (!strcmp (param, "max_tokens"))
            snprintf (msg, sizeof msg, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                      "Use 'max_completion_tokens' instead.");
        else
        if (!strcmp (param, "temperature") || !strcmp (param, "top_p"))
            snprintf (msg, sizeof msg, "Unsupported value: '%s' does not support %g with this model. Only the "
                      "default (1) value is supported.", param, ufo_value_float (ufo_value_map_get (raw, param)));
        else
            snprintf (msg, sizeof msg, "Unrecognized request argument supplied: %s", param);
        s_error_body (c, 400, msg, NULL, param, !strncmp (msg, "Unsupported value", 17)
                      ? "unsupported_value" : "unsupported_parameter");
        return true;
    }
    return false;
}

//  Handles one complete request (head NUL-terminated, body[0..len)).
static void
s_handle (s_client_t *c, const char *head, const char *body_text, size_t body_len)
{
    s_requests++;
    char method [16] = "", path [1024] = "";
    sscanf (head, "%15s %1023s", method, path);
    ufo_value_t *raw = ufo_json_parse (body_text, body_len, NULL, NULL);
    char *query = strchr (path, '?');
    size_t plen = query ? (size_t) (query - path) : strlen (path);
    bool anthropic = plen >= 12 && !strncmp (path + plen - 12, "/v1/messages", 12);
    ufo_value_t *body = anthropic && ufo_value_type (raw) == UFO_TMAP ? s_from_anthropic (raw) : ufo_value_dup (raw);
    char agent [64] = "";
    if (!s_header (head, "X-UFO-Agent", agent, sizeof agent)) {
        //  No header: look for "You are the <Agent>" in the system prompt.
        static const char *agents [] = { "HostAgent", "AppAgent", "EvaluationAgent" };
        const ufo_value_t *first = ufo_value_list_at (ufo_value_map_get (body, "messages"), 0);
        ufo_buf_t t = { 0 };
        s_message_text (first, &t);
        for (size_t i = 0; i < UFO_ARRAY_SIZE (agents) && t.data; i++) {
            char marker [64];
            snprintf (marker, sizeof marker, "You are the %s", agents [i]);
            if (strstr (t.data, marker))
                snprintf (agent, sizeof agent, "%s", agents [i]);
        }
        ufo_buf_free (&t);
    }
    char auth_value [1024] = "", key [1024] = "";
    const char *auth = "none";
    if (s_header (head, "Authorization", auth_value, sizeof auth_value)) {
        auth = "bearer";
        if (!strncmp (auth_value, "Bearer ", 7))
            snprintf (key, sizeof key, "%s", auth_value + 7);
    }
    else
    if (s_header (head, "api-key", key, sizeof key))
        auth = "api-key";
    else
    if (s_header (head, "x-api-key", key, sizeof key))
        auth = "x-api-key";
    if (strcmp (method, "POST") || !(strstr (path, "/chat/completions") || anthropic)) {
        s_log_request (path, agent, -1, "not-found", auth, -1, body, head, raw);
        s_error_reply (c, 404, "only POST .../chat/completions and .../v1/messages are served", NULL);
        ufo_value_destroy (&body);
        ufo_value_destroy (&raw);
        return;
    }
    if (!body || ufo_value_type (ufo_value_map_get (body, "messages")) != UFO_TLIST) {
        s_log_request (path, agent, -1, "bad-request", auth, -1, body, head, raw);
        s_error_reply (c, 400, "the body must be JSON with a \"messages\" list", NULL);
        ufo_value_destroy (&body);
        ufo_value_destroy (&raw);
        return;
    }
    int refused_status = 0;
    const char *refusal = anthropic ? s_anthropic_refusal (head, raw, &refused_status) : NULL;
    if (refusal) {
        s_log_request (path, agent, -1, "refused", auth, -1, body, head, raw);
        s_error_reply (c, refused_status, refusal, NULL);
        ufo_value_destroy (&body);
        ufo_value_destroy (&raw);
        return;
    }
    const ufo_value_t *entry = NULL;
    int index = -1;
    for (size_t i = 0; i < ufo_value_size (s_script); i++) {
        const ufo_value_t *e = ufo_value_list_at (s_script, i);
        int64_t times = ufo_value_map_int (e, "times", 1);
        if (times > 0 && s_used [i] >= times)
            continue;
        if (s_matches (ufo_value_map_get (e, "match"), agent, path, body)) {
            entry = e;
            index = (int) i;
            s_used [i]++;
            break;
        }
    }
    if (!entry)
        entry = s_default;
    const char *fault = ufo_value_map_str (entry, "fault", "");
    int key_ok = -1;
    const char *required = ufo_value_map_str (entry, "require_key", NULL);
    if (required)
        key_ok = strcmp (required, key) == 0;
    s_log_request (path, agent, index, entry ? fault : "no-match", auth, key_ok, body, head, raw);
    c->send_at_ms = ufo_time_mono_ms () + ufo_value_map_int (entry, "latency_ms", 0);
    if (!entry)
        s_error_reply (c, 404, "the script has no entry for this request", NULL);
    else
    if (key_ok == 0)
        s_error_reply (c, 401, "Incorrect API key provided", NULL);
    else
    if (s_provider_refusal (c, entry, raw, body)) {
        if (index >= 0)
            s_used [index]--;       //  refused before the script answered: the entry is not used up
    }
    else
    if (!strcmp (fault, "reset"))
        c->reset = true;
    else
    if (!strcmp (fault, "429")) {
        char extra [64] = "";
        if (ufo_value_map_has (entry, "retry_after"))
            snprintf (extra, sizeof extra, "Retry-After: %" PRId64 "\r\n", ufo_value_map_int (entry, "retry_after", 0));
        s_error_reply (c, 429, ufo_value_map_str (entry, "error", "Rate limit reached, retry later"), extra);
    }
    else
    if (!strcmp (fault, "500"))
        s_error_reply (c, 500, ufo_value_map_str (entry, "error", "The server had an error"), NULL);
    else
    if (!strcmp (fault, "status"))
        s_error_reply (c, (int) ufo_value_map_int (entry, "status", 500),
                       ufo_value_map_str (entry, "error", "scripted failure"), NULL);
    else
        s_ok_reply (c, entry, body, fault, anthropic);
    ufo_value_destroy (&body);
    ufo_value_destroy (&raw);
}

//  Parses as many complete requests as the input holds. Returns -1 to drop the client.
static int
s_on_input (s_client_t *c)
{
    if (c->out.len > c->sent || c->reset)
        return 0;               //  one request at a time: wait until the last answer is out
    char *end = c->in.data ? strstr (c->in.data, "\r\n\r\n") : NULL;
    if (!end)
        return c->in.len > S_MAX_HEADER ? -1 : 0;
    size_t head_len = (size_t) (end - c->in.data) + 4;
    char *head = ufo_strndup (c->in.data, head_len);
    char value [32];
    size_t body_len = 0;
    if (s_header (head, "Content-Length", value, sizeof value))
        body_len = (size_t) strtoull (value, NULL, 10);
    if (body_len > S_MAX_BODY) {
        free (head);
        return -1;
    }
    if (c->in.len < head_len + body_len) {
        free (head);
        return 0;
    }
    ufo_buf_reset (&c->out);
    c->sent = 0;
    s_handle (c, head, c->in.data + head_len, body_len);
    free (head);
    size_t used = head_len + body_len;
    memmove (c->in.data, c->in.data + used, c->in.len - used + 1);
    c->in.len -= used;
    return 0;
}

static void
s_close (s_client_t *c, bool reset)
{
    if (reset) {
        struct linger lg = { 1, 0 };
        setsockopt (c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close (c->fd);
    ufo_buf_free (&c->in);
    ufo_buf_free (&c->out);
    memset (c, 0, sizeof *c);
    c->fd = -1;
}

//  Sends what is due. Returns -1 when the client is finished with.
static int
s_on_output (s_client_t *c)
{
    int64_t now = ufo_time_mono_ms ();
    if (now < c->send_at_ms)
        return 0;
    if (c->reset)
        return -1;
    size_t limit = c->cut_at ? c->cut_at : c->out.len;
    if (c->sent >= limit)
        return c->close_after ? -1 : 0;
    size_t n = limit - c->sent;
    if (c->drip_bytes && n > c->drip_bytes)
        n = c->drip_bytes;
    ssize_t w = send (c->fd, c->out.data + c->sent, n, MSG_NOSIGNAL);
    if (w < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->sent += (size_t) w;
    if (c->drip_bytes)
        c->send_at_ms = now + c->drip_ms;
    if (c->sent >= limit) {
        if (c->close_after)
            return -1;
        c->drip_bytes = 0;
        c->cut_at = 0;
        return s_on_input (c);  //  a pipelined request may be waiting
    }
    return 0;
}

static int
s_load_script (const char *path)
{
    ufo_error_t err;
    ufo_value_t *root = ufo_json_parse_file (path, NULL, &err);
    if (!root) {
        fprintf (stderr, "ufo-llm-server: %s\n", err.message);
        return -1;
    }
    ufo_value_t *entries = ufo_value_map_get (root, "entries");
    if (ufo_value_type (root) != UFO_TMAP || ufo_value_type (entries) != UFO_TLIST) {
        fprintf (stderr, "ufo-llm-server: %s: the script must be {\"entries\": [...]}\n", path);
        ufo_value_destroy (&root);
        return -1;
    }
    s_script = ufo_value_dup (entries);
    s_default = ufo_value_dup (ufo_value_map_get (root, "default"));
    s_used = ufo_calloc (ufo_value_size (s_script) + 1, sizeof (int64_t));
    ufo_value_destroy (&root);
    return 0;
}

int
main (int argc, char **argv)
{
    const char *script = NULL, *port_file = NULL, *log_path = NULL;
    int port = 0;
    int max_seconds = 600;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv [i], "--script") && i + 1 < argc)
            script = argv [++i];
        else if (!strcmp (argv [i], "--port-file") && i + 1 < argc)
            port_file = argv [++i];
        else if (!strcmp (argv [i], "--log") && i + 1 < argc)
            log_path = argv [++i];
        else if (!strcmp (argv [i], "--port") && i + 1 < argc)
            port = atoi (argv [++i]);
        else if (!strcmp (argv [i], "--max-seconds") && i + 1 < argc)
            max_seconds = atoi (argv [++i]);
        else {
            fprintf (stderr, "usage: ufo-llm-server --script FILE [--port-file FILE] [--log FILE] "
                             "[--port N] [--max-seconds N]\n");
            return 2;
        }
    }
    if (!script || s_load_script (script))
        return 2;
    prctl (PR_SET_PDEATHSIG, SIGTERM);      //  never outlive the test that started us
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
    if (log_path && !(s_log = fopen (log_path, "a"))) {
        fprintf (stderr, "ufo-llm-server: cannot open %s: %s\n", log_path, strerror (errno));
        return 2;
    }
    int lfd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt (lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr;
    memset (&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    addr.sin_port = htons ((uint16_t) port);
    socklen_t alen = sizeof addr;
    if (lfd < 0 || bind (lfd, (struct sockaddr *) &addr, sizeof addr) || listen (lfd, 64)
    ||  getsockname (lfd, (struct sockaddr *) &addr, &alen)) {
        fprintf (stderr, "ufo-llm-server: cannot listen: %s\n", strerror (errno));
        return 1;
    }
    port = ntohs (addr.sin_port);
    if (port_file) {
        char tmp [1024];
        snprintf (tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen (tmp, "w");
        if (!f || fprintf (f, "%d\n", port) < 0 || fclose (f) || rename (tmp, port_file)) {
            fprintf (stderr, "ufo-llm-server: cannot write %s\n", port_file);
            return 1;
        }
    }
    printf ("port %d\n", port);
    fflush (stdout);
    s_t0 = ufo_time_mono_ms ();
    s_client_t clients [S_MAX_CLIENTS];
    for (size_t i = 0; i < S_MAX_CLIENTS; i++)
        clients [i].fd = -1;
    while (!s_stop && ufo_time_mono_ms () - s_t0 < (int64_t) max_seconds * 1000) {
        struct pollfd pfd [S_MAX_CLIENTS + 1];
        size_t map [S_MAX_CLIENTS + 1];
        nfds_t n = 0;
        pfd [n].fd = lfd;
        pfd [n].events = POLLIN;
        map [n++] = SIZE_MAX;
        int timeout = 100;
        int64_t now = ufo_time_mono_ms ();
        for (size_t i = 0; i < S_MAX_CLIENTS; i++) {
            s_client_t *c = &clients [i];
            if (c->fd < 0)
                continue;
            pfd [n].fd = c->fd;
            pfd [n].events = POLLIN;
            bool pending = c->reset || c->out.len > c->sent;
            if (pending) {
                if (c->send_at_ms > now) {
                    if (c->send_at_ms - now < timeout)
                        timeout = (int) (c->send_at_ms - now);
                }
                else
                    pfd [n].events |= POLLOUT;
            }
            map [n++] = i;
        }
        int rc = poll (pfd, n, timeout);
        if (rc < 0 && errno != EINTR)
            break;
        for (nfds_t k = 0; rc > 0 && k < n; k++) {
            if (map [k] == SIZE_MAX) {
                if (!(pfd [k].revents & POLLIN))
                    continue;
                int cfd = accept4 (lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0)
                    continue;
                size_t slot = 0;
                while (slot < S_MAX_CLIENTS && clients [slot].fd >= 0)
                    slot++;
                if (slot == S_MAX_CLIENTS) {
                    close (cfd);
                    continue;
                }
                setsockopt (cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                memset (&clients [slot], 0, sizeof clients [slot]);
                clients [slot].fd = cfd;
                continue;
            }
            s_client_t *c = &clients [map [k]];
            if (c->fd < 0)
                continue;
            if (pfd [k].revents & (POLLIN | POLLHUP | POLLERR)) {
                char buf [65536];
                ssize_t r = recv (c->fd, buf, sizeof buf, 0);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                    s_close (c, false);
                    continue;
                }
                if (r > 0) {
                    if (c->in.len + (size_t) r > S_MAX_HEADER + S_MAX_BODY) {
                        s_close (c, false);
                        continue;
                    }
                    ufo_buf_append (&c->in, buf, (size_t) r);
                    if (s_on_input (c)) {
                        s_close (c, false);
                        continue;
                    }
                }
            }
        }
        //  Timed sends (latency, drip, resets) and ready sockets.
        for (size_t i = 0; i < S_MAX_CLIENTS; i++) {
            s_client_t *c = &clients [i];
            if (c->fd >= 0 && (c->reset || c->out.len > c->sent || c->close_after))
                if (s_on_output (c))
                    s_close (c, c->reset);
        }
    }
    for (size_t i = 0; i < S_MAX_CLIENTS; i++)
        if (clients [i].fd >= 0)
            s_close (&clients [i], false);
    close (lfd);
    if (s_log)
        fclose (s_log);
    ufo_value_destroy (&s_script);
    ufo_value_destroy (&s_default);
    free (s_used);
    return 0;
}
