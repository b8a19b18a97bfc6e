/*  test_app_sequence.c - ACTION_SEQUENCE on real mousepad: one model reply with an ActionList
    runs as several steps (each in response.log and on the board) without more model calls;
    a list whose second control vanished after the first action (the search bar closed)
    stops there, and the next prompt says which actions ran and why it stopped; so does a list
    whose first action opened a dialog (the window changed). */
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

UFO_TEST (test_sequence_runs_fully)
{
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("seq_full.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("\"ACTION_SEQUENCE\": true");
    const char *file = afx_subtask ("s-seq", "Type Hello world and read it back", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)), "Hello world");
    CHECK_INT (afx_count (lines, "step"), 3);
    ufo_value_destroy (&lines);
    CHECK_INT (afx_llm_requests (), 1);         //  three actions, one model call
    ufo_value_t *resp = afx_log ("s-seq", "response.log");
    REQUIRE (ufo_value_size (resp) == 3);
    static const char *const functions [] = { "set_edit_text", "keyboard_input", "texts" };
    static const char *const statuses [] = { "CONTINUE", "CONTINUE", "FINISH" };
    for (size_t i = 0; i < 3; i++) {
        const ufo_value_t *r = ufo_value_list_at (resp, i);
        CHECK_STR (ufo_value_map_str (r, "Function", ""), functions [i]);
        CHECK_STR (ufo_value_map_str (r, "Status", ""), statuses [i]);
        CHECK_INT (ufo_value_map_int (r, "Step", -1), (int64_t) i);
        CHECK (!ufo_value_map_has (r, "ActionList"));
    }
    ufo_value_destroy (&resp);
    //  every action is a trajectory item on the board
    ufo_value_t *board = afx_board ("s-seq");
    char *json = ufo_json_dump (board, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (json, "set_edit_text");
    CHECK_CONTAINS (json, "keyboard_input");
    free (json);
    ufo_value_destroy (&board);
    char *text = afx_text (xid);
    CHECK_STR (text ? text : "", "Hello world");
    free (text);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_sequence_stops_when_control_vanishes)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    //  the search bar open (Ctrl+F), as the agent will find it
    ufo_value_t *r = dfx_act (afx_.desk, xid, NULL, "keyboard_input", "{\"keys\": \"^f\", \"control_focus\": false}");
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    ufo_desktop_t *fresh = ufo_desktop_new (NULL, NULL);
    REQUIRE (fresh);
    ufo_value_t *snap = dfx_wait_control (fresh, xid, "CheckBox", "Match case", AFX_WAIT_MS);
    ufo_value_destroy (&snap);
    ufo_desktop_destroy (&fresh);
    REQUIRE (afx_llm_start ("seq_stop.json") == 0);
    const char *config = afx_config ("\"ACTION_SEQUENCE\": true, \"SLEEP_TIME\": 1");
    const char *file = afx_subtask ("s-seq-stop", "Search with Match case", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 2);
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "Stopped as the window changed.");
    ufo_value_destroy (&lines);
    CHECK_INT (afx_llm_requests (), 2);
    ufo_value_t *resp = afx_log ("s-seq-stop", "response.log");
    REQUIRE (ufo_value_size (resp) == 2);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 0), "Function", ""), "click_input");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 0), "ControlText", ""), "Close");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 0), "Status", ""), "CONTINUE");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Function", ""), "");  //  Match case never clicked
    ufo_value_destroy (&resp);
    //  the second prompt told the model what ran and why the list stopped
    ufo_value_t *reqs = afx_lines (afx_.llm_log);
    REQUIRE (ufo_value_size (reqs) == 2);
    const char *last = ufo_value_map_str (ufo_value_list_at (reqs, 1), "last", "");
    CHECK_CONTAINS (last, "The action sequence stopped before action 2 of 2 (actions 1 to 1 ran): click_input on control");
    CHECK_CONTAINS (last, "'Match case': the control is no longer in the window");
    ufo_value_destroy (&reqs);
    afx_mousepad_kill (pid, xid);
}

//  The window is part of what the list was made for: the first action opens a dialog (Ctrl+O),
//  so the second, typing without a control, is not run in the dialog; the list stops there.
UFO_TEST (test_sequence_stops_when_window_changes)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (afx_llm_start ("seq_window.json") == 0);
    const char *config = afx_config ("\"ACTION_SEQUENCE\": true, \"SLEEP_TIME\": 1");
    const char *file = afx_subtask ("s-seq-win", "Open a file", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "Stopped as a dialog opened.");
    ufo_value_destroy (&lines);
    CHECK_INT (afx_llm_requests (), 2);
    ufo_value_t *resp = afx_log ("s-seq-win", "response.log");
    REQUIRE (ufo_value_size (resp) == 2);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 0), "Function", ""), "keyboard_input");
    //  the second step is the model's answer to the stop, not the queued typing
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Function", ""), "");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Comment", ""), "Stopped as a dialog opened.");
    ufo_value_destroy (&resp);
    ufo_value_t *reqs = afx_lines (afx_.llm_log);
    REQUIRE (ufo_value_size (reqs) == 2);
    const char *last = ufo_value_map_str (ufo_value_list_at (reqs, 1), "last", "");
    CHECK_CONTAINS (last, "The action sequence stopped before action 2 of 2 (actions 1 to 1 ran): keyboard_input: "
                          "the window changed");
    ufo_value_destroy (&reqs);
    //  the main window's text is untouched
    char *text = afx_text (xid);
    CHECK (text && !strstr (text, "typed-into-the-wrong-window"));
    free (text);
    afx_mousepad_kill (pid, xid);
}

int
main (void)
{
    if (afx_setup ("app_seq") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_sequence_runs_fully);
    AFX_RUN (test_sequence_stops_when_control_vanishes);
    AFX_RUN (test_sequence_stops_when_window_changes);
    afx_teardown ();
    return UFO_TEST_END ();
}
