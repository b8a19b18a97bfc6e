/*  app_body.h - the subtask body of docs/PROTOCOL.md 4.2, checked field by field. Pure: no
    desktop, no files; every value comes from outside (the HostAgent, a file) and is
    validated here before anything uses it. */
#ifndef APP_BODY_H_INCLUDED
#define APP_BODY_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"

//  The fields, borrowed from the body map (valid while it lives). Absent optional strings
//  are "", absent lists and window NULL.
typedef struct {
    const char *session, *task, *log_root, *subtask, *request, *application;
    int64_t round, subtask_index;           //  0..1000000
    int64_t step_base, round_step_base;     //  0..1000000000 (round_step_base: step_base)
    int64_t max_steps;                      //  0..1000000 (default 50)
    bool interactive, auto_confirm;
    const ufo_value_t *tips, *previous_subtasks;    //  lists or NULL
    const ufo_value_t *window;              //  map or NULL
} app_body_t;

//  Checks body and fills out. Required: session (non-empty), task (one path component),
//  subtask. Returns 0, or -1 with err naming the field and the rule.
int app_body_parse (const ufo_value_t *body, app_body_t *out, ufo_error_t *err);

#endif
