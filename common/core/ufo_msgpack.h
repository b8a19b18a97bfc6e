/*  ufo_msgpack.h - msgpack <-> ufo_value_t, strict and bounded.

    The decoder never allocates more than a small constant times the input size (every
    announced element count is checked against the bytes that remain), bounds nesting,
    checks that strings are UTF-8 and map keys are strings, and rejects trailing bytes. */
#ifndef UFO_MSGPACK_H_INCLUDED
#define UFO_MSGPACK_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct {
    size_t max_depth;       //  nesting limit (default 64)
    size_t max_bytes;       //  input size limit, 0 = no limit
} ufo_msgpack_limits_t;

//  Appends the msgpack encoding of value to buf (smallest encodings, str for strings).
void ufo_msgpack_append (ufo_buf_t *buf, const ufo_value_t *value);

//  Decodes exactly one value from data[0..len). Returns a new value owned by the caller,
//  or NULL with err filled in. limits may be NULL for the defaults. bin is decoded as a
//  string if it is valid UTF-8 and rejected otherwise; ext types are rejected.
ufo_value_t *ufo_msgpack_decode (const void *data, size_t len, const ufo_msgpack_limits_t *limits,
                                 ufo_error_t *err);

//  Checks the value at the start of data[0..len) without building it. Returns the bytes it
//  takes when the decoder would read it unchanged: well formed under the decoder's rules with
//  `depth` levels of nesting already used (max_depth 0: the default 64), no map key repeated,
//  no bin, no float32, no uint64 above INT64_MAX (so its re-encoding never takes more bytes
//  than the value does), and no map of more than 32 pairs at any level (the size of the
//  repeated-key check). Returns 0 otherwise (the value is malformed, or decoding would change
//  it, or it is too wide): decode it with ufo_msgpack_decode for the verdict. Trailing bytes
//  after the value are not examined.
size_t ufo_msgpack_scan_plain (const void *data, size_t len, size_t depth, size_t max_depth);

//  The same for a value that must be a map (0 otherwise); *has_key tells whether key (NULL:
//  none) is one of the map's own keys (not those of maps inside it).
size_t ufo_msgpack_scan_plain_map (const void *data, size_t len, size_t depth, size_t max_depth,
                                   const char *key, bool *has_key);

//  --- Low-level writer ------------------------------------------------------------
//  Each call appends one msgpack item (or the head of an array or map, whose items the
//  caller appends next) to buf in its smallest form (docs/PROTOCOL.md 1.2): ints as
//  fixint/uint8..64/int8..64, strings as str (never bin), floats as float64. These are
//  the only msgpack writers of the code base; ufo_msgpack_append, the envelope and the
//  broker's in-place replies are built on them.
void ufo_mp_put_nil (ufo_buf_t *buf);
void ufo_mp_put_bool (ufo_buf_t *buf, bool v);
void ufo_mp_put_int (ufo_buf_t *buf, int64_t v);
void ufo_mp_put_uint (ufo_buf_t *buf, uint64_t v);
void ufo_mp_put_float (ufo_buf_t *buf, double v);
//  Writes len bytes of s as a str (the caller makes sure they are UTF-8).
void ufo_mp_put_str (ufo_buf_t *buf, const char *s, size_t len);
//  The same for a NUL-terminated string.
void ufo_mp_put_cstr (ufo_buf_t *buf, const char *s);
//  Writes a string literal without measuring it at run time.
#define UFO_MP_PUT_LIT(buf, lit) ufo_mp_put_str ((buf), (lit), sizeof (lit) - 1)
//  Writes the head of an array of n items / a map of n pairs.
void ufo_mp_put_array (ufo_buf_t *buf, uint32_t n);
void ufo_mp_put_map (ufo_buf_t *buf, uint32_t n);

//  --- Low-level reader ------------------------------------------------------------
//  A cursor over data[0..len); the only msgpack reader of the code base (the value
//  decoder, the plain scanner, the envelope reader and the broker's in-place bb.add reader
//  are built on it). Each ufo_mp_read_* reads one item (or the head of an array, map, str
//  or bin) and returns 0, or an error code:
//    UFO_E_TRUNCATED  the input ends before or inside the item's head: r->p is left at the
//                     end of the input (the offset where reading stopped);
//    UFO_E_TYPE       the next item is of another type (nothing consumed);
//    UFO_E_RANGE      (ufo_mp_read_int) a uint64 above INT64_MAX (nothing consumed).
//  Lengths and counts announced by a head are not checked against the remaining bytes:
//  ufo_mp_take checks a body, and a caller limits counts before it allocates.

typedef struct {
    const uint8_t *start;           //  first byte of the input (for offsets)
    const uint8_t *p;               //  next byte to read
    const uint8_t *end;             //  one past the last byte
} ufo_mp_reader_t;

//  What a lead byte announces.
typedef enum {
    UFO_MP_INVALID,                 //  0xc1, never used
    UFO_MP_NIL, UFO_MP_BOOL, UFO_MP_INT, UFO_MP_FLOAT, UFO_MP_STR, UFO_MP_BIN,
    UFO_MP_ARRAY, UFO_MP_MAP, UFO_MP_EXT
} ufo_mp_kind_t;

//  Starts a reader over data[0..len) (data may be NULL when len is 0).
static inline void
ufo_mp_reader_init (ufo_mp_reader_t *r, const void *data, size_t len)
{
    r->start = r->p = (const uint8_t *) data;
    r->end = r->p + (data ? len : 0);
}

//  Bytes not yet read, and the offset of the next byte.
static inline size_t ufo_mp_left (const ufo_mp_reader_t *r) { return (size_t) (r->end - r->p); }
static inline size_t ufo_mp_offset (const ufo_mp_reader_t *r) { return (size_t) (r->p - r->start); }

//  The kind of item a lead byte starts, and its name for error messages ("int", "str" ...,
//  "invalid byte" for 0xc1).
extern const uint8_t ufo_mp_kinds_ [256];
static inline ufo_mp_kind_t ufo_mp_kind (uint8_t lead) { return (ufo_mp_kind_t) ufo_mp_kinds_ [lead]; }
const char *ufo_mp_kind_name (uint8_t lead);

//  Reads an n-byte (n <= 8) big-endian number (the payload of a head).
static inline int
ufo_mp_read_be (ufo_mp_reader_t *r, size_t n, uint64_t *out)
{
    if (ufo_mp_left (r) < n) {
        r->p = r->end;
        return UFO_E_TRUNCATED;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | r->p [i];
    r->p += n;
    *out = v;
    return 0;
}

//  Reads a head of the form fixN (lead & ~fixmask == fix) / 8-, 16-, 32-bit lengths at
//  leads l8 (0: none), l16 and l32. Shared by the str, bin, array and map readers.
static inline int
ufo_mp_read_head_ (ufo_mp_reader_t *r, uint8_t fixmask, uint8_t fix, uint8_t l8, uint8_t l16, uint8_t l32,
                   uint32_t *n)
{
    if (r->p >= r->end) {
        r->p = r->end;
        return UFO_E_TRUNCATED;
    }
    uint8_t b = *r->p;
    if (fixmask && (b & (uint8_t) ~fixmask) == fix) {
        r->p++;
        *n = b & fixmask;
        return 0;
    }
    size_t bytes = (l8 && b == l8) ? 1 : b == l16 ? 2 : b == l32 ? 4 : 0;
    if (!bytes)
        return UFO_E_TYPE;
    r->p++;
    uint64_t v = 0;
    int rc = ufo_mp_read_be (r, bytes, &v);
    *n = (uint32_t) v;
    return rc;
}

//  Str head (fixstr, str8/16/32), bin head, array head, map head: *n is the length/count.
static inline int
ufo_mp_read_str_head (ufo_mp_reader_t *r, uint32_t *n) { return ufo_mp_read_head_ (r, 0x1f, 0xa0, 0xd9, 0xda, 0xdb, n); }
static inline int
ufo_mp_read_bin_head (ufo_mp_reader_t *r, uint32_t *n) { return ufo_mp_read_head_ (r, 0, 0, 0xc4, 0xc5, 0xc6, n); }
static inline int
ufo_mp_read_array (ufo_mp_reader_t *r, uint32_t *n) { return ufo_mp_read_head_ (r, 0x0f, 0x90, 0, 0xdc, 0xdd, n); }
static inline int
ufo_mp_read_map (ufo_mp_reader_t *r, uint32_t *n) { return ufo_mp_read_head_ (r, 0x0f, 0x80, 0, 0xde, 0xdf, n); }

//  Takes the next n bytes (a str or bin body): *out points into the input. UFO_E_TRUNCATED
//  (r->p at the end) when fewer remain.
static inline int
ufo_mp_take (ufo_mp_reader_t *r, size_t n, const uint8_t **out)
{
    if (n > ufo_mp_left (r)) {
        r->p = r->end;
        return UFO_E_TRUNCATED;
    }
    *out = r->p;
    r->p += n;
    return 0;
}

//  A whole str: head and body (the content is not checked: see ufo_utf8_valid).
static inline int
ufo_mp_read_str (ufo_mp_reader_t *r, const char **s, size_t *len)
{
    uint32_t n = 0;
    const uint8_t *body = NULL;
    int rc = ufo_mp_read_str_head (r, &n);
    if (rc == 0 && (rc = ufo_mp_take (r, n, &body)) == 0) {
        *s = (const char *) body;
        *len = n;
    }
    return rc;
}

//  nil, bool, float32/64 (widened to double), int (any width; UFO_E_RANGE for a uint64 above
//  INT64_MAX), uint (positive fixint and uint8..64 only).
int ufo_mp_read_nil (ufo_mp_reader_t *r);
int ufo_mp_read_bool (ufo_mp_reader_t *r, bool *out);
int ufo_mp_read_float (ufo_mp_reader_t *r, double *out);
int ufo_mp_read_uint (ufo_mp_reader_t *r, uint64_t *out);

static inline int
ufo_mp_read_int (ufo_mp_reader_t *r, int64_t *out)
{
    if (r->p >= r->end) {
        r->p = r->end;
        return UFO_E_TRUNCATED;
    }
    uint8_t b = *r->p;
    if (b <= 0x7f || b >= 0xe0) {
        r->p++;
        *out = (int8_t) b;
        return 0;
    }
    if (b < 0xcc || b > 0xd3)
        return UFO_E_TYPE;
    size_t bytes = (size_t) 1 << ((b - 0xcc) & 3);
    if (b == 0xcf && ufo_mp_left (r) > 8 && r->p [1] & 0x80)
        return UFO_E_RANGE;
    r->p++;
    uint64_t v = 0;
    int rc = ufo_mp_read_be (r, bytes, &v);
    if (b <= 0xcf)
        *out = (int64_t) v;
    else
        *out = bytes == 1 ? (int8_t) v : bytes == 2 ? (int16_t) v : bytes == 4 ? (int32_t) v : (int64_t) v;
    return rc;
}

#endif
