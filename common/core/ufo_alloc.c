/*  ufo_alloc.c - allocation that aborts with a message on out-of-memory (czmq habit).
    Sizes that come from outside are bounded before they reach these functions. */
#include "ufo_prelude.h"

static void
s_oom (size_t size)
{
    fprintf (stderr, "ufobus: out of memory allocating %zu bytes\n", size);
    abort ();
}

void *
ufo_malloc (size_t size)
{
    void *p = malloc (size ? size : 1);
    if (UFO_UNLIKELY (!p))
        s_oom (size);
    return p;
}

void *
ufo_calloc (size_t n, size_t size)
{
    void *p = calloc (n ? n : 1, size ? size : 1);
    if (UFO_UNLIKELY (!p))
        s_oom (n * size);
    return p;
}

void *
ufo_realloc (void *ptr, size_t size)
{
    void *p = realloc (ptr, size ? size : 1);
    if (UFO_UNLIKELY (!p))
        s_oom (size);
    return p;
}

char *
ufo_strdup (const char *s)
{
    return ufo_strndup (s, s ? strlen (s) : 0);
}

char *
ufo_strndup (const char *s, size_t n)
{
    char *copy = (char *) ufo_malloc (n + 1);
    if (n)
        memcpy (copy, s, n);
    copy [n] = 0;
    return copy;
}
