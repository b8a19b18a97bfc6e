/*  up_fixture.h - helpers for the tests that start `ufo up` itself (test_ufo_up.c,
    test_ux_up.c): up.json of the test's run directory, its children's
    pids, and whether a pid still runs (a zombie does not); files are read with test_files.h.
    Header-only; the including test defines `static char s_dir [256]` (its directory, with
    the run directory at s_dir/run) before including it. */
#ifndef UP_FIXTURE_H_INCLUDED
#define UP_FIXTURE_H_INCLUDED

#include "ufo_json.h"
#include "ufo_value.h"
#include "test_files.h"

//  up.json of s_dir/run (caller owns), or NULL when there is none.
static ufo_value_t *
s_state (void)
{
    char path [400];
    snprintf (path, sizeof path, "%s/run/up.json", s_dir);
    return access (path, R_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
}

//  The pid of the child named name in an up.json state, or 0.
static int64_t
s_child_pid (const ufo_value_t *state, const char *name)
{
    const ufo_value_t *kids = ufo_value_map_get (state, "children");
    for (size_t i = 0; i < ufo_value_size (kids); i++)
        if (strcmp (ufo_value_map_str (ufo_value_list_at (kids, i), "name", ""), name) == 0)
            return ufo_value_map_int (ufo_value_list_at (kids, i), "pid", 0);
    return 0;
}

//  Whether pid runs: it exists and is not a zombie (not yet reaped by its parent).
static bool
s_alive (int64_t pid)
{
    if (pid <= 0 || kill ((pid_t) pid, 0) != 0)
        return false;
    char path [64], buf [512];
    snprintf (path, sizeof path, "/proc/%" PRId64 "/stat", pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return false;
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf [n] = 0;
    const char *close = strrchr (buf, ')');
    return !(close && close [1] == ' ' && close [2] == 'Z');
}

#endif
