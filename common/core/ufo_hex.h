/*  ufo_hex.h - the one lowercase hex table, and the encoders built on it. */
#ifndef UFO_HEX_H_INCLUDED
#define UFO_HEX_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

//  "0123456789abcdef".
extern const char ufo_hex_digits [17];

//  Writes len bytes as lowercase hex (2*len characters + NUL) into out.
void ufo_hex_encode (const void *data, size_t len, char *out);

//  Writes v as exactly 16 lowercase hex digits (most significant first) into out[16]; no NUL.
void ufo_hex_u64 (uint64_t v, char out [16]);

#endif
