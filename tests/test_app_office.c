/*  test_app_office.c - the AppAgent in LibreOffice Calc (issue 19), end to end through
    `ufo-app --subtask` in text mode: the scripted model (tests/data/app_agent/office_calc.json)
    finds cell A1 and, once the sum is there, cell A4 by the names and values the prompt shows
    (the server's "vars"), never by a label known in advance. The outcome is checked without
    the agents: the test reads A4 from the sheet itself. One LibreOffice start. */
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

//  The value of the cell named `cell` in a fresh snapshot of window xid, or "" (caller frees).
static char *
s_cell (int64_t xid, const char *cell)
{
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (afx_.desk, xid, NULL);
    ufo_value_t *snap = ufo_desktop_op_run (afx_.desk, &op);
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    char *value = NULL;
    for (size_t i = 0; i < ufo_value_size (controls) && !value; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (strcmp (ufo_value_map_str (c, "control_type", ""), "ListItem") == 0
        &&  strcmp (ufo_value_map_str (c, "control_text", ""), cell) == 0)
            value = strdup (ufo_value_map_str (c, "value", ""));
    }
    ufo_value_destroy (&snap);
    return value ? value : strdup ("");
}

//  Starts LibreOffice Calc through its application profile (private profile, no start-up
//  tip) with a desktop handle of its own (*launcher_p, caller destroys); its window, or 0.
static int64_t
s_calc (ufo_desktop_t **launcher_p)
{
    ufo_value_t *opts = ufo_value_new_map ();
    ufo_value_map_set_copy (opts, "launchers", ufo_value_map_get (ufo_value_map_get (
                                ufo_desktop_profiles (), "libreoffice"), "launchers"));
    ufo_error_t err = { 0 };
    *launcher_p = ufo_desktop_new (opts, &err);
    ufo_value_destroy (&opts);
    if (!*launcher_p || ufo_desktop_launch (*launcher_p, "libreoffice-calc", &err) <= 0) {
        fprintf (stderr, "starting Calc: %s\n", err.message);
        return 0;
    }
    return dfx_wait_window (afx_.desk, 0, "LibreOffice Calc", AFX_WAIT_MS);
}

UFO_TEST (test_calc_sum)
{
    REQUIRE (afx_llm_start ("office_calc.json") == 0);
    ufo_desktop_t *launcher = NULL;
    int64_t xid = s_calc (&launcher);
    REQUIRE (xid);
    ufo_value_t *ready = dfx_wait_control (afx_.desk, xid, "ListItem", "A1", AFX_WAIT_MS);
    REQUIRE (ready);
    ufo_value_destroy (&ready);

    const char *config = afx_config_ex (false, "", "");
    const char *file = afx_subtask ("o-calc", "Put 1, 2 and 3 into A1 to A3 and their sum into A4, then read A4",
                                    xid, "", "");
    ufo_value_t *lines = NULL;
    int rc = afx_run_subtask (config, file, RUN_MS, &lines);
    const ufo_value_t *result = afx_result (lines);
    CHECK_INT (rc, 0);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0))
               ? ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)) : "",
               "6");
    if (rc != 0 || strcmp (ufo_value_map_str (result, "status", ""), "FINISH")) {
        char *dump = ufo_json_dump (lines, 0, NULL);
        fprintf (stderr, "ufo-app output:\n%s\n", dump);
        free (dump);
        //  what the model was shown of the first column
        char path [600];
        char *log = afx_read (afx_log_path ("o-calc", "request.log", path, sizeof path));
        for (char *p = log; p && (p = strstr (p, "ListItem, name \\\"A")); p += 8)
            if (p [18] == '1' || p [18] == '4')
                fprintf (stderr, "prompt: %.60s\n", p);
        free (log);
    }
    //  the sheet itself, read by the test: the column and the formula's result
    char *a2 = s_cell (xid, "A2"), *a4 = s_cell (xid, "A4");
    CHECK_STR (a2, "2");
    CHECK_STR (a4, "6");
    free (a2);
    free (a4);
    ufo_value_destroy (&lines);
    ufo_desktop_destroy (&launcher);
}

//  The spreadsheet actions through the AppAgent: offered because the window shows a sheet,
//  the scripted model goes to C3 (go_to_cell), types a column once the Name Box it reads in
//  the prompt shows C3, reads C3:C5 back with get_range_values once C5 shows 30, and finishes
//  with that result. The sheet is then read by the test itself. Uses the Calc window of
//  test_calc_sum when it is still open.
UFO_TEST (test_calc_range)
{
    REQUIRE (afx_llm_start ("office_range.json") == 0);
    ufo_desktop_t *launcher = NULL;
    int64_t xid = dfx_wait_window (afx_.desk, 0, "LibreOffice Calc", 2000);
    if (!xid)
        xid = s_calc (&launcher);
    REQUIRE (xid);
    ufo_value_t *ready = dfx_wait_control (afx_.desk, xid, "ListItem", "C3", AFX_WAIT_MS);
    REQUIRE (ready);
    ufo_value_destroy (&ready);

    const char *config = afx_config_ex (false, "", "");
    const char *file = afx_subtask ("o-range", "Put 10, 20 and 30 into C3 to C5, then read C3:C5 back",
                                    xid, "", "");
    const char *args [] = { "--subtask", file, "--config", config, "--broker", afx_.broker.cmd, NULL };
    ufo_value_t *lines = NULL;
    int rc = afx_run_app (args, RUN_MS, &lines);
    const ufo_value_t *result = afx_result (lines);
    CHECK_INT (rc, 0);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    const char *read = ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0));
    CHECK (read && strstr (read, "\"values\":[[\"10\"],[\"20\"],[\"30\"]]"));
    //  the actions were offered, in the system prompt, because the window shows a sheet
    char path [600];
    char *log = afx_read (afx_log_path ("o-range", "request.log", path, sizeof path));
    CHECK (log && strstr (log, "get_range_values"));
    if (rc != 0 || strcmp (ufo_value_map_str (result, "status", ""), "FINISH")) {
        char *dump = ufo_json_dump (lines, 0, NULL);
        fprintf (stderr, "ufo-app output:\n%s\n", dump);
        free (dump);
        for (char *p = log; p && (p = strstr (p, "name \\\"Name Box\\\"")); p += 8)
            fprintf (stderr, "prompt: %.60s\n", p);
    }
    free (log);
    //  the sheet itself, read by the test
    char *c3 = s_cell (xid, "C3"), *c5 = s_cell (xid, "C5");
    CHECK_STR (c3, "10");
    CHECK_STR (c5, "30");
    free (c3);
    free (c5);
    ufo_value_destroy (&lines);
    ufo_desktop_destroy (&launcher);
}

int
main (void)
{
    if (afx_setup ("office") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_calc_sum);
    AFX_RUN (test_calc_range);
    afx_teardown ();
    return UFO_TEST_END ();
}
