/*  test_record.c - `ufo record` (demonstrations, issue 23) on real mousepad: the test drives
    the application as a person would, with synthetic XTest input (a click on the File menu,
    Escape, a click in the document, typing "Hi there!"), then stops the recorder with SIGINT.
    The demonstration saved on the broker names the controls clicked and holds the text typed
    on the focused control. Then a UFO plan file is imported as a demonstration, and bad input
    (no such window, a plan without steps) is refused. */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

static Display *s_dpy;

static void
s_click (int x, int y)
{
    XTestFakeMotionEvent (s_dpy, -1, x, y, CurrentTime);
    XTestFakeButtonEvent (s_dpy, 1, True, CurrentTime);
    XTestFakeButtonEvent (s_dpy, 1, False, CurrentTime);
    XFlush (s_dpy);
}

static void
s_key (KeySym sym, bool shift)
{
    KeyCode shift_code = XKeysymToKeycode (s_dpy, XK_Shift_L), code = XKeysymToKeycode (s_dpy, sym);
    if (shift)
        XTestFakeKeyEvent (s_dpy, shift_code, True, CurrentTime);
    XTestFakeKeyEvent (s_dpy, code, True, CurrentTime);
    XTestFakeKeyEvent (s_dpy, code, False, CurrentTime);
    if (shift)
        XTestFakeKeyEvent (s_dpy, shift_code, False, CurrentTime);
    XFlush (s_dpy);
}

static void
s_type (const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == ' ')
            s_key (XK_space, false);
        else if (*p == '!')
            s_key (XK_1, true);
        else if (isupper ((unsigned char) *p))
            s_key (XK_a + (tolower ((unsigned char) *p) - 'a'), true);
        else
            s_key (XK_a + (*p - 'a'), false);
    }
}

//  The centre of the first control of type (and name, when given) in a snapshot of xid.
static bool
s_centre (int64_t xid, const char *type, const char *name, int *x, int *y)
{
    ufo_value_t *snap = dfx_wait_control (afx_.desk, xid, type, name, AFX_WAIT_MS);
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    bool found = false;
    for (size_t i = 0; i < ufo_value_size (controls) && !found; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (strcmp (ufo_value_map_str (c, "control_type", ""), type) != 0
        ||  (name && strcmp (ufo_value_map_str (c, "control_text", ""), name) != 0))
            continue;
        const ufo_value_t *r = ufo_value_map_get (c, "control_rect");
        *x = (int) (ufo_value_int (ufo_value_list_at (r, 0)) + ufo_value_int (ufo_value_list_at (r, 2))) / 2;
        *y = (int) (ufo_value_int (ufo_value_list_at (r, 1)) + ufo_value_int (ufo_value_list_at (r, 3))) / 2;
        found = true;
    }
    ufo_value_destroy (&snap);
    return found;
}

static pid_t
s_spawn_record (const char *app, const char *out, const char *errlog)
{
    char bin [600];
    snprintf (bin, sizeof bin, "%s/cli/ufo", afx_build ());
    pid_t pid = fork ();
    if (pid == 0) {
        int fo = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open (errlog, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2 (fo, STDOUT_FILENO);
        dup2 (fe, STDERR_FILENO);
        execl (bin, bin, "record", "--app", app, "Write a greeting in a new note", "--broker",
               afx_.broker.cmd, "--json", (char *) NULL);
        _exit (127);
    }
    return pid;
}

static int
s_wait_exit (pid_t pid, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    int status;
    while (ufo_time_mono_ms () < end) {
        if (waitpid (pid, &status, WNOHANG) == pid)
            return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
        ufo_desktop_iterate (afx_.desk, 20);
    }
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return -1;
}

UFO_TEST (test_record_mousepad)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    REQUIRE (ufo_desktop_focus (afx_.desk, xid, NULL) == 0);
    int fx = 0, fy = 0, ex = 0, ey = 0;
    REQUIRE (s_centre (xid, "MenuItem", "File", &fx, &fy));
    REQUIRE (s_centre (xid, "Edit", NULL, &ex, &ey));
    char out [400], errlog [400];
    snprintf (out, sizeof out, "%s/record.out", afx_.broker.dir);
    snprintf (errlog, sizeof errlog, "%s/record.err", afx_.broker.dir);
    pid_t rec = s_spawn_record ("mousepad", out, errlog);
    //  wait (bounded) until it records
    bool ready = false;
    for (int i = 0; i < 300 && !ready; i++) {
        char *text = afx_read (errlog);
        ready = text && strstr (text, "recording mousepad");
        free (text);
        if (!ready)
            ufo_desktop_iterate (afx_.desk, 50);
    }
    REQUIRE (ready);
    //  a person: opens the File menu, closes it, clicks into the document and types
    s_click (fx, fy);
    ufo_value_t *menu = NULL;
    for (int i = 0; i < 100 && !menu; i++) {        //  wait for the menu to be shown
        ufo_desktop_iterate (afx_.desk, 50);
        ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
        if (ufo_value_size (wins) > 1)
            menu = wins;
        else
            ufo_value_destroy (&wins);
    }
    ufo_value_destroy (&menu);
    s_key (XK_Escape, false);
    ufo_desktop_iterate (afx_.desk, 300);
    s_click (ex, ey);
    ufo_desktop_iterate (afx_.desk, 300);
    s_type ("Hi there!");
    char *text = NULL;
    for (int i = 0; i < 200; i++) {                 //  the typing has reached the document
        free (text);
        text = afx_text (xid);
        if (text && strcmp (text, "Hi there!") == 0)
            break;
        ufo_desktop_iterate (afx_.desk, 50);
    }
    CHECK_STR (text, "Hi there!");
    free (text);
    ufo_desktop_iterate (afx_.desk, 500);           //  the recorder has seen it all
    kill (rec, SIGINT);
    CHECK_INT (s_wait_exit (rec, 60000), 0);
    char *printed = afx_read (out);
    ufo_value_t *demo = printed ? ufo_json_parse_str (printed, NULL) : NULL;
    if (!demo) {
        char *e = afx_read (errlog);
        fprintf (stderr, "ufo record printed:\n%s\nand logged:\n%s\n", printed ? printed : "", e ? e : "");
        free (e);
    }
    free (printed);
    REQUIRE (demo);
    CHECK_STR (ufo_value_map_str (demo, "request", ""), "Write a greeting in a new note");
    const ufo_value_t *steps = ufo_value_path (demo, "subtasks.0.steps");
    REQUIRE (ufo_value_size (steps) >= 3);
    //  the first click named the File menu; a later click the document; the typing is the
    //  last step, on the focused document
    const ufo_value_t *s0 = ufo_value_list_at (steps, 0);
    CHECK_STR (ufo_value_map_str (s0, "action", ""), "click_input");
    CHECK_STR (ufo_value_map_str (s0, "control", ""), "File");
    CHECK_STR (ufo_value_map_str (s0, "control_type", ""), "MenuItem");
    bool clicked_doc = false;
    for (size_t i = 1; i < ufo_value_size (steps); i++) {
        const ufo_value_t *s = ufo_value_list_at (steps, i);
        clicked_doc |= strcmp (ufo_value_map_str (s, "action", ""), "click_input") == 0
                    && strcmp (ufo_value_map_str (s, "control_type", ""), "Edit") == 0;
    }
    CHECK (clicked_doc);
    const ufo_value_t *last = ufo_value_list_at (steps, ufo_value_size (steps) - 1);
    CHECK_STR (ufo_value_map_str (last, "action", ""), "keyboard_input");
    CHECK_STR (ufo_value_str (ufo_value_path (last, "args.keys")), "Hi there!");
    CHECK_STR (ufo_value_map_str (last, "control_type", ""), "Edit");
    //  on the broker
    ufo_error_t err = {0};
    ufo_value_t *all = ufo_experience_list (afx_.bb, "demonstration", &err);
    REQUIRE (all);
    CHECK_INT (ufo_value_size (all), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (all, "0.record.subtasks.0.steps.0.control")), "File");
    ufo_value_destroy (&all);
    ufo_value_destroy (&demo);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_plan_import_and_bad_input)
{
    char plan [400], out [8192], args [800];
    snprintf (plan, sizeof plan, "%s/plan.json", afx_.broker.dir);
    afx_write (plan, "{\"task\": \"Type a shopping list in Mousepad\", \"object\": \"\","
                     " \"steps\": [\"1. Click into the document\", \"2. Type the list\"]}");
    snprintf (args, sizeof args, "knowledge import-plan '%s' --app mousepad", plan);
    CHECK_INT (afx_cli (args, out, sizeof out), 0);
    CHECK_CONTAINS (out, "imported from");
    CHECK_INT (afx_cli ("knowledge list --kind demonstration", out, sizeof out), 0);
    CHECK_CONTAINS (out, "Type a shopping list in Mousepad");
    CHECK_CONTAINS (out, "2 demonstration records");
    //  a plan without steps, a file that is not JSON, no --app
    afx_write (plan, "{\"task\": \"x\"}");
    CHECK_INT (afx_cli (args, out, sizeof out), 1);
    CHECK_CONTAINS (out, "a plan needs");
    afx_write (plan, "not json");
    CHECK_INT (afx_cli (args, out, sizeof out), 1);
    snprintf (args, sizeof args, "knowledge import-plan '%s'", plan);
    CHECK_INT (afx_cli (args, out, sizeof out), 2);
    //  record: no window of that application
    CHECK_INT (afx_cli ("record --app no-such-app 'x'", out, sizeof out), 1);
    CHECK_CONTAINS (out, "no window of 'no-such-app'");
    CHECK_INT (afx_cli ("record 'x'", out, sizeof out), 2);
}

int
main (void)
{
    if (afx_setup ("record") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    s_dpy = XOpenDisplay (NULL);
    if (!s_dpy) {
        fprintf (stderr, "no display\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_record_mousepad);
    AFX_RUN (test_plan_import_and_bad_input);
    XCloseDisplay (s_dpy);
    afx_teardown ();
    return UFO_TEST_END ();
}
