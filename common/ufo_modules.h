/*  ufo_modules.h - the higher-level modules of libufo, one line each.
    Kept apart from ufo.h so that modules can be added without touching the core list. */
#ifndef UFO_MODULES_H_INCLUDED
#define UFO_MODULES_H_INCLUDED

//  model: blackboard data model
#include "ufo_item.h"
#include "ufo_memory.h"
#include "ufo_board.h"

//  proto: message envelope, configuration
#include "ufo_msg.h"
#include "ufo_config.h"
#include "ufo_mcp_spec.h"

//  bus: blackboard broker protocol (the broker's log and blob store: blackboard_broker/)
#include "ufo_hash.h"
#include "ufo_bb_proto.h"
#include "ufo_bb_client.h"
#include "ufo_bb_mirror.h"

//  dispatch: tasks to service workers (issue 4)
#include "ufo_task_proto.h"
#include "ufo_worker.h"
#include "ufo_tasks.h"

//  security: CURVE certificates with roles, ZAP
#include "ufo_cert.h"

//  llm: HTTP client, LLM client, response parsing, cost, cassettes, templates, prompts
#include "ufo_http.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_llm_override.h"
#include "ufo_cost.h"
#include "ufo_cassette.h"
#include "ufo_template.h"
#include "ufo_prompt.h"

//  desktop: AT-SPI / X11 windows, controls, screenshots, actions
#include "ufo_desktop.h"

//  report: the session report
#include "ufo_report.h"
#include "ufo_outcome.h"

//  eval: the EvaluationAgent
#include "ufo_eval.h"

//  knowledge: the knowledge index, help documents, offline help (issue 23)
#include "ufo_kb.h"
#include "ufo_helpdoc.h"
#include "ufo_knowledge.h"
#include "ufo_rag.h"
#include "ufo_experience.h"
#include "ufo_websearch.h"
#include "ufo_xrecord.h"
#include "ufo_embed.h"
//  mcp: clients of MCP servers, and the tool set of an agent
#include "ufo_mcp.h"
#include "ufo_mcp_hub.h"

//  agents: common options and start-up of ufo-host, ufo-app, ufo-eval
#include "ufo_agent_opts.h"

#endif
