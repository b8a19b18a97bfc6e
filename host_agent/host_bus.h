/*  host_bus.h - ufo-host's connections: the worker of service "host" for a device, the
    task submitter (subtasks, evaluations), the blackboard client and its bus subscription
    (worker.ready events), the desktop and the LLM client, and the one loop that serves
    them all and drives the session's step-driven machine (host_session.h). */
#ifndef HOST_BUS_H_INCLUDED
#define HOST_BUS_H_INCLUDED

#include "ufo_config.h"
#include "ufo_error.h"
#include "host_session.h"

typedef struct _host_bus_t host_bus_t;

typedef struct {
    const char *endpoint;       //  broker command endpoint ("" = default ipc endpoint)
    const char *bus_endpoint;   //  broker bus endpoint ("" = default ipc endpoint), NULL = none:
                                //  worker.ready is not listened for (dispatch.state is asked)
    const char *device;         //  device id (required)
    const char *name;           //  worker name for the monitor, NULL = default
    const char *llm_mode;       //  --llm-mode, NULL = configuration
    const char *llm_cassette;   //  --llm-cassette, NULL = configuration
    const char *prompts_dir;    //  NULL = default lookup
} host_bus_options_t;

//  Opens everything. config is borrowed and must outlive the bus. NULL with err.
host_bus_t *host_bus_new (const ufo_config_t *config, const host_bus_options_t *options, ufo_error_t *err);

//  Closes everything (an unfinished session task is released to the broker). Safe twice.
void host_bus_destroy (host_bus_t **self_p);

//  Serves session tasks until *stop becomes non-zero. Returns 0.
int host_bus_serve (host_bus_t *self, volatile sig_atomic_t *stop);

#endif
