/*  test_report_browser.c - system test of the session report: builds a realistic log
    directory (report_fixture.c), runs the real `ufo report`, loads the page in Debian's
    Chromium, headless, and checks the rendered DOM (steps, verdict, sub-score icons, images
    loaded, no injected script ran, the script's own marks) with and without JavaScript,
    the --link-images variant, and a screenshot that must not be blank.

    `test_report_browser --make DIR` only writes the fixture into DIR (for looking at it). */
#include "ufo_prelude.h"
#include "ufo_test.h"
#include "report_fixture.h"
#include "report_browser.h"

static char s_logdir [2048];
static report_fixture_t s_info;

UFO_TEST (test_cli)
{
    char out [PATH_MAX], err [PATH_MAX];
    snprintf (out, sizeof out, "%s/cli.out", s_tmp);
    snprintf (err, sizeof err, "%s/cli.err", s_tmp);
    CHECK_INT (s_ufo ((const char *[]) { "--help", NULL }, out, err), 0);
    char *text = tf_read (out, NULL);
    CHECK_CONTAINS (text, "usage: ufo COMMAND");
    CHECK_CONTAINS (text, "report");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "--version", NULL }, out, err), 0);
    text = tf_read (out, NULL);
    CHECK_CONTAINS (text, "ufo (ufobus) ");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "reprot", NULL }, out, err), 2);
    text = tf_read (err, NULL);
    CHECK_CONTAINS (text, "unknown command \"reprot\"; did you mean \"report\"?");
    free (text);
    CHECK_INT (s_ufo ((const char *[]) { "report", NULL }, out, err), 2);
    CHECK_INT (s_ufo ((const char *[]) { "report", s_logdir, "--bogus", NULL }, out, err), 2);
    CHECK_INT (s_ufo ((const char *[]) { "report", "/nonexistent/logs", NULL }, out, err), 1);
    text = tf_read (err, NULL);
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
    char *html = tf_read (page, NULL);
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
    char *dom = tf_read (dom_path, NULL);
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

//  The script's filters from the query string, and the jump to a step from the fragment.
UFO_TEST (test_report_filter_and_jump)
{
    char page [PATH_MAX + 64], dom_path [PATH_MAX];
    snprintf (page, sizeof page, "%s/report.html?status=PENDING", s_logdir);
    snprintf (dom_path, sizeof dom_path, "%s/dom-filter.html", s_tmp);
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, NULL) == 0);
    char *dom = tf_read (dom_path, NULL);
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
    dom = tf_read (dom_path, NULL);
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
    char *html = tf_read (page, NULL);
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
    char *dom = tf_read (dom_path, NULL);
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
    char *html = tf_read (page, NULL);
    REQUIRE (html);
    //  Only the blackboard's own data URL stays embedded.
    CHECK_INT (s_count (html, "src=\"data:image/png;base64,"), 1);
    CHECK_INT (s_count (html, " loading=\"lazy\" src=\"/"), s_info.images - 1);
    free (html);
    snprintf (dom_path, sizeof dom_path, "%s/dom-linked.html", s_tmp);
    //  A very tall window, so that lazy images are all near the viewport.
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, "1280,40000") == 0);
    char *dom = tf_read (dom_path, NULL);
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

int
main (int argc, char **argv)
{
    if (argc == 3 && strcmp (argv [1], "--make") == 0) {
        mkdir (argv [2], 0755);
        return report_fixture_make (argv [2], NULL) == 0 ? 0 : 1;
    }
    if (s_browser_setup ("ufo-report") != 0)
        return 1;
    snprintf (s_logdir, sizeof s_logdir, "%s/logs/shopping-list", s_tmp);
    char logs [PATH_MAX];
    snprintf (logs, sizeof logs, "%s/logs", s_tmp);
    mkdir (logs, 0755);
    mkdir (s_logdir, 0755);
    if (report_fixture_make (s_logdir, &s_info) != 0) {
        fprintf (stderr, "cannot write the fixture in %s\n", s_logdir);
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
