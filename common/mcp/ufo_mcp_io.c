/*  ufo_mcp_io.c - the transports of an MCP client (see ufo_mcp.h): a stdio server as our child
    process (newline-delimited JSON-RPC, stderr lines to our log, bounded lines), and Streamable
    HTTP (POST, JSON or SSE replies, Mcp-Session-Id). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_mcp.h"
#include "ufo_value.h"
#include "ufo_mcp_int.h"
#include <sys/wait.h>

extern char **environ;

//  --- stdio transport -------------------------------------------------------------------------

static void
s_close (int *fd)
{
    if (*fd >= 0)
        close (*fd);
    *fd = -1;
}

static void
s_status_text (int status, char *out, size_t size)
{
    if (WIFEXITED (status))
        snprintf (out, size, "exited with status %d", WEXITSTATUS (status));
    else
    if (WIFSIGNALED (status))
        snprintf (out, size, "was killed by signal %d", WTERMSIG (status));
    else
        snprintf (out, size, "stopped");
}

//  Reaps the child: waits up to grace_ms after SIGTERM, then SIGKILL. Writes how it ended.
static void
s_reap (ufo_mcp_t *self, int grace_ms, char *how, size_t size)
{
    snprintf (how, size, "stopped");
    if (self->pid <= 0)
        return;
    int status = 0;
    pid_t got = waitpid (self->pid, &status, WNOHANG);
    if (got == 0) {
        kill (-self->pid, SIGTERM);
        for (int waited = 0; waited < grace_ms && got == 0; waited += 10) {
            struct timespec ts = { 0, 10 * 1000000 };
            nanosleep (&ts, NULL);
            got = waitpid (self->pid, &status, WNOHANG);
        }
        if (got == 0) {
            kill (-self->pid, SIGKILL);
            got = waitpid (self->pid, &status, 0);
            snprintf (how, size, "closed its output and was stopped");
        }
        else
            s_status_text (status, how, size);
    }
    else
    if (got == self->pid) {
        s_status_text (status, how, size);
        kill (-self->pid, SIGKILL);         //  what it started goes too
    }
    self->pid = 0;
}

void
ufo_mcp_stop_transport_ (ufo_mcp_t *self, int grace_ms)
{
    if (self->http) {
        ufo_http_destroy (&self->client);
        self->session [0] = 0;
        return;
    }
    s_close (&self->in_fd);
    char how [128];
    s_reap (self, grace_ms, how, sizeof how);
    s_close (&self->out_fd);
    s_close (&self->err_fd);
}

int
ufo_mcp_spawn_ (ufo_mcp_t *self, ufo_error_t *err)
{
    const ufo_value_t *args = ufo_value_map_get (self->spec, "args");
    const ufo_value_t *env = ufo_value_map_get (self->spec, "env");
    const char *cwd = ufo_value_map_str (self->spec, "cwd", NULL);
    size_t nargs = ufo_value_size (args);
    char **argv = ufo_calloc (nargs + 2, sizeof (char *));
    argv [0] = (char *) ufo_value_map_str (self->spec, "command", "");
    for (size_t i = 0; i < nargs; i++)
        argv [i + 1] = (char *) ufo_value_str (ufo_value_list_at (args, i));
    size_t nenv = 0;
    while (environ [nenv])
        nenv++;
    char **envp = ufo_calloc (nenv + ufo_value_size (env) + 1, sizeof (char *));
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        const char *eq = strchr (environ [i], '=');
        size_t klen = eq ? (size_t) (eq - environ [i]) : strlen (environ [i]);
        bool overridden = false;
        for (size_t j = 0; j < ufo_value_size (env) && !overridden; j++)
            overridden = strlen (ufo_value_map_key_at (env, j)) == klen
                      && !strncmp (ufo_value_map_key_at (env, j), environ [i], klen);
        if (!overridden)
            envp [k++] = ufo_strdup (environ [i]);
    }
    for (size_t j = 0; j < ufo_value_size (env); j++) {
        char *e = NULL;
        if (asprintf (&e, "%s=%s", ufo_value_map_key_at (env, j),
                      ufo_value_str (ufo_value_map_value_at (env, j))) < 0)
            abort ();
        envp [k++] = e;
    }
    int in [2] = { -1, -1 }, out [2] = { -1, -1 }, er [2] = { -1, -1 };
    int rc = 0;
    if (pipe2 (in, O_CLOEXEC) || pipe2 (out, O_CLOEXEC) || pipe2 (er, O_CLOEXEC))
        rc = ufo_error_set (err, UFO_E_IO, "MCP server %s: pipe: %s", self->name, strerror (errno));
    pid_t pid = rc ? -1 : fork ();
    if (pid == 0) {
        setpgid (0, 0);
        signal (SIGPIPE, SIG_DFL);
        dup2 (in [0], 0);
        dup2 (out [1], 1);
        dup2 (er [1], 2);
        if (cwd && *cwd && chdir (cwd) < 0) {
            dprintf (2, "cannot change to the directory %s: %s\n", cwd, strerror (errno));
            _exit (127);
        }
        execvpe (argv [0], argv, envp);
        dprintf (2, "cannot run %s: %s\n", argv [0], strerror (errno));
        _exit (127);
    }
    if (!rc && pid < 0)
        rc = ufo_error_set (err, UFO_E_IO, "MCP server %s: fork: %s", self->name, strerror (errno));
    s_close (&in [0]);
    s_close (&out [1]);
    s_close (&er [1]);
    if (rc) {
        s_close (&in [1]);
        s_close (&out [0]);
        s_close (&er [0]);
    }
    else {
        setpgid (pid, pid);             //  also from here: no race with kill (-pid)
        self->pid = pid;
        self->in_fd = in [1];
        self->out_fd = out [0];
        self->err_fd = er [0];
        fcntl (self->in_fd, F_SETFL, fcntl (self->in_fd, F_GETFL) | O_NONBLOCK);
        fcntl (self->out_fd, F_SETFL, fcntl (self->out_fd, F_GETFL) | O_NONBLOCK);
        fcntl (self->err_fd, F_SETFL, fcntl (self->err_fd, F_GETFL) | O_NONBLOCK);
        ufo_buf_reset (&self->outq);
        self->outq_off = 0;
        ufo_buf_reset (&self->line);
        ufo_buf_reset (&self->errline);
        self->skipping = false;
        self->last_stderr [0] = 0;
    }
    for (size_t i = 0; i < k; i++)
        free (envp [i]);
    free (envp);
    free (argv);
    return rc;
}

void
ufo_mcp_flush_ (ufo_mcp_t *self)
{
    while (self->in_fd >= 0 && self->outq_off < self->outq.len) {
        ssize_t n = write (self->in_fd, self->outq.data + self->outq_off, self->outq.len - self->outq_off);
        if (n > 0)
            self->outq_off += (size_t) n;
        else {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EAGAIN && !self->dead_pending) {
                self->dead_pending = true;
                snprintf (self->dead_why, sizeof self->dead_why, "stopped reading its input (%s)",
                          strerror (errno));
            }
            break;
        }
    }
    if (self->outq_off == self->outq.len) {
        ufo_buf_reset (&self->outq);
        self->outq_off = 0;
    }
}

//  The oversized line ended: fail the request it answered (found by its id near the
//  start or the end of the line), else the only request in flight.
static void
s_oversized (ufo_mcp_t *self)
{
    ufo_mcp_req_t *r = NULL;
    const char *parts [2] = { self->head, self->tail };
    size_t lens [2] = { self->headlen, self->taillen };
    for (int p = 0; p < 2 && !r; p++) {
        for (size_t i = 0; i + 5 < lens [p] && !r; i++)
            if (!memcmp (parts [p] + i, "\"id\":", 5)) {
                size_t j = i + 5;
                while (j < lens [p] && parts [p][j] == ' ')
                    j++;
                if (j < lens [p] && isdigit ((unsigned char) parts [p][j]))
                    r = ufo_mcp_req_take_ (self, strtoll (parts [p] + j, NULL, 10));
            }
    }
    if (!r && self->reqs && !self->reqs->next)
        r = ufo_mcp_req_take_ (self, self->reqs->id);
    ufo_warn ("MCP %s: discarded a message of %zu bytes (limit %zu)", self->name, self->skipped,
              self->max_message);
    if (r)
        ufo_mcp_req_fail_ (self, r, UFO_E_TOO_LARGE,
                    "MCP server %s: the reply to %s is larger than the %zu-byte limit (%zu bytes); discarded",
                    self->name, r->method, self->max_message, self->skipped);
}

static void
s_tail_push (ufo_mcp_t *self, const char *data, size_t len)
{
    size_t cap = sizeof self->tail;
    if (len >= cap) {
        memcpy (self->tail, data + len - cap, cap);
        self->taillen = cap;
        return;
    }
    size_t keep = self->taillen + len > cap ? cap - len : self->taillen;
    memmove (self->tail, self->tail + self->taillen - keep, keep);
    memcpy (self->tail + keep, data, len);
    self->taillen = keep + len;
}

static void
s_stdout_data (ufo_mcp_t *self, const char *data, size_t len)
{
    unsigned gen = self->gen;
    while (len && gen == self->gen) {
        const char *nl = memchr (data, '\n', len);
        size_t chunk = nl ? (size_t) (nl - data) : len;
        if (self->skipping) {
            self->skipped += chunk;
            s_tail_push (self, data, chunk);
        }
        else
        if (self->line.len + chunk > self->max_message) {
            self->skipping = true;
            self->skipped = self->line.len + chunk;
            self->headlen = self->line.len < sizeof self->head ? self->line.len : sizeof self->head;
            memcpy (self->head, self->line.data, self->headlen);
            if (self->headlen < sizeof self->head) {
                size_t more = chunk < sizeof self->head - self->headlen ? chunk : sizeof self->head - self->headlen;
                memcpy (self->head + self->headlen, data, more);
                self->headlen += more;
            }
            self->taillen = 0;
            s_tail_push (self, data, chunk);
            ufo_buf_reset (&self->line);
        }
        else
            ufo_buf_append (&self->line, data, chunk);
        if (!nl)
            break;
        if (self->skipping) {
            self->skipping = false;
            s_oversized (self);
        }
        else {
            ufo_buf_t line = self->line;
            ufo_buf_init (&self->line);
            ufo_mcp_on_text_ (self, line.data ? line.data : "", line.len);
            ufo_buf_free (&line);
        }
        data += chunk + 1;
        len -= chunk + 1;
    }
}

static void
s_stderr_data (ufo_mcp_t *self, const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (data [i] == '\n' || self->errline.len >= 1000) {
            ufo_buf_putc (&self->errline, 0);
            ufo_info ("MCP %s stderr: %s", self->name, self->errline.data);
            if (self->errline.len > 1)
                snprintf (self->last_stderr, sizeof self->last_stderr, "%s", self->errline.data);
            ufo_buf_reset (&self->errline);
            if (data [i] == '\n')
                continue;
        }
        ufo_buf_putc (&self->errline, data [i]);
    }
}

void
ufo_mcp_stdio_io_ (ufo_mcp_t *self)
{
    unsigned gen = self->gen;
    char buf [65536];
    for (int rounds = 0; self->err_fd >= 0 && rounds < 16; rounds++) {
        ssize_t n = read (self->err_fd, buf, sizeof buf);
        if (n > 0)
            s_stderr_data (self, buf, (size_t) n);
        else {
            if (n == 0)
                s_close (&self->err_fd);
            break;
        }
    }
    for (int rounds = 0; self->out_fd >= 0 && rounds < 32 && gen == self->gen; rounds++) {
        ssize_t n = read (self->out_fd, buf, sizeof buf);
        if (n > 0)
            s_stdout_data (self, buf, (size_t) n);
        else {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                //  the server is gone (or closed its output): read the rest of its stderr
                for (int r = 0; self->err_fd >= 0 && r < 16; r++) {
                    ssize_t m = read (self->err_fd, buf, sizeof buf);
                    if (m <= 0)
                        break;
                    s_stderr_data (self, buf, (size_t) m);
                }
                s_close (&self->in_fd);
                char how [128];
                s_reap (self, 100, how, sizeof how);
                s_close (&self->out_fd);
                s_close (&self->err_fd);
                if (!self->dead_pending) {
                    self->dead_pending = true;
                    if (self->last_stderr [0])
                        snprintf (self->dead_why, sizeof self->dead_why, "%s (its last words: %.200s)",
                                  how, self->last_stderr);
                    else
                        snprintf (self->dead_why, sizeof self->dead_why, "%s", how);
                }
            }
            break;
        }
    }
    if (gen == self->gen)
        ufo_mcp_flush_ (self);
}

//  --- HTTP transport --------------------------------------------------------------------------

//  Parses an SSE stream: each event's data lines, joined, is one message.
static void
s_sse (ufo_mcp_t *self, const char *body, size_t len)
{
    ufo_buf_t data;
    ufo_buf_init (&data);
    unsigned gen = self->gen;
    const char *p = body, *end = body + len;
    while (p <= end && gen == self->gen) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        const char *stop = nl ? nl : end;
        size_t l = (size_t) (stop - p);
        if (l && p [l - 1] == '\r')
            l--;
        if (l == 0) {
            if (data.len)
                ufo_mcp_on_text_ (self, data.data, data.len);
            ufo_buf_reset (&data);
        }
        else
        if (l >= 5 && !memcmp (p, "data:", 5)) {
            const char *v = p + 5;
            size_t vl = l - 5;
            if (vl && *v == ' ')
                v++, vl--;
            if (data.len)
                ufo_buf_putc (&data, '\n');
            ufo_buf_append (&data, v, vl);
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (data.len && gen == self->gen)
        ufo_mcp_on_text_ (self, data.data, data.len);
    ufo_buf_free (&data);
}

static void
s_on_http (const ufo_http_result_t *res, void *arg)
{
    ufo_mcp_req_t *req = arg;
    ufo_mcp_t *self = req->owner;
    int64_t id = req->id;
    req->xfer = 0;
    if (!ufo_mcp_req_find_ (self, id))
        return;
    if (res->transport) {
        char why [400];
        snprintf (why, sizeof why, "is unreachable at %s: %s", ufo_value_map_str (self->spec, "url", ""),
                  res->error);
        if (res->body_overflow) {
            ufo_mcp_req_t *r = ufo_mcp_req_take_ (self, id);
            ufo_mcp_req_fail_ (self, r, UFO_E_TOO_LARGE, "MCP server %s: the reply to %s is larger than the %zu-byte limit",
                        self->name, r->method, self->max_message);
        }
        else
        if (self->state == UFO_MCP_STARTING) {
            self->dead_pending = true;
            snprintf (self->dead_why, sizeof self->dead_why, "%s", why);
        }
        else
            ufo_mcp_req_fail_ (self, ufo_mcp_req_take_ (self, id), UFO_E_UNAVAILABLE, "MCP server %s %s", self->name, why);
        return;
    }
    if (res->status == 404 && self->session [0]) {
        self->dead_pending = true;
        snprintf (self->dead_why, sizeof self->dead_why, "forgot our session (HTTP 404)");
        return;
    }
    if (res->status < 200 || res->status >= 300) {
        char ex [UFO_MCP_EXCERPT + 8];
        ufo_mcp_excerpt_ (ex, sizeof ex, res->body, res->body_len);
        ufo_mcp_req_t *r = ufo_mcp_req_take_ (self, id);
        if (!strcmp (r->method, "initialize")) {
            free (r);
            self->dead_pending = true;
            snprintf (self->dead_why, sizeof self->dead_why, "answered initialize with HTTP %ld: %s",
                      res->status, ex);
            return;
        }
        ufo_mcp_req_fail_ (self, r, UFO_E_UNAVAILABLE, "MCP server %s answered %s with HTTP %ld: %s", self->name,
                    r->method, res->status, ex);
        return;
    }
    char session [256];
    if (ufo_http_header (res, "mcp-session-id", session, sizeof session) > 0)
        snprintf (self->session, sizeof self->session, "%s", session);
    char type [128];
    ufo_http_header (res, "content-type", type, sizeof type);
    if (!strncasecmp (type, "text/event-stream", 17))
        s_sse (self, res->body, res->body_len);
    else
        ufo_mcp_on_text_ (self, res->body, res->body_len);
    ufo_mcp_req_t *r = ufo_mcp_req_take_ (self, id);
    if (r) {
        if (!strcmp (r->method, "initialize") || !strcmp (r->method, "tools/list")) {
            free (r);
            self->dead_pending = true;
            snprintf (self->dead_why, sizeof self->dead_why, "sent no JSON-RPC response in its HTTP reply");
        }
        else
            ufo_mcp_req_fail_ (self, r, UFO_E_SYNTAX, "MCP server %s sent no JSON-RPC response to %s in its HTTP reply",
                        self->name, r->method);
    }
}

static void
s_on_http_note (const ufo_http_result_t *res, void *arg)
{
    ufo_mcp_t *self = arg;
    if (res->transport || res->status >= 300)
        ufo_debug ("MCP %s: a notification POST failed: %s (HTTP %ld)", self->name, res->error, res->status);
}

int
ufo_mcp_http_post_ (ufo_mcp_t *self, const ufo_value_t *msg, ufo_mcp_req_t *req, ufo_error_t *err)
{
    if (!self->client)
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "MCP server %s is not connected", self->name);
    const ufo_value_t *hdrs = ufo_value_map_get (self->spec, "headers");
    size_t nh = ufo_value_size (hdrs);
    char **lines = ufo_calloc (nh + 6, sizeof (char *));
    size_t k = 0;
    lines [k++] = ufo_strdup ("Content-Type: application/json");
    lines [k++] = ufo_strdup ("Accept: application/json, text/event-stream");
    if (self->session [0] && asprintf (&lines [k++], "Mcp-Session-Id: %s", self->session) < 0)
        abort ();
    if (self->protocol [0] && asprintf (&lines [k++], "MCP-Protocol-Version: %s", self->protocol) < 0)
        abort ();
    for (size_t i = 0; i < nh; i++)
        if (asprintf (&lines [k++], "%s: %s", ufo_value_map_key_at (hdrs, i),
                      ufo_value_str (ufo_value_map_value_at (hdrs, i))) < 0)
            abort ();
    size_t len = 0;
    char *body = ufo_json_dump (msg, UFO_JSON_COMPACT, &len);
    long timeout = req ? (long) req->timeout_ms + 2000 : 10000;
    int64_t id = ufo_http_post (self->client, ufo_value_map_str (self->spec, "url", ""),
                                (const char *const *) lines, body, len, timeout, self->max_message + 65536,
                                req ? s_on_http : s_on_http_note, req ? (void *) req : (void *) self, err);
    free (body);
    for (size_t i = 0; i < k; i++)
        free (lines [i]);
    free (lines);
    if (id < 0)
        return -1;
    if (req)
        req->xfer = id;
    return 0;
}

