/*  ufo_json_write.c - the JSON writer (ufo_json.h): compact, Python json.dumps()-compatible
    and pretty styles, and repr()-exact float formatting. Split from ufo_json.c (the parser). */
#include "ufo_prelude.h"
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
//  needs once (s_room) and then stores bytes by pointer bumping. Strings are scanned
//  eight bytes at a time (SWAR): a word with no byte that needs escaping is stored as is.
//  Invariant inside s_string: the space reserved at the cursor covers the rest of the
//  input, the closing quote and S_SLACK bytes, so whole words can be stored blindly.

#define S_SLACK 16

static const char s_hex [] = "0123456789abcdef";
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
    o [2] = s_hex [(unit >> 12) & 15];
    o [3] = s_hex [(unit >> 8) & 15];
    o [4] = s_hex [(unit >> 4) & 15];
    o [5] = s_hex [unit & 15];
    return o + 6;
}

#if defined (__GNUC__) && defined (__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#   define S_SWAR 1
//  High bit set in the lowest byte of x that needs escaping (bits above it may be set
//  spuriously; only the lowest is used): control bytes, '"', '\\', bytes >= 0x80 (they
//  need UTF-8 checking), and DEL when ascii.
static inline uint64_t
s_special8 (uint64_t x, bool ascii)
{
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t high = 0x8080808080808080ULL;
    uint64_t q = x ^ (ones * '"');
    uint64_t b = x ^ (ones * '\\');
    uint64_t m = ((x - ones * 0x20) & ~x)
               | ((q - ones) & ~q)
               | ((b - ones) & ~b)
               | x;
    if (ascii) {
        uint64_t d = x ^ (ones * 0x7F);
        m |= (d - ones) & ~d;
    }
    return m & high;
}
#endif

#if defined (__SSE2__) && defined (S_SWAR)
#   include <emmintrin.h>
#   define S_SSE2 1
//  Bit i set when byte i of v needs escaping or a UTF-8 check (signed compare: bytes
//  >= 0x80 are negative, so "< 0x20" catches them with the control bytes).
static inline unsigned
s_special16 (__m128i v, bool ascii)
{
    __m128i m = _mm_or_si128 (_mm_cmplt_epi8 (v, _mm_set1_epi8 (0x20)),
                _mm_or_si128 (_mm_cmpeq_epi8 (v, _mm_set1_epi8 ('"')),
                              _mm_cmpeq_epi8 (v, _mm_set1_epi8 ('\\'))));
    if (ascii)
        m = _mm_or_si128 (m, _mm_cmpeq_epi8 (v, _mm_set1_epi8 (0x7F)));
    return (unsigned) _mm_movemask_epi8 (m);
}
#endif

//  Bytes to reserve for a string of len bytes (quotes and slack for whole-word stores).
#define s_string_room(len) ((len) + 2 + S_SLACK)

//  The general string loop, from p on (o is its place in the output, with room for the
//  rest of the input, the closing quote, S_SLACK and `extra` bytes): escapes, UTF-8 checks.
//  Writes the closing quote; returns the new cursor.
static char *
s_string_slow (ufo_buf_t *buf, char *o, const unsigned char *p, const unsigned char *end,
               bool ascii, size_t extra)
{
    const unsigned char *plain = ascii ? s_plain_ascii : s_plain;
    for (;;) {
#ifdef S_SSE2
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128 ((const __m128i *) p);
            _mm_storeu_si128 ((__m128i *) o, v);
            unsigned m = s_special16 (v, ascii);
            if (m) {
                unsigned k = (unsigned) __builtin_ctz (m);
                p += k;
                o += k;
                goto special;
            }
            p += 16;
            o += 16;
        }
#endif
#ifdef S_SWAR
        while (end - p >= 8) {
            uint64_t x;
            memcpy (&x, p, 8);
            memcpy (o, &x, 8);
            uint64_t m = s_special8 (x, ascii);
            if (m) {
                size_t k = (size_t) __builtin_ctzll (m) >> 3;
                p += k;
                o += k;
                goto special;
            }
            p += 8;
            o += 8;
        }
#endif
        while (p < end && plain [*p])
            *o++ = (char) *p++;
        if (p >= end)
            break;
#ifdef S_SWAR
special:
#endif
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

#if defined (__GNUC__)
#   define S_ALWAYS_INLINE inline __attribute__ ((always_inline))
#else
#   define S_ALWAYS_INLINE inline
#endif

//  Writes s as a JSON string at o; returns the new cursor. The common case, nothing to
//  escape, is handled here with whole-word loads and stores: 16-byte blocks (the last one
//  overlapping the one before), 8 to 15 bytes as two overlapping 8-byte words, 4 to 7 as
//  two 4-byte words; anything else continues in s_string_slow from the start of the block
//  holding the first byte to escape.
//  The caller has made room for s_string_room (len) + extra bytes at o; room for
//  extra + S_SLACK bytes is left after the string, whatever it held.
static S_ALWAYS_INLINE char *
s_string (ufo_buf_t *buf, char *o, const char *s, size_t len, bool ascii, size_t extra)
{
    const unsigned char *p = (const unsigned char *) s;
    const unsigned char *end = p + len;
    *o++ = '"';
#ifdef S_SSE2
    if (len >= 16) {
        __m128i v;
        do {
            v = _mm_loadu_si128 ((const __m128i *) p);
            _mm_storeu_si128 ((__m128i *) o, v);
            unsigned m = s_special16 (v, ascii);
            if (m) {
                unsigned k = (unsigned) __builtin_ctz (m);
                p += k;
                o += k;
                goto slow;
            }
            p += 16;
            o += 16;
        } while (end - p >= 16);
        if (p < end) {
            size_t back = 16 - (size_t) (end - p);
            v = _mm_loadu_si128 ((const __m128i *) (end - 16));
            if (s_special16 (v, ascii) >> back)
                goto slow;
            _mm_storeu_si128 ((__m128i *) (o - back), v);
            o += end - p;
        }
    }
    else
    if (len >= 8) {
        uint64_t a, b;
        memcpy (&a, p, 8);
        memcpy (&b, end - 8, 8);
        if (s_special16 (_mm_set_epi64x ((long long) b, (long long) a), ascii))
            goto slow;
        memcpy (o, &a, 8);
        memcpy (o + len - 8, &b, 8);
        o += len;
    }
    else
#elif defined (S_SWAR)
    if (len >= 8) {
        uint64_t x, m;
        do {
            memcpy (&x, p, 8);
            memcpy (o, &x, 8);
            m = s_special8 (x, ascii);
            if (m)
                goto slow;
            p += 8;
            o += 8;
        } while (end - p >= 8);
        if (p < end) {
            size_t back = 8 - (size_t) (end - p);
            memcpy (&x, end - 8, 8);
            m = s_special8 (x, ascii) >> (8 * back);
            if (m)
                goto slow;
            memcpy (o - back, &x, 8);
            o += end - p;
        }
    }
    else
#endif
#ifdef S_SWAR
    if (len >= 4) {
        uint32_t a, b;
        memcpy (&a, p, 4);
        memcpy (&b, end - 4, 4);
        if (s_special8 ((uint64_t) a | ((uint64_t) b << 32), ascii))
            goto slow;
        memcpy (o, &a, 4);
        memcpy (o + len - 4, &b, 4);
        o += len;
    }
    else {
        const unsigned char *plain = ascii ? s_plain_ascii : s_plain;
        for (; p < end; p++) {
            if (!plain [*p])
                goto slow;
            *o++ = (char) *p;
        }
    }
    *o++ = '"';
    return o;
slow:
#endif
    return s_string_slow (buf, o, p, end, ascii, extra);
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
static S_ALWAYS_INLINE char *
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
        for (size_t i = 0; i < n && i < 32; i++)
            __builtin_prefetch (v->u.items [i]);
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
    //  the children are separate allocations: ask for all of them at once rather than
    //  wait for each in turn (reading their type is otherwise a cache miss per value)
    for (size_t i = 0; i < n && i < 32; i++)
        __builtin_prefetch (e [i].value);
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
        if (e->plain && e->keylen < UFO_VALUE_KEY_INLINE) {
            //  nothing to escape: the whole inline key buffer is stored blindly (the
            //  reservation above covers it) and the cursor moves by the key's length
            *o++ = '"';
            memcpy (o, e->k.inl, UFO_VALUE_KEY_INLINE);
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
