/*  ufo_mcp_spec.h - MCP server definitions as the configuration holds them (MCP_SERVERS, the
    "mcp_servers" type): checked here, in the configuration layer, so that ufo_config can
    check them without using the MCP layer (ufo_mcp.h, ufo_mcp_hub.h) that runs them. */
#ifndef UFO_MCP_SPEC_H_INCLUDED
#define UFO_MCP_SPEC_H_INCLUDED

#include "ufo_error.h"
#include "ufo_value.h"

//  Most servers one agent of one application gets.
#define UFO_MCP_MAX_SERVERS 32

//  Checks a server definition: {"name", "type": "stdio", "command", "args": [..], "env":
//  {..}, "cwd"} or {"name", "type": "http", "url", "headers": {..}}. The name is
//  [A-Za-z0-9_-]{1,48}. Returns 0, or -1 with err naming the field (prefixed with where).
int ufo_mcp_spec_check (const ufo_value_t *spec, const char *where, ufo_error_t *err);

//  Checks an MCP_SERVERS value (the configuration's "mcp_servers" type). Returns 0, or -1
//  with err naming the path (keypath[...]) and what is wrong.
int ufo_mcp_servers_check (const ufo_value_t *value, const char *keypath, ufo_error_t *err);

#endif
