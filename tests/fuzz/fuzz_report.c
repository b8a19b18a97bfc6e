/*  fuzz_report.c - libFuzzer target for the session report (ufo_report_render).
    The input is cut at 0x1E bytes into up to five files of a log directory: response.log,
    evaluation.log, request.json, session.json, blackboard.json (absent when the input has
    fewer parts). Any input: no crash, no leak, a page is always rendered. Oracles: the page
    is valid UTF-8, starts with the doctype, ends with </html>, and holds exactly one
    <script element (its own): no text from the logs ever becomes markup. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_report.h"
#include "ufo_utf8.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

//  Not assert(): fuzz builds may define NDEBUG, and these checks must always run.
#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_report: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

static char s_dir [64];

//  Removes the log directory when the fuzzer exits.
static void
s_cleanup (void)
{
    static const char *names [] = {
        "response.log", "evaluation.log", "request.json", "session.json", "blackboard.json"
    };
    char path [128];
    for (size_t f = 0; f < UFO_ARRAY_SIZE (names); f++) {
        snprintf (path, sizeof path, "%s/%s", s_dir, names [f]);
        unlink (path);
    }
    rmdir (s_dir);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static const char *names [] = {
        "response.log", "evaluation.log", "request.json", "session.json", "blackboard.json"
    };
    ufo_log_set_level (UFO_LOG_OFF);
    if (!s_dir [0]) {
        snprintf (s_dir, sizeof s_dir, "/tmp/ufo-fuzz-report-XXXXXX");
        FUZZ_REQUIRE (mkdtemp (s_dir));
        atexit (s_cleanup);
    }
    size_t start = 0;
    for (size_t f = 0; f < UFO_ARRAY_SIZE (names); f++) {
        bool present = start <= size;
        const uint8_t *cut = present ? memchr (data + start, 0x1E, size - start) : NULL;
        size_t end = cut ? (size_t) (cut - data) : size;
        fuzz_put_file (s_dir, names [f], data + start, present ? end - start : 0, present);
        start = cut ? end + 1 : size + 1;
    }
    size_t len;
    ufo_report_stats_t stats;
    ufo_error_t err;
    char *html = ufo_report_render (s_dir, NULL, NULL, &len, &stats, &err);
    FUZZ_REQUIRE (html);
    FUZZ_REQUIRE (len == strlen (html) && stats.bytes == len);
    FUZZ_REQUIRE (ufo_utf8_valid (html, len));
    FUZZ_REQUIRE (strncmp (html, "<!DOCTYPE html>", 15) == 0);
    FUZZ_REQUIRE (len > 8 && strcmp (html + len - 8, "</html>\n") == 0);
    size_t scripts = 0;
    for (const char *p = html; (p = strstr (p, "<script")); p++)
        scripts++;
    FUZZ_REQUIRE (scripts == 1);
    free (html);
    return 0;
}
