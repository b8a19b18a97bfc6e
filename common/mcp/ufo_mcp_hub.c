/*  ufo_mcp_hub.c - the MCP servers of one agent (see ufo_mcp_hub.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_http.h"
#include "ufo_config.h"
#include "ufo_mcp.h"
#include "ufo_mcp_hub.h"
#include "ufo_mcp_spec.h"
#include <poll.h>

#define S_MAX_SERVERS UFO_MCP_MAX_SERVERS
#define S_DESC_MAX    300
#define S_ARGS_MAX    600

struct _ufo_mcp_op_t {
    ufo_mcp_hub_t *hub;             //  NULL once the hub is gone
    ufo_mcp_t *server;
    int64_t id;                     //  request in flight (0 none)
    bool done;
    ufo_value_t *result;
    int progress;
    int64_t t0;
    char server_name [64], tool [160];
    ufo_mcp_op_t *next;             //  in the hub's list of live operations
};

struct _ufo_mcp_hub_t {
    ufo_mcp_t *servers [S_MAX_SERVERS];
    size_t count;
    size_t nfds [S_MAX_SERVERS];    //  fds per server at the last ufo_mcp_hub_fds
    bool preferred, fallback;
    ufo_mcp_op_t *ops;
};

static bool
s_list_has (const ufo_value_t *list, const char *s)
{
    for (size_t i = 0; s && i < ufo_value_size (list); i++)
        if (!strcasecmp (ufo_value_str (ufo_value_list_at (list, i)) ?: "", s))
            return true;
    return false;
}

static void
s_add (ufo_mcp_hub_t *self, const ufo_value_t *spec, const ufo_mcp_options_t *opts)
{
    if (self->count >= S_MAX_SERVERS)
        return;
    ufo_error_t e;
    ufo_mcp_t *server = ufo_mcp_new (spec, opts, &e);
    if (!server)
        ufo_warn ("MCP server %s: %s", ufo_value_map_str (spec, "name", "?"), e.message);
    else
        self->servers [self->count++] = server;
}

static ufo_mcp_hub_t *
s_hub_new (const ufo_config_t *config, const char *app, ufo_mcp_options_t *opts)
{
    ufo_mcp_hub_t *self = ufo_calloc (1, sizeof *self);
    self->preferred = s_list_has (ufo_config_get (config, "MCP_PREFERRED_APPS"), app);
    self->fallback = ufo_config_bool (config, "MCP_FALLBACK_TO_UI", true);
    opts->timeout_ms = (int64_t) (ufo_config_float (config, "MCP_TOOL_TIMEOUT", 30.0) * 1000.0);
    return self;
}

ufo_mcp_hub_t *
ufo_mcp_hub_new_servers (const ufo_config_t *config, const ufo_value_t *servers, const char *app)
{
    ufo_mcp_options_t opts = { 0 };
    ufo_mcp_hub_t *self = s_hub_new (config, app, &opts);
    for (size_t k = 0; k < ufo_value_size (servers); k++)
        s_add (self, ufo_value_list_at (servers, k), &opts);
    return self;
}

ufo_mcp_hub_t *
ufo_mcp_hub_new (const ufo_config_t *config, const char *agent, const char *app, const char *only,
                 ufo_error_t *err)
{
    ufo_mcp_options_t opts = { 0 };
    ufo_mcp_hub_t *self = s_hub_new (config, app, &opts);
    bool found = false;
    const ufo_value_t *apps = ufo_value_map_get (ufo_config_get (config, "MCP_SERVERS"), agent);
    for (size_t i = 0; ufo_config_bool (config, "USE_MCP", true) && i < ufo_value_size (apps); i++) {
        const char *key = ufo_value_map_key_at (apps, i);
        if (strcmp (key, "*") && (!app || strcasecmp (key, app)))
            continue;
        const ufo_value_t *list = ufo_value_map_value_at (apps, i);
        for (size_t k = 0; k < ufo_value_size (list) && self->count < S_MAX_SERVERS; k++) {
            const ufo_value_t *spec = ufo_value_list_at (list, k);
            if (only && strcmp (ufo_value_map_str (spec, "name", ""), only))
                continue;
            found = true;
            s_add (self, spec, &opts);
        }
    }
    if (only && !found) {
        ufo_mcp_hub_destroy (&self);
        ufo_error_set (err, UFO_E_NOT_FOUND, "no MCP server named %s is configured for %s%s%s", only, agent,
                       app ? " / " : "", app ? app : "");
        return NULL;
    }
    return self;
}

void
ufo_mcp_hub_destroy (ufo_mcp_hub_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_mcp_hub_t *self = *self_p;
    for (ufo_mcp_op_t *op = self->ops; op; ) {
        ufo_mcp_op_t *next = op->next;
        if (!op->done) {
            op->done = true;
            op->result = ufo_value_new_map ();
            ufo_value_map_set_bool (op->result, "success", false);
            ufo_value_map_set_str (op->result, "error", "the MCP servers were stopped");
        }
        op->hub = NULL;
        op->id = 0;
        op->next = NULL;
        op = next;
    }
    for (size_t i = 0; i < self->count; i++)
        ufo_mcp_destroy (&self->servers [i]);
    free (self);
    *self_p = NULL;
}

size_t
ufo_mcp_hub_size (const ufo_mcp_hub_t *self)
{
    return self ? self->count : 0;
}

ufo_mcp_t *
ufo_mcp_hub_server (const ufo_mcp_hub_t *self, size_t i)
{
    return self && i < self->count ? self->servers [i] : NULL;
}

bool
ufo_mcp_hub_settled (const ufo_mcp_hub_t *self)
{
    for (size_t i = 0; self && i < self->count; i++)
        if (ufo_mcp_state (self->servers [i]) == UFO_MCP_STARTING)
            return false;
    return true;
}

bool
ufo_mcp_hub_preferred (const ufo_mcp_hub_t *self)
{
    return self && self->preferred;
}

bool
ufo_mcp_hub_fallback (const ufo_mcp_hub_t *self)
{
    return self && self->fallback;
}

//  --- schemas ----------------------------------------------------------------------------------

static bool
s_type_ok (const char *type, const ufo_value_t *v)
{
    ufo_type_t t = ufo_value_type (v);
    if (!strcmp (type, "string"))
        return t == UFO_TSTRING;
    if (!strcmp (type, "integer"))
        return t == UFO_TINT || (t == UFO_TFLOAT && floor (ufo_value_float (v)) == ufo_value_float (v));
    if (!strcmp (type, "number"))
        return t == UFO_TINT || t == UFO_TFLOAT;
    if (!strcmp (type, "boolean"))
        return t == UFO_TBOOL;
    if (!strcmp (type, "array"))
        return t == UFO_TLIST;
    if (!strcmp (type, "object"))
        return t == UFO_TMAP;
    if (!strcmp (type, "null"))
        return t == UFO_TNULL;
    return true;                    //  a type we do not know is not ours to refuse
}

//  Checks the schema itself (shape only). Returns 0 or -1 with err.
static int
s_schema_shape (const ufo_value_t *schema, const char *path, int depth, ufo_error_t *err)
{
    if (depth > 16)
        return ufo_error_set (err, UFO_E_TOO_DEEP, "the input schema nests deeper than 16 levels at %s", path);
    if (ufo_value_type (schema) == UFO_TBOOL)
        return 0;
    if (ufo_value_type (schema) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "the input schema at %s is not an object", path);
    const ufo_value_t *type = ufo_value_map_get (schema, "type");
    if (type && ufo_value_type (type) != UFO_TSTRING && ufo_value_type (type) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "the input schema's \"type\" at %s is neither a string nor a list", path);
    const ufo_value_t *props = ufo_value_map_get (schema, "properties");
    if (props && ufo_value_type (props) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "the input schema's \"properties\" at %s is not an object", path);
    const ufo_value_t *req = ufo_value_map_get (schema, "required");
    if (req && ufo_value_type (req) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "the input schema's \"required\" at %s is not a list", path);
    for (size_t i = 0; i < ufo_value_size (req); i++)
        if (ufo_value_type (ufo_value_list_at (req, i)) != UFO_TSTRING)
            return ufo_error_set (err, UFO_E_TYPE, "the input schema's \"required\" at %s lists a non-string", path);
    const ufo_value_t *en = ufo_value_map_get (schema, "enum");
    if (en && ufo_value_type (en) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "the input schema's \"enum\" at %s is not a list", path);
    for (size_t i = 0; i < ufo_value_size (props); i++) {
        char sub [256];
        snprintf (sub, sizeof sub, "%s.%.60s", path, ufo_value_map_key_at (props, i));
        if (s_schema_shape (ufo_value_map_value_at (props, i), sub, depth + 1, err))
            return -1;
    }
    const ufo_value_t *items = ufo_value_map_get (schema, "items");
    if (items) {
        char sub [256];
        snprintf (sub, sizeof sub, "%s[]", path);
        if (s_schema_shape (items, sub, depth + 1, err))
            return -1;
    }
    return 0;
}

static int
s_check (const ufo_value_t *schema, const ufo_value_t *v, const char *path, int depth, ufo_error_t *err)
{
    if (ufo_value_type (schema) != UFO_TMAP || depth > 16)
        return 0;                   //  true / deeper than we look: anything goes
    const ufo_value_t *type = ufo_value_map_get (schema, "type");
    if (ufo_value_type (type) == UFO_TSTRING && !s_type_ok (ufo_value_str (type), v))
        return ufo_error_set (err, UFO_E_TYPE, "%s must be %s %s, not %s", path,
                              ufo_value_str (type) [0] == 'a' || ufo_value_str (type) [0] == 'i'
                              || ufo_value_str (type) [0] == 'o' ? "an" : "a", ufo_value_str (type),
                              ufo_value_type_name (ufo_value_type (v)));
    if (ufo_value_type (type) == UFO_TLIST) {
        bool ok = false;
        for (size_t i = 0; i < ufo_value_size (type) && !ok; i++)
            ok = s_type_ok (ufo_value_str (ufo_value_list_at (type, i)) ?: "", v);
        if (!ok)
            return ufo_error_set (err, UFO_E_TYPE, "%s has the wrong type (%s)", path,
                                  ufo_value_type_name (ufo_value_type (v)));
    }
    const ufo_value_t *en = ufo_value_map_get (schema, "enum");
    if (ufo_value_type (en) == UFO_TLIST) {
        bool ok = false;
        for (size_t i = 0; i < ufo_value_size (en) && !ok; i++)
            ok = ufo_value_equal (ufo_value_list_at (en, i), v);
        if (!ok) {
            char *choices = ufo_json_dump (en, UFO_JSON_COMPACT, NULL);
            ufo_error_set (err, UFO_E_RANGE, "%s must be one of %.160s", path, choices);
            free (choices);
            return -1;
        }
    }
    if (ufo_value_type (v) == UFO_TMAP) {
        const ufo_value_t *props = ufo_value_map_get (schema, "properties");
        const ufo_value_t *req = ufo_value_map_get (schema, "required");
        for (size_t i = 0; i < ufo_value_size (req); i++) {
            const char *name = ufo_value_str (ufo_value_list_at (req, i));
            if (name && !ufo_value_map_has (v, name))
                return ufo_error_set (err, UFO_E_MISSING, "%s needs the argument \"%.60s\"", path, name);
        }
        const ufo_value_t *extra = ufo_value_map_get (schema, "additionalProperties");
        for (size_t i = 0; i < ufo_value_size (v); i++) {
            const char *key = ufo_value_map_key_at (v, i);
            char sub [256];
            snprintf (sub, sizeof sub, "%s.%.60s", path, key);
            const ufo_value_t *ps = ufo_value_map_get (props, key);
            if (!ps && ufo_value_type (extra) == UFO_TBOOL && !ufo_value_bool (extra))
                return ufo_error_set (err, UFO_E_INVALID, "%s has no argument \"%.60s\"", path, key);
            if (ps && s_check (ps, ufo_value_map_value_at (v, i), sub, depth + 1, err))
                return -1;
        }
    }
    if (ufo_value_type (v) == UFO_TLIST) {
        const ufo_value_t *items = ufo_value_map_get (schema, "items");
        for (size_t i = 0; items && i < ufo_value_size (v); i++) {
            char sub [256];
            snprintf (sub, sizeof sub, "%s[%zu]", path, i);
            if (s_check (items, ufo_value_list_at (v, i), sub, depth + 1, err))
                return -1;
        }
    }
    return 0;
}

int
ufo_mcp_schema_check (const ufo_value_t *schema, const ufo_value_t *value, ufo_error_t *err)
{
    if (s_schema_shape (schema, "Args", 0, err))
        return -1;
    return s_check (schema, value, "Args", 0, err);
}

//  "path: string (required) - what it is; mode: one of "a"|"b""
static char *
s_args_text (const ufo_value_t *schema)
{
    ufo_buf_t b;
    ufo_buf_init (&b);
    const ufo_value_t *props = ufo_value_map_get (schema, "properties");
    const ufo_value_t *req = ufo_value_map_get (schema, "required");
    for (size_t i = 0; i < ufo_value_size (props) && b.len < S_ARGS_MAX; i++) {
        const char *name = ufo_value_map_key_at (props, i);
        const ufo_value_t *p = ufo_value_map_value_at (props, i);
        if (b.len)
            ufo_buf_puts (&b, "; ");
        ufo_buf_printf (&b, "%s: ", name);
        const ufo_value_t *en = ufo_value_map_get (p, "enum");
        const ufo_value_t *type = ufo_value_map_get (p, "type");
        if (ufo_value_type (en) == UFO_TLIST) {
            ufo_buf_puts (&b, "one of ");
            for (size_t k = 0; k < ufo_value_size (en); k++) {
                if (k)
                    ufo_buf_putc (&b, '|');
                ufo_json_append (&b, ufo_value_list_at (en, k), UFO_JSON_COMPACT);
            }
        }
        else
        if (ufo_value_type (type) == UFO_TSTRING) {
            ufo_buf_puts (&b, ufo_value_str (type));
            const ufo_value_t *items = ufo_value_map_get (p, "items");
            if (!strcmp (ufo_value_str (type), "array") && ufo_value_type (ufo_value_map_get (items, "type")) == UFO_TSTRING)
                ufo_buf_printf (&b, " of %s", ufo_value_map_str (items, "type", ""));
        }
        else
            ufo_buf_puts (&b, "any");
        if (s_list_has (req, name))
            ufo_buf_puts (&b, " (required)");
        const char *desc = ufo_value_map_str (p, "description", "");
        if (*desc)
            ufo_buf_printf (&b, " - %.100s", desc);
    }
    if (!b.len)
        ufo_buf_puts (&b, "none");
    return ufo_buf_detach (&b, NULL);
}

static ufo_value_t *
s_tool_entry (const ufo_mcp_t *server, const ufo_value_t *tool, bool with_errors)
{
    ufo_value_t *e = ufo_value_new_map ();
    ufo_value_map_set (e, "function", &(ufo_value_t *) {
        ufo_value_new_stringf ("%s.%s", ufo_mcp_name (server), ufo_value_map_str (tool, "name", "")) });
    const char *desc = ufo_value_map_str (tool, "description", "");
    ufo_value_map_set (e, "description", &(ufo_value_t *) {
        ufo_value_new_stringn (desc, strlen (desc) > S_DESC_MAX ? S_DESC_MAX : strlen (desc)) });
    const ufo_value_t *schema = ufo_value_map_get (tool, "inputSchema");
    ufo_error_t err;
    if (s_schema_shape (schema, "inputSchema", 0, &err) < 0) {
        if (!with_errors) {
            ufo_value_destroy (&e);
            return NULL;
        }
        ufo_value_map_set_str (e, "schema_error", err.message);
        return e;
    }
    char *args = s_args_text (schema);
    ufo_value_map_set_str (e, "args", args);
    free (args);
    return e;
}

ufo_value_t *
ufo_mcp_hub_prompt_tools (const ufo_mcp_hub_t *self)
{
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; self && i < self->count; i++) {
        if (ufo_mcp_state (self->servers [i]) != UFO_MCP_READY)
            continue;
        const ufo_value_t *tools = ufo_mcp_tools (self->servers [i]);
        for (size_t k = 0; k < ufo_value_size (tools); k++) {
            ufo_value_t *e = s_tool_entry (self->servers [i], ufo_value_list_at (tools, k), false);
            if (e)
                ufo_value_list_push (list, &e);
        }
    }
    return list;
}

ufo_value_t *
ufo_mcp_hub_report (const ufo_mcp_hub_t *self)
{
    static const char *const states [] = { "starting", "ready", "failed" };
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; self && i < self->count; i++) {
        ufo_mcp_t *s = self->servers [i];
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "name", ufo_mcp_name (s));
        ufo_value_map_set_str (m, "state", states [ufo_mcp_state (s)]);
        ufo_value_map_set_str (m, "error", ufo_mcp_error (s));
        ufo_value_map_set_int (m, "restarts", ufo_mcp_restarts (s));
        ufo_value_map_set_str (m, "protocol", ufo_mcp_protocol (s));
        ufo_value_map_set_int (m, "pages", ufo_mcp_list_pages (s));
        ufo_value_t *tools = ufo_value_new_list ();
        const ufo_value_t *t = ufo_mcp_tools (s);
        for (size_t k = 0; k < ufo_value_size (t); k++)
            ufo_value_list_push (tools, &(ufo_value_t *) { s_tool_entry (s, ufo_value_list_at (t, k), true) });
        ufo_value_map_set (m, "tools", &tools);
        ufo_value_list_push (list, &m);
    }
    return list;
}

bool
ufo_mcp_hub_is_tool_name (const char *function)
{
    const char *dot = function ? strchr (function, '.') : NULL;
    return dot && dot != function && dot [1];
}

//  The server and tool named by function, or an error.
static const ufo_value_t *
s_lookup (const ufo_mcp_hub_t *self, const char *function, ufo_mcp_t **server_p, ufo_error_t *err)
{
    if (!ufo_mcp_hub_is_tool_name (function)) {
        ufo_error_set (err, UFO_E_INVALID, "\"%.80s\" is not an API tool name (<server>.<tool>)",
                       function ? function : "");
        return NULL;
    }
    const char *dot = strchr (function, '.');
    size_t slen = (size_t) (dot - function);
    for (size_t i = 0; self && i < self->count; i++) {
        ufo_mcp_t *s = self->servers [i];
        if (strlen (ufo_mcp_name (s)) != slen || strncmp (ufo_mcp_name (s), function, slen))
            continue;
        if (ufo_mcp_state (s) != UFO_MCP_READY) {
            ufo_error_set (err, UFO_E_UNAVAILABLE, "the API tools of %s are unavailable: %.180s",
                           ufo_mcp_name (s), *ufo_mcp_error (s) ? ufo_mcp_error (s) : "still starting");
            return NULL;
        }
        const ufo_value_t *tools = ufo_mcp_tools (s);
        for (size_t k = 0; k < ufo_value_size (tools); k++)
            if (!strcmp (ufo_value_map_str (ufo_value_list_at (tools, k), "name", ""), dot + 1)) {
                *server_p = s;
                return ufo_value_list_at (tools, k);
            }
        ufo_error_set (err, UFO_E_NOT_FOUND, "the server %s has no tool \"%.80s\"", ufo_mcp_name (s), dot + 1);
        return NULL;
    }
    ufo_error_set (err, UFO_E_NOT_FOUND, "no API server named \"%.*s\"", (int) (slen > 60 ? 60 : slen), function);
    return NULL;
}

int
ufo_mcp_hub_check (const ufo_mcp_hub_t *self, const char *function, const ufo_value_t *args,
                   ufo_error_t *err)
{
    ufo_mcp_t *server = NULL;
    const ufo_value_t *tool = s_lookup (self, function, &server, err);
    if (!tool)
        return -1;
    const ufo_value_t *schema = ufo_value_map_get (tool, "inputSchema");
    ufo_value_t *empty = args ? NULL : ufo_value_new_map ();
    ufo_error_t e;
    int rc = 0;
    if (s_schema_shape (schema, "inputSchema", 0, &e) < 0)
        rc = ufo_error_set (err, UFO_E_INVALID, "the tool %s has a broken input schema (%s); it cannot be called",
                            function, e.message);
    else
    if (s_check (schema, args ? args : empty, "Args", 0, &e) < 0)
        rc = ufo_error_set (err, e.code, "%s: %s", function, e.message);
    ufo_value_destroy (&empty);
    return rc;
}

//  --- calls ------------------------------------------------------------------------------------

static void
s_op_unlink (ufo_mcp_op_t *op)
{
    if (!op->hub)
        return;
    for (ufo_mcp_op_t **p = &op->hub->ops; *p; p = &(*p)->next)
        if (*p == op) {
            *p = op->next;
            break;
        }
    op->next = NULL;
}

static void
s_op_end (ufo_mcp_op_t *op, ufo_value_t **result_p)
{
    op->done = true;
    op->id = 0;
    ufo_value_t *r = *result_p;
    *result_p = NULL;
    ufo_value_map_set_str (r, "server", op->server_name);
    ufo_value_map_set_str (r, "tool", op->tool);
    ufo_value_map_set_int (r, "progress", op->progress);
    ufo_value_map_set_float (r, "elapsed", (double) (ufo_time_mono_ms () - op->t0) / 1000.0);
    ufo_value_destroy (&op->result);
    op->result = r;
    s_op_unlink (op);
    op->hub = NULL;
}

static void
s_op_fail (ufo_mcp_op_t *op, const char *message)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_bool (r, "success", false);
    ufo_value_map_set_bool (r, "is_error", false);
    ufo_value_map_set_str (r, "text", "");
    ufo_value_map_set_str (r, "error", message);
    s_op_end (op, &r);
}

//  The text of a tool result's content, cut at UFO_MCP_RESULT_MAX characters.
static char *
s_content_text (const ufo_value_t *result, bool *truncated)
{
    ufo_buf_t b;
    ufo_buf_init (&b);
    const ufo_value_t *content = ufo_value_map_get (result, "content");
    for (size_t i = 0; i < ufo_value_size (content) && b.len < UFO_MCP_RESULT_MAX + 16; i++) {
        const ufo_value_t *c = ufo_value_list_at (content, i);
        const char *type = ufo_value_map_str (c, "type", "");
        if (b.len)
            ufo_buf_putc (&b, '\n');
        if (!strcmp (type, "text"))
            ufo_buf_puts (&b, ufo_value_map_str (c, "text", ""));
        else
        if (!strcmp (type, "image") || !strcmp (type, "audio"))
            ufo_buf_printf (&b, "[%s %s, %zu bytes of base64]", type, ufo_value_map_str (c, "mimeType", "?"),
                            ufo_value_strlen (ufo_value_map_get (c, "data")));
        else
        if (!strcmp (type, "resource")) {
            const ufo_value_t *res = ufo_value_map_get (c, "resource");
            ufo_buf_printf (&b, "[resource %s]", ufo_value_map_str (res, "uri", "?"));
            if (ufo_value_map_has (res, "text"))
                ufo_buf_printf (&b, " %s", ufo_value_map_str (res, "text", ""));
        }
        else
        if (!strcmp (type, "resource_link"))
            ufo_buf_printf (&b, "[link %s]", ufo_value_map_str (c, "uri", "?"));
        else
            ufo_buf_printf (&b, "[%s content]", *type ? type : "untyped");
    }
    if (b.len == 0 && ufo_value_map_has (result, "structuredContent"))
        ufo_json_append (&b, ufo_value_map_get (result, "structuredContent"), UFO_JSON_COMPACT);
    *truncated = false;
    if (b.len > UFO_MCP_RESULT_MAX) {
        size_t total = b.len;
        size_t cut = UFO_MCP_RESULT_MAX;
        while (cut > 0 && ((unsigned char) b.data [cut] & 0xC0) == 0x80)
            cut--;                  //  never in the middle of a UTF-8 sequence
        b.len = cut;
        ufo_buf_printf (&b, " ... [cut: %zu of %zu bytes shown]", cut, total);
        *truncated = true;
    }
    return ufo_buf_detach (&b, NULL);
}

static void
s_op_reply (void *arg, const ufo_value_t *result, const ufo_error_t *err)
{
    ufo_mcp_op_t *op = arg;
    if (err) {
        s_op_fail (op, err->message);
        return;
    }
    bool truncated = false;
    char *text = s_content_text (result, &truncated);
    bool is_error = ufo_value_map_bool (result, "isError", false);
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_bool (r, "success", !is_error);
    ufo_value_map_set_bool (r, "is_error", is_error);
    ufo_value_map_set_str (r, "text", text);
    if (is_error) {
        char *msg = NULL;
        if (asprintf (&msg, "the tool %s.%s reported an error: %s", op->server_name, op->tool,
                      *text ? text : "(no message)") < 0)
            abort ();
        ufo_value_map_set_str (r, "error", msg);
        free (msg);
    }
    const ufo_value_t *sc = ufo_value_map_get (result, "structuredContent");
    if (sc) {
        char *json = ufo_json_dump (sc, UFO_JSON_COMPACT, NULL);
        if (strlen (json) <= UFO_MCP_RESULT_MAX)
            ufo_value_map_set_copy (r, "structured", sc);
        else
            truncated = true;
        free (json);
    }
    ufo_value_map_set_bool (r, "truncated", truncated);
    free (text);
    s_op_end (op, &r);
}

static void
s_op_progress (void *arg, double progress, double total, const char *message)
{
    ufo_mcp_op_t *op = arg;
    op->progress++;
    ufo_debug ("MCP %s.%s: progress %g/%g %s", op->server_name, op->tool, progress, total,
               message ? message : "");
}

ufo_mcp_op_t *
ufo_mcp_hub_call (ufo_mcp_hub_t *self, const char *function, const ufo_value_t *args)
{
    ufo_mcp_op_t *op = ufo_calloc (1, sizeof *op);
    op->t0 = ufo_time_mono_ms ();
    const char *dot = function ? strchr (function, '.') : NULL;
    snprintf (op->server_name, sizeof op->server_name, "%.*s", dot ? (int) (dot - function) : 0,
              function ? function : "");
    snprintf (op->tool, sizeof op->tool, "%s", dot ? dot + 1 : function ? function : "");
    ufo_error_t err;
    ufo_mcp_t *server = NULL;
    if (!s_lookup (self, function, &server, &err) || ufo_mcp_hub_check (self, function, args, &err) < 0) {
        s_op_fail (op, err.message);
        return op;
    }
    op->hub = self;
    op->server = server;
    op->next = self->ops;
    self->ops = op;
    int64_t id = ufo_mcp_call_tool (server, op->tool, args, 0, s_op_progress, s_op_reply, op, &err);
    if (id < 0)
        s_op_fail (op, err.message);
    else
    if (!op->done)
        op->id = id;
    return op;
}

bool
ufo_mcp_op_done (const ufo_mcp_op_t *self)
{
    return self->done;
}

ufo_value_t *
ufo_mcp_op_take_result (ufo_mcp_op_t *self)
{
    if (!self->done)
        return NULL;
    ufo_value_t *r = self->result;
    self->result = NULL;
    return r;
}

void
ufo_mcp_op_destroy (ufo_mcp_op_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_mcp_op_t *self = *self_p;
    if (!self->done && self->hub && self->id > 0)
        ufo_mcp_cancel (self->server, self->id, "the agent stopped waiting");
    s_op_unlink (self);
    ufo_value_destroy (&self->result);
    free (self);
    *self_p = NULL;
}

//  --- event loop ------------------------------------------------------------------------------

size_t
ufo_mcp_hub_fds (ufo_mcp_hub_t *self, ufo_http_fd_t *fds, size_t max)
{
    size_t total = 0;
    for (size_t i = 0; self && i < self->count; i++) {
        size_t room = total < max ? max - total : 0;
        size_t n = ufo_mcp_fds (self->servers [i], room ? fds + total : NULL, room);
        self->nfds [i] = n < room ? n : room;
        total += self->nfds [i];
        if (n > room)
            return total + (n - room);
    }
    return total;
}

int
ufo_mcp_hub_timeout (const ufo_mcp_hub_t *self)
{
    int best = -1;
    for (size_t i = 0; self && i < self->count; i++) {
        int t = ufo_mcp_timeout (self->servers [i]);
        if (t >= 0 && (best < 0 || t < best))
            best = t;
    }
    return best;
}

void
ufo_mcp_hub_process (ufo_mcp_hub_t *self, const ufo_http_fd_t *fds, size_t n)
{
    size_t off = 0;
    for (size_t i = 0; self && i < self->count; i++) {
        size_t k = self->nfds [i];
        if (off + k > n)
            k = off < n ? n - off : 0;
        ufo_mcp_process (self->servers [i], k ? fds + off : NULL, k);
        off += k;
    }
}

static bool
s_settled (void *arg)
{
    return ufo_mcp_hub_settled (arg);
}

bool
ufo_mcp_hub_run (ufo_mcp_hub_t *self, bool (*done) (void *arg), void *arg, int timeout_ms)
{
    if (!done) {
        done = s_settled;
        arg = self;
    }
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (!done (arg) && ufo_time_mono_ms () < end) {
        ufo_http_fd_t fds [64];
        size_t n = ufo_mcp_hub_fds (self, fds, 64);
        if (n > 64)
            n = 64;
        struct pollfd pfds [64];
        for (size_t i = 0; i < n; i++) {
            pfds [i].fd = fds [i].fd;
            pfds [i].events = (short) ((fds [i].events & UFO_HTTP_IN ? POLLIN : 0)
                                     | (fds [i].events & UFO_HTTP_OUT ? POLLOUT : 0));
            pfds [i].revents = 0;
        }
        int t = ufo_mcp_hub_timeout (self);
        if (t < 0 || t > 100)
            t = 100;
        if (poll (pfds, n, t) < 0 && errno != EINTR)
            break;
        for (size_t i = 0; i < n; i++)
            fds [i].revents = (pfds [i].revents & POLLIN ? UFO_HTTP_IN : 0)
                            | (pfds [i].revents & POLLOUT ? UFO_HTTP_OUT : 0)
                            | (pfds [i].revents & (POLLERR | POLLHUP) ? UFO_HTTP_ERR : 0);
        ufo_mcp_hub_process (self, fds, n);
    }
    return done (arg);
}
