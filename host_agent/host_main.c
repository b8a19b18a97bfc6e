/*  host_main.c - ufo-host: the HostAgent, a worker of service "host" for one device.

    ufo-host [--device ID] [--config FILE] [--broker ENDPOINT] [--bus ENDPOINT] [--name NAME]
             [--llm-mode live|record|replay] [--llm-cassette FILE] [--prompts DIR]
             [--log-level LEVEL] [--help] [--version] */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "host_bus.h"

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: ufo-host [--device ID] [--config FILE] [--broker ENDPOINT] [--bus ENDPOINT] [--name NAME]\n"
        "                [--llm-mode MODE] [--llm-cassette FILE] [--prompts DIR] [--log-level LEVEL]\n"
        "The HostAgent: serves sessions (service \"host\") for one device's desktop. Each session\n"
        "runs its rounds through the HostAgent state machine, hands subtasks to the AppAgents\n"
        "(service app:<application>, same device) and asks the EvaluationAgent (service eval).\n"
        "  --device ID        device id (default $UFO_DEVICE, else \"local\")\n"
        "  --config FILE      configuration file (default $UFO_CONFIG, ./config/ufo.json)\n"
        "  --broker ENDPOINT  broker command endpoint (default broker.cmd_endpoint)\n"
        "  --bus ENDPOINT     broker bus endpoint, for worker.ready events (default broker.bus_endpoint;\n"
        "                     the default ipc one when the broker's command endpoint is the default)\n"
        "  --name NAME        worker name shown by the monitor\n"
        "  --llm-mode MODE    live | record | replay (default llm.mode)\n"
        "  --llm-cassette F   cassette file for record / replay\n"
        "  --prompts DIR      prompt templates (default $UFO_PROMPTS_DIR, ./prompts, installed)\n"
        "  --log-level LEVEL  trace | debug | info | warn | error\n");
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-host");
    ufo_agent_opts_t opts = { .program = "ufo-host" };
    const char *bus_ep = NULL;
    const ufo_agent_opt_t extra [] = { { "--bus", &bus_ep }, { NULL, NULL } };
    int rc;
    if (ufo_agent_opts_parse (&opts, argc, argv, extra, 0, s_usage, &rc) < 0)
        return rc;
    if (!opts.device)
        opts.device = getenv ("UFO_DEVICE");
    if (!opts.device || !*opts.device)
        opts.device = "local";
    //  configuration, log level, --broker default, CURVE (security.*) for every bus socket
    ufo_config_t *config = ufo_agent_start (&opts, &rc);
    if (!config)
        return rc;
    //  the bus endpoint: --bus, else broker.bus_endpoint (ufo up and the compose file set it),
    //  else the default one next to a default command endpoint; else none (host_bus.h)
    if (!bus_ep && *ufo_config_str (config, "broker.bus_endpoint", ""))
        bus_ep = ufo_config_str (config, "broker.bus_endpoint", "");
    if (!bus_ep && (!opts.broker || !*opts.broker))
        bus_ep = "";
    host_bus_options_t options = { .endpoint = opts.broker, .bus_endpoint = bus_ep, .device = opts.device,
                                   .name = opts.name, .llm_mode = opts.llm_mode,
                                   .llm_cassette = opts.llm_cassette, .prompts_dir = opts.prompts };
    ufo_error_t err = { 0 };
    host_bus_t *bus = host_bus_new (config, &options, &err);
    if (!bus) {
        fprintf (stderr, "ufo-host: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    //  after the bus is up: czmq installs its own handlers when it starts
    ufo_agent_signals_install ();
    ufo_info ("host: serving sessions for device %s", opts.device);
    host_bus_serve (bus, ufo_agent_stop_flag ());
    ufo_info ("host: stopping");
    host_bus_destroy (&bus);
    ufo_config_destroy (&config);
    return 0;
}
