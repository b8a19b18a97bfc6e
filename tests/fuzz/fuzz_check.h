/*  fuzz_check.h - the oracle check of the fuzz targets: unlike assert, it holds in every
    build, NDEBUG or not, and names the file, line and condition before aborting. */
#ifndef UFO_FUZZ_CHECK_H
#define UFO_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond) do { \
    if (!(cond)) { \
        fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        abort (); \
    } \
} while (0)

#endif
