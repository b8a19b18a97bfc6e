/*  ufo_agent_opts.h - what the agent processes (ufo-host, ufo-app, ufo-eval) share at
    start-up: the common command-line options, the configuration / log level / CURVE
    start-up, and the SIGTERM / SIGINT stop flag.

    Each process keeps its own usage text and its own options (--app, --capacity,
    --subtask, ...), which it hands to the parser in a table.
    Implementation: common/bus/ufo_agent_opts.c. */
#ifndef UFO_AGENT_OPTS_H_INCLUDED
#define UFO_AGENT_OPTS_H_INCLUDED

#include <stdio.h>
#include "ufo_config.h"
#include <signal.h>

//  The common options; each is NULL when not given (the strings point into argv).
typedef struct {
    const char *program;            //  process name for messages ("ufo-host"), set by the caller
    const char *config_path;        //  --config FILE
    const char *broker;             //  --broker ENDPOINT
    const char *device;             //  --device ID
    const char *name;               //  --name NAME
    const char *llm_mode;           //  --llm-mode live|record|replay
    const char *llm_cassette;       //  --llm-cassette FILE
    const char *prompts;            //  --prompts DIR
    const char *log_level;          //  --log-level LEVEL
} ufo_agent_opts_t;

//  One option of the caller's own, taking a value: argv's value is stored in *slot.
typedef struct {
    const char *option;             //  "--capacity"
    const char **slot;
} ufo_agent_opt_t;

//  Common options a process may leave out of what it accepts (flags for `without`).
#define UFO_AGENT_OPT_NAME      0x01u   //  --name
#define UFO_AGENT_OPT_PROMPTS   0x02u   //  --prompts

//  Parses argv [1..argc-1] with getopt_long against two tables (each ended by an entry with
//  option NULL; NULL for none): `values`, options that take one value ("--x V" or "--x=V",
//  stored in *slot), and `flags`, options without one (*slot is set to the option's name
//  when it is given). Also accepts --help / -h (usage to stdout) and --version / -V
//  ("<program> (ufobus) <version>"). A long option may be abbreviated to any unambiguous
//  prefix. Returns 0 when the process should go on, or -1 when it should exit with
//  *exit_code: 0 after --help / --version, 2 after an unknown (or ambiguous) option, a
//  missing value, a value given to a flag, or an argument that is not an option, with
//  "<program>: unknown option "ARG"" or "<program>: missing value after "ARG"" and the
//  usage on stderr. The one option parser of the binaries (ufo-broker, ufo-host, ufo-app,
//  ufo-eval).
int ufo_agent_opts_parse_table (const char *program, int argc, char **argv, const ufo_agent_opt_t *values,
                                const ufo_agent_opt_t *flags, void (*usage) (FILE *out), int *exit_code);

//  Parses argv [1..argc-1] into self (self->program must be set; the other fields are
//  cleared first). Accepts the common options except those flagged in `without`, the
//  caller's own from `extra` (a table ended by an entry with option NULL; NULL for none),
//  and --help / -h (usage to stdout) and --version / -V ("<program> (ufobus) <version>").
//  Every option takes one value (ufo_agent_opts_parse_table's rules). Returns 0 when the process should go on, or -1 when it
//  should exit with *exit_code: 0 after --help / --version, 2 after an unknown option or a
//  missing value (message and usage on stderr). usage prints the caller's usage text.
int ufo_agent_opts_parse (ufo_agent_opts_t *self, int argc, char **argv,
                          const ufo_agent_opt_t *extra, unsigned without, void (*usage) (FILE *out),
                          int *exit_code);

//  As ufo_agent_opts_parse, plus the caller's flags: options without a value (a table as
//  for ufo_agent_opts_parse_table, NULL for none; *slot is set to the option's name when it
//  is given).
int ufo_agent_opts_parse_flags (ufo_agent_opts_t *self, int argc, char **argv, const ufo_agent_opt_t *extra,
                                const ufo_agent_opt_t *flags, unsigned without, void (*usage) (FILE *out),
                                int *exit_code);

//  Start-up shared by the agents that serve the bus with a configuration of their own:
//  loads the configuration (self->config_path, else the usual search), applies its log
//  settings, then --log-level; sets self->broker to broker.cmd_endpoint ("" when absent)
//  when --broker was not given; makes CURVE (security.*, certificate name "agent") the
//  default of every bus socket the process creates (ufo_security_init). Returns the
//  configuration (owned by the caller; self->broker may point into it), or NULL with a
//  message on stderr and *exit_code 1 (configuration, security) or 2 (bad --log-level).
ufo_config_t *ufo_agent_start (ufo_agent_opts_t *self, int *exit_code);

//  Installs SIGTERM / SIGINT handlers that set the process's stop flag, and ignores
//  SIGPIPE. czmq installs its own SIGTERM / SIGINT handlers when its first socket or actor
//  is created: call this again (or only) after that, else the signals never reach the flag.
void ufo_agent_signals_install (void);

//  The read end of a non-blocking self-pipe that the handlers above write one byte to, so a
//  loop (ufo_loop_stop_on) wakes up on a signal whichever thread took it. -1 before
//  ufo_agent_signals_install.
int ufo_agent_signal_fd (void);

//  The process's stop flag: non-zero once SIGTERM or SIGINT arrived (after
//  ufo_agent_signals_install). Never NULL.
volatile sig_atomic_t *ufo_agent_stop_flag (void);

#endif
