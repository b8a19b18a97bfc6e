/*  ufo_log.h - logging: levels, process name and pid, to stderr; optional JSON lines. */
#ifndef UFO_LOG_H_INCLUDED
#define UFO_LOG_H_INCLUDED

#include <stdbool.h>
#include <stdio.h>

typedef enum {
    UFO_LOG_TRACE = 0,
    UFO_LOG_DEBUG = 1,
    UFO_LOG_INFO = 2,
    UFO_LOG_WARN = 3,
    UFO_LOG_ERROR = 4,
    UFO_LOG_OFF = 5
} ufo_log_level_t;

//  Sets the process name shown on every line (default "ufo"). Copies the string.
void ufo_log_set_name (const char *name);

//  Sets the lowest level that is written (default INFO, or UFO_LOG_LEVEL from the environment).
void ufo_log_set_level (ufo_log_level_t level);
ufo_log_level_t ufo_log_level (void);

//  Parses "trace", "debug", "info", "warn", "error", "off" (case-insensitive).
//  Returns the level, or -1 if the text is not a level name.
int ufo_log_level_parse (const char *text);

//  Switches between human-readable lines and JSON lines ({"ts","level","proc","pid","msg"}).
//  Default: human; UFO_LOG_JSON=1 in the environment turns JSON on.
void ufo_log_set_json (bool json);

//  Redirects output to a stream (default stderr). The caller keeps ownership of the stream.
//  Passing NULL restores stderr.
void ufo_log_set_stream (FILE *stream);

//  Writes one log line if `level` is enabled. Thread-safe; one write() per line.
void ufo_log (ufo_log_level_t level, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

#define ufo_trace(...) ufo_log (UFO_LOG_TRACE, __VA_ARGS__)
#define ufo_debug(...) ufo_log (UFO_LOG_DEBUG, __VA_ARGS__)
#define ufo_info(...)  ufo_log (UFO_LOG_INFO, __VA_ARGS__)
#define ufo_warn(...)  ufo_log (UFO_LOG_WARN, __VA_ARGS__)
#define ufo_error(...) ufo_log (UFO_LOG_ERROR, __VA_ARGS__)

#endif
