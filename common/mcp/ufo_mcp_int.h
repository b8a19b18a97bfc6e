/*  ufo_mcp_int.h - private to ufo_mcp.c (JSON-RPC, lifecycle) and ufo_mcp_io.c (the stdio
    and Streamable HTTP transports): the client's state and what each half calls in the other. */
#ifndef UFO_MCP_INT_H_INCLUDED
#define UFO_MCP_INT_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_http.h"
#include "ufo_mcp.h"

#define UFO_MCP_DEFAULT_TIMEOUT_MS 30000
#define UFO_MCP_DEFAULT_MAX        (4u * 1024 * 1024)
#define UFO_MCP_MAX_PAGES          100        //  tools/list pages before we call the server broken
#define UFO_MCP_MAX_OUTQ           (16u * 1024 * 1024)
#define UFO_MCP_EXCERPT            120

typedef struct _ufo_mcp_req_t ufo_mcp_req_t;
struct _ufo_mcp_req_t {
    ufo_mcp_t *owner;
    int64_t id;
    char method [48];
    int64_t deadline_ms;
    int64_t timeout_ms;
    ufo_mcp_progress_fn *progress;
    ufo_mcp_reply_fn *reply;
    void *arg;
    int64_t xfer;                   //  http: the POST carrying it (0 none)
    ufo_mcp_req_t *next;
};

struct _ufo_mcp_t {
    ufo_value_t *spec;
    char name [64];
    bool http;
    int64_t timeout_ms;
    size_t max_message;
    ufo_mcp_state_t state;
    char error [768];
    int restarts;
    unsigned gen;                   //  bumped at every (re)start
    char protocol [32];
    ufo_value_t *tools;             //  the complete list (READY)
    ufo_value_t *listing;           //  pages gathered so far
    int pages, listed_pages;
    int64_t next_id;
    ufo_mcp_req_t *reqs;
    bool dead_pending;              //  the transport died: handle it in process
    char dead_why [512];
    //  stdio
    pid_t pid;
    int in_fd, out_fd, err_fd;
    ufo_buf_t outq;
    size_t outq_off;
    ufo_buf_t line;                 //  partial line from stdout
    bool skipping;                  //  discarding an oversized line
    size_t skipped;
    char head [160], tail [160];
    size_t headlen, taillen;
    ufo_buf_t errline;
    char last_stderr [256];
    char garbage [UFO_MCP_EXCERPT + 8];   //  the last non-JSON-RPC output
    //  http
    ufo_http_t *client;
    char session [256];
};


//  In ufo_mcp.c
int64_t ufo_mcp_now_ (void);
//  A printable excerpt of text (control characters as '?') into out[size].
void ufo_mcp_excerpt_ (char *out, size_t size, const char *text, size_t len);
//  The request with this id, left in (find) or taken out of (take) the list; NULL if none.
ufo_mcp_req_t *ufo_mcp_req_find_ (ufo_mcp_t *self, int64_t id);
ufo_mcp_req_t *ufo_mcp_req_take_ (ufo_mcp_t *self, int64_t id);
//  Completes a taken request with an error (its reply callback runs) and frees it.
void ufo_mcp_req_fail_ (ufo_mcp_t *self, ufo_mcp_req_t *r, int code, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));
//  One JSON text from the server (a line, an SSE event's data, an HTTP body).
void ufo_mcp_on_text_ (ufo_mcp_t *self, const char *text, size_t len);

//  In ufo_mcp_io.c
//  Starts the child process of a stdio server. Returns 0, or -1 with err.
int ufo_mcp_spawn_ (ufo_mcp_t *self, ufo_error_t *err);
//  Stops the transport: closes the child's stdin, reaps it (SIGTERM, SIGKILL after grace_ms),
//  or drops the HTTP client and the session id.
void ufo_mcp_stop_transport_ (ufo_mcp_t *self, int grace_ms);
//  Writes what is queued for the child's stdin, as far as it takes it.
void ufo_mcp_flush_ (ufo_mcp_t *self);
//  Reads the child's stdout and stderr, handles the lines, notices its end; then flushes.
void ufo_mcp_stdio_io_ (ufo_mcp_t *self);
//  POSTs msg to an http server; req (may be NULL for a notification) gets the reply.
int ufo_mcp_http_post_ (ufo_mcp_t *self, const ufo_value_t *msg, ufo_mcp_req_t *req, ufo_error_t *err);

#endif
