/*  fuzz_check.h - the oracle check of the fuzz targets: unlike assert, it holds in every
    build, NDEBUG or not, and names the file, line and condition before aborting. */
#ifndef UFO_FUZZ_CHECK_H
#define UFO_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FUZZ_CHECK(cond) do { \
    if (!(cond)) { \
        fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        abort (); \
    } \
} while (0)

//  Writes data[size] as the file dir/name, or removes that file when !present: how the
//  targets that read a log directory turn one input into its files.
static inline void
fuzz_put_file (const char *dir, const char *name, const uint8_t *data, size_t size, bool present)
{
    char path [256];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    if (!present) {
        unlink (path);
        return;
    }
    FILE *file = fopen (path, "wb");
    FUZZ_CHECK (file);
    if (size)
        FUZZ_CHECK (fwrite (data, 1, size, file) == size);
    fclose (file);
}

#endif
