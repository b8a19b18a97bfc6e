/*  fuzz_config.c - libFuzzer target for configuration loading. Any text: no crash, no leak;
    on error the configuration is unchanged and the error has a code; on success every
    schema key still holds a value of its declared kind. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_config: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

static bool
s_kind_ok (const ufo_value_t *value, const char *type)
{
    ufo_type_t t = ufo_value_type (value);
    if (strcmp (type, "bool") == 0)   return t == UFO_TBOOL;
    if (strcmp (type, "int") == 0)    return t == UFO_TINT;
    if (strcmp (type, "float") == 0)  return t == UFO_TFLOAT;
    if (strcmp (type, "string") == 0) return t == UFO_TSTRING;
    if (strncmp (type, "list", 4) == 0) return t == UFO_TLIST;
    if (strncmp (type, "map", 3) == 0)  return t == UFO_TMAP;
    return true;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static bool quiet = false;
    if (!quiet) {
        ufo_log_set_level (UFO_LOG_ERROR);      //  unknown-key warnings would flood the output
        quiet = true;
    }
    static ufo_config_t *ref = NULL;           //  the defaults, built once
    if (!ref)
        ref = ufo_config_new ();
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    int rc = ufo_config_load_text (cfg, (const char *) data, size, &err);
    if (rc) {
        FUZZ_REQUIRE (rc == -1 && err.code != UFO_OK);
        FUZZ_REQUIRE (ufo_value_equal (ufo_config_root (cfg), ufo_config_root (ref)));
    }
    else {
        size_t count;
        const ufo_config_key_t *schema = ufo_config_schema (&count);
        for (size_t i = 0; i < count; i++) {
            const ufo_value_t *value = ufo_config_get (cfg, schema [i].path);
            if (schema [i].dflt)
                FUZZ_REQUIRE (value);
            if (value)
                FUZZ_REQUIRE (s_kind_ok (value, schema [i].type));
        }
        //  Reading through the agent chain never fails either.
        ufo_config_agent (cfg, "EVALUATION_AGENT", "API_MODEL");
        ufo_config_int (cfg, "MAX_STEP", 0);
    }
    ufo_config_destroy (&cfg);
    return 0;
}
