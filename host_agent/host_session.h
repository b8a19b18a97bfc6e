/*  host_session.h - one session of the HostAgent: rounds, the HostAgent state machine, the
    subtasks handed to AppAgents, evaluations, and the session's logs.

    The state machine does not know about the bus: everything that leaves the process
    (desktop, LLM, blackboard, subtasks, the user) goes through host_ops_t. ufo-host fills
    it with the real thing (host_bus.c); unit tests drive the machine with fakes.

    Step-driven, like the AppAgent (app_agent_advance): every outside operation is started
    through host_ops_t and completes later with host_session_done; host_session_advance
    runs the machine until it waits for an operation or the session has ended. Nothing in
    the machine waits: the process's loop keeps serving its sockets, timers and the user
    while an operation is in flight, and one operation is in flight at a time.

    An ops function may complete its operation at once (call host_session_done before it
    returns) or later from the caller's loop. A cancel: the caller makes `cancelled` answer
    true and completes the operation in flight (with an error, or NULL for ask_user); the
    machine then winds the session down (round end, logs) without starting a new LLM call,
    subtask or question. */
#ifndef HOST_SESSION_H_INCLUDED
#define HOST_SESSION_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_prompt.h"
#include "ufo_value.h"

typedef struct _host_session_t host_session_t;

//  Called for each progress event of a running task (run_task) that the session itself
//  handles ("cost"); the event is borrowed.
typedef void (host_progress_fn) (const ufo_value_t *event, void *arg);

//  What an operation gives back (host_session_done). Each op below says which fields it
//  fills; the rest stay zero. On failure value / response are NULL and err says why.
typedef struct {
    ufo_value_t *value;             //  the result value (owned)
    ufo_llm_response_t *response;   //  ask: the response (owned)
    char *url;                      //  windows: the screenshot as a data URL (owned) or NULL
    int64_t number;                 //  launch: pid (-1 failed); has_worker: 1 / 0 / -1;
                                    //  snapshot, board_add, experience_save: 0 or -1
    char id [64];                   //  experience_save: the record's id
    ufo_error_t err;
} host_reply_t;

typedef struct {
    void *arg;
    //  The application windows: value is a list of maps {"label", "name", "pid", "xid",
    //  "title"}. When shot_path is not NULL the desktop screenshot is saved there, and when
    //  want_url is true url is the screenshot as a data URL (NULL if none).
    void (*windows) (void *arg, const char *shot_path, bool want_url);
    //  Launches an allow-listed launcher (and waits, bounded, for its window): number is the
    //  pid or -1 with err.
    void (*launch) (void *arg, const char *name);
    //  Saves a screenshot of window xid (0: the screen) to path: number 0 or -1 with err.
    void (*snapshot) (void *arg, int64_t xid, const char *path);
    //  Asks the LLM (messages and opts borrowed until done): response, never NULL unless
    //  the call could not be made or was cancelled (err).
    void (*ask) (void *arg, const ufo_value_t *messages, const ufo_llm_opts_t *opts);
    //  The session's blackboard as a map {"questions": [...], ...} with screenshot data URLs
    //  filled in, or NULL with err.
    void (*board_get) (void *arg);
    //  Optional: the blackboard's prompt content parts; value NULL with err clear when the
    //  blackboard is empty, NULL with err set on failure. When set, the step prompt uses it
    //  instead of rebuilding a board from board_get, so a backend that keeps its board in
    //  step pays only for what changed.
    void (*board_prompt) (void *arg);
    //  Adds one item to a memory of the session's blackboard (ownership taken): number 0 / -1.
    void (*board_add) (void *arg, const char *memory, ufo_value_t **item_p);
    //  Runs a task on service (e.g. "app:mousepad", "eval") with body (ownership taken):
    //  value is its result body. Questions and confirmations from the task are relayed to
    //  the user; "cost" progress goes to on_progress (until done). NULL with err when the
    //  task failed (err says why) or the session was cancelled.
    void (*run_task) (void *arg, const char *service, ufo_value_t **body_p, host_progress_fn *on_progress,
                      void *progress_arg);
    //  Asks the user (event {"kind": "question", ...}, ownership taken): value is the answer
    //  body ({"qid", "answers"}), NULL when no answer can come (cancelled, no user).
    void (*ask_user) (void *arg, ufo_value_t **event_p);
    //  Sends a progress event to the session's submitter (ownership taken). Not an operation:
    //  nothing completes.
    void (*progress) (void *arg, ufo_value_t **event_p);
    //  True once the session must stop (cancelled, process stopping). A query.
    bool (*cancelled) (void *arg);
    //  Optional (NULL: assume yes): whether a worker of service serves this device (one that
    //  registers within a short grace counts), so that a subtask is not queued for an
    //  application nobody serves. number 1 yes, 0 no (err says why), -1 when it cannot be
    //  told (the subtask is submitted anyway).
    void (*has_worker) (void *arg, const char *service);
    //  Optional (NULL: no experience): the experience records most like request (value, a
    //  list, docs/KNOWLEDGE.md), or NULL with err; and saving a record (ownership taken):
    //  number 0 and id, or -1 with err.
    void (*experience_find) (void *arg, const char *request);
    void (*experience_save) (void *arg, ufo_value_t **record_p);
    //  Optional (NULL: no web search): the top web results for query (value, a list of
    //  {"title", "url", "snippet"}), bounded by the search timeout; NULL with err on failure.
    void (*online_search) (void *arg, const char *query);
    //  Optional (NULL: none): the demonstrations most like a subtask (value, a list), or NULL
    //  with err.
    void (*demonstration_find) (void *arg, const char *subtask);
    //  Optional (NULL: no API tools): the MCP servers configured for the HostAgent
    //  (MCP_SERVERS "HOST_AGENT", docs/APP_AGENT.md). With function NULL: the tools for the
    //  prompt (value, a list as ufo_mcp_hub_prompt_tools gives, once the servers started,
    //  bounded). Otherwise calls the tool function ("server.tool") with args (a map or NULL,
    //  borrowed until done; checked against its schema), bounded by MCP_TOOL_TIMEOUT: value
    //  is the result as ufo_mcp_op_take_result gives it. NULL with err on failure.
    void (*mcp) (void *arg, const char *function, const ufo_value_t *args);
} host_ops_t;

//  What a session needs from the configuration and the task body.
typedef struct {
    const char *session;            //  session id = board name
    const char *task;               //  log task name (single path component)
    const char *log_root;           //  logs root directory
    const char *device;             //  device id (for logs), may be NULL
    const ufo_value_t *requests;    //  list of strings, one per round
    const ufo_value_t *plan;        //  follower mode: list of subtask texts; NULL otherwise
    bool resume;                    //  a re-delivered session (attempt > 1): rounds whose
                                    //  request_<r> is on the board are not run again
    bool interactive;               //  a user can answer questions / confirmations
    bool auto_confirm;              //  --yes
    int64_t max_step;               //  MAX_STEP
    int64_t max_round;              //  MAX_ROUND
    bool eva_round, eva_session, eva_all_screenshots;
    bool visual;                    //  HOST_AGENT.VISUAL_MODE
    bool log_to_markdown;           //  LOG_TO_MARKDOWN
    bool write_report;              //  write report.html at session end
    int json_retry;                 //  JSON_PARSING_RETRY
    const ufo_value_t *launchers;   //  list of allow-listed launcher names (may be NULL)
    const char *mode;               //  the body's "mode": "normal" | "batch_normal" (a plan makes it
                                    //  "follower"); NULL = "normal"; for request.json
    const char *llm_mode;           //  for request.json: the effective live | record | replay
    const char *llm_endpoint;       //  for request.json (user:password@ and the query are dropped)
    ufo_prompts_t *prompts;         //  prompt templates (borrowed)
    const char *const *secrets;     //  NULL-terminated strings to redact from the logs, may be NULL
    const char *save_experience;    //  SAVE_EXPERIENCE: always | ask | auto | always_not (NULL)
    bool rag_experience;            //  RAG_EXPERIENCE
    bool rag_online;                //  RAG_ONLINE_SEARCH
    bool rag_demonstration;         //  RAG_DEMONSTRATION
    //  the confirmation policy for the HostAgent's API tools (host_confirm.h)
    const ufo_value_t *confirm_actions;     //  desktop.confirm_actions (NULL: none)
    const char *confirm_policy;             //  desktop.confirm_policy: ask | yes | no (NULL: ask)
} host_session_config_t;

//  A new session (config and ops borrowed; they must outlive it). Nothing runs yet.
host_session_t *host_session_new (const host_session_config_t *config, const host_ops_t *ops);

//  Destroys a session (one that has not ended just stops; the backend forgets the operation
//  in flight). Safe with NULL.
void host_session_destroy (host_session_t **self_p);

typedef enum {
    HOST_RUN_WAITING = 0,           //  an operation is in flight: call host_session_done
    HOST_RUN_DONE                   //  the session has ended: host_session_result
} host_run_t;

//  Runs the state machine until it starts an operation that has not completed yet, or the
//  session ends. Never waits.
host_run_t host_session_advance (host_session_t *self);

//  Whether an operation is in flight that has not completed.
bool host_session_waiting (const host_session_t *self);

//  Completes the operation in flight with reply (its contents are taken; *reply is zeroed).
//  May be called from inside the ops function that started it. Does not advance the
//  machine: call host_session_advance next (not from inside an ops function).
void host_session_done (host_session_t *self, host_reply_t *reply);

//  The result body of the protocol once the session ended (caller owns; NULL before):
//  {"status", "rounds", "steps", "error", "cost", "evaluation", "logdir"}. A session that
//  cannot even open its logs ends in "ERROR" with the reason.
ufo_value_t *host_session_result (host_session_t *self);

#endif
