/*  fuzz_llm_reply.c - libFuzzer target for what comes back from a model and from a cassette:
    JSON extraction + schema validation of reply text (every schema), and a cassette file.
    Any input: no crash, no leak; an accepted decision validates again unchanged. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_llm_parse.h"
#include "ufo_cassette.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    const ufo_schema_t schemas [] = { UFO_SCHEMA_OBJECT, UFO_SCHEMA_HOST, UFO_SCHEMA_APP, UFO_SCHEMA_EVAL };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (schemas); i++) {
        ufo_error_t err;
        ufo_value_t *v = ufo_llm_extract_json ((const char *) data, size, schemas [i], &err);
        if (!v) {
            assert (err.code != UFO_OK);
            char *fix = ufo_llm_corrective_message (schemas [i], err.message);
            assert (fix && *fix);
            free (fix);
            continue;
        }
        ufo_value_t *again = ufo_value_dup (v);
        assert (ufo_llm_validate (again, schemas [i], NULL) == 0);
        assert (ufo_value_equal (v, again));
        ufo_value_destroy (&again);
        ufo_value_destroy (&v);
    }
    //  The same bytes as a cassette file.
    char path [] = "/tmp/fuzz-cassette-XXXXXX";
    int fd = mkstemp (path);
    if (fd < 0)
        return 0;
    if (write (fd, data, size) == (ssize_t) size) {
        ufo_error_t err;
        ufo_cassette_t *c = ufo_cassette_open (path, UFO_CASSETTE_REPLAY, &err);
        if (c) {
            ufo_value_t *m = ufo_json_parse_str ("[{\"role\": \"user\", \"content\": \"x\"}]", NULL);
            char *content = NULL, *why = NULL;
            if (ufo_cassette_lookup (c, "AppAgent", 1, "m", m, &content, NULL, NULL, NULL, NULL, &why) == 0)
                free (content);
            else
                free (why);
            ufo_value_destroy (&m);
            ufo_cassette_destroy (&c);
        }
        else
            assert (err.code != UFO_OK);
    }
    close (fd);
    unlink (path);
    return 0;
}
