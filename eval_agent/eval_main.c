/*  eval_main.c - ufo-eval: the EvaluationAgent, a worker of service "eval".

    ufo-eval [--config FILE] [--broker ENDPOINT] [--device ID] [--name NAME] [--capacity N]
             [--llm-mode live|record|replay] [--llm-cassette FILE] [--prompts DIR]
             [--log-level LEVEL] [--help] [--version]

    Takes evaluation tasks (docs/PROTOCOL.md section 4, docs/EVALUATION.md), judges them with
    common/ufo_eval, stores each verdict on the session's blackboard (an item
    {"evaluation_<level>[_<r>]": {...}} in the `requests` memory) and completes the task with
    the result. One loop: the worker's descriptor and the LLM client's sockets are polled
    together with a short timeout; the LLM calls never block it. Several evaluations may run
    at once (--capacity). */
#include "ufo_prelude.h"
#include "eval_worker.h"

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
        "usage: ufo-eval [--config FILE] [--broker ENDPOINT] [--device ID] [--name NAME]\n"
        "                [--capacity N] [--llm-mode MODE] [--llm-cassette FILE] [--prompts DIR]\n"
        "                [--log-level LEVEL]\n"
        "The EvaluationAgent: serves evaluation tasks (service \"eval\"). Each task names a session's\n"
        "log directory; the verdict (reason, sub-scores, complete) goes to its evaluation.log, to\n"
        "the session's blackboard and back to the submitter as the task result.\n"
        "  --config FILE      configuration file (default $UFO_CONFIG, ./config/ufo.json)\n"
        "  --broker ENDPOINT  broker command endpoint (default broker.cmd_endpoint)\n"
        "  --device ID        serve only this device's tasks (default: any device)\n"
        "  --name NAME        worker name shown by the monitor\n"
        "  --capacity N       evaluations at once (default 2)\n"
        "  --llm-mode MODE    live | record | replay (default llm.mode)\n"
        "  --llm-cassette F   cassette file for record / replay\n"
        "  --prompts DIR      prompt templates (default $UFO_PROMPTS_DIR, ./prompts, installed)\n"
        "  --log-level LEVEL  trace | debug | info | warn | error\n");
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-eval");
    const char *config_path = NULL, *broker = NULL, *device = NULL, *name = NULL;
    const char *llm_mode = NULL, *cassette = NULL, *prompts = NULL, *level = NULL, *capacity = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        const char **slot = NULL;
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_usage (stdout);
            return 0;
        }
        if (strcmp (arg, "--version") == 0 || strcmp (arg, "-V") == 0) {
            printf ("ufo-eval (ufobus) %s\n", UFO_VERSION);
            return 0;
        }
        if (strcmp (arg, "--config") == 0) slot = &config_path;
        else if (strcmp (arg, "--broker") == 0) slot = &broker;
        else if (strcmp (arg, "--device") == 0) slot = &device;
        else if (strcmp (arg, "--name") == 0) slot = &name;
        else if (strcmp (arg, "--capacity") == 0) slot = &capacity;
        else if (strcmp (arg, "--llm-mode") == 0) slot = &llm_mode;
        else if (strcmp (arg, "--llm-cassette") == 0) slot = &cassette;
        else if (strcmp (arg, "--prompts") == 0) slot = &prompts;
        else if (strcmp (arg, "--log-level") == 0) slot = &level;
        if (!slot || i + 1 >= argc) {
            fprintf (stderr, "ufo-eval: %s \"%s\"\n", slot ? "missing value after" : "unknown option", arg);
            s_usage (stderr);
            return 2;
        }
        *slot = argv [++i];
    }
    int cap = 2;
    if (capacity) {
        char *end = NULL;
        long n = strtol (capacity, &end, 10);
        if (!end || *end || n < 1 || n > 64) {
            fprintf (stderr, "ufo-eval: --capacity is 1..64, not \"%s\"\n", capacity);
            return 2;
        }
        cap = (int) n;
    }
    ufo_error_t err = { 0 };
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo-eval: configuration: %s\n", err.message);
        return 1;
    }
    ufo_config_apply_log (config);
    if (level) {
        int l = ufo_log_level_parse (level);
        if (l < 0) {
            fprintf (stderr, "ufo-eval: --log-level: \"%s\" is not a level\n", level);
            ufo_config_destroy (&config);
            return 2;
        }
        ufo_log_set_level ((ufo_log_level_t) l);
    }
    if (!broker)
        broker = ufo_config_str (config, "broker.cmd_endpoint", "");
    //  CURVE (security.*): the default of every bus socket this process creates.
    if (ufo_security_init (config, "agent", &err) < 0) {
        fprintf (stderr, "ufo-eval: security: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    signal (SIGPIPE, SIG_IGN);
    eval_worker_options_t options = { .endpoint = broker, .device = device, .name = name,
                                      .capacity = cap, .llm_mode = llm_mode,
                                      .llm_cassette = cassette, .prompts_dir = prompts };
    eval_worker_t *worker = eval_worker_new (config, &options, &err);
    if (!worker) {
        fprintf (stderr, "ufo-eval: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    //  After the worker exists: czmq installs its own SIGINT / SIGTERM handlers when its
    //  first socket is created, and they would hide the signal from this loop.
    struct sigaction sa = { .sa_handler = s_on_signal };
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    ufo_info ("eval: serving evaluations (capacity %d)", cap);
    eval_worker_serve (worker, &s_stop);
    ufo_info ("eval: stopping");
    eval_worker_destroy (&worker);
    ufo_config_destroy (&config);
    return 0;
}
