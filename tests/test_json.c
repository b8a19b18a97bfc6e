/*  test_json.c - JSON parser and writer: Python-compatible output, exact 64-bit integers,
    every error path, and a differential check against cJSON as an independent parser. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <cjson/cJSON.h>

static char *
s_roundtrip (const char *text, int style)
{
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str (text, &err);
    if (!v) {
        fprintf (stderr, "  parse failed: %s\n", err.message);
        return NULL;
    }
    char *out = ufo_json_dump (v, style, NULL);
    ufo_value_destroy (&v);
    return out;
}

#define CHECK_PY(in, expected) do { \
    char *out_ = s_roundtrip ((in), UFO_JSON_PY); \
    CHECK_STR (out_, (expected)); \
    free (out_); \
} while (0)

UFO_TEST (test_python_style)
{
    //  Expected strings are what CPython's json.dumps(json.loads(in)) prints.
    CHECK_PY ("{\"a\":1,\"b\":[1,2,{}],\"c\":[]}", "{\"a\": 1, \"b\": [1, 2, {}], \"c\": []}");
    CHECK_PY ("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"caf\\u00e9 \\u20ac \\ud83d\\ude00\"");
    CHECK_PY ("\"tab\\t nl\\n cr\\r bs\\b ff\\f q\\\" bsl\\\\ sl\\/ ctl\\u0001 del\x7f\"",
              "\"tab\\t nl\\n cr\\r bs\\b ff\\f q\\\" bsl\\\\ sl/ ctl\\u0001 del\\u007f\"");
    CHECK_PY ("[true, false, null]", "[true, false, null]");
    CHECK_PY ("[9223372036854775807, -9223372036854775808, 0, -0]",
              "[9223372036854775807, -9223372036854775808, 0, 0]");
    CHECK_PY ("[1.0, 0.1, 1e16, 1e15, 0.0001, 0.00001, -0.0, 1.5e-7, 123.456, 1e100, 2.5e+300]",
              "[1.0, 0.1, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, 1.5e-07, 123.456, 1e+100, 2.5e+300]");
    CHECK_PY ("[0.30000000000000004, 3.141592653589793, 1.7976931348623157e308, 5e-324]",
              "[0.30000000000000004, 3.141592653589793, 1.7976931348623157e+308, 5e-324]");
    //  Python keeps integers beyond int64 exact; ufobus documents that they become floats
    CHECK_PY ("[18446744073709551615]", "[1.8446744073709552e+19]");
    CHECK_PY ("{\"k\": 1, \"k\": 2, \"j\": 3}", "{\"k\": 2, \"j\": 3}");  //  last duplicate wins
    CHECK_PY ("\"\\ud83d\\ude00 \\u00e9\"", "\"\\ud83d\\ude00 \\u00e9\"");
    CHECK_PY ("\"lone \\ud800 x\"", "\"lone \\ufffd x\"");
    CHECK_PY ("  {\"a\" : [ 1 , 2 ] }  \n", "{\"a\": [1, 2]}");
}

UFO_TEST (test_other_styles)
{
    char *out = s_roundtrip ("{\"a\": [1, {\"b\": \"\xc3\xa9\"}], \"e\": {}}", UFO_JSON_COMPACT);
    CHECK_STR (out, "{\"a\":[1,{\"b\":\"\xc3\xa9\"}],\"e\":{}}");
    free (out);
    out = s_roundtrip ("{\"a\": [1, {\"b\": \"x\"}], \"e\": []}", UFO_JSON_PRETTY);
    CHECK_STR (out, "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x\"\n    }\n  ],\n  \"e\": []\n}");
    free (out);
    out = s_roundtrip ("\"\xc3\xa9\"", UFO_JSON_COMPACT | UFO_JSON_ASCII);
    CHECK_STR (out, "\"\\u00e9\"");
    free (out);
    //  invalid UTF-8 in a value built by code is written as U+FFFD
    ufo_value_t *v = ufo_value_new_stringn ("a\xff" "b", 3);
    out = ufo_json_dump (v, UFO_JSON_PY, NULL);
    CHECK_STR (out, "\"a\\ufffdb\"");
    free (out);
    out = ufo_json_dump (v, UFO_JSON_COMPACT, NULL);
    CHECK_STR (out, "\"a\xef\xbf\xbd" "b\"");
    free (out);
    ufo_value_destroy (&v);
    v = ufo_value_new_float (NAN);
    out = ufo_json_dump (v, UFO_JSON_PY, NULL);
    CHECK_STR (out, "NaN");
    free (out);
    ufo_value_destroy (&v);
    v = ufo_value_new_float (-INFINITY);
    out = ufo_json_dump (v, UFO_JSON_PY, NULL);
    CHECK_STR (out, "-Infinity");
    free (out);
    ufo_value_destroy (&v);
}

UFO_TEST (test_exact_integers_and_floats)
{
    //  Every int64 edge and a spread of doubles survive text -> value -> text -> value.
    int64_t ints [] = { 0, 1, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, INT32_MAX,
                        (int64_t) INT32_MAX + 1, INT32_MIN, (int64_t) INT32_MIN - 1,
                        9007199254740993LL, INT64_MAX, INT64_MIN };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (ints); i++) {
        ufo_value_t *v = ufo_value_new_int (ints [i]);
        char *text = ufo_json_dump (v, UFO_JSON_PY, NULL);
        ufo_error_t err;
        ufo_value_t *back = ufo_json_parse_str (text, &err);
        CHECK (back && ufo_value_type (back) == UFO_TINT && ufo_value_int (back) == ints [i]);
        free (text);
        ufo_value_destroy (&v);
        ufo_value_destroy (&back);
    }
    uint64_t state = 88172645463325252ULL;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        double d;
        memcpy (&d, &state, 8);
        if (isnan (d) || isinf (d))
            continue;
        char text [40];
        ufo_json_format_double (text, d);
        ufo_error_t err;
        ufo_value_t *back = ufo_json_parse_str (text, &err);
        if (!back || ufo_value_float (back) != d)
            bad++;
        ufo_value_destroy (&back);
    }
    CHECK_INT (bad, 0);
}

UFO_TEST (test_float_repr_and_string_words)
{
    //  repr() of each (from Python 3.11): the fast path (<= 15 digits, 1e-4 <= |x| < 1e15)
    //  and the general one on both sides of its bounds
    static const struct { double d; const char *repr; } cases [] = {
        { 0.1, "0.1" },
        { 0.012345, "0.012345" },
        { 0.0001, "0.0001" },
        { 9.999e-05, "9.999e-05" },
        { 999999999999999.0, "999999999999999.0" },
        { 1000000000000000.0, "1000000000000000.0" },
        { 1e+16, "1e+16" },
        { 0.30000000000000004, "0.30000000000000004" },
        { 123456789012345.6, "123456789012345.6" },
        { -2.5, "-2.5" },
        { 0.3333333333333333, "0.3333333333333333" },
        { 100.0, "100.0" },
        { 5e-324, "5e-324" },
        { 1.7976931348623157e+308, "1.7976931348623157e+308" },
        { 2.5e-05, "2.5e-05" },
        { 0.000123, "0.000123" },
        { -0.07, "-0.07" },
        { 99999.99999, "99999.99999" },
        { 4503599627370497.0, "4503599627370497.0" },
        { 1234567.125, "1234567.125" },
        { 0.3, "0.3" },
        { 9.5367431640625e-07, "9.5367431640625e-07" },
        { 1e+22, "1e+22" },
        { 1e-07, "1e-07" },
        { 12345678901234.5, "12345678901234.5" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        char text [40];
        int n = ufo_json_format_double (text, cases [i].d);
        CHECK_STR (text, cases [i].repr);
        CHECK_INT (n, (int) strlen (cases [i].repr));
        //  and the parser reads each back bit for bit (fast path for short decimals)
        ufo_error_t err;
        ufo_value_t *back = ufo_json_parse_str (cases [i].repr, &err);
        double got = ufo_value_float (back);
        CHECK (back && memcmp (&got, &cases [i].d, sizeof (double)) == 0);
        ufo_value_destroy (&back);
    }
    ufo_error_t perr;
    ufo_value_t *negzero = ufo_json_parse_str ("-0.0", &perr);
    CHECK (negzero && ufo_value_float (negzero) == 0 && signbit (ufo_value_float (negzero)));
    ufo_value_destroy (&negzero);
    ufo_value_t *tiny = ufo_json_parse_str ("0.0000000000000000000001", &perr);
    CHECK (tiny && ufo_value_float (tiny) == 1e-22);
    ufo_value_destroy (&tiny);
    //  one byte to escape at every offset of a 20-byte string (the writer scans words of 8)
    static const struct { const char *in; const char *py; const char *compact; } specials [] = {
        { "\"", "\\\"", "\\\"" },
        { "\\", "\\\\", "\\\\" },
        { "\n", "\\n", "\\n" },
        { "\x01", "\\u0001", "\\u0001" },
        { "\x7f", "\\u007f", "\x7f" },
        { "\xc3\xa9", "\\u00e9", "\xc3\xa9" },
        { "\xf0\x9f\x98\x80", "\\ud83d\\ude00", "\xf0\x9f\x98\x80" },
        { "\xff", "\\ufffd", "\xef\xbf\xbd" },
    };
    for (size_t k = 0; k < UFO_ARRAY_SIZE (specials); k++)
        for (size_t pos = 0; pos < 20; pos++) {
            char in [40], py [64], compact [64];
            snprintf (in, sizeof (in), "%.*s%s%.*s", (int) pos, "aaaaaaaaaaaaaaaaaaaa",
                      specials [k].in, (int) (19 - pos), "bbbbbbbbbbbbbbbbbbbb");
            snprintf (py, sizeof (py), "\"%.*s%s%.*s\"", (int) pos, "aaaaaaaaaaaaaaaaaaaa",
                      specials [k].py, (int) (19 - pos), "bbbbbbbbbbbbbbbbbbbb");
            snprintf (compact, sizeof (compact), "\"%.*s%s%.*s\"", (int) pos,
                      "aaaaaaaaaaaaaaaaaaaa", specials [k].compact, (int) (19 - pos),
                      "bbbbbbbbbbbbbbbbbbbb");
            ufo_buf_t b = {0};
            ufo_json_append_string (&b, in, strlen (in), UFO_JSON_PY);
            CHECK_STR (b.data, py);
            ufo_buf_reset (&b);
            ufo_json_append_string (&b, in, strlen (in), UFO_JSON_COMPACT);
            CHECK_STR (b.data, compact);
            ufo_buf_free (&b);
        }
}

typedef struct {
    const char *text;
    int code;
} s_bad_t;

UFO_TEST (test_errors)
{
    s_bad_t cases [] = {
        { "", UFO_E_TRUNCATED }, { "   ", UFO_E_TRUNCATED }, { "{", UFO_E_TRUNCATED },
        { "[1,", UFO_E_TRUNCATED }, { "[1 2]", UFO_E_SYNTAX }, { "{\"a\" 1}", UFO_E_SYNTAX },
        { "{\"a\":}", UFO_E_SYNTAX }, { "{a:1}", UFO_E_SYNTAX }, { "\"abc", UFO_E_TRUNCATED },
        { "\"a\\x\"", UFO_E_SYNTAX }, { "\"\\u12\"", UFO_E_SYNTAX }, { "\"\\u12", UFO_E_TRUNCATED },
        { "tru", UFO_E_TRUNCATED }, { "trux", UFO_E_SYNTAX }, { "nul", UFO_E_TRUNCATED },
        { "01", UFO_E_SYNTAX }, { "1.", UFO_E_TRUNCATED }, { "1.e5", UFO_E_SYNTAX },
        { "1e", UFO_E_TRUNCATED }, { "-", UFO_E_TRUNCATED }, { "-a", UFO_E_SYNTAX },
        { "+1", UFO_E_SYNTAX }, { "[1] x", UFO_E_SYNTAX }, { "NaN", UFO_E_SYNTAX },
        { "\"a\nb\"", UFO_E_SYNTAX }, { "\"\xff\"", UFO_E_UTF8 }, { "\"\xc0\xaf\"", UFO_E_UTF8 },
        { "\"\xed\xa0\x80\"", UFO_E_UTF8 }, { "\"\xe2\x82", UFO_E_TRUNCATED }, { "[,]", UFO_E_SYNTAX },
        { "{\"a\":1,}", UFO_E_SYNTAX }, { "[1,]", UFO_E_SYNTAX },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_error_t err;
        ufo_value_t *v = ufo_json_parse (cases [i].text, strlen (cases [i].text), NULL, &err);
        if (v || err.code != cases [i].code)
            UFO_FAIL_ ("case %zu (%s): got %s (%s), want %s", i, cases [i].text,
                       v ? "a value" : ufo_errcode_name (err.code), err.message,
                       ufo_errcode_name (cases [i].code));
        ufo_value_destroy (&v);
    }
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse ("[1, 2, x]", 9, NULL, &err);
    CHECK (!v);
    CHECK_INT (err.offset, 7);
    CHECK_CONTAINS (err.message, "byte 7");
    //  NaN only on request
    ufo_json_limits_t limits = { .allow_nan = true };
    v = ufo_json_parse ("[NaN, Infinity, -Infinity]", 26, &limits, &err);
    REQUIRE (v);
    CHECK (isnan (ufo_value_float (ufo_value_list_at (v, 0))));
    CHECK (ufo_value_float (ufo_value_list_at (v, 2)) == -INFINITY);
    ufo_value_destroy (&v);
    //  size limit
    limits.max_bytes = 4;
    v = ufo_json_parse ("[1, 2]", 6, &limits, &err);
    CHECK (!v && err.code == UFO_E_TOO_LARGE);
    //  a missing file names the path
    v = ufo_json_parse_file ("/nonexistent/ufo.json", NULL, &err);
    CHECK (!v && err.code == UFO_E_IO);
    CHECK_CONTAINS (err.message, "/nonexistent/ufo.json");
}

UFO_TEST (test_depth_limit)
{
    //  Deep nesting is refused with a clear code, never a stack overflow.
    size_t n = 100000;
    char *deep = (char *) malloc (2 * n + 1);
    memset (deep, '[', n);
    memset (deep + n, ']', n);
    deep [2 * n] = 0;
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse (deep, 2 * n, NULL, &err);
    CHECK (!v && err.code == UFO_E_TOO_DEEP);
    ufo_json_limits_t limits = { .max_depth = 200000 };
    //  within the default limit it parses
    v = ufo_json_parse (deep + n - 100, 200, &limits, &err);
    CHECK (v != NULL);
    ufo_value_destroy (&v);
    free (deep);
}

UFO_TEST (test_truncation_everywhere)
{
    //  Every proper prefix of a valid document is an error, never a crash or a value.
    const char *doc = "{\"Step\": 3, \"Subtask\": \"caf\xc3\xa9 \\u00e9\", \"Args\": {\"x\": [1.5, -2, true, null]}}";
    size_t len = strlen (doc);
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        ufo_error_t err;
        ufo_value_t *v = ufo_json_parse (doc, cut, NULL, &err);
        if (v)
            accepted++;
        else
        if (err.code != UFO_E_TRUNCATED && err.code != UFO_E_SYNTAX)
            UFO_FAIL_ ("cut at %zu gave %s", cut, ufo_errcode_name (err.code));
        ufo_value_destroy (&v);
    }
    CHECK_INT (accepted, 0);
}

//  cJSON as an independent oracle: on documents without duplicate keys or big integers,
//  both parsers accept or reject together and agree on the structure.
static bool
s_same_as_cjson (const ufo_value_t *v, const cJSON *c)
{
    switch (ufo_value_type (v)) {
        case UFO_TNULL: return cJSON_IsNull (c);
        case UFO_TBOOL: return cJSON_IsBool (c) && (cJSON_IsTrue (c) == ufo_value_bool (v));
        case UFO_TINT:
        case UFO_TFLOAT: return cJSON_IsNumber (c) && c->valuedouble == ufo_value_float (v);
        case UFO_TSTRING: return cJSON_IsString (c) && strcmp (c->valuestring, ufo_value_str (v)) == 0;
        case UFO_TLIST: {
            if (!cJSON_IsArray (c) || (size_t) cJSON_GetArraySize (c) != ufo_value_size (v))
                return false;
            size_t i = 0;
            for (cJSON *e = c->child; e; e = e->next, i++)
                if (!s_same_as_cjson (ufo_value_list_at (v, i), e))
                    return false;
            return true;
        }
        case UFO_TMAP: {
            if (!cJSON_IsObject (c) || (size_t) cJSON_GetArraySize (c) != ufo_value_size (v))
                return false;
            size_t i = 0;
            for (cJSON *e = c->child; e; e = e->next, i++)
                if (strcmp (e->string, ufo_value_map_key_at (v, i)) != 0
                ||  !s_same_as_cjson (ufo_value_map_value_at (v, i), e))
                    return false;
            return true;
        }
    }
    return false;
}

UFO_TEST (test_agrees_with_cjson)
{
    const char *docs [] = {
        "{\"Observation\": \"The window shows a text editor.\", \"Thought\": \"type\", "
        "\"ControlLabel\": \"12\", \"Function\": \"set_edit_text\", \"Args\": {\"text\": \"hi\\n\"}, "
        "\"Status\": \"CONTINUE\", \"Plan\": [\"a\", \"b\"], \"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}}",
        "[1, 2.5, -3e2, \"\\u00e9\\ud83d\\ude00\", [], {}, [[[]]], true, false, null]",
        "{\"a\": {\"b\": {\"c\": {\"d\": [0.1, 0.2, 0.30000000000000004]}}}}",
        "\"just a string with \\\"quotes\\\"\"", "12345", "-0.5e-3",
        "[1,", "{\"a\":1,}", "\"\\x\"", "{\"a\" 1}", "[\"\\u00\"]",
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (docs); i++) {
        ufo_error_t err;
        ufo_value_t *v = ufo_json_parse_str (docs [i], &err);
        cJSON *c = cJSON_ParseWithOpts (docs [i], NULL, 1);
        if (!v != !c)
            UFO_FAIL_ ("doc %zu: ufo %s, cJSON %s", i, v ? "accepts" : "rejects", c ? "accepts" : "rejects");
        else
        if (v && !s_same_as_cjson (v, c))
            UFO_FAIL_ ("doc %zu: structures differ", i);
        ufo_value_destroy (&v);
        cJSON_Delete (c);
    }
}


//  Keys are written from the map entry as they are when they need no escaping (a flag set
//  when the key is stored); every other key goes through the escaping writer.
UFO_TEST (test_keys_plain_and_escaped)
{
    const char *keys [] = {
        "plain", "quo\"te", "back\\slash", "caf\xC3\xA9", "ctl\x01", "del\x7F",
        "aaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbb", "", " ~"
    };
    ufo_value_t *m = ufo_value_new_map ();
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++)
        ufo_value_map_set_int (m, keys [i], (int64_t) i);
    const char *py = "{\"plain\": 0, \"quo\\\"te\": 1, \"back\\\\slash\": 2, \"caf\\u00e9\": 3,"
                     " \"ctl\\u0001\": 4, \"del\\u007f\": 5, \"aaaaaaaaaaaaaaaaaaaaaaa\": 6,"
                     " \"bbbbbbbbbbbbbbbbbbbbbbbb\": 7, \"\": 8, \" ~\": 9}";
    char *text = ufo_json_dump (m, UFO_JSON_PY, NULL);
    CHECK_STR (text, py);
    ufo_error_t err;
    //  the same through the parser's entries and through a copy's
    ufo_value_t *back = ufo_json_parse_str (text, &err);
    REQUIRE (back);
    ufo_value_t *copy = ufo_value_dup (back);
    char *again = ufo_json_dump (back, UFO_JSON_PY, NULL);
    CHECK_STR (again, py);
    free (again);
    again = ufo_json_dump (copy, UFO_JSON_PY, NULL);
    CHECK_STR (again, py);
    free (again);
    again = ufo_json_dump (copy, UFO_JSON_COMPACT, NULL);
    CHECK_STR (again, "{\"plain\":0,\"quo\\\"te\":1,\"back\\\\slash\":2,\"caf\xC3\xA9\":3,"
                      "\"ctl\\u0001\":4,\"del\x7F\":5,\"aaaaaaaaaaaaaaaaaaaaaaa\":6,"
                      "\"bbbbbbbbbbbbbbbbbbbbbbbb\":7,\"\":8,\" ~\":9}");
    free (again);
    free (text);
    ufo_value_destroy (&copy);
    ufo_value_destroy (&back);
    ufo_value_destroy (&m);

    //  every inline key length, with one byte that needs escaping at every position (or
    //  none): the map writes the key exactly as the string writer does
    const unsigned char specials [] = { 0, 0x01, 0x1F, '"', '\\', 0x7F, 0x80, 0xE9, 0xFF, 'x' };
    for (size_t len = 1; len < UFO_VALUE_KEY_INLINE; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof (specials); k++) {
                char key [UFO_VALUE_KEY_INLINE];
                memset (key, 'a', sizeof (key));
                key [at] = (char) specials [k];
                for (int style = 0; style < 2; style++) {
                    ufo_value_t *map = ufo_value_new_map ();
                    ufo_value_t *one = ufo_value_new_int (1);
                    ufo_value_map_setn (map, key, len, &one);
                    ufo_buf_t want = {0};
                    ufo_buf_putc (&want, '{');
                    ufo_json_append_string (&want, key, len, style);
                    ufo_buf_puts (&want, style == UFO_JSON_PY ? ": 1}" : ":1}");
                    char *got = ufo_json_dump (map, style, NULL);
                    CHECK_STR (got, want.data);
                    free (got);
                    //  the same key read by the parser from either style's text
                    if (specials [k] < 0x80) {
                        ufo_value_t *parsed = ufo_json_parse (want.data, want.len, NULL, &err);
                        REQUIRE (parsed);
                        for (int out = 0; out < 2; out++) {
                            ufo_buf_t expect = {0};
                            ufo_buf_putc (&expect, '{');
                            ufo_json_append_string (&expect, key, len, out);
                            ufo_buf_puts (&expect, out == UFO_JSON_PY ? ": 1}" : ":1}");
                            got = ufo_json_dump (parsed, out, NULL);
                            CHECK_STR (got, expect.data);
                            free (got);
                            ufo_buf_free (&expect);
                        }
                        ufo_value_destroy (&parsed);
                    }
                    ufo_buf_free (&want);
                    ufo_value_destroy (&map);
                }
            }
    //  keys with a multi-byte character at every position, through the parser
    for (size_t len = 2; len < UFO_VALUE_KEY_INLINE; len++)
        for (size_t at = 0; at + 2 <= len; at++) {
            char key [UFO_VALUE_KEY_INLINE];
            memset (key, 'b', sizeof (key));
            key [at] = (char) 0xC3;
            key [at + 1] = (char) 0xA9;
            ufo_buf_t doc = {0}, expect = {0};
            ufo_buf_putc (&doc, '{');
            ufo_json_append_string (&doc, key, len, UFO_JSON_COMPACT);
            ufo_buf_puts (&doc, ":1}");
            ufo_buf_putc (&expect, '{');
            ufo_json_append_string (&expect, key, len, UFO_JSON_PY);
            ufo_buf_puts (&expect, ": 1}");
            ufo_value_t *parsed = ufo_json_parse (doc.data, doc.len, NULL, &err);
            REQUIRE (parsed);
            char *got = ufo_json_dump (parsed, UFO_JSON_PY, NULL);
            CHECK_STR (got, expect.data);
            free (got);
            ufo_value_destroy (&parsed);
            ufo_buf_free (&doc);
            ufo_buf_free (&expect);
        }
}

int
main (void)
{
    UFO_RUN (test_python_style);
    UFO_RUN (test_other_styles);
    UFO_RUN (test_exact_integers_and_floats);
    UFO_RUN (test_float_repr_and_string_words);
    UFO_RUN (test_errors);
    UFO_RUN (test_depth_limit);
    UFO_RUN (test_truncation_everywhere);
    UFO_RUN (test_agrees_with_cjson);
    UFO_RUN (test_keys_plain_and_escaped);
    return UFO_TEST_END ();
}
