/*  ufo_wait.h - how tests and test tools wait: for a condition, with a deadline. */
#ifndef UFO_WAIT_H_INCLUDED
#define UFO_WAIT_H_INCLUDED

#include "ufo_clock.h"

//  Waits for a condition that another process or thread brings about: evaluates cond every
//  10 ms until it holds or timeout_ms have passed (a statement; the checks that follow give
//  the verdict). Tests wait like this, never by sleeping a fixed time. Needs ufo_clock.h
//  (ufo_prelude.h) and unistd.h.
#define WAIT_UNTIL(cond, timeout_ms) \
    for (int64_t ufo_until_ = ufo_time_mono_ms () + (timeout_ms); \
         !(cond) && ufo_time_mono_ms () < ufo_until_;) \
        usleep (10000)

#endif
