/*  eval_main.c - ufo-eval: the EvaluationAgent, a worker of service "eval".

    ufo-eval [--config FILE] [--broker ENDPOINT] [--device ID] [--name NAME] [--capacity N]
             [--llm-mode live|record|replay] [--llm-cassette FILE] [--prompts DIR]
             [--log-level LEVEL] [--help] [--version]

    Takes evaluation tasks (docs/PROTOCOL.md section 4, docs/EVALUATION.md), judges them with
    common/eval/ufo_eval, stores each verdict on the session's blackboard (an item
    {"evaluation_<level>[_<r>]": {...}} in the `requests` memory) and completes the task with
    the result. One loop (ufo_loop, no thread, no fixed poll cap) serves the worker's broker
    link, the LLM client's sockets and the signal pipe; the LLM calls never block it.
    Several evaluations may run at once (--capacity). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "eval_worker.h"

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
    ufo_agent_opts_t opts = { .program = "ufo-eval" };
    const char *capacity = NULL;
    const ufo_agent_opt_t own [] = { { "--capacity", &capacity }, { NULL, NULL } };
    int rc;
    if (ufo_agent_opts_parse (&opts, argc, argv, own, 0, s_usage, &rc) < 0)
        return rc;
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
    //  configuration, log level, --broker default, CURVE (security.*) for every bus socket
    ufo_config_t *config = ufo_agent_start (&opts, &rc);
    if (!config)
        return rc;
    signal (SIGPIPE, SIG_IGN);
    eval_worker_options_t options = { .endpoint = opts.broker, .device = opts.device,
                                      .name = opts.name, .capacity = cap,
                                      .llm_mode = opts.llm_mode, .llm_cassette = opts.llm_cassette,
                                      .prompts_dir = opts.prompts };
    ufo_error_t err = { 0 };
    eval_worker_t *worker = eval_worker_new (config, &options, &err);
    if (!worker) {
        fprintf (stderr, "ufo-eval: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    //  After the worker exists: czmq installs its own SIGINT / SIGTERM handlers when its
    //  first socket is created, and they would hide the signal from this loop.
    ufo_agent_signals_install ();
    ufo_info ("eval: serving evaluations (capacity %d)", cap);
    eval_worker_serve (worker, ufo_agent_stop_flag ());
    ufo_info ("eval: stopping");
    eval_worker_destroy (&worker);
    ufo_config_destroy (&config);
    return 0;
}
