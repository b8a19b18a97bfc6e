/*  test_bb_wal.c - unit tests of the broker's storage pieces: CRC-32C and SHA-256 test
    vectors, the log (replay, torn tail, corruption in the middle, --repair, rotation), the
    blob store, and the request decoder. */
#include "ufo_prelude.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_hash.h"
#include "ufo_hex.h"
#include "ufo_msg.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_wal.h"
#include "ufo_blob.h"
#include "ufo_test.h"
#include <ftw.h>

static char s_dir [256];

static int
s_rm (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    return remove (path);
}

UFO_TEST (test_vectors)
{
    CHECK_INT (ufo_crc32c (0, "123456789", 9), 0xE3069283u);
    uint8_t zeros [32] = { 0 };
    CHECK_INT (ufo_crc32c (0, zeros, 32), 0x8A9136AAu);
    //  in pieces == at once
    const char *text = "The quick brown fox jumps over the lazy dog, twice over.";
    uint32_t part = ufo_crc32c (ufo_crc32c (0, text, 13), text + 13, strlen (text) - 13);
    CHECK_INT (part, ufo_crc32c (0, text, strlen (text)));
    //  against a bit-by-bit reference, at every alignment and many lengths (covers the
    //  SSE 4.2 path where the CPU has it, the table path otherwise or with UFO_CRC32C_SOFTWARE)
    uint8_t buf [300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf [i] = (uint8_t) (i * 131 + 7);
    for (size_t off = 0; off < 9; off++)
        for (size_t len = 0; len + off <= sizeof buf; len += 7) {
            uint32_t ref = 0xffffffffu;
            for (size_t i = 0; i < len; i++) {
                ref ^= buf [off + i];
                for (int k = 0; k < 8; k++)
                    ref = (ref & 1) ? (ref >> 1) ^ 0x82F63B78u : ref >> 1;
            }
            ref = ~ref;
            if (ufo_crc32c (0, buf + off, len) != ref)
                UFO_FAIL_ ("crc32c mismatch at offset %zu length %zu", off, len);
        }
    char hex [65];
    ufo_sha256_hex ("abc", 3, hex);
    CHECK_STR (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ufo_sha256_hex ("", 0, hex);
    CHECK_STR (hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ufo_sha256_hex (two, strlen (two), hex);
    CHECK_STR (hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    //  one million 'a', fed in odd-sized pieces
    ufo_sha256_t ctx;
    ufo_sha256_init (&ctx);
    char a [997];
    memset (a, 'a', sizeof a);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof a ? left : sizeof a;
        ufo_sha256_update (&ctx, a, n);
        left -= n;
    }
    uint8_t digest [32];
    ufo_sha256_final (&ctx, digest);
    ufo_hex_encode (digest, 32, hex);
    CHECK_STR (hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CHECK (ufo_sha256_hex_valid ("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    CHECK (!ufo_sha256_hex_valid ("CDC76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    CHECK (!ufo_sha256_hex_valid ("cdc7"));
}

typedef struct {
    int count;
    char last [64];
    int fail_at;                //  record index whose callback fails, or -1
} s_replay_t;

static int
s_collect (void *arg, uint64_t segment, const void *payload, size_t len, ufo_error_t *err)
{
    (void) segment;
    s_replay_t *r = (s_replay_t *) arg;
    if (r->count == r->fail_at)
        return ufo_error_set (err, UFO_E_SYNTAX, "cannot apply");
    snprintf (r->last, sizeof r->last, "%.*s", (int) len, (const char *) payload);
    r->count++;
    return 0;
}

static void
s_write_records (const char *dir, int n, uint64_t *segment_p)
{
    ufo_error_t err;
    ufo_wal_t *wal = ufo_wal_open (dir, 1, false, NULL, NULL, NULL, &err);
    for (int i = 0; i < n; i++) {
        char rec [32];
        int len = snprintf (rec, sizeof rec, "record-%d", i);
        ufo_wal_append (wal, rec, (size_t) len);
    }
    ufo_wal_write (wal, &err);
    if (segment_p)
        *segment_p = ufo_wal_segment (wal);
    ufo_wal_destroy (&wal);
}

static size_t
s_file_size (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 ? (size_t) st.st_size : 0;
}

UFO_TEST (test_wal_replay_and_torn_tail)
{
    char dir [300], seg [400];
    snprintf (dir, sizeof dir, "%s/wal1", s_dir);
    s_write_records (dir, 100, NULL);
    snprintf (seg, sizeof seg, "%s/wal-%016x.log", dir, 1);
    size_t good = s_file_size (seg);
    CHECK (good > 0);
    //  a torn tail: half a record appended
    FILE *f = fopen (seg, "ab");
    REQUIRE (f);
    fwrite ("UFOW\x20\0\0\0garbage", 1, 15, f);
    fclose (f);
    ufo_error_t err;
    s_replay_t r = { 0, "", -1 };
    ufo_wal_open_info_t info;
    ufo_wal_t *wal = ufo_wal_open (dir, 1, false, s_collect, &r, &info, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 100);
    CHECK_STR (r.last, "record-99");
    CHECK_INT (info.cut_bytes, 15);
    CHECK_INT (s_file_size (seg), good);
    //  appending after the cut continues the log
    ufo_wal_append (wal, "after", 5);
    CHECK_INT (ufo_wal_write (wal, &err), 0);
    ufo_wal_destroy (&wal);
    r = (s_replay_t) { 0, "", -1 };
    wal = ufo_wal_open (dir, 1, false, s_collect, &r, NULL, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 101);
    CHECK_STR (r.last, "after");
    ufo_wal_destroy (&wal);
    //  a zero-filled tail (a file extended but never written) is cut as well
    f = fopen (seg, "ab");
    char zeros [100] = { 0 };
    fwrite (zeros, 1, sizeof zeros, f);
    fclose (f);
    r = (s_replay_t) { 0, "", -1 };
    wal = ufo_wal_open (dir, 1, false, s_collect, &r, &info, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 101);
    CHECK_INT (info.cut_bytes, 100);
    ufo_wal_destroy (&wal);
}

UFO_TEST (test_wal_middle_corruption)
{
    char dir [300], seg [400];
    snprintf (dir, sizeof dir, "%s/wal2", s_dir);
    s_write_records (dir, 50, NULL);
    snprintf (seg, sizeof seg, "%s/wal-%016x.log", dir, 1);
    //  flip one byte in the payload of record 10 (each record: 12 header + 8 or 9 payload)
    size_t off = 10 * (12 + 8) + 12 + 3;
    FILE *f = fopen (seg, "r+b");
    REQUIRE (f);
    fseek (f, (long) off, SEEK_SET);
    fputc ('#', f);
    fclose (f);
    ufo_error_t err;
    s_replay_t r = { 0, "", -1 };
    ufo_wal_t *wal = ufo_wal_open (dir, 1, false, s_collect, &r, NULL, &err);
    CHECK (!wal);
    CHECK_CONTAINS (err.message, "corrupt in the middle");
    CHECK_CONTAINS (err.message, "--repair");
    //  --repair truncates at the bad record
    r = (s_replay_t) { 0, "", -1 };
    ufo_wal_open_info_t info;
    wal = ufo_wal_open (dir, 1, true, s_collect, &r, &info, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 10);
    CHECK (info.repaired);
    ufo_wal_destroy (&wal);
    r = (s_replay_t) { 0, "", -1 };
    wal = ufo_wal_open (dir, 1, false, s_collect, &r, NULL, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 10);
    ufo_wal_destroy (&wal);
    //  a checksummed record the caller cannot apply is corruption too, never a torn tail
    r = (s_replay_t) { 0, "", 5 };
    wal = ufo_wal_open (dir, 1, false, s_collect, &r, NULL, &err);
    CHECK (!wal);
    CHECK_CONTAINS (err.message, "cannot apply");
}

UFO_TEST (test_wal_rotation)
{
    char dir [300];
    snprintf (dir, sizeof dir, "%s/wal3", s_dir);
    ufo_error_t err;
    ufo_wal_t *wal = ufo_wal_open (dir, 1, false, NULL, NULL, NULL, &err);
    REQUIRE (wal);
    ufo_wal_append (wal, "a", 1);
    int old_fd = -1;
    uint64_t seg = ufo_wal_rotate (wal, &old_fd, &err);
    CHECK_INT (seg, 2);
    CHECK (old_fd >= 0);
    CHECK_INT (fdatasync (old_fd), 0);
    close (old_fd);
    ufo_wal_append (wal, "b", 1);
    ufo_wal_destroy (&wal);
    //  a corrupt earlier segment is corruption in the middle
    s_replay_t r = { 0, "", -1 };
    wal = ufo_wal_open (dir, 1, false, s_collect, &r, NULL, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 2);
    CHECK_INT (ufo_wal_remove_before (wal, 2), 1);
    ufo_wal_destroy (&wal);
    r = (s_replay_t) { 0, "", -1 };
    wal = ufo_wal_open (dir, 2, false, s_collect, &r, NULL, &err);
    REQUIRE (wal);
    CHECK_INT (r.count, 1);
    CHECK_STR (r.last, "b");
    ufo_wal_destroy (&wal);
}

UFO_TEST (test_blob_store)
{
    char dir [300];
    snprintf (dir, sizeof dir, "%s/blobs", s_dir);
    ufo_error_t err;
    ufo_blob_store_t *store = ufo_blob_store_new (dir, 1000, &err);
    REQUIRE (store);
    ufo_blob_stage_t stage;
    CHECK_INT (ufo_blob_stage (store, "hello", 5, &stage, &err), 0);
    CHECK (!stage.existed);
    CHECK (!ufo_blob_exists (store, stage.hex));           //  not before its commit
    CHECK_INT (ufo_blob_commit (&stage, true, &err), 0);
    CHECK (ufo_blob_exists (store, stage.hex));
    char *data;
    size_t len;
    CHECK_INT (ufo_blob_get (store, stage.hex, &data, &len, &err), 0);
    CHECK_INT (len, 5);
    CHECK (memcmp (data, "hello", 5) == 0);
    free (data);
    ufo_blob_stage_t again;
    CHECK_INT (ufo_blob_stage (store, "hello", 5, &again, &err), 0);
    CHECK (again.existed);
    char big [1001] = { 0 };
    CHECK_INT (ufo_blob_stage (store, big, sizeof big, &again, &err), -1);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    //  damage the file: reading reports it and removes it
    FILE *f = fopen (stage.final_path, "r+b");
    REQUIRE (f);
    fputc ('J', f);
    fclose (f);
    CHECK_INT (ufo_blob_get (store, stage.hex, &data, &len, &err), -1);
    CHECK_INT (err.code, UFO_E_SYNTAX);
    CHECK (!ufo_blob_exists (store, stage.hex));
    CHECK_INT (ufo_blob_get (store, "../../etc/passwd", &data, &len, &err), -1);
    CHECK_INT (err.code, UFO_E_INVALID);
    ufo_blob_store_destroy (&store);
    ufo_blob_store_destroy (&store);
}

//  The frame of the last s_decode: a decoded request may borrow from it.
static ufo_buf_t s_frame;

static int
s_decode (ufo_bb_request_t *req, const char *type, ufo_value_t *body, const void *extra, size_t extra_len,
          ufo_error_t *err)
{
    ufo_msg_t *msg = ufo_msg_new (type);
    ufo_msg_set_body (msg, &body);
    ufo_buf_reset (&s_frame);
    ufo_msg_encode (msg, &s_frame);
    ufo_msg_destroy (&msg);
    const void *frames [2] = { s_frame.data, extra };
    size_t sizes [2] = { s_frame.len, extra_len };
    ufo_bb_limits_t limits;
    ufo_bb_limits_default (&limits);
    limits.max_item_bytes = 64;
    return ufo_bb_request_decode (req, frames, sizes, extra ? 2 : 1, &limits, err);
}

UFO_TEST (test_request_decode)
{
    ufo_bb_request_t req;
    ufo_bb_request_init (&req);
    ufo_error_t err;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "s-1");
    ufo_value_map_set_str (body, "memory", "requests");
    ufo_value_t *items = ufo_value_new_list ();
    ufo_value_list_push_str (items, "plain");
    ufo_value_map_set (body, "items", &items);
    CHECK_INT (s_decode (&req, "bb.add", body, NULL, 0, &err), 0);
    CHECK_INT (req.type, UFO_BB_REQ_ADD);
    CHECK_INT (req.memory, 1);
    CHECK_STR (req.board, "s-1");
    CHECK_STR (ufo_value_str (ufo_value_path (req.items, "0.text")), "plain");
    CHECK_INT (strlen (req.id), 32);
    //  an item over max_item_bytes
    body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "s");
    ufo_value_map_set_str (body, "memory", "requests");
    ufo_value_map_set_str (body, "item", "0123456789012345678901234567890123456789012345678901234567890123456789");
    CHECK_INT (s_decode (&req, "bb.add", body, NULL, 0, &err), -1);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    CHECK (req.items == NULL);
    CHECK_INT (strlen (req.id), 32);                      //  still correlatable
    //  after must be a non-negative integer
    body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", "s");
    ufo_value_map_set_str (body, "after", "3");
    CHECK_INT (s_decode (&req, "bb.snapshot", body, NULL, 0, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    //  blob.put needs exactly its data frame
    CHECK_INT (s_decode (&req, "blob.put", ufo_value_new_map (), "xyz", 3, &err), 0);
    CHECK_INT (req.blob_len, 3);
    CHECK_INT (s_decode (&req, "blob.put", ufo_value_new_map (), NULL, 0, &err), -1);
    CHECK_INT (s_decode (&req, "ping", ufo_value_new_map (), "xyz", 3, &err), -1);
    CHECK_INT (s_decode (&req, "ping", ufo_value_new_list (), NULL, 0, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK_INT (s_decode (&req, "ping", ufo_value_new_null (), NULL, 0, &err), 0);
    //  garbage and nothing
    const void *frames [1] = { "\x97\x01\xa2hi" };
    size_t sizes [1] = { 5 };
    CHECK_INT (ufo_bb_request_decode (&req, frames, sizes, 1, NULL, &err), -1);
    CHECK_INT (ufo_bb_request_decode (&req, frames, sizes, 0, NULL, &err), -1);
    ufo_bb_request_reset (&req);
    //  names and topics
    CHECK (ufo_bb_board_valid ("session_2024-01-01@host:1.x", 27));
    CHECK (!ufo_bb_board_valid ("a/b", 3));
    CHECK (!ufo_bb_board_valid ("", 0));
    char topic [64];
    ufo_bb_topic (topic, sizeof topic, "s1", 3);
    CHECK_STR (topic, "bb/s1/screenshots");
    ufo_bb_topic (topic, sizeof topic, "s1", -1);
    CHECK_STR (topic, "bb/s1/*");
    ufo_buf_free (&s_frame);
}

//  A bb.add frame written by hand: {"board": "b", "memory": "trajectories", "items": [...]}
//  with count items, each the raw msgpack `item`.
static void
s_add_frame (ufo_buf_t *buf, const char *item, size_t item_len, size_t count)
{
    ufo_buf_reset (buf);
    ufo_bb_envelope_head (buf, "bb.add", "id-1", "tester");
    ufo_mp_put_map (buf, 3);
    ufo_mp_put_cstr (buf, "board");
    ufo_mp_put_cstr (buf, "b");
    ufo_mp_put_cstr (buf, "memory");
    ufo_mp_put_cstr (buf, "trajectories");
    ufo_mp_put_cstr (buf, "items");
    ufo_mp_put_array (buf, (uint32_t) count);
    for (size_t i = 0; i < count; i++)
        ufo_buf_append (buf, item, item_len);
}

//  Decodes buf both ways; checks the verdicts agree. Returns the fast decoder's rc; *kept:
//  the items were kept as the frame's bytes (no tree).
static int
s_decode_both (ufo_bb_request_t *req, ufo_buf_t *buf, bool *kept)
{
    const void *frames [1] = { buf->data };
    size_t sizes [1] = { buf->len };
    ufo_error_t err, ref_err;
    ufo_bb_request_t ref;
    ufo_bb_request_init (&ref);
    int rc = ufo_bb_request_decode (req, frames, sizes, 1, NULL, &err);
    int ref_rc = ufo_bb_request_decode_tree (&ref, frames, sizes, 1, NULL, &ref_err);
    CHECK_INT (rc, ref_rc);
    CHECK_INT (err.code, ref_err.code);
    if (rc == 0) {
        CHECK_INT (req->nitems, ref.nitems);
        for (size_t i = 0; i < req->nitems && i < ref.nitems; i++) {
            size_t start = ufo_bb_request_item_start (req, i);
            ufo_value_t *item = ufo_msgpack_decode (req->items_data + start, req->item_ends [i] - start, NULL, NULL);
            CHECK (item && ufo_value_equal (item, ufo_value_list_at (ref.items, i)));
            ufo_value_destroy (&item);
        }
    }
    *kept = rc == 0 && req->items == NULL && req->items_data >= (const uint8_t *) buf->data
         && req->items_data < (const uint8_t *) buf->data + buf->len;
    ufo_bb_request_reset (&ref);
    return rc;
}

UFO_TEST (test_request_fast_path)
{
    ufo_bb_request_t req;
    ufo_bb_request_init (&req);
    ufo_buf_t buf = { 0 };
    bool kept;
    //  plain items are kept as sent: {"Step": 1, "n": {"a": [1, nil, true, -1]}, "s": "é"}
    static const char plain [] = "\x83\xa4Step\x01\xa1n\x81\xa1\x61\x94\x01\xc0\xc3\xff\xa1s\xa2\xc3\xa9";
    s_add_frame (&buf, plain, sizeof plain - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (kept);
    CHECK_INT (req.nitems, 1);
    CHECK_INT (req.items_len, sizeof plain - 1);
    CHECK (memcmp (req.items_data, plain, sizeof plain - 1) == 0);
    CHECK_STR (req.board, "b");
    CHECK_INT (req.memory, 2);
    CHECK_STR (req.id, "id-1");
    CHECK_STR (req.type_name, "bb.add");
    //  40 items: more ends than the request holds inline
    s_add_frame (&buf, plain, sizeof plain - 1, 40);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (kept);
    CHECK_INT (req.nitems, 40);
    CHECK_INT (req.item_ends [39], 40 * (sizeof plain - 1));
    CHECK_INT (ufo_bb_request_item_start (&req, 39), 39 * (sizeof plain - 1));
    //  what decoding would change goes through the tree, with the same result:
    //  a repeated key (the last value wins), float32, bin, a blob reference
    static const char dup [] = "\x82\xa1\x61\x01\xa1\x61\x02";
    s_add_frame (&buf, dup, sizeof dup - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (!kept && req.items);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (req.items, 0), "a", 0), 2);
    static const char f32 [] = "\x81\xa1\x66\xca\x3f\xc0\x00\x00";
    s_add_frame (&buf, f32, sizeof f32 - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (!kept);
    CHECK (ufo_value_map_float (ufo_value_list_at (req.items, 0), "f", 0) == 1.5);
    static const char bin [] = "\x81\xa1\x62\xc4\x02hi";
    s_add_frame (&buf, bin, sizeof bin - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (!kept);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (req.items, 0), "b", ""), "hi");
    static const char blob [] = "\x81\xa4" "blob\xa3xyz";
    s_add_frame (&buf, blob, sizeof blob - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), -1);       //  not a blob reference
    //  the key "blob" in any string form is a blob reference: the tree decoder checks it
    //  (this one is no reference), and a valid one is checked against the store (not kept)
    static const char blob8 [] = "\x81\xd9\x04" "blob\xa3xyz";
    s_add_frame (&buf, blob8, sizeof blob8 - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), -1);
    static const char blob16 [] = "\x81\xda\x00\x04" "blob\xa3xyz";
    s_add_frame (&buf, blob16, sizeof blob16 - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), -1);
    char ref [80] = "\x81\xd9\x04" "blob\xd9\x40";
    memset (ref + 9, 'a', 64);
    s_add_frame (&buf, ref, 9 + 64, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (!kept && req.items);
    //  "blob" inside a nested map or as a value is just data: kept as sent
    static const char nested [] = "\x82\xa1n\x81\xa4" "blob\x01\xa1v\xa4" "blob";
    s_add_frame (&buf, nested, sizeof nested - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), 0);
    CHECK (kept);
    //  errors are the tree decoder's: a string key missing its bytes, a non-map item
    static const char cut [] = "\x81\xa5" "ab";
    s_add_frame (&buf, cut, sizeof cut - 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), -1);
    static const char num [] = "\x05";
    s_add_frame (&buf, num, 1, 1);
    CHECK_INT (s_decode_both (&req, &buf, &kept), -1);
    ufo_bb_request_reset (&req);
    ufo_buf_free (&buf);
    //  the raw writers: smallest positive int or uint64, big-endian; str8 from 32 bytes
    ufo_buf_t mp = { 0 };
    ufo_mp_put_uint (&mp, 127);
    ufo_mp_put_uint (&mp, 0x0102030405060708ull);
    UFO_MP_PUT_LIT (&mp, "0123456789abcdef0123456789abcdef");
    ufo_mp_put_map (&mp, 16);
    CHECK_INT (mp.len, 1 + 9 + 34 + 3);
    CHECK (memcmp (mp.data, "\x7f\xcf\x01\x02\x03\x04\x05\x06\x07\x08\xd9\x20" "0123", 16) == 0);
    CHECK (memcmp (mp.data + 44, "\xde\x00\x10", 3) == 0);
    CHECK_INT (mp.data [mp.len], 0);
    ufo_buf_free (&mp);
    //  topics are cut to the buffer
    char topic [8];
    CHECK_INT (ufo_bb_topic (topic, sizeof topic, "board", 2), 7);
    CHECK_STR (topic, "bb/boar");
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/ufo-bb-wal-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    UFO_RUN (test_vectors);
    UFO_RUN (test_wal_replay_and_torn_tail);
    UFO_RUN (test_wal_middle_corruption);
    UFO_RUN (test_wal_rotation);
    UFO_RUN (test_blob_store);
    UFO_RUN (test_request_decode);
    UFO_RUN (test_request_fast_path);
    nftw (s_dir, s_rm, 16, FTW_DEPTH | FTW_PHYS);
    return UFO_TEST_END ();
}
