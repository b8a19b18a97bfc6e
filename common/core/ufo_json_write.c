/*  ufo_json_write.c - the JSON writer (ufo_json.h): compact, Python json.dumps()-compatible
    and pretty styles, and repr()-exact float formatting. Split from ufo_json.c (the parser). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_hex.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "value_private.h"
#include <float.h>
#include <pthread.h>

//  1 for bytes that may appear unescaped in a string and need no UTF-8 check
static unsigned char s_plain [256];
//  the same for Python's ensure_ascii output, which also escapes DEL (0x7f)
static unsigned char s_plain_ascii [256];
static pthread_once_t s_tables_once = PTHREAD_ONCE_INIT;

static void
s_tables_init (void)
{
    for (int c = 0x20; c < 0x80; c++)
        s_plain [c] = 1;
    s_plain ['"'] = 0;
    s_plain ['\\'] = 0;
    memcpy (s_plain_ascii, s_plain, sizeof (s_plain));
    s_plain_ascii [0x7F] = 0;
}

static inline size_t
s_utf8_seq (const unsigned char *s, size_t n, uint32_t *cp)
{
    if (s [0] < 0x80) {
        *cp = s [0];
        return 1;
    }
    return ufo_utf8_seq (s, n, cp);
}

//  --- Writer -------------------------------------------------------------------
//
//  The writer works on a cursor into reserved buffer space: each value reserves what it
//  needs once (s_room) and then stores bytes by pointer bumping. Invariant inside
//  s_string: the space reserved at the cursor covers the rest of the input, the closing
//  quote and S_SLACK bytes.

#define S_SLACK 16

static const char s_digits2 [] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

//  Cursor o after making room for `need` more bytes (plus the NUL) in buf.
static inline char *
s_room (ufo_buf_t *buf, char *o, size_t need)
{
    size_t used = (size_t) (o - buf->data);
    if (UFO_UNLIKELY (buf->cap - used < need + 1)) {
        buf->len = used;
        ufo_buf_reserve (buf, need);
    }
    return buf->data + used;
}

static inline char *
s_put_u (char *o, uint32_t unit)
{
    o [0] = '\\';
    o [1] = 'u';
    o [2] = ufo_hex_digits [(unit >> 12) & 15];
    o [3] = ufo_hex_digits [(unit >> 8) & 15];
    o [4] = ufo_hex_digits [(unit >> 4) & 15];
    o [5] = ufo_hex_digits [unit & 15];
    return o + 6;
}

//  Bytes to reserve for a string of len bytes (quotes and slack).
#define s_string_room(len) ((len) + 2 + S_SLACK)

//  True when one of the 8 bytes of x needs escaping or a UTF-8 check: a control byte, '"',
//  '\\', a byte >= 0x80, or DEL when ascii. (A byte's "below n" or "equal" test borrows
//  into the next byte only when the byte itself matches, so a word without such a byte
//  never tests true.) Broker snapshots write a million strings: 8 bytes per step keeps
//  their writer ~1.4x faster than a byte loop.
static inline bool
s_word_special (uint64_t x, bool ascii)
{
    const uint64_t ones = 0x0101010101010101ULL;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\'), d = x ^ (ones * 0x7F);
    uint64_t m = ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x;
    if (ascii)
        m |= (d - ones) & ~d;
    return (m & (ones * 0x80)) != 0;
}

//  Writes s as a JSON string at o (escapes, UTF-8 checks); returns the new cursor.
//  The caller has made room for s_string_room (len) + extra bytes at o; room for
//  extra + S_SLACK bytes is left after the string, whatever it held.
static char *
s_string (ufo_buf_t *buf, char *o, const char *s, size_t len, bool ascii, size_t extra)
{
    const unsigned char *plain = ascii ? s_plain_ascii : s_plain;
    const unsigned char *p = (const unsigned char *) s;
    const unsigned char *end = p + len;
    *o++ = '"';
    for (;;) {
        while (end - p >= 8) {
            uint64_t x;
            memcpy (&x, p, 8);
            if (s_word_special (x, ascii))
                break;
            memcpy (o, &x, 8);
            p += 8;
            o += 8;
        }
        while (p < end && plain [*p])
            *o++ = (char) *p++;
        if (p >= end)
            break;
        //  the escape below writes at most 12 bytes for at least one byte read
        o = s_room (buf, o, (size_t) (end - p) + 12 + 2 + S_SLACK + extra);
        unsigned char c = *p;
        const char *esc = NULL;
        switch (c) {
            case '"':  esc = "\\\""; break;
            case '\\': esc = "\\\\"; break;
            case '\n': esc = "\\n"; break;
            case '\r': esc = "\\r"; break;
            case '\t': esc = "\\t"; break;
            case '\b': esc = "\\b"; break;
            case '\f': esc = "\\f"; break;
            default: break;
        }
        if (esc) {
            o [0] = esc [0];
            o [1] = esc [1];
            o += 2;
            p++;
        }
        else
        if (c < 0x20 || c == 0x7F) {
            o = s_put_u (o, c);
            p++;
        }
        else {
            uint32_t cp;
            size_t n = s_utf8_seq (p, (size_t) (end - p), &cp);
            if (!n) {
                n = 1;
                if (ascii)
                    o = s_put_u (o, 0xFFFD);
                else {
                    memcpy (o, "\xEF\xBF\xBD", 3);
                    o += 3;
                }
            }
            else
            if (!ascii) {
                memcpy (o, p, n);
                o += n;
            }
            else
            if (cp >= 0x10000) {
                uint32_t v = cp - 0x10000;
                o = s_put_u (o, 0xD800 | (v >> 10));
                o = s_put_u (o, 0xDC00 | (v & 0x3FF));
            }
            else
                o = s_put_u (o, cp);
            p += n;
        }
    }
    *o++ = '"';
    return o;
}

void
ufo_json_append_string (ufo_buf_t *buf, const char *s, size_t len, int style)
{
    assert (buf);
    pthread_once (&s_tables_once, s_tables_init);
    bool ascii = (style & UFO_JSON_ASCII) || (style & 3) == UFO_JSON_PY;
    ufo_buf_reserve (buf, s_string_room (len));
    char *o = s_string (buf, buf->data + buf->len, s, len, ascii, 0);
    buf->len = (size_t) (o - buf->data);
    buf->data [buf->len] = 0;
}

//  Decimal digits of u at o (no NUL); returns the new cursor. o has room for 20 bytes.
static inline char *
s_uint (char *o, uint64_t u)
{
    char tmp [20];
    char *t = tmp + sizeof (tmp);
    while (u >= 100) {
        unsigned r = (unsigned) (u % 100);
        u /= 100;
        t -= 2;
        memcpy (t, s_digits2 + 2 * r, 2);
    }
    if (u >= 10) {
        t -= 2;
        memcpy (t, s_digits2 + 2 * u, 2);
    }
    else
        *--t = (char) ('0' + u);
    size_t n = (size_t) (tmp + sizeof (tmp) - t);
    memcpy (o, t, n);
    return o + n;
}

static inline char *
s_int (char *o, int64_t v)
{
    if (v < 0) {
        *o++ = '-';
        return s_uint (o, (uint64_t) 0 - (uint64_t) v);
    }
    return s_uint (o, (uint64_t) v);
}

//  Fast path of repr(float) for 1e-4 <= |value| < 1e15 with at most 15 significant
//  digits (most values people and agents write): the fewest decimals k for which the
//  integer m = round(|value| * 10^k) gives back value as m / 10^k. Both 10^k (k <= 22)
//  and m (< 2^53) are exact, so the division is the correctly rounded value of the
//  decimal m * 10^-k, exactly what a parser reads. A decimal of <= 15 significant digits
//  that reads back as value is unique at its length (DBL_DIG = 15) and round() finds it
//  (|m - |value| * 10^k| < 0.2 there), so the first k that works gives repr's digits.
//  Returns the length written, or 0 when the value is outside the fast path.
static int
s_format_double_fast (char *out, double value)
{
#if FLT_EVAL_METHOD == 0
    static const double pow10 [] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19
    };
    double a = fabs (value);
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    for (int k = 0; k < (int) UFO_ARRAY_SIZE (pow10); k++) {
        double t = a * pow10 [k];
        if (t >= 1e15)
            return 0;
        double r = (double) (int64_t) (t + 0.5);   //  0 <= t < 1e15: exact, no libm call
        if (r / pow10 [k] != a)
            continue;
        char digits [24];
        char *end = s_uint (digits, (uint64_t) r);
        int nd = (int) (end - digits);
        char *o = out;
        if (value < 0)
            *o++ = '-';
        if (k == 0) {
            memcpy (o, digits, (size_t) nd);
            o += nd;
            *o++ = '.';
            *o++ = '0';
        }
        else
        if (nd > k) {
            memcpy (o, digits, (size_t) (nd - k));
            o += nd - k;
            *o++ = '.';
            memcpy (o, digits + nd - k, (size_t) k);
            o += k;
        }
        else {
            *o++ = '0';
            *o++ = '.';
            for (int i = nd; i < k; i++)
                *o++ = '0';
            memcpy (o, digits, (size_t) nd);
            o += nd;
        }
        *o = 0;
        return (int) (o - out);
    }
#else
    (void) out;
    (void) value;
#endif
    return 0;
}

int
ufo_json_format_double (char *out, double value)
{
    int fast = s_format_double_fast (out, value);
    if (fast)
        return fast;
    if (isnan (value))
        return (int) (strcpy (out, "NaN"), 3);
    if (isinf (value))
        return value > 0 ? (int) (strcpy (out, "Infinity"), 8) : (int) (strcpy (out, "-Infinity"), 9);
    if (value == 0)
        return signbit (value) ? (int) (strcpy (out, "-0.0"), 4) : (int) (strcpy (out, "0.0"), 3);

    //  Shortest round-trip digits: the closest decimal at precision p round-trips whenever
    //  any decimal of p digits does, and for p <= 15 it is the shortest once its trailing
    //  zeros are dropped (DBL_DIG = 15). So trying 15, 16, 17 digits is enough.
    //  Subnormals carry fewer digits, so there the search starts at one digit.
    char sci [40];
    for (int prec = fabs (value) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        snprintf (sci, sizeof (sci), "%.*e", prec - 1, value);
        for (char *c = sci; *c; c++)
            if (*c == ',')
                *c = '.';       //  a process locale with a decimal comma
        if (ufo_json__strtod (sci, strlen (sci)) == value)
            break;
    }
    //  sci is [-]d.dddde[+-]XX: collect digits and exponent
    const char *p = sci;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    char digits [24];
    int nd = 0;
    while (*p && *p != 'e') {
        if (*p >= '0' && *p <= '9' && nd < 20)
            digits [nd++] = *p;
        p++;
    }
    int exp10 = *p == 'e' ? atoi (p + 1) : 0;
    while (nd > 1 && digits [nd - 1] == '0')
        nd--;
    int decpt = exp10 + 1;          //  digits d1 d2... with the point after decpt digits

    char *o = out;
    if (neg)
        *o++ = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -decpt; i++)
                *o++ = '0';
            for (int i = 0; i < nd; i++)
                *o++ = digits [i];
        }
        else
        if (decpt < nd) {
            for (int i = 0; i < decpt; i++)
                *o++ = digits [i];
            *o++ = '.';
            for (int i = decpt; i < nd; i++)
                *o++ = digits [i];
        }
        else {
            for (int i = 0; i < nd; i++)
                *o++ = digits [i];
            for (int i = nd; i < decpt; i++)
                *o++ = '0';
            *o++ = '.';
            *o++ = '0';
        }
        *o = 0;
    }
    else {
        *o++ = digits [0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++)
                *o++ = digits [i];
        }
        int e = decpt - 1;
        o += sprintf (o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    return (int) (o - out);
}


static char *
s_indent (ufo_buf_t *buf, char *o, int level, bool comma)
{
    o = s_room (buf, o, 2 + 2 * (size_t) level);
    if (comma)
        *o++ = ',';
    *o++ = '\n';
    for (int i = 0; i < level; i++) {
        *o++ = ' ';
        *o++ = ' ';
    }
    return o;
}

//  Room a value needs written by s_value: containers reserve for themselves.
static inline size_t
s_value_room (const ufo_value_view_t *v)
{
    return v->type == UFO_TSTRING ? s_string_room (v->len) : 40;
}

static char *s_container (ufo_buf_t *buf, char *o, const ufo_value_view_t *v, int style,
                          bool ascii, int level);

//  Writes the value v at o (the caller made room for s_value_room (v) bytes); returns
//  the new cursor.
static char *
s_value (ufo_buf_t *buf, char *o, const ufo_value_view_t *v, int style, bool ascii, int level)
{
    switch (v->type) {
        case UFO_TSTRING:
            return s_string (buf, o, v->u.s, v->len, ascii, 0);
        case UFO_TINT:
            return s_int (o, v->u.i);
        case UFO_TFLOAT:
            return o + ufo_json_format_double (o, v->u.f);
        case UFO_TBOOL:
            if (v->u.b) {
                memcpy (o, "true", 4);
                return o + 4;
            }
            memcpy (o, "false", 5);
            return o + 5;
        case UFO_TLIST:
        case UFO_TMAP:
            return s_container (buf, o, v, style, ascii, level);
        default:
            memcpy (o, "null", 4);
            return o + 4;
    }
}

//  Writes a list or map; returns the new cursor. One reservation per element covers the
//  separator, the key and a scalar value.
static char *
s_container (ufo_buf_t *buf, char *o, const ufo_value_view_t *v, int style, bool ascii,
             int level)
{
    int base = style & 3;
    size_t n = v->len;
    ufo_value_view_t child;
    o = s_room (buf, o, 2);
    if (v->type == UFO_TLIST) {
        *o++ = '[';
        for (size_t i = 0; i < n; i++) {
            if (base == UFO_JSON_PRETTY) {
                o = s_indent (buf, o, level + 1, i > 0);
            }
            ufo_value__view (v->u.items [i], &child);
            o = s_room (buf, o, 2 + s_value_room (&child));
            if (i && base != UFO_JSON_PRETTY) {
                *o++ = ',';
                if (base == UFO_JSON_PY)
                    *o++ = ' ';
            }
            o = s_value (buf, o, &child, style, ascii, level + 1);
        }
        if (base == UFO_JSON_PRETTY && n)
            o = s_indent (buf, o, level, false);
        o = s_room (buf, o, 1);
        *o++ = ']';
        return o;
    }
    const ufo_value_entry_t *e = v->u.entries;
    *o++ = '{';
    for (size_t i = 0; i < n; i++, e++) {
        if (base == UFO_JSON_PRETTY) {
            o = s_indent (buf, o, level + 1, i > 0);
        }
        ufo_value__view (e->value, &child);
        size_t after = 2 + s_value_room (&child);
        o = s_room (buf, o, 2 + s_string_room ((size_t) e->keylen) + after);
        if (i && base != UFO_JSON_PRETTY) {
            *o++ = ',';
            if (base == UFO_JSON_PY)
                *o++ = ' ';
        }
        if (e->plain) {
            //  nothing to escape in any style
            *o++ = '"';
            memcpy (o, ufo_value_entry_key (e), e->keylen);
            o += e->keylen;
            *o++ = '"';
        }
        else
            o = s_string (buf, o, ufo_value_entry_key (e), e->keylen, ascii, after);
        *o++ = ':';
        if (base != UFO_JSON_COMPACT)
            *o++ = ' ';
        o = s_value (buf, o, &child, style, ascii, level + 1);
    }
    if (base == UFO_JSON_PRETTY && n)
        o = s_indent (buf, o, level, false);
    o = s_room (buf, o, 1);
    *o++ = '}';
    return o;
}

void
ufo_json_append (ufo_buf_t *buf, const ufo_value_t *value, int style)
{
    assert (buf);
    pthread_once (&s_tables_once, s_tables_init);
    bool ascii = (style & UFO_JSON_ASCII) || (style & 3) == UFO_JSON_PY;
    ufo_value_view_t view;
    ufo_value__view (value, &view);
    ufo_buf_reserve (buf, s_value_room (&view));
    char *o = s_value (buf, buf->data + buf->len, &view, style, ascii, 0);
    buf->len = (size_t) (o - buf->data);
    buf->data [buf->len] = 0;
}

char *
ufo_json_dump (const ufo_value_t *value, int style, size_t *len_p)
{
    ufo_buf_t buf = {0};
    ufo_buf_reserve (&buf, 256);
    ufo_json_append (&buf, value, style);
    return ufo_buf_detach (&buf, len_p);
}
