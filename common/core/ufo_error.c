/*  ufo_error.c - error records and the stable names of error codes. */
#include "ufo_prelude.h"
#include "ufo_error.h"

static const char *s_names [UFO_E_COUNT] = {
    "ok", "syntax", "truncated", "type", "range", "too_deep", "too_large", "version",
    "missing", "not_found", "io", "invalid", "utf8", "internal", "unavailable",
    "timeout", "cancelled", "denied", "conflict", "busy"
};

void
ufo_error_clear (ufo_error_t *err)
{
    if (err) {
        err->code = UFO_OK;
        err->offset = 0;
        err->message [0] = 0;
    }
}

static void
s_vset (ufo_error_t *err, int code, size_t offset, const char *format, va_list args)
{
    err->code = code;
    err->offset = offset;
    vsnprintf (err->message, sizeof (err->message), format, args);
}

int
ufo_error_set (ufo_error_t *err, int code, const char *format, ...)
{
    if (err) {
        va_list args;
        va_start (args, format);
        s_vset (err, code, 0, format, args);
        va_end (args);
    }
    return -1;
}

int
ufo_error_set_at (ufo_error_t *err, int code, size_t offset, const char *format, ...)
{
    if (err) {
        va_list args;
        va_start (args, format);
        s_vset (err, code, offset, format, args);
        va_end (args);
    }
    return -1;
}

const char *
ufo_errcode_name (int code)
{
    if (code < 0 || code >= UFO_E_COUNT)
        return "unknown";
    return s_names [code];
}
