/*  ufo_clock.c - wall-clock and monotonic time (see ufo_clock.h). */
#include "ufo_prelude.h"
#include "ufo_clock.h"

int64_t
ufo_time_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

//  Monotonic nanoseconds.
static int64_t
s_mono_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
ufo_time_mono_ms (void)
{
    return s_mono_ns () / 1000000;
}

int64_t
ufo_time_mono_us (void)
{
    return s_mono_ns () / 1000;
}

double
ufo_time_mono_s (void)
{
    return (double) s_mono_ns () * 1e-9;
}

void
ufo_time_iso (char out [40])
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r (&ts.tv_sec, &tm);
    char base [32];
    strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf (out, 40, "%.24s.%03dZ", base, (int) (ts.tv_nsec / 1000000) % 1000);
}
