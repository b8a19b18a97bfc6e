/*  test_tasklog.c - the session log directory: JSON lines, atomic files, redaction,
    concurrent appends from several processes. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <sys/wait.h>

static char s_root [256];

static void
s_make_root (void)
{
    snprintf (s_root, sizeof (s_root), "/tmp/ufo-tasklog-XXXXXX");
    if (!mkdtemp (s_root))
        abort ();
}

UFO_TEST (test_open_and_names)
{
    ufo_error_t err;
    CHECK (ufo_tasklog_open (s_root, "../escape", &err) == NULL);
    CHECK_INT (err.code, UFO_E_INVALID);
    CHECK (ufo_tasklog_open (s_root, "..", &err) == NULL);
    CHECK (ufo_tasklog_open (s_root, "", &err) == NULL);
    CHECK (ufo_tasklog_open ("/proc/definitely/not", "t", &err) == NULL);
    CHECK_INT (err.code, UFO_E_IO);
    char nested [512];
    snprintf (nested, sizeof (nested), "%s/a/b/c", s_root);
    ufo_tasklog_t *log = ufo_tasklog_open (nested, "task1", &err);
    REQUIRE (log);
    CHECK_CONTAINS (ufo_tasklog_dir (log), "/a/b/c/task1");
    char path [4096];
    ufo_tasklog_path (log, "ui_trees/ui_tree_step1.json", path, sizeof (path));
    CHECK (ufo_tasklog_write_file (log, "ui_trees/ui_tree_step1.json", "{}", 2, &err) == 0);
    struct stat st;
    CHECK (stat (path, &st) == 0 && st.st_size == 2);
    CHECK (ufo_tasklog_append (log, "../x.log", NULL, &err) == -1);
    ufo_tasklog_destroy (&log);
    ufo_tasklog_destroy (&log);
}

UFO_TEST (test_lines_and_redaction)
{
    ufo_error_t err;
    ufo_tasklog_t *log = ufo_tasklog_open (s_root, "redact", &err);
    REQUIRE (log);
    ufo_tasklog_add_secret (log, "sk-TESTKEY-123456");
    ufo_tasklog_add_secret (log, "ab");         //  too short: ignored
    ufo_value_t *rec = ufo_json_parse_str (
        "{\"Step\": 1, \"Thought\": \"my key is sk-TESTKEY-123456, twice sk-TESTKEY-123456\", "
        "\"headers\": {\"Authorization\": \"Bearer xyz\", \"api_key\": \"zzz\"}, "
        "\"list\": [\"sk-TESTKEY-123456\", 5], \"about\": \"abc\"}", &err);
    REQUIRE (rec);
    CHECK (ufo_tasklog_append (log, "response.log", rec, &err) == 0);
    CHECK (ufo_tasklog_append (log, "response.log", rec, &err) == 0);
    ufo_value_destroy (&rec);
    //  a bad line between good ones is skipped on reading
    char path [4096];
    ufo_tasklog_path (log, "response.log", path, sizeof (path));
    FILE *f = fopen (path, "a");
    fputs ("{not json\n", f);
    fclose (f);
    rec = ufo_value_new_map ();
    ufo_value_map_set_int (rec, "Step", 2);
    ufo_tasklog_append (log, "response.log", rec, &err);
    ufo_value_destroy (&rec);
    ufo_value_t *lines = ufo_tasklog_read_lines (log, "response.log");
    CHECK_INT (ufo_value_size (lines), 3);
    ufo_value_t *first = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (first, "Thought", NULL), "my key is ***, twice ***");
    CHECK_STR (ufo_value_str (ufo_value_path (first, "headers.Authorization")), "***");
    CHECK_STR (ufo_value_str (ufo_value_path (first, "headers.api_key")), "***");
    CHECK_STR (ufo_value_str (ufo_value_path (first, "list.0")), "***");
    CHECK_STR (ufo_value_map_str (first, "about", NULL), "abc");
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (lines, 2), "Step", 0), 2);
    ufo_value_destroy (&lines);
    //  the raw file never holds the key
    f = fopen (path, "r");
    char content [4096] = {0};
    size_t n = fread (content, 1, sizeof (content) - 1, f);
    fclose (f);
    CHECK (n > 0);
    CHECK (strstr (content, "sk-TESTKEY") == NULL);
    //  a missing file reads as empty
    lines = ufo_tasklog_read_lines (log, "evaluation.log");
    CHECK_INT (ufo_value_size (lines), 0);
    ufo_value_destroy (&lines);
    //  whole documents, atomically
    ufo_value_t *doc = ufo_json_parse_str ("{\"status\": \"FINISH\", \"api_key\": \"sk-TESTKEY-123456\"}", &err);
    CHECK (ufo_tasklog_write_json (log, "session.json", doc, &err) == 0);
    ufo_value_destroy (&doc);
    ufo_tasklog_path (log, "session.json", path, sizeof (path));
    doc = ufo_json_parse_file (path, NULL, &err);
    CHECK_STR (ufo_value_map_str (doc, "status", NULL), "FINISH");
    CHECK_STR (ufo_value_map_str (doc, "api_key", NULL), "***");
    ufo_value_destroy (&doc);
    ufo_tasklog_destroy (&log);
}

UFO_TEST (test_concurrent_appends)
{
    //  Four processes append 500 records each, with long lines; every line stays whole.
    ufo_error_t err;
    ufo_tasklog_t *log = ufo_tasklog_open (s_root, "concurrent", &err);
    REQUIRE (log);
    char filler [3000];
    memset (filler, 'x', sizeof (filler) - 1);
    filler [sizeof (filler) - 1] = 0;
    pid_t kids [4];
    for (int k = 0; k < 4; k++) {
        kids [k] = fork ();
        if (kids [k] == 0) {
            for (int i = 0; i < 500; i++) {
                ufo_value_t *rec = ufo_value_new_map ();
                ufo_value_map_set_int (rec, "writer", k);
                ufo_value_map_set_int (rec, "i", i);
                ufo_value_map_set_str (rec, "filler", filler);
                ufo_tasklog_append (log, "response.log", rec, NULL);
                ufo_value_destroy (&rec);
            }
            _exit (0);
        }
    }
    for (int k = 0; k < 4; k++)
        waitpid (kids [k], NULL, 0);
    ufo_value_t *lines = ufo_tasklog_read_lines (log, "response.log");
    CHECK_INT (ufo_value_size (lines), 2000);
    int per_writer [4] = {0};
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        int64_t w = ufo_value_map_int (ufo_value_list_at (lines, i), "writer", -1);
        if (w >= 0 && w < 4)
            per_writer [w]++;
    }
    for (int k = 0; k < 4; k++)
        CHECK_INT (per_writer [k], 500);
    ufo_value_destroy (&lines);
    ufo_tasklog_destroy (&log);
}

UFO_TEST (test_root_safe)
{
    CHECK (ufo_tasklog_root_safe ("logs"));
    CHECK (ufo_tasklog_root_safe ("/var/log/ufo"));
    CHECK (ufo_tasklog_root_safe ("logs/..x/a..b"));
    CHECK (!ufo_tasklog_root_safe (NULL));
    CHECK (!ufo_tasklog_root_safe (""));
    CHECK (!ufo_tasklog_root_safe (".."));
    CHECK (!ufo_tasklog_root_safe ("/tmp/../etc"));
    CHECK (!ufo_tasklog_root_safe ("logs/.."));
    char longer [1100];
    memset (longer, 'a', sizeof longer - 1);
    longer [sizeof longer - 1] = 0;
    CHECK (!ufo_tasklog_root_safe (longer));
}

int
main (void)
{
    s_make_root ();
    UFO_RUN (test_open_and_names);
    UFO_RUN (test_lines_and_redaction);
    UFO_RUN (test_concurrent_appends);
    UFO_RUN (test_root_safe);
    char cmd [300];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", s_root);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_root);
    return UFO_TEST_END ();
}
