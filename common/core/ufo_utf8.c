/*  ufo_utf8.c - UTF-8 validation and encoding. */
#include "ufo_prelude.h"
#include "ufo_utf8.h"

size_t
ufo_utf8_seq (const void *data, size_t n, uint32_t *cp_out)
{
    const unsigned char *s = (const unsigned char *) data;
    uint32_t cp;
    size_t len;
    unsigned char c = s [0];
    if (c < 0x80) {
        cp = c;
        len = 1;
    }
    else
    if (c >= 0xC2 && c <= 0xDF) {
        if (n < 2 || (s [1] & 0xC0) != 0x80)
            return 0;
        cp = ((uint32_t) (c & 0x1F) << 6) | (s [1] & 0x3F);
        len = 2;
    }
    else
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (s [1] & 0xC0) != 0x80 || (s [2] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xE0 && s [1] < 0xA0) || (c == 0xED && s [1] > 0x9F))
            return 0;           //  overlong, or a surrogate
        cp = ((uint32_t) (c & 0x0F) << 12) | ((uint32_t) (s [1] & 0x3F) << 6) | (s [2] & 0x3F);
        len = 3;
    }
    else
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (s [1] & 0xC0) != 0x80 || (s [2] & 0xC0) != 0x80 || (s [3] & 0xC0) != 0x80)
            return 0;
        if ((c == 0xF0 && s [1] < 0x90) || (c == 0xF4 && s [1] > 0x8F))
            return 0;           //  overlong, or above U+10FFFF
        cp = ((uint32_t) (c & 0x07) << 18) | ((uint32_t) (s [1] & 0x3F) << 12)
           | ((uint32_t) (s [2] & 0x3F) << 6) | (s [3] & 0x3F);
        len = 4;
    }
    else
        return 0;
    if (cp_out)
        *cp_out = cp;
    return len;
}

size_t
ufo_utf8_check (const void *data, size_t len)
{
    const unsigned char *s = (const unsigned char *) data;
    size_t i = 0;
    while (i < len) {
        //  ASCII runs: eight bytes at a time, then byte by byte
        while (len - i >= 8) {
            uint64_t word;
            memcpy (&word, s + i, 8);
            if (word & 0x8080808080808080ull)
                break;
            i += 8;
        }
        while (i < len && s [i] < 0x80)
            i++;
        if (i == len)
            break;
        size_t n = ufo_utf8_seq (s + i, len - i, NULL);
        if (!n)
            return i;
        i += n;
    }
    return len;
}

bool
ufo_utf8_valid (const void *s, size_t len)
{
    return ufo_utf8_check (s, len) == len;
}

size_t
ufo_utf8_encode (uint32_t cp, char out [4])
{
    if (cp >= 0x110000 || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80) {
        out [0] = (char) cp;
        return 1;
    }
    if (cp < 0x800) {
        out [0] = (char) (0xC0 | (cp >> 6));
        out [1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out [0] = (char) (0xE0 | (cp >> 12));
        out [1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out [2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out [0] = (char) (0xF0 | (cp >> 18));
    out [1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out [2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out [3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

size_t
ufo_utf8_prefix (const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t cut = max;
    //  step back over continuation bytes to the start of the sequence that straddles max
    while (cut > 0 && ((unsigned char) s [cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}
