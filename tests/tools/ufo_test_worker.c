/*  ufo_test_worker.c - a worker process for the dispatch tests and benchmark.

    ufo-test-worker --broker EP --service S [--device D] [--name N] [--capacity N]
                    [--mode noop|sleep|block] [--ms N] [--progress N] [--crash-after K]
                    [--hb-ms N] [--liveness N] [--out FILE]

    For every task: sends --progress progress messages, then
      noop   completes at once;
      sleep  waits --ms in 10 ms slices, answering inputs (a "cancel" ends the task as
             cancelled, an "input" is echoed back as progress);
      block  blocks its own thread for --ms in one sleep (the worker's actor keeps
             heartbeating meanwhile);
    then completes with {"worker": name, "pid": pid, "task": id, "attempt": n, "echo": body}.
    --crash-after K: _exit(3) as soon as the K-th task arrives (a crash mid-task).
    --out FILE: appends "<event> <task> <attempt> <pid>" per task taken / completed.
    SIGTERM / SIGINT: leaves cleanly (the broker requeues an unfinished task at once). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_worker.h"

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

static void
s_note (const char *out, const char *event, const char *task, int64_t attempt)
{
    if (!out)
        return;
    FILE *f = fopen (out, "a");
    if (!f)
        return;
    fprintf (f, "%s %s %" PRId64 " %d\n", event, task, attempt, (int) getpid ());
    fclose (f);
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-test-worker");
    const char *broker = NULL, *service = NULL, *device = NULL, *name = NULL, *mode = "noop", *out = NULL;
    int ms = 0, progress = 0, crash_after = 0, capacity = 1, hb_ms = 0, liveness = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv [i], *v = argv [i + 1];
        if (strcmp (k, "--broker") == 0) broker = v;
        else if (strcmp (k, "--service") == 0) service = v;
        else if (strcmp (k, "--device") == 0) device = v;
        else if (strcmp (k, "--name") == 0) name = v;
        else if (strcmp (k, "--mode") == 0) mode = v;
        else if (strcmp (k, "--out") == 0) out = v;
        else if (strcmp (k, "--ms") == 0) ms = atoi (v);
        else if (strcmp (k, "--progress") == 0) progress = atoi (v);
        else if (strcmp (k, "--crash-after") == 0) crash_after = atoi (v);
        else if (strcmp (k, "--capacity") == 0) capacity = atoi (v);
        else if (strcmp (k, "--hb-ms") == 0) hb_ms = atoi (v);
        else if (strcmp (k, "--liveness") == 0) liveness = atoi (v);
        else {
            fprintf (stderr, "ufo-test-worker: unknown argument %s\n", k);
            return 2;
        }
    }
    if (!broker || !service) {
        fprintf (stderr, "usage: ufo-test-worker --broker EP --service S [options]\n");
        return 2;
    }
    ufo_worker_config_t cfg = { .endpoint = broker, .service = service, .device = device, .name = name,
                                .heartbeat_ivl_ms = hb_ms, .heartbeat_liveness = liveness,
                                .capacity = capacity };
    ufo_error_t err;
    ufo_worker_t *worker = ufo_worker_new (&cfg, &err);
    if (!worker) {
        fprintf (stderr, "ufo-test-worker: %s\n", err.message);
        return 1;
    }
    //  after the worker starts: czmq installs its own handlers when it initialises
    signal (SIGTERM, s_on_signal);
    signal (SIGINT, s_on_signal);
    char label [160];
    snprintf (label, sizeof label, "%s", name ? name : service);
    int taken = 0;
    while (!s_stop) {
        ufo_value_t *ev = ufo_worker_next (worker, 100);
        if (!ev)
            continue;
        const char *kind = ufo_value_map_str (ev, "kind", "");
        if (strcmp (kind, "task") != 0) {
            ufo_value_destroy (&ev);
            continue;
        }
        char task [65];
        snprintf (task, sizeof task, "%s", ufo_value_map_str (ev, "task", ""));
        int64_t attempt = ufo_value_map_int (ev, "attempt", 0);
        s_note (out, "take", task, attempt);
        if (crash_after > 0 && ++taken >= crash_after)
            _exit (3);
        for (int p = 1; p <= progress; p++) {
            ufo_value_t *body = ufo_value_new_map ();
            ufo_value_map_set_int (body, "step", p);
            ufo_value_map_set_int (body, "pid", (int) getpid ());
            ufo_worker_progress (worker, task, &body);
        }
        const char *status = "done";
        if (strcmp (mode, "block") == 0)
            usleep ((useconds_t) ms * 1000);
        else
        if (strcmp (mode, "sleep") == 0) {
            int64_t until = ufo_time_mono_ms () + ms;
            while (ufo_time_mono_ms () < until && !s_stop) {
                ufo_value_t *in = ufo_worker_next (worker, 10);
                if (!in)
                    continue;
                const char *k = ufo_value_map_str (in, "kind", "");
                if (strcmp (k, "cancel") == 0 && strcmp (ufo_value_map_str (in, "task", ""), task) == 0) {
                    status = "cancelled";
                    ufo_value_destroy (&in);
                    break;
                }
                if (strcmp (k, "input") == 0) {
                    ufo_value_t *echo = ufo_value_new_map ();
                    ufo_value_map_set_copy (echo, "input", ufo_value_map_get (in, "body"));
                    ufo_worker_progress (worker, task, &echo);
                }
                ufo_value_destroy (&in);
            }
        }
        ufo_value_t *result = ufo_value_new_map ();
        ufo_value_map_set_str (result, "worker", label);
        ufo_value_map_set_int (result, "pid", (int) getpid ());
        ufo_value_map_set_str (result, "task", task);
        ufo_value_map_set_int (result, "attempt", attempt);
        ufo_value_map_set_copy (result, "echo", ufo_value_map_get (ev, "body"));
        ufo_worker_complete (worker, task, status, &result);
        s_note (out, "complete", task, attempt);
        ufo_value_destroy (&ev);
    }
    ufo_worker_destroy (&worker);
    return 0;
}
