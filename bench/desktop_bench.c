/*  desktop_bench - control snapshots and screenshots, against pyatspi in the same run.

    In a private headless session (scripts/desktop-session) with mousepad (GTK3) and
    gnome-calculator (GTK4):
      first step:    a control snapshot with an empty cache (new window to the agent)
      repeated step: the same snapshot again, the window unchanged
      baseline:      a full walk of the same window with Python's pyatspi reading the same
                     fields (bench/baseline/pyatspi_walk.py, walk time only)
    and the screenshot path of a step: capture a 1280x800 window, annotate it, encode PNG.
    Samples alternate between ours and the baseline; medians; ratios printed.
    Targets: first >= 3x, repeated >= 15x faster; screenshot path median <= 30 ms.
    Then LibreOffice Writer, the Firefox form page (tests/data/web/form.html) and LibreOffice
    Calc (issue 19): first and repeated snapshot, pyatspi's full walk once as the baseline
    (bounded: Calc's does not finish); targets first < 500 ms, repeated < 5 ms.
    `desktop_bench office` runs only these three.
    Exit status 0 when every target is met, 1 otherwise, 2 when the setup failed. */
#include "ufo_prelude.h"
#include "bench_stats.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "../tests/desktop_fixture.h"
#include <inttypes.h>
#include <math.h>

#define ROUNDS 9
#define SHOTS 15
#define WAIT_MS 60000


static ufo_value_t *
s_snapshot (ufo_desktop_t *desk, int64_t xid, double *ms)
{
    double t0 = (1e3 * ufo_time_mono_s ());
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
    ufo_value_t *r = ufo_desktop_op_run (desk, &op);
    *ms = (1e3 * ufo_time_mono_s ()) - t0;
    return r;
}

//  One pyatspi walk in a fresh interpreter; returns the walk time (ms) or -1, and in *find_ms
//  the time it took to find the application and window.
static double
s_python (int pid, const char *title, int *nodes, double *find_ms)
{
    char cmd [1024];
    snprintf (cmd, sizeof (cmd), "/usr/bin/python3 '%s/bench/baseline/pyatspi_walk.py' %d '%s' 1",
              getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR, pid, title);
    FILE *p = popen (cmd, "r");
    if (!p)
        return -1;
    char line [4096] = "";
    if (!fgets (line, sizeof (line), p))
        line [0] = '\0';
    pclose (p);
    ufo_value_t *v = ufo_json_parse_str (line, NULL);
    double ms = ufo_value_float (ufo_value_list_at (ufo_value_map_get (v, "times_ms"), 0));
    *nodes = (int) ufo_value_map_int (v, "nodes", 0);
    *find_ms = ufo_value_map_float (v, "find_ms", -1);
    if (!v || ms <= 0)
        ms = -1;
    ufo_value_destroy (&v);
    return ms;
}

//  The applications people automate (issue 19): first (cold cache) and repeated snapshot,
//  median of ROUNDS, and pyatspi's full walk once as the baseline, given at most
//  baseline_s seconds (Calc's sheet of 2^31 cells does not finish). Targets: first < 500 ms,
//  repeated < 5 ms.
static bool
s_bench_office (ufo_desktop_t *desk, const char *name, int64_t xid, int baseline_s)
{
    ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
    char title [256] = "";
    int pid = 0;
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid) {
            snprintf (title, sizeof (title), "%s",
                      ufo_value_map_str (ufo_value_list_at (wins, i), "title", ""));
            pid = (int) ufo_value_map_int (ufo_value_list_at (wins, i), "pid", 0);
        }
    ufo_value_destroy (&wins);
    double first [ROUNDS], again [ROUNDS];
    int controls = 0, nodes = 0;
    int64_t calls = 0, calls2 = 0, rewalks = 0, recheck = 0;
    for (int r = 0; r < ROUNDS; r++) {
        ufo_desktop_cache_clear (desk);     //  (also: the pointer is moved in again)
        ufo_value_t *s1 = s_snapshot (desk, xid, &first [r]);
        ufo_value_t *s2 = s_snapshot (desk, xid, &again [r]);
        controls = (int) ufo_value_size (ufo_value_map_get (s1, "controls"));
        nodes = (int) ufo_value_map_int (s1, "nodes", 0);
        calls = ufo_value_map_int (s1, "calls", 0);
        calls2 = ufo_value_map_int (s2, "calls", 0);
        rewalks = ufo_value_map_int (s1, "rewalks", 0);
        recheck = ufo_value_map_int (s1, "position_calls", 0);
        bool ok = ufo_value_map_bool (s1, "success", false) && ufo_value_map_bool (s2, "success", false);
        if (!ok)
            fprintf (stderr, "%s: snapshot failed: %s\n", name, ufo_value_map_str (s1, "error", ""));
        ufo_value_destroy (&s1);
        ufo_value_destroy (&s2);
        if (!ok)
            return false;
    }
    double mf = bench_median (first, ROUNDS), ma = bench_median (again, ROUNDS);
    printf ("%-17s first snapshots (ms, sorted):", name);
    for (int r = 0; r < ROUNDS; r++)
        printf (" %.0f", first [r]);
    printf ("; repeated %.2f-%.2f ms; last first snapshot: %" PRId64 " rewalks, %" PRId64
            " calls of them the position pass\n", again [0], again [ROUNDS - 1], rewalks, recheck);
    char cmd [1200], base [160];
    snprintf (cmd, sizeof (cmd), "timeout %d /usr/bin/python3 '%s/bench/baseline/pyatspi_walk.py' %d '%s' 1",
              baseline_s, getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR,
              pid, title);
    FILE *p = popen (cmd, "r");
    char line [4096] = "";
    if (!p || !fgets (line, sizeof (line), p))
        line [0] = '\0';
    if (p)
        pclose (p);
    ufo_value_t *v = ufo_json_parse_str (line, NULL);
    double py = ufo_value_float (ufo_value_list_at (ufo_value_map_get (v, "times_ms"), 0));
    if (v && py > 0)
        snprintf (base, sizeof base, "pyatspi walk %.1f ms (%d nodes)", py,
                  (int) ufo_value_map_int (v, "nodes", 0));
    else
        snprintf (base, sizeof base, "pyatspi walk did not finish within %d s", baseline_s);
    ufo_value_destroy (&v);
    bool ok = mf < 500 && ma < 5;
    printf ("%-17s first %6.1f ms (%d visible nodes, %d controls, %" PRId64 " calls) | repeated "
            "%6.3f ms (%" PRId64 " calls) | %s | first < 500 ms: %s, repeated < 5 ms: %s\n",
            name, mf, nodes, controls, calls, ma, calls2, base, mf < 500 ? "PASS" : "FAIL",
            ma < 5 ? "PASS" : "FAIL");
    return ok;
}

//  The cost of the re-read after an action of ours (the next snapshot reads the states of
//  the shown nodes again, docs/DESKTOP.md "How a snapshot is read"): an action that changes
//  nothing (`texts` on the first control), then a snapshot; against, in the same run, a
//  repeated snapshot of the unchanged window and a cold one. Median of ROUNDS.
static void
s_bench_after_action (ufo_desktop_t *desk, const char *name, int64_t xid)
{
    double t_cold, idle [ROUNDS], after [ROUNDS];
    ufo_desktop_cache_clear (desk);
    ufo_value_t *s0 = s_snapshot (desk, xid, &t_cold);
    int64_t cold_calls = ufo_value_map_int (s0, "calls", 0);
    char label [32];
    snprintf (label, sizeof label, "%s", ufo_value_map_str (ufo_value_list_at (
                  ufo_value_map_get (s0, "controls"), 0), "label", "1"));
    ufo_value_destroy (&s0);
    int64_t idle_calls = 0, after_calls = 0;
    for (int r = 0; r < ROUNDS; r++) {
        ufo_value_t *s1 = s_snapshot (desk, xid, &idle [r]);
        idle_calls = ufo_value_map_int (s1, "calls", 0);
        ufo_value_destroy (&s1);
        ufo_desktop_op_t *op = ufo_desktop_act_begin (desk, xid, label, "texts", NULL);
        ufo_value_t *a = ufo_desktop_op_run (desk, &op);
        ufo_value_destroy (&a);
        ufo_value_t *s2 = s_snapshot (desk, xid, &after [r]);
        after_calls = ufo_value_map_int (s2, "calls", 0);
        ufo_value_destroy (&s2);
    }
    printf ("%-17s after an action: %6.2f ms (%" PRId64 " calls) | unchanged %6.3f ms (%" PRId64
            " calls) | cold %6.1f ms (%" PRId64 " calls)\n", name, bench_median (after, ROUNDS),
            after_calls, bench_median (idle, ROUNDS), idle_calls, t_cold, cold_calls);
}

static bool
s_bench_app (ufo_desktop_t *desk, const char *name, int pid, int64_t xid)
{
    ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
    char title [256] = "";
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid)
            snprintf (title, sizeof (title), "%s",
                      ufo_value_map_str (ufo_value_list_at (wins, i), "title", ""));
    ufo_value_destroy (&wins);
    double first [ROUNDS], again [ROUNDS], py [ROUNDS], pyfind [ROUNDS];
    int controls = 0, nodes = 0, py_nodes = 0;
    int64_t refetched = 0;
    for (int r = 0; r < ROUNDS; r++) {
        ufo_desktop_cache_clear (desk);
        ufo_value_t *s1 = s_snapshot (desk, xid, &first [r]);
        ufo_value_t *s2 = s_snapshot (desk, xid, &again [r]);
        controls = (int) ufo_value_size (ufo_value_map_get (s1, "controls"));
        nodes = (int) ufo_value_map_int (s1, "nodes", 0);
        refetched += ufo_value_map_int (s2, "fetched", 0);
        if (!ufo_value_map_bool (s1, "success", false) || !ufo_value_map_bool (s2, "success", false)) {
            fprintf (stderr, "%s: snapshot failed: %s\n", name, ufo_value_map_str (s1, "error", ""));
            return false;
        }
        ufo_value_destroy (&s1);
        ufo_value_destroy (&s2);
        py [r] = s_python (pid, title, &py_nodes, &pyfind [r]);
        if (py [r] < 0 || pyfind [r] < 0) {
            fprintf (stderr, "%s: pyatspi baseline failed\n", name);
            return false;
        }
    }
    //  our first step finds the application and window too: compare it with pyatspi's
    //  find + walk; the repeated step (window known) with the walk alone
    double pyfirst [ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        pyfirst [r] = py [r] + pyfind [r];
    double mf = bench_median (first, ROUNDS), ma = bench_median (again, ROUNDS), mp = bench_median (py, ROUNDS);
    double mpf = bench_median (pyfirst, ROUNDS);
    double rf = mpf / mf, ra = mp / ma;
    printf ("%-17s pyatspi find+walk %7.2f ms, walk %7.2f ms (%d nodes) | first step %6.2f ms "
            "(%d visible nodes, %d controls) %5.1fx | repeated %6.3f ms %6.1fx (nodes re-read: %"
            PRId64 ")\n", name, mpf, mp, py_nodes, mf, nodes, controls, rf, ma, ra, refetched);
    bool ok = rf >= 3 && ra >= 15;
    printf ("%-17s first >= 3x: %s, repeated >= 15x: %s\n", name, rf >= 3 ? "PASS" : "FAIL",
            ra >= 15 ? "PASS" : "FAIL");
    return ok;
}

//  Writer, the Firefox form page, then Calc (its baseline leaves LibreOffice spinning: last,
//  and LibreOffice is stopped after it).
static bool
s_office (void)
{
    ufo_error_t err = { 0 };
    const ufo_value_t *lo = ufo_value_map_get (ufo_value_map_get (ufo_desktop_profiles (),
                                                                  "libreoffice"), "launchers");
    ufo_value_t *ff = ufo_value_dup (ufo_value_map_get (ufo_value_map_get (ufo_value_map_get (
        ufo_desktop_profiles (), "firefox-esr"), "launchers"), "firefox-esr"));
    char url [700];
    snprintf (url, sizeof url, "file://%s/tests/data/web/form.html",
              getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR);
    ufo_value_list_push_str (ff, url);
    ufo_value_t *opts = ufo_value_new_map ();
    ufo_value_t *launchers = ufo_value_dup (lo);
    ufo_value_map_set (launchers, "form", &ff);
    ufo_value_map_set (opts, "launchers", &launchers);
    ufo_desktop_t *d2 = ufo_desktop_new (opts, &err);
    ufo_value_destroy (&opts);
    if (!d2)
        return false;
    bool ok = true;
    int64_t wx = 0, fx = 0, cx = 0;
    if (ufo_desktop_launch (d2, "libreoffice-writer", &err) > 0)
        wx = dfx_wait_window (d2, 0, "LibreOffice Writer", WAIT_MS);
    ufo_value_t *w = wx ? dfx_wait_control (d2, wx, "Document", NULL, WAIT_MS) : NULL;
    ok &= w && s_bench_office (d2, "writer (LO 7.4)", wx, 60);
    ufo_value_destroy (&w);
    if (ufo_desktop_launch (d2, "form", &err) > 0)
        fx = dfx_wait_window (d2, 0, "Order form", WAIT_MS);
    ufo_value_t *f = fx ? dfx_wait_control (d2, fx, "Text", "Nothing sent yet.", WAIT_MS) : NULL;
    ok &= f && s_bench_office (d2, "firefox form", fx, 60);
    ufo_value_destroy (&f);
    if (ufo_desktop_launch (d2, "libreoffice-calc", &err) > 0)
        cx = dfx_wait_window (d2, 0, "LibreOffice Calc", WAIT_MS);
    ufo_value_t *c = cx ? dfx_wait_control (d2, cx, "ListItem", "A1", WAIT_MS) : NULL;
    ok &= c && s_bench_office (d2, "calc (LO 7.4)", cx, 20);
    ufo_value_destroy (&c);
    if (!wx || !fx || !cx)
        fprintf (stderr, "office applications did not come up (%s)\n", err.message);
    ufo_desktop_destroy (&d2);
    return ok;
}

int
main (int argc, char **argv)
{
    ufo_log_set_level (UFO_LOG_WARN);
    if (dfx_session_start () != 0)
        return 2;
    if (argc > 1 && strcmp (argv [1], "office") == 0) {   //  the issue 19 applications only
        int orc = s_office () ? 0 : 1;
        dfx_session_stop ();
        return orc;
    }
    ufo_value_t *opts = ufo_json_parse_str (
        "{\"launchers\": {\"mousepad\": [\"mousepad\"], \"calculator\": [\"gnome-calculator\"]}}",
        NULL);
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (opts, &err);
    ufo_value_destroy (&opts);
    int rc = 2;
    if (!desk) {
        fprintf (stderr, "desktop: %s\n", err.message);
        goto done;
    }
    int mpid = ufo_desktop_launch (desk, "mousepad", &err);
    int cpid = ufo_desktop_launch (desk, "calculator", &err);
    int64_t mxid = dfx_wait_window (desk, mpid, "Mousepad", WAIT_MS);
    int64_t cxid = dfx_wait_window (desk, cpid, NULL, WAIT_MS);
    ufo_value_t *ms = mxid ? dfx_wait_control (desk, mxid, "Edit", NULL, WAIT_MS) : NULL;
    ufo_value_t *cs = cxid ? dfx_wait_control (desk, cxid, "Button", "=", WAIT_MS) : NULL;
    if (!ms || !cs) {
        fprintf (stderr, "applications did not come up\n");
        ufo_value_destroy (&ms);
        ufo_value_destroy (&cs);
        goto done;
    }
    ufo_value_destroy (&ms);
    ufo_value_destroy (&cs);
    printf ("desktop_bench: control snapshot vs pyatspi full walk (median of %d, same run)\n",
            ROUNDS);
    bool ok = s_bench_app (desk, "mousepad (GTK3)", mpid, mxid);
    ok &= s_bench_app (desk, "calculator (GTK4)", cpid, cxid);
    s_bench_after_action (desk, "mousepad (GTK3)", mxid);
    s_bench_after_action (desk, "calculator (GTK4)", cxid);

    //  screenshot + annotation + PNG of a 1280x800 window
    ufo_desktop_move_resize (desk, mxid, 0, 0, 1280, 800, NULL);
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    bool sized = false;
    while (!sized && ufo_time_mono_ms () < end) {
        ufo_image_t *img = ufo_desktop_capture_window (desk, mxid, NULL);
        sized = img && ufo_image_width (img) == 1280 && ufo_image_height (img) == 800;
        ufo_image_destroy (&img);
        if (!sized)
            ufo_desktop_iterate (desk, 50);
    }
    //  the marks: every control of both windows (the calculator lies over mousepad's area)
    double t_unused;
    ufo_value_t *s1 = s_snapshot (desk, mxid, &t_unused);
    ufo_value_t *s2 = s_snapshot (desk, cxid, &t_unused);
    ufo_value_t *marks_src = ufo_value_dup (ufo_value_map_get (s1, "controls"));
    const ufo_value_t *cc = ufo_value_map_get (s2, "controls");
    for (size_t i = 0; i < ufo_value_size (cc); i++) {
        ufo_value_t *c = ufo_value_dup (ufo_value_list_at (cc, i));
        ufo_value_list_push (marks_src, &c);
    }
    double shot [SHOTS], cap [SHOTS], ann [SHOTS], enc [SHOTS];
    size_t png_size = 0, nmarks = 0;
    for (int i = 0; i < SHOTS && sized; i++) {
        double t0 = (1e3 * ufo_time_mono_s ());
        ufo_image_t *img = ufo_desktop_capture_window (desk, mxid, NULL);
        double t1 = (1e3 * ufo_time_mono_s ());
        ufo_value_t *marks = NULL;
        ufo_image_t *annotated = img ? ufo_image_annotate (img, marks_src, &marks) : NULL;
        double t2 = (1e3 * ufo_time_mono_s ());
        void *png = NULL;
        if (annotated)
            ufo_image_encode_png (annotated, 1, &png, &png_size, NULL);
        double t3 = (1e3 * ufo_time_mono_s ());
        shot [i] = t3 - t0;
        cap [i] = t1 - t0;
        ann [i] = t2 - t1;
        enc [i] = t3 - t2;
        nmarks = ufo_value_size (marks);
        free (png);
        ufo_value_destroy (&marks);
        ufo_image_destroy (&annotated);
        ufo_image_destroy (&img);
    }
    ufo_value_destroy (&marks_src);
    ufo_value_destroy (&s1);
    ufo_value_destroy (&s2);
    if (!sized) {
        printf ("screenshot: the window did not reach 1280x800\n");
        ok = false;
    }
    else {
        double m = bench_median (shot, SHOTS);
        printf ("screenshot 1280x800 + annotation (%zu marks) + PNG (level 1, %zu KB): median %.2f ms "
                "(capture %.2f, annotate %.2f, encode %.2f) target <= 30 ms: %s\n",
                nmarks, png_size / 1024, m, bench_median (cap, SHOTS), bench_median (ann, SHOTS),
                bench_median (enc, SHOTS), m <= 30 ? "PASS" : "FAIL");
        ok &= m <= 30;
    }
    ok &= s_office ();
    rc = ok ? 0 : 1;
done:
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
    return rc;
}
