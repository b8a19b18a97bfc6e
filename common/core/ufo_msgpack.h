/*  ufo_msgpack.h - msgpack <-> ufo_value_t, strict and bounded.

    The decoder never allocates more than a small constant times the input size (every
    announced element count is checked against the bytes that remain), bounds nesting,
    checks that strings are UTF-8 and map keys are strings, and rejects trailing bytes. */
#ifndef UFO_MSGPACK_H_INCLUDED
#define UFO_MSGPACK_H_INCLUDED

typedef struct {
    size_t max_depth;       //  nesting limit (default 64)
    size_t max_bytes;       //  input size limit, 0 = no limit
} ufo_msgpack_limits_t;

//  Appends the msgpack encoding of value to buf (smallest encodings, str for strings).
void ufo_msgpack_append (ufo_buf_t *buf, const ufo_value_t *value);

//  Decodes exactly one value from data[0..len). Returns a new value owned by the caller,
//  or NULL with err filled in. limits may be NULL for the defaults. bin is decoded as a
//  string if it is valid UTF-8 and rejected otherwise; ext types are rejected.
ufo_value_t *ufo_msgpack_decode (const void *data, size_t len, const ufo_msgpack_limits_t *limits,
                                 ufo_error_t *err);

//  Checks the value at the start of data[0..len) without building it. Returns the bytes it
//  takes when the decoder would read it unchanged: well formed under the decoder's rules with
//  `depth` levels of nesting already used (max_depth 0: the default 64), no map key repeated,
//  no bin, no float32, no uint64 above INT64_MAX (so its re-encoding never takes more bytes
//  than the value does), and no map of more than 32 pairs at any level (the size of the
//  repeated-key check). Returns 0 otherwise (the value is malformed, or decoding would change
//  it, or it is too wide): decode it with ufo_msgpack_decode for the verdict. Trailing bytes
//  after the value are not examined.
size_t ufo_msgpack_scan_plain (const void *data, size_t len, size_t depth, size_t max_depth);

//  The same for a value that must be a map (0 otherwise); *has_key tells whether key (NULL:
//  none) is one of the map's own keys (not those of maps inside it).
size_t ufo_msgpack_scan_plain_map (const void *data, size_t len, size_t depth, size_t max_depth,
                                   const char *key, bool *has_key);

#endif
