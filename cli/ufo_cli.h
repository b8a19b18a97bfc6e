/*  ufo_cli.h - private to the `ufo` tool: the subcommand table entry and the
    subcommands. A new subcommand is one file (cli/ufo_cmd_<name>.c) that defines
    `int ufo_cmd_<name> (int argc, char **argv)`, one declaration here, one line in the
    table in ufo.c and one source line in cli/CMakeLists.txt. */
#ifndef UFO_CLI_H_INCLUDED
#define UFO_CLI_H_INCLUDED

#include "ufo_value.h"

//  Exit codes of every subcommand.
#define UFO_CLI_OK      0       //  done
#define UFO_CLI_FAIL    1       //  the command ran and failed
#define UFO_CLI_USAGE   2       //  bad command line

typedef struct {
    const char *name;           //  as typed: "report"
    const char *args;           //  synopsis of the arguments: "LOGDIR [--out FILE]"
    const char *summary;        //  one line for `ufo --help`
    int (*run) (int argc, char **argv);     //  argv [0] is the subcommand name
} ufo_cli_command_t;

//  Prints the usage of one subcommand (synopsis and summary) to stream.
void ufo_cli_usage (FILE *stream, const char *name);

//  The subcommands.
int ufo_cmd_monitor (int argc, char **argv);
int ufo_cmd_status (int argc, char **argv);

//  Prints a dispatch.state snapshot for people (ufo_cmd_status.c): the sessions (name,
//  device, round, step, elapsed, cost; round, step and cost from their logs under log_root
//  when readable here, may be NULL), the workers with their full names, the queues, and the
//  other tasks.
void ufo_cli_print_state (FILE *out, const ufo_value_t *state, bool color, const char *log_root);

int ufo_cmd_report (int argc, char **argv);
int ufo_cmd_run (int argc, char **argv);
int ufo_cmd_batch (int argc, char **argv);
int ufo_cmd_up (int argc, char **argv);
int ufo_cmd_down (int argc, char **argv);
int ufo_cmd_eval (int argc, char **argv);
int ufo_cmd_keygen (int argc, char **argv);
int ufo_cmd_doctor (int argc, char **argv);
int ufo_cmd_knowledge (int argc, char **argv);
int ufo_cmd_mcp (int argc, char **argv);
int ufo_cmd_record (int argc, char **argv);
int ufo_cmd_mcp_server (int argc, char **argv);

#endif
