/*  app_desktop_svc.h - the desktop queries of a device, served by its desktop-service
    process (`ufo-app --desktop-service --device ID`, one per device, started by `ufo up`
    and the compose devices): a worker of service "desktop" on that device
    (docs/PROTOCOL.md 4.5), so that a client anywhere on the bus (`ufo mcp-server`) can list
    the windows of that device's desktop and take a screenshot of it, whatever its
    AppAgents are busy with. The process has one broker connection (issue 17): the worker
    side and the screenshots' blob.put calls share it.

    Task bodies: {"op": "windows"} and {"op": "screenshot", "xid"?: int (0 / absent: the
    whole screen), "ttl_ms"?: int (how long the broker keeps the PNG, 1 s .. 7 days; default
    APP_DESKTOP_BLOB_TTL_MS)}. Results (task "done"):
      windows:    {"device", "windows": [{"xid", "app", "title", "pid", "focused",
                   "geometry": {"x", "y", "width", "height"}}]}
      screenshot: {"device", "xid", "blob": sha256 of the PNG in the broker's blob store,
                   "size": bytes, "width", "height", "mime": "image/png"}
    A body it cannot use, a window that is not there, a PNG over APP_DESKTOP_MAX_PNG or a
    blob store that does not answer within APP_DESKTOP_PUT_MS completes the task "failed"
    with {"error": reason}; the process goes on serving. */
#ifndef APP_DESKTOP_SVC_H_INCLUDED
#define APP_DESKTOP_SVC_H_INCLUDED

#include "ufo_error.h"
#include "app_ctx.h"

//  Largest PNG a screenshot task stores (bytes); a bigger one fails with the size.
#define APP_DESKTOP_MAX_PNG (8u * 1024 * 1024)
//  How long a screenshot waits for the broker to store its PNG (ms).
#define APP_DESKTOP_PUT_MS 10000
//  A screenshot's PNG is put with this ttl_ms unless the task says otherwise: it is for the
//  client that asked, which fetches it at once; the broker then removes it (PROTOCOL.md 2.3).
#define APP_DESKTOP_BLOB_TTL_MS 600000

typedef struct _app_desktop_svc_t app_desktop_svc_t;

//  Starts serving "desktop" for ctx->device through the broker at endpoint, in ctx->loop,
//  on a connection of its own (ctx->conn is not used: open the context with
//  app_ctx_options_t.desktop_service, which opens none; ctx->desktop and ctx->loop are
//  borrowed and must outlive the service). Returns NULL with err for a bad endpoint or
//  configuration.
app_desktop_svc_t *app_desktop_svc_new (app_ctx_t *ctx, const char *endpoint, ufo_error_t *err);

//  Stops serving (the broker requeues what was not completed) and frees; sets *self_p to
//  NULL. Safe with NULL.
void app_desktop_svc_destroy (app_desktop_svc_t **self_p);

//  The desktop-service process: serves "desktop" for ctx->device through ctx->endpoint
//  until SIGTERM / SIGINT. Returns the process exit status (0 after a clean stop, 2 when
//  it cannot start).
int app_desktop_svc_run (app_ctx_t *ctx);

//  Handles one task body (the "body" of a delivered task) and writes the result: returns a
//  result map (caller owns) and sets *status to "done" or "failed"; a screenshot's PNG is
//  returned in *png_p / *png_len (caller frees) for the caller to store, its result then
//  lacks "blob". Exposed for tests.
ufo_value_t *app_desktop_svc_handle (app_ctx_t *ctx, const ufo_value_t *body, const char **status,
                                     void **png_p, size_t *png_len);

#endif
