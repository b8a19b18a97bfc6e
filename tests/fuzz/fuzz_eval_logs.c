/*  fuzz_eval_logs.c - libFuzzer target for the EvaluationAgent's inputs (ufo_eval_prompt).
    The input is cut at 0x1E bytes into response.log and request.json of a log directory
    and the JSON of a session board (absent when the input has fewer parts). For each input
    the session prompt and the prompts of rounds 0 and 1 are built from the directory, and
    the session prompt from the board alone (a directory that does not exist); the model is
    never asked. Any input: no crash, no leak; the outcome is either messages (a system and
    a user message, valid UTF-8) or an error result saying why. From the directory the
    prompt never holds an image (no screenshot files exist, nothing outside it is read);
    from the board, only PNG / JPEG data URLs. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_eval.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_utf8.h"
#include "fuzz_check.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_eval_logs: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

static char s_root [64];
static char s_dir [96];
static ufo_config_t *s_config;
static ufo_llm_t *s_llm;
static ufo_prompts_t *s_prompts;
static ufo_eval_t *s_eval;

static void
s_cleanup (void)
{
    char path [160];
    snprintf (path, sizeof path, "%s/response.log", s_dir);
    unlink (path);
    snprintf (path, sizeof path, "%s/request.json", s_dir);
    unlink (path);
    rmdir (s_dir);
    rmdir (s_root);
    ufo_eval_destroy (&s_eval);
    ufo_prompts_destroy (&s_prompts);
    ufo_llm_destroy (&s_llm);
    ufo_config_destroy (&s_config);
}

static void
s_setup (void)
{
    ufo_log_set_level (UFO_LOG_OFF);
    snprintf (s_root, sizeof s_root, "/tmp/ufo-fuzz-eval-XXXXXX");
    FUZZ_REQUIRE (mkdtemp (s_root));
    snprintf (s_dir, sizeof s_dir, "%s/task", s_root);
    FUZZ_REQUIRE (mkdir (s_dir, 0755) == 0);
    s_config = ufo_config_new ();
    const char *text = "{\"EVALUATION_AGENT\": {\"API_TYPE\": \"openai_compatible\", "
                       "\"API_BASE\": \"http://127.0.0.1:9/v1\", \"API_MODEL\": \"none\"}}";
    ufo_error_t err;
    FUZZ_REQUIRE (ufo_config_load_text (s_config, text, strlen (text), &err) == 0);
    ufo_llm_config_t cfg;
    ufo_llm_config_defaults (&cfg);
    FUZZ_REQUIRE (ufo_llm_config_from (s_config, "EVALUATION_AGENT", &cfg, &err) == 0);
    s_llm = ufo_llm_new (&cfg, NULL, &err);
    FUZZ_REQUIRE (s_llm);
    s_prompts = ufo_prompts_new (UFO_SOURCE_DIR "/prompts", &err);
    FUZZ_REQUIRE (s_prompts);
    s_eval = ufo_eval_new (s_config, s_llm, s_prompts, &err);
    FUZZ_REQUIRE (s_eval);
    atexit (s_cleanup);
}

static void
s_check (const char *task, const char *level, int64_t round, const ufo_value_t *board)
{
    ufo_eval_request_t req = { .log_root = s_root, .task = task, .level = level, .round = round,
                               .all_screenshots = 1, .board = board };
    ufo_value_t *result = NULL;
    ufo_error_t err;
    ufo_value_t *messages = ufo_eval_prompt (s_eval, &req, &result, &err);
    FUZZ_REQUIRE (result);
    if (messages) {
        FUZZ_REQUIRE (ufo_value_size (messages) == 2);
        FUZZ_REQUIRE (*ufo_value_map_str (result, "error", "x") == '\0');
        FUZZ_REQUIRE (board || ufo_value_map_int (result, "images", -1) == 0);
        char *json = ufo_json_dump (messages, UFO_JSON_COMPACT, NULL);
        FUZZ_REQUIRE (json && ufo_utf8_valid (json, strlen (json)));
        free (json);
        const ufo_value_t *parts = ufo_value_map_get (ufo_value_list_at (messages, 1), "content");
        for (size_t i = 0; i < ufo_value_size (parts); i++) {
            const ufo_value_t *part = ufo_value_list_at (parts, i);
            if (strcmp (ufo_value_map_str (part, "type", ""), "text") == 0)
                continue;
            const char *url = ufo_value_map_str (ufo_value_map_get (part, "image_url"), "url", "");
            FUZZ_REQUIRE (board && (strncmp (url, "data:image/png;base64,", 22) == 0
                                 || strncmp (url, "data:image/jpeg;base64,", 23) == 0));
        }
    }
    else
        FUZZ_REQUIRE (*ufo_value_map_str (result, "error", "") != '\0');
    ufo_value_destroy (&messages);
    ufo_value_destroy (&result);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (!s_eval)
        s_setup ();
    static const char *names [] = { "response.log", "request.json", NULL };
    size_t start = 0;
    ufo_value_t *board = NULL;
    for (size_t f = 0; f < UFO_ARRAY_SIZE (names); f++) {
        bool present = start <= size;
        const uint8_t *cut = present ? memchr (data + start, 0x1E, size - start) : NULL;
        size_t end = cut ? (size_t) (cut - data) : size;
        if (names [f])
            fuzz_put_file (s_dir, names [f], data + start, present ? end - start : 0, present);
        else
        if (present)
            board = ufo_json_parse ((const char *) data + start, end - start, NULL, NULL);
        start = cut ? end + 1 : size + 1;
    }
    s_check ("task", "session", 0, NULL);
    s_check ("task", "round", 0, NULL);
    s_check ("task", "round", 1, NULL);
    if (board) {
        s_check ("missing", "session", 0, board);
        s_check ("missing", "round", 1, board);
        ufo_value_destroy (&board);
    }
    return 0;
}
