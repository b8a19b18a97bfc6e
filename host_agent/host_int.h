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

typedef struct {
    const host_session_config_t *cfg;
    const host_ops_t *ops;
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
} host_t;

//  Experience (host_experience.c): the records retrieved for this round's request (a new
//  list, or NULL when RAG_EXPERIENCE is off); saving the session by SAVE_EXPERIENCE.
ufo_value_t *host_experience_find (host_t *self);
//  The web search results for this round's request (a new list, or NULL when
//  RAG_ONLINE_SEARCH is off); a failed search gives an empty list and a log line.
ufo_value_t *host_online_find (host_t *self);
//  The demonstrations for the subtask being assigned (a new list, or NULL when
//  RAG_DEMONSTRATION is off); they go to the AppAgent only.
ufo_value_t *host_demonstration_find (host_t *self);
void host_experience_save (host_t *self, const char *status, const ufo_value_t *board);

//  One HostAgent step in state CONTINUE: look, ask, act, log. Returns the next state.
host_state_t host_step_run (host_t *self);

//  Puts a HostAgent response.log record into the HostAgent's memory (the fields its prompt
//  shows), keeping the most recent ones.
void host_step_remember (host_t *self, const ufo_value_t *record);

//  PENDING: asks the user the questions (list of texts; without a user, the placeholder
//  answer), records each pair on the blackboard and in the tips of the next prompt.
//  Returns the answers given, one per question (caller owns).
ufo_value_t *host_pending_ask (host_t *self, const ufo_value_t *questions);


//  Base64 data URL of a file ("data:image/png;base64,..."), caller frees; NULL if unreadable.
char *host_data_url (const char *path);

//  Session-end files: blackboard.json (board map, borrowed), session.json, output.md.
void host_logs_request (host_t *self);
void host_logs_session_end (host_t *self, const char *status, const ufo_value_t *board);

#endif
