/*  test_msg.c - the message envelope: round trips and every decoding error path. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msg.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "ufo_bb_proto.h"

#define UFO_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

//  A valid-looking envelope as a value list, so tests can break one field at a time.
static ufo_value_t *
s_fields (void)
{
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_list_push_int (list, 1);
    ufo_value_list_push_str (list, "board.add");
    ufo_value_list_push_str (list, "0123456789abcdef0123456789abcdef");
    ufo_value_list_push_str (list, "host_agent");
    ufo_value_list_push_str (list, "session-1");
    ufo_value_list_push_int (list, 1700000000000000);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "text", "hello");
    ufo_value_list_push (list, &body);
    return list;
}

//  Replaces element index of list with *value_p.
static void
s_replace (ufo_value_t *list, size_t index, ufo_value_t *value)
{
    ufo_value_t *rebuilt = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (list); i++) {
        ufo_value_t *item = i == index ? value : ufo_value_dup (ufo_value_list_at (list, i));
        ufo_value_list_push (rebuilt, &item);
    }
    ufo_value_clear (list);
    for (size_t i = 0; i < ufo_value_size (rebuilt); i++) {
        ufo_value_t *item = ufo_value_dup (ufo_value_list_at (rebuilt, i));
        ufo_value_list_push (list, &item);
    }
    ufo_value_destroy (&rebuilt);
}

//  Encodes a value with the generic msgpack writer and decodes it as an envelope;
//  returns the error code (UFO_OK if it decoded).
static int
s_decode_value (const ufo_value_t *value, const ufo_msg_limits_t *limits, ufo_error_t *err)
{
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, value);
    ufo_msg_t *msg = ufo_msg_decode (buf.data, buf.len, limits, err);
    int code = msg ? UFO_OK : err->code;
    if (msg)
        CHECK_INT (err->code, UFO_OK);
    ufo_msg_destroy (&msg);
    ufo_buf_free (&buf);
    return code;
}

static int
s_decode_bytes (const char *data, size_t len, ufo_error_t *err)
{
    ufo_msg_t *msg = ufo_msg_decode (data, len, NULL, err);
    int code = msg ? UFO_OK : err->code;
    ufo_msg_destroy (&msg);
    return code;
}

static ufo_msg_t *
s_sample (void)
{
    ufo_msg_t *msg = ufo_msg_new ("board.add");
    ufo_msg_set_sender (msg, "host_agent");
    ufo_msg_set_session (msg, "s-\xc3\xa9t\xc3\xa9");
    ufo_error_t err;
    ufo_value_t *body = ufo_json_parse_str (
        "{\"memory\":\"trajectories\",\"item\":{\"Step\":3,\"Subtask\":\"\\u6587\\u4ef6\","
        "\"big\":9223372036854775807,\"small\":-9223372036854775808,\"f\":0.1,"
        "\"list\":[null,true,false,[],{}],\"nested\":{\"a\":{\"b\":[1,2,3]}}}}", &err);
    if (!body) {
        UFO_FAIL_ ("sample body does not parse: %s", err.message);
        return msg;
    }
    ufo_msg_set_body (msg, &body);
    CHECK (body == NULL);
    return msg;
}

UFO_TEST (test_round_trip)
{
    ufo_msg_t *msg = s_sample ();
    REQUIRE (msg);
    CHECK_STR (ufo_msg_type (msg), "board.add");
    CHECK_INT (strlen (ufo_msg_id (msg)), 32);
    int64_t now = ufo_time_now_us ();
    CHECK (ufo_msg_timestamp (msg) <= now && ufo_msg_timestamp (msg) > now - 60000000);

    ufo_buf_t buf = {0};
    ufo_msg_encode (msg, &buf);
    ufo_error_t err;
    ufo_msg_t *copy = ufo_msg_decode (buf.data, buf.len, NULL, &err);
    REQUIRE (copy);
    CHECK_INT (err.code, UFO_OK);
    CHECK_STR (ufo_msg_type (copy), ufo_msg_type (msg));
    CHECK_STR (ufo_msg_id (copy), ufo_msg_id (msg));
    CHECK_STR (ufo_msg_sender (copy), "host_agent");
    CHECK_STR (ufo_msg_session (copy), "s-\xc3\xa9t\xc3\xa9");
    CHECK_INT (ufo_msg_timestamp (copy), ufo_msg_timestamp (msg));
    CHECK (ufo_value_equal (ufo_msg_body (copy), ufo_msg_body (msg)));
    CHECK_INT (ufo_value_map_int (ufo_value_path (ufo_msg_body (copy), "item"), "big", 0),
               INT64_MAX);

    //  Re-encoding gives the same bytes.
    ufo_buf_t again = {0};
    ufo_msg_encode (copy, &again);
    CHECK_INT (again.len, buf.len);
    CHECK (memcmp (again.data, buf.data, buf.len) == 0);

    //  take_body leaves a null body; set_body with NULL gives a null body too.
    ufo_value_t *body = ufo_msg_take_body (copy);
    CHECK (ufo_value_type (body) == UFO_TMAP);
    CHECK (ufo_value_type (ufo_msg_body (copy)) == UFO_TNULL);
    ufo_value_destroy (&body);
    ufo_value_t *none = NULL;
    ufo_msg_set_body (copy, &none);
    CHECK (ufo_value_type (ufo_msg_body (copy)) == UFO_TNULL);

    //  Negative and zero timestamps and a scalar body survive too.
    ufo_msg_set_timestamp (copy, -5);
    ufo_buf_reset (&again);
    ufo_msg_encode (copy, &again);
    ufo_msg_t *third = ufo_msg_decode (again.data, again.len, NULL, &err);
    REQUIRE (third);
    CHECK_INT (ufo_msg_timestamp (third), -5);
    CHECK (ufo_value_type (ufo_msg_body (third)) == UFO_TNULL);

    ufo_msg_destroy (&third);
    ufo_msg_destroy (&copy);
    ufo_msg_destroy (&msg);
    ufo_msg_destroy (&msg);             //  safe twice
    ufo_msg_destroy (NULL);
    ufo_buf_free (&again);
    ufo_buf_free (&buf);
}

//  The exact bytes of a known envelope (the example in docs/PROTOCOL.md).
UFO_TEST (test_golden_bytes)
{
    ufo_msg_t *msg = ufo_msg_new ("ping");
    REQUIRE (msg);
    ufo_msg_set_id (msg, "0123456789abcdef0123456789abcdef");
    ufo_msg_set_sender (msg, "host_agent");
    ufo_msg_set_session (msg, "s1");
    ufo_msg_set_timestamp (msg, 1700000000000000);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "n", 1);
    ufo_msg_set_body (msg, &body);
    ufo_buf_t buf = {0};
    ufo_msg_encode (msg, &buf);
    ufo_buf_t hex = {0};
    for (size_t i = 0; i < buf.len; i++)
        ufo_buf_printf (&hex, "%02x", (unsigned char) buf.data [i]);
    CHECK_STR (hex.data,
        "97" "01" "a470696e67"
        "d920" "3031323334353637383961626364656630313233343536373839616263646566"
        "aa686f73745f6167656e74" "a27331" "cf00060a24181e4000" "81a16e01");
    ufo_buf_free (&hex);
    ufo_buf_free (&buf);
    ufo_msg_destroy (&msg);
}

UFO_TEST (test_new_and_setters)
{
    CHECK (ufo_msg_new (NULL) == NULL);
    CHECK (ufo_msg_new ("") == NULL);
    CHECK (ufo_msg_new ("has space") == NULL);
    CHECK (ufo_msg_new ("tab\t") == NULL);
    CHECK (ufo_msg_new ("caf\xc3\xa9") == NULL);
    char long_type [66];
    memset (long_type, 'x', 65);
    long_type [65] = 0;
    CHECK (ufo_msg_new (long_type) == NULL);
    long_type [64] = 0;
    ufo_msg_t *msg = ufo_msg_new (long_type);
    REQUIRE (msg);
    CHECK_INT (strlen (ufo_msg_type (msg)), 64);

    //  Ids: 32 lowercase hex characters, different every time.
    char a [33], b [33];
    ufo_msg_new_id (a);
    ufo_msg_new_id (b);
    CHECK_INT (strlen (a), 32);
    CHECK (strspn (a, "0123456789abcdef") == 32);
    CHECK (strcmp (a, b) != 0);
    CHECK (strcmp (ufo_msg_id (msg), a) != 0);

    //  Long values are cut at a character boundary; invalid UTF-8 becomes '?'.
    char sender [200];
    memset (sender, 'a', 127);
    strcpy (sender + 127, "\xc3\xa9zzz");
    ufo_msg_set_sender (msg, sender);
    CHECK_INT (strlen (ufo_msg_sender (msg)), 127);
    ufo_msg_set_session (msg, "ok\xff\xc3(");
    CHECK_STR (ufo_msg_session (msg), "ok?" "?(");
    ufo_msg_set_id (msg, NULL);
    CHECK_STR (ufo_msg_id (msg), "");
    char id [100];
    memset (id, '1', 99);
    id [99] = 0;
    ufo_msg_set_id (msg, id);
    CHECK_INT (strlen (ufo_msg_id (msg)), 64);

    //  Whatever the setters stored encodes into a frame that decodes.
    ufo_buf_t buf = {0};
    ufo_msg_encode (msg, &buf);
    ufo_error_t err;
    ufo_msg_t *copy = ufo_msg_decode (buf.data, buf.len, NULL, &err);
    CHECK (copy);
    ufo_msg_destroy (&copy);
    ufo_buf_free (&buf);
    ufo_msg_destroy (&msg);

    //  Clocks move forward.
    int64_t m1 = ufo_time_mono_ms ();
    int64_t m2 = ufo_time_mono_ms ();
    CHECK (m2 >= m1 && m1 > 0);
    CHECK (ufo_time_now_us () > 1600000000000000);
}

UFO_TEST (test_truncation_everywhere)
{
    ufo_msg_t *msg = s_sample ();
    REQUIRE (msg);
    ufo_buf_t buf = {0};
    ufo_msg_encode (msg, &buf);
    size_t bad = 0;
    for (size_t len = 0; len < buf.len; len++) {
        ufo_error_t err;
        ufo_msg_t *cut = ufo_msg_decode (buf.data, len, NULL, &err);
        if (cut || err.code != UFO_E_TRUNCATED) {
            if (bad++ < 5)
                UFO_FAIL_ ("prefix of %zu bytes: %s (%s)", len,
                           cut ? "decoded" : ufo_errcode_name (err.code), err.message);
        }
        ufo_msg_destroy (&cut);
    }
    CHECK_INT (bad, 0);
    ufo_buf_free (&buf);
    ufo_msg_destroy (&msg);
}

UFO_TEST (test_wrong_types)
{
    //  For each field, several values of a wrong type.
    const char *wrong_for_str [] = { "1", "null", "true", "1.5", "[\"x\"]", "{\"a\":1}" };
    const char *wrong_for_int [] = { "\"1\"", "null", "false", "1.0", "[1]", "{}" };
    for (size_t field = 0; field < 6; field++) {
        bool is_int = field == 0 || field == 5;
        const char **wrong = is_int ? wrong_for_int : wrong_for_str;
        for (size_t w = 0; w < 6; w++) {
            ufo_value_t *fields = s_fields ();
            ufo_error_t err;
            s_replace (fields, field, ufo_json_parse_str (wrong [w], &err));
            int code = s_decode_value (fields, NULL, &err);
            if (code != UFO_E_TYPE)
                UFO_FAIL_ ("field %zu = %s: got %s (%s)", field, wrong [w],
                           ufo_errcode_name (code), err.message);
            ufo_value_destroy (&fields);
        }
    }
    //  The message names the field.
    ufo_value_t *fields = s_fields ();
    s_replace (fields, 3, ufo_value_new_int (7));
    ufo_error_t err;
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "sender");
    CHECK_CONTAINS (err.message, "found int");
    ufo_value_destroy (&fields);

    //  bin instead of str in a header field: 0xc4 len bytes.
    const char frame [] = "\x97\x01\xc4\x04ping\xa0\xa0\xa0\x00\xc0";
    CHECK_INT (s_decode_bytes (frame, sizeof (frame) - 1, &err), UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "type");
    //  The same with str8/str16/str32 forms (not the smallest) is accepted.
    const char longforms [] = "\x97\x01\xd9\x04ping\xda\x00\x00\xdb\x00\x00\x00\x00\xa0\x00\xc0";
    CHECK_INT (s_decode_bytes (longforms, sizeof (longforms) - 1, &err), UFO_OK);
    //  array16 holding 7 items is accepted as well.
    const char array16 [] = "\xdc\x00\x07\x01\xa4ping\xa0\xa0\xa0\xd3\x00\x00\x00\x00\x00\x00\x00\x05\xc0";
    CHECK_INT (s_decode_bytes (array16, sizeof (array16) - 1, &err), UFO_OK);
    //  A map body with a non-string key is rejected by the body decoder.
    const char intkey [] = "\x97\x01\xa4ping\xa0\xa0\xa0\x00\x81\x01\x02";
    CHECK_INT (s_decode_bytes (intkey, sizeof (intkey) - 1, &err), UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "body");
    CHECK_INT (err.offset, sizeof (intkey) - 1 - 2);     //  at the key, past the header
    //  ext in the body.
    const char ext [] = "\x97\x01\xa4ping\xa0\xa0\xa0\x00\xd4\x01\x02";
    CHECK (s_decode_bytes (ext, sizeof (ext) - 1, &err) != UFO_OK);
}

UFO_TEST (test_version)
{
    int64_t versions [] = { 0, 2, -1, 255, INT64_MAX };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (versions); i++) {
        ufo_value_t *fields = s_fields ();
        s_replace (fields, 0, ufo_value_new_int (versions [i]));
        ufo_error_t err;
        CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_VERSION);
        ufo_value_destroy (&fields);
    }
    //  A future version with more fields is still "version", not "syntax".
    ufo_value_t *fields = s_fields ();
    s_replace (fields, 0, ufo_value_new_int (2));
    ufo_value_list_push_str (fields, "extra");
    ufo_error_t err;
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_VERSION);
    CHECK_CONTAINS (err.message, "version 2");
    ufo_value_destroy (&fields);
    //  A version beyond int64 (uint64) is out of range.
    const char big [] = "\x97\xcf\xff\xff\xff\xff\xff\xff\xff\xff";
    CHECK_INT (s_decode_bytes (big, sizeof (big) - 1, &err), UFO_E_RANGE);
}

UFO_TEST (test_shape)
{
    ufo_error_t err;
    //  Not an array.
    const char *not_arrays [] = { "{\"a\":1}", "1", "\"x\"", "null", "true", "1.5" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (not_arrays); i++) {
        ufo_value_t *v = ufo_json_parse_str (not_arrays [i], &err);
        CHECK_INT (s_decode_value (v, NULL, &err), UFO_E_TYPE);
        CHECK_CONTAINS (err.message, "array");
        ufo_value_destroy (&v);
    }
    //  Wrong array length.
    ufo_value_t *fields = s_fields ();
    ufo_value_list_remove (fields, 6);
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_SYNTAX);
    CHECK_CONTAINS (err.message, "6 items");
    ufo_value_destroy (&fields);
    fields = s_fields ();
    ufo_value_list_push_int (fields, 1);
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_SYNTAX);
    ufo_value_destroy (&fields);
    CHECK_INT (s_decode_bytes ("\x90", 1, &err), UFO_E_SYNTAX);
    //  Empty input, the reserved byte, garbage.
    CHECK_INT (s_decode_bytes ("", 0, &err), UFO_E_TRUNCATED);
    CHECK_INT (s_decode_bytes ("\xc1", 1, &err), UFO_E_SYNTAX);
    CHECK_INT (s_decode_bytes ("\x97\xc1", 2, &err), UFO_E_SYNTAX);
    ufo_msg_t *msg = ufo_msg_decode (NULL, 0, NULL, NULL);     //  NULL err is allowed
    CHECK (msg == NULL);
    //  Trailing bytes after the body.
    msg = s_sample ();
    ufo_buf_t buf = {0};
    ufo_msg_encode (msg, &buf);
    ufo_buf_putc (&buf, 0);
    CHECK_INT (s_decode_bytes (buf.data, buf.len, &err), UFO_E_SYNTAX);
    CHECK_CONTAINS (err.message, "trailing");
    ufo_buf_free (&buf);
    ufo_msg_destroy (&msg);
}

UFO_TEST (test_field_limits)
{
    struct { size_t field; size_t len; int code; } cases [] = {
        { 1, 64, UFO_OK }, { 1, 65, UFO_E_RANGE }, { 1, 0, UFO_E_RANGE },
        { 2, 64, UFO_OK }, { 2, 65, UFO_E_RANGE }, { 2, 0, UFO_OK },
        { 3, 128, UFO_OK }, { 3, 129, UFO_E_RANGE },
        { 4, 128, UFO_OK }, { 4, 129, UFO_E_RANGE }, { 4, 100000, UFO_E_RANGE },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        char *s = (char *) calloc (1, cases [i].len + 1);
        memset (s, 'k', cases [i].len);
        ufo_value_t *fields = s_fields ();
        s_replace (fields, cases [i].field, ufo_value_new_string (s));
        ufo_error_t err;
        int code = s_decode_value (fields, NULL, &err);
        if (code != cases [i].code)
            UFO_FAIL_ ("field %zu of %zu bytes: %s (%s)", cases [i].field, cases [i].len,
                       ufo_errcode_name (code), err.message);
        ufo_value_destroy (&fields);
        free (s);
    }
    //  Type characters: printable ASCII without space.
    const char *bad_types [] = { "a b", "a\tb", "\x7f", "caf\xc3\xa9" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad_types); i++) {
        ufo_value_t *fields = s_fields ();
        s_replace (fields, 1, ufo_value_new_string (bad_types [i]));
        ufo_error_t err;
        CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_RANGE);
        ufo_value_destroy (&fields);
    }
    //  A NUL byte inside a header string.
    ufo_value_t *fields = s_fields ();
    s_replace (fields, 2, ufo_value_new_stringn ("ab\0cd", 5));
    ufo_error_t err;
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_RANGE);
    CHECK_CONTAINS (err.message, "NUL");
    ufo_value_destroy (&fields);
}

UFO_TEST (test_invalid_utf8)
{
    const char *bad [] = {
        "\xff", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
        "ok\x80", "\xf0\x9f\x98"
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        for (size_t field = 2; field <= 4; field++) {
            ufo_value_t *fields = s_fields ();
            s_replace (fields, field, ufo_value_new_string (bad [i]));
            ufo_error_t err;
            int code = s_decode_value (fields, NULL, &err);
            if (code != UFO_E_UTF8)
                UFO_FAIL_ ("field %zu = bad[%zu]: %s", field, i, ufo_errcode_name (code));
            ufo_value_destroy (&fields);
        }
        //  In the body too.
        ufo_value_t *fields = s_fields ();
        s_replace (fields, 6, ufo_value_new_string (bad [i]));
        ufo_error_t err;
        CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_UTF8);
        ufo_value_destroy (&fields);
    }
    //  Valid multi-byte text is fine, in every field but type.
    ufo_value_t *fields = s_fields ();
    s_replace (fields, 3, ufo_value_new_string ("\xe6\x96\x87\xf0\x9f\x98\x80"));
    ufo_error_t err;
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_OK);
    ufo_value_destroy (&fields);
}

static ufo_value_t *
s_nested (size_t depth)
{
    ufo_value_t *v = ufo_value_new_int (1);
    for (size_t i = 0; i < depth; i++) {
        ufo_value_t *outer = (i % 2) ? ufo_value_new_list () : ufo_value_new_map ();
        if (i % 2)
            ufo_value_list_push (outer, &v);
        else
            ufo_value_map_set (outer, "k", &v);
        v = outer;
    }
    return v;
}

UFO_TEST (test_limits)
{
    ufo_error_t err;
    //  Default depth 32: a body of depth 32 passes, 33 does not.
    ufo_value_t *fields = s_fields ();
    s_replace (fields, 6, s_nested (32));
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_OK);
    s_replace (fields, 6, s_nested (33));
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_TOO_DEEP);
    CHECK_CONTAINS (err.message, "body");
    //  A chosen depth.
    ufo_msg_limits_t limits = { 0, 3 };
    s_replace (fields, 6, s_nested (3));
    CHECK_INT (s_decode_value (fields, &limits, &err), UFO_OK);
    s_replace (fields, 6, s_nested (4));
    CHECK_INT (s_decode_value (fields, &limits, &err), UFO_E_TOO_DEEP);
    //  Deep bodies far past any limit do not crash.
    s_replace (fields, 6, s_nested (5000));
    CHECK_INT (s_decode_value (fields, NULL, &err), UFO_E_TOO_DEEP);

    //  Size: the frame is refused before any parsing, whatever it holds.
    s_replace (fields, 6, ufo_value_new_null ());
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, fields);
    limits.max_depth = 0;
    limits.max_bytes = buf.len;
    ufo_msg_t *msg = ufo_msg_decode (buf.data, buf.len, &limits, &err);
    CHECK (msg);
    ufo_msg_destroy (&msg);
    limits.max_bytes = buf.len - 1;
    msg = ufo_msg_decode (buf.data, buf.len, &limits, &err);
    CHECK (msg == NULL);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    char garbage [64];
    memset (garbage, 0xc1, sizeof (garbage));
    limits.max_bytes = 32;
    CHECK (ufo_msg_decode (garbage, sizeof (garbage), &limits, &err) == NULL);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    //  Default 16 MiB: a 17 MiB string body is refused, without reading it.
    size_t huge = 17u << 20;
    char *big = (char *) malloc (huge);
    REQUIRE (big);
    memset (big, 0, huge);
    CHECK (ufo_msg_decode (big, huge, NULL, &err) == NULL);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    free (big);
    //  A body announcing far more elements than bytes exist fails fast (no huge allocation).
    const char liar [] = "\x97\x01\xa4ping\xa0\xa0\xa0\x00\xdd\x7f\xff\xff\xff";
    CHECK_INT (s_decode_bytes (liar, sizeof (liar) - 1, &err), UFO_E_TRUNCATED);
    ufo_buf_free (&buf);
    ufo_value_destroy (&fields);
}

//  The broker's hand-written integers (seq, last, prev in replies and events) take the
//  smallest msgpack form, the same bytes as the generic encoder (docs/PROTOCOL.md 1.2).
UFO_TEST (test_bb_uint_smallest_form)
{
    const uint64_t values [] = { 0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295u, 4294967296ull,
                                 1700000000000000ull, (uint64_t) INT64_MAX };
    const size_t sizes [] = { 1, 1, 1, 2, 2, 3, 3, 5, 5, 9, 9, 9 };
    ufo_buf_t a = { 0 }, b = { 0 };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (values); i++) {
        ufo_buf_reset (&a);
        ufo_buf_reset (&b);
        ufo_mp_put_uint (&a, values [i]);
        ufo_value_t *v = ufo_value_new_int ((int64_t) values [i]);
        ufo_msgpack_append (&b, v);
        ufo_value_destroy (&v);
        CHECK_INT (a.len, sizes [i]);
        CHECK (a.len == b.len && memcmp (a.data, b.data, a.len) == 0);
    }
    //  128 is cc 80, not cf + 8 bytes
    ufo_buf_reset (&a);
    ufo_mp_put_uint (&a, 128);
    CHECK (a.len == 2 && (uint8_t) a.data [0] == 0xcc && (uint8_t) a.data [1] == 0x80);
    ufo_buf_free (&a);
    ufo_buf_free (&b);
}

int
main (void)
{
    UFO_RUN (test_round_trip);
    UFO_RUN (test_golden_bytes);
    UFO_RUN (test_new_and_setters);
    UFO_RUN (test_truncation_everywhere);
    UFO_RUN (test_wrong_types);
    UFO_RUN (test_version);
    UFO_RUN (test_shape);
    UFO_RUN (test_field_limits);
    UFO_RUN (test_invalid_utf8);
    UFO_RUN (test_limits);
    UFO_RUN (test_bb_uint_smallest_form);
    return UFO_TEST_END ();
}
