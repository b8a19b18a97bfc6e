/*  up_fixture.h - what the `ufo up` tests (test_ufo_up.c, test_ux_up.c) read of a running
    `ufo up`: its state file and its children. Include after ufo_prelude.h. */
#ifndef UP_FIXTURE_H_INCLUDED
#define UP_FIXTURE_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "llm_server_fixture.h"

//  The state file DIR/run/up.json of the `ufo up` run in dir, or NULL while there is none.
static inline ufo_value_t *
up_state (const char *dir)
{
    char path [400];
    snprintf (path, sizeof path, "%s/run/up.json", dir);
    return access (path, R_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
}

//  The pid of the child named name in a state, or 0.
static inline int64_t
up_child_pid (const ufo_value_t *state, const char *name)
{
    const ufo_value_t *kids = ufo_value_map_get (state, "children");
    for (size_t i = 0; i < ufo_value_size (kids); i++)
        if (strcmp (ufo_value_map_str (ufo_value_list_at (kids, i), "name", ""), name) == 0)
            return ufo_value_map_int (ufo_value_list_at (kids, i), "pid", 0);
    return 0;
}

//  True while process pid runs; a zombie (not yet reaped by its parent) counts as gone.
static inline bool
up_alive (int64_t pid)
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

//  The whole content of a file (NUL-terminated, caller frees), or NULL when it cannot be read.
static inline char *
up_read (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    ufo_buf_t b = { 0 };
    char chunk [4096];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
        ufo_buf_append (&b, chunk, n);
    fclose (f);
    ufo_buf_putc (&b, 0);
    return ufo_buf_detach (&b, NULL);
}

//  The scripted model for `ufo up`: starts ufo-llm-server with
//  $UFO_TEST_DATA/data/host_agent/<script> (port file and request log llm.port, llm.jsonl in
//  dir; it exits by itself after max_seconds) and writes dir/ufo.json, a configuration whose
//  HostAgent and AppAgent use it (its path into cfg[cfg_size]). Returns the port, or 0 when
//  the server did not start or the file could not be written (*llm_p: its pid, or -1).
static inline int
up_scripted_model (const char *dir, const char *script, int max_seconds, pid_t *llm_p, char *cfg,
                   size_t cfg_size)
{
    char path [600], port_file [400], llm_log [400];
    snprintf (path, sizeof path, "%s/data/host_agent/%s", getenv ("UFO_TEST_DATA"), script);
    snprintf (port_file, sizeof port_file, "%s/llm.port", dir);
    snprintf (llm_log, sizeof llm_log, "%s/llm.jsonl", dir);
    *llm_p = -1;
    int port = llmfx_start (path, port_file, llm_log, max_seconds, llm_p);
    if (port <= 0)
        return 0;
    snprintf (cfg, cfg_size, "%s/ufo.json", dir);
    FILE *f = fopen (cfg, "w");
    if (!f)
        return 0;
    fprintf (f, "{\"HOST_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": \"http://127.0.0.1:%d/v1\","
             " \"API_MODEL\": \"scripted\", \"VISUAL_MODE\": false},"
             " \"APP_AGENT\": {\"API_TYPE\": \"openai_compatible\", \"API_BASE\": \"http://127.0.0.1:%d/v1\","
             " \"API_MODEL\": \"scripted\", \"VISUAL_MODE\": false}, \"SLEEP_TIME\": 0}\n", port, port);
    return fclose (f) == 0 ? port : 0;
}

#endif
