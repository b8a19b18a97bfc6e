/*  ufo_utf8.h - UTF-8 validation and encoding shared by every codec. */
#ifndef UFO_UTF8_H_INCLUDED
#define UFO_UTF8_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Length (1..4) of the valid UTF-8 sequence at s, which has n >= 1 bytes left, or 0 if the
//  bytes there are not valid UTF-8 (overlong forms, surrogates and code points above
//  U+10FFFF are invalid). Stores the code point in *cp when valid (cp may be NULL).
size_t ufo_utf8_seq (const void *s, size_t n, uint32_t *cp);

//  Returns the offset of the first invalid byte of s[0..len), or len if it is all valid.
size_t ufo_utf8_check (const void *s, size_t len);

//  True if s[0..len) is valid UTF-8.
bool ufo_utf8_valid (const void *s, size_t len);

//  Writes the UTF-8 encoding of code point cp (< 0x110000, not a surrogate) into out[4];
//  returns its length. Invalid code points are written as U+FFFD.
size_t ufo_utf8_encode (uint32_t cp, char out [4]);

//  Length of the longest prefix of s[0..len) that is at most max bytes and does not cut
//  a UTF-8 sequence in two (for truncating text safely).
size_t ufo_utf8_prefix (const char *s, size_t len, size_t max);

#endif
