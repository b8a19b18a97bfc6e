/*  fuzz_jsonl.c - libFuzzer target for the blackboard's JSON-lines question loader
    (ufo_board_load_questions_text) and, when the first byte has its top bit set, for the
    snapshot loader (ufo_board_from_json) on the same bytes. The first byte also picks
    last_k; the rest is the file. Any input: no crash, no leak. Oracles: every loaded item's
    cached text is exactly what the JSON writer produces for its parsed fields, and the
    board's JSON snapshot parses back with the same number of questions and loads back to
    the same text. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

//  Every item's cached text equals a fresh json.dumps of its fields.
static void
s_check_items (ufo_board_t *board)
{
    for (int m = 0; m < UFO_MEM_COUNT; m++) {
        ufo_memory_t *mem = ufo_board_memory (board, m);
        for (size_t i = 0; i < ufo_memory_length (mem); i++) {
            ufo_item_t *item = ufo_memory_at (mem, i);
            size_t len, len2;
            char *cached = ufo_item_to_json (item, UFO_JSON_PY, &len);
            char *fresh = ufo_json_dump (ufo_item_fields (item), UFO_JSON_PY, &len2);
            FUZZ_CHECK (len == len2 && memcmp (cached, fresh, len) == 0);
            free (cached);
            free (fresh);
        }
    }
}

static void
s_snapshot (const uint8_t *data, size_t size)
{
    ufo_board_t *board = ufo_board_new ();
    ufo_error_t err;
    if (ufo_board_from_json (board, (const char *) data, size, &err) == 0) {
        size_t len;
        char *before = ufo_board_to_json (board, &len);
        s_check_items (board);
        char *after = ufo_board_to_json (board, NULL);
        FUZZ_CHECK (strcmp (before, after) == 0);
        free (before);
        free (after);
    }
    else
        FUZZ_CHECK (err.code != UFO_OK);
    ufo_board_destroy (&board);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_log_set_level (UFO_LOG_OFF);
    if (size == 0)
        return 0;
    if (data [0] & 0x80)
        s_snapshot (data + 1, size - 1);
    int64_t last_k = (int64_t) (data [0] % 8) - 1;     //  -1 .. 6
    ufo_board_t *board = ufo_board_new ();
    size_t added = ufo_board_load_questions_text (board, (const char *) data + 1, size - 1, last_k);
    ufo_memory_t *questions = ufo_board_memory (board, UFO_MEM_QUESTIONS);
    FUZZ_CHECK (ufo_memory_length (questions) == added);
    if (last_k > 0)
        FUZZ_CHECK (added <= (size_t) last_k);

    s_check_items (board);
    size_t len;
    char *snapshot = ufo_board_to_json (board, &len);
    ufo_error_t err;
    ufo_json_limits_t limits = { .max_depth = 256, .allow_nan = true };
    ufo_value_t *back = ufo_json_parse (snapshot, len, &limits, &err);
    FUZZ_CHECK (back);
    FUZZ_CHECK (ufo_value_size (ufo_value_map_get (back, "questions")) == added);
    //  and the snapshot loads back into a board with the same text
    ufo_board_t *again = ufo_board_new ();
    int rc = ufo_board_from_json (again, snapshot, len, &err);
    FUZZ_CHECK (rc == 0);
    size_t len2;
    char *snapshot2 = ufo_board_to_json (again, &len2);
    FUZZ_CHECK (len == len2 && memcmp (snapshot, snapshot2, len) == 0);
    free (snapshot2);
    ufo_board_destroy (&again);
    ufo_value_destroy (&back);
    free (snapshot);
    ufo_board_destroy (&board);
    return 0;
}
