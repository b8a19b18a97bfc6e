/*  fuzz_app_body.c - libFuzzer target: any bytes as a ufo-app subtask body (JSON) through
    app_body_parse. Oracles: no crash; on success the required fields are present and sane. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_body.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_value_t *v = ufo_json_parse ((const char *) data, size, NULL, NULL);
    app_body_t b;
    ufo_error_t err;
    if (app_body_parse (v, &b, &err) == 0) {
        if (!b.session || !*b.session || !b.task || !*b.task || strchr (b.task, '/')
        ||  !b.subtask || b.max_steps < 0 || b.step_base < 0 || b.round < 0
        ||  b.step_base > 1000000000 || b.round_step_base > 1000000000)
            abort ();
        if (b.window && ufo_value_type (b.window) != UFO_TMAP)
            abort ();
    }
    else
    if (!err.message [0])
        abort ();
    ufo_value_destroy (&v);
    return 0;
}
