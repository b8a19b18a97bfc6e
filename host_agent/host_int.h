/*  host_int.h - private to ufo-host: the state of a running session shared by
    host_session.c (rounds, states), host_step.c (one HostAgent step) and host_logs.c. */
#ifndef HOST_INT_H_INCLUDED
#define HOST_INT_H_INCLUDED

#include "ufo_cost.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "host_session.h"

//  The HostAgent states (the original's names).
typedef enum {
    HOST_CONTINUE = 0,
    HOST_ASSIGN,
    HOST_PENDING,
    HOST_FINISH,
    HOST_FAIL,
    HOST_ERROR
} host_state_t;

//  "CONTINUE", "ASSIGN", ...
const char *host_state_name (host_state_t state);
//  The state named by a Status field; -1 for anything else.
int host_state_parse (const char *status);

//  Where the machine is (host_session_advance runs the phase's code). A phase that starts
//  an operation names the phase that takes its reply (host_start).
typedef enum {
    //  the session (host_session.c)
    HP_OPEN = 0, HP_RESUME_POINT, HP_ROUND, HP_ROUND_EXPERIENCE, HP_ROUND_ONLINE, HP_STATE,
    HP_ASSIGN, HP_ASSIGN_DEMO, HP_ASSIGN_WORKER, HP_ASSIGN_DONE,
    HP_ROUND_END, HP_ROUND_SNAP, HP_ROUND_SNAP_AGAIN, HP_ROUND_SNAP_DONE, HP_ROUND_NEXT,
    HP_EVAL, HP_EVAL_BOARD, HP_EVAL_DONE,
    HP_SESSION_END, HP_SESSION_BOARD, HP_SESSION_SAVE, HP_SESSION_LOGS, HP_DONE,
    //  one HostAgent step (host_step.c)
    HP_STEP, HP_STEP_WINDOWS, HP_STEP_BOARD, HP_STEP_TOOLS, HP_STEP_ASK, HP_STEP_CONFIRM, HP_STEP_ACTED,
    HP_STEP_ANSWERS, HP_STEP_QA, HP_STEP_LOG,
    //  saving the session as experience (host_experience.c)
    HP_SAVE_WANTED, HP_SAVE_SUMMARY, HP_SAVE_STORED, HP_SAVE_DONE
} host_phase_t;

//  The state of one step in flight (host_step.c), cleared at each step start.
typedef struct {
    double t0, t_shot, t_prompt, t_llm;
    char shot_name [64];
    char shot_path [4096];
    char error [512];
    char *url;
    ufo_value_t *parts;         //  the blackboard's prompt parts
    ufo_value_t *tools;         //  the HostAgent's API tools (MCP) for the prompt
    ufo_value_t *messages;
    ufo_llm_opts_t opts;
    ufo_llm_response_t *resp;
    ufo_value_t *record;
    host_state_t next;
    //  the action
    const char *function, *action_type;
    const char *user_confirm;   //  an API tool under the confirmation policy (host_confirm.h):
                                //  "" not covered, "yes", "no"; NULL while the user is asked
    char *subtask;              //  the subtask assigned (copy)
    char *application;          //  the application assigned (copy)
    bool success;
    char result [512];
    char action_error [512];
    bool asked;                 //  PENDING: the user was asked (ask_user started)
    ufo_value_t *answers;       //  PENDING: the user's answers (or NULL)
    ufo_value_t *given;         //  PENDING: the answers recorded, one per question
    size_t qa_index;            //  PENDING: the next question to put on the blackboard
} host_step_t;

struct _host_session_t {
    const host_session_config_t *cfg;
    const host_ops_t *ops;
    host_phase_t phase;
    bool waiting;               //  an operation is in flight
    bool replied;               //  ... and it completed: its reply is in reply
    host_reply_t reply;
    ufo_value_t *result;        //  the session's result, once ended
    ufo_tasklog_t *log;
    ufo_cost_t cost;
    int64_t step;               //  session steps used so far (HostAgent and AppAgents)
    int64_t round;              //  current round
    int64_t round_step;         //  steps used in this round
    int64_t agent_step;         //  HostAgent steps in this round
    int64_t subtask_index;      //  index of the current subtask in the round, -1 before
    const char *request;        //  this round's request (borrowed from cfg->requests)
    ufo_value_t *memory;        //  HostAgent memory: its recent steps (list of maps)
    ufo_value_t *previous;      //  previous subtasks of this round: [{"subtask", "status"}]
    ufo_value_t *plan;          //  the model's last Plan (list of strings)
    ufo_value_t *tips;          //  notes for the next prompt (answers to questions, errors)
    ufo_value_t *windows;       //  window list of the last step
    ufo_value_t *decision;      //  the last HostAgent decision
    //  the assignment made by the last ASSIGN step
    char *subtask;
    char *application;
    ufo_value_t *window;        //  {"title", "pid", "xid"}
    ufo_value_t *messages;      //  "Message" tips for the AppAgent
    int64_t last_xid;           //  window of the last subtask (round-end snapshot)
    int64_t follow_index;       //  follower mode: next plan entry
    char error [1024];          //  reason of an ERROR
    ufo_value_t *evaluation;    //  last session-level evaluation (or NULL)
    ufo_value_t *experience;    //  RAG_EXPERIENCE: records retrieved for this round (list) or NULL
    ufo_value_t *online;        //  RAG_ONLINE_SEARCH: web results for this round (list) or NULL
    char started [40];          //  ISO-8601
    int64_t started_us;
    //  the session's progress through its rounds
    size_t nreq, first, r;
    int64_t rounds;
    bool any_fail, any_error;
    host_state_t state;         //  the HostAgent state of the current round
    //  the subtask or evaluation in flight
    ufo_value_t *body;          //  its body until submitted
    char service [256];
    double tc_dollars;          //  cost seen from the running task (its events are cumulative)
    int64_t tc_prompt, tc_completion;
    const char *eval_level;     //  the evaluation in flight: "round" | "session"
    host_phase_t eval_then;     //  the phase after it
    ufo_value_t *board;         //  session end: the board for the files and the experience
    const char *status;         //  session end: FINISH | FAIL | ERROR
    bool save_wanted;           //  SAVE_EXPERIENCE said yes
    host_step_t st;             //  the step in flight
};
typedef struct _host_session_t host_t;

//  Starts an operation: the machine waits in phase `then` until host_session_done. Call it
//  right before the ops function (which may complete at once).
void host_start (host_t *self, host_phase_t then);

//  The reply of the operation that led to the current phase (fields taken by the caller
//  are set to NULL); released at the next host_start.
host_reply_t *host_reply (host_t *self);

//  Experience (host_experience.c): the start of a round asks for the records of similar
//  requests (HP_ROUND_EXPERIENCE takes them) and the web results (HP_ROUND_ONLINE); the
//  demonstrations for a subtask (HP_ASSIGN_DEMO); at session end, HP_SAVE_WANTED ..
//  HP_SAVE_STORED save the session by SAVE_EXPERIENCE, then go to HP_SESSION_LOGS.
//  Each returns true when it started an operation, false when there was none to start.
bool host_experience_start_find (host_t *self);
bool host_online_start_find (host_t *self);
bool host_demonstration_start_find (host_t *self);
//  The found list of the last reply (a new list; an empty one and the log line
//  "<failed>: <why>" on failure).
ufo_value_t *host_found_take (host_t *self, const char *failed);
//  Runs a HP_SAVE_* phase.
void host_experience_phase (host_t *self);

//  One HostAgent step in state CONTINUE (look, ask, act, log) as phases HP_STEP ..
//  HP_STEP_LOG; the last one sets self->state to the next state and goes to HP_STATE.
void host_step_phase (host_t *self);
//  Releases what the step in flight holds.
void host_step_clear (host_t *self);

//  Puts a HostAgent response.log record into the HostAgent's memory (the fields its prompt
//  shows), keeping the most recent ones.
void host_step_remember (host_t *self, const ufo_value_t *record);

//  A new list of the texts of list (other values left out).
ufo_value_t *host_str_list (const ufo_value_t *list);

//  Base64 data URL of a file ("data:image/png;base64,..."), caller frees; NULL if unreadable.
char *host_data_url (const char *path);

//  Session-end files: blackboard.json (board map, borrowed), session.json, output.md.
void host_logs_request (host_t *self);
void host_logs_session_end (host_t *self, const char *status, const ufo_value_t *board);

#endif
