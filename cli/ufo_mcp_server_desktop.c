/*  ufo_mcp_server_desktop.c - the desktop tools of `ufo mcp-server`: list_windows and
    screenshot of any device on the bus. Each call is a task of service "desktop" for the
    device (docs/PROTOCOL.md 4.5), served by that device's desktop-service process
    (`ufo-app --desktop-service`, started by `ufo up` for every device), which has its
    desktop open; a screenshot comes back as a blob of the broker's blob store, put with a
    ttl_ms of S_BLOB_TTL_MS so that the broker removes it after the fetch. Before the
    task is submitted, the broker's dispatch.state tells whether the device exists and has a
    desktop agent, so those cases get a clear error at once instead of a timeout.

    Fallback: with no device named and none on the bus serving desktop queries, the desktop
    of this machine ($DISPLAY) is used, as before devices could be asked. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_cli_session.h"
#include "ufo_mcp_server.h"

#define S_DEFAULT_TIMEOUT_S 15.0
#define S_MAX_TIMEOUT_S     300.0
#define S_MAX_PNG           (8u * 1024 * 1024)  //  the agents' bound (APP_DESKTOP_MAX_PNG)
//  The screenshot's PNG is put with this ttl_ms (PROTOCOL.md 2.3, 4.5): the server fetches it
//  as soon as the task's result comes, so the broker may remove it soon after
#define S_BLOB_TTL_MS       30000

static void
s_fail (const ufo_value_t *id, const char *fmt, ...)
{
    char text [1200];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    ufo_mcps_tool_result (id, text, NULL, true);
}

//  --- the fallback: this machine's desktop ---------------------------------------------------

static void
s_local (ufo_mcps_t *self, const ufo_value_t *id, const char *tool, int64_t xid)
{
    ufo_error_t err;
    if (!self->desktop)
        self->desktop = ufo_desktop_new (NULL, &err);
    if (!self->desktop) {
        s_fail (id, "no device on the bus serves desktop queries, and this machine's desktop is not reachable "
                "either: %s", err.message);
        return;
    }
    if (!strcmp (tool, "list_windows")) {
        ufo_value_t *wins = ufo_desktop_windows (self->desktop, &err);
        if (!wins) {
            s_fail (id, "%s", err.message);
            return;
        }
        ufo_value_t *out = ufo_value_new_map ();
        ufo_value_map_set_null (out, "device");
        ufo_value_map_set (out, "windows", &wins);
        ufo_mcps_tool_json (id, &out);
        return;
    }
    ufo_image_t *img = xid ? ufo_desktop_capture_window (self->desktop, xid, &err)
                           : ufo_desktop_capture_screen (self->desktop, &err);
    void *png = NULL;
    size_t len = 0;
    if (!img || ufo_image_encode_png (img, 1, &png, &len, &err) < 0)
        s_fail (id, "%s", err.message);
    else
    if (len > S_MAX_PNG)
        s_fail (id, "the screenshot is %zu bytes, over the bound of %u bytes", len, S_MAX_PNG);
    else {
        char caption [200];
        snprintf (caption, sizeof caption, "%dx%d PNG, %zu bytes, this machine's desktop", ufo_image_width (img),
                  ufo_image_height (img), len);
        ufo_mcps_tool_reply (id, png, len, caption, NULL, false);
    }
    free (png);
    ufo_image_destroy (&img);
}

//  --- a device's desktop through the bus -------------------------------------------------------

//  "a, b, c" of the keys of map (at most size bytes).
static void
s_names (const ufo_value_t *map, char *out, size_t size, bool desktop_only)
{
    out [0] = 0;
    size_t used = 0;
    for (size_t i = 0; i < ufo_value_size (map) && used + 2 < size; i++) {
        const ufo_value_t *services = ufo_value_map_value_at (map, i);
        bool has = false;
        for (size_t k = 0; k < ufo_value_size (services); k++)
            has |= !strcmp (ufo_value_str (ufo_value_list_at (services, k)) ?: "", "desktop");
        if (desktop_only && !has)
            continue;
        int n = snprintf (out + used, size - used, "%s%s", used ? ", " : "", ufo_value_map_key_at (map, i));
        used += n > 0 ? (size_t) n : 0;
    }
    if (used >= size)
        out [size - 1] = 0;
}

void
ufo_mcps_desktop_tool (ufo_mcps_t *self, const ufo_value_t *id, const char *tool, const ufo_value_t *args)
{
    const ufo_value_t *dv = ufo_value_map_get (args, "device");
    const ufo_value_t *xv = ufo_value_map_get (args, "xid");
    const ufo_value_t *tv = ufo_value_map_get (args, "timeout_s");
    if (dv && ufo_value_type (dv) != UFO_TSTRING) {
        s_fail (id, "\"device\" must be a string (a device from list_devices)");
        return;
    }
    if (xv && (ufo_value_type (xv) != UFO_TINT || ufo_value_int (xv) < 0)) {
        s_fail (id, "\"xid\" must be a window id from list_windows (a non-negative integer)");
        return;
    }
    if (tv && ((ufo_value_type (tv) != UFO_TINT && ufo_value_type (tv) != UFO_TFLOAT)
           ||  ufo_value_float (tv) <= 0 || ufo_value_float (tv) > S_MAX_TIMEOUT_S)) {
        s_fail (id, "\"timeout_s\" must be a number of seconds above 0 and at most %g", S_MAX_TIMEOUT_S);
        return;
    }
    const char *device = dv ? ufo_value_str (dv) : NULL;
    int64_t xid = xv ? ufo_value_int (xv) : 0;
    double timeout_s = tv ? ufo_value_float (tv) : S_DEFAULT_TIMEOUT_S;
    if (device && !*device)
        device = NULL;

    ufo_error_t err;
    ufo_value_t *state = ufo_mcps_state (self, &err);
    if (!state) {
        s_fail (id, "no answer from the broker at %.200s: %s", self->endpoint, err.message);
        return;
    }
    ufo_value_t *devices = ufo_mcps_devices (state);
    ufo_value_destroy (&state);
    char all [600], with [600], chosen [160] = "";     //  device names: at most 128 bytes
    s_names (devices, all, sizeof all, false);
    s_names (devices, with, sizeof with, true);
    if (device) {
        const ufo_value_t *services = ufo_value_map_get (devices, device);
        char list [400] = "";
        size_t used = 0;
        bool has = false;
        for (size_t k = 0; k < ufo_value_size (services); k++) {
            const char *svc = ufo_value_str (ufo_value_list_at (services, k)) ?: "";
            has |= !strcmp (svc, "desktop");
            int n = snprintf (list + used, sizeof list - used, "%s%s", used ? ", " : "", svc);
            used = n > 0 && used + (size_t) n < sizeof list ? used + (size_t) n : used;
        }
        if (!services)
            s_fail (id, "no such device \"%.128s\" on the bus (devices with workers: %s)", device, *all ? all : "none");
        else
        if (!has)
            s_fail (id, "device \"%.128s\" has no desktop agent: none of its workers (%s) serves desktop queries; "
                    "`ufo-app --desktop-service --device %.128s` on that device serves them (`ufo up` starts it)",
                    device, list, device);
        else
            snprintf (chosen, sizeof chosen, "%.128s", device);
    }
    else
    if (!*with) {
        ufo_value_destroy (&devices);
        if (getenv ("DISPLAY") && *getenv ("DISPLAY"))
            s_local (self, id, tool, xid);
        else
            s_fail (id, "no device on the bus serves desktop queries (devices with workers: %s; "
                    "`ufo-app --desktop-service` serves its device's desktop), and this machine has no DISPLAY", *all ? all : "none");
        return;
    }
    else
    if (strchr (with, ','))
        s_fail (id, "several devices have a desktop (%s): name one with \"device\"", with);
    else
        snprintf (chosen, sizeof chosen, "%.128s", with);
    ufo_value_destroy (&devices);
    if (!*chosen)
        return;

    ufo_mcps_call_t *slot = ufo_mcps_call_slot (self);
    if (!slot) {
        s_fail (id, "too many calls in flight from this MCP server");
        return;
    }
    bool shot = !strcmp (tool, "screenshot");
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "op", shot ? "screenshot" : "windows");
    if (shot && xid)
        ufo_value_map_set_int (body, "xid", xid);
    if (shot)
        ufo_value_map_set_int (body, "ttl_ms", S_BLOB_TTL_MS);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "desktop");
    ufo_value_map_set_str (spec, "device", chosen);
    ufo_value_map_set_int (spec, "deadline_ms", (int64_t) (timeout_s * 1000));
    ufo_value_map_set_int (spec, "max_attempts", 2);
    ufo_value_map_set (spec, "body", &body);
    if (ufo_tasks_submit (self->tasks, &spec, slot->task, &err) != 0) {
        ufo_value_destroy (&spec);
        memset (slot, 0, sizeof *slot);
        s_fail (id, "the query could not be submitted: %s", err.message);
        return;
    }
    slot->desktop = true;
    slot->id = ufo_value_dup (id);
    slot->conn = ufo_mcps_sink;
    slot->timeout_s = timeout_s;
    snprintf (slot->op, sizeof slot->op, "%s", shot ? "screenshot" : "windows");
    snprintf (slot->device, sizeof slot->device, "%s", chosen);
    ufo_debug ("desktop query %s of device %s (task %s)", slot->op, chosen, slot->task);
}

//  The PNG of a screenshot result, from the broker's blob store; answers the call.
static void
s_screenshot_reply (ufo_mcps_t *self, ufo_mcps_call_t *c, const ufo_value_t *body)
{
    const char *blob = ufo_value_map_str (body, "blob", "");
    ufo_error_t err;
    ufo_bb_client_t *client = ufo_bb_client_new (self->endpoint, NULL, &err);
    char *png = NULL;
    size_t len = 0;
    int rc = -1;
    if (client) {
        ufo_bb_client_set_timeout (client, 10000);
        ufo_bb_client_set_sender (client, "ufo-mcp-server");
        rc = ufo_bb_client_blob_get (client, blob, &png, &len, &err);
        ufo_bb_client_destroy (&client);
    }
    if (rc != 0 || len < 8 || memcmp (png, "\x89PNG\r\n\x1a\n", 8) != 0) {
        s_fail (c->id, "the screenshot of device %s could not be read from the broker's blob store: %s", c->device,
                rc != 0 ? err.message : "not a PNG");
        free (png);
        return;
    }
    char caption [400];
    int64_t xid = ufo_value_map_int (body, "xid", 0);
    char what [64] = "the screen";
    if (xid)
        snprintf (what, sizeof what, "window %" PRId64, xid);
    snprintf (caption, sizeof caption, "%" PRId64 "x%" PRId64 " PNG, %zu bytes: %s of device %s",
              ufo_value_map_int (body, "width", 0), ufo_value_map_int (body, "height", 0), len, what, c->device);
    ufo_value_t *meta = ufo_value_dup (body);
    ufo_mcps_tool_reply (c->id, png, len, caption, &meta, false);
    ufo_value_destroy (&meta);
    free (png);
}

void
ufo_mcps_desktop_event (ufo_mcps_t *self, ufo_mcps_call_t *c, const ufo_value_t *ev)
{
    if (strcmp (ufo_value_map_str (ev, "kind", ""), "result"))
        return;                     //  accepted, progress: nothing to tell
    const char *status = ufo_value_map_str (ev, "status", "");
    const ufo_value_t *body = ufo_value_map_get (ev, "body");
    if (!strcmp (status, "done") && !strcmp (c->op, "windows") && ufo_value_type (ufo_value_map_get (body, "windows")) == UFO_TLIST) {
        ufo_value_t *out = ufo_value_dup (body);
        ufo_mcps_tool_json (c->id, &out);
    }
    else
    if (!strcmp (status, "done") && !strcmp (c->op, "screenshot") && *ufo_value_map_str (body, "blob", ""))
        s_screenshot_reply (self, c, body);
    else {
        const char *agent = ufo_value_map_str (body, "error", "");      //  the agent's own words name the device
        const char *reason = *agent ? agent : ufo_value_map_str (ev, "reason", "");
        if (*agent && strcmp (status, "cancelled"))
            s_fail (c->id, "%s", agent);
        else
        if (strstr (reason, "deadline passed"))
            s_fail (c->id, "timeout: device %s's desktop agent did not answer within %g s (%s)", c->device,
                    c->timeout_s, reason);
        else
        if (!strcmp (status, "cancelled"))
            s_fail (c->id, "the %s query of device %s was cancelled", c->op, c->device);
        else
            s_fail (c->id, "device %s: %s", c->device, *reason ? reason : "the desktop query failed");
    }
    ufo_mcps_call_free (c);
}
