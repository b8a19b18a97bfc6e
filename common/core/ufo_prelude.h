/*  ufo_prelude.h - private: the one place that pulls in system headers, and the basic
    macros and allocation functions. Every source file in ufobus includes this first (czmq's
    prelude habit), then the headers of the modules it uses (no umbrella: ufo.h is for programs
    built against the installed library). */
#ifndef UFO_PRELUDE_H_INCLUDED
#define UFO_PRELUDE_H_INCLUDED

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define UFO_UNUSED(x) (void) (x)
#define UFO_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))
#if defined(__GNUC__)
#   define UFO_LIKELY(x) __builtin_expect (!!(x), 1)
#   define UFO_UNLIKELY(x) __builtin_expect (!!(x), 0)
#else
#   define UFO_LIKELY(x) (x)
#   define UFO_UNLIKELY(x) (x)
#endif

//  Allocation that cannot fail quietly: on out-of-memory we abort with a message,
//  as czmq does. Sizes that come from the outside world are bounded before we get here.
void *ufo_malloc (size_t size);
void *ufo_calloc (size_t n, size_t size);
void *ufo_realloc (void *ptr, size_t size);
char *ufo_strdup (const char *s);
char *ufo_strndup (const char *s, size_t n);

#endif
