/*  test_report.c - the session report generator on partial, broken and hostile logs:
    missing files, garbage lines, cut-off last lines, markup in every field, file names
    that point outside the log directory, fake images; plus escaping and base64. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_report.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "ufo_report_int.h"

#include <cairo.h>

static char s_root [1024];
static int s_dirs = 0;

static void
s_put (const char *dir, const char *name, const char *text)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen (path, "w");
    if (!file) {
        perror (path);
        abort ();
    }
    fputs (text, file);
    fclose (file);
}

//  A fresh log directory under this test's temporary root.
static char *
s_dir (void)
{
    char *dir = ufo_malloc (PATH_MAX);
    snprintf (dir, PATH_MAX, "%s/logs-%d", s_root, s_dirs++);
    mkdir (dir, 0755);
    return dir;
}

static void
s_png (const char *dir, const char *name, int w, int h)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create (surface);
    cairo_set_source_rgb (cr, 0.2, 0.5, 0.8);
    cairo_paint (cr);
    cairo_destroy (cr);
    cairo_surface_write_to_png (surface, path);
    cairo_surface_destroy (surface);
}

static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

static char *
s_render (const char *dir, const ufo_report_options_t *opts, ufo_report_stats_t *stats)
{
    ufo_error_t err;
    char *html = ufo_report_render (dir, NULL, opts, NULL, stats, &err);
    if (!html)
        fprintf (stderr, "  render failed: %s\n", err.message);
    return html;
}

UFO_TEST (test_not_a_directory)
{
    ufo_error_t err;
    CHECK (ufo_report_render ("/nonexistent/ufo-logs", NULL, NULL, NULL, NULL, &err) == NULL);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    CHECK_CONTAINS (err.message, "/nonexistent/ufo-logs");
    char *dir = s_dir ();
    s_put (dir, "file", "x");
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/file", dir);
    CHECK (ufo_report_write (path, NULL, NULL, &err) == -1);
    CHECK_INT (err.code, UFO_E_INVALID);
    //  An output path that cannot be written is an error, and leaves no temp file.
    CHECK (ufo_report_write (dir, "/nonexistent/dir/report.html", NULL, &err) == -1);
    CHECK_INT (err.code, UFO_E_IO);
    free (dir);
}

UFO_TEST (test_empty_directory)
{
    char *dir = s_dir ();
    ufo_report_stats_t stats;
    ufo_error_t err;
    REQUIRE (ufo_report_write_stats (dir, NULL, NULL, &stats, &err) == 0);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/report.html", dir);
    FILE *file = fopen (path, "r");
    REQUIRE (file);
    char head [32] = "";
    CHECK (fgets (head, sizeof head, file) != NULL);
    fclose (file);
    CHECK_STR (head, "<!DOCTYPE html>\n");
    char *html = s_render (dir, NULL, NULL);
    REQUIRE (html);
    CHECK_CONTAINS (html, "id=\"notes\"");
    CHECK_CONTAINS (html, "request.json is missing");
    CHECK_CONTAINS (html, "response.log is missing: no step was logged");
    CHECK_CONTAINS (html, "session.json is missing: the session may not have ended");
    CHECK_CONTAINS (html, "No step was logged.");
    CHECK_CONTAINS (html, "No request was logged.");
    CHECK_CONTAINS (html, "The session was not evaluated");
    CHECK_CONTAINS (html, "not ended");
    CHECK_INT (stats.steps, 0);
    CHECK_INT (stats.notes, 3);
    CHECK (strlen (html) > 1000 && strcmp (html + strlen (html) - 8, "</html>\n") == 0);
    free (html);
    free (dir);
}

UFO_TEST (test_broken_lines)
{
    char *dir = s_dir ();
    s_put (dir, "response.log",
           "{\"Step\": 0, \"Round\": 0, \"Agent\": \"HostAgent\", \"Status\": \"ASSIGN\", "
           "\"Thought\": \"first step text\"}\n"
           "this is not json\n"
           "[1, 2, 3]\n"
           "\n"
           "{\"Step\": 0, \"Round\": 0, \"Agent\": \"AppAgent\", \"Status\": \"CONTINUE\", "
           "\"Thought\": \"repeated step number\"}\r\n"
           "{\"Step\": \"seven\", \"Round\": 1, \"Agent\": \"HostAgent\", \"Status\": \"FINISH\"}\n"
           "{\"Step\": 9, \"Round\": 1, \"Agent\": \"App");
    s_put (dir, "evaluation.log", "{\"level\": \"session\", \"complete\": \"yes\"}\n{oops\n");
    s_put (dir, "blackboard.json", "{\"questions\": [");
    s_put (dir, "session.json", "[\"not\", \"an\", \"object\"]");
    s_put (dir, "request.json", "{\"task\": \"broken\", \"requests\": \"not a list\"}");
    ufo_report_stats_t stats;
    char *html = s_render (dir, NULL, &stats);
    REQUIRE (html);
    CHECK_INT (stats.steps, 3);
    CHECK_INT (stats.evaluations, 1);
    CHECK_INT (stats.rounds, 2);
    CHECK_CONTAINS (html, "response.log line 2 is not valid JSON");
    CHECK_CONTAINS (html, "response.log line 3 is a JSON list, not an object; skipped");
    CHECK_CONTAINS (html, "response.log line 7 is not valid JSON");
    CHECK_CONTAINS (html, "the last line is cut short");
    CHECK_CONTAINS (html, "evaluation.log line 2 is not valid JSON");
    CHECK_CONTAINS (html, "blackboard.json is not valid JSON");
    CHECK_CONTAINS (html, "session.json is not a JSON object (it is a list)");
    CHECK_CONTAINS (html, "2 step(s) in response.log have no usable or a repeated");
    CHECK_INT (stats.notes, 7);
    //  The good lines are all there, each with its own anchor.
    CHECK_CONTAINS (html, "first step text");
    CHECK_CONTAINS (html, "repeated step number");
    CHECK_CONTAINS (html, "id=\"step-0\"");
    CHECK_CONTAINS (html, "id=\"step-1\"");
    CHECK_CONTAINS (html, "id=\"step-2\"");
    CHECK_INT (s_count (html, "<details class=\"step "), 3);
    CHECK_CONTAINS (html, "\xE2\x9C\x85</span> Complete");
    free (html);
    free (dir);
}

UFO_TEST (test_step_numbers)
{
    char *dir = s_dir ();
    s_put (dir, "response.log",
           "{\"Step\": 5, \"Thought\": \"five\"}\n"
           "{\"Step\": 1000000000000, \"Thought\": \"huge\"}\n"
           "{\"Step\": 5, \"Thought\": \"again\"}\n"
           "{\"Step\": -1, \"Thought\": \"negative\"}\n"
           "{\"Step\": 2.5, \"Thought\": \"float\"}\n");
    char *html = s_render (dir, NULL, NULL);
    REQUIRE (html);
    CHECK_CONTAINS (html, "id=\"step-5\"");
    for (int id = 6; id <= 9; id++) {
        char anchor [32];
        snprintf (anchor, sizeof anchor, "id=\"step-%d\"", id);
        CHECK_CONTAINS (html, anchor);
    }
    CHECK_CONTAINS (html, "4 step(s) in response.log have no usable or a repeated &quot;Step&quot; "
                    "number; they are numbered from 6");
    free (html);
    //  Any integer is a round number; each round shows its steps.
    s_put (dir, "response.log",
           "{\"Step\": 0, \"Round\": 5000, \"Thought\": \"far round\"}\n"
           "{\"Step\": 1, \"Round\": -2, \"Thought\": \"negative round\"}\n"
           "{\"Step\": 2, \"Round\": \"x\", \"Thought\": \"no round\"}\n");
    ufo_report_stats_t stats;
    html = s_render (dir, NULL, &stats);
    REQUIRE (html);
    CHECK_INT (stats.rounds, 3);
    CHECK_CONTAINS (html, "id=\"round-5000\"");
    CHECK_CONTAINS (html, "id=\"round--2\"");
    CHECK_CONTAINS (html, "id=\"round-0\"");
    CHECK_INT (s_count (html, "<details class=\"step "), 3);
    free (html);
    free (dir);
}

//  A long session: steps start closed, rounds open, every step still has its anchor.
UFO_TEST (test_long_session)
{
    char *dir = s_dir ();
    char path [2048];
    snprintf (path, sizeof path, "%s/response.log", dir);
    FILE *file = fopen (path, "w");
    REQUIRE (file);
    for (int i = 0; i < 45; i++)
        fprintf (file, "{\"Step\": %d, \"Round\": %d, \"Agent\": \"AppAgent\", \"Status\": "
                 "\"CONTINUE\"}\n", i, i / 20);
    fclose (file);
    ufo_report_stats_t stats;
    char *html = s_render (dir, NULL, &stats);
    REQUIRE (html);
    CHECK_INT (stats.steps, 45);
    CHECK_INT (stats.rounds, 3);
    CHECK_INT (s_count (html, "<details class=\"step "), 45);
    CHECK_INT (s_count (html, "data-status=\"CONTINUE\" open>"), 0);
    CHECK_INT (s_count (html, "<details class=\"round\" id=\"round-"), 3);
    CHECK_INT (s_count (html, "\" open><summary>Round "), 3);
    CHECK_CONTAINS (html, "id=\"step-44\"");
    free (html);
    free (dir);
}

UFO_TEST (test_escaping)
{
    char *dir = s_dir ();
    s_put (dir, "request.json", "{\"task\": \"</title><script>alert(1)</script>\", "
           "\"requests\": [\"<img src=x onerror=alert(2)>\"]}");
    s_put (dir, "response.log",
           "{\"Step\": 0, \"Round\": 0, \"Agent\": \"AppAgent\", "
           "\"AgentName\": \"AppAgent/x\\\" onmouseover=\\\"alert(3)\", "
           "\"Status\": \"<b>X</b>\", \"Thought\": \"<script>alert(4)</script>\\u0001&amp;\", "
           "\"Function\": \"click_input\", \"Args\": {\"<k>\": \"</code><script>alert(5)</script>\"}, "
           "\"ControlText\": \"a'b\\\"c\", \"Questions\": [\"<i>q</i>\"], \"Answers\": [\"<u>a</u>\"], "
           "\"UserConfirm\": \"<s>no</s>\", \"Weird\": {\"k\": \"<script>alert(6)</script>\"}}\n");
    s_put (dir, "evaluation.log",
           "{\"level\": \"session\", \"complete\": \"<script>alert(7)</script>\", "
           "\"reason\": \"<script>alert(8)</script>\", \"sub_scores\": {\"<b>goal</b>\": \"<i>yes</i>\"}}\n");
    s_put (dir, "blackboard.json",
           "{\"questions\": [{\"question\": \"<script>alert(9)</script>\"}], "
           "\"<evil>\": [\"<script>alert(10)</script>\"], "
           "\"screenshots\": [{\"image_str\": \"data:image/png;base64,AAAA\\\" onerror=\\\"alert(11)\"}]}");
    char *html = s_render (dir, NULL, NULL);
    REQUIRE (html);
    CHECK_INT (s_count (html, "<script"), 1);          //  only the page's own script
    CHECK (!strstr (html, "alert(1)</script>"));
    CHECK (!strstr (html, "<img src=x"));
    CHECK (!strstr (html, "\" onmouseover=\""));
    CHECK (!strstr (html, "\" onerror=\""));
    CHECK (!strstr (html, "<b>"));
    CHECK (!strstr (html, "<i>"));
    CHECK (!strstr (html, "<u>"));
    CHECK (!strstr (html, "<evil>"));
    CHECK (!strstr (html, "\x01"));
    CHECK_CONTAINS (html, "&lt;script&gt;alert(4)&lt;/script&gt;\xEF\xBF\xBD&amp;amp;");
    CHECK_CONTAINS (html, "AppAgent/x&quot; onmouseover=&quot;alert(3)");
    CHECK_CONTAINS (html, "a&#39;b&quot;c");
    CHECK_CONTAINS (html, "class=\"status st-other\"");   //  odd status: no class injection
    CHECK_CONTAINS (html, "the user answered <strong>&lt;s&gt;no&lt;/s&gt;</strong>");
    CHECK_CONTAINS (html, "not a base64 image");
    CHECK_CONTAINS (html, "\xE2\x9D\x93</span> Complete");   //  an unknown verdict counts as unsure
    free (html);
    free (dir);
}

UFO_TEST (test_images)
{
    char *dir = s_dir ();
    s_png (dir, "action_step0_annotated.png", 64, 48);
    s_png (dir, "action_step0_selected_controls.png", 64, 48);
    s_png (dir, "action_step1.png", 30, 20);
    s_png (dir, "desktop_step3.png", 40, 30);
    s_png (dir, "action_round_0_final.png", 20, 10);
    s_put (dir, "action_step2_annotated.png", "not an image at all");
    s_put (dir, "response.log",
           //  named by an absolute path from another machine: its file name is used
           "{\"Step\": 0, \"Agent\": \"AppAgent\", \"AnnotatedScreenshotPath\": "
           "\"/home/someone/logs/t/action_step0_annotated.png\"}\n"
           //  no annotated/selected: falls back to the clean screenshot by its usual name
           "{\"Step\": 1, \"Agent\": \"AppAgent\"}\n"
           //  a fake PNG
           "{\"Step\": 2, \"Agent\": \"AppAgent\"}\n"
           //  pointing outside the directory, and a hidden file: neither is read
           "{\"Step\": 3, \"Agent\": \"HostAgent\", \"ScreenshotPath\": \"../../../../etc/passwd\"}\n"
           "{\"Step\": 4, \"Agent\": \"AppAgent\", \"ScreenshotPath\": \".hidden.png\", "
           "\"AnnotatedScreenshotPath\": \"gone.png\"}\n");
    ufo_report_stats_t stats;
    char *html = s_render (dir, NULL, &stats);
    REQUIRE (html);
    CHECK_INT (stats.images_embedded, 5);      //  2 + 1 + desktop_step3 by its usual name + final
    CHECK_INT (stats.images_missing, 1);       //  step 4
    CHECK_CONTAINS (html, "width=\"64\" height=\"48\" src=\"data:image/png;base64,iVBORw0KGgo");
    CHECK_CONTAINS (html, "width=\"30\" height=\"20\"");
    CHECK_CONTAINS (html, "action_step2_annotated.png is not a PNG or JPEG image");
    CHECK_CONTAINS (html, "The screenshots named in the log are not in the directory.");
    CHECK (!strstr (html, "root:"));
    free (html);

    //  Linked images: beside the page, then from another directory (absolute, encoded).
    ufo_report_options_t opts = { .link_images = true };
    html = s_render (dir, &opts, &stats);
    REQUIRE (html);
    CHECK_INT (stats.images_embedded, 0);
    CHECK_INT (stats.images_linked, 5);
    CHECK_CONTAINS (html, "loading=\"lazy\" src=\"action_step0_annotated.png\"");
    free (html);
    char out [PATH_MAX];
    snprintf (out, sizeof out, "%s/elsewhere dir", s_root);
    mkdir (out, 0755);
    strcat (out, "/r.html");
    ufo_error_t err;
    REQUIRE (ufo_report_write (dir, out, &opts, &err) == 0);
    html = ufo_report_render (dir, "/x%20y/", &opts, NULL, NULL, &err);
    REQUIRE (html);
    CHECK_CONTAINS (html, "src=\"/x%20y/action_step1.png\"");
    free (html);
    //  Too big to embed: linked even when embedding.
    ufo_report_options_t small = { .max_image_bytes = 10 };
    html = s_render (dir, &small, &stats);
    REQUIRE (html);
    CHECK_INT (stats.images_embedded, 0);
    CHECK_INT (stats.images_linked, 5);
    free (html);
    free (dir);
}

UFO_TEST (test_session_evaluation_and_totals)
{
    char *dir = s_dir ();
    s_put (dir, "response.log",
           "{\"Step\": 0, \"Round\": 0, \"Agent\": \"HostAgent\", \"Cost\": 0.5, "
           "\"Tokens\": {\"prompt\": 100, \"completion\": 10}, \"time_cost\": {\"total\": 2.5}}\n"
           "{\"Step\": 1, \"Round\": 0, \"Agent\": \"AppAgent\", \"Cost\": 0.25, "
           "\"Tokens\": {\"prompt\": 200, \"completion\": 20}, \"time_cost\": {\"total\": 1.0}}\n");
    char *html = s_render (dir, NULL, NULL);
    REQUIRE (html);
    CHECK_CONTAINS (html, "$0.7500");
    CHECK_CONTAINS (html, "3.5 s");
    CHECK_CONTAINS (html, "300 <small>prompt</small> + 30 <small>completion</small>");
    CHECK_CONTAINS (html, "summed over the logged steps");
    free (html);
    s_put (dir, "session.json", "{\"status\": \"FAIL\", \"steps\": 2, \"duration_s\": 9.5, "
           "\"cost\": {\"total\": 1.25, \"prompt_tokens\": 7, \"completion_tokens\": 8}, "
           "\"evaluation\": {\"complete\": \"no\", \"reason\": \"did not\", "
           "\"sub_scores\": {\"a\": \"no\", \"b\": \"yes\", \"c\": \"unsure\"}}}");
    html = s_render (dir, NULL, NULL);
    REQUIRE (html);
    CHECK_CONTAINS (html, "$1.2500");
    CHECK_CONTAINS (html, "9.5 s");
    CHECK_CONTAINS (html, "from session.json");
    CHECK_CONTAINS (html, "<span class=\"status st-FAIL\">FAIL</span>");
    CHECK_CONTAINS (html, "(from session.json)");
    CHECK_CONTAINS (html, "\xE2\x9D\x8C</span> Complete");
    CHECK_CONTAINS (html, "<tr class=\"score\"><td class=\"icon\">\xE2\x9C\x85</td><td>b</td>");
    CHECK_CONTAINS (html, "<tr class=\"score\"><td class=\"icon\">\xE2\x9D\x93</td><td>c</td>");
    free (html);
    free (dir);
}

UFO_TEST (test_helpers)
{
    static const char *vectors [][2] = {
        { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
        { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" }
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (vectors); i++) {
        ufo_buf_t buf = {0};
        ufo_buf_base64 (&buf, vectors [i][0], strlen (vectors [i][0]));
        CHECK_STR (buf.data ? buf.data : "", vectors [i][1]);
        ufo_buf_free (&buf);
    }
    ufo_buf_t buf = {0};
    static const char raw [] = "a<b>&\"'\x7f\xff\xc3\xa9\0z\tok\n";
    ufo_report_esc (&buf, raw, sizeof raw - 1);
    CHECK_STR (buf.data, "a&lt;b&gt;&amp;&quot;&#39;\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9\xEF\xBF\xBDz\tok\n");
    ufo_buf_reset (&buf);
    ufo_value_t *long_text = ufo_value_new_string ("\xC3\xA9\xC3\xA9\xC3\xA9");
    ufo_report_esc_value (&buf, long_text, 3);          //  cut inside the second character
    CHECK_STR (buf.data, "\xC3\xA9\xE2\x80\xA6");
    ufo_value_destroy (&long_text);
    ufo_buf_free (&buf);
}

int
main (void)
{
    ufo_log_set_level (UFO_LOG_ERROR);       //  the notes are expected; keep the output short
    const char *tmp = getenv ("TMPDIR");
    snprintf (s_root, sizeof s_root, "%s/ufo-test-report-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (s_root))
        return 1;
    UFO_RUN (test_not_a_directory);
    UFO_RUN (test_empty_directory);
    UFO_RUN (test_broken_lines);
    UFO_RUN (test_step_numbers);
    UFO_RUN (test_long_session);
    UFO_RUN (test_escaping);
    UFO_RUN (test_images);
    UFO_RUN (test_session_evaluation_and_totals);
    UFO_RUN (test_helpers);
    int rc = UFO_TEST_END ();
    char command [PATH_MAX + 16];
    snprintf (command, sizeof command, "rm -rf '%s'", s_root);
    if (system (command) != 0)
        fprintf (stderr, "could not remove %s\n", s_root);
    return rc;
}
