/*  test_desktop_qt.c - a Qt 5 dialog as a model sees it (system test, real application):
    QTerminal's "Terminal settings" is taller than its window, in a QScrollArea that Qt
    exposes as plain fillers (no scroll pane role), and full of combo boxes whose closed lists
    Qt keeps in the tree as "showing" items at made-up places. The snapshot must offer only
    what is on screen: no item of a closed list, nothing scrolled out of the area, and after
    scrolling the part that came into view; fields named by their captions rather than by the
    group box Qt names them after, and an editable combo box's entry named with it. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "desktop_fixture.h"
#include "ufo_desktop.h"
#include "ufo_value.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define WAIT_MS 60000           //  generous: 2 shared cores under load
#define streq(a, b) (strcmp ((a), (b)) == 0)

static int64_t
s_rect (const ufo_value_t *c, size_t i)
{
    return ufo_value_int (ufo_value_list_at (ufo_value_map_get (c, "control_rect"), i));
}

static bool
s_click_named (ufo_desktop_t *desk, int64_t xid, const char *type, const char *name)
{
    return dfx_click_named (desk, xid, type, name, WAIT_MS);
}

//  What every snapshot of the dialog must show: no item of a closed combo list (an item
//  named like a combo box's selection), and every control but the button row under the
//  scroll area within the rows the vertical scroll bar spans. Returns the number of combos.
static int
s_check_on_screen (const ufo_value_t *snap)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    const ufo_value_t *bar = dfx_vbar (controls);
    CHECK (bar != NULL);
    if (!bar)
        return 0;
    int64_t top = s_rect (bar, 1), bottom = s_rect (bar, 3);
    int combos = 0;
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        const char *type = ufo_value_map_str (c, "control_type", "");
        if (streq (type, "ComboBox")) {
            combos++;
            const char *value = ufo_value_map_str (c, "value", "");
            CHECK (*value);
            if (*value && dfx_find (snap, "ListItem", value)) {
                fprintf (stderr, "an item of the closed list of '%s' is offered: '%s'\n",
                         ufo_value_map_str (c, "control_text", ""), value);
                CHECK (!"closed combo list offered");
            }
        }
        if (streq (type, "Button") && s_rect (c, 1) >= bottom)
            continue;               //  OK, Cancel, Apply: under the scroll area
        if (s_rect (c, 1) < top - 1 || s_rect (c, 3) > bottom + 1) {
            fprintf (stderr, "%s '%s' [%lld..%lld] is outside the scrolled rows [%lld..%lld]\n",
                     type, ufo_value_map_str (c, "control_text", ""), (long long) s_rect (c, 1),
                     (long long) s_rect (c, 3), (long long) top, (long long) bottom);
            CHECK (!"a control outside the visible rows is offered");
        }
    }
    return combos;
}

UFO_TEST (test_qterminal_settings)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (NULL, &err);
    REQUIRE (desk);
    char *argv [] = { "qterminal", NULL };
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) == 0);
    int64_t xid = dfx_wait_window (desk, pid, NULL, WAIT_MS);
    REQUIRE (xid);
    REQUIRE (s_click_named (desk, xid, "MenuItem", "File"));
    REQUIRE (s_click_named (desk, xid, "MenuItem", "Preferences..."));
    int64_t dialog = dfx_wait_window (desk, pid, "Terminal settings", WAIT_MS);
    REQUIRE (dialog);
    ufo_value_t *snap = dfx_wait_control (desk, dialog, "ComboBox", "Color scheme", WAIT_MS);
    REQUIRE (snap);
    //  the page is taller than the area: its last rows are not on screen yet
    CHECK (s_check_on_screen (snap) >= 4);
    CHECK (dfx_find (snap, "ComboBox", "Color scheme") != NULL);
    CHECK (dfx_find (snap, "ComboBox", "Background mode") == NULL);
    const ufo_value_t *bar = dfx_vbar (ufo_value_map_get (snap, "controls"));
    REQUIRE (bar);
    ufo_value_t *r = dfx_act (desk, dialog, ufo_value_map_str (bar, "label", ""),
                              "wheel_mouse_input", "{\"wheel_dist\": -20}");
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    //  scrolled to the end: Qt sends no bounds event when an area scrolls; the same handle
    //  reads the new positions, as the next snapshot after an action re-reads what it shows
    snap = dfx_wait_control (desk, dialog, "ComboBox", "Background mode", WAIT_MS);
    CHECK (snap != NULL);
    if (snap) {
        s_check_on_screen (snap);
        CHECK (dfx_find (snap, "ComboBox", "Color scheme") == NULL);   //  scrolled out
    }
    ufo_value_destroy (&snap);
    //  the Behavior page: fields in a group box, which Qt names after the box, go by their
    //  captions; the entry of the editable "Default $TERM" combo box is named with it
    CHECK (s_click_named (desk, dialog, "ListItem", "Behavior"));
    snap = dfx_wait_control (desk, dialog, "ComboBox", "Default $TERM", WAIT_MS);
    CHECK (snap != NULL);
    if (snap) {
        s_check_on_screen (snap);
        CHECK (dfx_find (snap, "Edit", "Default $TERM") != NULL);
        CHECK (dfx_find (snap, "Spinner", "Start with this size") != NULL);
        CHECK (dfx_find (snap, "Spinner", "Behavior (1)") == NULL);
    }
    ufo_value_destroy (&snap);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    UFO_RUN (test_qterminal_settings);
    return UFO_TEST_END ();
}
