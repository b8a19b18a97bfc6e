/*  ufo_canon.c - recognises JSON text that is already in canonical Python json.dumps form.

    Text in that form (what ufobus and the original both write) can be kept as an item's
    cached text as is: loading a snapshot or a JSON-lines file then only validates bytes
    instead of building value trees. Anything else (other whitespace, raw UTF-8, upper-case
    escapes, duplicate keys, big integers, non-repr floats, deep nesting) is refused, and the
    caller parses it with the full parser instead, so the result never depends on this path.

    Canonical form, as CPython's json encoder writes it with ensure_ascii:
    - strings: bytes 0x20..0x7E except '"' and '\\' raw; \" \\ \b \f \n \r \t; every other
      code point as lower-case \uXXXX (surrogate pairs above U+FFFF, never lone surrogates);
    - integers: -?(0|[1-9][0-9]*) within int64 and not "-0";
    - floats: exactly repr(float) (ufo_json_format_double), or NaN / Infinity / -Infinity;
    - "[" v (", " v)* "]", "{" k ": " v (", " k ": " v)* "}", "[]", "{}"; no other spaces. */
#include "ufo_prelude.h"
#include "model_private.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define S_MAX_DEPTH 32
#define S_MAX_KEYS 64

typedef struct {
    const char *p;
    const char *end;
} s_scan_t;

static bool s_value (s_scan_t *s, int depth);

//  1 for bytes that stand for themselves inside a canonical string
static const unsigned char s_plain [256] = {
    ['\x20'] = 1, ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
    ['('] = 1, [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, ['-'] = 1, ['.'] = 1, ['/'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, [':'] = 1, [';'] = 1, ['<'] = 1, ['='] = 1, ['>'] = 1, ['?'] = 1,
    ['@'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
    ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,
    ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1,
    ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['['] = 1, [']'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1, ['~'] = 1,
};

//  Lower-case hex only (the canonical form); -1 otherwise.
static inline int
s_hex4 (const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p [i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else
        if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else
            return -1;
    }
    return v;
}

//  At the opening quote.
static bool
s_string (s_scan_t *s)
{
    const char *p = s->p + 1;
    const char *end = s->end;
    for (;;) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8 ('"');
        const __m128i bslash = _mm_set1_epi8 ('\\');
        const __m128i space = _mm_set1_epi8 (0x20);
        const __m128i del = _mm_set1_epi8 (0x7f);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) p);
            //  signed compare: bytes >= 0x80 are negative, so "< 0x20" catches them too
            __m128i m = _mm_or_si128 (_mm_or_si128 (_mm_cmpeq_epi8 (v, quote),
                                                    _mm_cmpeq_epi8 (v, bslash)),
                                      _mm_or_si128 (_mm_cmplt_epi8 (v, space),
                                                    _mm_cmpeq_epi8 (v, del)));
            int mask = _mm_movemask_epi8 (m);
            if (mask) {
                p += __builtin_ctz ((unsigned) mask);
                break;
            }
            p += 16;
        }
#endif
        while (p < end && s_plain [(unsigned char) *p])
            p++;
        if (p >= end)
            return false;
        char c = *p;
        if (c == '"') {
            s->p = p + 1;
            return true;
        }
        if (c != '\\' || end - p < 2)
            return false;               //  raw control, DEL or non-ASCII byte
        c = p [1];
        if (c == '"' || c == '\\' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
            p += 2;
            continue;
        }
        if (c != 'u' || end - p < 6)
            return false;
        int cp = s_hex4 (p + 2);
        if (cp < 0)
            return false;
        if (cp >= 0x20 && cp < 0x7f)
            return false;               //  would be written raw
        if (cp == '\b' || cp == '\f' || cp == '\n' || cp == '\r' || cp == '\t')
            return false;               //  would use the short escape
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return false;               //  lone low surrogate
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - p < 12 || p [6] != '\\' || p [7] != 'u')
                return false;           //  lone high surrogate
            int lo = s_hex4 (p + 8);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return false;
            p += 12;
            continue;
        }
        p += 6;
    }
}

static inline bool
s_digit (char c)
{
    return c >= '0' && c <= '9';
}

static bool
s_number (s_scan_t *s)
{
    const char *start = s->p;
    const char *p = start;
    const char *end = s->end;
    if (*p == '-') {
        p++;
        if (end - p >= 8 && memcmp (p, "Infinity", 8) == 0) {
            s->p = p + 8;
            return true;
        }
    }
    if (p >= end)
        return false;
    const char *digits = p;
    if (*p == '0')
        p++;
    else
    if (*p >= '1' && *p <= '9') {
        while (p < end && s_digit (*p))
            p++;
    }
    else
        return false;
    size_t ndigits = (size_t) (p - digits);
    bool is_float = false;
    if (p < end && *p == '.') {
        is_float = true;
        p++;
        if (p >= end || !s_digit (*p))
            return false;
        while (p < end && s_digit (*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_float = true;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !s_digit (*p))
            return false;
        while (p < end && s_digit (*p))
            p++;
    }
    size_t len = (size_t) (p - start);
    if (!is_float) {
        if (*start == '-' && ndigits == 1 && *digits == '0')
            return false;               //  "-0" is the integer 0
        if (ndigits > 19)
            return false;
        if (ndigits == 19) {
            const char *limit = *start == '-' ? "9223372036854775808" : "9223372036854775807";
            if (memcmp (digits, limit, 19) > 0)
                return false;
        }
        s->p = p;
        return true;
    }
    //  a float is canonical only if it is exactly what repr() gives back
    char copy [40], again [40];
    if (len >= sizeof (copy))
        return false;
    memcpy (copy, start, len);
    copy [len] = 0;
    double value = strtod (copy, NULL);
    int n = ufo_json_format_double (again, value);
    if ((size_t) n != len || memcmp (again, copy, len) != 0)
        return false;
    s->p = p;
    return true;
}

static bool
s_word (s_scan_t *s, const char *word, size_t n)
{
    if ((size_t) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
        return false;
    s->p += n;
    return true;
}

static bool
s_list (s_scan_t *s, int depth)
{
    s->p++;
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return true;
    }
    for (;;) {
        if (!s_value (s, depth + 1))
            return false;
        if (s->p >= s->end)
            return false;
        if (*s->p == ']') {
            s->p++;
            return true;
        }
        if (s->end - s->p < 2 || s->p [0] != ',' || s->p [1] != ' ')
            return false;
        s->p += 2;
    }
}

static bool
s_map (s_scan_t *s, int depth)
{
    const char *key_at [S_MAX_KEYS];
    size_t key_len [S_MAX_KEYS];
    size_t nkeys = 0;
    s->p++;
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return true;
    }
    for (;;) {
        if (s->p >= s->end || *s->p != '"' || nkeys == S_MAX_KEYS)
            return false;
        const char *k = s->p;
        if (!s_string (s))
            return false;
        size_t klen = (size_t) (s->p - k);
        //  duplicate keys: the last would win on load, so this text is not canonical.
        //  Equal strings have equal canonical encodings, so comparing bytes is exact.
        for (size_t i = 0; i < nkeys; i++)
            if (key_len [i] == klen && memcmp (key_at [i], k, klen) == 0)
                return false;
        key_at [nkeys] = k;
        key_len [nkeys] = klen;
        nkeys++;
        if (s->end - s->p < 2 || s->p [0] != ':' || s->p [1] != ' ')
            return false;
        s->p += 2;
        if (!s_value (s, depth + 1))
            return false;
        if (s->p >= s->end)
            return false;
        if (*s->p == '}') {
            s->p++;
            return true;
        }
        if (s->end - s->p < 2 || s->p [0] != ',' || s->p [1] != ' ')
            return false;
        s->p += 2;
    }
}

static bool
s_value (s_scan_t *s, int depth)
{
    if (s->p >= s->end || depth > S_MAX_DEPTH)
        return false;
    switch (*s->p) {
        case '"': return s_string (s);
        case '{': return s_map (s, depth);
        case '[': return s_list (s, depth);
        case 't': return s_word (s, "true", 4);
        case 'f': return s_word (s, "false", 5);
        case 'n': return s_word (s, "null", 4);
        case 'N': return s_word (s, "NaN", 3);
        case 'I': return s_word (s, "Infinity", 8);
        default:  return s_number (s);
    }
}

size_t
ufo_canon_value (const char *text, size_t len)
{
    if (!text || len == 0)
        return 0;
    s_scan_t s = { text, text + len };
    if (!s_value (&s, 0))
        return 0;
    return (size_t) (s.p - text);
}
