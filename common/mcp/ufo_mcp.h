/*  ufo_mcp.h - a client of one MCP server (Model Context Protocol, JSON-RPC 2.0), driven
    by the caller's event loop.

    Transports: "stdio" (the server is our child process; newline-delimited JSON-RPC on its
    stdin/stdout; each line it writes on stderr goes to our log) and "http" (Streamable
    HTTP: every message is a POST, the reply is JSON or an SSE stream, the server's
    Mcp-Session-Id is sent back on every later request).

    The lifecycle runs by itself once the client is made: initialize (protocol version
    negotiation), notifications/initialized, then tools/list page by page; the client is
    READY when the tool list is complete. A server that dies (exits, closes its output,
    forgets the HTTP session, never answers initialize) fails the requests in flight with
    a clear error and is restarted once; the second time the client is FAILED for good.
    Every request has a deadline; when it passes, the server is sent
    notifications/cancelled and the request fails with UFO_E_TIMEOUT. Server requests are
    answered (ping: {}, anything else: method not found); progress and log notifications
    reach the request's progress callback and our log.

    Like ufo_http: ask ufo_mcp_fds which descriptors to poll and ufo_mcp_timeout how long
    you may sleep, then call ufo_mcp_process. Nothing here blocks (ufo_mcp_destroy waits
    at most ~200 ms for a child to exit before killing it). */
#ifndef UFO_MCP_H_INCLUDED
#define UFO_MCP_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_value.h"

typedef struct _ufo_mcp_t ufo_mcp_t;

typedef enum {
    UFO_MCP_STARTING = 0,           //  starting, initializing or listing tools
    UFO_MCP_READY,                  //  tools listed, requests accepted
    UFO_MCP_FAILED                  //  gave up (see ufo_mcp_error)
} ufo_mcp_state_t;

//  The protocol versions we speak, newest first (the first is what we ask for).
extern const char *const ufo_mcp_versions [];

typedef struct {
    int64_t timeout_ms;             //  deadline of each request (0: 30 s)
    size_t max_message;             //  largest message accepted from the server (0: 4 MiB)
} ufo_mcp_options_t;

//  A reply: result (borrowed for the call) on success, else err (code, message). Called
//  exactly once per accepted request unless the request was cancelled by the caller or the
//  client destroyed. The callback may make or cancel requests.
typedef void (ufo_mcp_reply_fn) (void *arg, const ufo_value_t *result, const ufo_error_t *err);

//  A progress notification for a request (total < 0 when unknown; message may be NULL).
typedef void (ufo_mcp_progress_fn) (void *arg, double progress, double total, const char *message);

//  ufo_mcp_spec_check (ufo_mcp_spec.h, config layer) checks a server definition.

//  Makes a client of the server spec (copied) and starts it (spawn or first POST).
//  Returns NULL with err when the spec is invalid or the child cannot be spawned at all.
ufo_mcp_t *ufo_mcp_new (const ufo_value_t *spec, const ufo_mcp_options_t *options, ufo_error_t *err);

//  Stops the server (stdin closed, SIGTERM, SIGKILL after ~200 ms), fails nothing (no
//  callbacks), frees everything. Sets *self_p to NULL. Safe with NULL.
void ufo_mcp_destroy (ufo_mcp_t **self_p);

//  The server's name from its spec.
const char *ufo_mcp_name (const ufo_mcp_t *self);

ufo_mcp_state_t ufo_mcp_state (const ufo_mcp_t *self);

//  Why the client is FAILED, or what happened to it last (a restart), or "".
const char *ufo_mcp_error (const ufo_mcp_t *self);

//  Times the server was restarted (0 or 1).
int ufo_mcp_restarts (const ufo_mcp_t *self);

//  The negotiated protocol version ("" before initialize answered).
const char *ufo_mcp_protocol (const ufo_mcp_t *self);

//  The tools ({name, description, inputSchema, ...} maps, as listed; borrowed; an empty list
//  before READY). Tools whose entry is not an object with a string name are dropped (and logged).
const ufo_value_t *ufo_mcp_tools (const ufo_mcp_t *self);

//  Number of tools/list pages fetched for the current list.
int ufo_mcp_list_pages (const ufo_mcp_t *self);

//  Sends request `method` with params (ownership taken, may be NULL) when READY. With a
//  progress callback, params._meta.progressToken is set to the request id. timeout_ms 0:
//  the client's. Returns the request id (> 0), or -1 with err (not ready, FAILED).
int64_t ufo_mcp_request (ufo_mcp_t *self, const char *method, ufo_value_t **params_p,
                         int64_t timeout_ms, ufo_mcp_progress_fn *progress,
                         ufo_mcp_reply_fn *reply, void *arg, ufo_error_t *err);

//  Calls tool `name` with arguments (a map; borrowed, copied). As ufo_mcp_request.
int64_t ufo_mcp_call_tool (ufo_mcp_t *self, const char *name, const ufo_value_t *arguments,
                           int64_t timeout_ms, ufo_mcp_progress_fn *progress,
                           ufo_mcp_reply_fn *reply, void *arg, ufo_error_t *err);

//  Cancels request id: the server gets notifications/cancelled with reason; the reply
//  callback is not called. Returns 0, or -1 if id is not in flight.
int ufo_mcp_cancel (ufo_mcp_t *self, int64_t id, const char *reason);

//  Descriptors to poll (events UFO_HTTP_IN / UFO_HTTP_OUT); returns how many there are
//  (may exceed max: then only max were copied).
size_t ufo_mcp_fds (const ufo_mcp_t *self, ufo_http_fd_t *fds, size_t max);

//  Milliseconds until ufo_mcp_process must run even with nothing ready; -1: no timer.
int ufo_mcp_timeout (const ufo_mcp_t *self);

//  Reads and writes what is ready (fds with revents, from a poll of ufo_mcp_fds), fires
//  deadlines, calls the callbacks, restarts a dead server. fds may be NULL with n = 0.
void ufo_mcp_process (ufo_mcp_t *self, const ufo_http_fd_t *fds, size_t n);

#endif
