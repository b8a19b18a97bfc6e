/*  ufo_msg.h - the versioned message envelope every ufobus process speaks.

    On the wire one envelope is one ZeroMQ frame holding a msgpack array of exactly 7 items:
        [ version:int (=1), type:str, id:str, sender:str, session:str, timestamp_us:int, body:any ]
    docs/PROTOCOL.md specifies it. Decoding is strict: wrong types, truncation, trailing bytes,
    unknown version, too deep or too large all give an error code and message, never a crash
    and never an allocation larger than a small multiple of the frame. */
#ifndef UFO_MSG_H_INCLUDED
#define UFO_MSG_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

#define UFO_MSG_VERSION 1
#define UFO_MSG_TYPE_MAX 64         //  bytes, excluding NUL
#define UFO_MSG_ID_MAX 64
#define UFO_MSG_SENDER_MAX 128
#define UFO_MSG_SESSION_MAX 128

typedef struct _ufo_msg_t ufo_msg_t;

typedef struct {
    size_t max_bytes;               //  largest frame accepted (default 16 MiB)
    size_t max_depth;               //  deepest body nesting accepted (default 32)
} ufo_msg_limits_t;

//  Creates a message of the given type with a fresh unique id, the current wall-clock
//  timestamp, empty sender and session, and a null body. Type must be 1..64 printable ASCII
//  bytes without space (0x21..0x7e); returns NULL if it is not.
ufo_msg_t *ufo_msg_new (const char *type);

//  Destroys a message and its body; sets *self_p to NULL. Safe with NULL.
void ufo_msg_destroy (ufo_msg_t **self_p);

//  Accessors. Strings are borrowed from the message. Setters copy; a value longer than
//  the field's maximum is truncated at a UTF-8 boundary (programmer input, not wire input).
const char *ufo_msg_type (const ufo_msg_t *self);
const char *ufo_msg_id (const ufo_msg_t *self);
const char *ufo_msg_sender (const ufo_msg_t *self);
const char *ufo_msg_session (const ufo_msg_t *self);
int64_t ufo_msg_timestamp (const ufo_msg_t *self);         //  microseconds since the epoch
void ufo_msg_set_id (ufo_msg_t *self, const char *id);
void ufo_msg_set_sender (ufo_msg_t *self, const char *sender);
void ufo_msg_set_session (ufo_msg_t *self, const char *session);
void ufo_msg_set_timestamp (ufo_msg_t *self, int64_t timestamp_us);

//  The body (borrowed; never NULL: a new message has a null body).
ufo_value_t *ufo_msg_body (const ufo_msg_t *self);
//  Replaces the body, taking ownership of *body_p (set to NULL).
void ufo_msg_set_body (ufo_msg_t *self, ufo_value_t **body_p);
//  Takes the body out of the message (caller owns it); the message is left with a null body.
ufo_value_t *ufo_msg_take_body (ufo_msg_t *self);

//  Appends the wire encoding to buf.
void ufo_msg_encode (const ufo_msg_t *self, ufo_buf_t *buf);

//  Appends the first six items of an envelope (the array head, version, type, id, sender,
//  session, timestamp) WITHOUT the body: the caller must append exactly one msgpack value
//  (the body) next. NULL id, sender or session are written as "". The fields must be within
//  the limits above (the caller's job: they are not checked here). ufo_msg_encode and the
//  broker's in-place replies (ufo_bb_envelope_head) both write envelopes with it.
void ufo_msg_encode_head (ufo_buf_t *buf, const char *type, const char *id, const char *sender, const char *session,
                          int64_t timestamp);

//  Decodes one frame. Returns a new message owned by the caller, or NULL with err filled in
//  (UFO_E_SYNTAX, UFO_E_TRUNCATED, UFO_E_TYPE, UFO_E_VERSION, UFO_E_TOO_DEEP, UFO_E_TOO_LARGE,
//  UFO_E_UTF8, UFO_E_RANGE). limits may be NULL for the defaults; a zero field in limits
//  also means its default.
ufo_msg_t *ufo_msg_decode (const void *data, size_t len, const ufo_msg_limits_t *limits,
                           ufo_error_t *err);

//  The envelope's fields before the body, as decoded (NUL-terminated).
typedef struct {
    char type [UFO_MSG_TYPE_MAX + 1];
    char id [UFO_MSG_ID_MAX + 1];
    char sender [UFO_MSG_SENDER_MAX + 1];
    char session [UFO_MSG_SESSION_MAX + 1];
    int64_t timestamp;
} ufo_msg_head_t;

//  Decodes the envelope of one frame up to its body, under the same rules as ufo_msg_decode,
//  into *head, and leaves the body undecoded: *body_off receives the offset of the body's
//  first byte in data. For readers that parse bodies of known shape in place. Returns 0, or
//  -1 with err (the errors of ufo_msg_decode for everything before the body).
int ufo_msg_decode_head (const void *data, size_t len, const ufo_msg_limits_t *limits, ufo_msg_head_t *head,
                         size_t *body_off, ufo_error_t *err);

//  Writes a fresh unique id (32 lowercase hex characters + NUL) into out[33].
void ufo_msg_new_id (char out [33]);


#endif
