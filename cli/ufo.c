/*  ufo.c - the `ufo` command-line tool: dispatches to one subcommand per file.
    Usage: ufo COMMAND [ARGS...]; ufo --help; ufo --version; ufo help COMMAND. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_cli.h"

//  The subcommands, in the order `ufo --help` lists them.
static const ufo_cli_command_t s_commands [] = {
    { "report", "LOGDIR [--out FILE] [--link-images]",
      "write the HTML report of a session from its log directory", ufo_cmd_report },
    { "run", "\"REQUEST\" [--request R2 ...] [--device ID] [--task NAME [--resume]] [--yes] [--json] [--plan FILE] [--broker EP]",
      "run a session: the agents carry out the request on a desktop", ufo_cmd_run },
    { "batch", "DIR [--yes] [--broker EP] [--timeout S]",
      "run every task file of DIR as a session, concurrently over the devices", ufo_cmd_batch },
    { "up", "[--workers N] [--apps LIST] [--devices N] [--config FILE] [--data-dir DIR]",
      "start broker, HostAgent, AppAgents and evaluator on this machine", ufo_cmd_up },
    { "down", "[--timeout S]",
      "stop what `ufo up` started on this machine", ufo_cmd_down },
    { "eval", "LOGDIR [--level session|round] [--round R] [--config FILE] [--llm-mode MODE]",
      "re-evaluate a finished session from its log directory (offline, no broker)", ufo_cmd_eval },
    { "keygen", "NAME --role agent|client|monitor|broker [--dir DIR]",
      "write a CURVE certificate pair (private key mode 0600)", ufo_cmd_keygen },
    { "knowledge", "index [--app NAME] | search \"QUERY\" [--app NAME] [--top N] [--json] | list | show ID | delete ID [--broker EP]",
      "the agents' knowledge: index installed help, search it; experience records", ufo_cmd_knowledge },
    { "record", "--app NAME \"WHAT I AM SHOWING\" [--broker EP] [--json]",
      "record a demonstration: your clicks and typing in the application, until Ctrl-C", ufo_cmd_record },
    { "monitor", "[--raw] [--stats] [--json] [--filter PREFIX|session:ID|service:NAME] [--broker EP] [--bus EP]",
      "follow the sessions live, one line per step (--raw: every bus event)", ufo_cmd_monitor },
    { "status", "[--json] [--broker EP]",
      "print the broker's current workers, queues and tasks", ufo_cmd_status },
    { "doctor", "[--quick] [--only broker,model,prices,desktop] [--config FILE] [--api-base URL] [--model NAME]",
      "check the broker, each agent's model endpoint, prices and the desktop; advice per failure", ufo_cmd_doctor },
    { "mcp", "tools [--server NAME] [--app APP] [--agent APP_AGENT|HOST_AGENT] [--config FILE] [--json]",
      "list the tools of the configured MCP servers, as the agents show them", ufo_cmd_mcp },
    { "mcp-server", "[--http IPV4:PORT] [--broker EP] [--config FILE]",
      "serve ufobus to MCP clients (stdio, or Streamable HTTP): run sessions, list devices, windows, workers, screenshots", ufo_cmd_mcp_server },
};

static const ufo_cli_command_t *
s_find (const char *name)
{
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_commands); i++)
        if (strcmp (s_commands [i].name, name) == 0)
            return &s_commands [i];
    return NULL;
}

void
ufo_cli_usage (FILE *stream, const char *name)
{
    const ufo_cli_command_t *command = s_find (name);
    if (command)
        fprintf (stream, "usage: ufo %s %s\n  %s\n", command->name, command->args,
                 command->summary);
}

static void
s_help (FILE *stream)
{
    fprintf (stream, "usage: ufo COMMAND [ARGS...]\n\n"
             "ufobus: desktop-automation agents for Linux on a ZeroMQ bus.\n\n"
             "Commands:\n");
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_commands); i++)
        fprintf (stream, "  %-8s %s\n           %s\n", s_commands [i].name, s_commands [i].args,
                 s_commands [i].summary);
    fprintf (stream, "\nOptions:\n  -h, --help     this help (ufo help COMMAND, or ufo COMMAND --help)\n"
             "  -V, --version  the version\n");
}

//  Edit distance, bounded, for "did you mean".
static size_t
s_distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    if (la > 32 || lb > 32)
        return SIZE_MAX;
    size_t row [33];
    for (size_t j = 0; j <= lb; j++)
        row [j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row [0];
        row [0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row [j];
            size_t best = diag + (a [i - 1] != b [j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row [j - 1] + 1 < best)
                best = row [j - 1] + 1;
            row [j] = best;
            diag = up;
        }
    }
    return row [lb];
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo");
    if (argc < 2) {
        s_help (stderr);
        return UFO_CLI_USAGE;
    }
    const char *name = argv [1];
    if (strcmp (name, "--help") == 0 || strcmp (name, "-h") == 0) {
        s_help (stdout);
        return UFO_CLI_OK;
    }
    if (strcmp (name, "--version") == 0 || strcmp (name, "-V") == 0) {
        printf ("ufo (ufobus) %s\n", UFO_VERSION);
        return UFO_CLI_OK;
    }
    if (strcmp (name, "help") == 0) {
        if (argc < 3) {
            s_help (stdout);
            return UFO_CLI_OK;
        }
        if (!s_find (argv [2])) {
            fprintf (stderr, "ufo: no command \"%s\"; see ufo --help\n", argv [2]);
            return UFO_CLI_USAGE;
        }
        ufo_cli_usage (stdout, argv [2]);
        return UFO_CLI_OK;
    }
    const ufo_cli_command_t *command = s_find (name);
    if (!command) {
        fprintf (stderr, "ufo: unknown command \"%s\"", name);
        const char *nearest = NULL;
        size_t best = 3;
        for (size_t i = 0; i < UFO_ARRAY_SIZE (s_commands); i++) {
            size_t d = s_distance (name, s_commands [i].name);
            if (d < best) {
                best = d;
                nearest = s_commands [i].name;
            }
        }
        if (nearest)
            fprintf (stderr, "; did you mean \"%s\"?", nearest);
        fprintf (stderr, "\nCommands:");
        for (size_t i = 0; i < UFO_ARRAY_SIZE (s_commands); i++)
            fprintf (stderr, " %s", s_commands [i].name);
        fprintf (stderr, "\nSee ufo --help.\n");
        return UFO_CLI_USAGE;
    }
    return command->run (argc - 1, argv + 1);
}
