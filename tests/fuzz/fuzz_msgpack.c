/*  fuzz_msgpack.c - libFuzzer target for the msgpack decoder. Any input: no crash, no leak,
    no allocation beyond a small multiple of the input; accepted input re-encodes to bytes
    that decode to an equal value. */
#include "ufo_prelude.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_error_t err;
    ufo_msgpack_limits_t limits = { .max_depth = 64 };
    ufo_value_t *v = ufo_msgpack_decode (data, size, &limits, &err);
    if (!v) {
        assert (err.code != UFO_OK);
        return 0;
    }
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    ufo_value_t *back = ufo_msgpack_decode (buf.data, buf.len, &limits, &err);
    assert (back && ufo_value_equal (v, back));
    //  and through JSON (NaN allowed since msgpack carries any double)
    size_t len;
    char *text = ufo_json_dump (v, UFO_JSON_COMPACT, &len);
    ufo_json_limits_t jl = { .max_depth = 128, .allow_nan = true };
    ufo_value_t *fromjson = ufo_json_parse (text, len, &jl, &err);
    assert (fromjson);
    free (text);
    ufo_value_destroy (&fromjson);
    ufo_value_destroy (&back);
    ufo_buf_free (&buf);
    ufo_value_destroy (&v);
    return 0;
}
