/*  ufo_buf.c - growable byte buffer. */
#include "ufo_prelude.h"
#include "ufo_buf.h"

void
ufo_buf_init (ufo_buf_t *self)
{
    assert (self);
    self->data = NULL;
    self->len = 0;
    self->cap = 0;
}

void
ufo_buf_free (ufo_buf_t *self)
{
    if (self) {
        free (self->data);
        ufo_buf_init (self);
    }
}

void
ufo_buf_reserve (ufo_buf_t *self, size_t more)
{
    assert (self);
    size_t need = self->len + more + 1;
    if (UFO_LIKELY (need <= self->cap))
        return;
    size_t cap = self->cap ? self->cap : 64;
    while (cap < need)
        cap = cap < ((size_t) 1 << 30) ? cap * 2 : cap + ((size_t) 1 << 30);
    self->data = (char *) ufo_realloc (self->data, cap);
    self->cap = cap;
}

void
ufo_buf_append (ufo_buf_t *self, const void *data, size_t len)
{
    ufo_buf_reserve (self, len);
    if (len)
        memcpy (self->data + self->len, data, len);
    self->len += len;
    self->data [self->len] = 0;
}

void
ufo_buf_puts (ufo_buf_t *self, const char *s)
{
    ufo_buf_append (self, s, strlen (s));
}

void
ufo_buf_putc (ufo_buf_t *self, char c)
{
    ufo_buf_reserve (self, 1);
    self->data [self->len++] = c;
    self->data [self->len] = 0;
}

void
ufo_buf_printf (ufo_buf_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    char small [256];
    int n = vsnprintf (small, sizeof (small), format, args);
    va_end (args);
    if (n < 0)
        return;
    if ((size_t) n < sizeof (small)) {
        ufo_buf_append (self, small, (size_t) n);
        return;
    }
    ufo_buf_reserve (self, (size_t) n);
    va_start (args, format);
    vsnprintf (self->data + self->len, (size_t) n + 1, format, args);
    va_end (args);
    self->len += (size_t) n;
}

void
ufo_buf_reset (ufo_buf_t *self)
{
    assert (self);
    self->len = 0;
    if (self->data)
        self->data [0] = 0;
}

char *
ufo_buf_detach (ufo_buf_t *self, size_t *len_p)
{
    assert (self);
    char *data = self->data ? self->data : ufo_strdup ("");
    if (len_p)
        *len_p = self->len;
    ufo_buf_init (self);
    return data;
}

void
ufo_buf_base64 (ufo_buf_t *self, const void *data, size_t len)
{
    static const char abc [] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert (self && (data || len == 0));
    if (len == 0)
        return;
    const unsigned char *in = (const unsigned char *) data;
    ufo_buf_reserve (self, (len + 2) / 3 * 4);
    char *o = self->data + self->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t) in [i] << 16 | (uint32_t) in [i + 1] << 8 | in [i + 2];
        *o++ = abc [v >> 18];
        *o++ = abc [(v >> 12) & 63];
        *o++ = abc [(v >> 6) & 63];
        *o++ = abc [v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t) in [i] << 16;
        if (i + 1 < len)
            v |= (uint32_t) in [i + 1] << 8;
        *o++ = abc [v >> 18];
        *o++ = abc [(v >> 12) & 63];
        *o++ = i + 1 < len ? abc [(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    self->len = (size_t) (o - self->data);
    self->data [self->len] = 0;
}
