/*  eval_worker.h - the ufo-eval process's bus side: a worker of service "eval" that turns
    evaluation tasks into ufo_eval runs, stores verdicts on the session boards and completes
    the tasks. Private to eval_agent/. */
#ifndef EVAL_WORKER_H_INCLUDED
#define EVAL_WORKER_H_INCLUDED

#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_eval.h"
#include "ufo_value.h"

typedef struct _eval_worker_t eval_worker_t;

typedef struct {
    const char *endpoint;       //  broker command endpoint ("" = the default ipc endpoint)
    const char *device;         //  NULL: any device
    const char *name;           //  NULL: "eval@<host>:<pid>"
    int capacity;               //  evaluations at once
    const char *llm_mode;       //  NULL: llm.mode
    const char *llm_cassette;   //  NULL: llm.cassette
    const char *prompts_dir;    //  NULL: the usual search
} eval_worker_options_t;

//  Sets up the LLM client (EVALUATION_AGENT), prompts, evaluator, blackboard client and the
//  worker registration (asynchronous). config is borrowed and must outlive the worker.
//  Returns NULL with err on a configuration error.
eval_worker_t *eval_worker_new (const ufo_config_t *config, const eval_worker_options_t *options,
                                ufo_error_t *err);

//  Serves until *stop becomes non-zero (a signal handler sets it).
void eval_worker_serve (eval_worker_t *self, volatile sig_atomic_t *stop);

//  Cancels evaluations in flight; the worker leaves the broker (unfinished tasks are
//  requeued there); frees; sets *self_p to NULL. Safe with NULL.
void eval_worker_destroy (eval_worker_t **self_p);

//  Parses an evaluation task body (docs/PROTOCOL.md section 4) into req, whose strings
//  point into body. default_root is used when log_root is absent. Returns 0, or -1 with
//  err naming the field.
int eval_worker_parse_body (const ufo_value_t *body, const char *default_root,
                            ufo_eval_request_t *req, ufo_error_t *err);

#endif
