/*  ufo_hex.c - lowercase hex (see ufo_hex.h). */
#include "ufo_prelude.h"
#include "ufo_hex.h"

const char ufo_hex_digits [17] = "0123456789abcdef";

void
ufo_hex_encode (const void *data, size_t len, char *out)
{
    const uint8_t *p = (const uint8_t *) data;
    for (size_t i = 0; i < len; i++) {
        out [2 * i] = ufo_hex_digits [p [i] >> 4];
        out [2 * i + 1] = ufo_hex_digits [p [i] & 15];
    }
    out [2 * len] = 0;
}

void
ufo_hex_u64 (uint64_t v, char out [16])
{
    for (int i = 0; i < 16; i++)
        out [i] = ufo_hex_digits [(v >> (60 - 4 * i)) & 15];
}
