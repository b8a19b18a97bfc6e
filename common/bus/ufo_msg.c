/*  ufo_msg.c - the versioned message envelope (see ufo_msg.h and docs/PROTOCOL.md).

    Encoding writes the fixed header fields with the msgpack writer (smallest encodings) and
    the body with ufo_msgpack_append. Decoding reads the header with the msgpack reader
    (ufo_msgpack.h), giving every field a precise error, then hands the remaining bytes to
    ufo_msgpack_decode, which must consume them exactly (trailing bytes are an error). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_hex.h"
#include "ufo_msg.h"
#include "ufo_msgpack.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
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

void
ufo_msg_encode_head (ufo_buf_t *buf, const char *type, const char *id, const char *sender, const char *session,
                     int64_t timestamp)
{
    ufo_mp_put_array (buf, 7);
    ufo_mp_put_int (buf, UFO_MSG_VERSION);
    ufo_mp_put_cstr (buf, type);
    ufo_mp_put_cstr (buf, id ? id : "");
    ufo_mp_put_cstr (buf, sender ? sender : "");
    ufo_mp_put_cstr (buf, session ? session : "");
    ufo_mp_put_int (buf, timestamp);
}

void
ufo_msg_encode (const ufo_msg_t *self, ufo_buf_t *buf)
{
    assert (self);
    assert (buf);
    ufo_msg_encode_head (buf, self->h.type, self->h.id, self->h.sender, self->h.session, self->h.timestamp);
    ufo_msgpack_append (buf, self->body);
}

//  --------------------------------------------------------------------------
//  Decoding: the header, read with the msgpack reader (ufo_msgpack.h) so that every field
//  gets a precise error

typedef struct {
    ufo_mp_reader_t mp;
    ufo_error_t *err;
} s_reader_t;

static size_t
s_off (const s_reader_t *r)
{
    return ufo_mp_offset (&r->mp);
}

//  The error of a head or number cut by the end of the frame.
static int
s_truncated (s_reader_t *r)
{
    return ufo_error_set_at (r->err, UFO_E_TRUNCATED, (size_t) (r->mp.end - r->mp.start),
                             "envelope: frame ends inside a length or number");
}

//  Checks that a lead byte is present; returns it via *lead (not consumed).
static int
s_peek (s_reader_t *r, const char *field, uint8_t *lead)
{
    if (!ufo_mp_left (&r->mp))
        return ufo_error_set_at (r->err, UFO_E_TRUNCATED, s_off (r),
                                 "envelope: frame ends before field '%s'", field);
    *lead = *r->mp.p;
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
    int rc = ufo_mp_read_int (&r->mp, out);
    if (rc == UFO_E_RANGE) {
        uint64_t u = 0;
        ufo_mp_read_uint (&r->mp, &u);
        return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                 "envelope: field '%s' is %" PRIu64 ", beyond int64", field, u);
    }
    if (rc == UFO_E_TYPE)
        return ufo_error_set_at (r->err, UFO_E_TYPE, at,
                                 "envelope: field '%s' must be int, found %s", field, ufo_mp_kind_name (b));
    return rc ? s_truncated (r) : 0;
}

//  Reads a str (fixstr/str8/str16/str32) of at most max bytes; checks UTF-8 and no NUL.
static int
s_read_str (s_reader_t *r, const char *field, size_t max, const char **s, size_t *len)
{
    uint8_t b = 0;
    if (s_peek (r, field, &b))
        return -1;
    size_t at = s_off (r);
    uint32_t n = 0;
    int rc = ufo_mp_read_str_head (&r->mp, &n);
    if (rc == UFO_E_TYPE)
        return ufo_error_set_at (r->err, UFO_E_TYPE, at,
                                 "envelope: field '%s' must be str, found %s", field, ufo_mp_kind_name (b));
    if (rc)
        return s_truncated (r);
    if (n > ufo_mp_left (&r->mp))
        return ufo_error_set_at (r->err, UFO_E_TRUNCATED, (size_t) (r->mp.end - r->mp.start),
                                 "envelope: frame ends inside field '%s' (%" PRIu32 " bytes announced)",
                                 field, n);
    if (n > max)
        return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                 "envelope: field '%s' is %" PRIu32 " bytes, at most %zu allowed",
                                 field, n, max);
    const uint8_t *body = r->mp.p;
    size_t bad = ufo_utf8_check (body, n);
    if (bad < n)
        return ufo_error_set_at (r->err, UFO_E_UTF8, s_off (r) + bad,
                                 "envelope: field '%s' is not valid UTF-8", field);
    if (memchr (body, 0, n))
        return ufo_error_set_at (r->err, UFO_E_RANGE, at,
                                 "envelope: field '%s' contains a NUL byte", field);
    ufo_mp_take (&r->mp, n, &body);
    *s = (const char *) body;
    *len = n;
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
    uint32_t count = 0;
    int rc = ufo_mp_read_array (&r->mp, &count);
    if (rc == UFO_E_TYPE) {
        ufo_error_set_at (err, UFO_E_TYPE, 0, "envelope: frame must be a msgpack array, found %s",
                          ufo_mp_kind_name (b));
        return -1;
    }
    if (rc)
        return s_truncated (r);
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
                          "envelope: array has %" PRIu32 " items, expected 7", count);
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
    s_reader_t reader = { .err = err };
    ufo_mp_reader_init (&reader.mp, data, len);     //  NULL data with len > 0: refused below
    if (s_decode_head (&reader, data, len, limits, head, err) != 0)
        return -1;
    *body_off = s_off (&reader);
    return 0;
}

ufo_msg_t *
ufo_msg_decode (const void *data, size_t len, const ufo_msg_limits_t *limits, ufo_error_t *err)
{
    size_t max_depth = limits && limits->max_depth ? limits->max_depth : UFO_MSG_DEFAULT_MAX_DEPTH;
    s_reader_t reader = { .err = err };
    ufo_mp_reader_init (&reader.mp, data, len);     //  NULL data with len > 0: refused below
    s_reader_t *r = &reader;
    ufo_msg_t *self = (ufo_msg_t *) ufo_calloc (1, sizeof (ufo_msg_t));
    if (s_decode_head (r, data, len, limits, &self->h, err) != 0)
        goto failed;
    //  The body is exactly the rest of the frame. The envelope array is not counted in
    //  the body's depth: a scalar body has depth 0, [] or {} depth 1.
    size_t body_at = s_off (r);
    ufo_msgpack_limits_t mlimits = { max_depth, 0 };
    self->body = ufo_msgpack_decode (r->mp.p, ufo_mp_left (&r->mp), &mlimits, err);
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
//  Ids

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
    ufo_hex_encode (raw, sizeof (raw), out);
}
