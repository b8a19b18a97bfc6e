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
#include "value_private.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define S_AVX512 1
#endif

#define S_MAX_DEPTH 32
#define S_MAX_KEYS 64


//  Every scanner takes the scan context and the position of its first byte, and returns
//  the position just past what it recognised, or NULL when the text is not canonical.
//
//  Strings are found with a bit mask per 64-byte block of the input (bytes that end or
//  interrupt a plain run: '"', '\\', controls, DEL, non-ASCII), shared by all the short
//  strings in the block, so finding the end of a string is a shift and a count of trailing
//  zeros. The masks of a window of UFO_CANON_WINDOW blocks are computed in one tight pass
//  ahead of the scan; they come from AVX-512BW where the CPU has it (checked once at run
//  time), else from SSE2 or a table; all give the same bits.
//
//  The scan context is ufo_canon_t (model_private.h). The scan only moves forward, also
//  from one ufo_canon_next call to the next, so the cached block is the current one until p
//  reaches its end; block_end starts at the input's start, which makes the first string
//  load a block.
typedef ufo_canon_t s_ctx_t;

static const char *s_value (s_ctx_t *c, const char *p, int depth);

#if !defined(__SSE2__)
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
#endif

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

//  Masks of the special bytes and of the quotes of 64 readable bytes at b.
static inline uint64_t
s_mask64 (const char *b, uint64_t *quotes_p)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8 ('"');
    const __m128i bslash = _mm_set1_epi8 ('\\');
    const __m128i space = _mm_set1_epi8 (0x20);
    const __m128i del = _mm_set1_epi8 (0x7f);
    uint64_t mask = 0, quotes = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) (b + 16 * k));
        __m128i q = _mm_cmpeq_epi8 (v, quote);
        //  signed compare: bytes >= 0x80 are negative, so "< 0x20" catches them too
        __m128i m = _mm_or_si128 (_mm_or_si128 (q, _mm_cmpeq_epi8 (v, bslash)),
                                  _mm_or_si128 (_mm_cmplt_epi8 (v, space),
                                                _mm_cmpeq_epi8 (v, del)));
        mask |= (uint64_t) (unsigned) _mm_movemask_epi8 (m) << (16 * k);
        quotes |= (uint64_t) (unsigned) _mm_movemask_epi8 (q) << (16 * k);
    }
    *quotes_p = quotes;
    return mask;
#else
    uint64_t mask = 0, quotes = 0;
    for (int i = 0; i < 64; i++) {
        if (!s_plain [(unsigned char) b [i]])
            mask |= (uint64_t) 1 << i;
        if (b [i] == '"')
            quotes |= (uint64_t) 1 << i;
    }
    *quotes_p = quotes;
    return mask;
#endif
}

#if defined(S_AVX512)
//  The same masks with AVX-512BW for count blocks of 64 readable bytes at b: one load and
//  three compares a block, in a loop with nothing else in it.
__attribute__ ((target ("avx512bw")))
static void
s_fill_avx512 (const char *b, size_t count, uint64_t *special, uint64_t *quotes)
{
    const __m512i quote = _mm512_set1_epi8 ('"');
    const __m512i bslash = _mm512_set1_epi8 ('\\');
    const __m512i low = _mm512_set1_epi8 (0x20);
    const __m512i span = _mm512_set1_epi8 (0x5f);
    for (size_t i = 0; i < count; i++) {
        __m512i v = _mm512_loadu_si512 ((const void *) (b + 64 * i));
        uint64_t q = _mm512_cmpeq_epi8_mask (v, quote);
        uint64_t bs = _mm512_cmpeq_epi8_mask (v, bslash);
        //  bytes outside 0x20..0x7e: (byte - 0x20) as unsigned is then >= 0x5f
        uint64_t other = _mm512_cmpge_epu8_mask (_mm512_sub_epi8 (v, low), span);
        special [i] = q | bs | other;
        quotes [i] = q;
    }
}

static int s_avx512 = -1;           //  -1: not checked yet, 0: portable masks, 1: AVX-512BW

static bool
s_use_avx512 (void)
{
    int have = __atomic_load_n (&s_avx512, __ATOMIC_RELAXED);
    if (have < 0) {
        __builtin_cpu_init ();
        //  UFO_CANON_PORTABLE set to anything but "" or "0" forces the portable masks (to
        //  compare the two)
        const char *portable = getenv ("UFO_CANON_PORTABLE");
        bool forced = portable && *portable && strcmp (portable, "0") != 0;
        have = __builtin_cpu_supports ("avx512bw") && !forced ? 1 : 0;
        __atomic_store_n (&s_avx512, have, __ATOMIC_RELAXED);
    }
    return have == 1;
}
#endif

void
ufo_canon__portable (bool on)
{
#if defined(S_AVX512)
    if (on)
        __atomic_store_n (&s_avx512, 0, __ATOMIC_RELAXED);
    else {
        __atomic_store_n (&s_avx512, -1, __ATOMIC_RELAXED);
        s_use_avx512 ();
    }
#else
    UFO_UNUSED (on);
#endif
}

//  Masks of count blocks of 64 readable bytes at b, with the fastest code the CPU has.
static void
s_fill (const char *b, size_t count, uint64_t *special, uint64_t *quotes)
{
#if defined(S_AVX512)
    if (__atomic_load_n (&s_avx512, __ATOMIC_RELAXED) == 1) {
        s_fill_avx512 (b, count, special, quotes);
        return;
    }
#endif
    for (size_t i = 0; i < count; i++)
        special [i] = s_mask64 (b + 64 * i, &quotes [i]);
}

//  Computes the masks of the window of blocks that starts with block first (which holds at
//  least one byte of the input), all in one pass: up to UFO_CANON_WINDOW blocks, fewer at
//  the input's end. Bytes past the input's end count as special (so no string runs past
//  it).
static void
s_fill_window (s_ctx_t *c, size_t first)
{
    size_t size = (size_t) (c->end - c->text);
    size_t off = first * 64;
    assert (off < size);
    size_t full = (size - off) / 64;
    if (full > UFO_CANON_WINDOW)
        full = UFO_CANON_WINDOW;
    s_fill (c->text + off, full, c->win_special, c->win_quotes);
    size_t count = full;
    size_t left = size - off - 64 * full;
    if (count < UFO_CANON_WINDOW && left > 0) {
        char tmp [64];
        memcpy (tmp, c->text + off + 64 * full, left);
        memset (tmp + left, 0, 64 - left);
        s_fill (tmp, 1, &c->win_special [count], &c->win_quotes [count]);
        c->win_special [count] |= ~(uint64_t) 0 << left;
        count++;
    }
    c->win_first = first;
    c->win_count = count;
}

//  Caches the masks of the block holding p (p < c->end), from the window; a block past the
//  window starts the next one.
static inline void
s_load_block (s_ctx_t *c, const char *p)
{
    size_t index = (size_t) (p - c->text) / 64;
    size_t at = index - c->win_first;
    if (index < c->win_first || at >= c->win_count) {
        s_fill_window (c, index);
        at = 0;
    }
    c->special = c->win_special [at];
    c->quotes = c->win_quotes [at];
    const char *b = c->text + 64 * index;
    c->block = b;
    //  the tail block ends at the input's end, where a string is refused anyway
    c->block_end = (size_t) (c->end - b) >= 64 ? b + 64 : c->end;
}

//  At the opening quote.
static inline __attribute__ ((always_inline)) const char *
s_string (s_ctx_t *c, const char *p)
{
    const char *end = c->end;
    p++;
    for (;;) {
        //  The block ends at the input's end at the latest, so the end of the input is
        //  checked here (the tail block also marks the bytes past the end special).
        if (p >= c->block_end) {
            if (p >= end)
                return NULL;
            s_load_block (c, p);
        }
        unsigned shift = (unsigned) (p - c->block);
        uint64_t m = c->special >> shift;
        if (!m) {
            p = c->block_end;
            continue;
        }
        //  the closing quote is known from the masks, without reading the byte
        if ((c->quotes >> shift) & m & -m)
            return p + __builtin_ctzll (m) + 1;
        p += __builtin_ctzll (m);
        if (p >= end)
            return NULL;
        char ch = *p;
        if (ch != '\\' || end - p < 2)
            return NULL;                //  raw control, DEL or non-ASCII byte
        ch = p [1];
        if (ch == '"' || ch == '\\' || ch == 'b' || ch == 'f' || ch == 'n' || ch == 'r' || ch == 't') {
            p += 2;
            continue;
        }
        if (ch != 'u' || end - p < 6)
            return NULL;
        int cp = s_hex4 (p + 2);
        if (cp < 0)
            return NULL;
        if (cp >= 0x20 && cp < 0x7f)
            return NULL;                //  would be written raw
        if (cp == '\b' || cp == '\f' || cp == '\n' || cp == '\r' || cp == '\t')
            return NULL;                //  would use the short escape
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return NULL;                //  lone low surrogate
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - p < 12 || p [6] != '\\' || p [7] != 'u')
                return NULL;            //  lone high surrogate
            int lo = s_hex4 (p + 8);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return NULL;
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

//  Fast check of the common float spelling: fixed notation I.F without exponent, at most
//  15 significant digits, no trailing zero in F (except "X.0"), and a magnitude that repr()
//  writes in fixed notation (1e-4 <= |x| < 1e16, or zero). Such a decimal is the only one of
//  its length or shorter that rounds to its double (DBL_DIG = 15), so repr() gives it back.
//  I has nint digits at digits, F nfrac >= 1 digits at frac. Returns false when unsure; the
//  caller then compares with ufo_json_format_double.
static inline bool
s_simple_fixed (const char *digits, size_t nint, const char *frac, size_t nfrac)
{
    if (frac [nfrac - 1] == '0')        //  trailing zero: only "X.0" (and 0.0, -0.0)
        return nfrac == 1 && nint <= 15;
    size_t sig = nint + nfrac;
    if (nint == 1 && *digits == '0') {
        size_t zeros = 0;
        while (zeros < nfrac && frac [zeros] == '0')
            zeros++;
        if (zeros > 3)
            return false;               //  below 1e-4: repr uses an exponent
        sig = nfrac - zeros;
    }
    return sig <= 15;
}

//  One pass over the number: integers are done at their last digit, and the common float
//  spelling needs no conversion.
static const char *
s_number (const char *p, const char *end)
{
    const char *start = p;
    if (*p == '-') {
        p++;
        if (end - p >= 8 && memcmp (p, "Infinity", 8) == 0)
            return p + 8;
        if (p >= end)
            return NULL;
    }
    const char *digits = p;
    if (*p == '0')
        p++;
    else
    if (*p >= '1' && *p <= '9') {
        p++;
        while (p < end && s_digit (*p))
            p++;
    }
    else
        return NULL;
    size_t nint = (size_t) (p - digits);
    if (p >= end || (*p != '.' && *p != 'e' && *p != 'E')) {
        if (*start == '-' && nint == 1 && *digits == '0')
            return NULL;                //  "-0" is the integer 0
        if (nint > 19)
            return NULL;
        if (nint == 19) {
            const char *limit = *start == '-' ? "9223372036854775808" : "9223372036854775807";
            if (memcmp (digits, limit, 19) > 0)
                return NULL;
        }
        return p;
    }
    bool fixed = false;
    if (*p == '.') {
        const char *frac = ++p;
        while (p < end && s_digit (*p))
            p++;
        if (p == frac)
            return NULL;
        fixed = p >= end || (*p != 'e' && *p != 'E');
        if (fixed && s_simple_fixed (digits, nint, frac, (size_t) (p - frac)))
            return p;
    }
    if (!fixed) {
        p++;                            //  the exponent
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !s_digit (*p))
            return NULL;
        while (p < end && s_digit (*p))
            p++;
    }
    //  otherwise a float is canonical only if it is exactly what repr() gives back
    size_t len = (size_t) (p - start);
    char again [40];
    if (len >= sizeof (again))
        return NULL;
    int n = ufo_json_format_double (again, ufo_json__strtod (start, len));
    if ((size_t) n != len || memcmp (again, start, len) != 0)
        return NULL;
    return p;
}

//  The two bytes at p are a then b (one load and one compare).
static inline bool
s_pair (const char *p, char a, char b)
{
    const char want [2] = { a, b };
    uint16_t have, expect;
    memcpy (&have, p, 2);
    memcpy (&expect, want, 2);
    return have == expect;
}

static inline const char *
s_word (const char *p, const char *end, const char *word, size_t n)
{
    if ((size_t) (end - p) < n || memcmp (p, word, n) != 0)
        return NULL;
    return p + n;
}

//  A value inside a container: strings, numbers and literals are handled here without a
//  call; only nested containers recurse.
static inline __attribute__ ((always_inline)) const char *
s_element (s_ctx_t *c, const char *p, int depth)
{
    const char *end = c->end;
    switch (*p) {
        case '"': return s_string (c, p);
        case 't': return s_word (p, end, "true", 4);
        case 'f': return s_word (p, end, "false", 5);
        case 'n': return s_word (p, end, "null", 4);
        case '-': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9':
            return s_number (p, end);
        default:  return s_value (c, p, depth);
    }
}

static const char *
s_list (s_ctx_t *c, const char *p, int depth)
{
    const char *end = c->end;
    p++;
    if (p < end && *p == ']')
        return p + 1;
    for (;;) {
        if (p >= end || !(p = s_element (c, p, depth + 1)) || p >= end)
            return NULL;
        if (*p == ']')
            return p + 1;
        if (end - p < 2 || !s_pair (p, ',', ' '))
            return NULL;
        p += 2;
    }
}

//  The len bytes at p are those at key (p + len <= end and key + len <= end, both in the
//  same input): keys of up to 32 bytes are compared with two 16-byte loads when 32 bytes
//  are left after both.
static inline bool
s_same (const char *p, const char *end, const char *key, size_t len)
{
#if defined(__SSE2__)
    if (len <= 32 && end - p >= 32 && end - key >= 32) {
        __m128i a0 = _mm_loadu_si128 ((const __m128i *) (const void *) p);
        __m128i a1 = _mm_loadu_si128 ((const __m128i *) (const void *) (p + 16));
        __m128i b0 = _mm_loadu_si128 ((const __m128i *) (const void *) key);
        __m128i b1 = _mm_loadu_si128 ((const __m128i *) (const void *) (key + 16));
        uint32_t eq = (uint32_t) _mm_movemask_epi8 (_mm_cmpeq_epi8 (a0, b0))
                    | (uint32_t) _mm_movemask_epi8 (_mm_cmpeq_epi8 (a1, b1)) << 16;
        uint32_t want = len == 32 ? ~(uint32_t) 0 : ((uint32_t) 1 << len) - 1;
        return (eq & want) == want;
    }
#endif
    return memcmp (p, key, len) == 0;
}

//  Bit of the duplicate-key filter for the key text k (with its quotes) of klen bytes.
static inline uint64_t
s_key_bit (const char *k, size_t klen)
{
    return (uint64_t) 1 << ((klen * 31 + (unsigned char) k [1] * 7
                             + (unsigned char) k [klen - 2]) & 63);
}

//  Maps of one level usually have the keys of the map before them (the items of a list, the
//  lines of a file), so each level remembers the keys of its last accepted map (c->keys).
//  While a map's keys are those, in order, each is recognised by comparing its bytes and
//  the ": " after it with the remembered ones: they are canonical and distinct already.
//  From the first key that differs on, keys are scanned and checked for duplicates (among
//  all the map's keys) as usual, and the map's keys are remembered when it is accepted.
static const char *
s_map (s_ctx_t *c, const char *p, int depth)
{
    const char *end = c->end;
    const char *key_at [S_MAX_KEYS];
    size_t key_len [S_MAX_KEYS];
    size_t nkeys = 0;
    uint64_t seen = 0;
    ufo_canon_keys_t *known = depth < UFO_CANON_TMPL_DEPTH ? &c->keys [depth] : NULL;
    bool follow = known && known->count > 0;
    p++;
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        if (p >= end || *p != '"' || nkeys == S_MAX_KEYS)
            return NULL;
        if (follow && nkeys < known->count && (size_t) (end - p) > known->len [nkeys]
            && s_same (p, end, known->at [nkeys], known->len [nkeys]))
            p += known->len [nkeys++];
        else {
            if (follow) {
                //  the keys so far are the remembered ones: they seed the duplicate check
                for (size_t i = 0; i < nkeys; i++) {
                    key_at [i] = known->at [i];
                    key_len [i] = known->len [i] - 2u;
                    seen |= s_key_bit (key_at [i], key_len [i]);
                }
                follow = false;
            }
            const char *k = p;
            if (!(p = s_string (c, p)))
                return NULL;
            size_t klen = (size_t) (p - k);
            //  Duplicate keys: the last would win on load, so this text is not canonical.
            //  Equal strings have equal canonical encodings, so comparing bytes is exact.
            //  A 64-bit filter keyed on length and two bytes skips the pairwise scan for
            //  nearly every key; the scan runs only when the filter bit is already taken.
            uint64_t bit = s_key_bit (k, klen);
            if (seen & bit) {
                for (size_t i = 0; i < nkeys; i++)
                    if (key_len [i] == klen && memcmp (key_at [i], k, klen) == 0)
                        return NULL;
            }
            seen |= bit;
            key_at [nkeys] = k;
            key_len [nkeys] = klen;
            nkeys++;
            if (end - p < 3 || !s_pair (p, ':', ' '))
                return NULL;
            p += 2;
        }
        if (!(p = s_element (c, p, depth + 1)) || p >= end)
            return NULL;
        if (*p == '}')
            break;
        if (end - p < 2 || !s_pair (p, ',', ' '))
            return NULL;
        p += 2;
    }
    if (follow)
        known->count = nkeys;           //  the remembered keys, or the first of them
    else
    if (known) {
        bool fits = nkeys <= UFO_CANON_TMPL_KEYS;
        for (size_t i = 0; fits && i < nkeys; i++) {
            fits = key_len [i] + 2 <= UINT8_MAX;
            known->at [i] = key_at [i];
            known->len [i] = (uint8_t) (key_len [i] + 2);
        }
        known->count = fits ? nkeys : 0;
    }
    return p + 1;
}

static const char *
s_value (s_ctx_t *c, const char *p, int depth)
{
    const char *end = c->end;
    if (p >= end || depth > S_MAX_DEPTH)
        return NULL;
    switch (*p) {
        case '"': return s_string (c, p);
        case '{': return s_map (c, p, depth);
        case '[': return s_list (c, p, depth);
        case 't': return s_word (p, end, "true", 4);
        case 'f': return s_word (p, end, "false", 5);
        case 'n': return s_word (p, end, "null", 4);
        case 'N': return s_word (p, end, "NaN", 3);
        case 'I': return s_word (p, end, "Infinity", 8);
        default:  return s_number (p, end);
    }
}

//  Forgets the cached masks and the remembered keys: the scan starts over.
static void
s_restart (s_ctx_t *c)
{
    c->block = c->block_end = c->text;
    c->special = c->quotes = 0;
    c->win_first = c->win_count = 0;
    for (size_t i = 0; i < UFO_CANON_TMPL_DEPTH; i++)
        c->keys [i].count = 0;
}

void
ufo_canon_begin (ufo_canon_t *self, const char *text, size_t len)
{
    assert (self && text);
#if defined(S_AVX512)
    s_use_avx512 ();
#endif
    self->text = text;
    self->end = text + len;
    s_restart (self);
}

const char *
ufo_canon_next (ufo_canon_t *self, const char *p)
{
    assert (self && p >= self->text && p <= self->end);
    assert (p >= self->block);          //  forward only
    if (p < self->block)
        s_restart (self);               //  a caller broke the rule: start over
    if (p >= self->end)
        return NULL;
    return s_value (self, p, 0);
}

size_t
ufo_canon_value (const char *text, size_t len)
{
    if (!text || len == 0)
        return 0;
    ufo_canon_t c;
    ufo_canon_begin (&c, text, len);
    const char *p = ufo_canon_next (&c, text);
    return p ? (size_t) (p - text) : 0;
}
