/*  ufo_outcome.h - what a step or a session came to, in one vocabulary for every output
    (`ufo run` and its --json, `ufo batch`, `ufo monitor`, `ufo status`, the report).

    A step failed when its Status is "ERROR", when one of its actions (ActionSuccess) did
    not succeed, or when it carries an "error". A session's status is the agents' word
    (FINISH, FAIL, ERROR) when the session produced a result, else CANCELLED for a
    cancelled task and ERROR for a task that ended without a result (refused, lost, past
    its deadline). A session is completed when its status is FINISH and its evaluation is
    not "no"; the agents and the evaluation disagree when the status is FINISH and the
    evaluation says "no", or the status is FAIL / ERROR and the evaluation says "yes". */
#ifndef UFO_OUTCOME_H_INCLUDED
#define UFO_OUTCOME_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_value.h"

//  Whether a step record (a response.log line, a "step" progress record) failed. When it
//  did and why is not NULL, *why points at the reason inside record ("failed" when the
//  record names none). Returns false for NULL or a record that is not a map.
bool ufo_outcome_step_failed (const ufo_value_t *record, const char **why);

//  The session status word: result's "status" when result is a session result (a map with
//  "status"), else from the task status ("cancelled" -> "CANCELLED", anything else ->
//  "ERROR"). Never NULL; the text is static or inside result.
const char *ufo_outcome_session_status (const ufo_value_t *result, const char *task_status);

//  Whether the session was completed: status FINISH and its evaluation ("evaluation"
//  .complete) is not "no".
bool ufo_outcome_completed (const ufo_value_t *result);

//  When the evaluation disagrees with the agents' status, one line saying so into out
//  and returns out; else returns NULL (out untouched).
const char *ufo_outcome_disagreement (const ufo_value_t *result, char *out, size_t size);

#endif
