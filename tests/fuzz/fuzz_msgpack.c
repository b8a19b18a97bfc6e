/*  fuzz_msgpack.c - libFuzzer target for the msgpack decoder. Any input: no crash, no leak,
    no allocation beyond a small multiple of the input; accepted input re-encodes to bytes
    that decode to an equal value. The plain scanner (ufo_msgpack_scan_plain) accepts only
    what the decoder accepts, and what it accepts never re-encodes to more bytes. */
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
    ufo_msgpack_limits_t limits = { .max_depth = 64 };
    ufo_value_t *v = ufo_msgpack_decode (data, size, &limits, &err);
    size_t plain = ufo_msgpack_scan_plain (data, size, 0, 64);
    if (!v) {
        assert (err.code != UFO_OK);
        assert (size == 0 || plain < size);     //  the scanner never accepts the whole of it
        return 0;
    }
    ufo_buf_t buf = {0};
    ufo_msgpack_append (&buf, v);
    if (plain == size)
        assert (buf.len <= size);               //  re-encoding never makes kept bytes longer
    if (plain > 0) {
        //  what the scanner accepts decodes on its own
        ufo_value_t *prefix = ufo_msgpack_decode (data, plain, &limits, NULL);
        assert (prefix);
        ufo_value_destroy (&prefix);
    }
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
