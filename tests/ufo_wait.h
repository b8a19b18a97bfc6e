/*  ufo_wait.h - how tests and test tools wait: for a condition, with a deadline.
    Include it after ufo_prelude.h (which sets the feature macros usleep and kill need). */
#ifndef UFO_WAIT_H_INCLUDED
#define UFO_WAIT_H_INCLUDED

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include "ufo_clock.h"
#include <unistd.h>

//  The bound a test may put on something that must happen "at once" (a refusal, a fast
//  failure, a cancel): the correct behaviour takes well under a second; the broken one waits
//  for a deadline of 20 s or more (the test says which), or hangs. 10 s leaves a loaded
//  2-core CI machine (ctest -j2 beside a sanitizer or Release build) ten times the room, so
//  the check never fails by chance and still tells the two apart. Figures: docs/BENCHMARKS.md.
#define UFO_AT_ONCE_MS 10000

//  Waits for a condition that another process or thread brings about: evaluates cond every
//  10 ms until it holds or timeout_ms have passed (a statement; the checks that follow give
//  the verdict). Tests wait like this, never by sleeping a fixed time.
#define WAIT_UNTIL(cond, timeout_ms) \
    for (int64_t ufo_until_ = ufo_time_mono_ms () + (timeout_ms); \
         !(cond) && ufo_time_mono_ms () < ufo_until_;) \
        usleep (10000)

//  Waits (bounded) for child pid to exit. Returns its exit code, 128 + the signal that ended
//  it, or -1 when it was still running at the deadline (then it is killed and reaped).
static inline int
ufo_wait_exit (pid_t pid, int timeout_ms)
{
    int status = 0;
    pid_t got = 0;
    WAIT_UNTIL ((got = waitpid (pid, &status, WNOHANG)) != 0, timeout_ms);
    if (got == pid)
        return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return -1;
}

//  The port number a server wrote into port_file (a positive decimal), read once it is
//  there; waits (bounded) for it. Returns -1 when none came in time.
static inline int
ufo_wait_port_file_read_ (const char *port_file)
{
    FILE *f = fopen (port_file, "r");
    int port = 0;
    if (f) {
        if (fscanf (f, "%d", &port) != 1)
            port = 0;
        fclose (f);
    }
    return port;
}

static inline int
ufo_wait_port_file (const char *port_file, int timeout_ms)
{
    int port = 0;
    WAIT_UNTIL ((port = ufo_wait_port_file_read_ (port_file)) > 0, timeout_ms);
    return port > 0 ? port : -1;
}

#endif
