/*  host_main.c - ufo-host: the HostAgent, a worker of service "host" for one device.

    ufo-host [--device ID] [--config FILE] [--broker ENDPOINT] [--name NAME]
             [--llm-mode live|record|replay] [--llm-cassette FILE] [--prompts DIR]
             [--log-level LEVEL] [--help] [--version] */
#include "ufo_prelude.h"
#include "host_bus.h"

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: ufo-host [--device ID] [--config FILE] [--broker ENDPOINT] [--name NAME]\n"
        "                [--llm-mode MODE] [--llm-cassette FILE] [--prompts DIR] [--log-level LEVEL]\n"
        "The HostAgent: serves sessions (service \"host\") for one device's desktop. Each session\n"
        "runs its rounds through the HostAgent state machine, hands subtasks to the AppAgents\n"
        "(service app:<application>, same device) and asks the EvaluationAgent (service eval).\n"
        "  --device ID        device id (default $UFO_DEVICE, else \"local\")\n"
        "  --config FILE      configuration file (default $UFO_CONFIG, ./config/ufo.json)\n"
        "  --broker ENDPOINT  broker command endpoint (default broker.cmd_endpoint)\n"
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
    const char *device = getenv ("UFO_DEVICE"), *config_path = NULL, *broker = NULL, *name = NULL;
    const char *llm_mode = NULL, *cassette = NULL, *prompts = NULL, *level = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        const char **slot = NULL;
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_usage (stdout);
            return 0;
        }
        if (strcmp (arg, "--version") == 0 || strcmp (arg, "-V") == 0) {
            printf ("ufo-host (ufobus) %s\n", UFO_VERSION);
            return 0;
        }
        if (strcmp (arg, "--device") == 0) slot = &device;
        else if (strcmp (arg, "--config") == 0) slot = &config_path;
        else if (strcmp (arg, "--broker") == 0) slot = &broker;
        else if (strcmp (arg, "--name") == 0) slot = &name;
        else if (strcmp (arg, "--llm-mode") == 0) slot = &llm_mode;
        else if (strcmp (arg, "--llm-cassette") == 0) slot = &cassette;
        else if (strcmp (arg, "--prompts") == 0) slot = &prompts;
        else if (strcmp (arg, "--log-level") == 0) slot = &level;
        if (!slot || i + 1 >= argc) {
            fprintf (stderr, "ufo-host: %s \"%s\"\n", slot ? "missing value after" : "unknown option", arg);
            s_usage (stderr);
            return 2;
        }
        *slot = argv [++i];
    }
    if (!device || !*device)
        device = "local";
    ufo_error_t err = { 0 };
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo-host: configuration: %s\n", err.message);
        return 1;
    }
    ufo_config_apply_log (config);
    if (level) {
        int l = ufo_log_level_parse (level);
        if (l < 0) {
            fprintf (stderr, "ufo-host: --log-level: \"%s\" is not a level\n", level);
            ufo_config_destroy (&config);
            return 2;
        }
        ufo_log_set_level ((ufo_log_level_t) l);
    }
    if (!broker)
        broker = ufo_config_str (config, "broker.cmd_endpoint", "");
    //  CURVE (security.*): the default of every bus socket of this process
    if (ufo_security_init (config, "agent", &err) < 0) {
        fprintf (stderr, "ufo-host: security: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    host_bus_options_t options = { .endpoint = broker, .device = device, .name = name,
                                   .llm_mode = llm_mode, .llm_cassette = cassette, .prompts_dir = prompts };
    host_bus_t *bus = host_bus_new (config, &options, &err);
    if (!bus) {
        fprintf (stderr, "ufo-host: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    //  after the bus is up: czmq installs its own handlers when it starts
    struct sigaction sa = { .sa_handler = s_on_signal };
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
    ufo_info ("host: serving sessions for device %s", device);
    host_bus_serve (bus, &s_stop);
    ufo_info ("host: stopping");
    host_bus_destroy (&bus);
    ufo_config_destroy (&config);
    return 0;
}
