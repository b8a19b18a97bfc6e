/*  app_int.h - the subtask state shared by app_agent.c (state machine) and app_step.c /
    app_record.c (one step). Private to ufo-app. */
#ifndef APP_INT_H_INCLUDED
#define APP_INT_H_INCLUDED

#include "ufo_cost.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "app_agent.h"
#include "app_step.h"
#include "app_window.h"
#include "app_writer.h"

//  The answer recorded for a question nobody could be asked (the original's ASK_QUESTION off).
#define APP_PLACEHOLDER "no answer available, proceed"

typedef enum {
    APP_CONTINUE = 0, APP_SCREENSHOT, APP_PENDING, APP_CONFIRM, APP_FINISH, APP_FAIL, APP_ERROR
} app_state_t;

struct _app_agent_t {
    app_ctx_t *ctx;                 //  borrowed
    char *task_id;
    ufo_value_t *body;              //  owned copy of the subtask body
    //  body fields (borrowed from body)
    const char *session, *task, *subtask, *request, *application;
    int64_t round, subtask_index, step_base, round_step_base, max_steps;
    bool interactive, auto_confirm;
    const ufo_value_t *tips, *previous_subtasks;
    const ufo_value_t *experience;  //  "experience_examples" of the body (list) or NULL
    const ufo_value_t *online;      //  "online_docs" of the body (list) or NULL
    const ufo_value_t *demonstrations;  //  "demonstration_examples" of the body (list) or NULL
    int64_t xid;                    //  the subtask's (main) window
    int64_t pid;                    //  its application's process (_NET_WM_PID; 0 unknown)
    int64_t window_xid;             //  the window of the last step (a dialog, or xid)
    char agent_name [160];          //  "AppAgent/<application>"
    ufo_tasklog_t *log;
    app_writer_t *writer;           //  screenshots are encoded and written here (thread)
    app_emit_fn *emit;
    void *emit_arg;
    //  state machine
    app_state_t state;
    int64_t agent_step;             //  AgentStep of the next step (continues after a resume)
    int64_t steps_run;              //  steps run by this delivery
    int64_t resumed;                //  steps found on the board at start
    uint64_t resume_read;           //  the board read of a resume in flight (app_board_forget), or 0
    bool resuming;                  //  ... no step before it ended
    app_step_t *step;               //  the step in progress
    int64_t next_step_at;           //  monotonic ms: SLEEP_TIME after an action
    //  memory of the subtask
    ufo_value_t *memory;            //  trajectory items of this subtask (list)
    ufo_value_t *results;           //  action results (list of strings)
    ufo_value_t *plan;              //  the model's last Plan (list)
    char *last_result;              //  the last action's result, for the prompt
    ufo_value_t *user_answers;      //  answers to the last questions (list), for the prompt
    ufo_value_t *annotate_labels;   //  SCREENSHOT: the labels to annotate next step
    char *last_shot_url;            //  data URL of the previous step's screenshot
    ufo_cost_t cost;
    char last_comment [1024];
    //  waiting for an answer
    char qid [96];
    int waiting;                    //  0, APP_PENDING or APP_CONFIRM
    ufo_value_t *asked;             //  the questions asked (PENDING)
    //  ACTION_SEQUENCE: the actions of the model's ActionList still to run (list of
    //  {"decision", "expect_text", "expect_type", "index", "total"}), each checked before it runs
    ufo_value_t *action_queue;
    //  end
    bool ended;
    char *error;
    char comment [1024];
    ufo_value_t *result;
};


//  Sends a progress body through the agent's emit callback (ownership taken).
void app_agent_emit (app_agent_t *self, ufo_value_t **body_p);

//  Builds the response.log record of a step and writes response.log / request.log, the
//  board items and the progress events. In app_record.c.
typedef struct {
    const ufo_value_t *decision;    //  may be NULL (LLM failure)
    const char *status;
    const char *error;              //  NULL or the reason of ERROR
    int64_t step, agent_step;
    const ufo_value_t *action;      //  {"function","args","control_label","control_text","control_type"}
    const ufo_value_t *action_result;   //  desktop result map, or NULL when nothing ran
    const char *action_type;
    const ufo_value_t *control;     //  selected control or NULL
    const char *user_confirm;
    const ufo_value_t *questions, *answers;
    const char *shot, *annotated, *selected;    //  file names ("" none)
    const ufo_value_t *time_cost;
    double cost;
    int64_t prompt_tokens, completion_tokens;
    const char *results;            //  the action's text result
    const ufo_value_t *window;      //  {"xid", "title", "dialog"} of the step's window, or NULL
} app_record_t;

//  Writes everything about a finished step; failures are logged, not fatal.
void app_record_step (app_agent_t *agent, const app_record_t *rec);

//  Writes request.log for a step: the messages with image URLs replaced by file names
//  (urls[i] -> names[i]; any other image URL -> "blackboard image"), and the knowledge
//  retrieved for the prompt (ufo_rag_for_app: offline_docs ...; may be NULL).
void app_record_request (app_agent_t *agent, int64_t step, const ufo_value_t *messages,
                         const char *const *urls, const char *const *names, size_t n,
                         const ufo_value_t *knowledge);

#endif
