/*  ufo_buf.h - a growable byte buffer, always NUL-terminated after its content. */
#ifndef UFO_BUF_H_INCLUDED
#define UFO_BUF_H_INCLUDED

#include <stddef.h>

typedef struct {
    char *data;             //  content; NUL-terminated; NULL until the first append
    size_t len;             //  bytes of content
    size_t cap;             //  bytes allocated
} ufo_buf_t;

//  The buffer is a plain struct so it can live on the stack: zero-initialise it
//  (ufo_buf_t b = {0};) or call ufo_buf_init. Release with ufo_buf_free.
void ufo_buf_init (ufo_buf_t *self);
void ufo_buf_free (ufo_buf_t *self);

//  Makes room for at least `more` further bytes (plus the NUL).
void ufo_buf_reserve (ufo_buf_t *self, size_t more);

//  Appends bytes / a C string / one byte / printf-formatted text.
void ufo_buf_append (ufo_buf_t *self, const void *data, size_t len);
void ufo_buf_puts (ufo_buf_t *self, const char *s);
void ufo_buf_putc (ufo_buf_t *self, char c);
void ufo_buf_printf (ufo_buf_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

//  Appends data[0..len) in standard base64 (RFC 4648, with '=' padding), e.g. for data URLs.
void ufo_buf_base64 (ufo_buf_t *self, const void *data, size_t len);

//  Empties the buffer, keeping its memory.
void ufo_buf_reset (ufo_buf_t *self);

//  Returns the content (caller owns, free()), and leaves the buffer empty.
//  Never returns NULL: an empty buffer gives "".
char *ufo_buf_detach (ufo_buf_t *self, size_t *len_p);

#endif
