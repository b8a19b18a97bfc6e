/*  app_step.h - one ReAct step of the AppAgent, as in the original: screenshot -> control
    info -> prompt -> LLM -> cost -> parse -> (confirmation, by the agent) -> action ->
    memory -> status -> log.

    A step is a small state machine of its own. app_step_advance moves it until it needs
    the agent (a decision to act, questions to ask) or until it is recorded. The agent
    (app_agent.c) owns it and the subtask-wide state it reads and updates (app_int.h). */
#ifndef APP_STEP_H_INCLUDED
#define APP_STEP_H_INCLUDED

#include "ufo_value.h"

typedef struct _app_agent_t app_agent_t;
typedef struct _app_step_t app_step_t;

typedef enum {
    APP_STEP_OBSERVE = 0,       //  not started: window check, screenshot, snapshot
    APP_STEP_CONTROLS,          //  waiting for the control snapshot
    APP_STEP_LLM,               //  waiting for the model
    APP_STEP_DECIDED,           //  the model decided: the agent confirms or acts
    APP_STEP_ACT,               //  the action is running
    APP_STEP_ACTED,             //  acted (or not): the agent asks questions, then finishes
    APP_STEP_DONE,              //  recorded
    APP_STEP_CLOSED             //  the window is gone: no step was taken
} app_step_phase_t;

//  A new step for the agent's next step number. Never NULL.
app_step_t *app_step_new (app_agent_t *agent);

//  Frees (cancelling what is in flight); sets *self_p to NULL. Safe with NULL.
void app_step_destroy (app_step_t **self_p);

//  Advances; returns the phase reached.
app_step_phase_t app_step_advance (app_step_t *self);

//  Phase now.
app_step_phase_t app_step_phase (const app_step_t *self);

//  In APP_STEP_DECIDED: runs the decided action (confirmed = "yes" / "no" / "" when no
//  confirmation was asked). "no": the action is not run, the step's status becomes FINISH.
void app_step_act (app_step_t *self, const char *confirmed);

//  In APP_STEP_ACTED: records the step (logs, board, progress, memory) with the answers
//  to its questions (may be NULL). Moves to APP_STEP_DONE.
void app_step_finish (app_step_t *self, const ufo_value_t *answers);

//  The decision (borrowed; NULL before DECIDED or after an error).
const ufo_value_t *app_step_decision (const app_step_t *self);

//  The step's status: the model's Status, adjusted (confirmation refused: FINISH; failure:
//  ERROR). Valid from DECIDED on.
const char *app_step_status (const app_step_t *self);

//  The error that ended the step in ERROR, or NULL.
const char *app_step_error (const app_step_t *self);

//  The selected control of the decision (map from the snapshot, borrowed) or NULL.
const ufo_value_t *app_step_control (const app_step_t *self);

//  Session step number of this step.
int64_t app_step_number (const app_step_t *self);

//  Deadline (monotonic ms) by which the step should be advanced again, 0 when none.
int64_t app_step_deadline (const app_step_t *self);

#endif
