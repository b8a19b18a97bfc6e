/*  test_app_mcp.c - the AppAgent (ufo-app) with API tools of a real MCP server
    (@modelcontextprotocol/server-filesystem, rooted in the test's folder) beside the GUI
    actions on real mousepad: a step writes a file through MCP, later GUI steps open it in
    mousepad's Open File dialog, and the file and the window agree. A second case: a bad
    call (schema) and a refused call make the model fall back to the GUI. The scripted model
    takes the tool's name and the controls' labels from the prompt. */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_report.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

//  A configuration with the filesystem server rooted in root, for mousepad only.
static const char *
s_config (const char *root)
{
    char extra [2400];
    snprintf (extra, sizeof extra,
              "\"SLEEP_TIME\": 0.5, \"MCP_TOOL_TIMEOUT\": 20, \"MCP_PREFERRED_APPS\": [\"mousepad\"],"
              " \"MCP_SERVERS\": {\"APP_AGENT\": {\"mousepad\": [{\"name\": \"files\", \"command\": "
              "\"%s/mcp-server-filesystem\", \"args\": [\"%s\"]},"
              //  a server that dies at start beside it: restarted once, left out, the session goes on
              " {\"name\": \"broken\", \"command\": \"node\", \"args\": [\"%s/tests/mcp/scripted_server.js\", \"exit\"]}]}}",
              getenv ("UFO_MCP_BIN"), root, getenv ("UFO_SOURCE_DIR"));
    return afx_config (extra);
}

//  The xid of a window whose title contains text, waiting up to 20 s; 0 if none.
static int64_t
s_window (const char *text)
{
    int64_t end = ufo_time_mono_ms () + 20000;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
        int64_t xid = 0;
        for (size_t i = 0; i < ufo_value_size (wins) && !xid; i++)
            if (strstr (ufo_value_map_str (ufo_value_list_at (wins, i), "title", ""), text))
                xid = ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0);
        ufo_value_destroy (&wins);
        if (xid)
            return xid;
        ufo_desktop_iterate (afx_.desk, 100);
    }
    return 0;
}

UFO_TEST (test_write_then_open)
{
    char root [600], note [700];
    snprintf (root, sizeof root, "%s/files", afx_.broker.dir);
    mkdir (root, 0755);
    snprintf (note, sizeof note, "%s/note.txt", root);
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("mcp_write_open.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = s_config (root);

    //  subtask 1, on mousepad's window: the note through the API, then Ctrl+O
    char subtask [1000];
    snprintf (subtask, sizeof subtask, "Save the note as %s through the file API, then show the Open File dialog", note);
    const char *file = afx_subtask ("s-mcp", subtask, xid, "", "");
    ufo_value_t *lines = NULL;
    int rc = afx_run_subtask (config, file, RUN_MS, &lines);
    CHECK_INT (rc, 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 2);
    ufo_value_destroy (&lines);
    char *written = afx_read (note);
    CHECK_STR (written ? written : "", "Hello through MCP");
    free (written);

    //  the API step like any other: response.log, board trajectory
    ufo_value_t *resp = afx_log ("s-mcp", "response.log");
    REQUIRE (ufo_value_size (resp) == 2);
    const ufo_value_t *r0 = ufo_value_list_at (resp, 0);
    CHECK_STR (ufo_value_map_str (r0, "Function", ""), "files.write_file");
    CHECK_STR (ufo_value_map_str (r0, "ActionType", ""), "MCP");
    const ufo_value_t *ok = ufo_value_list_at (ufo_value_map_get (r0, "ActionSuccess"), 0);
    CHECK (ufo_value_map_bool (ok, "success", false));
    CHECK_CONTAINS (ufo_value_map_str (ok, "result", ""), "Successfully wrote to");
    CHECK_CONTAINS (ufo_value_map_str (r0, "Results", ""), "Successfully wrote to");
    ufo_value_destroy (&resp);
    ufo_value_t *board = afx_board ("s-mcp");
    char *bj = ufo_json_dump (board, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (bj, "files.write_file");
    free (bj);
    ufo_value_destroy (&board);
    //  and in the session report
    char logdir [700];
    snprintf (logdir, sizeof logdir, "%s/logs/s-mcp", afx_.broker.dir);
    ufo_error_t err;
    char *html = ufo_report_render (logdir, NULL, NULL, NULL, NULL, &err);
    CHECK_CONTAINS (html ? html : err.message, "files.write_file");
    CHECK_CONTAINS (html ? html : "", "Successfully wrote to");
    free (html);
    //  the prompt showed the tool with its compact schema, and the preference
    char reqlog [700];
    char *req = afx_read (afx_log_path ("s-mcp", "request.log", reqlog, sizeof reqlog));
    CHECK_CONTAINS (req ? req : "", "- \\\"files.write_file\\\": ");
    CHECK_CONTAINS (req ? req : "", "content: string (required)");
    CHECK_CONTAINS (req ? req : "", "Prefer these API tools to the GUI controls");
    CHECK (req && !strstr (req, "broken."));       //  the dead server's tools are not offered
    free (req);

    //  subtask 2, on the Open File dialog (as the HostAgent would pick it): GUI steps
    int64_t dialog = s_window ("Open File");
    REQUIRE (dialog);
    snprintf (subtask, sizeof subtask, "Open the file %s in this dialog", note);
    file = afx_subtask ("s-mcp-open", subtask, dialog, "", "");
    rc = afx_run_subtask (config, file, RUN_MS, &lines);
    CHECK_INT (rc, 0);
    result = afx_result (lines);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    ufo_value_destroy (&lines);
    //  the window shows the file: its title and its text
    CHECK (s_window ("note.txt - Mousepad") == xid);
    char *text = afx_text (xid);
    CHECK_STR (text ? text : "", "Hello through MCP");
    free (text);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_fallback_to_gui)
{
    char root [600];
    snprintf (root, sizeof root, "%s/files2", afx_.broker.dir);
    mkdir (root, 0755);
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("mcp_fallback.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = s_config (root);
    const char *file = afx_subtask ("s-mcp-fb", "Write a note", xid, "", "");
    ufo_value_t *lines = NULL;
    int rc = afx_run_subtask (config, file, RUN_MS, &lines);
    CHECK_INT (rc, 0);
    const ufo_value_t *result = afx_result (lines);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    ufo_value_destroy (&lines);
    ufo_value_t *resp = afx_log ("s-mcp-fb", "response.log");
    REQUIRE (ufo_value_size (resp) == 3);
    //  1: refused before the call (schema); 2: refused by the server (outside its root)
    const ufo_value_t *s1 = ufo_value_list_at (ufo_value_map_get (ufo_value_list_at (resp, 0), "ActionSuccess"), 0);
    CHECK (!ufo_value_map_bool (s1, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (s1, "error", ""), "needs the argument \"content\"");
    const ufo_value_t *s2 = ufo_value_list_at (ufo_value_map_get (ufo_value_list_at (resp, 1), "ActionSuccess"), 0);
    CHECK (!ufo_value_map_bool (s2, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (s2, "error", ""), "the tool files.write_file reported an error");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 2), "Function", ""), "set_edit_text");
    ufo_value_destroy (&resp);
    CHECK (access ("/etc/ufo-not-allowed.txt", F_OK) != 0);
    char *text = afx_text (xid);
    CHECK_STR (text ? text : "", "typed after the API failed");
    free (text);
    afx_mousepad_kill (pid, xid);
}

int
main (void)
{
    if (!getenv ("UFO_MCP_BIN")) {
        fprintf (stderr, "UFO_MCP_BIN is not set (the mcp_npm_ci fixture sets it)\n");
        return 1;
    }
    if (afx_setup ("app_mcp") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_write_then_open);
    AFX_RUN (test_fallback_to_gui);
    afx_teardown ();
    return UFO_TEST_END ();
}
