/*  app_main.h - the process-level pieces of ufo-app shared by app_main.c and the
    dispatched path (app_worker.c). */
#ifndef APP_MAIN_H_INCLUDED
#define APP_MAIN_H_INCLUDED

#include "app_ctx.h"

//  Serves service app:<ctx->app> on device ctx->device through the broker at endpoint
//  until stopped. Returns the process exit status (0 after a clean stop, 2 when the
//  worker cannot start).
int app_worker_run (app_ctx_t *ctx, const char *endpoint);

#endif
