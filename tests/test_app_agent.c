/*  test_app_agent.c - ufo-app (the AppAgent) end to end, through `ufo-app --subtask`:
    real mousepad on a private virtual desktop, the scripted LLM server
    (tests/data/app_agent/NAME.json), a real ufo-broker holding the session board. The test
    reads the application's text back through AT-SPI on its own. */
#include "app_fixture.h"

#define RUN_MS 180000

static const char *const s_record_fields [] = {
    "Observation", "Thought", "ControlLabel", "ControlText", "Function", "Args", "Status", "Plan",
    "Comment", "SaveScreenshot", "Questions", "Step", "RoundStep", "AgentStep", "Round", "Subtask",
    "SubtaskIndex", "FunctionCall", "Action", "ActionSuccess", "ActionType", "Request", "Agent",
    "AgentName", "Application", "Cost", "Tokens", "Results", "error", "time_cost", "ControlLog",
    "UserConfirm", "Answers", "ScreenshotPath", "AnnotatedScreenshotPath",
    "SelectedControlScreenshotPath", "Timestamp"
};

static bool
s_exists (const char *task, const char *name)
{
    char path [600];
    afx_log_path (task, name, path, sizeof path);
    return access (path, F_OK) == 0;
}

static ufo_value_t *
s_log (const char *task, const char *name)
{
    char path [600];
    return afx_lines (afx_log_path (task, name, path, sizeof path));
}

//  Runs ufo-app --subtask on file with the config, against the broker. Returns exit status.
static int
s_run (const char *config, const char *file, ufo_value_t **lines_p)
{
    const char *args [] = { "--subtask", file, "--config", config, "--broker", afx_.broker.cmd, NULL };
    return afx_run_app (args, RUN_MS, lines_p);
}

UFO_TEST (test_type_text)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("type_text.json") == 0);
    const char *config = afx_config ("\"CONCAT_SCREENSHOT\": true, \"SAVE_UI_TREE\": true");
    const char *file = afx_subtask ("s-type", "Type 'Hello from ufo-app' into the document", xid, "", "");
    ufo_value_t *lines = NULL;
    int rc = s_run (config, file, &lines);
    CHECK_INT (rc, 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)),
               "Hello from ufo-app");
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "The note is written.");
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (result, "cost"), "prompt_tokens", 0), 3300);
    CHECK_STR (ufo_value_map_str (result, "final_screenshot", ""),
               "action_round_0_sub_round_0_final.png");
    CHECK_INT (afx_count (lines, "step"), 3);
    CHECK_INT (afx_count (lines, "cost"), 3);
    //  the text, read by the test itself
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello from ufo-app");
    free (text);
    //  response.log: one line per step with every field
    ufo_value_t *resp = s_log ("s-type", "response.log");
    CHECK_INT (ufo_value_size (resp), 3);
    for (size_t i = 0; i < ufo_value_size (resp); i++) {
        const ufo_value_t *r = ufo_value_list_at (resp, i);
        for (size_t k = 0; k < UFO_ARRAY_SIZE (s_record_fields); k++)
            if (!ufo_value_map_has (r, s_record_fields [k]))
                UFO_FAIL_ ("response.log line %zu lacks %s", i, s_record_fields [k]);
        CHECK_INT (ufo_value_map_int (r, "Step", -1), (int64_t) i);
        CHECK_STR (ufo_value_map_str (r, "Agent", ""), "AppAgent");
        CHECK_STR (ufo_value_map_str (r, "AgentName", ""), "AppAgent/mousepad");
    }
    const ufo_value_t *r0 = ufo_value_list_at (resp, 0);
    CHECK_STR (ufo_value_map_str (r0, "FunctionCall", ""), "set_edit_text");
    CHECK_STR (ufo_value_map_str (r0, "ActionType", ""), "UIControl");
    CHECK_STR (ufo_value_map_str (r0, "ControlLabel", ""), label);
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r0, "ControlLog"), "type", ""), "Edit");
    CHECK (ufo_value_map_bool (ufo_value_list_at (ufo_value_map_get (r0, "ActionSuccess"), 0),
                               "success", false));
    CHECK_STR (ufo_value_map_str (r0, "ScreenshotPath", ""), "action_step0.png");
    CHECK (ufo_value_map_float (r0, "Cost", -1) >= 0);
    CHECK (ufo_value_map_has (ufo_value_map_get (r0, "time_cost"), "llm"));
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Results", ""), "Hello from ufo-app");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 2), "Status", ""), "FINISH");
    ufo_value_destroy (&resp);
    //  request.log: prompts without the key, images as file names
    char path [600];
    char *req = afx_read (afx_log_path ("s-type", "request.log", path, sizeof path));
    REQUIRE (req);
    CHECK (!strstr (req, "sk-afx-secret"));
    CHECK_CONTAINS (req, "[Current Subtask:]");
    CHECK_CONTAINS (req, "Use the text area");
    free (req);
    //  screenshots
    CHECK (s_exists ("s-type", "action_step0.png"));
    CHECK (s_exists ("s-type", "action_step0_annotated.png"));
    CHECK (s_exists ("s-type", "action_step0_concat.png"));
    CHECK (s_exists ("s-type", "action_step0_selected_controls.png"));
    CHECK (s_exists ("s-type", "action_step2.png"));
    CHECK (s_exists ("s-type", "ui_trees/ui_tree_step0.json"));
    CHECK (s_exists ("s-type", "action_round_0_sub_round_0_final.png"));
    //  the board: trajectories and the saved screenshot
    ufo_value_t *board = afx_board ("s-type");
    REQUIRE (board);
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    CHECK_INT (ufo_value_size (traj), 3);
    const ufo_value_t *t0 = ufo_value_list_at (traj, 0);
    CHECK_INT (ufo_value_map_int (t0, "Step", -1), 0);
    CHECK_INT (ufo_value_map_int (t0, "Round", -1), 0);
    CHECK_INT (ufo_value_map_int (t0, "SubtaskIndex", -1), 0);
    CHECK_STR (ufo_value_map_str (t0, "Application", ""), "mousepad");
    CHECK_STR (ufo_value_map_str (t0, "Status", ""), "CONTINUE");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (t0, "Action"), "function", ""), "set_edit_text");
    CHECK (ufo_value_map_has (t0, "Subtask") && ufo_value_map_has (t0, "UserConfirm"));
    const ufo_value_t *shots = ufo_value_map_get (board, "screenshots");
    CHECK_INT (ufo_value_size (shots), 1);
    CHECK_INT (strlen (ufo_value_map_str (ufo_value_list_at (shots, 0), "blob", "")), 64);
    ufo_value_destroy (&board);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

int
main (void)
{
    if (afx_setup ("app") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    UFO_RUN (test_type_text);
    afx_teardown ();
    return UFO_TEST_END ();
}
