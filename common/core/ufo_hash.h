/*  ufo_hash.h - checksums and digests: CRC-32C (Castagnoli) for log records and
    SHA-256 for the content-addressed blob store. Both are implemented here (no
    third-party dependency) and checked against the published test vectors. */
#ifndef UFO_HASH_H_INCLUDED
#define UFO_HASH_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Continues a CRC-32C over data[0..len). Start with crc = 0; feed the result back in
//  to checksum data in pieces. crc32c("123456789") == 0xE3069283.
uint32_t ufo_crc32c (uint32_t crc, const void *data, size_t len);

typedef struct {
    uint32_t state [8];
    uint64_t length;            //  bytes hashed so far
    uint8_t block [64];
    size_t used;                //  bytes waiting in block
} ufo_sha256_t;

//  Incremental SHA-256: init, update any number of times, final writes 32 bytes.
void ufo_sha256_init (ufo_sha256_t *ctx);
void ufo_sha256_update (ufo_sha256_t *ctx, const void *data, size_t len);
void ufo_sha256_final (ufo_sha256_t *ctx, uint8_t digest [32]);

//  One-shot SHA-256 of data[0..len) as 64 lowercase hex characters + NUL in hex[65].
void ufo_sha256_hex (const void *data, size_t len, char hex [65]);

//  True when s is exactly 64 lowercase hex characters (a SHA-256 blob reference).
bool ufo_sha256_hex_valid (const char *s);

#endif
