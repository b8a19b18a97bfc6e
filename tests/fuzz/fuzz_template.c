/*  fuzz_template.c - libFuzzer target for the template engine: the input is split at the
    first NUL into a template and JSON variables. Any input: no crash, no leak, bounded. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_template.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *
s_loader (const char *name, void *arg)
{
    //  Every partial is the template itself: exercises the nesting limit.
    UFO_UNUSED (name);
    return ufo_strdup ((const char *) arg);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const char *text = (const char *) data;
    size_t tlen = strnlen (text, size);
    char *tmpl = ufo_strndup (text, tlen);
    ufo_value_t *vars = NULL;
    if (tlen + 1 < size)
        vars = ufo_json_parse (text + tlen + 1, size - tlen - 1, NULL, NULL);
    ufo_error_t err;
    char *out = ufo_template_render (tmpl, tlen, vars, s_loader, tmpl, &err);
    if (out)
        free (out);
    else
        assert (err.code != UFO_OK);
    ufo_value_destroy (&vars);
    free (tmpl);
    return 0;
}
