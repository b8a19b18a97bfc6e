/*  ufo_json.c - strict JSON parser (the writer is in ufo_json_write.c).

    Parser: recursive descent over a byte range with an explicit depth bound. Strings
    without escapes are copied straight from the input; UTF-8 is validated as we go.
    The elements and pairs of an open list or map wait on a stack in the parser and get an
    array of the exact size when it closes.
    Integers that fit in int64 stay exact; anything else numeric becomes a double
    (parsed with the C locale, whatever the process locale is).

    Writer (ufo_json_write.c): UFO_JSON_PY reproduces Python's json.dumps() defaults byte for byte:
    separators ", " and ": ", ensure_ascii (\uXXXX in lower-case hex, surrogate pairs
    above U+FFFF), floats as repr(), NaN/Infinity as Python writes them. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "value_private.h"
#include <float.h>
#include <locale.h>
#include <pthread.h>

#define UFO_JSON_DEFAULT_DEPTH 128

static locale_t s_c_locale;
static pthread_once_t s_locale_once = PTHREAD_ONCE_INIT;

static void
s_locale_init (void)
{
    s_c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
}

double
ufo_json__strtod (const char *s, size_t len)
{
    pthread_once (&s_locale_once, s_locale_init);
    char small [64];
    char *copy = len < sizeof (small) ? small : (char *) ufo_malloc (len + 1);
    memcpy (copy, s, len);
    copy [len] = 0;
    double value = s_c_locale ? strtod_l (copy, NULL, s_c_locale) : strtod (copy, NULL);
    if (copy != small)
        free (copy);
    return value;
}

//  --- UTF-8 (shared helpers in ufo_utf8.c) -----------------------------------

static inline size_t
s_utf8_seq (const unsigned char *s, size_t n, uint32_t *cp)
{
    if (s [0] < 0x80) {
        *cp = s [0];
        return 1;
    }
    return ufo_utf8_seq (s, n, cp);
}

static void
s_utf8_put (ufo_buf_t *buf, uint32_t cp)
{
    char out [4];
    ufo_buf_append (buf, out, ufo_utf8_encode (cp, out));
}

//  --- Parser -------------------------------------------------------------------

typedef struct {
    const char *start;
    const char *p;
    const char *end;
    size_t depth;
    size_t max_depth;
    bool allow_nan;
    ufo_error_t *err;
    ufo_buf_t scratch;          //  decoded strings that had escapes
    bool plain;                 //  the last string needs no escaping (no escape, DEL or
                                //  non-ASCII byte in its text): ufo_value_entry_t.plain
    ufo_value_t **items;        //  elements of the open lists, innermost last
    size_t nitems, items_cap;
    s_entry_t *pairs;           //  pairs of the open maps, innermost last
    size_t npairs, pairs_cap;
} s_parser_t;

//  1 for bytes that may appear unescaped in a string and need no UTF-8 check
static unsigned char s_plain [256];
static pthread_once_t s_tables_once = PTHREAD_ONCE_INIT;

static void
s_tables_init (void)
{
    for (int c = 0x20; c < 0x80; c++)
        s_plain [c] = 1;
    s_plain ['"'] = 0;
    s_plain ['\\'] = 0;
    s_plain [0x7F] = 0;         //  allowed, but stops the run: not plain
}

static ufo_value_t *s_parse_value (s_parser_t *self);

static int
s_fail (s_parser_t *self, int code, const char *what)
{
    size_t offset = (size_t) (self->p - self->start);
    if (code == UFO_E_TRUNCATED)
        return ufo_error_set_at (self->err, code, offset, "JSON ends early at byte %zu: %s",
                                 offset, what);
    return ufo_error_set_at (self->err, code, offset, "JSON %s at byte %zu", what, offset);
}

static inline void
s_skip_ws (s_parser_t *self)
{
    while (self->p < self->end) {
        char c = *self->p;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            self->p++;
        else
            break;
    }
}

static int
s_hex4 (s_parser_t *self, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (self->p + i >= self->end) {
            self->p = self->end;
            return s_fail (self, UFO_E_TRUNCATED, "incomplete \\u escape");
        }
        char c = self->p [i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t) (c - '0');
        else
        if (c >= 'a' && c <= 'f')
            v |= (uint32_t) (c - 'a' + 10);
        else
        if (c >= 'A' && c <= 'F')
            v |= (uint32_t) (c - 'A' + 10);
        else {
            self->p += i;
            return s_fail (self, UFO_E_SYNTAX, "has a bad \\u escape");
        }
    }
    self->p += 4;
    *out = v;
    return 0;
}

//  Parses a string; self->p is just past the opening quote. On success *out/*outlen point
//  either into the input (no escapes) or into self->scratch (valid until the next string).
static int
s_parse_string (s_parser_t *self, const char **out, size_t *outlen)
{
    const char *run = self->p;
    bool escaped = false;
    bool plain = true;
    self->scratch.len = 0;
    while (true) {
        const unsigned char *q = (const unsigned char *) self->p;
        const unsigned char *end = (const unsigned char *) self->end;
        while (q < end && s_plain [*q])
            q++;
        self->p = (const char *) q;
        if (UFO_UNLIKELY (q >= end))
            return s_fail (self, UFO_E_TRUNCATED, "unterminated string");
        unsigned char c = *q;
        if (c == '"') {
            if (escaped) {
                ufo_buf_append (&self->scratch, run, (size_t) (self->p - run));
                *out = self->scratch.data;
                *outlen = self->scratch.len;
            }
            else {
                *out = run;
                *outlen = (size_t) (self->p - run);
            }
            self->plain = plain && !escaped;
            self->p++;
            return 0;
        }
        if (c == 0x7F) {
            plain = false;
            self->p++;
            continue;
        }
        if (c == '\\') {
            ufo_buf_append (&self->scratch, run, (size_t) (self->p - run));
            escaped = true;
            self->p++;
            if (self->p >= self->end)
                return s_fail (self, UFO_E_TRUNCATED, "unterminated escape");
            char e = *self->p++;
            switch (e) {
                case '"':  ufo_buf_putc (&self->scratch, '"'); break;
                case '\\': ufo_buf_putc (&self->scratch, '\\'); break;
                case '/':  ufo_buf_putc (&self->scratch, '/'); break;
                case 'b':  ufo_buf_putc (&self->scratch, '\b'); break;
                case 'f':  ufo_buf_putc (&self->scratch, '\f'); break;
                case 'n':  ufo_buf_putc (&self->scratch, '\n'); break;
                case 'r':  ufo_buf_putc (&self->scratch, '\r'); break;
                case 't':  ufo_buf_putc (&self->scratch, '\t'); break;
                case 'u': {
                    uint32_t cp;
                    if (s_hex4 (self, &cp))
                        return -1;
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        //  A high surrogate pairs with a following \uDC00..\uDFFF;
                        //  a lone surrogate (Python accepts it) becomes U+FFFD.
                        uint32_t low = 0;
                        if (self->end - self->p >= 6 && self->p [0] == '\\' && self->p [1] == 'u') {
                            const char *save = self->p;
                            self->p += 2;
                            if (s_hex4 (self, &low))
                                return -1;
                            if (low >= 0xDC00 && low <= 0xDFFF)
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                            else {
                                self->p = save;
                                cp = 0xFFFD;
                            }
                        }
                        else
                            cp = 0xFFFD;
                    }
                    else
                    if (cp >= 0xDC00 && cp <= 0xDFFF)
                        cp = 0xFFFD;
                    s_utf8_put (&self->scratch, cp);
                    break;
                }
                default:
                    self->p--;
                    return s_fail (self, UFO_E_SYNTAX, "has an invalid escape");
            }
            run = self->p;
            continue;
        }
        if (c < 0x20)
            return s_fail (self, UFO_E_SYNTAX, "has a raw control character in a string");
        //  c >= 0x80: validate one UTF-8 sequence
        plain = false;
        uint32_t cp;
        size_t n = s_utf8_seq (q, (size_t) (end - q), &cp);
        if (!n) {
            if ((size_t) (end - q) < 4 && (c & 0xC0) == 0xC0) {
                //  could be a sequence cut by the end of input
                bool prefix = true;
                for (const unsigned char *r = q + 1; r < end; r++)
                    if ((*r & 0xC0) != 0x80)
                        prefix = false;
                if (prefix)
                    return s_fail (self, UFO_E_TRUNCATED, "UTF-8 sequence cut short");
            }
            ufo_error_set_at (self->err, UFO_E_UTF8, (size_t) (self->p - self->start),
                              "JSON string has invalid UTF-8 at byte %zu",
                              (size_t) (self->p - self->start));
            return -1;
        }
        self->p += n;
    }
}

static ufo_value_t *
s_parse_number (s_parser_t *self)
{
    const char *s = self->p;
    const char *p = s;
    const char *end = self->end;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
        if (p < end && *p == 'I' && self->allow_nan) {
            if (end - p >= 8 && memcmp (p, "Infinity", 8) == 0) {
                self->p = p + 8;
                return ufo_value_new_float (-INFINITY);
            }
        }
    }
    if (p >= end) {
        self->p = p;
        s_fail (self, UFO_E_TRUNCATED, "number");
        return NULL;
    }
    uint64_t mag = 0;
    bool overflow = false;
    bool is_float = false;
    if (*p == '0')
        p++;
    else
    if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            unsigned d = (unsigned) (*p - '0');
            if (mag > (UINT64_MAX - d) / 10)
                overflow = true;
            else
                mag = mag * 10 + d;
            p++;
        }
    }
    else {
        self->p = p;
        s_fail (self, UFO_E_SYNTAX, "has an invalid number");
        return NULL;
    }
    //  Fast path (Clinger): I.F with no exponent and at most 15 significant digits is the
    //  integer IF (exact: < 2^53) divided by 10^|F| (exact up to 10^22), one correctly
    //  rounded division, which is what strtod returns.
    const char *int_start = neg ? s + 1 : s;
    const char *frac_start = NULL;
    if (p < end && *p == '.') {
        is_float = true;
        p++;
        if (p >= end || *p < '0' || *p > '9') {
            self->p = p;
            s_fail (self, p >= end ? UFO_E_TRUNCATED : UFO_E_SYNTAX, "number needs digits after '.'");
            return NULL;
        }
        frac_start = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    bool exponent = p < end && (*p == 'e' || *p == 'E');
    if (frac_start && !exponent && !overflow) {
        static const double pow10 [] = {
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
        };
        size_t nfrac = (size_t) (p - frac_start);
        size_t nint = (size_t) (frac_start - 1 - int_start);
        //  significant digits: a leading "0" before the point does not count
        size_t nsig = nfrac + (nint == 1 && *int_start == '0' ? 0 : nint);
        if (nsig <= 15 && nfrac < UFO_ARRAY_SIZE (pow10) && FLT_EVAL_METHOD == 0) {
            uint64_t m = mag;
            for (const char *q = frac_start; q < p; q++)
                m = m * 10 + (unsigned) (*q - '0');
            //  m < 10^15 only when leading fraction zeros are not counted as significant:
            //  they add nothing to m, so m <= 10^nsig holds either way
            double value = (double) m / pow10 [nfrac];
            self->p = p;
            return ufo_value_new_float (neg ? -value : value);
        }
    }
    if (exponent) {
        is_float = true;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9') {
            self->p = p;
            s_fail (self, p >= end ? UFO_E_TRUNCATED : UFO_E_SYNTAX, "number needs exponent digits");
            return NULL;
        }
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    self->p = p;
    if (!is_float && !overflow) {
        if (!neg && mag <= (uint64_t) INT64_MAX)
            return ufo_value_new_int ((int64_t) mag);
        if (neg && mag <= (uint64_t) INT64_MAX + 1)
            return ufo_value_new_int (mag == (uint64_t) INT64_MAX + 1 ? INT64_MIN : -(int64_t) mag);
    }
    return ufo_value_new_float (ufo_json__strtod (s, (size_t) (p - s)));
}

static bool
s_literal (s_parser_t *self, const char *word, size_t n)
{
    size_t left = (size_t) (self->end - self->p);
    if (left < n) {
        if (memcmp (self->p, word, left) == 0) {
            self->p = self->end;
            s_fail (self, UFO_E_TRUNCATED, "literal cut short");
        }
        else
            s_fail (self, UFO_E_SYNTAX, "has an unexpected character");
        return false;
    }
    if (memcmp (self->p, word, n) != 0) {
        s_fail (self, UFO_E_SYNTAX, "has an unexpected character");
        return false;
    }
    self->p += n;
    return true;
}

static ufo_value_t *
s_parse_list (s_parser_t *self)
{
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nests deeper than the limit");
        return NULL;
    }
    self->p++;          //  '['
    size_t base = self->nitems;
    s_skip_ws (self);
    if (self->p < self->end && *self->p == ']')
        self->p++;
    else
    while (true) {
        ufo_value_t *item = s_parse_value (self);
        if (!item)
            return NULL;            //  ufo_json_parse destroys what waits on the stacks
        if (self->nitems == self->items_cap) {
            self->items_cap = self->items_cap ? self->items_cap * 2 : 64;
            self->items = (ufo_value_t **) ufo_realloc (
                self->items, self->items_cap * sizeof (ufo_value_t *));
        }
        self->items [self->nitems++] = item;
        s_skip_ws (self);
        if (self->p >= self->end) {
            s_fail (self, UFO_E_TRUNCATED, "list not closed");
            return NULL;
        }
        if (*self->p == ',') {
            self->p++;
            continue;
        }
        if (*self->p == ']') {
            self->p++;
            break;
        }
        s_fail (self, UFO_E_SYNTAX, "expects ',' or ']'");
        return NULL;
    }
    self->depth--;
    //  (no pointer arithmetic on the stack before anything was put on it: NULL + 0 is UB)
    ufo_value_t *list = ufo_value__list_of (self->items ? self->items + base : NULL,
                                            self->nitems - base);
    self->nitems = base;
    return list;
}

static ufo_value_t *
s_parse_map (s_parser_t *self)
{
    if (++self->depth > self->max_depth) {
        s_fail (self, UFO_E_TOO_DEEP, "nests deeper than the limit");
        return NULL;
    }
    self->p++;          //  '{'
    size_t base = self->npairs;
    s_skip_ws (self);
    if (self->p < self->end && *self->p == '}')
        self->p++;
    else
    while (true) {
        s_skip_ws (self);
        if (self->p >= self->end) {
            s_fail (self, UFO_E_TRUNCATED, "object not closed");
            return NULL;
        }
        if (*self->p != '"') {
            s_fail (self, UFO_E_SYNTAX, "expects a string key");
            return NULL;
        }
        self->p++;
        const char *key;
        size_t keylen;
        if (s_parse_string (self, &key, &keylen))
            return NULL;
        if (keylen >= UINT32_MAX) {
            s_fail (self, UFO_E_TOO_LARGE, "has a key that is too long");
            return NULL;
        }
        //  the key goes into its pair now (scratch is reused by the value)
        if (self->npairs == self->pairs_cap) {
            self->pairs_cap = self->pairs_cap ? self->pairs_cap * 2 : 64;
            self->pairs = (s_entry_t *) ufo_realloc (self->pairs,
                                                     self->pairs_cap * sizeof (s_entry_t));
        }
        size_t at = self->npairs++;
        s_entry_t *e = &self->pairs [at];
        e->keylen = (uint32_t) keylen;
        e->value = NULL;
        if (keylen < UFO_VALUE_KEY_INLINE) {
            memcpy (e->k.inl, key, keylen);
            e->k.inl [keylen] = 0;
        }
        else {
            e->k.heap = (char *) ufo_malloc (keylen + 1);
            memcpy (e->k.heap, key, keylen);
            e->k.heap [keylen] = 0;
        }
        e->plain = self->plain;
        s_skip_ws (self);
        if (self->p >= self->end) {
            s_fail (self, UFO_E_TRUNCATED, "object not closed");
            return NULL;
        }
        if (*self->p != ':') {
            s_fail (self, UFO_E_SYNTAX, "expects ':'");
            return NULL;
        }
        self->p++;
        ufo_value_t *value = s_parse_value (self);
        if (!value)
            return NULL;
        self->pairs [at].value = value;
        s_skip_ws (self);
        if (self->p >= self->end) {
            s_fail (self, UFO_E_TRUNCATED, "object not closed");
            return NULL;
        }
        if (*self->p == ',') {
            self->p++;
            continue;
        }
        if (*self->p == '}') {
            self->p++;
            break;
        }
        s_fail (self, UFO_E_SYNTAX, "expects ',' or '}'");
        return NULL;
    }
    self->depth--;
    ufo_value_t *map = ufo_value__map_of (self->pairs ? self->pairs + base : NULL,
                                          self->npairs - base);
    self->npairs = base;
    return map;
}

static ufo_value_t *
s_parse_value (s_parser_t *self)
{
    s_skip_ws (self);
    if (self->p >= self->end) {
        s_fail (self, UFO_E_TRUNCATED, "value expected");
        return NULL;
    }
    switch (*self->p) {
        case '{':
            return s_parse_map (self);
        case '[':
            return s_parse_list (self);
        case '"': {
            self->p++;
            const char *s;
            size_t len;
            if (s_parse_string (self, &s, &len))
                return NULL;
            return ufo_value_new_stringn (s, len);
        }
        case 't':
            return s_literal (self, "true", 4) ? ufo_value_new_bool (true) : NULL;
        case 'f':
            return s_literal (self, "false", 5) ? ufo_value_new_bool (false) : NULL;
        case 'n':
            return s_literal (self, "null", 4) ? ufo_value_new_null () : NULL;
        case 'N':
            if (self->allow_nan)
                return s_literal (self, "NaN", 3) ? ufo_value_new_float (NAN) : NULL;
            break;
        case 'I':
            if (self->allow_nan)
                return s_literal (self, "Infinity", 8) ? ufo_value_new_float (INFINITY) : NULL;
            break;
        default:
            if (*self->p == '-' || (*self->p >= '0' && *self->p <= '9'))
                return s_parse_number (self);
            break;
    }
    s_fail (self, UFO_E_SYNTAX, "has an unexpected character");
    return NULL;
}

ufo_value_t *
ufo_json_parse (const char *text, size_t len, const ufo_json_limits_t *limits, ufo_error_t *err)
{
    pthread_once (&s_tables_once, s_tables_init);
    ufo_error_clear (err);
    if (!text) {
        ufo_error_set (err, UFO_E_INVALID, "no JSON text");
        return NULL;
    }
    if (limits && limits->max_bytes && len > limits->max_bytes) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "JSON text of %zu bytes exceeds the limit of %zu",
                       len, limits->max_bytes);
        return NULL;
    }
    s_parser_t self = {
        .start = text, .p = text, .end = text + len, .depth = 0,
        .max_depth = limits && limits->max_depth ? limits->max_depth : UFO_JSON_DEFAULT_DEPTH,
        .allow_nan = limits ? limits->allow_nan : false, .err = err
    };
    ufo_buf_init (&self.scratch);
    ufo_value_t *value = s_parse_value (&self);
    if (value) {
        s_skip_ws (&self);
        if (self.p != self.end) {
            s_fail (&self, UFO_E_SYNTAX, "has trailing characters");
            ufo_value_destroy (&value);
        }
    }
    //  after an error: what the open lists and maps had parsed so far
    for (size_t i = 0; i < self.nitems; i++)
        ufo_value_destroy (&self.items [i]);
    for (size_t i = 0; i < self.npairs; i++) {
        ufo_value__entry_key_free (&self.pairs [i]);
        ufo_value_destroy (&self.pairs [i].value);
    }
    free (self.items);
    free (self.pairs);
    ufo_buf_free (&self.scratch);
    return value;
}

ufo_value_t *
ufo_json_parse_str (const char *text, ufo_error_t *err)
{
    return ufo_json_parse (text, text ? strlen (text) : 0, NULL, err);
}

ufo_value_t *
ufo_json_parse_file (const char *path, const ufo_json_limits_t *limits, ufo_error_t *err)
{
    ufo_error_clear (err);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ufo_error_set (err, UFO_E_IO, "cannot open %s: %s", path, strerror (errno));
        return NULL;
    }
    struct stat st;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
        ufo_error_set (err, UFO_E_IO, "%s is not a regular file", path);
        close (fd);
        return NULL;
    }
    size_t size = (size_t) st.st_size;
    if (limits && limits->max_bytes && size > limits->max_bytes) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "%s: %zu bytes exceeds the limit of %zu",
                       path, size, limits->max_bytes);
        close (fd);
        return NULL;
    }
    char *data = (char *) ufo_malloc (size + 1);
    size_t got = 0;
    while (got < size) {
        ssize_t n = read (fd, data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
    }
    close (fd);
    ufo_value_t *value = NULL;
    if (got != size)
        ufo_error_set (err, UFO_E_IO, "%s: short read (%zu of %zu bytes)", path, got, size);
    else {
        value = ufo_json_parse (data, size, limits, err);
        if (!value && err) {
            char message [sizeof (err->message)];
            memcpy (message, err->message, sizeof (message));
            int n = snprintf (err->message, sizeof (err->message), "%s: ", path);
            if (n > 0 && (size_t) n < sizeof (err->message))
                memcpy (err->message + n, message, sizeof (message) - (size_t) n - 1);
            err->message [sizeof (err->message) - 1] = 0;
        }
    }
    free (data);
    return value;
}
