/*  fuzz_msg.c - libFuzzer target for the message envelope decoder. Any input: no crash,
    no leak, an error code on failure; anything accepted re-encodes to a frame that decodes
    to the same message and re-encodes to the same bytes. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_msg.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

//  Not assert(): fuzz builds may define NDEBUG, and these checks must always run.
#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_msg: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_error_t err;
    //  Small limits on some inputs so the depth and size checks are exercised as well.
    ufo_msg_limits_t limits = { size && data [0] == 0x97 ? 0 : 4096, size > 1 && data [1] ? 8 : 0 };
    ufo_msg_t *msg = ufo_msg_decode (data, size, &limits, &err);
    if (!msg) {
        FUZZ_REQUIRE (err.code != UFO_OK);
        FUZZ_REQUIRE (strcmp (ufo_errcode_name (err.code), "unknown") != 0);
        FUZZ_REQUIRE (err.offset <= size);
        FUZZ_REQUIRE (memchr (err.message, 0, sizeof (err.message)));
        return 0;
    }
    FUZZ_REQUIRE (err.code == UFO_OK);
    ufo_buf_t first = {0};
    ufo_msg_encode (msg, &first);
    ufo_msg_t *again = ufo_msg_decode (first.data, first.len, NULL, &err);
    FUZZ_REQUIRE (again);
    FUZZ_REQUIRE (strcmp (ufo_msg_type (msg), ufo_msg_type (again)) == 0);
    FUZZ_REQUIRE (strcmp (ufo_msg_id (msg), ufo_msg_id (again)) == 0);
    FUZZ_REQUIRE (strcmp (ufo_msg_sender (msg), ufo_msg_sender (again)) == 0);
    FUZZ_REQUIRE (strcmp (ufo_msg_session (msg), ufo_msg_session (again)) == 0);
    FUZZ_REQUIRE (ufo_msg_timestamp (msg) == ufo_msg_timestamp (again));
    //  Bodies: equal as values, except that NaN never equals itself, so also compare the
    //  re-encoded bytes, which must be identical.
    ufo_buf_t second = {0};
    ufo_msg_encode (again, &second);
    FUZZ_REQUIRE (first.len == second.len && memcmp (first.data, second.data, first.len) == 0);
    ufo_buf_free (&second);
    ufo_buf_free (&first);
    ufo_msg_destroy (&again);
    ufo_msg_destroy (&msg);
    return 0;
}
