/*  app_ctx.h - what one ufo-app process shares between the subtasks it runs: the
    configuration, the desktop, the LLM client, the prompt templates and the blackboard
    access, plus the settings read once from the configuration.

    A plain struct (private to the ufo-app process): app_main.c fills it with
    app_ctx_open and frees it with app_ctx_close; the agent modules borrow it. */
#ifndef APP_CTX_H_INCLUDED
#define APP_CTX_H_INCLUDED

#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_llm.h"
#include "ufo_llm_override.h"
#include "ufo_loop.h"
#include "ufo_mcp_hub.h"
#include "ufo_prompt.h"
#include "ufo_rag.h"
#include "ufo_value.h"
#include "app_board.h"
#include "ufo_conn.h"

typedef struct _ufo_loop_t ufo_loop_t;

typedef struct {
    ufo_loop_t *loop;               //  owned: the process's one loop (LLM, MCP, desktop, worker)
    ufo_config_t *config;           //  owned
    ufo_desktop_t *desktop;         //  owned
    int x_reader;                   //  loop id of the reader of the desktop's X connection
    ufo_llm_t *llm;                 //  owned
    ufo_llm_engines_t *engines;     //  owned: the engines of sessions' model overrides (bounded)
    ufo_prompts_t *prompts;         //  owned
    ufo_conn_t *conn;               //  owned: the one broker connection (NULL: local board)
    ufo_conn_fn *on_conn_event;     //  where its events go (app_worker.c), NULL: logged
    void *on_conn_arg;
    app_board_t *board;             //  owned: broker (over conn) or in-process board
    ufo_rag_t *rag;                 //  owned: knowledge retrieval (RAG_* keys, docs/KNOWLEDGE.md)
    ufo_mcp_hub_t *mcp;             //  owned: MCP servers of the current application (app_ctx_mcp)
    char *mcp_app;                  //  the application mcp was started for
    char api_key [512];             //  APP_AGENT key, registered as a secret in every log
    char model [192];               //  "provider/model" of APP_AGENT, for request.log
    char endpoint [1024];           //  the broker's command endpoint ("" with a local board)
    const char *app;                //  --app NAME ("*": any application)
    const char *device;             //  --device ID
    //  settings (configuration keys of the original, read once)
    bool visual;                    //  APP_AGENT.VISUAL_MODE
    int json_retry;                 //  JSON_PARSING_RETRY
    bool safe_guard;                //  SAFE_GUARD
    bool ask_question;              //  ASK_QUESTION
    const char *qa_pair_file;       //  QA_PAIR_FILE when USE_CUSTOMIZATION, else NULL
    bool include_last_screenshot;   //  INCLUDE_LAST_SCREENSHOT
    bool concat_screenshot;         //  CONCAT_SCREENSHOT
    bool save_ui_tree;              //  SAVE_UI_TREE
    bool save_full_screen;          //  SAVE_FULL_SCREEN
    bool screenshot_to_memory;      //  SCREENSHOT_TO_MEMORY
    double sleep_time;              //  SLEEP_TIME (seconds after an action)
    int png_level;                  //  desktop.png_compression
    char confirm_policy [8];        //  desktop.confirm_policy: ask | yes | no
    const ufo_value_t *confirm_controls;    //  desktop.confirm_controls (borrowed from config)
    const ufo_value_t *confirm_actions;     //  desktop.confirm_actions
    const ufo_value_t *history_keys;        //  HISTORY_KEYS
    const ufo_value_t *control_list;        //  CONTROL_LIST
    int memory_steps;               //  steps of this subtask shown as memory (20)
    bool action_sequence;           //  ACTION_SEQUENCE: the model may answer an ActionList
} app_ctx_t;

//  Options of the process that shape the context.
typedef struct {
    const char *config_path;        //  --config (NULL: the usual search)
    const char *broker;             //  --broker (NULL: broker.cmd_endpoint; "" : local board)
    const char *llm_mode;           //  --llm-mode
    const char *llm_cassette;       //  --llm-cassette
    const char *app;                //  --app
    const char *device;             //  --device
    bool local_board;               //  no broker: an in-process board
    bool worker;                    //  the connection is a worker of app:<app> on device
    bool desktop_service;           //  --desktop-service: only the configuration, the desktop,
                                    //  CURVE and the endpoint (no model, prompts, knowledge,
                                    //  board or connection: app_desktop_svc opens its own)
} app_ctx_options_t;

//  Loads the configuration and opens the desktop, the LLM client, the prompts, the broker
//  connection (a worker of app:<app> with options->worker; its events go to
//  ctx->on_conn_event, set by the caller) and the board; with options->desktop_service
//  only the configuration, the desktop, CURVE and ctx->endpoint. Returns 0, or -1 with err
//  (everything opened so far is closed again).
int app_ctx_open (app_ctx_t *ctx, const app_ctx_options_t *options, ufo_error_t *err);

//  Closes everything app_ctx_open opened. Safe twice.
void app_ctx_close (app_ctx_t *ctx);

//  True when the confirmation policy requires asking before `function` acts on a control
//  named control_name (the name read from the desktop, not the model's ControlText).
//  Writes the rule that matched into why[size].
bool app_ctx_policy_requires (const app_ctx_t *ctx, const char *function,
                              const char *control_name, char *why, size_t size);

//  The MCP servers (API tools) for application: started on first use, kept while the
//  subtasks are for the same application, replaced when another one comes (a worker of
//  --app '*'). Never NULL (a hub without servers when none are configured).
ufo_mcp_hub_t *app_ctx_mcp (app_ctx_t *ctx, const char *application);

//  One turn of the process's loop (ctx->loop: the LLM client, the MCP servers, the desktop's
//  descriptor, the worker link when there is one) plus extra_fd (-1: none), sleeping at most
//  timeout_ms (-1: until the loop's nearest timer); completion callbacks and worker events
//  run here. Then pumps the desktop.
void app_ctx_wait (app_ctx_t *ctx, int extra_fd, int timeout_ms);

#endif
