/*  ufo_msg.c - the versioned message envelope (see ufo_msg.h and docs/PROTOCOL.md).

    Encoding writes the fixed header fields directly (smallest msgpack encodings) and the
    body with ufo_msgpack_append. Decoding reads the header with a small strict reader of
    our own, so every field gets a precise error, then hands the remaining bytes to
    ufo_msgpack_decode, which must consume them exactly (trailing bytes are an error). */
#include "ufo_prelude.h"
#include <sys/random.h>

#define UFO_MSG_DEFAULT_MAX_BYTES (16u * 1024u * 1024u)
#define UFO_MSG_DEFAULT_MAX_DEPTH 32u

struct _ufo_msg_t {
    ufo_msg_head_t h;
    ufo_value_t *body;
};

//  --------------------------------------------------------------------------
//  Field helpers

//  Copies src into dst[cap] (cap includes the NUL), stopping at a character boundary so
//  the result is at most cap-1 bytes; invalid UTF-8 bytes become '?'. Programmer input
//  is made safe to encode this way, so whatever we encode, we can decode.
static void
s_copy_field (char *dst, size_t cap, const char *src)
{
    const uint8_t *s = (const uint8_t *) (src ? src : "");
    size_t len = strlen ((const char *) s);
    size_t i = 0, o = 0;
    while (i < len) {
        size_t n = ufo_utf8_seq (s + i, len - i, NULL);
        if (n == 0) {
            if (o + 1 > cap - 1)
                break;
            dst [o++] = '?';
            i++;
            continue;
        }
        if (o + n > cap - 1)
            break;
        memcpy (dst + o, s + i, n);
        o += n;
        i += n;
    }
    dst [o] = 0;
}

//  A message type is 1..UFO_MSG_TYPE_MAX bytes of printable ASCII without space (0x21..0x7e).
static bool
s_type_valid (const char *s, size_t len)
{
    if (len == 0 || len > UFO_MSG_TYPE_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((uint8_t) s [i] < 0x21 || (uint8_t) s [i] > 0x7e)
            return false;
    return true;
}

//  --------------------------------------------------------------------------
//  Construction and accessors

ufo_msg_t *
ufo_msg_new (const char *type)
{
    if (!type || !s_type_valid (type, strlen (type)))
        return NULL;
    ufo_msg_t *self = (ufo_msg_t *) ufo_calloc (1, sizeof (ufo_msg_t));
    memcpy (self->h.type, type, strlen (type) + 1);
    ufo_msg_new_id (self->h.id);
    self->h.timestamp = ufo_time_now_us ();
    self->body = ufo_value_new_null ();
    return self;
}

void
ufo_msg_destroy (ufo_msg_t **self_p)
{
    if (self_p && *self_p) {
        ufo_value_destroy (&(*self_p)->body);
        free (*self_p);
        *self_p = NULL;
    }
}

const char *
ufo_msg_type (const ufo_msg_t *self)
{
    assert (self);
    return self->h.type;
}

const char *
ufo_msg_id (const ufo_msg_t *self)
{
    assert (self);
    return self->h.id;
}

const char *
ufo_msg_sender (const ufo_msg_t *self)
{
    assert (self);
    return self->h.sender;
}

const char *
ufo_msg_session (const ufo_msg_t *self)
{
    assert (self);
    return self->h.session;
}

int64_t
ufo_msg_timestamp (const ufo_msg_t *self)
{
    assert (self);
    return self->h.timestamp;
}

void
ufo_msg_set_id (ufo_msg_t *self, const char *id)
{
    assert (self);
    s_copy_field (self->h.id, sizeof (self->h.id), id);
}

void
ufo_msg_set_sender (ufo_msg_t *self, const char *sender)
{
    assert (self);
    s_copy_field (self->h.sender, sizeof (self->h.sender), sender);
}

void
ufo_msg_set_session (ufo_msg_t *self, const char *session)
{
    assert (self);
    s_copy_field (self->h.session, sizeof (self->h.session), session);
}

void
ufo_msg_set_timestamp (ufo_msg_t *self, int64_t timestamp_us)
{
    assert (self);
    self->h.timestamp = timestamp_us;
}

ufo_value_t *
ufo_msg_body (const ufo_msg_t *self)
{
    assert (self);
    return self->body;
}

void
ufo_msg_set_body (ufo_msg_t *self, ufo_value_t **body_p)
{
    assert (self);
    assert (body_p);
    ufo_value_destroy (&self->body);
    self->body = *body_p ? *body_p : ufo_value_new_null ();
    *body_p = NULL;
}

ufo_value_t *
ufo_msg_take_body (ufo_msg_t *self)
{
    assert (self);
    ufo_value_t *body = self->body;
    self->body = ufo_value_new_null ();
    return body;
}

//  --------------------------------------------------------------------------
//  Encoding

static void
s_put_be (ufo_buf_t *buf, uint8_t lead, uint64_t v, int bytes)
{
    uint8_t out [9];
    out [0] = lead;
    for (int i = 0; i < bytes; i++)
        out [1 + i] = (uint8_t) (v >> (8 * (bytes - 1 - i)));
    ufo_buf_append (buf, out, (size_t) bytes + 1);
}

static void
s_put_int (ufo_buf_t *buf, int64_t v)
{
    if (v >= 0) {
        uint64_t u = (uint64_t) v;
        if (u < 0x80)         ufo_buf_putc (buf, (char) u);
        else if (u <= 0xff)   s_put_be (buf, 0xcc, u, 1);
        else if (u <= 0xffff) s_put_be (buf, 0xcd, u, 2);
        else if (u <= 0xffffffffu) s_put_be (buf, 0xce, u, 4);
        else                  s_put_be (buf, 0xcf, u, 8);
    }
    else {
        if (v >= -32)           ufo_buf_putc (buf, (char) (uint8_t) (int8_t) v);
        else if (v >= INT8_MIN) s_put_be (buf, 0xd0, (uint64_t) v, 1);
        else if (v >= INT16_MIN) s_put_be (buf, 0xd1, (uint64_t) v, 2);
        else if (v >= INT32_MIN) s_put_be (buf, 0xd2, (uint64_t) v, 4);
        else                    s_put_be (buf, 0xd3, (uint64_t) v, 8);
    }
}

static void
s_put_str (ufo_buf_t *buf, const char *s)
{
    size_t len = strlen (s);
    //  Header fields are at most 128 bytes, so fixstr or str8 always suffice.
    assert (len <= 0xff);
    if (len < 32)
        ufo_buf_putc (buf, (char) (0xa0 | len));
    else
        s_put_be (buf, 0xd9, len, 1);
    ufo_buf_append (buf, s, len);
}

void
ufo_msg_encode (const ufo_msg_t *self, ufo_buf_t *buf)
{
    assert (self);
    assert (buf);
    ufo_buf_putc (buf, (char) 0x97);            //  fixarray of 7
    s_put_int (buf, UFO_MSG_VERSION);
    s_put_str (buf, self->h.type);
    s_put_str (buf, self->h.id);
    s_put_str (buf, self->h.sender);
    s_put_str (buf, self->h.session);
    s_put_int (buf, self->h.timestamp);
    ufo_msgpack_append (buf, self->body);
}

//  --------------------------------------------------------------------------
//  Decoding: a strict reader for the header

typedef struct {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    ufo_error_t *err;
} s_reader_t;

static size_t
s_off (const s_reader_t *r)
{
    return (size_t) (r->p - r->start);
}

//  Names the msgpack type announced by a lead byte, for error messages.
static const char *
s_lead_name (uint8_t b)
{
    if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3)) return "int";
    if ((b >= 0xa0 && b <= 0xbf) || (b >= 0xd9 && b <= 0xdb)) return "str";
    if ((b >= 0x90 && b <= 0x9f) || b == 0xdc || b == 0xdd) return "array";
    if ((b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf) return "map";
    if (b == 0xc0) return "nil";
    if (b == 0xc2 || b == 0xc3) return "bool";
    if (b == 0xca || b == 0xcb) return "float";
    if (b >= 0xc4 && b <= 0xc6) return "bin";
    if ((b >= 0xc7 && b <= 0xc9) || (b >= 0xd4 && b <= 0xd8)) return "ext";
    return "invalid byte";
}

//  Reads an n-byte big-endian unsigned number. Returns -1 (truncated) if it is not there.
static int
s_read_be (s_reader_t *r, int bytes, uint64_t *out)
{
    if (r->end - r->p < bytes)
        return ufo_error_set_at (r->err, UFO_E_TRUNCATED, (size_t) (r->end - r->start),
                                 "envelope: frame ends inside a length or number");
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | r->p [i];
    r->p += bytes;
    *out = v;
    return 0;
}

//  Checks that a lead byte is present; returns it via *lead (not consumed).
static int
s_peek (s_reader_t *r, const char *field, uint8_t *lead)
{
    if (r->p >= r->end)
        return ufo_error_set_at (r->err, UFO_E_TRUNCATED, s_off (r),
                                 "envelope: frame ends before field '%s'", field);
    *lead = *r->p;
    if (*lead == 0xc1)
        return ufo_error_set_at (r->err, UFO_E_SYNTAX, s_off (r),
                                 "envelope: invalid msgpack byte 0xc1 at field '%s'", field);
    return 0;
}

static int
s_read_int (s_reader_t *r, const char *field, int64_t *out)
{
    uint8_t b = 0;
    if (s_peek (r, field, &b))
        return -1;
    size_t at = s_off (r);
    uint64_t u = 0;
    if (b <= 0x7f) { r->p++; *out = b; return 0; }
    if (b >= 0xe0) { r->p++; *out = (int8_t) b; return 0; }
    if (b >= 0xcc && b <= 0xcf) {
        r->p++;
        if (s_read_be (r, 1 << (b - 0xcc), &u))
            return -1;
        if (u > (uint64_t) INT64_MAX)
            return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                     "envelope: field '%s' is %" PRIu64 ", beyond int64", field, u);
        *out = (int64_t) u;
        return 0;
    }
    if (b >= 0xd0 && b <= 0xd3) {
        r->p++;
        int bytes = 1 << (b - 0xd0);
        if (s_read_be (r, bytes, &u))
            return -1;
        if (bytes == 1) *out = (int8_t) u;
        else if (bytes == 2) *out = (int16_t) u;
        else if (bytes == 4) *out = (int32_t) u;
        else *out = (int64_t) u;
        return 0;
    }
    return ufo_error_set_at (r->err, UFO_E_TYPE, at,
                             "envelope: field '%s' must be int, found %s", field, s_lead_name (b));
}

//  Reads a str (fixstr/str8/str16/str32) of at most max bytes; checks UTF-8 and no NUL.
static int
s_read_str (s_reader_t *r, const char *field, size_t max, const char **s, size_t *len)
{
    uint8_t b = 0;
    if (s_peek (r, field, &b))
        return -1;
    size_t at = s_off (r);
    uint64_t n = 0;
    if (b >= 0xa0 && b <= 0xbf) {
        r->p++;
        n = b & 0x1f;
    }
    else
    if (b >= 0xd9 && b <= 0xdb) {
        r->p++;
        if (s_read_be (r, 1 << (b - 0xd9), &n))
            return -1;
    }
    else
        return ufo_error_set_at (r->err, UFO_E_TYPE, at,
                                 "envelope: field '%s' must be str, found %s", field,
                                 s_lead_name (b));
    if (n > (uint64_t) (r->end - r->p))
        return ufo_error_set_at (r->err, UFO_E_TRUNCATED, (size_t) (r->end - r->start),
                                 "envelope: frame ends inside field '%s' (%" PRIu64 " bytes announced)",
                                 field, n);
    if (n > max)
        return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                 "envelope: field '%s' is %" PRIu64 " bytes, at most %zu allowed",
                                 field, n, max);
    size_t bad = ufo_utf8_check (r->p, (size_t) n);
    if (bad < n)
        return ufo_error_set_at (r->err, UFO_E_UTF8, s_off (r) + bad,
                                 "envelope: field '%s' is not valid UTF-8", field);
    if (memchr (r->p, 0, (size_t) n))
        return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                 "envelope: field '%s' contains a NUL byte", field);
    *s = (const char *) r->p;
    *len = (size_t) n;
    r->p += n;
    return 0;
}

static int
s_read_field (s_reader_t *r, const char *field, char *dst, size_t max)
{
    const char *s;
    size_t len;
    if (s_read_str (r, field, max, &s, &len))
        return -1;
    memcpy (dst, s, len);
    dst [len] = 0;
    return 0;
}

//  Decodes everything but the body; on success *r points at the body's first byte.
static int
s_decode_head (s_reader_t *r, const void *data, size_t len, const ufo_msg_limits_t *limits,
               ufo_msg_head_t *self, ufo_error_t *err)
{
    ufo_error_clear (err);
    size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : UFO_MSG_DEFAULT_MAX_BYTES;
    if (len > max_bytes) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "envelope: frame is %zu bytes, at most %zu allowed",
                       len, max_bytes);
        return -1;
    }
    if (!data && len > 0) {
        ufo_error_set (err, UFO_E_INVALID, "envelope: no data");
        return -1;
    }

    //  The frame is one array; its first item is the version.
    uint8_t b = 0;
    if (s_peek (r, "envelope", &b))
        return -1;
    uint64_t count = 0;
    if (b >= 0x90 && b <= 0x9f) {
        r->p++;
        count = b & 0x0f;
    }
    else
    if (b == 0xdc || b == 0xdd) {
        r->p++;
        if (s_read_be (r, b == 0xdc ? 2 : 4, &count))
            return -1;
    }
    else {
        ufo_error_set_at (err, UFO_E_TYPE, 0, "envelope: frame must be a msgpack array, found %s",
                          s_lead_name (b));
        return -1;
    }
    if (count == 0) {
        ufo_error_set_at (err, UFO_E_SYNTAX, 0, "envelope: empty array, expected 7 items");
        return -1;
    }
    int64_t version;
    size_t version_at = s_off (r);
    if (s_read_int (r, "version", &version))
        return -1;
    if (version != UFO_MSG_VERSION) {
        ufo_error_set_at (err, UFO_E_VERSION, version_at,
                          "envelope: unknown version %" PRId64 " (this side speaks %d)",
                          version, UFO_MSG_VERSION);
        return -1;
    }
    if (count != 7) {
        ufo_error_set_at (err, UFO_E_SYNTAX, 0,
                          "envelope: array has %" PRIu64 " items, expected 7", count);
        return -1;
    }
    const char *type;
    size_t type_len;
    size_t type_at = s_off (r);
    if (s_read_str (r, "type", UFO_MSG_TYPE_MAX, &type, &type_len))
        return -1;
    if (!s_type_valid (type, type_len)) {
        ufo_error_set_at (err, UFO_E_RANGE, type_at, "envelope: field 'type' must be 1..%d "
                          "printable ASCII characters without space", UFO_MSG_TYPE_MAX);
        return -1;
    }
    memcpy (self->type, type, type_len);
    self->type [type_len] = 0;
    if (s_read_field (r, "id", self->id, UFO_MSG_ID_MAX)
    ||  s_read_field (r, "sender", self->sender, UFO_MSG_SENDER_MAX)
    ||  s_read_field (r, "session", self->session, UFO_MSG_SESSION_MAX)
    ||  s_read_int (r, "timestamp", &self->timestamp))
        return -1;

    return 0;
}

int
ufo_msg_decode_head (const void *data, size_t len, const ufo_msg_limits_t *limits, ufo_msg_head_t *head,
                     size_t *body_off, ufo_error_t *err)
{
    const uint8_t *end = data ? (const uint8_t *) data + len : NULL;   //  NULL data: refused below
    s_reader_t reader = { (const uint8_t *) data, (const uint8_t *) data, end, err };
    if (s_decode_head (&reader, data, len, limits, head, err) != 0)
        return -1;
    *body_off = s_off (&reader);
    return 0;
}

ufo_msg_t *
ufo_msg_decode (const void *data, size_t len, const ufo_msg_limits_t *limits, ufo_error_t *err)
{
    size_t max_depth = limits && limits->max_depth ? limits->max_depth : UFO_MSG_DEFAULT_MAX_DEPTH;
    const uint8_t *end = data ? (const uint8_t *) data + len : NULL;   //  NULL data: refused below
    s_reader_t reader = { (const uint8_t *) data, (const uint8_t *) data, end, err };
    s_reader_t *r = &reader;
    ufo_msg_t *self = (ufo_msg_t *) ufo_calloc (1, sizeof (ufo_msg_t));
    if (s_decode_head (r, data, len, limits, &self->h, err) != 0)
        goto failed;
    //  The body is exactly the rest of the frame. The envelope array is not counted in
    //  the body's depth: a scalar body has depth 0, [] or {} depth 1.
    size_t body_at = s_off (r);
    ufo_msgpack_limits_t mlimits = { max_depth, 0 };
    self->body = ufo_msgpack_decode (r->p, (size_t) (r->end - r->p), &mlimits, err);
    if (!self->body) {
        if (err) {
            static const char prefix [] = "envelope: body: ";
            size_t keep = sizeof (err->message) - sizeof (prefix);
            size_t n = strnlen (err->message, keep);
            memmove (err->message + sizeof (prefix) - 1, err->message, n);
            memcpy (err->message, prefix, sizeof (prefix) - 1);
            err->message [sizeof (prefix) - 1 + n] = 0;
            err->offset += body_at;
        }
        goto failed;
    }
    return self;

failed:
    ufo_msg_destroy (&self);
    return NULL;
}

//  --------------------------------------------------------------------------
//  Ids and clocks

void
ufo_msg_new_id (char out [33])
{
    uint8_t raw [16];
    size_t got = 0;
    while (got < sizeof (raw)) {
        ssize_t rc = getrandom (raw + got, sizeof (raw) - got, 0);
        if (rc > 0)
            got += (size_t) rc;
        else
        if (rc < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    if (got < sizeof (raw)) {
        //  No kernel randomness (should not happen on Linux >= 3.17): fall back to a
        //  mix of time, pid and a counter, which is still unique within a host.
        static uint64_t counter = 0;
        uint64_t a = (uint64_t) ufo_time_now_us () ^ ((uint64_t) getpid () << 40);
        uint64_t c = __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED) ^ (uint64_t) ufo_time_mono_ms ();
        memcpy (raw, &a, 8);
        memcpy (raw + 8, &c, 8);
    }
    static const char hex [] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof (raw); i++) {
        out [2 * i] = hex [raw [i] >> 4];
        out [2 * i + 1] = hex [raw [i] & 0x0f];
    }
    out [32] = 0;
}

int64_t
ufo_time_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
ufo_time_mono_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
