/*  ufo_mcp_server_http.c - Streamable HTTP for `ufo mcp-server --http` (docs/AGENTS.md):
    POST /mcp with one JSON-RPC message per request and connection, Mcp-Session-Id from
    initialize, JSON replies, an SSE stream for run_session and the desktop queries. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include "ufo_mcp_server.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

//  --- Streamable HTTP ------------------------------------------------------------------------

volatile sig_atomic_t ufo_mcps_stop = 0;

void
ufo_mcps_on_stop (int sig)
{
    UFO_UNUSED (sig);
    ufo_mcps_stop = 1;
}

#define S_MAX_CONNS 32

static void
s_http_respond (ufo_mcps_conn_t *c, int status, const char *reason, const char *type, const char *extra,
                const char *body, size_t len)
{
    ufo_buf_printf (&c->out, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: %zu\r\n%s%s%s%s\r\n",
                    status, reason, len, type ? "Content-Type: " : "", type ? type : "", type ? "\r\n" : "",
                    extra ? extra : "");
    ufo_buf_append (&c->out, body, len);
    c->responded = true;
    c->closing = true;
}

static void
s_http_error (ufo_mcps_conn_t *c, int status, const char *reason, const char *message)
{
    char body [400];
    int n = snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"%s\"}}",
                      message);
    s_http_respond (c, status, reason, "application/json", NULL, body, (size_t) n);
}

//  The value of header name (any case) in the header block, into out; false when absent.
static bool
s_header (const char *head, const char *name, char *out, size_t size)
{
    size_t nlen = strlen (name);
    for (const char *line = strstr (head, "\r\n"); line && line [2]; line = strstr (line + 2, "\r\n")) {
        const char *l = line + 2;
        if (!strncasecmp (l, name, nlen) && l [nlen] == ':') {
            const char *v = l + nlen + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *end = strstr (v, "\r\n");
            size_t vlen = end ? (size_t) (end - v) : strlen (v);
            if (vlen >= size)
                vlen = size - 1;
            memcpy (out, v, vlen);
            out [vlen] = 0;
            return true;
        }
    }
    return false;
}

static bool
s_session_known (ufo_mcps_t *self, const char *id)
{
    for (size_t i = 0; *id && i < UFO_ARRAY_SIZE (self->sessions); i++)
        if (!strcmp (self->sessions [i], id))
            return true;
    return false;
}

//  One complete request on c (headers end at head_len, the body follows).
static void
s_http_request (ufo_mcps_t *self, ufo_mcps_conn_t *c, size_t head_len, size_t body_len)
{
    char *head = ufo_strndup (c->in.data, head_len);
    const char *body = c->in.data + head_len;
    char method [16] = "", path [256] = "", session [64] = "", origin [256] = "";
    sscanf (head, "%15s %255s", method, path);
    s_header (head, "mcp-session-id", session, sizeof session);
    bool has_origin = s_header (head, "origin", origin, sizeof origin);
    free (head);
    char *q = strchr (path, '?');
    if (q)
        *q = 0;
    if (has_origin && strncmp (origin, "http://127.0.0.1", 16) && strncmp (origin, "http://localhost", 16)) {
        s_http_error (c, 403, "Forbidden", "origin not allowed");
        return;
    }
    if (strcmp (path, "/mcp")) {
        s_http_error (c, 404, "Not Found", "the MCP endpoint is /mcp");
        return;
    }
    if (!strcmp (method, "DELETE")) {
        for (size_t i = 0; i < UFO_ARRAY_SIZE (self->sessions); i++)
            if (*session && !strcmp (self->sessions [i], session))
                self->sessions [i][0] = 0;
        s_http_respond (c, 200, "OK", NULL, NULL, "", 0);
        return;
    }
    if (strcmp (method, "POST")) {
        s_http_respond (c, 405, "Method Not Allowed", NULL, "Allow: POST, DELETE\r\n", "", 0);
        return;
    }
    ufo_error_t err;
    ufo_json_limits_t limits = { .max_depth = 64 };
    ufo_value_t *msg = ufo_json_parse (body, body_len, &limits, &err);
    if (!msg) {
        char text [320];
        int n = snprintf (text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                          "\"message\":\"parse error\"}}");
        s_http_respond (c, 400, "Bad Request", "application/json", NULL, text, (size_t) n);
        ufo_value_destroy (&msg);
        return;
    }
    const char *m = ufo_value_map_str (msg, "method", "");
    bool init = !strcmp (m, "initialize");
    if (!init && !s_session_known (self, session)) {
        s_http_error (c, *session ? 404 : 400, *session ? "Not Found" : "Bad Request",
                      *session ? "unknown session" : "Mcp-Session-Id is required");
        ufo_value_destroy (&msg);
        return;
    }
    if (!ufo_value_map_has (msg, "id") || !*m) {
        ufo_mcps_on_message (self, msg);                   //  a notification or a response: 202, no body
        s_http_respond (c, 202, "Accepted", NULL, NULL, "", 0);
        ufo_value_destroy (&msg);
        return;
    }
    const char *tool = ufo_value_map_str (ufo_value_map_get (msg, "params"), "name", "");
    bool stream = !strcmp (m, "tools/call") && (!strcmp (tool, "run_session") || !strcmp (tool, "list_windows")
                                              || !strcmp (tool, "screenshot"));
    if (stream) {
        //  the answer comes when the session (or a device's desktop query) ends: an SSE
        //  stream, progress first
        ufo_buf_puts (&c->out, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/event-stream\r\n"
                               "Cache-Control: no-cache\r\n\r\n");
        c->sse = true;
        c->responded = true;
        ufo_mcps_sink = c;
        ufo_mcps_on_message (self, msg);
        ufo_mcps_sink = NULL;
        bool pending = false;
        for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++)
            pending |= self->calls [i].task [0] && self->calls [i].conn == c;
        c->closing = !pending;                      //  refused at once: the stream ends with it
        ufo_value_destroy (&msg);
        return;
    }
    ufo_buf_t reply;
    ufo_buf_init (&reply);
    ufo_mcps_capture = &reply;
    ufo_mcps_on_message (self, msg);
    ufo_mcps_capture = NULL;
    char extra [128] = "";
    if (init) {
        char id [40];
        ufo_cli_new_id (id, sizeof id, "mcp");
        size_t slot = 0;
        for (size_t i = 0; i < UFO_ARRAY_SIZE (self->sessions); i++)
            if (!self->sessions [i][0]) {
                slot = i;
                break;
            }
        snprintf (self->sessions [slot], sizeof self->sessions [slot], "%s", id);
        snprintf (extra, sizeof extra, "Mcp-Session-Id: %s\r\n", id);
    }
    s_http_respond (c, 200, "OK", "application/json", extra, reply.data ? reply.data : "", reply.len);
    ufo_buf_free (&reply);
    ufo_value_destroy (&msg);
}

//  Reads what c sent; handles a complete request.
static void
s_http_read (ufo_mcps_t *self, ufo_mcps_conn_t *c)
{
    char chunk [65536];
    ssize_t n = read (c->fd, chunk, sizeof chunk);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            c->closing = true, c->out.len = c->off;     //  gone: nothing more to send
        return;
    }
    if (c->responded)
        return;                                         //  one request per connection
    ufo_buf_append (&c->in, chunk, (size_t) n);
    ufo_buf_putc (&c->in, 0);
    c->in.len--;
    const char *end = strstr (c->in.data, "\r\n\r\n");
    if (!end) {
        if (c->in.len > 64 * 1024)
            s_http_error (c, 431, "Request Header Fields Too Large", "headers too large");
        return;
    }
    size_t head_len = (size_t) (end - c->in.data) + 4;
    char value [32] = "0";
    char *head = ufo_strndup (c->in.data, head_len);
    s_header (head, "content-length", value, sizeof value);
    free (head);
    char *stop = NULL;
    unsigned long long body_len = strtoull (value, &stop, 10);
    if (body_len > UFO_MCPS_MAX_LINE) {
        s_http_error (c, 413, "Payload Too Large", "message larger than 4 MiB");
        return;
    }
    if (c->in.len - head_len < body_len)
        return;                                         //  more to come
    s_http_request (self, c, head_len, (size_t) body_len);
}

void
ufo_mcps_conn_close (ufo_mcps_t *self, ufo_mcps_conn_t *c)
{
    for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++)
        if (self->calls [i].conn == c)
            self->calls [i].conn = NULL;                //  the session goes on; its result is dropped
    for (ufo_mcps_conn_t **p = &self->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    close (c->fd);
    ufo_buf_free (&c->in);
    ufo_buf_free (&c->out);
    free (c);
}

//  Opens the listening socket on "HOST:PORT" (PORT 0: any free one); writes the URL into url.
int
ufo_mcps_http_listen (ufo_mcps_t *self, const char *address, char *url, size_t size, ufo_error_t *err)
{
    char host [128] = "127.0.0.1";
    const char *colon = strrchr (address, ':');
    int port = atoi (colon ? colon + 1 : address);
    if (colon && colon != address)
        snprintf (host, sizeof host, "%.*s", (int) (colon - address), address);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    if (port < 0 || port > 65535 || inet_pton (AF_INET, host, &a.sin_addr) != 1)
        return ufo_error_set (err, UFO_E_INVALID, "--http wants IPV4:PORT, not '%s'", address);
    int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t len = sizeof a;
    if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) < 0 || listen (fd, 16) < 0
    ||  getsockname (fd, (struct sockaddr *) &a, &len) < 0) {
        if (fd >= 0)
            close (fd);
        return ufo_error_set (err, UFO_E_IO, "cannot listen on %s: %s", address, strerror (errno));
    }
    self->listen_fd = fd;
    snprintf (url, size, "http://%s:%d/mcp", host, ntohs (a.sin_port));
    return 0;
}

//  One turn of the HTTP loop: accept, read, write, close.
void
ufo_mcps_http_turn (ufo_mcps_t *self)
{
    struct pollfd fds [S_MAX_CONNS + 2];
    ufo_mcps_conn_t *conns [S_MAX_CONNS];
    size_t n = 0;
    fds [n++] = (struct pollfd) { .fd = self->listen_fd, .events = POLLIN };
    fds [n++] = (struct pollfd) { .fd = ufo_tasks_fd (self->tasks), .events = POLLIN };
    size_t k = 0;
    for (ufo_mcps_conn_t *c = self->conns; c && k < S_MAX_CONNS; c = c->next, k++) {
        conns [k] = c;
        fds [n++] = (struct pollfd) { .fd = c->fd, .events = (short) (POLLIN | (c->off < c->out.len ? POLLOUT : 0)) };
    }
    if (poll (fds, n, 200) < 0 && errno != EINTR)
        return;
    if (fds [0].revents & POLLIN) {
        int fd = accept4 (self->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        size_t count = 0;
        for (ufo_mcps_conn_t *c = self->conns; c; c = c->next)
            count++;
        if (fd >= 0 && count >= S_MAX_CONNS)
            close (fd);
        else
        if (fd >= 0) {
            ufo_mcps_conn_t *c = ufo_calloc (1, sizeof *c);
            c->fd = fd;
            c->next = self->conns;
            self->conns = c;
        }
    }
    for (size_t i = 0; i < k; i++) {
        ufo_mcps_conn_t *c = conns [i];
        if (fds [i + 2].revents & (POLLIN | POLLHUP | POLLERR))
            s_http_read (self, c);
    }
    for (ufo_value_t *ev = ufo_tasks_next (self->tasks, 0); ev; ev = ufo_tasks_next (self->tasks, 0)) {
        ufo_mcps_on_event (self, ev);
        ufo_value_destroy (&ev);
    }
    for (ufo_mcps_conn_t *c = self->conns, *next; c; c = next) {
        next = c->next;
        while (c->off < c->out.len) {
            ssize_t w = send (c->fd, c->out.data + c->off, c->out.len - c->off, MSG_NOSIGNAL);
            if (w <= 0) {
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                    c->off = c->out.len, c->closing = true;
                break;
            }
            c->off += (size_t) w;
        }
        if (c->closing && c->off >= c->out.len)
            ufo_mcps_conn_close (self, c);
    }
}

