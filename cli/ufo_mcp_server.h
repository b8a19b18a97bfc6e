/*  ufo_mcp_server.h - private to `ufo mcp-server`: the server's state shared by its JSON-RPC
    and tools half (ufo_cmd_mcp_server.c) and its Streamable HTTP transport
    (ufo_mcp_server_http.c). */
#ifndef UFO_MCP_SERVER_H_INCLUDED
#define UFO_MCP_SERVER_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_tasks.h"

#define UFO_MCPS_MAX_LINE (4u * 1024 * 1024)
#define UFO_MCPS_MAX_CALLS 64

//  Streamable HTTP: one connection, one request (Connection: close). A request whose answer
//  takes time (run_session) gets an SSE stream: progress notifications, then the result.
typedef struct _ufo_mcps_conn_t ufo_mcps_conn_t;
struct _ufo_mcps_conn_t {
    int fd;
    ufo_buf_t in, out;
    size_t off;                     //  bytes of out sent
    bool responded;                 //  a whole response is in out
    bool sse;                       //  out is an open SSE stream
    bool closing;                   //  close once out is sent
    ufo_mcps_conn_t *next;
};

typedef struct {
    char task [33];                 //  ufo_tasks id ("" free slot)
    ufo_value_t *id;                //  the JSON-RPC id of the tools/call
    ufo_value_t *token;             //  progressToken or NULL
    char session [128], task_name [160];
    int steps;
    bool yes;
    bool dropped;                   //  notifications/cancelled: the task is cancelled, its events
                                    //  and result are dropped (no response for the call's id)
    ufo_mcps_conn_t *conn;          //  HTTP: the SSE stream of the call (NULL: stdio or gone)
    //  a desktop query (list_windows, screenshot) of a device, not a session
    bool desktop;
    char op [16];                   //  "windows" | "screenshot"
    char device [160];
    double timeout_s;
} ufo_mcps_call_t;

typedef struct {
    ufo_config_t *config;
    char endpoint [512], log_root [PATH_MAX];
    ufo_tasks_t *tasks;
    ufo_desktop_t *desktop;         //  opened on first use
    ufo_mcps_call_t calls [UFO_MCPS_MAX_CALLS];
    char protocol [32];
    //  Streamable HTTP
    int listen_fd;
    ufo_mcps_conn_t *conns;
    char sessions [8][40];          //  Mcp-Session-Id values handed out
} ufo_mcps_t;

//  Where replies are written: stdout (stdio), the SSE stream of a connection, or a captured reply.
extern bool ufo_mcps_http_mode;
extern ufo_mcps_conn_t *ufo_mcps_sink;
extern ufo_buf_t *ufo_mcps_capture;

//  Replies (ownership of the values taken), written where ufo_mcps_sink / _capture say: a
//  JSON-RPC result; a tools/call result with one text item, optional structured content and
//  isError; a value as JSON text plus structured content (a non-map is wrapped as {"items"}).
void ufo_mcps_reply (const ufo_value_t *id, ufo_value_t **result_p);
void ufo_mcps_tool_result (const ufo_value_t *id, const char *text, ufo_value_t **structured_p, bool is_error);
//  The same with a PNG (png[0..len), NULL: none) as image content before the text.
void ufo_mcps_tool_reply (const ufo_value_t *id, const void *png, size_t len, const char *text,
                          ufo_value_t **structured_p, bool is_error);
void ufo_mcps_tool_json (const ufo_value_t *id, ufo_value_t **value_p);

//  The broker's dispatch.state (waits at most 5 s; caller owns), or NULL with err.
ufo_value_t *ufo_mcps_state (ufo_mcps_t *self, ufo_error_t *err);

//  The devices of a dispatch.state: a new map device -> list of the services its workers serve
//  (a service once per worker; workers without a device are left out).
ufo_value_t *ufo_mcps_devices (const ufo_value_t *state);

//  A free call slot (to fill, task first), or NULL when UFO_MCPS_MAX_CALLS are in flight.
ufo_mcps_call_t *ufo_mcps_call_slot (ufo_mcps_t *self);

//  Frees what a call slot holds and marks it free.
void ufo_mcps_call_free (ufo_mcps_call_t *c);

//  In ufo_mcp_server_desktop.c: the tools list_windows and screenshot ({device?, xid?,
//  timeout_s?}): a query task to service "desktop" of the device (docs/PROTOCOL.md 4.5),
//  answered when its result comes (ufo_mcps_desktop_event), or at once with a clear error
//  (no such device, no desktop agent there); this machine's $DISPLAY only as a fallback when
//  no device is named and none on the bus serves desktop queries.
void ufo_mcps_desktop_tool (ufo_mcps_t *self, const ufo_value_t *id, const char *tool, const ufo_value_t *args);
//  The result event of a desktop query call c: answers it and frees the slot.
void ufo_mcps_desktop_event (ufo_mcps_t *self, ufo_mcps_call_t *c, const ufo_value_t *ev);

//  One JSON-RPC message from the client; replies go where ufo_mcps_sink / _capture say.
void ufo_mcps_on_message (ufo_mcps_t *self, const ufo_value_t *msg);

//  An event of a session task (progress, question, result), to the call that started it.
void ufo_mcps_on_event (ufo_mcps_t *self, const ufo_value_t *ev);

//  In ufo_mcp_server_http.c: listens on "IPV4:PORT" (0: any port), the URL into url; 0 or -1 with err.
int ufo_mcps_http_listen (ufo_mcps_t *self, const char *address, char *url, size_t size, ufo_error_t *err);
//  One turn of the HTTP loop (accept, read, answer, write, close), at most 200 ms.
void ufo_mcps_http_turn (ufo_mcps_t *self);
//  Closes a connection (a session it streams goes on; its result is dropped).
void ufo_mcps_conn_close (ufo_mcps_t *self, ufo_mcps_conn_t *c);
//  Set by SIGINT / SIGTERM in HTTP mode.
extern volatile sig_atomic_t ufo_mcps_stop;
void ufo_mcps_on_stop (int sig);


#endif
