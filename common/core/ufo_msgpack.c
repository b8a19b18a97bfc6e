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

#define UFO_MSGPACK_DEFAULT_DEPTH 64

//  --- Encoder ------------------------------------------------------------------

static inline void
s_put8 (ufo_buf_t *buf, uint8_t tag, uint8_t v)
{
    uint8_t out [2] = { tag, v };
    ufo_buf_append (buf, out, 2);
}

static inline void
s_put16 (ufo_buf_t *buf, uint8_t tag, uint16_t v)
{
    uint8_t out [3] = { tag, (uint8_t) (v >> 8), (uint8_t) v };
    ufo_buf_append (buf, out, 3);
}

static inline void
s_put32 (ufo_buf_t *buf, uint8_t tag, uint32_t v)
{
    uint8_t out [5] = { tag, (uint8_t) (v >> 24), (uint8_t) (v >> 16), (uint8_t) (v >> 8), (uint8_t) v };
    ufo_buf_append (buf, out, 5);
}

static inline void
s_put64 (ufo_buf_t *buf, uint8_t tag, uint64_t v)
{
    uint8_t out [9] = { tag };
    for (int i = 0; i < 8; i++)
        out [1 + i] = (uint8_t) (v >> (56 - 8 * i));
    ufo_buf_append (buf, out, 9);
}

static void
s_put_str (ufo_buf_t *buf, const char *s, size_t len)
{
    if (len < 32) {
        uint8_t tag = (uint8_t) (0xA0 | len);
        ufo_buf_append (buf, &tag, 1);
    }
    else
    if (len <= 0xFF)
        s_put8 (buf, 0xD9, (uint8_t) len);
    else
    if (len <= 0xFFFF)
        s_put16 (buf, 0xDA, (uint16_t) len);
    else
        s_put32 (buf, 0xDB, (uint32_t) len);
    ufo_buf_append (buf, s, len);
}

static void
s_put_int (ufo_buf_t *buf, int64_t i)
{
    if (i >= 0) {
        if (i < 128) {
            uint8_t tag = (uint8_t) i;
            ufo_buf_append (buf, &tag, 1);
        }
        else
        if (i <= 0xFF)
            s_put8 (buf, 0xCC, (uint8_t) i);
        else
        if (i <= 0xFFFF)
            s_put16 (buf, 0xCD, (uint16_t) i);
        else
        if (i <= 0xFFFFFFFFLL)
            s_put32 (buf, 0xCE, (uint32_t) i);
        else
            s_put64 (buf, 0xCF, (uint64_t) i);
    }
    else {
        if (i >= -32) {
            uint8_t tag = (uint8_t) (int8_t) i;
            ufo_buf_append (buf, &tag, 1);
        }
        else
        if (i >= INT8_MIN)
            s_put8 (buf, 0xD0, (uint8_t) (int8_t) i);
        else
        if (i >= INT16_MIN)
            s_put16 (buf, 0xD1, (uint16_t) (int16_t) i);
        else
        if (i >= INT32_MIN)
            s_put32 (buf, 0xD2, (uint32_t) (int32_t) i);
        else
            s_put64 (buf, 0xD3, (uint64_t) i);
    }
}

void
ufo_msgpack_append (ufo_buf_t *buf, const ufo_value_t *value)
{
    assert (buf);
    ufo_value_view_t view;
    ufo_value_view (value, &view);
    switch (view.type) {
        case UFO_TNULL: {
            uint8_t tag = 0xC0;
            ufo_buf_append (buf, &tag, 1);
            break;
        }
        case UFO_TBOOL: {
            uint8_t tag = view.u.b ? 0xC3 : 0xC2;
            ufo_buf_append (buf, &tag, 1);
            break;
        }
        case UFO_TINT:
            s_put_int (buf, view.u.i);
            break;
        case UFO_TFLOAT: {
            double f = view.u.f;
            uint64_t bits;
            memcpy (&bits, &f, 8);
            s_put64 (buf, 0xCB, bits);
            break;
        }
        case UFO_TSTRING:
            s_put_str (buf, view.u.s, view.len);
            break;
        case UFO_TLIST: {
            size_t n = view.len;
            if (n < 16) {
                uint8_t tag = (uint8_t) (0x90 | n);
                ufo_buf_append (buf, &tag, 1);
            }
            else
            if (n <= 0xFFFF)
                s_put16 (buf, 0xDC, (uint16_t) n);
            else
                s_put32 (buf, 0xDD, (uint32_t) n);
            for (size_t i = 0; i < n; i++)
                ufo_msgpack_append (buf, view.u.items [i]);
            break;
        }
        case UFO_TMAP: {
            size_t n = view.len;
            if (n < 16) {
                uint8_t tag = (uint8_t) (0x80 | n);
                ufo_buf_append (buf, &tag, 1);
            }
            else
            if (n <= 0xFFFF)
                s_put16 (buf, 0xDE, (uint16_t) n);
            else
                s_put32 (buf, 0xDF, (uint32_t) n);
            const ufo_value_entry_t *e = view.u.entries;
            for (size_t i = 0; i < n; i++, e++) {
                s_put_str (buf, ufo_value_entry_key (e), e->keylen);
                ufo_msgpack_append (buf, e->value);
            }
            break;
        }
    }
}

//  --- Decoder ------------------------------------------------------------------

typedef struct {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    size_t depth;
    size_t max_depth;
    ufo_error_t *err;
} s_decoder_t;

static int
s_fail (s_decoder_t *self, int code, const char *what)
{
    size_t offset = (size_t) (self->p - self->start);
    return ufo_error_set_at (self->err, code, offset, "msgpack: %s at byte %zu", what, offset);
}

static inline size_t
s_left (const s_decoder_t *self)
{
    return (size_t) (self->end - self->p);
}

//  Reads an n-byte big-endian unsigned integer; fails if fewer bytes remain.
static int
s_read_be (s_decoder_t *self, size_t n, uint64_t *out)
{
    if (s_left (self) < n) {
        self->p = self->end;
        return s_fail (self, UFO_E_TRUNCATED, "input ends inside a length or number");
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | self->p [i];
    self->p += n;
    *out = v;
    return 0;
}

//  Reads a string body of len bytes; returns a pointer into the input or NULL on error.
static const char *
s_read_str_body (s_decoder_t *self, uint64_t len)
{
    if (len > s_left (self)) {
        self->p = self->end;
        s_fail (self, UFO_E_TRUNCATED, "string longer than the remaining input");
        return NULL;
    }
    const char *s = (const char *) self->p;
    if (!ufo_utf8_valid (self->p, (size_t) len)) {
        s_fail (self, UFO_E_UTF8, "string is not valid UTF-8");
        return NULL;
    }
    self->p += len;
    return s;
}

//  If the next value is a string header, returns its length in *len (0 = ok, -1 = error,
//  1 = not a string).
static int
s_str_header (s_decoder_t *self, uint64_t *len)
{
    if (!s_left (self))
        return s_fail (self, UFO_E_TRUNCATED, "input ends where a value was expected");
    uint8_t tag = *self->p;
    if ((tag & 0xE0) == 0xA0) {
        self->p++;
        *len = tag & 0x1F;
        return 0;
    }
    size_t n = 0;
    switch (tag) {
        case 0xD9: case 0xC4: n = 1; break;
        case 0xDA: case 0xC5: n = 2; break;
        case 0xDB: case 0xC6: n = 4; break;
        default: return 1;
    }
    self->p++;
    return s_read_be (self, n, len);
}

static ufo_value_t *s_decode (s_decoder_t *self);

static ufo_value_t *
s_decode_list (s_decoder_t *self, uint64_t count)
{
    if (count > s_left (self)) {
        s_fail (self, UFO_E_TRUNCATED, "array announces more elements than bytes remain");
        return NULL;
    }
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nesting deeper than the limit");
        return NULL;
    }
    ufo_value_t *list = ufo_value_new_list ();
    for (uint64_t i = 0; i < count; i++) {
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
s_decode_map (s_decoder_t *self, uint64_t count)
{
    if (count > s_left (self) / 2) {
        s_fail (self, UFO_E_TRUNCATED, "map announces more pairs than bytes remain");
        return NULL;
    }
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nesting deeper than the limit");
        return NULL;
    }
    ufo_value_t *map = ufo_value_new_map ();
    for (uint64_t i = 0; i < count; i++) {
        uint64_t keylen = 0;       //  set by s_str_header when it returns 0 (gcc -O3 cannot tell)
        int rc = s_str_header (self, &keylen);
        if (rc == 1)
            s_fail (self, UFO_E_TYPE, "map key is not a string");
        const char *key = rc == 0 ? s_read_str_body (self, keylen) : NULL;
        ufo_value_t *value = key ? s_decode (self) : NULL;
        if (!value) {
            ufo_value_destroy (&map);
            return NULL;
        }
        ufo_value_map_setn (map, key, (size_t) keylen, &value);
    }
    self->depth--;
    return map;
}

static ufo_value_t *
s_decode (s_decoder_t *self)
{
    if (!s_left (self)) {
        s_fail (self, UFO_E_TRUNCATED, "input ends where a value was expected");
        return NULL;
    }
    uint8_t tag = *self->p;
    if (tag <= 0x7F) {
        self->p++;
        return ufo_value_new_int (tag);
    }
    if (tag >= 0xE0) {
        self->p++;
        return ufo_value_new_int ((int8_t) tag);
    }
    if ((tag & 0xF0) == 0x80) {
        self->p++;
        return s_decode_map (self, tag & 0x0F);
    }
    if ((tag & 0xF0) == 0x90) {
        self->p++;
        return s_decode_list (self, tag & 0x0F);
    }
    uint64_t len = 0;              //  set by s_str_header when it returns 0 (gcc -O3 cannot tell)
    int rc = s_str_header (self, &len);
    if (rc < 0)
        return NULL;
    if (rc == 0) {
        const char *s = s_read_str_body (self, len);
        return s ? ufo_value_new_stringn (s, (size_t) len) : NULL;
    }
    self->p++;
    uint64_t v = 0;
    switch (tag) {
        case 0xC0: return ufo_value_new_null ();
        case 0xC2: return ufo_value_new_bool (false);
        case 0xC3: return ufo_value_new_bool (true);
        case 0xCC: return s_read_be (self, 1, &v) ? NULL : ufo_value_new_int ((int64_t) v);
        case 0xCD: return s_read_be (self, 2, &v) ? NULL : ufo_value_new_int ((int64_t) v);
        case 0xCE: return s_read_be (self, 4, &v) ? NULL : ufo_value_new_int ((int64_t) v);
        case 0xCF:
            if (s_read_be (self, 8, &v))
                return NULL;
            return v <= (uint64_t) INT64_MAX ? ufo_value_new_int ((int64_t) v)
                                             : ufo_value_new_float ((double) v);
        case 0xD0: return s_read_be (self, 1, &v) ? NULL : ufo_value_new_int ((int8_t) v);
        case 0xD1: return s_read_be (self, 2, &v) ? NULL : ufo_value_new_int ((int16_t) v);
        case 0xD2: return s_read_be (self, 4, &v) ? NULL : ufo_value_new_int ((int32_t) v);
        case 0xD3: return s_read_be (self, 8, &v) ? NULL : ufo_value_new_int ((int64_t) v);
        case 0xCA: {
            if (s_read_be (self, 4, &v))
                return NULL;
            uint32_t bits = (uint32_t) v;
            float f;
            memcpy (&f, &bits, 4);
            return ufo_value_new_float ((double) f);
        }
        case 0xCB: {
            if (s_read_be (self, 8, &v))
                return NULL;
            double f;
            memcpy (&f, &v, 8);
            return ufo_value_new_float (f);
        }
        case 0xDC: return s_read_be (self, 2, &v) ? NULL : s_decode_list (self, v);
        case 0xDD: return s_read_be (self, 4, &v) ? NULL : s_decode_list (self, v);
        case 0xDE: return s_read_be (self, 2, &v) ? NULL : s_decode_map (self, v);
        case 0xDF: return s_read_be (self, 4, &v) ? NULL : s_decode_map (self, v);
        case 0xD4: case 0xD5: case 0xD6: case 0xD7: case 0xD8:
        case 0xC7: case 0xC8: case 0xC9:
            self->p--;
            s_fail (self, UFO_E_TYPE, "ext types are not accepted");
            return NULL;
        default:
            self->p--;
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
        .start = (const uint8_t *) data, .p = (const uint8_t *) data,
        .end = (const uint8_t *) data + len, .depth = 0,
        .max_depth = limits && limits->max_depth ? limits->max_depth : UFO_MSGPACK_DEFAULT_DEPTH,
        .err = err
    };
    ufo_value_t *value = s_decode (&self);
    if (value && self.p != self.end) {
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
    const uint8_t *p;
    const uint8_t *end;
    size_t depth;
    size_t max_depth;
    const char *key;                //  a key to look for in the outermost map, or NULL
    size_t key_len;
    size_t key_depth;               //  depth inside the outermost map
    bool key_found;
} s_scan_t;

static bool s_scan (s_scan_t *self);

//  Reads a length of n big-endian bytes; false if the input ends first.
static inline bool
s_scan_be (s_scan_t *self, size_t n, uint64_t *out)
{
    if ((size_t) (self->end - self->p) < n)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | self->p [i];
    self->p += n;
    *out = v;
    return true;
}

//  Reads a str (not bin) header and body; the body must be UTF-8.
static inline bool
s_scan_str (s_scan_t *self, const uint8_t **s, size_t *len)
{
    if (self->p >= self->end)
        return false;
    uint8_t tag = *self->p++;
    uint64_t n;
    if ((tag & 0xE0) == 0xA0)
        n = tag & 0x1F;
    else
    if (!(tag == 0xD9 && s_scan_be (self, 1, &n)) && !(tag == 0xDA && s_scan_be (self, 2, &n))
    &&  !(tag == 0xDB && s_scan_be (self, 4, &n)))
        return false;
    if (n > (uint64_t) (self->end - self->p) || !ufo_utf8_valid (self->p, (size_t) n))
        return false;
    *s = self->p;
    *len = (size_t) n;
    self->p += n;
    return true;
}

static bool
s_scan_map (s_scan_t *self, uint64_t count)
{
    if (count > S_SCAN_KEYS || count > (uint64_t) (self->end - self->p) / 2 || ++self->depth > self->max_depth)
        return false;
    const uint8_t *keys [S_SCAN_KEYS];
    size_t lens [S_SCAN_KEYS];
    for (uint64_t i = 0; i < count; i++) {
        if (!s_scan_str (self, &keys [i], &lens [i]))
            return false;
        for (uint64_t j = 0; j < i; j++)
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
s_scan_list (s_scan_t *self, uint64_t count)
{
    if (count > (uint64_t) (self->end - self->p) || ++self->depth > self->max_depth)
        return false;
    for (uint64_t i = 0; i < count; i++)
        if (!s_scan (self))
            return false;
    self->depth--;
    return true;
}

static bool
s_scan (s_scan_t *self)
{
    if (self->p >= self->end)
        return false;
    uint8_t tag = *self->p;
    if (tag <= 0x7F || tag >= 0xE0 || tag == 0xC0 || tag == 0xC2 || tag == 0xC3) {
        self->p++;
        return true;
    }
    if ((tag & 0xF0) == 0x80) {
        self->p++;
        return s_scan_map (self, tag & 0x0F);
    }
    if ((tag & 0xF0) == 0x90) {
        self->p++;
        return s_scan_list (self, tag & 0x0F);
    }
    if ((tag & 0xE0) == 0xA0 || tag == 0xD9 || tag == 0xDA || tag == 0xDB) {
        const uint8_t *s;
        size_t len;
        return s_scan_str (self, &s, &len);
    }
    self->p++;
    uint64_t v;
    switch (tag) {
        case 0xCC: case 0xD0: return s_scan_be (self, 1, &v);
        case 0xCD: case 0xD1: return s_scan_be (self, 2, &v);
        case 0xCE: case 0xD2: return s_scan_be (self, 4, &v);
        case 0xD3: case 0xCB: return s_scan_be (self, 8, &v);
        case 0xCF: return s_scan_be (self, 8, &v) && v <= (uint64_t) INT64_MAX;
        case 0xDC: return s_scan_be (self, 2, &v) && s_scan_list (self, v);
        case 0xDD: return s_scan_be (self, 4, &v) && s_scan_list (self, v);
        case 0xDE: return s_scan_be (self, 2, &v) && s_scan_map (self, v);
        case 0xDF: return s_scan_be (self, 4, &v) && s_scan_map (self, v);
        default: return false;         //  float32 (decoded to a wider float64), bin, ext, 0xc1
    }
}

size_t
ufo_msgpack_scan_plain (const void *data, size_t len, size_t depth, size_t max_depth)
{
    s_scan_t self = { (const uint8_t *) data, (const uint8_t *) data + len, depth,
                      max_depth ? max_depth : UFO_MSGPACK_DEFAULT_DEPTH, NULL, 0, 0, false };
    if (!data || !s_scan (&self))
        return 0;
    return (size_t) (self.p - (const uint8_t *) data);
}

size_t
ufo_msgpack_scan_plain_map (const void *data, size_t len, size_t depth, size_t max_depth, const char *key,
                            bool *has_key)
{
    const uint8_t *p = (const uint8_t *) data;
    *has_key = false;
    if (!data || len == 0 || !((*p & 0xF0) == 0x80 || *p == 0xDE || *p == 0xDF))
        return 0;
    s_scan_t self = { p, p + len, depth, max_depth ? max_depth : UFO_MSGPACK_DEFAULT_DEPTH,
                      key, key ? strlen (key) : 0, depth + 1, false };
    if (!s_scan (&self))
        return 0;
    *has_key = self.key_found;
    return (size_t) (self.p - p);
}
