/*  ufo_hash.c - CRC-32C (slicing-by-8, table built once) and SHA-256 (FIPS 180-4). */
#include "ufo_prelude.h"
#include "ufo_hex.h"
#include "ufo_hash.h"
#include <pthread.h>

//  --- CRC-32C ---------------------------------------------------------------

static uint32_t s_crc_table [8][256];
static pthread_once_t s_crc_once = PTHREAD_ONCE_INIT;

static void
s_crc_init (void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        s_crc_table [0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = s_crc_table [0][i];
        for (int t = 1; t < 8; t++) {
            c = s_crc_table [0][c & 0xff] ^ (c >> 8);
            s_crc_table [t][i] = c;
        }
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
//  SSE 4.2 has an instruction for exactly this polynomial: 8 bytes per step.
__attribute__ ((target ("sse4.2")))
static uint32_t
s_crc32c_hw (uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = ~crc;
    while (len && ((uintptr_t) p & 7)) {
        c = __builtin_ia32_crc32qi ((uint32_t) c, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t word;
        memcpy (&word, p, 8);
        c = __builtin_ia32_crc32di (c, word);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = __builtin_ia32_crc32qi ((uint32_t) c, *p++);
    return ~(uint32_t) c;
}

static int s_hw = -1;               //  -1: not checked yet

static void
s_hw_check (void)
{
    __builtin_cpu_init ();
    //  UFO_CRC32C_SOFTWARE=1 forces the table version (to compare the two)
    s_hw = __builtin_cpu_supports ("sse4.2") && !getenv ("UFO_CRC32C_SOFTWARE") ? 1 : 0;
}
static pthread_once_t s_hw_once = PTHREAD_ONCE_INIT;
#endif

//  The portable table version (also the reference the unit test compares against).
static uint32_t s_crc32c_sw (uint32_t crc, const void *data, size_t len);

uint32_t
ufo_crc32c (uint32_t crc, const void *data, size_t len)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    pthread_once (&s_hw_once, s_hw_check);
    if (s_hw == 1)
        return s_crc32c_hw (crc, (const uint8_t *) data, len);
#endif
    return s_crc32c_sw (crc, data, len);
}

static uint32_t
s_crc32c_sw (uint32_t crc, const void *data, size_t len)
{
    pthread_once (&s_crc_once, s_crc_init);
    const uint8_t *p = (const uint8_t *) data;
    crc = ~crc;
    while (len && ((uintptr_t) p & 7)) {
        crc = s_crc_table [0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        len--;
    }
    while (len >= 8) {
        uint64_t word;
        memcpy (&word, p, 8);
        //  little-endian hosts only (x86-64, aarch64 LE); the unit test checks the vectors
        uint32_t lo = (uint32_t) word ^ crc;
        uint32_t hi = (uint32_t) (word >> 32);
        crc = s_crc_table [7][lo & 0xff] ^ s_crc_table [6][(lo >> 8) & 0xff]
            ^ s_crc_table [5][(lo >> 16) & 0xff] ^ s_crc_table [4][lo >> 24]
            ^ s_crc_table [3][hi & 0xff] ^ s_crc_table [2][(hi >> 8) & 0xff]
            ^ s_crc_table [1][(hi >> 16) & 0xff] ^ s_crc_table [0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = s_crc_table [0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

//  --- SHA-256 ---------------------------------------------------------------

static const uint32_t s_k [64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
s_sha256_block (uint32_t state [8], const uint8_t *block)
{
    uint32_t w [64];
    for (int i = 0; i < 16; i++)
        w [i] = (uint32_t) block [4 * i] << 24 | (uint32_t) block [4 * i + 1] << 16
              | (uint32_t) block [4 * i + 2] << 8 | (uint32_t) block [4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR (w [i - 15], 7) ^ ROR (w [i - 15], 18) ^ (w [i - 15] >> 3);
        uint32_t s1 = ROR (w [i - 2], 17) ^ ROR (w [i - 2], 19) ^ (w [i - 2] >> 10);
        w [i] = w [i - 16] + s0 + w [i - 7] + s1;
    }
    uint32_t a = state [0], b = state [1], c = state [2], d = state [3];
    uint32_t e = state [4], f = state [5], g = state [6], h = state [7];
    for (int i = 0; i < 64; i++) {
        uint32_t s1 = ROR (e, 6) ^ ROR (e, 11) ^ ROR (e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + s1 + ch + s_k [i] + w [i];
        uint32_t s0 = ROR (a, 2) ^ ROR (a, 13) ^ ROR (a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = s0 + maj;
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    state [0] += a; state [1] += b; state [2] += c; state [3] += d;
    state [4] += e; state [5] += f; state [6] += g; state [7] += h;
}

void
ufo_sha256_init (ufo_sha256_t *ctx)
{
    static const uint32_t init [8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
    };
    memcpy (ctx->state, init, sizeof init);
    ctx->length = 0;
    ctx->used = 0;
}

void
ufo_sha256_update (ufo_sha256_t *ctx, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *) data;
    ctx->length += len;
    if (ctx->used) {
        size_t take = 64 - ctx->used < len ? 64 - ctx->used : len;
        memcpy (ctx->block + ctx->used, p, take);
        ctx->used += take;
        p += take;
        len -= take;
        if (ctx->used < 64)
            return;
        s_sha256_block (ctx->state, ctx->block);
        ctx->used = 0;
    }
    while (len >= 64) {
        s_sha256_block (ctx->state, p);
        p += 64;
        len -= 64;
    }
    if (len) {
        memcpy (ctx->block, p, len);
        ctx->used = len;
    }
}

void
ufo_sha256_final (ufo_sha256_t *ctx, uint8_t digest [32])
{
    uint64_t bits = ctx->length * 8;
    uint8_t pad [72] = { 0x80 };
    size_t padlen = (ctx->used < 56) ? 56 - ctx->used : 120 - ctx->used;
    for (int i = 0; i < 8; i++)
        pad [padlen + i] = (uint8_t) (bits >> (56 - 8 * i));
    uint64_t keep = ctx->length;
    ufo_sha256_update (ctx, pad, padlen + 8);
    ctx->length = keep;
    for (int i = 0; i < 8; i++) {
        digest [4 * i] = (uint8_t) (ctx->state [i] >> 24);
        digest [4 * i + 1] = (uint8_t) (ctx->state [i] >> 16);
        digest [4 * i + 2] = (uint8_t) (ctx->state [i] >> 8);
        digest [4 * i + 3] = (uint8_t) ctx->state [i];
    }
}

void
ufo_sha256_hex (const void *data, size_t len, char hex [65])
{
    ufo_sha256_t ctx;
    uint8_t digest [32];
    ufo_sha256_init (&ctx);
    ufo_sha256_update (&ctx, data, len);
    ufo_sha256_final (&ctx, digest);
    ufo_hex_encode (digest, 32, hex);
}

bool
ufo_sha256_hex_valid (const char *s)
{
    if (!s)
        return false;
    size_t i = 0;
    for (; s [i]; i++)
        if (i >= 64 || !((s [i] >= '0' && s [i] <= '9') || (s [i] >= 'a' && s [i] <= 'f')))
            return false;
    return i == 64;
}
