/*  app_history.h - the AppAgent's step history as the prompt shows it: one compact line per
    step of the subtask (action, control, arguments, outcome, status) instead of the
    trajectory items' JSON, so that the prompt grows by a line per step. */
#ifndef APP_HISTORY_H_INCLUDED
#define APP_HISTORY_H_INCLUDED

#include <stddef.h>
#include "ufo_value.h"

#define APP_HISTORY_DETAILED 5      //  latest steps shown with arguments and results

//  The step history of memory (the subtask's items, oldest first: maps with "Step",
//  "Action" {function, args, control_label, control_text, control_type}, "Status",
//  "UserConfirm", and,
//  for steps this agent ran, "Outcome" {success, text, error}) as a new list of strings,
//  oldest first. At most max_steps lines: when there are more steps, the first line says
//  how many earlier ones are left out. The last `detailed` steps show the arguments and
//  the action's result or error; older ones the action, the control and whether it
//  worked. Texts are cut (UTF-8 safe) so a line stays short; an error is kept longer than
//  a result. Items that are not maps are skipped. Caller owns the list (never NULL).
ufo_value_t *app_history_lines (const ufo_value_t *memory, size_t max_steps, size_t detailed);

#endif
