/*  fuzz_bb_request.c - libFuzzer target for the broker's request decoder (the code that
    sees every byte a client sends), without sockets. Input layout: byte 0 = number of frames
    (mod 4); every frame but the last is prefixed by a 2-byte big-endian length; the last
    frame takes the rest. Any input: no crash, no leak, an error with a code on failure;
    on success the decoded request is consistent with its type. Differential: the decoder's
    verdict, error and items equal those of the reference tree decoder
    (ufo_bb_request_decode_tree), whether or not it kept the items as the frame's bytes. */
#include "ufo_prelude.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_hash.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_bb_request: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t nframes = data [0] % 4;
    const void *frames [4];
    size_t sizes [4];
    size_t off = 1;
    for (size_t i = 0; i < nframes; i++) {
        size_t len = size - off;
        if (i + 1 < nframes) {
            if (size - off < 2)
                return 0;
            len = (size_t) data [off] << 8 | data [off + 1];
            off += 2;
            if (len > size - off)
                len = size - off;
        }
        frames [i] = data + off;
        sizes [i] = len;
        off += len;
    }
    ufo_bb_limits_t limits;
    ufo_bb_limits_default (&limits);
    //  small limits on some inputs so the limit checks run too
    if (data [0] & 0x80) {
        limits.max_item_bytes = 64;
        limits.max_batch_items = 4;
        limits.max_blob_bytes = 16;
    }
    ufo_bb_request_t req;
    ufo_bb_request_init (&req);
    ufo_error_t err;
    ufo_error_clear (&err);
    int rc = ufo_bb_request_decode (&req, frames, sizes, nframes, &limits, &err);
    ufo_bb_request_t ref;
    ufo_bb_request_init (&ref);
    ufo_error_t ref_err;
    int ref_rc = ufo_bb_request_decode_tree (&ref, frames, sizes, nframes, &limits, &ref_err);
    FUZZ_REQUIRE (rc == ref_rc);
    FUZZ_REQUIRE (err.code == ref_err.code && strcmp (err.message, ref_err.message) == 0);
    FUZZ_REQUIRE (strcmp (req.id, ref.id) == 0 && req.type == ref.type);
    FUZZ_REQUIRE (strcmp (req.sender, ref.sender) == 0 && strcmp (req.type_name, ref.type_name) == 0);
    if (rc == 0 && req.type == UFO_BB_REQ_ADD) {
        FUZZ_REQUIRE (ref.items && req.nitems == ufo_value_size (ref.items) && req.nitems == ref.nitems);
        FUZZ_REQUIRE (strcmp (req.board, ref.board) == 0 && req.memory == ref.memory);
        for (size_t i = 0; i < req.nitems; i++) {
            size_t start = ufo_bb_request_item_start (&req, i);
            FUZZ_REQUIRE (req.item_ends [i] > start && req.item_ends [i] <= req.items_len);
            ufo_value_t *item = ufo_msgpack_decode (req.items_data + start, req.item_ends [i] - start, NULL, NULL);
            FUZZ_REQUIRE (item && ufo_value_equal (item, ufo_value_list_at (ref.items, i)));
            FUZZ_REQUIRE (req.item_ends [i] - start <= limits.max_item_bytes);
            ufo_value_destroy (&item);
        }
    }
    ufo_bb_request_reset (&ref);
    //  the lenient id reader of error replies: never past the frame; when the decoder read an
    //  id, the lenient reader reads the same one
    if (nframes > 0) {
        char id [65];
        bool peeked = ufo_bb_peek_id (frames [0], sizes [0], id);
        FUZZ_REQUIRE (memchr (id, 0, sizeof id) && (peeked || !*id));
        if (*req.id && strlen (req.id) <= 64)
            FUZZ_REQUIRE (peeked && strcmp (id, req.id) == 0);
    }
    if (rc != 0) {
        FUZZ_REQUIRE (err.code != UFO_OK);
        FUZZ_REQUIRE (req.type == -1 && req.items == NULL);
        FUZZ_REQUIRE (memchr (req.id, 0, sizeof req.id));
    }
    else {
        FUZZ_REQUIRE (req.type >= 0 && req.type < UFO_BB_REQ_COUNT);
        if (req.type == UFO_BB_REQ_ADD) {
            FUZZ_REQUIRE (req.nitems >= 1 && req.items_data && req.item_ends [req.nitems - 1] == req.items_len);
            FUZZ_REQUIRE (req.memory >= 0 && req.memory < 4);
            FUZZ_REQUIRE (ufo_bb_board_valid (req.board, strlen (req.board)));
            for (size_t i = 0; i < req.nitems; i++)
                FUZZ_REQUIRE ((req.items_data [ufo_bb_request_item_start (&req, i)] & 0xF0) == 0x80
                              || req.items_data [ufo_bb_request_item_start (&req, i)] == 0xDE
                              || req.items_data [ufo_bb_request_item_start (&req, i)] == 0xDF);
        }
        if (req.type == UFO_BB_REQ_BLOB_PUT)
            FUZZ_REQUIRE (nframes == 2 && req.blob_len <= limits.max_blob_bytes);
        if (req.type == UFO_BB_REQ_BLOB_GET)
            FUZZ_REQUIRE (ufo_sha256_hex_valid (req.blob));
        //  the reply encoders accept whatever id was decoded
        ufo_buf_t buf = { 0 };
        ufo_bb_encode_error (&buf, req.id, UFO_E_INVALID, "x");
        ufo_buf_free (&buf);
    }
    ufo_bb_request_reset (&req);
    return 0;
}
