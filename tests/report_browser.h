/*  report_browser.h - helpers of the report system tests: run a child with a timeout,
    run the real `ufo` tool, load a page in headless Chromium (DOM dump or screenshot),
    read the results. Header-only, for test programs; each program includes it once. */
#ifndef REPORT_BROWSER_H_INCLUDED
#define REPORT_BROWSER_H_INCLUDED

#include <cairo.h>
#include <sys/wait.h>
#include "test_files.h"

static char s_tmp [1024];                   //  the test's temporary directory
static char s_ufo_bin [PATH_MAX];           //  the ufo binary
static const char *s_chromium_bin = "chromium";

//  Runs argv with stdout and stderr to files, in its own process group; kills the group
//  after timeout_s seconds. Returns the exit status, 128+signal, or -1 if it cannot start.
static inline int
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

static inline int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

//  The integer value of attribute `name` on the <body> tag of a DOM dump, or -1.
static inline long
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
static inline int
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
        char *log = tf_read (errlog, NULL);
        fprintf (stderr, "  chromium exited with %d:\n%s\n", rc, log ? log : "(no log)");
        free (log);
    }
    return rc;
}

static inline int
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

//  Pixel statistics of a PNG screenshot: returns false if it cannot be read.
static inline bool
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
static inline void
s_remove_tree (const char *path)
{
    char *argv [] = { "rm", "-rf", (char *) path, NULL };
    s_run (argv, NULL, NULL, 60);
}

//  Keeps the browser's HOME and XDG directories inside the test's temporary directory,
//  and away from any display or session bus (it runs headless).
static inline void
s_browser_env (void)
{
    setenv ("HOME", s_tmp, 1);
    char xdg [1100];
    snprintf (xdg, sizeof xdg, "%s/.config", s_tmp);
    setenv ("XDG_CONFIG_HOME", xdg, 1);
    snprintf (xdg, sizeof xdg, "%s/.cache", s_tmp);
    setenv ("XDG_CACHE_HOME", xdg, 1);
    unsetenv ("DISPLAY");
    unsetenv ("DBUS_SESSION_BUS_ADDRESS");
}

//  Makes the test's temporary directory (prefix names it), finds the ufo binary
//  ($UFO_BUILD_DIR/cli/ufo) and the browser ($UFO_CHROMIUM, else chromium), and keeps the
//  browser's HOME and XDG directories inside the temporary directory. Returns 0 or -1.
static inline int
s_browser_setup (const char *prefix)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    snprintf (s_ufo_bin, sizeof s_ufo_bin, "%s/cli/ufo", build ? build : ".");
    if (getenv ("UFO_CHROMIUM"))
        s_chromium_bin = getenv ("UFO_CHROMIUM");
    const char *tmp = getenv ("TMPDIR");
    snprintf (s_tmp, sizeof s_tmp, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return -1;
    }
    if (access (s_ufo_bin, X_OK) != 0) {
        fprintf (stderr, "no ufo binary at %s (UFO_BUILD_DIR)\n", s_ufo_bin);
        return -1;
    }
    s_browser_env ();
    return 0;
}

#endif
