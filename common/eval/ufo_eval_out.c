/*  ufo_eval_out.c - what becomes of an evaluation result: the blackboard item and the
    human-readable summary with its verdict symbols (see ufo_eval.h). */
#include "ufo_prelude.h"
#include "ufo_value.h"
#include "ufo_eval.h"

ufo_value_t *
ufo_eval_board_item (const ufo_value_t *result)
{
    ufo_value_t *inner = ufo_value_new_map ();
    const char *level = ufo_value_map_str (result, "level", "session");
    int64_t round = ufo_value_map_int (result, "round", -1);
    ufo_value_map_set_str (inner, "level", level);
    if (strcmp (level, "round") == 0)
        ufo_value_map_set_int (inner, "round", round);
    const char *keys [] = { "complete", "sub_scores", "reason", "screenshots", "error" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        const ufo_value_t *v = ufo_value_map_get (result, keys [i]);
        if (v)
            ufo_value_map_set_copy (inner, keys [i], v);
    }
    char key [64];
    if (strcmp (level, "round") == 0)
        snprintf (key, sizeof key, "evaluation_round_%" PRId64, round);
    else
        snprintf (key, sizeof key, "evaluation_session");
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set (item, key, &inner);
    return item;
}

const char *
ufo_eval_icon (const char *judgement)
{
    if (judgement && strcmp (judgement, "yes") == 0)
        return "\xE2\x9C\x85";
    if (judgement && strcmp (judgement, "no") == 0)
        return "\xE2\x9D\x8C";
    return "\xE2\x9D\x93";
}

void
ufo_eval_print (FILE *stream, const ufo_value_t *result)
{
    const char *level = ufo_value_map_str (result, "level", "session");
    const char *complete = ufo_value_map_str (result, "complete", "unsure");
    if (strcmp (level, "round") == 0)
        fprintf (stream, "Evaluation of round %" PRId64, ufo_value_map_int (result, "round", 0));
    else
        fprintf (stream, "Evaluation of the session");
    fprintf (stream, ": %s complete: %s\n", ufo_eval_icon (complete), complete);
    const ufo_value_t *scores = ufo_value_map_get (result, "sub_scores");
    for (size_t i = 0; i < ufo_value_size (scores); i++) {
        const char *score = ufo_value_str (ufo_value_map_value_at (scores, i));
        fprintf (stream, "  %s %s: %s\n", ufo_eval_icon (score), ufo_value_map_key_at (scores, i),
                 score ? score : "unsure");
    }
    const char *reason = ufo_value_map_str (result, "reason", "");
    if (*reason)
        fprintf (stream, "Reason: %s\n", reason);
    const char *note = ufo_value_map_str (result, "screenshot_note", "");
    fprintf (stream, "Screenshots: %s (%" PRId64 " sent)%s%s\n",
             ufo_value_map_str (result, "screenshots", "none"),
             ufo_value_map_int (result, "images", 0), *note ? "; " : "", note);
    const ufo_value_t *cost = ufo_value_map_get (result, "cost");
    fprintf (stream, "Cost: $%.4f (%" PRId64 " prompt + %" PRId64 " completion tokens)\n",
             ufo_value_map_float (cost, "total", 0), ufo_value_map_int (cost, "prompt_tokens", 0),
             ufo_value_map_int (cost, "completion_tokens", 0));
    const char *error = ufo_value_map_str (result, "error", "");
    if (*error)
        fprintf (stream, "Error: %s\n", error);
}
