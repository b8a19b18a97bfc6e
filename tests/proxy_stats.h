/*  proxy_stats.h - reading the figures of tests/tools/ufo_test_proxy.c (its --stats file). */
#ifndef PROXY_STATS_H_INCLUDED
#define PROXY_STATS_H_INCLUDED

#include <stdio.h>

//  Connections open through the proxy now (the stats file at path), or -1 before it wrote
//  its figures.
static inline int
proxy_connections (const char *path)
{
    FILE *f = fopen (path, "r");
    int n = -1;
    if (f && fscanf (f, "connections %d", &n) != 1)
        n = -1;
    if (f)
        fclose (f);
    return n;
}

#endif
