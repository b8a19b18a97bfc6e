/*  ufo_error.h - error codes and the error record every decoder fills in. */
#ifndef UFO_ERROR_H_INCLUDED
#define UFO_ERROR_H_INCLUDED

#include <stddef.h>

typedef enum {
    UFO_OK = 0,
    UFO_E_SYNTAX = 1,       //  not well-formed (JSON, msgpack, config)
    UFO_E_TRUNCATED = 2,    //  input ended early
    UFO_E_TYPE = 3,         //  a field has the wrong type
    UFO_E_RANGE = 4,        //  a value is out of its allowed range
    UFO_E_TOO_DEEP = 5,     //  nesting deeper than the configured limit
    UFO_E_TOO_LARGE = 6,    //  a size or count exceeds its limit
    UFO_E_VERSION = 7,      //  unknown protocol or format version
    UFO_E_MISSING = 8,      //  a required field is absent
    UFO_E_NOT_FOUND = 9,    //  the named thing does not exist
    UFO_E_IO = 10,          //  a file or socket operation failed
    UFO_E_INVALID = 11,     //  a request or argument is not acceptable
    UFO_E_UTF8 = 12,        //  a string is not valid UTF-8
    UFO_E_INTERNAL = 13,    //  a bug or resource failure on our side
    UFO_E_UNAVAILABLE = 14, //  a peer or service is not reachable now
    UFO_E_TIMEOUT = 15,     //  a deadline passed
    UFO_E_CANCELLED = 16,   //  the operation was cancelled
    UFO_E_DENIED = 17,      //  not allowed (policy, role, authentication)
    UFO_E_CONFLICT = 18,    //  state does not allow the operation
    UFO_E_BUSY = 19,        //  the peer has too much output queued: read replies, then retry
    UFO_E_COUNT
} ufo_errcode_t;

typedef struct {
    int code;               //  ufo_errcode_t; UFO_OK when no error
    size_t offset;          //  byte offset in the input where the error was found, if any
    char message [256];     //  human-readable, names the key / field / position
} ufo_error_t;

//  Clears an error record to UFO_OK. Safe with NULL.
void ufo_error_clear (ufo_error_t *err);

//  Fills in an error record (printf-style message). Safe with NULL err: then does nothing.
//  Returns -1 so callers can write `return ufo_error_set (err, ...);`.
int ufo_error_set (ufo_error_t *err, int code, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

//  Like ufo_error_set, also records the byte offset.
int ufo_error_set_at (ufo_error_t *err, int code, size_t offset, const char *format, ...)
    __attribute__ ((format (printf, 4, 5)));

//  Returns the stable lower-case name of an error code ("syntax", "truncated", ...),
//  used on the wire and in logs. Unknown codes give "unknown".
const char *ufo_errcode_name (int code);

#endif
