/*  test_desktop_scroll.c - positions after an action that scrolls as a side effect (system
    test, real applications, one long-lived desktop handle each, as an AppAgent keeps it).
    A key that moves the selection or the focus past the visible part of a scrolled area
    makes the toolkit scroll it, and neither GTK3 nor Qt sends a bounds event for the content
    that moved: only the scroll bar's value changes. The next snapshot must offer what is in
    view at its new place - a click at a reported centre hits that control - and nothing that
    scrolled out of view.
    - GTK3: zenity --list with 200 rows; {END} selects the last row (the list scrolls to the
      bottom), a pointer click at a reported centre selects that row, {HOME} goes back;
      zenity prints the chosen row.
    - Qt 5: QTerminal's settings page, a QScrollArea exposed as plain fillers; {TAB}s move
      the focus below the visible rows (the area scrolls), a pointer click at a check box's
      reported centre toggles that check box. Then its Shortcuts page, a table view whose
      scroll bar is not in the accessible tree: {DOWN}s move the current cell below the
      visible rows; no two cells are offered at one place, and a pointer click at the top
      cell's reported centre makes it the current one. */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "desktop_fixture.h"
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define WAIT_MS 60000           //  generous: 2 shared cores under load
#define ROWS 200
#define streq(a, b) (strcmp ((a), (b)) == 0)

static ufo_desktop_t *
s_open (void)
{
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (NULL, &err);
    if (!desk)
        fprintf (stderr, "ufo_desktop_new: %s\n", err.message);
    return desk;
}

static ufo_value_t *
s_snap (ufo_desktop_t *desk, int64_t xid)
{
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
    return ufo_desktop_op_run (desk, &op);
}

static int64_t
s_rect (const ufo_value_t *c, size_t i)
{
    return ufo_value_int (ufo_value_list_at (ufo_value_map_get (c, "control_rect"), i));
}

//  The control of `type` named `name` in snap, or NULL.
static const ufo_value_t *
s_control (const ufo_value_t *snap, const char *type, const char *name)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), type)
        &&  streq (ufo_value_map_str (c, "control_text", ""), name))
            return c;
    }
    return NULL;
}

static bool
s_has_state (const ufo_value_t *c, const char *state)
{
    const ufo_value_t *states = ufo_value_map_get (c, "states");
    for (size_t i = 0; i < ufo_value_size (states); i++)
        if (streq (ufo_value_str (ufo_value_list_at (states, i)), state))
            return true;
    return false;
}

//  Says on stderr what a snapshot offers (a failed wait's evidence): each control's type,
//  text, rectangle and states.
static void
s_dump (const ufo_value_t *snap, const char *why)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    fprintf (stderr, "%s: the snapshot offers %zu controls\n", why, ufo_value_size (controls));
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        fprintf (stderr, "  %s '%s' [%lld %lld %lld %lld]", ufo_value_map_str (c, "control_type", ""),
                 ufo_value_map_str (c, "control_text", ""), (long long) s_rect (c, 0),
                 (long long) s_rect (c, 1), (long long) s_rect (c, 2), (long long) s_rect (c, 3));
        const ufo_value_t *states = ufo_value_map_get (c, "states");
        for (size_t j = 0; j < ufo_value_size (states); j++)
            fprintf (stderr, " %s", ufo_value_str (ufo_value_list_at (states, j)));
        fprintf (stderr, "\n");
    }
}

//  Takes snapshots of xid (one handle: its cache) until the control of `type` named `name`
//  is offered with (want true) or without `state`; bounded. Returns the last snapshot.
static ufo_value_t *
s_wait_state (ufo_desktop_t *desk, int64_t xid, const char *type, const char *name,
              const char *state, bool want)
{
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    ufo_value_t *snap = NULL;
    while (ufo_time_mono_ms () < end) {
        ufo_value_destroy (&snap);
        snap = s_snap (desk, xid);
        const ufo_value_t *c = s_control (snap, type, name);
        if (c && s_has_state (c, state) == want)
            break;
        ufo_desktop_iterate (desk, 100);
    }
    return snap;
}

//  The centre of every control of `type` lies within the rows the vertical scroll bar spans
//  (the scrolled area's visible part; a row half under GTK's column header is clipped by the
//  scroll pane, which holds the header too). Returns how many there are.
static int
s_check_in_view (const ufo_value_t *snap, const char *type)
{
    const ufo_value_t *bar = dfx_vbar (ufo_value_map_get (snap, "controls"));
    CHECK (bar != NULL);
    if (!bar)
        return 0;
    int64_t top = s_rect (bar, 1), bottom = s_rect (bar, 3);
    int n = 0;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (!streq (ufo_value_map_str (c, "control_type", ""), type))
            continue;
        n++;
        int64_t cy = (s_rect (c, 1) + s_rect (c, 3)) / 2;
        if (cy < top || cy > bottom || s_rect (c, 3) < top || s_rect (c, 1) > bottom) {
            fprintf (stderr, "%s '%s' [%lld..%lld] is outside the visible rows [%lld..%lld]\n",
                     type, ufo_value_map_str (c, "control_text", ""), (long long) s_rect (c, 1),
                     (long long) s_rect (c, 3), (long long) top, (long long) bottom);
            CHECK (!"a control outside the visible rows is offered");
        }
    }
    return n;
}

//  The number in "row N", or 0.
static int
s_row (const ufo_value_t *c)
{
    const char *text = ufo_value_map_str (c, "control_text", "");
    return strncmp (text, "row ", 4) == 0 ? atoi (text + 4) : 0;
}

//  The lowest and highest row offered (0 if none).
static void
s_rows_offered (const ufo_value_t *snap, int *low, int *high)
{
    *low = *high = 0;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        int row = s_row (ufo_value_list_at (controls, i));
        if (row > 0 && (*low == 0 || row < *low))
            *low = row;
        if (row > *high)
            *high = row;
    }
}

//  Takes snapshots of xid until row `selected` is offered selected and the rows offered are
//  all of low..high, one each, none missing between (the application may scroll after the
//  action's end); bounded. Returns the last snapshot.
static ufo_value_t *
s_wait_rows (ufo_desktop_t *desk, int64_t xid, const char *selected, int low, int high)
{
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    ufo_value_t *snap = NULL;
    while (ufo_time_mono_ms () < end) {
        ufo_value_destroy (&snap);
        snap = s_snap (desk, xid);
        const ufo_value_t *c = s_control (snap, "ListItem", selected);
        int lo, hi;
        s_rows_offered (snap, &lo, &hi);
        if (c && s_has_state (c, "selected") && lo >= low && hi <= high
        &&  (int) dfx_count (snap, "ListItem") == hi - lo + 1)
            break;
        ufo_desktop_iterate (desk, 100);
    }
    return snap;
}

static bool
s_ok (ufo_value_t *r, const char *what)
{
    bool ok = ufo_value_map_bool (r, "success", false);
    if (!ok)
        fprintf (stderr, "%s: %s\n", what, ufo_value_map_str (r, "error", "(no result)"));
    ufo_value_destroy (&r);
    return ok;
}

//  A pointer click at the centre the snapshot reports for control c (no accessible action:
//  what is under the pointer gets the click).
static bool
s_click_centre (ufo_desktop_t *desk, int64_t xid, const ufo_value_t *snap, const ufo_value_t *c)
{
    double fx = 0, fy = 0;
    if (!dfx_centre_fraction (snap, ufo_value_map_str (c, "label", ""), &fx, &fy))
        return false;
    char args [96];
    snprintf (args, sizeof args, "{\"x\": %.6f, \"y\": %.6f}", fx, fy);
    return s_ok (dfx_act (desk, xid, NULL, "click_on_coordinates", args), "click at a centre");
}

UFO_TEST (test_gtk3_list_scrolled_by_keys)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_desktop_t *desk = s_open ();
    REQUIRE (desk);
    char out_path [600];
    snprintf (out_path, sizeof (out_path), "%s/list.out", getenv ("UFO_DESKTOP_SESSION"));
    char *argv [ROWS + 16] = { "zenity", "--list", "--title", "Rows", "--column", "Item",
                               "--width", "400", "--height", "420" };
    int argc = 10;
    char rows [ROWS][16];
    for (int i = 0; i < ROWS; i++) {
        snprintf (rows [i], sizeof rows [i], "row %d", i + 1);
        argv [argc++] = rows [i];
    }
    argv [argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init (&fa);
    posix_spawn_file_actions_addopen (&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], &fa, NULL, argv, environ) == 0);
    posix_spawn_file_actions_destroy (&fa);
    int64_t xid = dfx_wait_window (desk, pid, "Rows", WAIT_MS);
    REQUIRE (xid);
    ufo_value_t *snap = dfx_wait_control (desk, xid, "ListItem", "row 1", WAIT_MS);
    REQUIRE (snap);
    int low, high;
    s_rows_offered (snap, &low, &high);
    CHECK_INT (low, 1);
    CHECK (high > 5 && high < 40);
    CHECK (s_check_in_view (snap, "ListItem") > 5);
    //  row 1 selected (a pointer click at its centre), then {END}: the last row is selected
    //  and the list scrolls to the bottom, with no bounds event for the rows that moved
    CHECK (s_ok (dfx_act (desk, xid, dfx_find (snap, "ListItem", "row 1"), "click_input", NULL),
                 "click row 1"));
    ufo_value_destroy (&snap);
    snap = s_wait_state (desk, xid, "ListItem", "row 1", "selected", true);
    CHECK (s_ok (dfx_act (desk, xid, NULL, "keyboard_input", "{\"keys\": \"{END}\"}"), "{END}"));
    ufo_value_destroy (&snap);
    snap = s_wait_rows (desk, xid, "row 200", ROWS - 40, ROWS);
    REQUIRE (snap);
    s_rows_offered (snap, &low, &high);
    CHECK_INT (high, ROWS);
    CHECK (low > ROWS - 40);            //  what scrolled out is not offered
    CHECK (!s_control (snap, "ListItem", "row 1"));
    int shown = s_check_in_view (snap, "ListItem");
    CHECK_INT (shown, high - low + 1);  //  every row between is offered
    //  a pointer click at the centre reported for a row that came into view selects it
    char target [16];
    snprintf (target, sizeof target, "row %d", ROWS - 5);
    const ufo_value_t *row = s_control (snap, "ListItem", target);
    CHECK (row != NULL);
    if (row)
        CHECK (s_click_centre (desk, xid, snap, row));
    ufo_value_destroy (&snap);
    snap = s_wait_state (desk, xid, "ListItem", target, "selected", true);
    row = s_control (snap, "ListItem", target);
    CHECK (row && s_has_state (row, "selected"));
    //  and back to the top: the first rows at their places again, the last ones gone
    CHECK (s_ok (dfx_act (desk, xid, NULL, "keyboard_input", "{\"keys\": \"{HOME}\"}"), "{HOME}"));
    ufo_value_destroy (&snap);
    snap = s_wait_rows (desk, xid, "row 1", 1, 40);
    s_rows_offered (snap, &low, &high);
    CHECK_INT (low, 1);
    CHECK (high < 40);
    CHECK (s_check_in_view (snap, "ListItem") == high);
    const ufo_value_t *row3 = s_control (snap, "ListItem", "row 3");
    CHECK (row3 != NULL);
    if (row3)
        CHECK (s_click_centre (desk, xid, snap, row3));
    ufo_value_destroy (&snap);
    snap = s_wait_state (desk, xid, "ListItem", "row 3", "selected", true);
    CHECK (s_has_state (s_control (snap, "ListItem", "row 3"), "selected"));
    //  zenity's own answer: the row the last click selected
    const char *ok = dfx_find (snap, "Button", "OK");
    CHECK (ok != NULL);
    if (ok)
        CHECK (s_ok (dfx_act (desk, xid, ok, "click_input", NULL), "OK"));
    int status = -1;
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    while (ufo_time_mono_ms () < end && waitpid (pid, &status, WNOHANG) == 0)
        ufo_desktop_iterate (desk, 50);
    if (status == -1) {
        kill (pid, SIGKILL);
        waitpid (pid, &status, 0);
    }
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    char line [64] = "";
    FILE *f = fopen (out_path, "r");
    if (f) {
        if (!fgets (line, sizeof line, f))
            line [0] = '\0';
        fclose (f);
    }
    CHECK_STR (line, "row 3\n");
    ufo_value_destroy (&snap);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

//  The topmost cell right of `left` with `state`, or if NULL the topmost focusable one (a
//  table's second column: its first holds the names, which take no focus); or NULL.
static const ufo_value_t *
s_cell (const ufo_value_t *snap, int64_t left, const char *state)
{
    const ufo_value_t *best = NULL;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), "ListItem") && s_rect (c, 0) > left
        &&  (state ? s_has_state (c, state) : s_has_state (c, "focusable"))
        &&  (!best || s_rect (c, 1) < s_rect (best, 1)))
            best = c;
    }
    return best;
}

//  The topmost focusable cell right of `left` whose top is at or below y, or NULL.
static const ufo_value_t *
s_cell_below (const ufo_value_t *snap, int64_t left, int64_t y)
{
    const ufo_value_t *best = NULL;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), "ListItem") && s_rect (c, 0) > left
        &&  s_has_state (c, "focusable") && s_rect (c, 1) >= y
        &&  (!best || s_rect (c, 1) < s_rect (best, 1)))
            best = c;
    }
    return best;
}

//  How many pairs of cells right of `left` overlap (a cell at a stale place overlaps the one
//  now there); with report, each is told on stderr.
static int
s_overlaps (const ufo_value_t *snap, int64_t left, bool report)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    int n = 0;
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *a = ufo_value_list_at (controls, i);
        if (!streq (ufo_value_map_str (a, "control_type", ""), "ListItem") || s_rect (a, 0) <= left)
            continue;
        for (size_t k = i + 1; k < ufo_value_size (controls); k++) {
            const ufo_value_t *b = ufo_value_list_at (controls, k);
            if (!streq (ufo_value_map_str (b, "control_type", ""), "ListItem")
            ||  s_rect (b, 0) <= left)
                continue;
            bool overlap = s_rect (a, 0) < s_rect (b, 2) && s_rect (b, 0) < s_rect (a, 2)
                        && s_rect (a, 1) < s_rect (b, 3) && s_rect (b, 1) < s_rect (a, 3);
            n += overlap;
            if (overlap && report)
                fprintf (stderr, "cells '%s' and '%s' overlap at y %lld / %lld\n",
                         ufo_value_map_str (a, "control_text", ""),
                         ufo_value_map_str (b, "control_text", ""), (long long) s_rect (a, 1),
                         (long long) s_rect (b, 1));
        }
    }
    return n;
}

UFO_TEST (test_qt_area_scrolled_by_keys)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_desktop_t *desk = s_open ();
    REQUIRE (desk);
    char *argv [] = { "qterminal", NULL };
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) == 0);
    int64_t xid = dfx_wait_window (desk, pid, NULL, WAIT_MS);
    REQUIRE (xid);
    REQUIRE (dfx_click_named (desk, xid, "MenuItem", "File", WAIT_MS));
    REQUIRE (dfx_click_named (desk, xid, "MenuItem", "Preferences...", WAIT_MS));
    int64_t dialog = dfx_wait_window (desk, pid, "Terminal settings", WAIT_MS);
    REQUIRE (dialog);
    //  the Appearance page is taller than the area: its last rows are below it
    ufo_value_t *snap = dfx_wait_control (desk, dialog, "ComboBox", "Color scheme", WAIT_MS);
    REQUIRE (snap);
    CHECK (s_check_in_view (snap, "CheckBox") > 4);
    CHECK (!s_control (snap, "ComboBox", "Background mode"));
    const ufo_value_t *bar = dfx_vbar (ufo_value_map_get (snap, "controls"));
    REQUIRE (bar);
    CHECK_STR (ufo_value_map_str (bar, "value", ""), "0");
    //  the focus on the lowest check box, then down the page by keys: the area scrolls to
    //  show the focused field, with no bounds event for what moved
    const char *from = dfx_find (snap, "CheckBox", "Enable bi-directional text support");
    REQUIRE (from);
    CHECK (s_ok (dfx_act (desk, dialog, from, "keyboard_input", "{\"keys\": \"{TAB 6}\"}"),
                 "{TAB 6}"));
    ufo_value_destroy (&snap);
    //  (bounded: the keys' effect may come after the action's end)
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    while (ufo_time_mono_ms () < end) {
        ufo_value_destroy (&snap);
        snap = s_snap (desk, dialog);
        bar = dfx_vbar (ufo_value_map_get (snap, "controls"));
        if (bar && !streq (ufo_value_map_str (bar, "value", "0"), "0")
        &&  s_control (snap, "ComboBox", "Background mode"))
            break;
        ufo_desktop_iterate (desk, 100);
    }
    if (!s_control (snap, "ComboBox", "Background mode")) {
        char *text = ufo_json_dump (ufo_value_map_get (snap, "controls"), 0, NULL);
        fprintf (stderr, "after the keys: %s\n", text);
        free (text);
    }
    CHECK (s_control (snap, "ComboBox", "Background mode") != NULL);
    CHECK (!s_control (snap, "ComboBox", "Color scheme"));       //  scrolled out
    CHECK (s_check_in_view (snap, "CheckBox") > 4);
    CHECK (s_check_in_view (snap, "ComboBox") >= 1);
    //  a pointer click at the reported centre of a check box that moved toggles it
    const char *name = "Use box drawing characters contained in the font";
    const ufo_value_t *box = s_control (snap, "CheckBox", name);
    CHECK (box != NULL);
    bool was = box && s_has_state (box, "checked");
    if (box)
        CHECK (s_click_centre (desk, dialog, snap, box));
    ufo_value_destroy (&snap);
    snap = s_wait_state (desk, dialog, "CheckBox", name, "checked", !was);
    box = s_control (snap, "CheckBox", name);
    CHECK (box && s_has_state (box, "checked") == !was);
    ufo_value_destroy (&snap);

    //  the Shortcuts page: a table view (no scroll bar in the accessible tree), its cells
    //  "invisible" when scrolled out; {DOWN}s move the current cell below the visible rows
    REQUIRE (dfx_click_named (desk, dialog, "ListItem", "Shortcuts", WAIT_MS));
    snap = dfx_wait_control (desk, dialog, "ListItem", "Alt+Down", WAIT_MS);
    REQUIRE (snap);
    const ufo_value_t *page = s_control (snap, "ListItem", "Shortcuts");
    REQUIRE (page);
    int64_t left = s_rect (page, 2);    //  the table's cells lie right of the page list
    const ufo_value_t *cell = s_cell (snap, left, NULL);
    REQUIRE (cell);
    //  (a pointer click on a cell puts the focus in the table: Qt's cells take no GrabFocus)
    CHECK (s_ok (dfx_act (desk, dialog, ufo_value_map_str (cell, "label", ""), "click_input",
                          NULL), "click a cell"));
    ufo_value_destroy (&snap);
    snap = s_snap (desk, dialog);
    CHECK (s_ok (dfx_act (desk, dialog, NULL, "keyboard_input",
                          "{\"keys\": \"^{HOME}{DOWN 25}\"}"), "{DOWN 25}"));
    ufo_value_destroy (&snap);
    //  (bounded, as above: until the current cell is offered and the cells are apart)
    end = ufo_time_mono_ms () + WAIT_MS;
    while (ufo_time_mono_ms () < end) {
        ufo_value_destroy (&snap);
        snap = s_snap (desk, dialog);
        if (s_cell (snap, left, "focused") && !s_control (snap, "ListItem", "Alt+Down")
        &&  s_overlaps (snap, left, false) == 0)
            break;
        ufo_desktop_iterate (desk, 100);
    }
    const ufo_value_t *current = s_cell (snap, left, "focused");
    if (!current) {
        char *text = ufo_json_dump (ufo_value_map_get (snap, "controls"), 0, NULL);
        fprintf (stderr, "after the keys: %s\n", text);
        free (text);
    }
    CHECK (!s_control (snap, "ListItem", "Alt+Down"));           //  scrolled out
    CHECK (current != NULL);
    CHECK_INT (s_overlaps (snap, left, true), 0);      //  no two cells at one place
    CHECK (dfx_count (snap, "ListItem") > 15);
    //  a pointer click at the reported centre of the third row's cell makes it the current
    //  one (the top rows may be under the column header, which Qt counts as in view and the
    //  snapshot does not clip yet: docs/DESKTOP.md)
    cell = s_cell (snap, left, NULL);
    cell = cell ? s_cell_below (snap, left, s_rect (cell, 3)) : NULL;
    cell = cell ? s_cell_below (snap, left, s_rect (cell, 3)) : NULL;
    CHECK (cell && current && cell != current);
    char top [128] = "";
    if (cell && current && cell != current) {
        snprintf (top, sizeof top, "%s", ufo_value_map_str (cell, "control_text", ""));
        CHECK (s_click_centre (desk, dialog, snap, cell));
        ufo_value_destroy (&snap);
        snap = s_wait_state (desk, dialog, "ListItem", top, "focused", true);
        CHECK (s_has_state (s_control (snap, "ListItem", top), "focused"));
        if (!s_has_state (s_control (snap, "ListItem", top), "focused")) {
            char *text = ufo_json_dump (ufo_value_map_get (snap, "controls"), 0, NULL);
            fprintf (stderr, "clicked '%s'; now: %s\n", top, text);
            free (text);
        }
    }
    ufo_value_destroy (&snap);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

//  A table with a column header row, scrolled so that rows are under the header: zenity
//  --list with two columns and `nrows` rows ({PGDN}s scroll it). With 150 rows its cells are
//  read as children; with 1000 (more than UFO_DESKTOP_MAX_KIDS cells) only the visible part
//  is, from the row the probes find below the header. Either way the rows in view are
//  offered, none above the header's bottom (where the first row sat before scrolling) and
//  none with its centre on the header, and a click at the topmost row's centre selects it.
static void
s_rows_under_header (int nrows)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_desktop_t *desk = s_open ();
    REQUIRE (desk);
    char **argv = ufo_calloc ((size_t) nrows * 2 + 16, sizeof (char *));
    char (*cells) [16] = ufo_calloc ((size_t) nrows * 2, sizeof (*cells));
    int argc = 0;
    const char *head [] = { "zenity", "--list", "--title", "Header", "--column", "Name",
                            "--column", "Value", "--width", "400", "--height", "330" };
    for (size_t i = 0; i < sizeof head / sizeof head [0]; i++)
        argv [argc++] = (char *) head [i];
    for (int i = 0; i < nrows; i++) {
        snprintf (cells [2 * i], 16, "row %d", i + 1);
        snprintf (cells [2 * i + 1], 16, "v%d", i + 1);
        argv [argc++] = cells [2 * i];
        argv [argc++] = cells [2 * i + 1];
    }
    argv [argc] = NULL;
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) == 0);
    free (argv);
    free (cells);
    int64_t xid = dfx_wait_window (desk, pid, "Header", WAIT_MS);
    REQUIRE (xid);
    ufo_value_t *snap = dfx_wait_control (desk, xid, "ListItem", "row 1", WAIT_MS);
    REQUIRE (snap);
    //  unscrolled, the first row starts right below the header row
    const ufo_value_t *first = s_control (snap, "ListItem", "row 1");
    REQUIRE (first);
    int64_t header_bottom = s_rect (first, 1);
    //  the keys go to the list: to its first row, which the action focuses (and waits for it
    //  to say so) before typing. Sent to no control, they went to whatever had the focus of
    //  a window that had just appeared: once in ~10 runs under load the list (1000 rows,
    //  still laying out) had not taken it yet, the keys were lost and the list never scrolled
    CHECK (s_ok (dfx_act (desk, xid, ufo_value_map_str (first, "label", ""), "keyboard_input",
                          "{\"keys\": \"{END}{PGUP}{PGUP}\"}"), "{END}{PGUP}"));
    //  the list scrolls after the keys: wait until row 1 is gone and rows are offered
    int64_t end = ufo_time_mono_ms () + WAIT_MS;
    int low = 0, high = 0;
    while (ufo_time_mono_ms () < end) {
        ufo_value_destroy (&snap);
        snap = s_snap (desk, xid);
        s_rows_offered (snap, &low, &high);
        if (low > 1)
            break;
        ufo_desktop_iterate (desk, 200);
    }
    if (low <= 1)
        s_dump (snap, "waited for row 1 to scroll out of view after {END}{PGUP}{PGUP}");
    CHECK (low > 1);
    CHECK (high - low >= 5);            //  the rows in view are offered
    const ufo_value_t *top = NULL;
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (!streq (ufo_value_map_str (c, "control_type", ""), "ListItem"))
            continue;
        int64_t cy = (s_rect (c, 1) + s_rect (c, 3)) / 2;
        //  (the probes of a huge list find the header's bottom within 2 pixels)
        if (cy < header_bottom || s_rect (c, 1) < header_bottom - 3) {
            fprintf (stderr, "'%s' [%lld..%lld] is under the header (bottom %lld)\n",
                     ufo_value_map_str (c, "control_text", ""), (long long) s_rect (c, 1),
                     (long long) s_rect (c, 3), (long long) header_bottom);
            CHECK (!"a row under the column header is offered there");
        }
        if (s_row (c) == low && !top)
            top = c;
    }
    REQUIRE (top);
    char name [16];
    snprintf (name, sizeof name, "row %d", low);
    CHECK (s_click_centre (desk, xid, snap, top));
    ufo_value_destroy (&snap);
    snap = s_wait_state (desk, xid, "ListItem", name, "selected", true);
    if (!s_has_state (s_control (snap, "ListItem", name), "selected")) {
        char why [64];
        snprintf (why, sizeof why, "waited for '%s' to be selected after a click", name);
        s_dump (snap, why);
    }
    CHECK (s_has_state (s_control (snap, "ListItem", name), "selected"));
    ufo_value_destroy (&snap);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

UFO_TEST (test_gtk3_rows_under_header)
{
    s_rows_under_header (150);
}

UFO_TEST (test_gtk3_huge_list_scrolled)
{
    s_rows_under_header (1000);
}

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    const char *only = getenv ("UFO_SCROLL_ONLY");      //  "gtk3", "qt": one of them
    if (!only || strstr (only, "gtk3"))
        UFO_RUN (test_gtk3_list_scrolled_by_keys);
    if (!only || strstr (only, "qt"))
        UFO_RUN (test_qt_area_scrolled_by_keys);
    if (!only || strstr (only, "header")) {
        UFO_RUN (test_gtk3_rows_under_header);
        UFO_RUN (test_gtk3_huge_list_scrolled);
    }
    return UFO_TEST_END ();
}
