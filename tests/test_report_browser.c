/*  test_report_browser.c - system test of the session report: builds a realistic log
    directory (report_fixture.c), runs the real `ufo report`, loads the page in Debian's
    Chromium, headless, and checks the rendered DOM (steps, verdict, sub-score icons, images
    loaded, no injected script ran, the script's own marks) with and without JavaScript,
    the --link-images variant, and a screenshot that must not be blank.

    `test_report_browser --make DIR` only writes the fixture into DIR (for looking at it). */
#include "ufo_prelude.h"
#include "ufo_test.h"
#include "report_fixture.h"

#include <cairo.h>
#include <sys/wait.h>

static char s_tmp [1024];              //  this test's temporary directory
static char s_logdir [2048];
static char s_ufo_bin [PATH_MAX];          //  the ufo binary
static const char *s_chromium_bin = "chromium";
static report_fixture_t s_info;

//  Runs argv with stdout and stderr to files, in its own process group; kills the group
//  after timeout_s seconds. Returns the exit status, 128+signal, or -1 if it cannot start.
static int
s_run (char *const argv [], const char *out_path, const char *err_path, int timeout_s)
{
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid (0, 0);
        int out = open (out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open (err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open ("/dev/null", O_RDONLY);
        if (out < 0 || err < 0 || in < 0)
            _exit (126);
        dup2 (in, 0);
        dup2 (out, 1);
        dup2 (err, 2);
        execvp (argv [0], argv);
        _exit (127);
    }
    setpgid (pid, pid);
    int status = 0;
    bool done = false;
    for (int i = 0; i < timeout_s * 20 && !done; i++) {
        pid_t got = waitpid (pid, &status, WNOHANG);
        if (got == pid)
            done = true;
        else
            usleep (50 * 1000);
    }
    kill (-pid, SIGKILL);              //  the browser's helpers, or everything on timeout
    if (!done) {
        waitpid (pid, &status, 0);
        fprintf (stderr, "  %s: timed out after %d s\n", argv [0], timeout_s);
        return 128 + SIGKILL;
    }
    return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static char *
s_slurp (const char *path)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    ufo_buf_t buf = {0};
    char chunk [65536];
    size_t got;
    while ((got = fread (chunk, 1, sizeof chunk, file)) > 0)
        ufo_buf_append (&buf, chunk, got);
    fclose (file);
    return ufo_buf_detach (&buf, NULL);
}

static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

//  The integer value of attribute `name` on the <body> tag of a DOM dump, or -1.
static long
s_body_attr (const char *dom, const char *name)
{
    const char *body = strstr (dom, "<body");
    const char *end = body ? strchr (body, '>') : NULL;
    char key [64];
    snprintf (key, sizeof key, " %s=\"", name);
    const char *at = body ? strstr (body, key) : NULL;
    if (!at || at > end)
        return -1;
    return strtol (at + strlen (key), NULL, 10);
}

//  Loads page in headless Chromium; writes the DOM (after scripts) to dom_path, or a
//  screenshot to png_path. extra may add one flag. Returns the exit status.
static int
s_chromium (const char *page, const char *dom_path, const char *png_path, const char *extra,
            const char *window)
{
    static int run = 0;
    char profile [PATH_MAX], url [PATH_MAX + 128], shot [PATH_MAX + 16], size [64], errlog [PATH_MAX];
    snprintf (profile, sizeof profile, "%s/profile-%d", s_tmp, run);
    snprintf (errlog, sizeof errlog, "%s/chromium-%d.log", s_tmp, run++);
    char profile_arg [PATH_MAX + 32];
    snprintf (profile_arg, sizeof profile_arg, "--user-data-dir=%s", profile);
    snprintf (url, sizeof url, "file://%s", page);
    snprintf (shot, sizeof shot, "--screenshot=%s", png_path ? png_path : "");
    snprintf (size, sizeof size, "--window-size=%s", window ? window : "1280,2000");
    char *argv [24];
    int n = 0;
    argv [n++] = (char *) s_chromium_bin;
    argv [n++] = "--headless";
    argv [n++] = "--no-sandbox";
    argv [n++] = "--disable-gpu";
    argv [n++] = "--disable-quic";
    argv [n++] = "--no-first-run";
    argv [n++] = "--disable-background-networking";
    argv [n++] = "--disable-component-update";
    argv [n++] = "--disable-sync";
    argv [n++] = "--hide-scrollbars";
    argv [n++] = "--virtual-time-budget=5000";
    argv [n++] = profile_arg;
    argv [n++] = size;
    if (extra)
        argv [n++] = (char *) extra;
    argv [n++] = png_path ? shot : "--dump-dom";
    argv [n++] = url;
    argv [n] = NULL;
    int rc = s_run (argv, dom_path, errlog, 120);
    if (rc != 0) {
        char *log = s_slurp (errlog);
        fprintf (stderr, "  chromium exited with %d:\n%s\n", rc, log ? log : "(no log)");
        free (log);
    }
    return rc;
}

static int
s_ufo (const char *const args [], const char *out_path, const char *err_path)
{
    char *argv [16];
    int n = 0;
    argv [n++] = s_ufo_bin;
    for (size_t i = 0; args [i] && n < 15; i++)
        argv [n++] = (char *) args [i];
    argv [n] = NULL;
    return s_run (argv, out_path, err_path, 60);
}

UFO_TEST (test_cli)
{
    char out [PATH_MAX], err [PATH_MAX];
    snprintf (out, sizeof out, "%s/cli.out", s_tmp);
    snprintf (err, sizeof err, "%s/cli.err", s_tmp);
    CHECK_INT (s_ufo ((const char *[]) { "--help", NULL }, out, err), 0);
    char *text = s_slurp (out);
    CHECK_CONTAINS (text, "usage: ufo COMMAND");
    CHECK_CONTAINS (text, "report");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "--version", NULL }, out, err), 0);
    text = s_slurp (out);
    CHECK_CONTAINS (text, "ufo (ufobus) ");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "reprot", NULL }, out, err), 2);
    text = s_slurp (err);
    CHECK_CONTAINS (text, "unknown command \"reprot\"; did you mean \"report\"?");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "report", NULL }, out, err), 2);
    CHECK_INT (s_ufo ((const char *[]) { "report", s_logdir, "--bogus", NULL }, out, err), 2);
    CHECK_INT (s_ufo ((const char *[]) { "report", "/nonexistent/logs", NULL }, out, err), 1);
    text = s_slurp (err);
    CHECK_CONTAINS (text, "/nonexistent/logs");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "report", "--help", NULL }, out, err), 0);
}

//  Assertions shared by the runs with JavaScript: everything the page must show.
static void
s_check_dom_common (const char *dom)
{
    CHECK_INT (s_count (dom, "<details class=\"step "), s_info.steps);
    CHECK_INT (s_count (dom, "<tr class=\"row "), s_info.steps);
    CHECK_INT (s_count (dom, "<details class=\"round\""), s_info.rounds);
    //  Session verdict and sub-score icons (rows of the score tables).
    CHECK_CONTAINS (dom, "\xE2\x9D\x8C</span> Complete: <span class=\"status st-no\">no</span>");
    CHECK_INT (s_count (dom, "<tr class=\"score\"><td class=\"icon\">\xE2\x9C\x85</td>"), s_info.score_yes);
    CHECK_INT (s_count (dom, "<tr class=\"score\"><td class=\"icon\">\xE2\x9D\x8C</td>"), s_info.score_no);
    CHECK_INT (s_count (dom, "<tr class=\"score\"><td class=\"icon\">\xE2\x9D\x93</td>"), s_info.score_unsure);
    //  Injected markup stayed text: no attribute set, one script (ours), the text visible.
    CHECK (!strstr (dom, REPORT_FIXTURE_PWNED "="));
    CHECK_INT (s_count (dom, "<script"), 1);
    CHECK_CONTAINS (dom, "I type the three items. &lt;script&gt;document.body.setAttribute(");
    CHECK_CONTAINS (dom, "&lt;img src=x onerror=");
    CHECK_CONTAINS (dom, "<title>ufo report: shopping-list &lt;i&gt;demo&lt;/i&gt;</title>");
    //  Question, answer, refused confirmation, blackboard, totals.
    CHECK_CONTAINS (dom, "Which folder should list.txt be saved in? &lt;b&gt;bold?&lt;/b&gt;");
    CHECK_CONTAINS (dom, "<dt>Answer</dt><dd>Documents</dd>");
    CHECK_CONTAINS (dom, "refused, the action did not run.");
    CHECK_CONTAINS (dom, "Questions &amp; answers");
    CHECK_CONTAINS (dom, "<dd id=\"total-steps\">11</dd>");
    CHECK_CONTAINS (dom, "$0.1123");
    CHECK_CONTAINS (dom, "28435");
    CHECK_CONTAINS (dom, "set_edit_text(text=\"milk\\neggs\\nbread\", clear_current_text=true)");
    CHECK_CONTAINS (dom, "id=\"step-10\"");
    CHECK (!strstr (dom, "id=\"notes\""));     //  the fixture is a clean session
}

UFO_TEST (test_report_in_chromium)
{
    char page [PATH_MAX], dom_path [PATH_MAX], out [PATH_MAX];
    snprintf (page, sizeof page, "%s/report.html", s_logdir);
    snprintf (out, sizeof out, "%s/report.out", s_tmp);
    REQUIRE (s_ufo ((const char *[]) { "report", s_logdir, NULL }, out, NULL) == 0);
    char *html = s_slurp (page);
    REQUIRE (html);
    size_t size = strlen (html);
    fprintf (stderr, "  report.html: %zu bytes\n", size);
    CHECK (size < 3u << 20);
    CHECK_INT (s_count (html, "<style>"), 1);               //  one style sheet, not per step
    CHECK_INT (s_count (html, "src=\"data:image/png;base64,"), s_info.images);
    CHECK (!strstr (html, "http://") || s_count (html, "http://") == 1);  //  only the endpoint text
    CHECK (!strstr (html, "https://"));
    free (html);

    snprintf (dom_path, sizeof dom_path, "%s/dom.html", s_tmp);
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, NULL) == 0);
    char *dom = s_slurp (dom_path);
    REQUIRE (dom && strlen (dom) > 1000);
    s_check_dom_common (dom);
    //  The page's own script ran (CSP nonce accepted) and every image decoded.
    CHECK_INT (s_body_attr (dom, "data-js"), 1);
    CHECK_INT (s_body_attr (dom, "data-images-total"), s_info.images);
    CHECK_INT (s_body_attr (dom, "data-images-loaded"), s_info.images);
    CHECK_INT (s_count (dom, "data-loaded=\"1\""), s_info.images);
    CHECK (!strstr (dom, "<div id=\"tools\" class=\"tools\" hidden"));    //  tool bar shown
    CHECK_CONTAINS (dom, "11 of 11 steps");
    free (dom);
}

//  Pixel statistics of a PNG screenshot: returns false if it cannot be read.
static bool
s_png_stats (const char *png, int *w, int *h, double *sd, double *dark_share)
{
    cairo_surface_t *surface = cairo_image_surface_create_from_png (png);
    if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy (surface);
        return false;
    }
    *w = cairo_image_surface_get_width (surface);
    *h = cairo_image_surface_get_height (surface);
    cairo_surface_flush (surface);
    const unsigned char *data = cairo_image_surface_get_data (surface);
    int stride = cairo_image_surface_get_stride (surface);
    double sum = 0, sum2 = 0;
    size_t n = 0, dark = 0;
    for (int y = 0; y < *h; y += 2)
        for (int x = 0; x < *w; x += 2) {
            uint32_t p;
            memcpy (&p, data + (size_t) y * (size_t) stride + (size_t) x * 4, 4);
            double lum = 0.299 * ((p >> 16) & 255) + 0.587 * ((p >> 8) & 255) + 0.114 * (p & 255);
            sum += lum;
            sum2 += lum * lum;
            dark += lum < 100;
            n++;
        }
    double mean = n ? sum / (double) n : 0;
    *sd = n ? sqrt (sum2 / (double) n - mean * mean) : 0;
    *dark_share = n ? (double) dark / (double) n : 0;
    fprintf (stderr, "  screenshot %dx%d: mean luminance %.1f, sd %.1f, dark pixels %.2f%%\n",
             *w, *h, mean, *sd, 100.0 * *dark_share);
    cairo_surface_destroy (surface);
    return true;
}

//  Without JavaScript: --dump-dom itself needs script, so the page's script is kept from
//  running the way a strict viewer would: a copy whose script lost its CSP nonce. The
//  page must read the same; the tool bar stays hidden; its screenshot must not be blank.
//  (Chromium's own scriptEnabled=false setting also stops --dump-dom and --screenshot.)
//  The script's filters from the query string, and the jump to a step from the fragment.
UFO_TEST (test_report_filter_and_jump)
{
    char page [PATH_MAX + 64], dom_path [PATH_MAX];
    snprintf (page, sizeof page, "%s/report.html?status=PENDING", s_logdir);
    snprintf (dom_path, sizeof dom_path, "%s/dom-filter.html", s_tmp);
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, NULL) == 0);
    char *dom = s_slurp (dom_path);
    REQUIRE (dom);
    CHECK_CONTAINS (dom, "1 of 11 steps");
    CHECK_CONTAINS (dom, "<option value=\"PENDING\">PENDING</option>");
    const char *step3 = strstr (dom, "id=\"step-3\"");
    const char *step2 = strstr (dom, "id=\"step-2\"");
    REQUIRE (step3 && step2);
    CHECK (memmem (step3, (size_t) (strchr (step3, '>') - step3), "hidden", 6) == NULL);
    CHECK (memmem (step2, (size_t) (strchr (step2, '>') - step2), "hidden", 6) != NULL);
    CHECK_INT (s_count (dom, "<tr class=\"row app\" data-step=\"3\">"), 1);    //  row shown
    CHECK_INT (s_count (dom, "<tr class=\"row app\" data-step=\"2\" hidden=\"\">"), 1);
    free (dom);

    snprintf (page, sizeof page, "%s/report.html#step-7", s_logdir);
    snprintf (dom_path, sizeof dom_path, "%s/dom-jump.html", s_tmp);
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, NULL) == 0);
    dom = s_slurp (dom_path);
    REQUIRE (dom);
    CHECK_CONTAINS (dom, "<details class=\"step host flash\" id=\"step-7\"");
    CHECK_CONTAINS (dom, "11 of 11 steps");
    free (dom);
}

UFO_TEST (test_report_without_javascript)
{
    char page [PATH_MAX], copy [PATH_MAX], dom_path [PATH_MAX], png [PATH_MAX];
    snprintf (page, sizeof page, "%s/report.html", s_logdir);
    snprintf (copy, sizeof copy, "%s/report-noscript.html", s_logdir);
    char *html = s_slurp (page);
    REQUIRE (html);
    char *tag = strstr (html, "<script nonce=\"");
    REQUIRE (tag);
    FILE *file = fopen (copy, "w");
    REQUIRE (file);
    fwrite (html, 1, (size_t) (tag - html), file);
    fputs ("<script data-nonce=\"", file);
    fputs (tag + strlen ("<script nonce=\""), file);
    fclose (file);
    free (html);
    snprintf (dom_path, sizeof dom_path, "%s/dom-noscript.html", s_tmp);
    REQUIRE (s_chromium (copy, dom_path, NULL, NULL, NULL) == 0);
    char *dom = s_slurp (dom_path);
    REQUIRE (dom);
    s_check_dom_common (dom);
    CHECK_INT (s_body_attr (dom, "data-js"), -1);          //  the script did not run
    CHECK_CONTAINS (dom, "<div id=\"tools\" class=\"tools\" hidden");   //  no dead controls
    free (dom);

    snprintf (png, sizeof png, "%s/report-nojs.png", s_tmp);
    REQUIRE (s_chromium (copy, NULL, png, NULL, NULL) == 0);
    unlink (copy);
    int w, h;
    double sd, dark;
    REQUIRE (s_png_stats (png, &w, &h, &sd, &dark));
    CHECK (sd > 15);
    CHECK (dark > 0.005);
    if (getenv ("UFO_REPORT_KEEP")) {
        char keep [PATH_MAX + 32];
        snprintf (keep, sizeof keep, "%s/report-screenshot-nojs.png", getenv ("UFO_REPORT_KEEP"));
        rename (png, keep);
    }
}

UFO_TEST (test_report_linked_images)
{
    char other [2048], page [PATH_MAX], dom_path [PATH_MAX];
    snprintf (other, sizeof other, "%s/elsewhere", s_tmp);
    mkdir (other, 0755);
    snprintf (page, sizeof page, "%s/linked report.html", other);
    REQUIRE (s_ufo ((const char *[]) { "report", s_logdir, "--out", page, "--link-images", NULL },
                    NULL, NULL) == 0);
    char *html = s_slurp (page);
    REQUIRE (html);
    //  Only the blackboard's own data URL stays embedded.
    CHECK_INT (s_count (html, "src=\"data:image/png;base64,"), 1);
    CHECK_INT (s_count (html, " loading=\"lazy\" src=\"/"), s_info.images - 1);
    free (html);
    snprintf (dom_path, sizeof dom_path, "%s/dom-linked.html", s_tmp);
    //  A very tall window, so that lazy images are all near the viewport.
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, "1280,40000") == 0);
    char *dom = s_slurp (dom_path);
    REQUIRE (dom);
    CHECK_INT (s_body_attr (dom, "data-images-total"), s_info.images);
    CHECK_INT (s_body_attr (dom, "data-images-loaded"), s_info.images);
    free (dom);
}

UFO_TEST (test_report_screenshot)
{
    char page [PATH_MAX], png [PATH_MAX];
    snprintf (page, sizeof page, "%s/report.html", s_logdir);
    snprintf (png, sizeof png, "%s/report.png", s_tmp);
    REQUIRE (s_chromium (page, NULL, png, NULL, NULL) == 0);
    int w, h;
    double sd, dark;
    REQUIRE (s_png_stats (png, &w, &h, &sd, &dark));
    CHECK_INT (w, 1280);
    CHECK_INT (h, 2000);
    CHECK (sd > 15);                                     //  not a blank page
    CHECK (dark > 0.005);                                //  there is text and imagery
    if (getenv ("UFO_REPORT_KEEP")) {
        char keep [PATH_MAX + 32];
        snprintf (keep, sizeof keep, "%s/report-screenshot.png", getenv ("UFO_REPORT_KEEP"));
        rename (png, keep);
    }
}

static void
s_remove_tree (const char *path)
{
    char *argv [] = { "rm", "-rf", (char *) path, NULL };
    s_run (argv, NULL, NULL, 60);
}

int
main (int argc, char **argv)
{
    if (argc == 3 && strcmp (argv [1], "--make") == 0) {
        mkdir (argv [2], 0755);
        return report_fixture_make (argv [2], NULL) == 0 ? 0 : 1;
    }
    const char *build = getenv ("UFO_BUILD_DIR");
    snprintf (s_ufo_bin, sizeof s_ufo_bin, "%s/cli/ufo", build ? build : ".");
    if (getenv ("UFO_CHROMIUM"))
        s_chromium_bin = getenv ("UFO_CHROMIUM");
    const char *tmp = getenv ("TMPDIR");
    snprintf (s_tmp, sizeof s_tmp, "%s/ufo-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 1;
    }
    //  The browser keeps its caches and settings inside the test's directory.
    setenv ("HOME", s_tmp, 1);
    char xdg [1100];
    snprintf (xdg, sizeof xdg, "%s/.config", s_tmp);
    setenv ("XDG_CONFIG_HOME", xdg, 1);
    snprintf (xdg, sizeof xdg, "%s/.cache", s_tmp);
    setenv ("XDG_CACHE_HOME", xdg, 1);
    snprintf (s_logdir, sizeof s_logdir, "%s/logs/shopping-list", s_tmp);
    char logs [PATH_MAX];
    snprintf (logs, sizeof logs, "%s/logs", s_tmp);
    mkdir (logs, 0755);
    mkdir (s_logdir, 0755);
    if (report_fixture_make (s_logdir, &s_info) != 0) {
        fprintf (stderr, "cannot write the fixture in %s\n", s_logdir);
        return 1;
    }
    if (access (s_ufo_bin, X_OK) != 0) {
        fprintf (stderr, "no ufo binary at %s (UFO_BUILD_DIR)\n", s_ufo_bin);
        return 1;
    }
    UFO_RUN (test_cli);
    UFO_RUN (test_report_in_chromium);
    UFO_RUN (test_report_filter_and_jump);
    UFO_RUN (test_report_without_javascript);
    UFO_RUN (test_report_linked_images);
    UFO_RUN (test_report_screenshot);
    int rc = UFO_TEST_END ();
    if (rc == 0 && !getenv ("UFO_REPORT_KEEP"))
        s_remove_tree (s_tmp);
    else
        fprintf (stderr, "kept %s\n", s_tmp);
    return rc;
}
