/*  test_desktop_recorded.c - the Table path against a replayed tree (issue 19): the accessible
    tree recorded from a LibreOffice Calc 7.4 window, served on the session's AT-SPI bus by
    tests/tools/fake_sheet_app.py - a spreadsheet table reporting 2,147,483,647 children,
    1,048,576 x 16,384 cells named A1, B2 ... - which logs every call made to it. A snapshot
    and the spreadsheet actions must read the table through Table / Component only: never
    GetChildren (on LibreOffice, enumerating it hung the application). */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "desktop_fixture.h"
#include <signal.h>

#define streq(a, b) (strcmp ((a), (b)) == 0)
#define TABLE "/org/a11y/atspi/accessible/3 "       //  the table's path in the fake, then a space

//  True if `line` (PATH INTERFACE MEMBER) is a call a huge table may get: its role, states,
//  extents and name, its child count, the Table interface, the cell at a point.
static bool
s_allowed (const char *line)
{
    static const char *const ok [] = {
        "org.a11y.atspi.Accessible GetRole", "org.a11y.atspi.Accessible GetState",
        "org.a11y.atspi.Accessible GetInterfaces", "org.a11y.atspi.Component GetExtents",
        "org.a11y.atspi.Component GetAccessibleAtPoint", "org.a11y.atspi.Table ",
        "org.freedesktop.DBus.Properties Get:org.a11y.atspi.Table.",
        "org.freedesktop.DBus.Properties Get:org.a11y.atspi.Accessible.ChildCount",
        "org.freedesktop.DBus.Properties Get:org.a11y.atspi.Accessible.Name",
        "org.freedesktop.DBus.Properties Get:org.a11y.atspi.Accessible.Description",
    };
    const char *member = line + strlen (TABLE);
    for (size_t i = 0; i < sizeof ok / sizeof ok [0]; i++)
        if (strncmp (member, ok [i], strlen (ok [i])) == 0)
            return true;
    return false;
}

//  Checks the calls logged since offset *at: none but allowed ones on the table, and returns
//  how many were Table.GetAccessibleAt. Moves *at to the end.
static int
s_check_log (const char *log, long *at)
{
    FILE *f = fopen (log, "r");
    if (!f)
        return -1;
    fseek (f, *at, SEEK_SET);
    char line [512];
    int cells = 0, bad = 0;
    while (fgets (line, sizeof line, f)) {
        line [strcspn (line, "\n")] = '\0';
        if (strncmp (line, TABLE, strlen (TABLE)) != 0)
            continue;
        if (strstr (line, "GetChildren") || !s_allowed (line)) {
            if (bad++ < 5)
                fprintf (stderr, "  not a Table-path call: %s\n", line);
        }
        cells += strstr (line, "org.a11y.atspi.Table GetAccessibleAt") != NULL;
    }
    *at = ftell (f);
    fclose (f);
    CHECK_INT (bad, 0);
    return cells;
}

//  How many calls of member ("org.a11y.atspi.Accessible GetRole") the cells got (their paths
//  in the fake: /org/a11y/atspi/accessible/cell/ROW_COL).
static int
s_cell_calls (const char *log, const char *member)
{
    FILE *f = fopen (log, "r");
    if (!f)
        return -1;
    char line [512];
    int n = 0;
    while (fgets (line, sizeof line, f))
        n += strncmp (line, "/org/a11y/atspi/accessible/cell/", 32) == 0
          && strstr (line, member) != NULL;
    fclose (f);
    return n;
}

UFO_TEST (test_recorded_sheet)
{
    REQUIRE (dfx_session_start () == 0);
    char log [600], cmd [1400];
    snprintf (log, sizeof log, "%s/fake_sheet.log", getenv ("XDG_RUNTIME_DIR"));
    unlink (log);
    snprintf (cmd, sizeof cmd, "exec /usr/bin/python3 '%s/tests/tools/fake_sheet_app.py' '%s'",
              getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR, log);
    FILE *fake = popen (cmd, "r");
    REQUIRE (fake);
    //  (a REQUIRE failing below leaves the fake to the session's teardown: it exits with
    //  its bus)
    char ready [64] = "";
    int pid = 0;
    CHECK (fgets (ready, sizeof ready, fake) && sscanf (ready, "ready %d", &pid) == 1 && pid > 0);
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (NULL, &err);
    REQUIRE (desk);
    int64_t xid = dfx_wait_window (desk, 0, "Recorded Sheet", 30000);
    REQUIRE (xid);
    //  the window is the fake's (its _NET_WM_PID)
    ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == xid)
            CHECK_INT ((int) ufo_value_map_int (ufo_value_list_at (wins, i), "pid", 0), pid);
    ufo_value_destroy (&wins);

    //  a snapshot: the visible cells (named by address), the table read as a table
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
    ufo_value_t *snap = ufo_desktop_op_run (desk, &op);
    CHECK (ufo_value_map_bool (snap, "success", false));
    const ufo_value_t *sheet = ufo_value_map_get (snap, "spreadsheet");
    CHECK_INT ((int) ufo_value_map_int (sheet, "rows", 0), 1048576);
    CHECK_INT ((int) ufo_value_map_int (sheet, "columns", 0), 16384);
    CHECK (dfx_find (snap, "ListItem", "A1") != NULL);
    CHECK (dfx_find (snap, "ListItem", "H23") != NULL);      //  the far visible corner
    CHECK (dfx_find (snap, "ListItem", "I1") == NULL);       //  off the table's right edge
    CHECK (dfx_find (snap, "Button", "Save") != NULL);
    int listed = 0;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++)
        listed += streq (ufo_value_map_str (ufo_value_list_at (controls, i), "control_type", ""),
                         "ListItem");
    CHECK (listed > 20 && listed <= 200);
    long at = 0;
    int cells = s_check_log (log, &at);
    printf ("recorded sheet: %d cells offered, %d read with Table.GetAccessibleAt, %" PRId64
            " calls\n", listed, cells, ufo_value_map_int (snap, "calls", 0));
    CHECK_INT (cells, listed);
    //  the cells are all alike (role, interfaces): asked of the two corner cells only, then
    //  assumed for the others (ufo_desktop_cell_kind_t); their states are read one by one
    CHECK (s_cell_calls (log, "org.a11y.atspi.Accessible GetRole") <= 2);
    CHECK (s_cell_calls (log, "org.a11y.atspi.Accessible GetInterfaces") <= 2);
    CHECK (s_cell_calls (log, "org.a11y.atspi.Accessible GetState") >= listed);
    //  C5 has no Text in the fake (its GetText is refused by the bus, never logged): asked as
    //  its kind says, the call fails, and the cell is still offered (the table's cells are
    //  asked one by one from then on)
    CHECK (dfx_find (snap, "ListItem", "C5") != NULL);
    CHECK (dfx_find (snap, "ListItem", "D5") != NULL);
    ufo_value_destroy (&snap);

    //  a repeated snapshot: nothing asked at all
    op = ufo_desktop_controls_begin (desk, xid, NULL);
    snap = ufo_desktop_op_run (desk, &op);
    CHECK_INT ((int) ufo_value_map_int (snap, "calls", -1), 0);
    ufo_value_destroy (&snap);

    //  get_range_values far down the sheet: cells from the Table, never the child list
    ufo_value_t *args = ufo_json_parse_str ("{\"range\": \"AA100000:AB100001\"}", NULL);
    op = ufo_desktop_act_begin (desk, xid, NULL, "get_range_values", args);
    ufo_value_t *r = ufo_desktop_op_run (desk, &op);
    ufo_value_destroy (&args);
    CHECK (ufo_value_map_bool (r, "success", false));
    char *values = ufo_json_dump (ufo_value_map_get (r, "values"), 0, NULL);
    CHECK_STR (values ? values : "", "[[\"\",\"\"],[\"\",\"\"]]");
    free (values);
    ufo_value_destroy (&r);
    CHECK_INT (s_check_log (log, &at), 4);

    ufo_desktop_destroy (&desk);
    if (pid > 0)
        kill (pid, SIGTERM);
    pclose (fake);
    dfx_session_stop ();
}

int
main (void)
{
    UFO_RUN (test_recorded_sheet);
    return UFO_TEST_END ();
}
