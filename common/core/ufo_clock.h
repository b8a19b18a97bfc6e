/*  ufo_clock.h - the one clock module: wall-clock and monotonic time.

    Wall-clock time (CLOCK_REALTIME) is for timestamps that leave the process (envelopes,
    logs, reports); monotonic time (CLOCK_MONOTONIC) is for deadlines, timeouts and
    durations, which must not jump when the system clock is set. Every process, tool, test
    and benchmark reads time here rather than through a private helper. */
#ifndef UFO_CLOCK_H_INCLUDED
#define UFO_CLOCK_H_INCLUDED

#include <stdint.h>

//  Wall-clock time in microseconds since the epoch.
int64_t ufo_time_now_us (void);

//  Monotonic time in milliseconds / microseconds since an arbitrary fixed point.
int64_t ufo_time_mono_ms (void);
int64_t ufo_time_mono_us (void);

//  Monotonic time in seconds, with nanosecond resolution (for durations and rates).
double ufo_time_mono_s (void);

//  Writes the current wall-clock time as ISO 8601 UTC with milliseconds
//  ("2026-11-26T12:56:34.123Z") into out[40].
void ufo_time_iso (char out [40]);

#endif
