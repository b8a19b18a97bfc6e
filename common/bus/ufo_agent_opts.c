/*  ufo_agent_opts.c - common options and start-up of the agent processes
    (contract: ufo_agent_opts.h). */
#include "ufo_prelude.h"

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

//  The slot of option `arg` among the common ones self accepts, else among extra; NULL
//  when it is none of them.
static const char **
s_slot (ufo_agent_opts_t *self, const char *arg, const ufo_agent_opt_t *extra, unsigned without)
{
    if (strcmp (arg, "--config") == 0) return &self->config_path;
    if (strcmp (arg, "--broker") == 0) return &self->broker;
    if (strcmp (arg, "--device") == 0) return &self->device;
    if (strcmp (arg, "--llm-mode") == 0) return &self->llm_mode;
    if (strcmp (arg, "--llm-cassette") == 0) return &self->llm_cassette;
    if (strcmp (arg, "--log-level") == 0) return &self->log_level;
    if (!(without & UFO_AGENT_OPT_NAME) && strcmp (arg, "--name") == 0)
        return &self->name;
    if (!(without & UFO_AGENT_OPT_PROMPTS) && strcmp (arg, "--prompts") == 0)
        return &self->prompts;
    for (const ufo_agent_opt_t *e = extra; e && e->option; e++)
        if (strcmp (arg, e->option) == 0)
            return e->slot;
    return NULL;
}

int
ufo_agent_opts_parse (ufo_agent_opts_t *self, int argc, char **argv,
                      const ufo_agent_opt_t *extra, unsigned without, void (*usage) (FILE *out),
                      int *exit_code)
{
    assert (self && self->program && usage && exit_code);
    const char *program = self->program;
    memset (self, 0, sizeof *self);
    self->program = program;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            usage (stdout);
            *exit_code = 0;
            return -1;
        }
        if (strcmp (arg, "--version") == 0 || strcmp (arg, "-V") == 0) {
            printf ("%s (ufobus) %s\n", program, UFO_VERSION);
            *exit_code = 0;
            return -1;
        }
        const char **slot = s_slot (self, arg, extra, without);
        if (!slot || i + 1 >= argc) {
            fprintf (stderr, "%s: %s \"%s\"\n", program,
                     slot ? "missing value after" : "unknown option", arg);
            usage (stderr);
            *exit_code = 2;
            return -1;
        }
        *slot = argv [++i];
    }
    return 0;
}

ufo_config_t *
ufo_agent_start (ufo_agent_opts_t *self, int *exit_code)
{
    assert (self && self->program && exit_code);
    ufo_error_t err = { 0 };
    ufo_config_t *config = ufo_config_load (self->config_path, &err);
    if (!config) {
        fprintf (stderr, "%s: configuration: %s\n", self->program, err.message);
        *exit_code = 1;
        return NULL;
    }
    ufo_config_apply_log (config);
    if (self->log_level) {
        int level = ufo_log_level_parse (self->log_level);
        if (level < 0) {
            fprintf (stderr, "%s: --log-level: \"%s\" is not a level\n", self->program, self->log_level);
            ufo_config_destroy (&config);
            *exit_code = 2;
            return NULL;
        }
        ufo_log_set_level ((ufo_log_level_t) level);
    }
    if (!self->broker)
        self->broker = ufo_config_str (config, "broker.cmd_endpoint", "");
    if (ufo_security_init (config, "agent", &err) < 0) {
        fprintf (stderr, "%s: security: %s\n", self->program, err.message);
        ufo_config_destroy (&config);
        *exit_code = 1;
        return NULL;
    }
    return config;
}

void
ufo_agent_signals_install (void)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
}

volatile sig_atomic_t *
ufo_agent_stop_flag (void)
{
    return &s_stop;
}
