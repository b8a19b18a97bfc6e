/*  app_agent.h - the AppAgent of one subtask: the original's state machine (CONTINUE,
    SCREENSHOT, PENDING, CONFIRM, FINISH, FAIL, ERROR), one ReAct step at a time
    (app_step.h), driven by the process's event loop.

    Input is the subtask body of docs/PROTOCOL.md section 4 (agents_protocol: "Subtask
    task"). Output goes through an emit callback (progress bodies: step, question, confirm,
    cost) and, at the end, the result body. Answers to questions and confirmations come in
    with app_agent_input. Nothing here blocks for long: an LLM call, a control snapshot
    and an action are all operations that advance while the loop calls app_agent_advance. */
#ifndef APP_AGENT_H_INCLUDED
#define APP_AGENT_H_INCLUDED

#include "ufo_error.h"
#include "ufo_value.h"
#include "app_ctx.h"

typedef struct _app_agent_t app_agent_t;

//  Receives one progress body (ownership of *body_p taken by the callee).
typedef void (app_emit_fn) (void *arg, ufo_value_t **body_p);

//  Starts the subtask of body (copied) as task task_id, delivery attempt `attempt`
//  (> 1: resume from the trajectories already on the blackboard). Returns NULL with err
//  when the body is unusable (missing fields, wrong types, no window, unwritable logs).
app_agent_t *app_agent_new (app_ctx_t *ctx, const char *task_id, const ufo_value_t *body,
                            int attempt, app_emit_fn *emit, void *emit_arg, ufo_error_t *err);

//  Stops the subtask (an LLM call or action in flight is cancelled) and frees it.
//  Sets *self_p to NULL. Safe with NULL.
void app_agent_destroy (app_agent_t **self_p);

//  Advances the subtask as far as it can go without waiting. Returns true once it has
//  ended (then take the result).
bool app_agent_advance (app_agent_t *self);

//  Milliseconds the caller may sleep before the next app_agent_advance (0..50).
int app_agent_timeout (const app_agent_t *self);

//  Delivers an input body ({"qid", "answers": [...]} or {"qid", "confirm": bool}).
//  Returns 0 if it answered what the agent is waiting for, -1 otherwise (ignored).
int app_agent_input (app_agent_t *self, const ufo_value_t *body);

//  Ends the subtask now as ERROR with reason (cancellation, shutdown). Safe at any time.
void app_agent_abort (app_agent_t *self, const char *reason);

//  The result body once ended ({"status", "steps", "results", "comment", "error", "cost",
//  "final_screenshot"}); caller owns. NULL before the end.
ufo_value_t *app_agent_take_result (app_agent_t *self);

//  The qid being waited for, or NULL.
const char *app_agent_waiting_qid (const app_agent_t *self);

#endif
