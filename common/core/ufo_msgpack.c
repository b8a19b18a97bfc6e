/*  ufo_msgpack.c - msgpack encoder and strict, bounded decoder for ufo_value_t.

    Decoding rules (see docs/PROTOCOL.md):
    - every announced length or count is checked against the bytes that remain before
      anything is allocated (an element takes at least one byte), so a 5-byte frame can
      never ask for gigabytes;
    - str and bin must be valid UTF-8 (bin is accepted for peers that send text as bin);
    - map keys must be strings; a repeated key keeps the last value;
    - ext types and the reserved byte 0xc1 are rejected;
    - uint64 values above INT64_MAX become floats (ufo_value_t integers are signed);
    - exactly one value: trailing bytes are an error. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_msgpack.h"
#include "ufo_utf8.h"
#include "ufo_value.h"

#define UFO_MSGPACK_DEFAULT_DEPTH 64

//  --- Low-level writer -----------------------------------------------------------
//  Every writer reserves once and writes in place (the broker's hot path writes a dozen
//  pieces per message).

static inline uint8_t *
s_room (ufo_buf_t *buf, size_t n)
{
    if (UFO_UNLIKELY (!buf->data || buf->len + n + 1 > buf->cap))
        ufo_buf_reserve (buf, n);
    return (uint8_t *) buf->data + buf->len;
}

static inline void
s_done (ufo_buf_t *buf, const uint8_t *end)
{
    buf->len = (size_t) (end - (const uint8_t *) buf->data);
    buf->data [buf->len] = 0;
}

//  Writes lead and the low `bytes` bytes of v, big-endian.
static inline uint8_t *
s_put_be (uint8_t *p, uint8_t lead, uint64_t v, int bytes)
{
    *p++ = lead;
    for (int i = bytes - 1; i >= 0; i--)
        *p++ = (uint8_t) (v >> (8 * i));
    return p;
}

//  A head: fix | n up to fixmax (fixmax 0: no fix form), else l8 (0: none), l16, l32.
static inline uint8_t *
s_put_head (uint8_t *p, uint8_t fix, uint32_t fixmax, uint8_t l8, uint8_t l16, uint8_t l32, uint32_t n)
{
    if (fixmax && n <= fixmax)
        *p++ = (uint8_t) (fix | n);
    else
    if (l8 && n <= 0xff)
        p = s_put_be (p, l8, n, 1);
    else
    if (n <= 0xffff)
        p = s_put_be (p, l16, n, 2);
    else
        p = s_put_be (p, l32, n, 4);
    return p;
}

void
ufo_mp_put_nil (ufo_buf_t *buf)
{
    uint8_t *p = s_room (buf, 1);
    *p++ = 0xc0;
    s_done (buf, p);
}

void
ufo_mp_put_bool (ufo_buf_t *buf, bool v)
{
    uint8_t *p = s_room (buf, 1);
    *p++ = v ? 0xc3 : 0xc2;
    s_done (buf, p);
}

void
ufo_mp_put_uint (ufo_buf_t *buf, uint64_t v)
{
    uint8_t *p = s_room (buf, 9);
    if (v < 0x80)
        *p++ = (uint8_t) v;
    else
    if (v <= 0xff)
        p = s_put_be (p, 0xcc, v, 1);
    else
    if (v <= 0xffff)
        p = s_put_be (p, 0xcd, v, 2);
    else
    if (v <= 0xffffffffu)
        p = s_put_be (p, 0xce, v, 4);
    else
        p = s_put_be (p, 0xcf, v, 8);
    s_done (buf, p);
}

void
ufo_mp_put_int (ufo_buf_t *buf, int64_t v)
{
    if (v >= 0) {
        ufo_mp_put_uint (buf, (uint64_t) v);
        return;
    }
    uint8_t *p = s_room (buf, 9);
    if (v >= -32)
        *p++ = (uint8_t) (int8_t) v;
    else
    if (v >= INT8_MIN)
        p = s_put_be (p, 0xd0, (uint64_t) v, 1);
    else
    if (v >= INT16_MIN)
        p = s_put_be (p, 0xd1, (uint64_t) v, 2);
    else
    if (v >= INT32_MIN)
        p = s_put_be (p, 0xd2, (uint64_t) v, 4);
    else
        p = s_put_be (p, 0xd3, (uint64_t) v, 8);
    s_done (buf, p);
}

void
ufo_mp_put_float (ufo_buf_t *buf, double v)
{
    uint64_t bits;
    memcpy (&bits, &v, 8);
    s_done (buf, s_put_be (s_room (buf, 9), 0xcb, bits, 8));
}

void
ufo_mp_put_str (ufo_buf_t *buf, const char *s, size_t len)
{
    assert (len <= UINT32_MAX);
    uint8_t *p = s_put_head (s_room (buf, len + 5), 0xa0, 31, 0xd9, 0xda, 0xdb, (uint32_t) len);
    if (len)
        memcpy (p, s, len);
    s_done (buf, p + len);
}

void
ufo_mp_put_cstr (ufo_buf_t *buf, const char *s)
{
    ufo_mp_put_str (buf, s, strlen (s));
}

void
ufo_mp_put_array (ufo_buf_t *buf, uint32_t n)
{
    s_done (buf, s_put_head (s_room (buf, 5), 0x90, 15, 0, 0xdc, 0xdd, n));
}

void
ufo_mp_put_map (ufo_buf_t *buf, uint32_t n)
{
    s_done (buf, s_put_head (s_room (buf, 5), 0x80, 15, 0, 0xde, 0xdf, n));
}

//  --- Low-level reader ------------------------------------------------------------

//  The kind of every lead byte (ufo_mp_kind).
#define X UFO_MP_INVALID
#define N UFO_MP_NIL
#define B UFO_MP_BOOL
#define I UFO_MP_INT
#define F UFO_MP_FLOAT
#define S UFO_MP_STR
#define Y UFO_MP_BIN
#define A UFO_MP_ARRAY
#define M UFO_MP_MAP
#define E UFO_MP_EXT
const uint8_t ufo_mp_kinds_ [256] = {
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  00..0f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  10..1f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  20..2f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  30..3f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  40..4f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  50..5f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  60..6f
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  70..7f
    M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,   //  80..8f
    A, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A,   //  90..9f
    S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,   //  a0..af
    S, S, S, S, S, S, S, S, S, S, S, S, S, S, S, S,   //  b0..bf
    N, X, B, B, Y, Y, Y, E, E, E, F, F, I, I, I, I,   //  c0..cf
    I, I, I, I, E, E, E, E, E, S, S, S, A, A, M, M,   //  d0..df
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  e0..ef
    I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I,   //  f0..ff
};
#undef X
#undef N
#undef B
#undef I
#undef F
#undef S
#undef Y
#undef A
#undef M
#undef E

const char *
ufo_mp_kind_name (uint8_t lead)
{
    static const char *names [] = {
        "invalid byte", "nil", "bool", "int", "float", "str", "bin", "array", "map", "ext"
    };
    return names [ufo_mp_kind (lead)];
}

//  Checks that a byte is there and that it is one of lead1, lead2 (consumed when it is).
static int
s_read_lead (ufo_mp_reader_t *r, uint8_t lead1, uint8_t lead2, uint8_t *b)
{
    if (r->p >= r->end)
        return UFO_E_TRUNCATED;
    if (*r->p != lead1 && *r->p != lead2)
        return UFO_E_TYPE;
    *b = *r->p++;
    return 0;
}

int
ufo_mp_read_nil (ufo_mp_reader_t *r)
{
    uint8_t b;
    return s_read_lead (r, 0xc0, 0xc0, &b);
}

int
ufo_mp_read_bool (ufo_mp_reader_t *r, bool *out)
{
    uint8_t b = 0;
    int rc = s_read_lead (r, 0xc2, 0xc3, &b);
    if (rc == 0)
        *out = b == 0xc3;
    return rc;
}

int
ufo_mp_read_float (ufo_mp_reader_t *r, double *out)
{
    uint8_t b = 0;
    uint64_t v = 0;
    int rc = s_read_lead (r, 0xca, 0xcb, &b);
    if (rc == 0 && (rc = ufo_mp_read_be (r, b == 0xca ? 4 : 8, &v)) == 0) {
        if (b == 0xca) {
            uint32_t bits = (uint32_t) v;
            float f;
            memcpy (&f, &bits, 4);
            *out = (double) f;
        }
        else
            memcpy (out, &v, 8);
    }
    return rc;
}

int
ufo_mp_read_uint (ufo_mp_reader_t *r, uint64_t *out)
{
    if (r->p >= r->end)
        return UFO_E_TRUNCATED;
    uint8_t b = *r->p;
    if (b <= 0x7f) {
        r->p++;
        *out = b;
        return 0;
    }
    if (b < 0xcc || b > 0xcf)
        return UFO_E_TYPE;
    r->p++;
    return ufo_mp_read_be (r, (size_t) 1 << (b - 0xcc), out);
}

//  --- Encoder of values -----------------------------------------------------------

void
ufo_msgpack_append (ufo_buf_t *buf, const ufo_value_t *value)
{
    assert (buf);
    ufo_value_view_t view;
    ufo_value_view (value, &view);
    switch (view.type) {
        case UFO_TNULL:
            ufo_mp_put_nil (buf);
            break;
        case UFO_TBOOL:
            ufo_mp_put_bool (buf, view.u.b);
            break;
        case UFO_TINT:
            ufo_mp_put_int (buf, view.u.i);
            break;
        case UFO_TFLOAT:
            ufo_mp_put_float (buf, view.u.f);
            break;
        case UFO_TSTRING:
            ufo_mp_put_str (buf, view.u.s, view.len);
            break;
        case UFO_TLIST:
            ufo_mp_put_array (buf, (uint32_t) view.len);
            for (size_t i = 0; i < view.len; i++)
                ufo_msgpack_append (buf, view.u.items [i]);
            break;
        case UFO_TMAP: {
            ufo_mp_put_map (buf, (uint32_t) view.len);
            const ufo_value_entry_t *e = view.u.entries;
            for (size_t i = 0; i < view.len; i++, e++) {
                ufo_mp_put_str (buf, ufo_value_entry_key (e), e->keylen);
                ufo_msgpack_append (buf, e->value);
            }
            break;
        }
    }
}

//  --- Decoder ------------------------------------------------------------------

typedef struct {
    ufo_mp_reader_t r;
    size_t depth;
    size_t max_depth;
    ufo_error_t *err;
} s_decoder_t;

static int
s_fail (s_decoder_t *self, int code, const char *what)
{
    size_t offset = ufo_mp_offset (&self->r);
    return ufo_error_set_at (self->err, code, offset, "msgpack: %s at byte %zu", what, offset);
}

//  Reports a failed read of a head or number (the only error the readers give here, as the
//  kind was checked first, is truncation).
static void *
s_cut (s_decoder_t *self)
{
    s_fail (self, UFO_E_TRUNCATED, "input ends inside a length or number");
    return NULL;
}

//  Reads a string body of len bytes; returns a pointer into the input or NULL on error.
static const char *
s_read_str_body (s_decoder_t *self, uint32_t len)
{
    const uint8_t *s = NULL;
    if (ufo_mp_take (&self->r, len, &s)) {
        s_fail (self, UFO_E_TRUNCATED, "string longer than the remaining input");
        return NULL;
    }
    if (!ufo_utf8_valid (s, len)) {
        self->r.p = s;                  //  the error's offset: the string's first byte
        s_fail (self, UFO_E_UTF8, "string is not valid UTF-8");
        return NULL;
    }
    return (const char *) s;
}

static ufo_value_t *s_decode (s_decoder_t *self);

static ufo_value_t *
s_decode_list (s_decoder_t *self, uint32_t count)
{
    if (count > ufo_mp_left (&self->r)) {
        s_fail (self, UFO_E_TRUNCATED, "array announces more elements than bytes remain");
        return NULL;
    }
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nesting deeper than the limit");
        return NULL;
    }
    ufo_value_t *list = ufo_value_new_list ();
    for (uint32_t i = 0; i < count; i++) {
        ufo_value_t *item = s_decode (self);
        if (!item) {
            ufo_value_destroy (&list);
            return NULL;
        }
        ufo_value_list_push (list, &item);
    }
    self->depth--;
    return list;
}

static ufo_value_t *
s_decode_map (s_decoder_t *self, uint32_t count)
{
    if (count > ufo_mp_left (&self->r) / 2) {
        s_fail (self, UFO_E_TRUNCATED, "map announces more pairs than bytes remain");
        return NULL;
    }
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nesting deeper than the limit");
        return NULL;
    }
    ufo_value_t *map = ufo_value_new_map ();
    for (uint32_t i = 0; i < count; i++) {
        uint32_t keylen = 0;
        const char *key = NULL;
        if (!ufo_mp_left (&self->r))
            s_fail (self, UFO_E_TRUNCATED, "input ends where a value was expected");
        else {
            int rc = ufo_mp_read_str_head (&self->r, &keylen);
            if (rc == UFO_E_TYPE && ufo_mp_kind (*self->r.p) == UFO_MP_BIN)
                rc = ufo_mp_read_bin_head (&self->r, &keylen);      //  bin keys: text as bin
            if (rc == UFO_E_TYPE)
                s_fail (self, UFO_E_TYPE, "map key is not a string");
            else
            if (rc)
                s_cut (self);
            else
                key = s_read_str_body (self, keylen);
        }
        ufo_value_t *value = key ? s_decode (self) : NULL;
        if (!value) {
            ufo_value_destroy (&map);
            return NULL;
        }
        ufo_value_map_setn (map, key, keylen, &value);
    }
    self->depth--;
    return map;
}

static ufo_value_t *
s_decode (s_decoder_t *self)
{
    ufo_mp_reader_t *r = &self->r;
    if (!ufo_mp_left (r)) {
        s_fail (self, UFO_E_TRUNCATED, "input ends where a value was expected");
        return NULL;
    }
    uint8_t tag = *r->p;
    int64_t i = 0;
    uint64_t u = 0;
    uint32_t n = 0;
    double f = 0;
    bool b = false;
    switch (ufo_mp_kind (tag)) {
        case UFO_MP_NIL:
            r->p++;
            return ufo_value_new_null ();
        case UFO_MP_BOOL:
            return ufo_mp_read_bool (r, &b) ? s_cut (self) : ufo_value_new_bool (b);
        case UFO_MP_INT:
            if (tag == 0xcf)            //  uint64 above INT64_MAX becomes a float
                return ufo_mp_read_uint (r, &u) ? s_cut (self)
                     : u <= (uint64_t) INT64_MAX ? ufo_value_new_int ((int64_t) u) : ufo_value_new_float ((double) u);
            return ufo_mp_read_int (r, &i) ? s_cut (self) : ufo_value_new_int (i);
        case UFO_MP_FLOAT:
            return ufo_mp_read_float (r, &f) ? s_cut (self) : ufo_value_new_float (f);
        case UFO_MP_STR:
        case UFO_MP_BIN: {
            if ((tag == 0xc4 || tag == 0xc5 || tag == 0xc6 ? ufo_mp_read_bin_head (r, &n)
                                                           : ufo_mp_read_str_head (r, &n)))
                return s_cut (self);
            const char *s = s_read_str_body (self, n);
            return s ? ufo_value_new_stringn (s, n) : NULL;
        }
        case UFO_MP_ARRAY:
            return ufo_mp_read_array (r, &n) ? s_cut (self) : s_decode_list (self, n);
        case UFO_MP_MAP:
            return ufo_mp_read_map (r, &n) ? s_cut (self) : s_decode_map (self, n);
        case UFO_MP_EXT:
            s_fail (self, UFO_E_TYPE, "ext types are not accepted");
            return NULL;
        default:
            s_fail (self, UFO_E_SYNTAX, "reserved byte 0xc1");
            return NULL;
    }
}

ufo_value_t *
ufo_msgpack_decode (const void *data, size_t len, const ufo_msgpack_limits_t *limits,
                    ufo_error_t *err)
{
    ufo_error_clear (err);
    if (!data && len) {
        ufo_error_set (err, UFO_E_INVALID, "msgpack: no data");
        return NULL;
    }
    if (limits && limits->max_bytes && len > limits->max_bytes) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "msgpack: %zu bytes exceeds the limit of %zu",
                       len, limits->max_bytes);
        return NULL;
    }
    s_decoder_t self = {
        .depth = 0, .max_depth = limits && limits->max_depth ? limits->max_depth : UFO_MSGPACK_DEFAULT_DEPTH,
        .err = err
    };
    ufo_mp_reader_init (&self.r, data, len);
    ufo_value_t *value = s_decode (&self);
    if (value && ufo_mp_left (&self.r)) {
        s_fail (&self, UFO_E_SYNTAX, "trailing bytes after the value");
        ufo_value_destroy (&value);
    }
    return value;
}

//  --- Plain scanner ---------------------------------------------------------------
//  Accepts a subset of what the decoder accepts: the values that the decoder would read
//  without changing them (no repeated map key, no bin, no uint64 above INT64_MAX, no float32,
//  which the decoder widens and the encoder writes as float64), with maps of at most
//  S_SCAN_KEYS pairs (the repeated-key check's table), so that
//  their bytes can be kept and forwarded as they are.

#define S_SCAN_KEYS 32                  //  maps with more pairs are left to the decoder

typedef struct {
    ufo_mp_reader_t r;
    size_t depth;
    size_t max_depth;
    const char *key;                //  a key to look for in the outermost map, or NULL
    size_t key_len;
    size_t key_depth;               //  depth inside the outermost map
    bool key_found;
} s_scan_t;

static bool s_scan (s_scan_t *self);

//  Reads a str (not bin); the body must be UTF-8.
static inline bool
s_scan_str (s_scan_t *self, const char **s, size_t *len)
{
    return ufo_mp_read_str (&self->r, s, len) == 0 && ufo_utf8_valid (*s, *len);
}

static bool
s_scan_map (s_scan_t *self, uint32_t count)
{
    if (count > S_SCAN_KEYS || count > ufo_mp_left (&self->r) / 2 || ++self->depth > self->max_depth)
        return false;
    const char *keys [S_SCAN_KEYS];
    size_t lens [S_SCAN_KEYS];
    for (uint32_t i = 0; i < count; i++) {
        if (!s_scan_str (self, &keys [i], &lens [i]))
            return false;
        for (uint32_t j = 0; j < i; j++)
            if (lens [j] == lens [i] && memcmp (keys [j], keys [i], lens [i]) == 0)
                return false;
        if (self->key && self->depth == self->key_depth && lens [i] == self->key_len
        &&  memcmp (keys [i], self->key, self->key_len) == 0)
            self->key_found = true;
        if (!s_scan (self))
            return false;
    }
    self->depth--;
    return true;
}

static bool
s_scan_list (s_scan_t *self, uint32_t count)
{
    if (count > ufo_mp_left (&self->r) || ++self->depth > self->max_depth)
        return false;
    for (uint32_t i = 0; i < count; i++)
        if (!s_scan (self))
            return false;
    self->depth--;
    return true;
}

static bool
s_scan (s_scan_t *self)
{
    ufo_mp_reader_t *r = &self->r;
    if (!ufo_mp_left (r))
        return false;
    uint8_t tag = *r->p;
    int64_t i;
    uint32_t n;
    double f;
    bool b;
    const char *s;
    size_t len;
    switch (ufo_mp_kind (tag)) {
        case UFO_MP_NIL:   return ufo_mp_read_nil (r) == 0;
        case UFO_MP_BOOL:  return ufo_mp_read_bool (r, &b) == 0;
        case UFO_MP_INT:   return ufo_mp_read_int (r, &i) == 0;      //  not above INT64_MAX
        case UFO_MP_FLOAT: return tag == 0xcb && ufo_mp_read_float (r, &f) == 0;
        case UFO_MP_STR:   return s_scan_str (self, &s, &len);
        case UFO_MP_ARRAY: return ufo_mp_read_array (r, &n) == 0 && s_scan_list (self, n);
        case UFO_MP_MAP:   return ufo_mp_read_map (r, &n) == 0 && s_scan_map (self, n);
        default:           return false;   //  bin, ext, 0xc1
    }
}

size_t
ufo_msgpack_scan_plain (const void *data, size_t len, size_t depth, size_t max_depth)
{
    s_scan_t self = { .depth = depth, .max_depth = max_depth ? max_depth : UFO_MSGPACK_DEFAULT_DEPTH };
    ufo_mp_reader_init (&self.r, data, len);
    if (!data || !s_scan (&self))
        return 0;
    return ufo_mp_offset (&self.r);
}

size_t
ufo_msgpack_scan_plain_map (const void *data, size_t len, size_t depth, size_t max_depth, const char *key,
                            bool *has_key)
{
    *has_key = false;
    if (!data || len == 0 || ufo_mp_kind (*(const uint8_t *) data) != UFO_MP_MAP)
        return 0;
    s_scan_t self = { .depth = depth, .max_depth = max_depth ? max_depth : UFO_MSGPACK_DEFAULT_DEPTH,
                      .key = key, .key_len = key ? strlen (key) : 0, .key_depth = depth + 1 };
    ufo_mp_reader_init (&self.r, data, len);
    if (!s_scan (&self))
        return 0;
    *has_key = self.key_found;
    return ufo_mp_offset (&self.r);
}
