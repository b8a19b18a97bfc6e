/*  search_server_fixture.h - starting tests/ufo-search-server (a web search API serving the
    Bing v7 and SearXNG JSON shapes, a slow and a broken endpoint) for a test. */
#ifndef SEARCH_SERVER_FIXTURE_H_INCLUDED
#define SEARCH_SERVER_FIXTURE_H_INCLUDED

#include "ufo_wait.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

//  Starts the server (port written to port_file, requests logged to log_path). Waits up to
//  10 s for its port. Returns the port, or -1; *pid_p is set when the process started.
static inline int
ssfx_start (const char *port_file, const char *log_path, pid_t *pid_p)
{
    char server [1024];
    snprintf (server, sizeof server, "%s/tests/ufo-search-server",
              getenv ("UFO_BUILD_DIR") ? getenv ("UFO_BUILD_DIR") : ".");
    unlink (port_file);
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execl (server, server, "--port-file", port_file, "--log", log_path, "--max-seconds", "600",
               (char *) NULL);
        _exit (127);
    }
    *pid_p = pid;
    return ufo_wait_port_file (port_file, 10000);
}

static inline void
ssfx_stop (pid_t *pid_p)
{
    if (*pid_p > 0) {
        kill (*pid_p, SIGTERM);
        waitpid (*pid_p, NULL, 0);
    }
    *pid_p = 0;
}

#endif
