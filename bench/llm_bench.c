/*  llm_bench.c - the LLM layer against its baselines, in the same run.

    1. Loop responsiveness during a call: the longest gap between two iterations of the
       caller's loop while a reply drips in over ~1 s, with the non-blocking client versus
       the blocking call an agent of the original makes (baseline: the gap is the call).
    2. Concurrency: 8 requests with 200 ms server latency, submitted together on one loop,
       versus one after the other (baseline).
    3. Reply parsing: ufo_llm_extract_json + AppAgent validation of a fenced reply, versus
       the original's parser (strip the ``` fences, json.loads) in Python, timed by Python
       itself on the same text (/usr/bin/python3; skipped with --no-python).

    Needs ufo-llm-server: $UFO_BUILD_DIR/tests/ufo-llm-server (default ./tests/...).
    Usage: llm_bench [--no-python] */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_http.h"
#include <signal.h>
#include <sys/wait.h>

#define S_REPLY "I looked at the window.\n```json\n{\"Observation\": \"The Mousepad window shows an empty " \
    "document; its text area is control 5.\", \"Thought\": \"I type the text into the document area.\", " \
    "\"ControlLabel\": \"5\", \"ControlText\": \"Text View\", \"Function\": \"set_edit_text\", \"Args\": " \
    "{\"text\": \"meeting at 10\", \"clear_current_text\": false}, \"Status\": \"CONTINUE\", \"Plan\": " \
    "[\"Check that the text appears in the document\"], \"Comment\": \"Typing the note.\", " \
    "\"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}}\n```"

static char s_dir [64];
static pid_t s_server = -1;
static int s_port;

static int
s_start_server (void)
{
    char script [128], port_file [128], server [1024];
    snprintf (script, sizeof script, "%s/script.json", s_dir);
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (server, sizeof server, "%s/tests/ufo-llm-server", getenv ("UFO_BUILD_DIR") ? getenv ("UFO_BUILD_DIR") : ".");
    FILE *f = fopen (script, "w");
    if (!f)
        return -1;
    fprintf (f, "{\"entries\": [\n"
                " {\"match\": {\"contains\": \"drip\"}, \"times\": 0, \"fault\": \"drip\", \"drip_bytes\": 8, \"drip_ms\": 25,"
                "  \"content\": \"a reply of some length that arrives eight bytes at a time\"},\n"
                " {\"match\": {\"contains\": \"slow\"}, \"times\": 0, \"latency_ms\": 200, \"content\": \"ok\"}\n]}\n");
    fclose (f);
    s_server = fork ();
    if (s_server == 0) {
        int devnull = open ("/dev/null", O_WRONLY);
        dup2 (devnull, STDOUT_FILENO);
        execl (server, server, "--script", script, "--port-file", port_file, (char *) NULL);
        _exit (127);
    }
    for (int i = 0; i < 500 && !s_port; i++) {
        FILE *p = fopen (port_file, "r");
        if (p) {
            if (fscanf (p, "%d", &s_port) != 1)
                s_port = 0;
            fclose (p);
        }
        if (!s_port)
            usleep (10000);
    }
    return s_port ? 0 : -1;
}

static ufo_value_t *
s_messages (const char *text)
{
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "user");
    ufo_value_map_set_str (m, "content", text);
    ufo_value_list_push (list, &m);
    return list;
}

typedef struct {
    int done;
} s_count_t;

static void
s_done (ufo_llm_response_t **r, void *arg)
{
    UFO_UNUSED (r);
    ((s_count_t *) arg)->done++;
}

int
main (int argc, char **argv)
{
    bool python = !(argc > 1 && !strcmp (argv [1], "--no-python"));
    ufo_log_set_level (UFO_LOG_ERROR);
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-llm-bench-XXXXXX");
    if (!mkdtemp (s_dir) || s_start_server ()) {
        fprintf (stderr, "llm_bench: cannot start ufo-llm-server (set UFO_BUILD_DIR)\n");
        return 1;
    }
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    snprintf (cfg.api_type, sizeof cfg.api_type, "openai_compatible");
    snprintf (cfg.api_base, sizeof cfg.api_base, "http://127.0.0.1:%d/v1", s_port);
    snprintf (cfg.api_model, sizeof cfg.api_model, "bench");
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    printf ("%-52s %12s %12s %8s\n", "measure", "ufobus", "baseline", "ratio");

    //  1. Responsiveness.
    ufo_value_t *drip = s_messages ("drip");
    double t0 = ufo_time_mono_s ();
    ufo_llm_response_t *r = ufo_llm_complete (llm, drip, NULL, &err);
    double blocking_gap = ufo_time_mono_s () - t0;
    ufo_llm_response_destroy (&r);
    s_count_t c = { 0 };
    ufo_llm_submit (llm, drip, NULL, s_done, &c, &err);
    double last = ufo_time_mono_s (), max_gap = 0;
    long iterations = 0;
    while (!c.done) {
        ufo_llm_poll (llm, 5);
        double now = ufo_time_mono_s ();
        if (now - last > max_gap)
            max_gap = now - last;
        last = now;
        iterations++;
    }
    printf ("%-52s %10.1fms %10.1fms %7.0fx\n", "longest loop gap during a 1 s dripping reply",
            max_gap * 1000, blocking_gap * 1000, blocking_gap / (max_gap > 0 ? max_gap : 1e-3));
    printf ("%-52s %12ld\n", "  loop iterations during that reply", iterations);
    ufo_value_destroy (&drip);

    //  2. Concurrency.
    ufo_value_t *slow = s_messages ("slow");
    t0 = ufo_time_mono_s ();
    for (int i = 0; i < 8; i++) {
        r = ufo_llm_complete (llm, slow, NULL, &err);
        ufo_llm_response_destroy (&r);
    }
    double sequential = ufo_time_mono_s () - t0;
    c.done = 0;
    t0 = ufo_time_mono_s ();
    for (int i = 0; i < 8; i++)
        ufo_llm_submit (llm, slow, NULL, s_done, &c, &err);
    while (c.done < 8)
        ufo_llm_poll (llm, 50);
    double together = ufo_time_mono_s () - t0;
    printf ("%-52s %10.0fms %10.0fms %7.1fx\n", "8 requests x 200 ms latency (together vs one by one)",
            together * 1000, sequential * 1000, sequential / together);
    ufo_value_destroy (&slow);
    ufo_llm_destroy (&llm);

    //  3. Parsing.
    const int reps = 20000;
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        t0 = ufo_time_mono_s ();
        for (int i = 0; i < reps; i++) {
            ufo_value_t *v = ufo_llm_extract_json (S_REPLY, strlen (S_REPLY), UFO_SCHEMA_APP, NULL);
            ufo_value_destroy (&v);
        }
        double t = (ufo_time_mono_s () - t0) / reps;
        if (t < best)
            best = t;
    }
    double py = 0;
    if (python) {
        char path [128];
        snprintf (path, sizeof path, "%s/reply.txt", s_dir);
        FILE *f = fopen (path, "w");
        fputs (S_REPLY, f);
        fclose (f);
        char cmd [1024];
        snprintf (cmd, sizeof cmd,
                  "/usr/bin/python3 -c 'import json,timeit\n"
                  "t=open(\"%s\").read()\n"
                  "def parse(s):\n"
                  "    s=s[s.find(\"```json\"):] if \"```json\" in s else s\n"
                  "    return json.loads(s.replace(\"```json\",\"\").replace(\"```\",\"\"))\n"
                  "print(min(timeit.repeat(lambda: parse(t), number=%d, repeat=5))/%d)'", path, reps, reps);
        FILE *p = popen (cmd, "r");
        if (p) {
            if (fscanf (p, "%lf", &py) != 1)
                py = 0;
            pclose (p);
        }
    }
    if (py > 0)
        printf ("%-52s %10.2fus %10.2fus %7.1fx\n", "parse a fenced AppAgent reply (vs original, Python)",
                best * 1e6, py * 1e6, py / best);
    else
        printf ("%-52s %10.2fus %12s\n", "parse a fenced AppAgent reply", best * 1e6, "-");
    kill (s_server, SIGTERM);
    waitpid (s_server, NULL, 0);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        return 1;
    return 0;
}
