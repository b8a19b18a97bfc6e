/*  ufo_json.h - JSON text <-> ufo_value_t.

    The parser is strict RFC 8259 (plus NaN/Infinity on request), validates UTF-8, keeps
    64-bit integers exact, bounds nesting depth, and never crashes on any input.
    The writer can reproduce Python's json.dumps() byte for byte (UFO_JSON_PY), which is
    what the original UFO puts into prompts; compact and pretty forms also exist. */
#ifndef UFO_JSON_H_INCLUDED
#define UFO_JSON_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct {
    size_t max_depth;       //  nesting limit (default 128)
    size_t max_bytes;       //  input size limit, 0 = no limit
    bool allow_nan;         //  accept NaN, Infinity, -Infinity (Python does; default false)
} ufo_json_limits_t;

//  Output styles.
#define UFO_JSON_COMPACT 0      //  {"a":1,"b":[1,2]} with raw UTF-8
#define UFO_JSON_PY      1      //  {"a": 1, "b": [1, 2]}, non-ASCII as \uXXXX: Python json.dumps()
#define UFO_JSON_PRETTY  2      //  two-space indent, raw UTF-8, for files people read
#define UFO_JSON_ASCII   4      //  flag: escape non-ASCII as \uXXXX (implied by UFO_JSON_PY)

//  Parses text[0..len). Returns a new value owned by the caller, or NULL with err filled in
//  (code, byte offset, message). Trailing whitespace is allowed, trailing garbage is not.
//  limits may be NULL for the defaults. Duplicate keys: the last one wins, in the first one's place.
ufo_value_t *ufo_json_parse (const char *text, size_t len, const ufo_json_limits_t *limits,
                             ufo_error_t *err);

//  Parses a NUL-terminated string with default limits.
ufo_value_t *ufo_json_parse_str (const char *text, ufo_error_t *err);

//  Reads and parses a whole file. NULL with err (UFO_E_IO names the path) on failure.
ufo_value_t *ufo_json_parse_file (const char *path, const ufo_json_limits_t *limits,
                                  ufo_error_t *err);

//  Appends the JSON text of value to buf in the given style. Invalid UTF-8 inside strings
//  is written as U+FFFD. NaN / infinities are written as NaN / Infinity / -Infinity (as Python).
void ufo_json_append (ufo_buf_t *buf, const ufo_value_t *value, int style);

//  Returns the JSON text of value (caller frees); len_p (optional) receives its length.
char *ufo_json_dump (const ufo_value_t *value, int style, size_t *len_p);

//  Appends a JSON string literal (with quotes) for s[0..len) in the given style.
void ufo_json_append_string (ufo_buf_t *buf, const char *s, size_t len, int style);

//  Formats a double the way Python's repr() does ("0.1", "1.0", "1e+16", "NaN").
//  Writes at most 32 bytes including the NUL; returns the length.
int ufo_json_format_double (char *out, double value);

#endif
