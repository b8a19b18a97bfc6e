/*  ufo_mcp_hub.h - the MCP servers of one agent: started from the configuration
    (USE_MCP, MCP_SERVERS, MCP_TOOL_TIMEOUT, MCP_PREFERRED_APPS, MCP_FALLBACK_TO_UI), their
    tools described for the prompt, the model's arguments checked against each tool's input
    schema, and tool calls as operations the agent's loop polls (like desktop actions).

    A tool is named "<server>.<tool>" towards the model. MCP_SERVERS is
        {"APP_AGENT": {"*": [server, ...], "<application>": [server, ...]},
         "HOST_AGENT": {"*": [server, ...]}}
    where a server is as ufo_mcp_spec_check says; an agent gets the servers of "*" and those
    of its application (names compared without case). */
#ifndef UFO_MCP_HUB_H_INCLUDED
#define UFO_MCP_HUB_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_mcp.h"
#include "ufo_value.h"

typedef struct _ufo_mcp_hub_t ufo_mcp_hub_t;
typedef struct _ufo_mcp_op_t ufo_mcp_op_t;

//  Most characters of a tool's result given to the model (the rest is cut, and says so).
#define UFO_MCP_RESULT_MAX 4000

//  ufo_mcp_servers_check (ufo_mcp_spec.h, config layer) checks an MCP_SERVERS value.

//  Starts the servers of agent block `agent` ("APP_AGENT" / "HOST_AGENT") for application
//  app (NULL: only "*"); only: just the server of that name (NULL: all). With USE_MCP off,
//  or none configured, the hub has no server. A server that cannot even be forked is left
//  out (logged); one whose command does not run is FAILED (ufo_mcp_hub_report says why). Returns NULL with err only when `only` names no
//  configured server. Never blocks.
ufo_mcp_hub_t *ufo_mcp_hub_new (const ufo_config_t *config, const char *agent, const char *app,
                                const char *only, ufo_error_t *err);

//  Starts the servers of a list of definitions (checked by ufo_mcp_servers_check already) as a
//  hub for application app (NULL: none), with the other settings from config. Never NULL.
ufo_mcp_hub_t *ufo_mcp_hub_new_servers (const ufo_config_t *config, const ufo_value_t *servers,
                                        const char *app);

//  Stops every server, cancels every operation's call (the operations stay valid until
//  destroyed and end as failed). Sets *self_p to NULL. Safe with NULL.
void ufo_mcp_hub_destroy (ufo_mcp_hub_t **self_p);

//  Number of servers, and server i (borrowed).
size_t ufo_mcp_hub_size (const ufo_mcp_hub_t *self);
ufo_mcp_t *ufo_mcp_hub_server (const ufo_mcp_hub_t *self, size_t i);

//  True when every server is READY or FAILED.
bool ufo_mcp_hub_settled (const ufo_mcp_hub_t *self);

//  MCP_PREFERRED_APPS names this hub's application; MCP_FALLBACK_TO_UI.
bool ufo_mcp_hub_preferred (const ufo_mcp_hub_t *self);
bool ufo_mcp_hub_fallback (const ufo_mcp_hub_t *self);

//  The tools for the prompt: a list of {"function": "srv.tool", "description", "args"}
//  ("args" a compact text of the input schema), READY servers only; tools whose schema is
//  broken are left out. Caller owns.
ufo_value_t *ufo_mcp_hub_prompt_tools (const ufo_mcp_hub_t *self);

//  A status list, one map per server: {"name", "state", "error", "restarts", "protocol",
//  "tools": [{"name", "description", "args", "schema_error"?}]}. Caller owns.
ufo_value_t *ufo_mcp_hub_report (const ufo_mcp_hub_t *self);

//  True when function has the form of a tool name ("<server>.<tool>").
bool ufo_mcp_hub_is_tool_name (const char *function);

//  Checks that function names a tool of a READY server and args (a map or NULL) satisfy its
//  input schema (types, required, enum, nested objects and arrays). Returns 0, or -1 with
//  err saying what to fix.
int ufo_mcp_hub_check (const ufo_mcp_hub_t *self, const char *function, const ufo_value_t *args,
                       ufo_error_t *err);

//  Checks value against a JSON schema (the subset above). Returns 0, or -1 with err naming
//  the argument path. A schema that is not an object is an error too.
int ufo_mcp_schema_check (const ufo_value_t *schema, const ufo_value_t *value, ufo_error_t *err);

//  Starts a call of function with args (checked first). Never NULL: a call that cannot start
//  is an operation that is already done and failed.
ufo_mcp_op_t *ufo_mcp_hub_call (ufo_mcp_hub_t *self, const char *function, const ufo_value_t *args);

//  True once the call has ended.
bool ufo_mcp_op_done (const ufo_mcp_op_t *self);

//  The result once done (caller owns; NULL before, or when taken): {"success": bool,
//  "text": the tool's text content (<= UFO_MCP_RESULT_MAX chars), "error": why it failed,
//  "is_error": the tool said isError, "structured": structuredContent if any, "progress":
//  notifications received, "truncated": bool, "server", "tool", "elapsed": seconds}.
ufo_value_t *ufo_mcp_op_take_result (ufo_mcp_op_t *self);

//  Cancels the call if in flight (the server is told) and frees. Safe with NULL.
void ufo_mcp_op_destroy (ufo_mcp_op_t **self_p);

//  Descriptors of every server (see ufo_mcp_fds); remembers the split for ufo_mcp_hub_process,
//  which must get the same array back (revents filled in).
size_t ufo_mcp_hub_fds (ufo_mcp_hub_t *self, ufo_http_fd_t *fds, size_t max);

//  Least ufo_mcp_timeout of the servers, -1 none.
int ufo_mcp_hub_timeout (const ufo_mcp_hub_t *self);

//  Processes every server (see ufo_mcp_process).
void ufo_mcp_hub_process (ufo_mcp_hub_t *self, const ufo_http_fd_t *fds, size_t n);

//  Runs a private poll loop over the hub until done(arg) (NULL: until every server is settled)
//  or timeout_ms passes; returns whether done. Blocks: for command-line tools and tests, never
//  from a process's event loop.
bool ufo_mcp_hub_run (ufo_mcp_hub_t *self, bool (*done) (void *arg), void *arg, int timeout_ms);

#endif
