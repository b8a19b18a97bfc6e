/*  test_msgpack.c - msgpack codec: round trips, smallest encodings, strict bounded decoding,
    and msgpack-c (the reference C implementation) as an independent oracle. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msgpack.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <msgpack.h>

static ufo_value_t *
s_sample (void)
{
    ufo_error_t err;
    return ufo_json_parse_str (
        "{\"Step\": 3, \"big\": 9223372036854775807, \"neg\": -9223372036854775808, "
        "\"small\": [0, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -1, -32, -33, "
        "-128, -129, -32768, -32769, -2147483648, -2147483649], \"f\": [0.1, -0.0, 1e300], "
        "\"text\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\", \"empty\": {}, \"list\": [[], {\"x\": null}], "
        "\"t\": true, \"n\": null, \"long\": \"0123456789012345678901234567890123456789\"}", &err);
}

UFO_TEST (test_roundtrip)
{
    ufo_value_t *v = s_sample ();
    REQUIRE (v);
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    ufo_error_t err;
    ufo_value_t *back = ufo_msgpack_decode (buf.data, buf.len, NULL, &err);
    REQUIRE (back);
    CHECK (ufo_value_equal (v, back));
    //  JSON -> msgpack -> JSON is byte-identical
    char *a = ufo_json_dump (v, UFO_JSON_PY, NULL);
    char *b = ufo_json_dump (back, UFO_JSON_PY, NULL);
    CHECK_STR (a, b);
    free (a);
    free (b);
    ufo_value_destroy (&back);
    ufo_buf_free (&buf);
    ufo_value_destroy (&v);
}

UFO_TEST (test_smallest_encodings)
{
    struct { int64_t i; size_t len; } cases [] = {
        { 0, 1 }, { 127, 1 }, { 128, 2 }, { 255, 2 }, { 256, 3 }, { 65535, 3 }, { 65536, 5 },
        { 4294967295LL, 5 }, { 4294967296LL, 9 }, { -1, 1 }, { -32, 1 }, { -33, 2 }, { -128, 2 },
        { -129, 3 }, { -32768, 3 }, { -32769, 5 }, { INT32_MIN, 5 }, { (int64_t) INT32_MIN - 1, 9 }
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_value_t *v = ufo_value_new_int (cases [i].i);
        ufo_buf_t buf = {0};
        ufo_msgpack_append (&buf, v);
        if (buf.len != cases [i].len)
            UFO_FAIL_ ("%" PRId64 " encoded in %zu bytes, want %zu", cases [i].i, buf.len, cases [i].len);
        ufo_buf_free (&buf);
        ufo_value_destroy (&v);
    }
}

//  Compare our decoding of bytes packed by msgpack-c, and msgpack-c's reading of ours.
static bool
s_same_as_msgpack_c (const ufo_value_t *v, const msgpack_object *o)
{
    switch (ufo_value_type (v)) {
        case UFO_TNULL: return o->type == MSGPACK_OBJECT_NIL;
        case UFO_TBOOL: return o->type == MSGPACK_OBJECT_BOOLEAN && o->via.boolean == ufo_value_bool (v);
        case UFO_TINT:
            if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                return ufo_value_int (v) >= 0 && o->via.u64 == (uint64_t) ufo_value_int (v);
            return o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 == ufo_value_int (v);
        case UFO_TFLOAT:
            return (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
                && (o->via.f64 == ufo_value_float (v) || (isnan (o->via.f64) && isnan (ufo_value_float (v))));
        case UFO_TSTRING:
            return o->type == MSGPACK_OBJECT_STR && o->via.str.size == ufo_value_strlen (v)
                && memcmp (o->via.str.ptr, ufo_value_str (v), o->via.str.size) == 0;
        case UFO_TLIST:
            if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != ufo_value_size (v))
                return false;
            for (uint32_t i = 0; i < o->via.array.size; i++)
                if (!s_same_as_msgpack_c (ufo_value_list_at (v, i), &o->via.array.ptr [i]))
                    return false;
            return true;
        case UFO_TMAP:
            if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size != ufo_value_size (v))
                return false;
            for (uint32_t i = 0; i < o->via.map.size; i++) {
                const msgpack_object_kv *kv = &o->via.map.ptr [i];
                if (kv->key.type != MSGPACK_OBJECT_STR
                ||  kv->key.via.str.size != ufo_value_map_keylen_at (v, i)
                ||  memcmp (kv->key.via.str.ptr, ufo_value_map_key_at (v, i), kv->key.via.str.size) != 0
                ||  !s_same_as_msgpack_c (ufo_value_map_value_at (v, i), &kv->val))
                    return false;
            }
            return true;
    }
    return false;
}

UFO_TEST (test_agrees_with_msgpack_c)
{
    ufo_value_t *v = s_sample ();
    REQUIRE (v);
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    msgpack_unpacked unpacked;
    msgpack_unpacked_init (&unpacked);
    size_t off = 0;
    int rc = msgpack_unpack_next (&unpacked, buf.data, buf.len, &off);
    CHECK_INT (rc, MSGPACK_UNPACK_SUCCESS);
    CHECK_INT (off, buf.len);
    CHECK (s_same_as_msgpack_c (v, &unpacked.data));
    msgpack_unpacked_destroy (&unpacked);

    //  msgpack-c packs, we decode: including float32 and str8/bin forms it chooses
    msgpack_sbuffer sbuf;
    msgpack_sbuffer_init (&sbuf);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &sbuf, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 5);
    msgpack_pack_float (&pk, 1.5f);
    msgpack_pack_uint64 (&pk, 18446744073709551615ULL);
    msgpack_pack_bin (&pk, 2);
    msgpack_pack_bin_body (&pk, "ok", 2);
    msgpack_pack_map (&pk, 1);
    msgpack_pack_str (&pk, 1);
    msgpack_pack_str_body (&pk, "k", 1);
    msgpack_pack_int8 (&pk, -5);
    msgpack_pack_str (&pk, 40);
    msgpack_pack_str_body (&pk, "0123456789012345678901234567890123456789", 40);
    ufo_error_t err;
    ufo_value_t *d = ufo_msgpack_decode (sbuf.data, sbuf.size, NULL, &err);
    REQUIRE (d);
    CHECK (ufo_value_float (ufo_value_list_at (d, 0)) == 1.5);
    CHECK_INT (ufo_value_type (ufo_value_list_at (d, 1)), UFO_TFLOAT);     //  beyond int64
    CHECK_STR (ufo_value_str (ufo_value_list_at (d, 2)), "ok");
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (d, 3), "k", 0), -5);
    CHECK_INT (ufo_value_strlen (ufo_value_list_at (d, 4)), 40);
    ufo_value_destroy (&d);
    msgpack_sbuffer_destroy (&sbuf);
    ufo_buf_free (&buf);
    ufo_value_destroy (&v);
}

typedef struct {
    const char *bytes;
    size_t len;
    int code;
} s_bad_t;

UFO_TEST (test_errors)
{
    s_bad_t cases [] = {
        { "", 0, UFO_E_TRUNCATED },
        { "\xc1", 1, UFO_E_SYNTAX },                            //  reserved
        { "\xdd\xff\xff\xff\xff", 5, UFO_E_TRUNCATED },         //  array of 4 billion, no bytes
        { "\xdf\xff\xff\xff\xff", 5, UFO_E_TRUNCATED },         //  map of 4 billion
        { "\xdb\xff\xff\xff\xff" "abc", 8, UFO_E_TRUNCATED },   //  huge str
        { "\x92\x01", 2, UFO_E_TRUNCATED },                     //  array short by one
        { "\x81\x01\x02", 3, UFO_E_TYPE },                      //  integer map key
        { "\xa2\xff\xfe", 3, UFO_E_UTF8 },                      //  invalid UTF-8
        { "\xa3\xed\xa0\x80", 4, UFO_E_UTF8 },                  //  encoded surrogate
        { "\xc4\x02\xff\xfe", 4, UFO_E_UTF8 },                  //  bin that is not text
        { "\xd4\x01\x02", 3, UFO_E_TYPE },                      //  fixext
        { "\xc7\x01\x01\x00", 4, UFO_E_TYPE },                  //  ext8
        { "\x01\x02", 2, UFO_E_SYNTAX },                        //  trailing bytes
        { "\xcd\x01", 2, UFO_E_TRUNCATED },                     //  uint16 cut
        { "\xcb\x00\x00", 3, UFO_E_TRUNCATED },                 //  float64 cut
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_error_t err;
        ufo_value_t *v = ufo_msgpack_decode (cases [i].bytes, cases [i].len, NULL, &err);
        if (v || err.code != cases [i].code)
            UFO_FAIL_ ("case %zu: got %s (%s), want %s", i, v ? "a value" : ufo_errcode_name (err.code),
                       err.message, ufo_errcode_name (cases [i].code));
        ufo_value_destroy (&v);
    }
    //  depth limit
    size_t n = 1000;
    char *deep = (char *) malloc (n + 1);
    memset (deep, 0x91, n);
    deep [n] = (char) 0xc0;
    ufo_error_t err;
    ufo_value_t *v = ufo_msgpack_decode (deep, n + 1, NULL, &err);
    CHECK (!v && err.code == UFO_E_TOO_DEEP);
    ufo_msgpack_limits_t limits = { .max_depth = 2000 };
    v = ufo_msgpack_decode (deep, n + 1, &limits, &err);
    CHECK (v != NULL);
    ufo_value_destroy (&v);
    limits.max_bytes = 10;
    v = ufo_msgpack_decode (deep, n + 1, &limits, &err);
    CHECK (!v && err.code == UFO_E_TOO_LARGE);
    free (deep);
}

UFO_TEST (test_truncation_everywhere)
{
    ufo_value_t *v = s_sample ();
    REQUIRE (v);
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    int accepted = 0;
    for (size_t cut = 0; cut < buf.len; cut++) {
        ufo_error_t err;
        ufo_value_t *d = ufo_msgpack_decode (buf.data, cut, NULL, &err);
        if (d)
            accepted++;
        ufo_value_destroy (&d);
    }
    CHECK_INT (accepted, 0);
    ufo_buf_free (&buf);
    ufo_value_destroy (&v);
}

UFO_TEST (test_utf8_check_everywhere)
{
    //  The validator skips ASCII 8 bytes at a time: a bad or a multi-byte sequence at every
    //  offset of a 40-byte string must be found exactly where it is.
    static const char *bad [] = { "\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80" };
    static const char *good [] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
    char text [48];
    for (size_t at = 0; at < 40; at++) {
        for (size_t k = 0; k < UFO_ARRAY_SIZE (bad); k++) {
            memset (text, 'a', sizeof text);
            size_t n = strlen (bad [k]);
            memcpy (text + at, bad [k], n);
            CHECK_INT (ufo_utf8_check (text, 40 + n), at);
            CHECK (!ufo_utf8_valid (text, 40 + n));
        }
        for (size_t k = 0; k < UFO_ARRAY_SIZE (good); k++) {
            memset (text, 'a', sizeof text);
            size_t n = strlen (good [k]);
            memcpy (text + at, good [k], n);
            CHECK_INT (ufo_utf8_check (text, 40 + n), 40 + n);
            //  cut inside the sequence: invalid from its first byte
            CHECK_INT (ufo_utf8_check (text, at + n - 1), at);
        }
    }
    CHECK (ufo_utf8_valid ("", 0));
}

//  The low-level reader and writer (the one codec every msgpack user is built on): every
//  writer's output reads back with the matching reader, in the smallest form, and the readers
//  give TRUNCATED (cursor at the end), TYPE (nothing consumed) and RANGE as documented.
UFO_TEST (test_cursor_reader_writer)
{
    ufo_buf_t buf = { 0 };
    ufo_mp_put_array (&buf, 9);
    ufo_mp_put_nil (&buf);
    ufo_mp_put_bool (&buf, true);
    ufo_mp_put_int (&buf, -33);
    ufo_mp_put_uint (&buf, 70000);
    ufo_mp_put_float (&buf, 2.5);
    UFO_MP_PUT_LIT (&buf, "hello");
    ufo_mp_put_cstr (&buf, "a string of more than thirty-one bytes");
    ufo_mp_put_map (&buf, 1);
    ufo_mp_put_cstr (&buf, "k");
    ufo_mp_put_int (&buf, INT64_MIN);
    ufo_mp_put_array (&buf, 20);
    for (int i = 0; i < 20; i++)
        ufo_mp_put_int (&buf, i);
    //  the same bytes as the value encoder of the same value
    ufo_value_t *v = ufo_msgpack_decode (buf.data, buf.len, NULL, NULL);
    CHECK (v != NULL);
    ufo_buf_t again = { 0 };
    ufo_msgpack_append (&again, v);
    CHECK (again.len == buf.len && memcmp (again.data, buf.data, buf.len) == 0);
    ufo_value_destroy (&v);
    ufo_buf_free (&again);

    ufo_mp_reader_t r;
    ufo_mp_reader_init (&r, buf.data, buf.len);
    uint32_t n = 0;
    bool b = false;
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    const char *s = NULL;
    size_t len = 0;
    CHECK_INT (ufo_mp_read_str (&r, &s, &len), UFO_E_TYPE);        //  an array: nothing consumed
    CHECK_INT (ufo_mp_offset (&r), 0);
    CHECK_INT (ufo_mp_read_array (&r, &n), 0);
    CHECK_INT (n, 9);
    CHECK_INT (ufo_mp_read_nil (&r), 0);
    CHECK_INT (ufo_mp_read_bool (&r, &b), 0);
    CHECK (b);
    CHECK_INT (ufo_mp_read_int (&r, &i), 0);
    CHECK_INT (i, -33);
    size_t at = ufo_mp_offset (&r);
    CHECK_INT ((uint8_t) buf.data [at], 0xce);                      //  70000: uint32, not uint64
    CHECK_INT (ufo_mp_read_uint (&r, &u), 0);
    CHECK_INT (u, 70000);
    CHECK_INT (ufo_mp_read_float (&r, &f), 0);
    CHECK (f == 2.5);
    CHECK_INT (ufo_mp_read_str (&r, &s, &len), 0);
    CHECK (len == 5 && memcmp (s, "hello", 5) == 0);
    CHECK_INT ((uint8_t) *r.p, 0xd9);                              //  str8
    CHECK_INT (ufo_mp_read_str (&r, &s, &len), 0);
    CHECK_INT (len, 38);
    CHECK_INT (ufo_mp_read_map (&r, &n), 0);
    CHECK_INT (n, 1);
    CHECK_INT (ufo_mp_read_str (&r, &s, &len), 0);
    CHECK_INT (ufo_mp_read_int (&r, &i), 0);
    CHECK (i == INT64_MIN);
    CHECK_INT ((uint8_t) *r.p, 0xdc);                              //  array16
    CHECK_INT (ufo_mp_read_array (&r, &n), 0);
    CHECK_INT (n, 20);
    for (int k = 0; k < 20; k++)
        CHECK (ufo_mp_read_int (&r, &i) == 0 && i == k);
    CHECK_INT (ufo_mp_left (&r), 0);
    CHECK_INT (ufo_mp_read_nil (&r), UFO_E_TRUNCATED);
    ufo_buf_free (&buf);

    //  a head cut short leaves the cursor at the end; a body longer than the input is refused
    const uint8_t cut [] = { 0xcd, 0x01 };
    ufo_mp_reader_init (&r, cut, sizeof cut);
    CHECK_INT (ufo_mp_read_int (&r, &i), UFO_E_TRUNCATED);
    CHECK_INT (ufo_mp_offset (&r), 2);
    const uint8_t longer [] = { 0xa5, 'a', 'b' };
    ufo_mp_reader_init (&r, longer, sizeof longer);
    CHECK_INT (ufo_mp_read_str (&r, &s, &len), UFO_E_TRUNCATED);
    CHECK_INT (ufo_mp_offset (&r), 3);
    //  uint64 beyond int64: RANGE, nothing consumed, readable as uint
    const uint8_t big [] = { 0xcf, 0xff, 0, 0, 0, 0, 0, 0, 1 };
    ufo_mp_reader_init (&r, big, sizeof big);
    CHECK_INT (ufo_mp_read_int (&r, &i), UFO_E_RANGE);
    CHECK_INT (ufo_mp_offset (&r), 0);
    CHECK_INT (ufo_mp_read_uint (&r, &u), 0);
    CHECK (u == 0xff00000000000001ull);
    CHECK_INT (ufo_mp_kind (0xc1), UFO_MP_INVALID);
    CHECK (strcmp (ufo_mp_kind_name (0xc4), "bin") == 0);
    CHECK (strcmp (ufo_mp_kind_name (0xd6), "ext") == 0);
}

int
main (void)
{
    UFO_RUN (test_roundtrip);
    UFO_RUN (test_cursor_reader_writer);
    UFO_RUN (test_smallest_encodings);
    UFO_RUN (test_agrees_with_msgpack_c);
    UFO_RUN (test_errors);
    UFO_RUN (test_truncation_everywhere);
    UFO_RUN (test_utf8_check_everywhere);
    return UFO_TEST_END ();
}
