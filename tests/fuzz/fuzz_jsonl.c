/*  fuzz_jsonl.c - libFuzzer target for the blackboard's JSON-lines question loader
    (ufo_board_load_questions_text). The first byte picks last_k, the rest is the file.
    Any input: no crash, no leak. Oracles: every loaded item's cached text (kept as is from
    the input on the fast path) is exactly what the JSON writer produces for its parsed
    fields, and the board's JSON snapshot parses back with the same number of questions. */
#include "ufo_prelude.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_log_set_level (UFO_LOG_OFF);
    if (size == 0)
        return 0;
    int64_t last_k = (int64_t) (data [0] % 8) - 1;     //  -1 .. 6
    ufo_board_t *board = ufo_board_new ();
    size_t added = ufo_board_load_questions_text (board, (const char *) data + 1, size - 1, last_k);
    ufo_memory_t *questions = ufo_board_memory (board, UFO_MEM_QUESTIONS);
    assert (ufo_memory_length (questions) == added);
    if (last_k > 0)
        assert (added <= (size_t) last_k);

    for (size_t i = 0; i < added; i++) {
        ufo_item_t *item = ufo_memory_at (questions, i);
        size_t len;
        char *cached = ufo_item_to_json (item, UFO_JSON_PY, &len);
        size_t len2;
        char *fresh = ufo_json_dump (ufo_item_fields (item), UFO_JSON_PY, &len2);
        assert (len == len2 && memcmp (cached, fresh, len) == 0);
        free (cached);
        free (fresh);
    }
    size_t len;
    char *snapshot = ufo_board_to_json (board, &len);
    ufo_error_t err;
    ufo_json_limits_t limits = { .max_depth = 256, .allow_nan = true };
    ufo_value_t *back = ufo_json_parse (snapshot, len, &limits, &err);
    assert (back);
    assert (ufo_value_size (ufo_value_map_get (back, "questions")) == added);
    //  and the snapshot loads back into a board with the same text
    ufo_board_t *again = ufo_board_new ();
    int rc = ufo_board_from_json (again, snapshot, len, &err);
    assert (rc == 0);
    size_t len2;
    char *snapshot2 = ufo_board_to_json (again, &len2);
    assert (len == len2 && memcmp (snapshot, snapshot2, len) == 0);
    free (snapshot2);
    ufo_board_destroy (&again);
    ufo_value_destroy (&back);
    free (snapshot);
    ufo_board_destroy (&board);
    return 0;
}
