/*  ufo_cmd_mcp.c - `ufo mcp tools [--server NAME] [--app APP] [--agent APP_AGENT|HOST_AGENT]
    [--config FILE] [--json]`: starts the MCP servers of the configuration (MCP_SERVERS), waits
    until each is ready or given up, and lists every server with its state and its tools as the
    agents would show them to the model (name, description, compact arguments; a broken input
    schema is named). Without --app, every application's servers are listed, grouped.
    Exit status: 0 when every listed server is ready, 1 when one failed, 2 bad usage or no
    such server. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_mcp_hub.h"
#include "ufo_value.h"
#include "ufo_cli.h"

static void
s_print_group (const char *agent, const char *group, const ufo_value_t *report)
{
    printf ("%s / %s\n", agent, group);
    for (size_t i = 0; i < ufo_value_size (report); i++) {
        const ufo_value_t *s = ufo_value_list_at (report, i);
        const ufo_value_t *tools = ufo_value_map_get (s, "tools");
        printf ("  %s: %s", ufo_value_map_str (s, "name", ""), ufo_value_map_str (s, "state", ""));
        if (!strcmp (ufo_value_map_str (s, "state", ""), "ready"))
            printf (", protocol %s, %zu tool%s in %" PRId64 " page%s", ufo_value_map_str (s, "protocol", ""),
                    ufo_value_size (tools), ufo_value_size (tools) == 1 ? "" : "s",
                    ufo_value_map_int (s, "pages", 0), ufo_value_map_int (s, "pages", 0) == 1 ? "" : "s");
        if (*ufo_value_map_str (s, "error", ""))
            printf ("\n    %s", ufo_value_map_str (s, "error", ""));
        printf ("\n");
        for (size_t k = 0; k < ufo_value_size (tools); k++) {
            const ufo_value_t *t = ufo_value_list_at (tools, k);
            printf ("    %s\n      %s\n", ufo_value_map_str (t, "function", ""),
                    ufo_value_map_str (t, "description", ""));
            if (ufo_value_map_has (t, "schema_error"))
                printf ("      BROKEN SCHEMA: %s (not offered to the model)\n",
                        ufo_value_map_str (t, "schema_error", ""));
            else
                printf ("      args: %s\n", ufo_value_map_str (t, "args", ""));
        }
    }
}

static int
s_tools (int argc, char **argv)
{
    const char *server = NULL, *app = NULL, *agent = "APP_AGENT", *config_path = NULL;
    bool json = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv [i];
        const char **slot = !strcmp (a, "--server") ? &server : !strcmp (a, "--app") ? &app
                          : !strcmp (a, "--agent") ? &agent : !strcmp (a, "--config") ? &config_path : NULL;
        if (slot && i + 1 < argc)
            *slot = argv [++i];
        else
        if (!strcmp (a, "--json"))
            json = true;
        else {
            ufo_cli_usage (stderr, "mcp");
            return UFO_CLI_USAGE;
        }
    }
    if (strcmp (agent, "APP_AGENT") && strcmp (agent, "HOST_AGENT")) {
        fprintf (stderr, "ufo mcp: --agent is APP_AGENT or HOST_AGENT\n");
        return UFO_CLI_USAGE;
    }
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo mcp: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_log_set_level (UFO_LOG_ERROR);      //  the servers' stderr lines only clutter the list
    double timeout = ufo_config_float (config, "MCP_TOOL_TIMEOUT", 30.0);
    const ufo_value_t *groups = ufo_value_map_get (ufo_config_get (config, "MCP_SERVERS"), agent);
    ufo_value_t *out = ufo_value_new_map ();
    bool failed = false;
    size_t listed = 0;
    for (size_t g = 0; g < ufo_value_size (groups); g++) {
        const char *group = ufo_value_map_key_at (groups, g);
        if (app && strcmp (group, "*") && strcasecmp (group, app))
            continue;
        ufo_value_t *list = ufo_value_new_list ();
        const ufo_value_t *specs = ufo_value_map_value_at (groups, g);
        for (size_t k = 0; k < ufo_value_size (specs); k++)
            if (!server || !strcmp (ufo_value_map_str (ufo_value_list_at (specs, k), "name", ""), server))
                ufo_value_list_push (list, &(ufo_value_t *) { ufo_value_dup (ufo_value_list_at (specs, k)) });
        if (ufo_value_size (list) == 0) {
            ufo_value_destroy (&list);
            continue;
        }
        ufo_mcp_hub_t *hub = ufo_mcp_hub_new_servers (config, list, strcmp (group, "*") ? group : NULL);
        ufo_value_destroy (&list);
        ufo_mcp_hub_run (hub, NULL, NULL, (int) (2 * timeout * 1000) + 2000);
        ufo_value_t *report = ufo_mcp_hub_report (hub);
        for (size_t i = 0; i < ufo_value_size (report); i++)
            failed |= strcmp (ufo_value_map_str (ufo_value_list_at (report, i), "state", ""), "ready") != 0;
        listed += ufo_value_size (report);
        if (!json)
            s_print_group (agent, group, report);
        ufo_value_map_set (out, group, &report);
        ufo_mcp_hub_destroy (&hub);
    }
    if (json) {
        char *text = ufo_json_dump (out, UFO_JSON_PY, NULL);
        printf ("%s\n", text);
        free (text);
    }
    ufo_value_destroy (&out);
    ufo_config_destroy (&config);
    if (listed == 0) {
        fprintf (stderr, "ufo mcp: no MCP server%s%s configured for %s%s%s\n", server ? " named " : "",
                 server ? server : "", agent, app ? " / " : "", app ? app : "");
        return server ? UFO_CLI_USAGE : UFO_CLI_OK;
    }
    return failed ? UFO_CLI_FAIL : UFO_CLI_OK;
}

int
ufo_cmd_mcp (int argc, char **argv)
{
    if (argc < 2 || strcmp (argv [1], "tools")) {
        ufo_cli_usage (argc >= 2 && !strcmp (argv [1], "--help") ? stdout : stderr, "mcp");
        return argc >= 2 && !strcmp (argv [1], "--help") ? UFO_CLI_OK : UFO_CLI_USAGE;
    }
    return s_tools (argc, argv);
}
