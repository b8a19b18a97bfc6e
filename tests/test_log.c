/*  test_log.c - logging: levels, names, JSON lines. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_test.h"

static char *
s_capture (bool json, ufo_log_level_t level, const char *text)
{
    char *out = NULL;
    size_t size = 0;
    FILE *stream = open_memstream (&out, &size);
    ufo_log_set_stream (stream);
    ufo_log_set_json (json);
    ufo_log (level, "%s", text);
    ufo_log_set_stream (NULL);
    fclose (stream);
    return out;
}

UFO_TEST (test_levels)
{
    ufo_log_set_name ("tester");
    ufo_log_set_level (UFO_LOG_WARN);
    char *line = s_capture (false, UFO_LOG_INFO, "hidden");
    CHECK_STR (line, "");
    free (line);
    line = s_capture (false, UFO_LOG_ERROR, "shown");
    CHECK_CONTAINS (line, "tester[");
    CHECK_CONTAINS (line, "] error: shown\n");
    free (line);
    CHECK_INT (ufo_log_level_parse ("DEBUG"), UFO_LOG_DEBUG);
    CHECK_INT (ufo_log_level_parse ("warning"), UFO_LOG_WARN);
    CHECK_INT (ufo_log_level_parse ("loud"), -1);
    CHECK_INT (ufo_log_level_parse (NULL), -1);
}

UFO_TEST (test_json_lines)
{
    ufo_log_set_name ("json\"proc");
    ufo_log_set_level (UFO_LOG_TRACE);
    char *line = s_capture (true, UFO_LOG_WARN, "quote \" and newline \n and é");
    ufo_error_t err;
    size_t len = strlen (line);
    REQUIRE (len > 0 && line [len - 1] == '\n');
    ufo_value_t *v = ufo_json_parse (line, len, NULL, &err);
    REQUIRE (v);
    CHECK_STR (ufo_value_map_str (v, "level", NULL), "warn");
    CHECK_STR (ufo_value_map_str (v, "proc", NULL), "json\"proc");
    CHECK_STR (ufo_value_map_str (v, "msg", NULL), "quote \" and newline \n and é");
    CHECK_INT (ufo_value_map_int (v, "pid", 0), getpid ());
    CHECK (ufo_value_map_str (v, "ts", NULL) != NULL);
    ufo_value_destroy (&v);
    free (line);
    ufo_log_set_json (false);
}

int
main (void)
{
    UFO_RUN (test_levels);
    UFO_RUN (test_json_lines);
    return UFO_TEST_END ();
}
