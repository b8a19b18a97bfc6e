/*  host_confirm.h - the confirmation policy for the HostAgent's API tools (MCP_SERVERS
    "HOST_AGENT"): the same desktop.confirm_actions / desktop.confirm_policy rules as the
    AppAgent's actions and tools (docs/APP_AGENT.md), asked through the session's client. */
#ifndef HOST_CONFIRM_H_INCLUDED
#define HOST_CONFIRM_H_INCLUDED

#include "ufo_value.h"
#include "host_int.h"

//  Decides whether the HostAgent may call the API tool `tool` (args: its arguments, may be
//  NULL) in this step. Returns "" when the policy does not cover it (it runs), "yes" when
//  confirmed, "no" when refused. Without a user (cfg->interactive false) or with
//  desktop.confirm_policy "yes" / "no" nobody is asked: the decision is sent to the client as
//  a "confirm" progress event with "answered" and "by"; otherwise a "confirm" event waits for
//  the user's answer ({"qid", "confirm": bool}; none: refused). The record's UserConfirm.
const char *host_confirm_tool (host_t *self, const char *tool, const ufo_value_t *args);

//  The tool result of a refused call (as ufo_mcp_op_take_result shapes it; caller owns).
ufo_value_t *host_confirm_refused (const char *tool);

#endif
