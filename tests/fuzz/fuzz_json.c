/*  fuzz_json.c - libFuzzer target for the JSON parser. Any input: no crash, no leak;
    anything accepted re-serialises (every style) to text that parses back to an equal value,
    and its deep copy (one block) is equal and outlives it. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_error_t err;
    ufo_json_limits_t limits = { .max_depth = 64, .allow_nan = size && data [0] == 'N' };
    ufo_value_t *v = ufo_json_parse ((const char *) data, size, &limits, &err);
    if (!v) {
        assert (err.code != UFO_OK);
        assert (err.offset <= size);
        return 0;
    }
    int styles [] = { UFO_JSON_PY, UFO_JSON_COMPACT, UFO_JSON_PRETTY };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (styles); i++) {
        size_t len;
        char *text = ufo_json_dump (v, styles [i], &len);
        ufo_json_limits_t again = { .max_depth = 64, .allow_nan = true };
        ufo_value_t *back = ufo_json_parse (text, len, &again, &err);
        assert (back);
        assert (ufo_value_equal (v, back));
        ufo_value_destroy (&back);
        free (text);
    }
    ufo_value_t *copy = ufo_value_dup (v);
    assert (ufo_value_equal (v, copy));
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    ufo_value_t *back = ufo_msgpack_decode (buf.data, buf.len, NULL, &err);
    assert (back && ufo_value_equal (v, back));
    ufo_value_destroy (&back);
    ufo_buf_free (&buf);
    ufo_value_destroy (&v);
    back = ufo_json_parse ((const char *) data, size, &limits, &err);
    assert (ufo_value_equal (copy, back));
    //  frozen and shared: every reference reads the same tree; a copy of it is changeable
    ufo_value_freeze (back);
    ufo_value_t *shared = ufo_value_share (back);
    ufo_value_t *thawed = ufo_value_dup (shared);
    assert (!ufo_value_frozen (thawed) && ufo_value_equal (thawed, copy));
    ufo_value_destroy (&back);
    assert (ufo_value_frozen (shared) && ufo_value_equal (shared, copy));
    ufo_value_destroy (&shared);
    ufo_value_destroy (&thawed);
    ufo_value_destroy (&copy);
    return 0;
}
