/*  ufo_eval_int.h - private to ufo_eval.c and ufo_eval_input.c: reading the evaluator's
    inputs from a log directory. Not part of the API (no stability promise). */
#ifndef UFO_EVAL_INT_H_INCLUDED
#define UFO_EVAL_INT_H_INCLUDED

#include "ufo_error.h"
#include "ufo_value.h"

//  The trajectory item shown to the model for one response.log record: the step fields
//  that matter for judging (Step, Round, Agent, Application, Subtask, Observation, Thought,
//  Action, Status, Comment, Results, ActionSuccess...), long strings shortened. Caller owns.
ufo_value_t *ufo_eval_step_item (const ufo_value_t *record);

//  The action a record called (FunctionCall, Action.function or Function), or NULL. Borrowed.
const char *ufo_eval_step_function (const ufo_value_t *record);

//  The requests by round: given (a list of strings) when not empty, else request.json's
//  "requests" in dir (NULL: no directory), else the board's {"request_<r>": text} items in
//  its requests memory (board may be NULL), else the Request fields of the records by
//  Round. Caller owns.
ufo_value_t *ufo_eval_load_requests (const char *dir, const ufo_value_t *given,
                                     const ufo_value_t *records, const ufo_value_t *board);

//  Appends the board's screenshots (items with an "image_str" data URL of a PNG / JPEG, of
//  round only_round when >= 0, as told by metadata.Round) to shots as {"url", "label",
//  "bytes", "file"}, within the same cap as ufo_eval_add_shot.
void ufo_eval_board_shots (ufo_value_t *shots, const ufo_value_t *board, int64_t only_round);

//  The AppAgent action catalogue (prompts_dir/app_agent/actions.tmpl) as a map
//  name -> description. Missing file: empty map and a warning. Caller owns.
ufo_value_t *ufo_eval_load_catalogue (const char *prompts_dir);

//  Appends {"file": name, "label": label, "bytes": n} to shots when dir/name is a plain
//  file name of a PNG / JPEG file that exists, is not too large, and is not listed yet.
void ufo_eval_add_shot (ufo_value_t *shots, const char *dir, const char *name, const char *label);

//  Reads dir/name and returns it as a data URL (caller frees), or NULL with err when the
//  file is unreadable or its bytes are not the image type its name says.
char *ufo_eval_data_url (const char *dir, const char *name, ufo_error_t *err);

#endif
