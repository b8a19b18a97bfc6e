/*  ufo_cli_session.h - private to the `ufo` tool: what `ufo run` and `ufo batch` share
    (finding the broker, building a session task, printing progress and results). */
#ifndef UFO_CLI_SESSION_H_INCLUDED
#define UFO_CLI_SESSION_H_INCLUDED

#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_value.h"

//  The run directory (as the broker resolves it: $UFO_RUN_DIR, $XDG_RUNTIME_DIR/ufobus,
//  /tmp/ufobus-<uid>) into out. Returns 0 or -1 with err.
int ufo_cli_run_dir (char *out, size_t size, ufo_error_t *err);

//  Resolves the broker command endpoint and the log root for a client: flag (--broker) if
//  given, else the state file `ufo up` wrote in the run directory, else the configuration
//  (broker.cmd_endpoint; empty = the default ipc endpoint). The log root is the state
//  file's "log_root", else an absolute ./logs. Returns 0 or -1 with err.
int ufo_cli_broker (const char *flag, const ufo_config_t *config, char *endpoint, size_t size,
                    char *log_root, size_t lsize, ufo_error_t *err);

//  Asks the broker at endpoint for its dispatch state within timeout_ms, as a quick check
//  that it runs: an ipc endpoint whose socket file does not exist fails at once. Call after
//  ufo_security_init. Returns the state (caller owns) or NULL with err (the message says to
//  start `ufo up`).
ufo_value_t *ufo_cli_broker_state (const char *endpoint, const char *sender, int timeout_ms,
                                   ufo_error_t *err);

//  The devices that have a HostAgent worker in a dispatch state, comma-separated, into out
//  ("" when none). Returns whether device (NULL = any) is one of them.
bool ufo_cli_host_devices (const ufo_value_t *state, const char *device, char *out, size_t size);

//  Before a session is submitted with --device: whether a HostAgent serves device (NULL:
//  any). A device whose HostAgent is connected, or has been since the broker started (it
//  is reconnecting: the session waits for it), is served; with other HostAgents connected
//  it is not. With none connected while the broker is younger than grace_ms (`ufo up` just
//  started, its HostAgent still connecting) it asks again every 250 ms, saying so on stderr
//  unless quiet, until one connects or the broker is that old.
//  Returns 1 served (or no device asked; *none_p true when no HostAgent is connected at
//  all), 0 with err naming the known devices when none serves it, -1 with err when the
//  broker does not answer.
int ufo_cli_device_check (const char *endpoint, const char *sender, const char *device, int64_t grace_ms,
                          bool quiet, bool *none_p, ufo_error_t *err);

//  A new id "<prefix>-YYYYmmdd-HHMMSS-<8 hex>" into out.
void ufo_cli_new_id (char *out, size_t size, const char *prefix);

//  The task spec of a session for service "host" (caller owns). plan may be NULL.
//  deadline_ms bounds the whole session (the broker fails it after that; 0 = the broker's
//  dispatch.default_deadline_ms, 10 minutes, too short for many real sessions).
ufo_value_t *ufo_cli_session_spec (const char *session, const char *task, const char *log_root,
                                   const ufo_value_t *requests, const ufo_value_t *plan,
                                   const char *device, bool interactive, bool auto_confirm,
                                   int64_t deadline_ms);

//  Reads a plan file: a JSON list of texts, a JSON object with "plan", or one subtask per
//  non-empty line. Returns a list (caller owns) or NULL with err.
ufo_value_t *ufo_cli_load_plan (const char *path, ufo_error_t *err);

//  Prints the column titles of the step lines.
void ufo_cli_print_step_header (FILE *out);

//  Prints one progress line for a step record (prefix may be NULL).
void ufo_cli_print_step (FILE *out, const char *prefix, const ufo_value_t *record, double session_cost);

//  Prints an evaluation result with ✅ / ❌ / ❓ per sub-score.
void ufo_cli_print_evaluation (FILE *out, const char *title, const ufo_value_t *result);

//  ✅ for "yes", ❌ for "no", ❓ otherwise.
const char *ufo_cli_mark (const char *answer);

//  0 when the session completed (status FINISH and the evaluation is not "no"), else 1.
int ufo_cli_exit_code (const ufo_value_t *result);

#endif
