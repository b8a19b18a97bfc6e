/*  host_confirm.h - the confirmation policy for the HostAgent's API tools (MCP_SERVERS
    "HOST_AGENT"): the same desktop.confirm_actions / desktop.confirm_policy rules as the
    AppAgent's actions and tools (docs/APP_AGENT.md), asked through the session's client.

    Step-driven like the rest of the machine (host_session.h): a confirmation the user must
    answer is an ask_user operation; the phase that takes its reply calls host_confirm_answer. */
#ifndef HOST_CONFIRM_H_INCLUDED
#define HOST_CONFIRM_H_INCLUDED

#include "ufo_value.h"
#include "host_int.h"

//  Decides whether the HostAgent may call the API tool `tool` (args: its arguments, may be
//  NULL) in this step. Returns "" when the policy does not cover it (it runs), "yes" when
//  confirmed, "no" when refused, all without an operation: without a user (cfg->interactive
//  false) or with desktop.confirm_policy "yes" / "no" nobody is asked, and the decision is
//  sent to the client as a "confirm" progress event with "answered" and "by" (without a
//  user); a cancelled session refuses. Otherwise returns NULL after starting an ask_user
//  operation with a "confirm" event whose answer ({"qid", "confirm": bool}) phase `then`
//  takes with host_confirm_answer. The result is the record's UserConfirm.
const char *host_confirm_start (host_t *self, const char *tool, const ufo_value_t *args, host_phase_t then);

//  The user's answer to the confirmation host_confirm_start asked (the reply of the
//  operation that led to the current phase): "yes", or "no" (refused, or no answer came:
//  cancelled, no user).
const char *host_confirm_answer (host_t *self, const char *tool);

//  The tool result of a refused call (as ufo_mcp_op_take_result shapes it; caller owns).
ufo_value_t *host_confirm_refused (const char *tool);

#endif
