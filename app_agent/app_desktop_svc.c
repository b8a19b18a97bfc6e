/*  app_desktop_svc.c - the "desktop" service of a device (see app_desktop_svc.h): window
    lists and screenshots for clients anywhere on the bus, in the desktop-service process
    (`ufo-app --desktop-service`).

    Everything runs in the process's loop, over its one broker connection (ufo_conn, a
    worker of service "desktop"). The window list and the capture are X calls of a few
    milliseconds; the PNG goes to the broker's blob store with an asynchronous blob.put on
    the same connection (ufo_conn_call), whose reply or timeout completes the task, so the
    loop never waits for it. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_loop.h"
#include "ufo_value.h"
#include "ufo_agent_opts.h"
#include "ufo_conn.h"
#include "ufo_bb_proto.h"
#include "app_ctx.h"
#include "app_desktop_svc.h"

#define S_CAPACITY 4                //  tasks at once (each ends within APP_DESKTOP_PUT_MS)
#define S_HEARTBEAT_FACTOR 3        //  heartbeat interval: this times dispatch.heartbeat_ivl_ms

typedef struct {
    char task [80];                 //  "" free
    uint64_t call;                  //  the blob.put's call id (ufo_conn_call)
    ufo_value_t *result;            //  the result without "blob"
} s_put_t;

struct _app_desktop_svc_t {
    app_ctx_t *ctx;
    ufo_conn_t *conn;               //  owned: the process's one broker connection
    s_put_t puts [S_CAPACITY];
};

static ufo_value_t *
s_error_result (ufo_value_t *result, const char **status, const char *fmt, ...)
{
    char text [600];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    ufo_value_destroy (&result);
    result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "error", text);
    *status = "failed";
    return result;
}

//  A window of ufo_desktop_windows in the protocol's shape.
static ufo_value_t *
s_window (const ufo_value_t *w)
{
    ufo_value_t *out = ufo_value_new_map ();
    ufo_value_map_set_int (out, "xid", ufo_value_map_int (w, "xid", 0));
    ufo_value_map_set_str (out, "app", ufo_value_map_str (w, "name", ""));
    ufo_value_map_set_str (out, "title", ufo_value_map_str (w, "title", ""));
    ufo_value_map_set_int (out, "pid", ufo_value_map_int (w, "pid", 0));
    ufo_value_map_set_bool (out, "focused", ufo_value_map_bool (w, "active", false));
    const ufo_value_t *r = ufo_value_map_get (w, "rect");
    int64_t v [4] = { 0, 0, 0, 0 };
    for (size_t i = 0; i < 4 && i < ufo_value_size (r); i++)
        v [i] = ufo_value_int (ufo_value_list_at (r, i));
    ufo_value_t *g = ufo_value_new_map ();
    ufo_value_map_set_int (g, "x", v [0]);
    ufo_value_map_set_int (g, "y", v [1]);
    ufo_value_map_set_int (g, "width", v [2] - v [0]);
    ufo_value_map_set_int (g, "height", v [3] - v [1]);
    ufo_value_map_set (out, "geometry", &g);
    return out;
}

ufo_value_t *
app_desktop_svc_handle (app_ctx_t *ctx, const ufo_value_t *body, const char **status,
                        void **png_p, size_t *png_len)
{
    *status = "done";
    *png_p = NULL;
    *png_len = 0;
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_map_set_str (result, "device", ctx->device ? ctx->device : "");
    const char *op = ufo_value_map_str (body, "op", "");
    if (ufo_value_type (body) != UFO_TMAP)
        return s_error_result (result, status, "a desktop query is a map {\"op\": \"windows\" | \"screenshot\", ...}");
    ufo_error_t err;
    if (!strcmp (op, "windows")) {
        ufo_value_t *wins = ufo_desktop_windows (ctx->desktop, &err);
        if (!wins)
            return s_error_result (result, status, "the window list of device %s failed: %s", ctx->device, err.message);
        ufo_value_t *list = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (wins); i++)
            ufo_value_list_push (list, &(ufo_value_t *) { s_window (ufo_value_list_at (wins, i)) });
        ufo_value_map_set (result, "windows", &list);
        ufo_value_destroy (&wins);
        return result;
    }
    if (strcmp (op, "screenshot"))
        return s_error_result (result, status, "unknown desktop query \"%.100s\" (\"windows\" or \"screenshot\")", op);
    const ufo_value_t *x = ufo_value_map_get (body, "xid");
    if (x && ufo_value_type (x) != UFO_TINT && ufo_value_type (x) != UFO_TNULL)
        return s_error_result (result, status, "\"xid\" must be an integer window id (from the window list)");
    int64_t xid = x ? ufo_value_int (x) : 0;
    if (xid < 0)
        return s_error_result (result, status, "\"xid\" must not be negative");
    const ufo_value_t *ttl = ufo_value_map_get (body, "ttl_ms");
    if (ttl && (ufo_value_type (ttl) != UFO_TINT || ufo_value_int (ttl) < UFO_BB_BLOB_TTL_MIN_MS
            ||  ufo_value_int (ttl) > UFO_BB_BLOB_TTL_MAX_MS))
        return s_error_result (result, status, "\"ttl_ms\" must be an integer of milliseconds, %d .. %lld",
                               UFO_BB_BLOB_TTL_MIN_MS, UFO_BB_BLOB_TTL_MAX_MS);
    if (xid) {
        //  only a window of the list: never an arbitrary X resource of the display
        ufo_value_t *wins = ufo_desktop_windows (ctx->desktop, &err);
        bool found = false;
        for (size_t i = 0; i < ufo_value_size (wins) && !found; i++)
            found = ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid;
        ufo_value_destroy (&wins);
        if (!found)
            return s_error_result (result, status, "device %s has no application window %" PRId64
                                   " (list_windows gives the ids)", ctx->device, xid);
    }
    ufo_image_t *img = xid ? ufo_desktop_capture_window (ctx->desktop, xid, &err)
                           : ufo_desktop_capture_screen (ctx->desktop, &err);
    void *png = NULL;
    size_t len = 0;
    if (!img || ufo_image_encode_png (img, ctx->png_level, &png, &len, &err) < 0) {
        ufo_image_destroy (&img);
        return s_error_result (result, status, "the screenshot of device %s failed: %s", ctx->device, err.message);
    }
    ufo_value_map_set_int (result, "xid", xid);
    ufo_value_map_set_int (result, "width", ufo_image_width (img));
    ufo_value_map_set_int (result, "height", ufo_image_height (img));
    ufo_value_map_set_int (result, "size", (int64_t) len);
    ufo_value_map_set_str (result, "mime", "image/png");
    ufo_image_destroy (&img);
    if (len > APP_DESKTOP_MAX_PNG) {
        free (png);
        return s_error_result (result, status, "the screenshot of device %s is %zu bytes, over the bound of %u bytes",
                               ctx->device, len, APP_DESKTOP_MAX_PNG);
    }
    *png_p = png;
    *png_len = len;
    return result;
}

static void
s_complete (app_desktop_svc_t *self, const char *task, const char *status, ufo_value_t **result_p)
{
    if (ufo_conn_complete (self->conn, task, status, result_p) < 0)
        ufo_warn ("desktop: task %s is not running here any more", task);
    ufo_value_destroy (result_p);
}

static void
s_put_free (s_put_t *p)
{
    ufo_value_destroy (&p->result);
    memset (p, 0, sizeof *p);
}

//  The outcome of a screenshot's blob.put (from the loop): the task completes with the
//  blob, or fails with why the broker did not store it (its error, the call's timeout,
//  the connection lost).
static void
s_on_put (void *arg, ufo_conn_reply_t *reply)
{
    app_desktop_svc_t *self = arg;
    s_put_t *p = NULL;
    for (size_t i = 0; i < S_CAPACITY && !p; i++)
        if (self->puts [i].task [0] && self->puts [i].call == reply->id)
            p = &self->puts [i];
    if (!p)
        return;                     //  (cancelled meanwhile: the call was forgotten)
    const char *blob = reply->ok ? ufo_value_map_str (*reply->body_p, "blob", "") : "";
    if (*blob) {
        ufo_value_map_set_str (p->result, "blob", blob);
        s_complete (self, p->task, "done", &p->result);
    }
    else {
        const char *status;
        ufo_value_t *r = reply->err.code == UFO_E_TIMEOUT
            ? s_error_result (NULL, &status, "the broker did not store the screenshot within %d ms",
                              APP_DESKTOP_PUT_MS)
            : s_error_result (NULL, &status, "the broker did not store the screenshot: %s",
                              reply->ok ? "no blob in its reply" : reply->err.message);
        ufo_info ("desktop: task %s failed: %s", p->task, ufo_value_map_str (r, "error", ""));
        s_complete (self, p->task, status, &r);
    }
    s_put_free (p);
}

static void
s_on_task (app_desktop_svc_t *self, const char *task, const ufo_value_t *body)
{
    const char *status;
    void *png = NULL;
    size_t len = 0;
    int64_t t0 = ufo_time_mono_us ();
    ufo_value_t *result = app_desktop_svc_handle (self->ctx, body, &status, &png, &len);
    ufo_debug ("desktop: %s %s in %.1f ms", ufo_value_map_str (body, "op", "?"), status,
               (double) (ufo_time_mono_us () - t0) / 1000.0);
    if (!png) {
        if (!strcmp (status, "failed"))
            ufo_info ("desktop: task %s failed: %s", task, ufo_value_map_str (result, "error", ""));
        s_complete (self, task, status, &result);
        return;
    }
    s_put_t *slot = NULL;
    for (size_t i = 0; i < S_CAPACITY && !slot; i++)
        if (!self->puts [i].task [0])
            slot = &self->puts [i];
    if (!slot) {
        //  the broker delivers at most S_CAPACITY tasks at once: only a broker that does not
        //  keep to the capacity gets here
        ufo_value_t *r = s_error_result (result, &status, "too many screenshots in flight");
        s_complete (self, task, status, &r);
        free (png);
        return;
    }
    snprintf (slot->task, sizeof slot->task, "%s", task);
    slot->result = result;
    ufo_value_t *put = ufo_value_new_map ();    //  the PNG is for this client: it expires
    ufo_value_map_set_int (put, "ttl_ms", ufo_value_map_int (body, "ttl_ms", APP_DESKTOP_BLOB_TTL_MS));
    slot->call = ufo_conn_call (self->conn, "blob.put", &put, png, len, APP_DESKTOP_PUT_MS, s_on_put, self);
    free (png);
}

//  A connection event, from inside the loop.
static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    app_desktop_svc_t *self = arg;
    const ufo_value_t *ev = *event_p;
    const char *kind = ufo_value_map_str (ev, "kind", "");
    const char *task = ufo_value_map_str (ev, "task", "");
    if (!strcmp (kind, "task"))
        s_on_task (self, task, ufo_value_map_get (ev, "body"));
    else
    if (!strcmp (kind, "cancel")) {
        for (size_t i = 0; i < S_CAPACITY; i++)
            if (self->puts [i].task [0] && !strcmp (self->puts [i].task, task)) {
                ufo_conn_call_forget (self->conn, self->puts [i].call);
                ufo_value_t *r = ufo_value_new_map ();
                ufo_value_map_set_str (r, "error", "cancelled");
                s_complete (self, task, "cancelled", &r);
                s_put_free (&self->puts [i]);
            }
    }
    else
        ufo_debug ("desktop: broker connection event %s", kind);
}

app_desktop_svc_t *
app_desktop_svc_new (app_ctx_t *ctx, const char *endpoint, ufo_error_t *err)
{
    assert (ctx && ctx->loop && ctx->desktop);
    //  heartbeats S_HEARTBEAT_FACTOR times slower than the agents': an idle device's
    //  desktop service wakes up only a third as often (docs/BENCHMARKS.md "Idle agents"); a
    //  lost desktop service is noticed later, which only matters to a query that then waits
    //  for its deadline instead of failing over sooner
    int ivl = (int) ufo_config_int (ctx->config, "dispatch.heartbeat_ivl_ms", 0);
    ufo_conn_config_t cc = {
        .endpoint = endpoint, .service = "desktop", .device = ctx->device, .capacity = S_CAPACITY,
        .heartbeat_ivl_ms = (ivl > 0 ? ivl : 1000) * S_HEARTBEAT_FACTOR,
        .heartbeat_liveness = (int) ufo_config_int (ctx->config, "dispatch.heartbeat_liveness", 0),
        .call_timeout_ms = APP_DESKTOP_PUT_MS
    };
    app_desktop_svc_t *self = ufo_calloc (1, sizeof *self);
    self->ctx = ctx;
    self->conn = ufo_conn_new (&cc, ctx->loop, s_on_event, self, err);
    if (!self->conn) {
        free (self);
        return NULL;
    }
    ufo_info ("serving desktop queries of device %s via %s (one connection, %s)", ctx->device, endpoint,
              ufo_conn_routing_id (self->conn));
    return self;
}

void
app_desktop_svc_destroy (app_desktop_svc_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_desktop_svc_t *self = *self_p;
    //  screenshots still waiting for their blob.put are released (the broker requeues
    //  them when the worker leaves): their calls must not complete them during the leave
    for (size_t i = 0; i < S_CAPACITY; i++) {
        if (self->puts [i].task [0])
            ufo_conn_call_forget (self->conn, self->puts [i].call);
        s_put_free (&self->puts [i]);
    }
    ufo_conn_destroy (&self->conn);
    free (self);
    *self_p = NULL;
}

int
app_desktop_svc_run (app_ctx_t *ctx)
{
    if (!ctx->endpoint [0]) {
        ufo_error ("no broker endpoint (--broker or broker.cmd_endpoint)");
        return 2;
    }
    ufo_error_t err;
    app_desktop_svc_t *self = app_desktop_svc_new (ctx, ctx->endpoint, &err);
    if (!self) {
        ufo_error ("cannot serve desktop queries: %s", err.message);
        return 2;
    }
    //  again, after the connection's socket: czmq installs its own SIGTERM / SIGINT handlers
    //  when it starts, and the stop flag would never be set
    ufo_agent_signals_install ();
    if (ufo_agent_signal_fd () >= 0)
        ufo_loop_stop_on (ctx->loop, ufo_agent_signal_fd ());
    //  idle: until the loop's nearest timer (heartbeats, a blob.put's deadline) or an event
    while (!*ufo_agent_stop_flag () && !ufo_loop_stopped (ctx->loop)) {
        ufo_loop_run_once (ctx->loop, -1);
        ufo_desktop_pump (ctx->desktop);
    }
    app_desktop_svc_destroy (&self);
    return 0;
}
