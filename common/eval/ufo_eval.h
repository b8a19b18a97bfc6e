/*  ufo_eval.h - the EvaluationAgent's judgement of a round or a session, from its logs.

    Used by the ufo-eval worker (eval_agent/) and by `ufo eval` (offline re-evaluation).
    From a log directory logs/<task>/ (docs/LOGS.md) it builds the evaluation prompt: the
    request(s), the trajectory (response.log records of the round, or of every round), the
    catalogue descriptions of the actions used, the subtasks with their last status, and the
    screenshots (all of them with EVA_ALL_SCREENSHOTS, else the first and the last; when the
    images and the trajectory text would exceed eval.max_image_bytes it falls back to the
    first and the last by itself and says so, and says so too when even those are over). It asks the EVALUATION_AGENT model (schema UFO_SCHEMA_EVAL: JSON
    re-asks and the backup engine come from the LLM client), appends the result to
    evaluation.log and hands it to the caller. Any failure (unreadable logs, an unusable
    answer, an unreachable model) ends in a result with "error" set and "complete": "unsure",
    never in a crash. docs/EVALUATION.md describes inputs and outputs.

    Result map (also the body of the eval task's result, docs/PROTOCOL.md section 4):
      {"level": "round"|"session", "round": r (-1 at session level), "request": text,
       "reason": text, "sub_scores": {goal: "yes"|"no"|"unsure"}, "complete": "yes"|"no"|"unsure",
       "screenshots": "all"|"first_last"|"none", "images": n sent, "screenshot_note": text
       ("" unless the evaluator fell back), "steps": n trajectory records,
       "cost": {"total": $, "prompt_tokens": n, "completion_tokens": n},
       "engine": block that answered, "source": "logs"|"board" (where the trajectory came
       from), "error": "" or the reason of the failure} */
#ifndef UFO_EVAL_H_INCLUDED
#define UFO_EVAL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_prompt.h"
#include "ufo_value.h"

typedef struct _ufo_config_t ufo_config_t;
typedef struct _ufo_llm_t ufo_llm_t;
typedef struct _ufo_prompts_t ufo_prompts_t;
typedef struct _ufo_eval_t ufo_eval_t;

//  Default of eval.max_image_bytes: image bytes (before base64) sent in one evaluation.
#define UFO_EVAL_MAX_IMAGE_BYTES_DEFAULT (8 * 1024 * 1024)

//  What to evaluate. Everything is borrowed for the duration of the call.
typedef struct {
    const char *log_root;           //  directory holding the task directories ("logs")
    const char *task;               //  task name: the log directory is log_root/task
    const char *level;              //  "session" or "round"
    int64_t round;                  //  round number (round level only)
    const ufo_value_t *requests;    //  list of request texts by round (at round level a
                                    //  one-element list is that round's request), or NULL /
                                    //  empty: from request.json, else the Request fields of
                                    //  response.log
    int all_screenshots;            //  1 all, 0 first and last, -1 the EVA_ALL_SCREENSHOTS key
    const ufo_value_t *board;       //  the session's board map ({"requests": [...],
                                    //  "trajectories": [...], "screenshots": [...]} with
                                    //  image_str filled), or NULL. Used when the log directory
                                    //  is not reachable (trajectory, requests, screenshots),
                                    //  and for screenshots when the directory has none.
    const char *by;                 //  who judged, logged as "by" with the verdict: "ufo eval"
                                    //  for an offline re-evaluation; NULL = "EvaluationAgent"
    //  Told of each retry of the model call while it waits (ufo_llm_opts_t.on_retry); NULL =
    //  not told. retry_arg must outlive the evaluation.
    void (*on_retry) (void *arg, int attempt, int64_t wait_ms, const char *why);
    void *retry_arg;
    //  The engine to ask instead of the evaluator's client's own (a session's model
    //  override, ufo_llm_override.h), or NULL. Copied when the request is submitted.
    const ufo_llm_config_t *engine;
} ufo_eval_request_t;

//  Completion callback: *result_p is the result map (see above); the callee may take it
//  (set *result_p to NULL), otherwise it is destroyed after the call.
typedef void (ufo_eval_done_fn) (ufo_value_t **result_p, void *arg);

//  Creates an evaluator. config, llm (an EVALUATION_AGENT client) and prompts are borrowed
//  and must outlive it. Reads VISUAL_MODE (EVALUATION_AGENT, falling back to APP_AGENT),
//  EVA_ALL_SCREENSHOTS, JSON_PARSING_RETRY and eval.max_image_bytes from config.
//  Returns NULL with err when config, llm or prompts is missing.
ufo_eval_t *ufo_eval_new (const ufo_config_t *config, ufo_llm_t *llm, ufo_prompts_t *prompts,
                          ufo_error_t *err);

//  Cancels evaluations in flight (their callbacks are not called); frees; sets *self_p
//  to NULL. Safe with NULL.
void ufo_eval_destroy (ufo_eval_t **self_p);

//  Overrides the image budget (bytes before base64; 0 = no limit). For tests and tools.
void ufo_eval_set_max_image_bytes (ufo_eval_t *self, int64_t bytes);

//  Starts an evaluation: reads the logs, builds the prompt and submits it to the LLM client
//  (the caller's loop drives the client: ufo_llm_poll / ufo_llm_process). done is called
//  exactly once from the client's callback, or from inside this call when the inputs are
//  unusable (bad level, unreadable log directory, prompt failure): then the result carries
//  "error". The result is appended to evaluation.log before done is called (when the log
//  directory can be opened). Returns a positive evaluation id (for ufo_eval_cancel), or 0
//  when done has already been called.
int64_t ufo_eval_start (ufo_eval_t *self, const ufo_eval_request_t *request,
                        ufo_eval_done_fn *done, void *arg);

//  Cancels an evaluation in flight (no callback, nothing logged). Returns 0, or -1 when
//  id is unknown or finished.
int ufo_eval_cancel (ufo_eval_t *self, int64_t id);

//  Evaluations in flight.
size_t ufo_eval_pending (const ufo_eval_t *self);

//  Blocking convenience for tools (`ufo eval`): starts and drives the LLM client until the
//  result is in. Returns the result map (caller owns), never NULL.
ufo_value_t *ufo_eval_run (ufo_eval_t *self, const ufo_eval_request_t *request);

//  Builds the evaluation prompt without asking the model (`ufo eval --dry-run`, tests,
//  fuzzing): reads the logs and returns the chat messages (caller owns), or NULL with err
//  when the inputs are unusable. *result_p (optional) receives the result as far as it is
//  known without the model (level, request, screenshots, images, screenshot_note, steps,
//  or error); caller owns. Nothing is logged.
ufo_value_t *ufo_eval_prompt (ufo_eval_t *self, const ufo_eval_request_t *request,
                              ufo_value_t **result_p, ufo_error_t *err);

//  The blackboard item that records a result in the session board's `requests` memory,
//  next to the request it judges: {"evaluation_session": {...}} or
//  {"evaluation_round_<r>": {...}}, the inner map holding level, round, complete,
//  sub_scores, reason, screenshots and error. Caller owns.
ufo_value_t *ufo_eval_board_item (const ufo_value_t *result);

//  The verdict symbol of a judgement: "yes" -> "✅", "no" -> "❌", anything else -> "❓".
const char *ufo_eval_icon (const char *judgement);

//  Writes a human-readable summary of a result (verdict, one line per sub-score with its
//  symbol, the reason, notes and errors) to stream.
void ufo_eval_print (FILE *stream, const ufo_value_t *result);

#endif
