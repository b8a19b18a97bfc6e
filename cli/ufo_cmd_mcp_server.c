/*  ufo_cmd_mcp_server.c - `ufo mcp-server [--http IPV4:PORT] [--broker EP] [--config FILE]`:
    ufobus as an MCP server on stdio (newline-delimited JSON-RPC 2.0, protocol 2025-06-18 /
    2025-03-26 / 2024-11-05) or Streamable HTTP (POST /mcp, Mcp-Session-Id, JSON replies and an
    SSE stream for run_session; docs/AGENTS.md), so that any MCP client can use the Linux
    desktop agents. It is a client of
    the broker like `ufo run`, with the same roles and keys (security.*: role "client").

    Tools:
      run_session     {request, device?, apps?, yes?, timeout_s?, model?} -> a session through the
                      HostAgent; progress notifications (one per step) when the call carries a
                      progressToken; the result: status, rounds, steps, evaluation, cost, logs
                      and report paths (text and structuredContent). Questions get the
                      placeholder answer; confirmations are refused unless yes is true.
                      notifications/cancelled for the call cancels the session, and the
                      call gets no response (MCP: the receiver SHOULD NOT send one).
      cancel_session  {task} -> cancels a session this server started (its task id is in the
                      first progress message and in list_workers).
      list_workers    {} -> workers, service queues and tasks in flight (dispatch.state)
      list_devices    {} -> the devices the workers serve, with their services
      list_windows    {device?, timeout_s?} -> the windows of a device's desktop, from that
                      device's desktop service (`ufo-app --desktop-service`; a task of
                      service "desktop", docs/PROTOCOL.md 4.5)
      screenshot      {device?, xid?, timeout_s?} -> a PNG of a device's screen or of one of its
                      windows (image content), through the broker's blob store
                      (both in ufo_mcp_server_desktop.c)

    Every request is answered; a malformed line gets a JSON-RPC error (-32700 / -32600) and
    the server goes on. The process ends when stdin closes (sessions in flight are cancelled). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_llm_override.h"
#include "ufo_log.h"
#include "ufo_mcp.h"
#include "ufo_report.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include "ufo_mcp_server.h"
#include <poll.h>


bool ufo_mcps_http_mode = false;
ufo_mcps_conn_t *ufo_mcps_sink = NULL;
ufo_buf_t *ufo_mcps_capture = NULL;

//  --- output ---------------------------------------------------------------------------------

static void
s_send (ufo_value_t **msg_p)
{
    ufo_value_map_set_str (*msg_p, "jsonrpc", "2.0");
    char *text = ufo_json_dump (*msg_p, UFO_JSON_COMPACT, NULL);
    if (ufo_mcps_sink && ufo_mcps_sink->sse)
        ufo_buf_printf (&ufo_mcps_sink->out, "event: message\ndata: %s\n\n", text);
    else
    if (ufo_mcps_capture)
        ufo_buf_puts (ufo_mcps_capture, text);
    else
    if (!ufo_mcps_http_mode) {
        fputs (text, stdout);
        fputc ('\n', stdout);
        fflush (stdout);
    }
    free (text);
    ufo_value_destroy (msg_p);
}

void
ufo_mcps_reply (const ufo_value_t *id, ufo_value_t **result_p)
{
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_copy (m, "id", id);
    ufo_value_map_set (m, "result", result_p);
    s_send (&m);
}

static void
s_error (const ufo_value_t *id, int code, const char *message)
{
    ufo_value_t *m = ufo_value_new_map ();
    if (id)
        ufo_value_map_set_copy (m, "id", id);
    else
        ufo_value_map_set_null (m, "id");
    ufo_value_t *e = ufo_value_new_map ();
    ufo_value_map_set_int (e, "code", code);
    ufo_value_map_set_str (e, "message", message);
    ufo_value_map_set (m, "error", &e);
    s_send (&m);
}

void
ufo_mcps_tool_reply (const ufo_value_t *id, const void *png, size_t len, const char *text,
                     ufo_value_t **structured_p, bool is_error)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_t *content = ufo_value_new_list ();
    if (png) {
        ufo_buf_t b64;
        ufo_buf_init (&b64);
        ufo_buf_base64 (&b64, png, len);
        ufo_buf_putc (&b64, 0);
        ufo_value_t *image = ufo_value_new_map ();
        ufo_value_map_set_str (image, "type", "image");
        ufo_value_map_set_str (image, "data", b64.data);
        ufo_value_map_set_str (image, "mimeType", "image/png");
        ufo_value_list_push (content, &image);
        ufo_buf_free (&b64);
    }
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "type", "text");
    ufo_value_map_set_str (item, "text", text);
    ufo_value_list_push (content, &item);
    ufo_value_map_set (r, "content", &content);
    if (structured_p && *structured_p)
        ufo_value_map_set (r, "structuredContent", structured_p);
    ufo_value_map_set_bool (r, "isError", is_error);
    ufo_mcps_reply (id, &r);
}

void
ufo_mcps_tool_result (const ufo_value_t *id, const char *text, ufo_value_t **structured_p, bool is_error)
{
    ufo_mcps_tool_reply (id, NULL, 0, text, structured_p, is_error);
}

void
ufo_mcps_tool_json (const ufo_value_t *id, ufo_value_t **value_p)
{
    char *text = ufo_json_dump (*value_p, UFO_JSON_PY, NULL);
    ufo_value_t *wrapped = ufo_value_type (*value_p) == UFO_TMAP ? *value_p : NULL;
    if (!wrapped) {
        wrapped = ufo_value_new_map ();
        ufo_value_map_set (wrapped, "items", value_p);
    }
    *value_p = NULL;
    ufo_mcps_tool_result (id, text, &wrapped, false);
    free (text);
}

//  --- tools ----------------------------------------------------------------------------------

static const char *s_tools_json =
    "[{\"name\": \"run_session\", \"description\": \"Run a ufobus session: the HostAgent and AppAgents carry out "
    "the request on a Linux desktop. Returns the outcome, the evaluation and the paths of the logs and the report.\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
    "\"request\": {\"type\": \"string\", \"description\": \"what to do, in plain words\"},"
    "\"device\": {\"type\": \"string\", \"description\": \"the device to run on (default: any free one)\"},"
    "\"apps\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"description\": \"applications to use (added to the request)\"},"
    "\"yes\": {\"type\": \"boolean\", \"description\": \"allow sensitive actions without asking (default false: refused)\"},"
    "\"timeout_s\": {\"type\": \"number\", \"description\": \"give up after this many seconds (default 3600)\"},"
    "\"model\": {\"type\": \"object\", \"description\": \"this session's model for every agent instead of the running "
    "system's (keys never travel: api_key_env names the variable in the agents' environment)\", \"properties\": {"
    "\"model\": {\"type\": \"string\"}, \"api_base\": {\"type\": \"string\"}, \"api_type\": {\"type\": \"string\"},"
    " \"api_key_env\": {\"type\": \"string\"}, \"reasoning_model\": {\"type\": \"boolean\"},"
    " \"reasoning_effort\": {\"type\": \"string\"}}}},"
    " \"required\": [\"request\"]}},"
    " {\"name\": \"cancel_session\", \"description\": \"Cancel a session started by run_session (by its task id).\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {\"task\": {\"type\": \"string\"}}, \"required\": [\"task\"]}},"
    " {\"name\": \"list_workers\", \"description\": \"The broker's workers, service queues and tasks in flight.\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {}}},"
    " {\"name\": \"list_devices\", \"description\": \"The devices the agents serve, with their services.\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {}}},"
    " {\"name\": \"list_windows\", \"description\": \"The application windows of a device's desktop (app, title, pid, "
    "focused, geometry, xid), read by the agents on that device.\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
    "\"device\": {\"type\": \"string\", \"description\": \"the device (list_devices; default: the only device with a desktop)\"},"
    "\"timeout_s\": {\"type\": \"number\", \"description\": \"give up after this many seconds (default 15)\"}}}},"
    " {\"name\": \"screenshot\", \"description\": \"A PNG screenshot of a device's screen, or of one of its windows "
    "(xid from list_windows), taken by the agents on that device.\","
    " \"inputSchema\": {\"type\": \"object\", \"properties\": {"
    "\"device\": {\"type\": \"string\", \"description\": \"the device (list_devices; default: the only device with a desktop)\"},"
    "\"xid\": {\"type\": \"integer\", \"description\": \"a window id from list_windows (default: the whole screen)\"},"
    "\"timeout_s\": {\"type\": \"number\", \"description\": \"give up after this many seconds (default 15)\"}}}}]";

ufo_value_t *
ufo_mcps_state (ufo_mcps_t *self, ufo_error_t *err)
{
    ufo_bb_client_t *client = ufo_bb_client_new (self->endpoint, NULL, err);
    if (!client)
        return NULL;
    ufo_bb_client_set_timeout (client, 5000);
    ufo_bb_client_set_sender (client, "ufo-mcp-server");
    ufo_value_t *state = ufo_bb_client_call (client, "dispatch.state", NULL, NULL, 0, NULL, NULL, err);
    ufo_bb_client_destroy (&client);
    return state;
}

ufo_value_t *
ufo_mcps_devices (const ufo_value_t *state)
{
    ufo_value_t *devices = ufo_value_new_map ();
    const ufo_value_t *workers = ufo_value_map_get (state, "workers");
    for (size_t i = 0; i < ufo_value_size (workers); i++) {
        const ufo_value_t *w = ufo_value_list_at (workers, i);
        const char *dev = ufo_value_map_str (w, "device", "");
        if (!*dev)
            continue;
        ufo_value_t *services = ufo_value_map_get (devices, dev);
        if (!services)
            services = ufo_value_map_set (devices, dev, &(ufo_value_t *) { ufo_value_new_list () });
        ufo_value_list_push_str (services, ufo_value_map_str (w, "service", ""));
    }
    return devices;
}

ufo_mcps_call_t *
ufo_mcps_call_slot (ufo_mcps_t *self)
{
    for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++)
        if (!self->calls [i].task [0])
            return &self->calls [i];
    return NULL;
}

static ufo_mcps_call_t *
s_call_find (ufo_mcps_t *self, const char *task)
{
    for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++)
        if (self->calls [i].task [0] && !strcmp (self->calls [i].task, task))
            return &self->calls [i];
    return NULL;
}

void
ufo_mcps_call_free (ufo_mcps_call_t *c)
{
    ufo_value_destroy (&c->id);
    ufo_value_destroy (&c->token);
    memset (c, 0, sizeof *c);
}

static void
s_run_session (ufo_mcps_t *self, const ufo_value_t *id, const ufo_value_t *args, const ufo_value_t *meta)
{
    const char *request = ufo_value_map_str (args, "request", "");
    if (!*request) {
        ufo_mcps_tool_result (id, "run_session needs a non-empty \"request\"", NULL, true);
        return;
    }
    ufo_mcps_call_t *slot = ufo_mcps_call_slot (self);
    if (!slot) {
        ufo_mcps_tool_result (id, "too many sessions in flight from this MCP server", NULL, true);
        return;
    }
    ufo_llm_override_t override;        //  this session's model, checked as `ufo run` checks it
    ufo_error_t oerr;
    if (ufo_llm_override_from_value (ufo_value_map_get (args, "model"), &override, &oerr)) {
        ufo_mcps_tool_result (id, oerr.message, NULL, true);
        return;
    }
    ufo_buf_t text;
    ufo_buf_init (&text);
    ufo_buf_puts (&text, request);
    const ufo_value_t *apps = ufo_value_map_get (args, "apps");
    for (size_t i = 0; i < ufo_value_size (apps); i++)
        ufo_buf_printf (&text, "%s%s", i ? ", " : " (use the applications: ",
                        ufo_value_str (ufo_value_list_at (apps, i)) ?: "");
    if (ufo_value_size (apps))
        ufo_buf_putc (&text, ')');
    ufo_buf_putc (&text, 0);
    ufo_value_t *requests = ufo_value_new_list ();
    ufo_value_list_push_str (requests, text.data);
    ufo_buf_free (&text);
    bool yes = ufo_value_map_bool (args, "yes", false);
    double timeout_s = ufo_value_map_float (args, "timeout_s", 3600);
    if (timeout_s <= 0)
        timeout_s = 3600;
    ufo_cli_new_id (slot->session, sizeof slot->session, "s");
    ufo_cli_new_id (slot->task_name, sizeof slot->task_name, "mcp");
    ufo_value_t *spec = ufo_cli_session_spec (slot->session, slot->task_name, self->log_root, requests, NULL,
                                              ufo_value_map_str (args, "device", NULL), false, yes,
                                              (int64_t) (timeout_s * 1000));
    ufo_value_destroy (&requests);
    ufo_value_t *model = ufo_llm_override_to_value (&override);
    if (model)
        ufo_value_map_set (ufo_value_map_get (spec, "body"), "model", &model);
    ufo_error_t err;
    if (ufo_tasks_submit (self->tasks, &spec, slot->task, &err) != 0) {
        char msg [400];
        snprintf (msg, sizeof msg, "the session could not be submitted: %s", err.message);
        ufo_value_destroy (&spec);
        memset (slot, 0, sizeof *slot);
        ufo_mcps_tool_result (id, msg, NULL, true);
        return;
    }
    slot->id = ufo_value_dup (id);
    slot->conn = ufo_mcps_sink;
    const ufo_value_t *token = ufo_value_map_get (meta, "progressToken");
    slot->token = token ? ufo_value_dup (token) : NULL;
    slot->yes = yes;
    ufo_info ("session %s (task %s) for MCP request", slot->session, slot->task);
}

static void
s_progress (ufo_mcps_call_t *c, const char *message)
{
    if (!c->token || c->dropped)
        return;
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "method", "notifications/progress");
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_copy (p, "progressToken", c->token);
    ufo_value_map_set_int (p, "progress", c->steps);
    ufo_value_map_set_str (p, "message", message);
    ufo_value_map_set (m, "params", &p);
    s_send (&m);
}

//  An event of a session task: progress, questions, the result.
static void s_on_event_ (ufo_mcps_t *self, ufo_mcps_call_t *c, const ufo_value_t *ev);

void
ufo_mcps_on_event (ufo_mcps_t *self, const ufo_value_t *ev)
{
    ufo_mcps_call_t *c = s_call_find (self, ufo_value_map_str (ev, "task", ""));
    if (!c)
        return;
    ufo_mcps_conn_t *conn = c->conn;
    if (c->dropped) {
        //  the client cancelled the call (notifications/cancelled): no progress and no
        //  response for its id; the slot is freed when the task's result comes
        if (!strcmp (ufo_value_map_str (ev, "kind", ""), "result")) {
            ufo_info ("session %s (task %s) ended %s after its call was cancelled; no response sent",
                      c->session [0] ? c->session : c->op, c->task, ufo_value_map_str (ev, "status", "?"));
            ufo_mcps_call_free (c);
        }
        return;
    }
    ufo_mcps_sink = conn;
    if (c->desktop)
        ufo_mcps_desktop_event (self, c, ev);
    else
        s_on_event_ (self, c, ev);
    ufo_mcps_sink = NULL;
    if (conn && !s_call_find (self, ufo_value_map_str (ev, "task", "")))
        conn->closing = true;       //  the result was the last event of the stream
}

static void
s_on_event_ (ufo_mcps_t *self, ufo_mcps_call_t *c, const ufo_value_t *ev)
{
    const char *kind = ufo_value_map_str (ev, "kind", "");
    const ufo_value_t *body = ufo_value_map_get (ev, "body");
    char msg [2 * PATH_MAX + 1024];
    if (!strcmp (kind, "accepted")) {
        snprintf (msg, sizeof msg, "session %s accepted (task %s, logs %s/%s)", c->session, c->task,
                  self->log_root, c->task_name);
        s_progress (c, msg);
        return;
    }
    if (!strcmp (kind, "progress")) {
        const char *pk = ufo_value_map_str (body, "kind", "");
        if (!strcmp (pk, "step")) {
            const ufo_value_t *r = ufo_value_map_get (body, "record");
            c->steps++;
            snprintf (msg, sizeof msg, "step %d: %s %s %s -> %s", c->steps, ufo_value_map_str (r, "Agent", ""),
                      ufo_value_map_str (r, "Function", ""), ufo_value_map_str (r, "ControlText", ""),
                      ufo_value_map_str (r, "Status", ""));
            s_progress (c, msg);
        }
        else
        if (!strcmp (pk, "question") && !ufo_value_map_has (body, "answered")) {
            ufo_value_t *answers = ufo_value_new_list ();
            for (size_t i = 0; i < ufo_value_size (ufo_value_map_get (body, "questions")); i++)
                ufo_value_list_push_str (answers, "no answer available, proceed");
            ufo_value_t *input = ufo_value_new_map ();
            ufo_value_map_set_str (input, "qid", ufo_value_map_str (body, "qid", ""));
            ufo_value_map_set (input, "answers", &answers);
            ufo_tasks_input (self->tasks, c->task, &input);
            ufo_value_destroy (&input);
        }
        else
        if (!strcmp (pk, "confirm") && !ufo_value_map_has (body, "answered")) {
            ufo_value_t *input = ufo_value_new_map ();
            ufo_value_map_set_str (input, "qid", ufo_value_map_str (body, "qid", ""));
            ufo_value_map_set_bool (input, "confirm", c->yes);
            ufo_tasks_input (self->tasks, c->task, &input);
            ufo_value_destroy (&input);
        }
        return;
    }
    if (strcmp (kind, "result"))
        return;
    if (ufo_value_type (body) != UFO_TMAP || !ufo_value_map_has (body, "status")) {
        snprintf (msg, sizeof msg, "the session %s ended %s: %s", c->session, ufo_value_map_str (ev, "status", "?"),
                  ufo_value_map_str (ev, "reason", "no reason given"));
        ufo_mcps_tool_result (c->id, msg, NULL, true);
        ufo_mcps_call_free (c);
        return;
    }
    const char *logdir = ufo_value_map_str (body, "logdir", "");
    char report [PATH_MAX] = "";
    if (*logdir) {
        snprintf (report, sizeof report, "%s/report.html", logdir);
        if (access (report, R_OK) != 0 && ufo_report_write (logdir, report, NULL, NULL) != 0)
            report [0] = 0;
    }
    ufo_value_t *out = ufo_value_new_map ();
    ufo_value_map_set_str (out, "session", c->session);
    ufo_value_map_set_str (out, "task", c->task);
    ufo_value_map_set_str (out, "status", ufo_value_map_str (body, "status", ""));
    bool cancelled = !strcmp (ufo_value_map_str (ev, "status", ""), "cancelled");
    ufo_value_map_set_bool (out, "completed", ufo_cli_exit_code (body) == 0 && !cancelled);
    ufo_value_map_set_bool (out, "cancelled", cancelled);
    ufo_value_map_set_int (out, "rounds", ufo_value_map_int (body, "rounds", 0));
    ufo_value_map_set_int (out, "steps", ufo_value_map_int (body, "steps", 0));
    ufo_value_map_set_str (out, "error", ufo_value_map_str (body, "error", ""));
    const ufo_value_t *ev_result = ufo_value_map_get (body, "evaluation");
    if (ev_result)
        ufo_value_map_set_copy (out, "evaluation", ev_result);
    else
        ufo_value_map_set_null (out, "evaluation");
    ufo_value_map_set_copy (out, "cost", ufo_value_map_get (body, "cost"));
    ufo_value_map_set_str (out, "logdir", logdir);
    ufo_value_map_set_str (out, "report", report);
    snprintf (msg, sizeof msg, "session %s %s%s after %" PRId64 " step(s); evaluation: %s; logs: %s; report: %s",
              c->session, cancelled ? "cancelled, status " : "", ufo_value_map_str (body, "status", "?"),
              ufo_value_map_int (body, "steps", 0),
              ufo_value_map_str (ev_result, "complete", "none"), *logdir ? logdir : "-", *report ? report : "-");
    ufo_mcps_tool_result (c->id, msg, &out, false);
    ufo_mcps_call_free (c);
}

static void
s_tools_call (ufo_mcps_t *self, const ufo_value_t *id, const ufo_value_t *params)
{
    const char *name = ufo_value_map_str (params, "name", "");
    const ufo_value_t *args = ufo_value_map_get (params, "arguments");
    if (args && ufo_value_type (args) != UFO_TMAP) {
        s_error (id, -32602, "\"arguments\" must be an object");
        return;
    }
    ufo_error_t err;
    if (!strcmp (name, "run_session"))
        s_run_session (self, id, args, ufo_value_map_get (params, "_meta"));
    else
    if (!strcmp (name, "cancel_session")) {
        ufo_mcps_call_t *c = s_call_find (self, ufo_value_map_str (args, "task", ""));
        if (!c || c->desktop || c->dropped)
            ufo_mcps_tool_result (id, "no session of this server has that task id", NULL, true);
        else {
            ufo_tasks_cancel (self->tasks, c->task);
            ufo_mcps_tool_result (id, "cancellation requested; the run_session call ends with the outcome", NULL, false);
        }
    }
    else
    if (!strcmp (name, "list_workers") || !strcmp (name, "list_devices")) {
        ufo_value_t *state = ufo_mcps_state (self, &err);
        if (!state) {
            char msg [1024];
            snprintf (msg, sizeof msg, "no answer from the broker at %.120s: %s", self->endpoint, err.message);
            ufo_mcps_tool_result (id, msg, NULL, true);
            return;
        }
        if (!strcmp (name, "list_workers")) {
            ufo_mcps_tool_json (id, &state);
            return;
        }
        ufo_value_t *devices = ufo_mcps_devices (state);
        ufo_value_t *list = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (devices); i++) {
            ufo_value_t *d = ufo_value_new_map ();
            ufo_value_map_set_str (d, "device", ufo_value_map_key_at (devices, i));
            ufo_value_map_set_copy (d, "services", ufo_value_map_value_at (devices, i));
            ufo_value_list_push (list, &d);
        }
        ufo_value_t *out = ufo_value_new_map ();
        ufo_value_map_set (out, "devices", &list);
        ufo_mcps_tool_json (id, &out);
        ufo_value_destroy (&devices);
        ufo_value_destroy (&state);
    }
    else
    if (!strcmp (name, "list_windows") || !strcmp (name, "screenshot"))
        ufo_mcps_desktop_tool (self, id, name, args);
    else
        s_error (id, -32602, "unknown tool");
}

//  One JSON-RPC message from the client.
void
ufo_mcps_on_message (ufo_mcps_t *self, const ufo_value_t *msg)
{
    const ufo_value_t *id = ufo_value_map_get (msg, "id");
    const char *method = ufo_value_map_str (msg, "method", NULL);
    if (ufo_value_type (msg) != UFO_TMAP || strcmp (ufo_value_map_str (msg, "jsonrpc", ""), "2.0")
    ||  (id && ufo_value_type (id) != UFO_TINT && ufo_value_type (id) != UFO_TSTRING)) {
        s_error (id && (ufo_value_type (id) == UFO_TINT || ufo_value_type (id) == UFO_TSTRING) ? id : NULL,
                 -32600, "not a JSON-RPC 2.0 request");
        return;
    }
    if (!method)
        return;                     //  a response to us: we send no requests
    const ufo_value_t *params = ufo_value_map_get (msg, "params");
    if (!id) {
        if (!strcmp (method, "notifications/cancelled")) {
            //  The MCP specification (basic/utilities/cancellation): the receiver SHOULD stop
            //  processing and SHOULD NOT send a response for the cancelled request. The task is
            //  cancelled; its progress and result are dropped; over HTTP the call's SSE stream
            //  is closed without a response.
            const ufo_value_t *rid = ufo_value_map_get (params, "requestId");
            for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++) {
                ufo_mcps_call_t *c = &self->calls [i];
                if (!c->task [0] || c->dropped || !ufo_value_equal (c->id, rid))
                    continue;
                ufo_info ("MCP client cancelled its call %s (task %s): cancelled, no response will be sent",
                          c->desktop ? c->op : c->session, c->task);
                ufo_tasks_cancel (self->tasks, c->task);
                c->dropped = true;
                if (c->conn)
                    c->conn->closing = true;        //  what is queued is sent, then the stream ends
                c->conn = NULL;
            }
        }
        return;                     //  notifications get no answer
    }
    if (!strcmp (method, "initialize")) {
        const char *asked = ufo_value_map_str (params, "protocolVersion", "");
        const char *version = ufo_mcp_versions [0];
        for (size_t i = 0; ufo_mcp_versions [i]; i++)
            if (!strcmp (ufo_mcp_versions [i], asked))
                version = ufo_mcp_versions [i];
        snprintf (self->protocol, sizeof self->protocol, "%s", version);
        ufo_value_t *r = ufo_json_parse_str ("{\"capabilities\": {\"tools\": {\"listChanged\": false}},"
                                             " \"serverInfo\": {\"name\": \"ufobus\", \"version\": \"1.0\"},"
                                             " \"instructions\": \"Desktop automation agents on Linux: run_session "
                                             "carries out a request on a desktop.\"}", NULL);
        ufo_value_map_set_str (r, "protocolVersion", version);
        ufo_mcps_reply (id, &r);
    }
    else
    if (!strcmp (method, "ping")) {
        ufo_value_t *r = ufo_value_new_map ();
        ufo_mcps_reply (id, &r);
    }
    else
    if (!strcmp (method, "tools/list")) {
        ufo_value_t *r = ufo_value_new_map ();
        ufo_value_map_set (r, "tools", &(ufo_value_t *) { ufo_json_parse_str (s_tools_json, NULL) });
        ufo_mcps_reply (id, &r);
    }
    else
    if (!strcmp (method, "tools/call"))
        s_tools_call (self, id, params);
    else
        s_error (id, -32601, "method not found");
}

static void
s_on_line (ufo_mcps_t *self, const char *line, size_t len)
{
    while (len && isspace ((unsigned char) *line))
        line++, len--;
    if (!len)
        return;
    ufo_error_t err;
    ufo_json_limits_t limits = { .max_depth = 64 };
    ufo_value_t *msg = ufo_json_parse (line, len, &limits, &err);
    if (!msg) {
        char text [300];
        snprintf (text, sizeof text, "parse error: %s", err.message);
        s_error (NULL, -32700, text);
        return;
    }
    if (ufo_value_type (msg) == UFO_TLIST)
        for (size_t i = 0; i < ufo_value_size (msg); i++)
            ufo_mcps_on_message (self, ufo_value_list_at (msg, i));
    else
        ufo_mcps_on_message (self, msg);
    ufo_value_destroy (&msg);
}

int
ufo_cmd_mcp_server (int argc, char **argv)
{
    const char *broker = NULL, *config_path = NULL, *http = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv [i], "--http") && i + 1 < argc)
            http = argv [++i];
        else
        if (!strcmp (argv [i], "--broker") && i + 1 < argc)
            broker = argv [++i];
        else
        if (!strcmp (argv [i], "--config") && i + 1 < argc)
            config_path = argv [++i];
        else {
            ufo_cli_usage (!strcmp (argv [i], "--help") ? stdout : stderr, "mcp-server");
            return !strcmp (argv [i], "--help") ? UFO_CLI_OK : UFO_CLI_USAGE;
        }
    }
    ufo_mcps_t self;
    memset (&self, 0, sizeof self);
    ufo_error_t err;
    self.config = ufo_config_load (config_path, &err);
    if (!self.config) {
        fprintf (stderr, "ufo mcp-server: configuration: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_config_apply_log (self.config);
    if (ufo_cli_broker (broker, self.config, self.endpoint, sizeof self.endpoint, self.log_root,
                        sizeof self.log_root, &err) != 0
    ||  ufo_security_init (self.config, "client", &err) < 0) {
        fprintf (stderr, "ufo mcp-server: %s\n", err.message);
        ufo_config_destroy (&self.config);
        return UFO_CLI_FAIL;
    }
    char name [128], host [64] = "";
    gethostname (host, sizeof host - 1);
    snprintf (name, sizeof name, "ufo-mcp-server@%s:%d", host, (int) getpid ());
    self.tasks = ufo_tasks_new (self.endpoint, name, NULL, NULL, &err);
    if (!self.tasks) {
        fprintf (stderr, "ufo mcp-server: %s\n", err.message);
        ufo_config_destroy (&self.config);
        return UFO_CLI_FAIL;
    }
    signal (SIGPIPE, SIG_IGN);
    self.listen_fd = -1;
    if (http) {
        char url [200];
        if (ufo_mcps_http_listen (&self, http, url, sizeof url, &err) < 0) {
            fprintf (stderr, "ufo mcp-server: %s\n", err.message);
            ufo_tasks_destroy (&self.tasks);
            ufo_config_destroy (&self.config);
            return UFO_CLI_FAIL;
        }
        ufo_mcps_http_mode = true;
        printf ("%s\n", url);          //  the first line of stdout: where to connect
        fflush (stdout);
        struct sigaction sa = { .sa_handler = ufo_mcps_on_stop };
        sigaction (SIGINT, &sa, NULL);
        sigaction (SIGTERM, &sa, NULL);
        while (!ufo_mcps_stop)
            ufo_mcps_http_turn (&self);
        while (self.conns)
            ufo_mcps_conn_close (&self, self.conns);
        close (self.listen_fd);
    }
    ufo_buf_t in;
    ufo_buf_init (&in);
    bool eof = http != NULL, skipping = false;
    while (!eof) {
        struct pollfd fds [2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = ufo_tasks_fd (self.tasks), .events = POLLIN } };
        if (poll (fds, fds [1].fd >= 0 ? 2 : 1, 200) < 0 && errno != EINTR)
            break;
        if (fds [0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char chunk [65536];
            ssize_t n = read (STDIN_FILENO, chunk, sizeof chunk);
            if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
                eof = true;
            for (ssize_t i = 0; i < n; i++) {
                if (chunk [i] == '\n') {
                    if (!skipping)
                        s_on_line (&self, in.data ? in.data : "", in.len);
                    else
                        s_error (NULL, -32700, "message larger than 4 MiB");
                    skipping = false;
                    ufo_buf_reset (&in);
                }
                else
                if (!skipping && in.len >= UFO_MCPS_MAX_LINE) {
                    skipping = true;
                    ufo_buf_reset (&in);
                }
                else
                if (!skipping)
                    ufo_buf_putc (&in, chunk [i]);
            }
        }
        for (ufo_value_t *ev = ufo_tasks_next (self.tasks, 0); ev; ev = ufo_tasks_next (self.tasks, 0)) {
            ufo_mcps_on_event (&self, ev);
            ufo_value_destroy (&ev);
        }
    }
    for (int i = 0; i < UFO_MCPS_MAX_CALLS; i++)
        if (self.calls [i].task [0]) {
            ufo_tasks_cancel (self.tasks, self.calls [i].task);
            ufo_mcps_call_free (&self.calls [i]);
        }
    ufo_buf_free (&in);
    ufo_tasks_destroy (&self.tasks);
    ufo_desktop_destroy (&self.desktop);
    ufo_config_destroy (&self.config);
    return UFO_CLI_OK;
}
