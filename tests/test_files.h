/*  test_files.h - whole files in and out, for tests (one copy instead of one per test). */
#ifndef TEST_FILES_H_INCLUDED
#define TEST_FILES_H_INCLUDED

#include "ufo_buf.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The content of path, NUL-terminated (it may contain NULs: *len_p, if given, is its length),
//  to free(); NULL if the file cannot be opened.
static inline char *
tf_read (const char *path, size_t *len_p)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    ufo_buf_t buf = { 0 };
    char chunk [65536];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
        ufo_buf_append (&buf, chunk, n);
    fclose (f);
    return ufo_buf_detach (&buf, len_p);
}

//  The same as text, "" when the file cannot be opened (never NULL).
static inline char *
tf_read_text (const char *path)
{
    char *text = tf_read (path, NULL);
    return text ? text : strdup ("");
}

//  Writes text to path (replacing it). Returns false if it cannot.
static inline bool
tf_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (!f)
        return false;
    fputs (text, f);
    return fclose (f) == 0;
}

#endif
