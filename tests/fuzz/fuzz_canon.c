/*  fuzz_canon.c - libFuzzer target for the canonical-text recogniser (ufo_canon.c), which
    decides what a loaded snapshot or question file may keep as text. Any input: no crash.
    Oracles, each with the AVX-512 masks (where the CPU has them) and the portable ones:
    - sound: a prefix it accepts parses, and the JSON writer gives exactly those bytes back;
    - complete: whatever the writer produces from a parsed input (depth <= 32, <= 64 keys per
      map) is accepted whole;
    - one scan over all the lines (ufo_canon_next) gives every line the verdict of a scan of
      that line alone (ufo_canon_value). */
#include "ufo_prelude.h"
#include "fuzz_check.h"
#include "model_private.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

//  Within the recogniser's limits: depth <= 32 (the top value at 0), <= 64 keys per map.
static bool
s_within_limits (ufo_value_t *v, int depth)
{
    if (depth > 32)
        return false;
    if (ufo_value_type (v) == UFO_TMAP) {
        if (ufo_value_size (v) > 64)
            return false;
        for (size_t i = 0; i < ufo_value_size (v); i++)
            if (!s_within_limits (ufo_value_map_value_at (v, i), depth + 1))
                return false;
    }
    else
    if (ufo_value_type (v) == UFO_TLIST) {
        for (size_t i = 0; i < ufo_value_size (v); i++)
            if (!s_within_limits (ufo_value_list_at (v, i), depth + 1))
                return false;
    }
    return true;
}

static void
s_check (const char *text, size_t size)
{
    ufo_json_limits_t limits = { .max_depth = 256, .allow_nan = true };
    ufo_error_t err;

    //  sound
    size_t n = ufo_canon_value (text, size);
    FUZZ_CHECK (n <= size);
    if (n) {
        ufo_value_t *v = ufo_json_parse (text, n, &limits, &err);
        FUZZ_CHECK (v);
        size_t len;
        char *again = ufo_json_dump (v, UFO_JSON_PY, &len);
        FUZZ_CHECK (len == n && memcmp (again, text, n) == 0);
        free (again);
        ufo_value_destroy (&v);
    }

    //  complete
    ufo_value_t *v = ufo_json_parse (text, size, &limits, &err);
    if (v) {
        if (s_within_limits (v, 0)) {
            size_t len;
            char *dumped = ufo_json_dump (v, UFO_JSON_PY, &len);
            FUZZ_CHECK (ufo_canon_value (dumped, len) == len);
            free (dumped);
        }
        ufo_value_destroy (&v);
    }

    //  one forward scan over the lines = each line alone
    ufo_canon_t scan;
    ufo_canon_begin (&scan, text, size);
    const char *p = text, *end = text + size;
    while (p < end) {
        const char *nl = (const char *) memchr (p, '\n', (size_t) (end - p));
        const char *stop = nl ? nl : end;
        size_t alone = stop > p ? ufo_canon_value (p, (size_t) (stop - p)) : 0;
        if (stop > p) {
            //  a canonical value holds no raw line break: what the text after the line
            //  holds cannot change the verdict
            const char *shared = ufo_canon_next (&scan, p);
            FUZZ_CHECK (shared == (alone ? p + alone : NULL));
        }
        if (stop == end)
            break;
        p = stop + 1;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_log_set_level (UFO_LOG_OFF);
    ufo_canon__portable (false);
    s_check ((const char *) data, size);
    ufo_canon__portable (true);
    s_check ((const char *) data, size);
    ufo_canon__portable (false);
    return 0;
}
