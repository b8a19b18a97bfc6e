/*  fuzz_desktop_keys.c - libFuzzer target for the keyboard_input key syntax (keys come from
    the model). Any input: no crash, no leak; success gives balanced, bounded key events. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *keys = ufo_strndup ((const char *) data, size);
    ufo_error_t err;
    ufo_error_clear (&err);
    ufo_value_t *events = ufo_desktop_keys_parse (keys, &err);
    if (events) {
        if (ufo_value_size (events) > 20000)
            abort ();
        for (size_t i = 0; i < ufo_value_size (events); i++)
            if (ufo_value_map_int (ufo_value_list_at (events, i), "keysym", 0) <= 0)
                abort ();
        ufo_value_destroy (&events);
    }
    else if (err.code == UFO_OK)
        abort ();
    free (keys);
    return 0;
}
