/*  llm_server_fixture.h - starting the project's scripted OpenAI-compatible server
    (tests/ufo-llm-server) for a test: one place for the fork/exec and the bounded wait for
    the port it picked. */
#ifndef LLM_SERVER_FIXTURE_H_INCLUDED
#define LLM_SERVER_FIXTURE_H_INCLUDED

#include "ufo_wait.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

//  Starts ufo-llm-server from $UFO_BUILD_DIR/tests with script_path, writing its port to
//  port_file and the requests it serves to log_path; it exits by itself after max_seconds.
//  Waits up to 10 s for the port. Returns the port (> 0) with *pid_p set, or -1 (*pid_p is
//  still set when the process started, so the caller can stop it).
static inline int
llmfx_start (const char *script_path, const char *port_file, const char *log_path,
             int max_seconds, pid_t *pid_p)
{
    char server [1024], seconds [16];
    snprintf (server, sizeof server, "%s/tests/ufo-llm-server",
              getenv ("UFO_BUILD_DIR") ? getenv ("UFO_BUILD_DIR") : ".");
    snprintf (seconds, sizeof seconds, "%d", max_seconds);
    unlink (port_file);
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int devnull = open ("/dev/null", O_WRONLY);
        dup2 (devnull, STDOUT_FILENO);
        execl (server, server, "--script", script_path, "--port-file", port_file, "--log", log_path,
               "--max-seconds", seconds, (char *) NULL);
        _exit (127);
    }
    *pid_p = pid;
    return ufo_wait_port_file (port_file, 10000);
}

//  llmfx_start with the script given as text, in directory dir: writes dir/script.json,
//  the port file dir/port and the request log dir/requests.jsonl (its path into
//  log_path[log_size]). Returns as llmfx_start (-1 also when the script cannot be written).
static inline int
llmfx_start_script (const char *dir, const char *script, int max_seconds, char *log_path, size_t log_size,
                    pid_t *pid_p)
{
    char script_path [1024], port_file [1024];
    snprintf (script_path, sizeof script_path, "%s/script.json", dir);
    snprintf (port_file, sizeof port_file, "%s/port", dir);
    snprintf (log_path, log_size, "%s/requests.jsonl", dir);
    FILE *f = fopen (script_path, "w");
    if (!f)
        return -1;
    bool written = fputs (script, f) >= 0;
    if (fclose (f) != 0 || !written)
        return -1;
    return llmfx_start (script_path, port_file, log_path, max_seconds, pid_p);
}

//  Stops a server started above: SIGTERM, then waits (bounded, 10 s; SIGKILL after). Returns
//  its exit status (0: it ended cleanly), or -1 when none ran or it had to be killed.
//  *pid_p becomes -1.
static inline int
llmfx_stop (pid_t *pid_p)
{
    if (*pid_p <= 0)
        return -1;
    kill (*pid_p, SIGTERM);
    int rc = ufo_wait_exit (*pid_p, 10000);
    *pid_p = -1;
    return rc;
}

#endif
