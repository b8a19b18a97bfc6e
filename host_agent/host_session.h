/*  host_session.h - one session of the HostAgent: rounds, the HostAgent state machine, the
    subtasks handed to AppAgents, evaluations, and the session's logs.

    The state machine does not know about the bus: everything that leaves the process
    (desktop, LLM, blackboard, subtasks, the user) goes through host_ops_t. ufo-host fills
    it with the real thing (host_bus.c); unit tests drive the machine with fakes.

    Each ops call may take time (an LLM call, a subtask); the real implementation keeps
    serving its bus connections, the LLM client and the desktop while it waits. */
#ifndef HOST_SESSION_H_INCLUDED
#define HOST_SESSION_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_prompt.h"
#include "ufo_value.h"

//  Called for each progress event of a running task (run_task) that the session itself
//  handles ("cost"); the event is borrowed.
typedef void (host_progress_fn) (const ufo_value_t *event, void *arg);

typedef struct {
    void *arg;
    //  The application windows: a list of maps {"label", "name", "pid", "xid", "title"}.
    //  When shot_path is not NULL the desktop screenshot is saved there, and when url_p is
    //  not NULL it receives the screenshot as a data URL (caller frees; NULL if none).
    //  Returns NULL with err.
    ufo_value_t *(*windows) (void *arg, const char *shot_path, char **url_p, ufo_error_t *err);
    //  Launches an allow-listed launcher. Returns the pid or -1 with err.
    int (*launch) (void *arg, const char *name, ufo_error_t *err);
    //  Saves a screenshot of window xid (0: the screen) to path. Returns 0 or -1 with err.
    int (*snapshot) (void *arg, int64_t xid, const char *path, ufo_error_t *err);
    //  Asks the LLM; returns the response (caller owns), never NULL unless messages are bad.
    ufo_llm_response_t *(*ask) (void *arg, const ufo_value_t *messages, const ufo_llm_opts_t *opts,
                                ufo_error_t *err);
    //  The session's blackboard as a map {"questions": [...], ...} with screenshot data URLs
    //  filled in (caller owns), or NULL with err.
    ufo_value_t *(*board_get) (void *arg, ufo_error_t *err);
    //  Optional: the blackboard's prompt content parts (caller owns); NULL with err clear
    //  when the blackboard is empty, NULL with err set on failure. When
    //  set, the step prompt uses it instead of rebuilding a board from board_get, so a
    //  backend that keeps its board in step pays only for what changed.
    ufo_value_t *(*board_prompt) (void *arg, ufo_error_t *err);
    //  Adds one item to a memory of the session's blackboard (ownership taken).
    int (*board_add) (void *arg, const char *memory, ufo_value_t **item_p, ufo_error_t *err);
    //  Runs a task on service (e.g. "app:mousepad", "eval") with body (ownership taken) and
    //  waits for its result body (caller owns). Questions and confirmations from the task
    //  are relayed to the user; other progress goes to on_progress. NULL with err when the
    //  task failed (err says why) or the session was cancelled.
    ufo_value_t *(*run_task) (void *arg, const char *service, ufo_value_t **body_p,
                              host_progress_fn *on_progress, void *progress_arg, ufo_error_t *err);
    //  Asks the user (event {"kind": "question", ...}, ownership taken) and waits for the
    //  answer body ({"qid", "answers"}). NULL when no answer can come (cancelled, no user).
    ufo_value_t *(*ask_user) (void *arg, ufo_value_t **event_p);
    //  Sends a progress event to the session's submitter (ownership taken).
    void (*progress) (void *arg, ufo_value_t **event_p);
    //  True once the session must stop (cancelled, process stopping).
    bool (*cancelled) (void *arg);
    //  Optional (NULL: assume yes): whether a worker of service serves this device now, so
    //  that a subtask is not queued for an application nobody serves. Returns 1 yes, 0 no
    //  (err says why), -1 when it cannot be told (the subtask is submitted anyway).
    int (*has_worker) (void *arg, const char *service, ufo_error_t *err);
    //  Optional (NULL: no experience): the experience records most like request (a new list,
    //  docs/KNOWLEDGE.md), or NULL with err; and saving a record (ownership taken; id_out
    //  gets its id, 64 bytes), 0 or -1 with err.
    ufo_value_t *(*experience_find) (void *arg, const char *request, ufo_error_t *err);
    int (*experience_save) (void *arg, ufo_value_t **record_p, char *id_out, ufo_error_t *err);
    //  Optional (NULL: no web search): the top web results for query (a new list of
    //  {"title", "url", "snippet"}), bounded by the search timeout; NULL with err on failure.
    ufo_value_t *(*online_search) (void *arg, const char *query, ufo_error_t *err);
    //  Optional (NULL: none): the demonstrations most like a subtask (a new list), or NULL with err.
    ufo_value_t *(*demonstration_find) (void *arg, const char *subtask, ufo_error_t *err);
    //  Optional (NULL: no API tools): the MCP servers configured for the HostAgent
    //  (MCP_SERVERS "HOST_AGENT", docs/APP_AGENT.md). With function NULL: the tools for the
    //  prompt (a new list as ufo_mcp_hub_prompt_tools gives; waits, bounded, for the servers to
    //  start). Otherwise calls the tool function ("server.tool") with args (a map or NULL;
    //  checked against its schema) and waits for it, serving the bus, bounded by
    //  MCP_TOOL_TIMEOUT: the result as ufo_mcp_op_take_result gives it. NULL with err on
    //  failure.
    ufo_value_t *(*mcp) (void *arg, const char *function, const ufo_value_t *args, ufo_error_t *err);
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

//  Runs a whole session. Returns the result body of the protocol (caller owns):
//  {"status", "rounds", "steps", "error", "cost", "evaluation", "logdir"}. Never NULL: a
//  session that cannot even open its logs ends in "ERROR" with the reason.
ufo_value_t *host_session_run (const host_session_config_t *config, const host_ops_t *ops);

#endif
