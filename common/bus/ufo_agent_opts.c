/*  ufo_agent_opts.c - common options and start-up of the agent processes
    (contract: ufo_agent_opts.h). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include <getopt.h>

static volatile sig_atomic_t s_stop = 0;
static int s_signal_pipe [2] = { -1, -1 };

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
    if (s_signal_pipe [1] >= 0) {
        int saved = errno;              //  write is async-signal-safe; errno is kept
        ssize_t rc = write (s_signal_pipe [1], "s", 1);
        UFO_UNUSED (rc);
        errno = saved;
    }
}

static size_t
s_count (const ufo_agent_opt_t *table)
{
    size_t n = 0;
    while (table && table [n].option)
        n++;
    return n;
}

//  Reports a bad argument: message and usage on stderr, exit code 2.
static int
s_bad (const char *program, const char *what, const char *arg, void (*usage) (FILE *out), int *exit_code)
{
    fprintf (stderr, "%s: %s \"%s\"\n", program, what, arg);
    usage (stderr);
    *exit_code = 2;
    return -1;
}

int
ufo_agent_opts_parse_table (const char *program, int argc, char **argv, const ufo_agent_opt_t *values,
                            const ufo_agent_opt_t *flags, void (*usage) (FILE *out), int *exit_code)
{
    assert (program && usage && exit_code);
    enum { S_FIRST = 0x100 };               //  getopt_long's value of table entry i: S_FIRST + i
    size_t nv = s_count (values), nf = s_count (flags);
    struct option *longopts = (struct option *) ufo_calloc (nv + nf + 3, sizeof *longopts);
    for (size_t i = 0; i < nv + nf; i++) {
        const ufo_agent_opt_t *e = i < nv ? &values [i] : &flags [i - nv];
        assert (strncmp (e->option, "--", 2) == 0 && e->slot);
        longopts [i] = (struct option) { e->option + 2, i < nv ? required_argument : no_argument, NULL,
                                         S_FIRST + (int) i };
    }
    longopts [nv + nf] = (struct option) { "help", no_argument, NULL, 'h' };
    longopts [nv + nf + 1] = (struct option) { "version", no_argument, NULL, 'V' };
    opterr = 0;                             //  our messages, not getopt's
    optind = 0;                             //  0: full re-initialisation (GNU), so the parser can run again
    int rc = 0;
    char shortopt [3] = "-?";
    while (rc == 0) {
        //  "+": stop at the first argument that is not an option; ":": report a missing value
        int c = getopt_long (argc, argv, "+:hV", longopts, NULL);
        if (c == -1)
            break;
        if (c == 'h') {
            usage (stdout);
            *exit_code = 0;
            rc = -1;
        }
        else
        if (c == 'V') {
            printf ("%s (ufobus) %s\n", program, UFO_VERSION);
            *exit_code = 0;
            rc = -1;
        }
        else
        if (c == '?' || c == ':') {
            //  a short option names itself in optopt; a long one is the argument just read
            const char *arg = argv [optind - 1];
            if (optopt > 0 && optopt < S_FIRST && strncmp (arg, "--", 2) != 0) {
                shortopt [1] = (char) optopt;
                arg = shortopt;
            }
            rc = s_bad (program, c == ':' ? "missing value after" : "unknown option", arg, usage, exit_code);
        }
        else {
            size_t i = (size_t) (c - S_FIRST);
            if (i < nv)
                *values [i].slot = optarg;
            else
                *flags [i - nv].slot = flags [i - nv].option;
        }
    }
    if (rc == 0 && optind < argc)
        rc = s_bad (program, "unknown option", argv [optind], usage, exit_code);
    free (longopts);
    return rc;
}

int
ufo_agent_opts_parse (ufo_agent_opts_t *self, int argc, char **argv,
                      const ufo_agent_opt_t *extra, unsigned without, void (*usage) (FILE *out),
                      int *exit_code)
{
    return ufo_agent_opts_parse_flags (self, argc, argv, extra, NULL, without, usage, exit_code);
}

int
ufo_agent_opts_parse_flags (ufo_agent_opts_t *self, int argc, char **argv, const ufo_agent_opt_t *extra,
                            const ufo_agent_opt_t *flags, unsigned without, void (*usage) (FILE *out),
                            int *exit_code)
{
    assert (self && self->program && usage && exit_code);
    const char *program = self->program;
    memset (self, 0, sizeof *self);
    self->program = program;
    size_t nextra = s_count (extra);
    ufo_agent_opt_t *table = (ufo_agent_opt_t *) ufo_calloc (nextra + 9, sizeof *table);
    size_t n = 0;
    table [n++] = (ufo_agent_opt_t) { "--config", &self->config_path };
    table [n++] = (ufo_agent_opt_t) { "--broker", &self->broker };
    table [n++] = (ufo_agent_opt_t) { "--device", &self->device };
    table [n++] = (ufo_agent_opt_t) { "--llm-mode", &self->llm_mode };
    table [n++] = (ufo_agent_opt_t) { "--llm-cassette", &self->llm_cassette };
    table [n++] = (ufo_agent_opt_t) { "--log-level", &self->log_level };
    if (!(without & UFO_AGENT_OPT_NAME))
        table [n++] = (ufo_agent_opt_t) { "--name", &self->name };
    if (!(without & UFO_AGENT_OPT_PROMPTS))
        table [n++] = (ufo_agent_opt_t) { "--prompts", &self->prompts };
    for (size_t i = 0; i < nextra; i++)
        table [n++] = extra [i];
    int rc = ufo_agent_opts_parse_table (program, argc, argv, table, flags, usage, exit_code);
    free (table);
    return rc;
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
    if (s_signal_pipe [0] < 0 && pipe (s_signal_pipe) == 0)
        for (int i = 0; i < 2; i++) {
            fcntl (s_signal_pipe [i], F_SETFL, fcntl (s_signal_pipe [i], F_GETFL) | O_NONBLOCK);
            fcntl (s_signal_pipe [i], F_SETFD, FD_CLOEXEC);
        }
    struct sigaction sa = { 0 };
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
}

int
ufo_agent_signal_fd (void)
{
    return s_signal_pipe [0];
}

volatile sig_atomic_t *
ufo_agent_stop_flag (void)
{
    return &s_stop;
}
