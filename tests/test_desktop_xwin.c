/*  test_desktop_xwin.c - the window list follows X events (ufo_desktop_xwin.c): windows that
    open, close, change title, move, get activated, are restacked, unmapped and mapped again,
    dialogs and popups, a window manager's _NET_CLIENT_LIST appearing and going. After every
    change the list of one long-lived desktop handle (which learns changes from events) must
    equal the list of a fresh handle (which asks X for everything), and say what changed.
    The windows are made by a second X connection of this process, a real X client. */
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "desktop_fixture.h"
#include "ufo_test.h"
#include <poll.h>
#include <X11/Xlib.h>
#include <X11/Xatom.h>
#include <X11/Xutil.h>

static Display *s_dpy;      //  the "application"

static void
s_set_title (Window w, const char *title)
{
    Atom utf8 = XInternAtom (s_dpy, "UTF8_STRING", False);
    XChangeProperty (s_dpy, w, XInternAtom (s_dpy, "_NET_WM_NAME", False), utf8, 8,
                     PropModeReplace, (const unsigned char *) title, (int) strlen (title));
}

//  A window of this process titled title at x, y (w x h), not yet mapped.
static Window
s_window (const char *title, const char *res, int x, int y, int w, int h)
{
    Window win = XCreateSimpleWindow (s_dpy, DefaultRootWindow (s_dpy), x, y, (unsigned) w,
                                      (unsigned) h, 0, 0, 0xffffff);
    s_set_title (win, title);
    long p = getpid ();
    XChangeProperty (s_dpy, win, XInternAtom (s_dpy, "_NET_WM_PID", False), XA_CARDINAL, 32,
                     PropModeReplace, (const unsigned char *) &p, 1);
    XClassHint hint = { (char *) res, (char *) "Xwintest" };
    XSetClassHint (s_dpy, win, &hint);
    return win;
}

//  The windows of this process in the list, as compact JSON (label, name, xid, title, rect,
//  active, dialog, modal, transient_for), in list order.
static char *
s_ours (ufo_value_t *wins)
{
    ufo_value_t *mine = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (ufo_value_map_int (w, "pid", 0) == getpid ()) {
            ufo_value_t *copy = ufo_value_dup (w);
            ufo_value_list_push (mine, &copy);
        }
    }
    char *json = ufo_json_dump (mine, 0, NULL);
    ufo_value_destroy (&mine);
    ufo_value_destroy (&wins);
    return json;
}

//  The list of a fresh desktop handle: everything asked of X.
static char *
s_truth (void)
{
    ufo_desktop_t *fresh = ufo_desktop_new (NULL, NULL);
    if (!fresh)
        return ufo_strdup ("(no desktop)");
    char *json = s_ours (ufo_desktop_windows (fresh, NULL));
    ufo_desktop_destroy (&fresh);
    return json;
}

//  Makes the application's requests take effect, then compares the long-lived handle's list
//  with the truth; returns the long-lived list (caller frees).
static ufo_value_t *
s_check (ufo_desktop_t *desk, const char *when)
{
    XSync (s_dpy, False);
    ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
    char *ours = s_ours (ufo_value_dup (wins));
    char *truth = s_truth ();
    if (strcmp (ours, truth) != 0)
        fprintf (stderr, "%s:\n  followed: %s\n  asked:    %s\n", when, ours, truth);
    CHECK_STR (ours, truth);
    free (ours);
    free (truth);
    return wins;
}

//  The entry of window xid in wins, or NULL.
static const ufo_value_t *
s_entry (const ufo_value_t *wins, Window xid)
{
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == (int64_t) xid)
            return ufo_value_list_at (wins, i);
    return NULL;
}

//  Position of window xid in the list (its index), -1 if absent.
static int
s_index (const ufo_value_t *wins, Window xid)
{
    for (size_t i = 0; i < ufo_value_size (wins); i++)
        if (ufo_value_map_int (ufo_value_list_at (wins, i), "xid", 0) == (int64_t) xid)
            return (int) i;
    return -1;
}

UFO_TEST (test_window_list_follows_x_events)
{
    ufo_desktop_t *desk = ufo_desktop_new (NULL, NULL);
    REQUIRE (desk);
    ufo_value_t *wins = s_check (desk, "start");
    CHECK_INT ((int64_t) ufo_value_size (wins) >= 0, 1);
    ufo_value_destroy (&wins);

    //  a window opens
    Window a = s_window ("Alpha", "alpha", 10, 20, 300, 200);
    XMapWindow (s_dpy, a);
    wins = s_check (desk, "a window opened");
    const ufo_value_t *e = s_entry (wins, a);
    REQUIRE (e);
    CHECK_STR (ufo_value_map_str (e, "title", ""), "Alpha");
    CHECK_STR (ufo_value_map_str (e, "name", ""), "alpha");
    CHECK_INT (ufo_value_int (ufo_value_list_at (ufo_value_map_get (e, "rect"), 2)), 310);
    CHECK (!ufo_value_map_bool (e, "dialog", true));
    ufo_value_destroy (&wins);

    //  a modal dialog of it opens above it and takes the focus
    Window d = s_window ("Confirm", "alpha", 40, 50, 160, 90);
    XSetTransientForHint (s_dpy, d, a);
    Atom type = XInternAtom (s_dpy, "_NET_WM_WINDOW_TYPE_DIALOG", False);
    XChangeProperty (s_dpy, d, XInternAtom (s_dpy, "_NET_WM_WINDOW_TYPE", False), XA_ATOM, 32,
                     PropModeReplace, (const unsigned char *) &type, 1);
    Atom modal = XInternAtom (s_dpy, "_NET_WM_STATE_MODAL", False);
    XChangeProperty (s_dpy, d, XInternAtom (s_dpy, "_NET_WM_STATE", False), XA_ATOM, 32,
                     PropModeReplace, (const unsigned char *) &modal, 1);
    XMapWindow (s_dpy, d);
    XSync (s_dpy, False);
    XSetInputFocus (s_dpy, d, RevertToParent, CurrentTime);
    wins = s_check (desk, "a dialog opened");
    e = s_entry (wins, d);
    REQUIRE (e);
    CHECK (ufo_value_map_bool (e, "dialog", false));
    CHECK (ufo_value_map_bool (e, "modal", false));
    CHECK (ufo_value_map_bool (e, "active", false));
    CHECK_INT (ufo_value_map_int (e, "transient_for", 0), (int64_t) a);
    CHECK (!ufo_value_map_bool (s_entry (wins, a), "active", true));
    CHECK (s_index (wins, a) < s_index (wins, d));          //  bottom to top
    ufo_value_destroy (&wins);

    //  the main window is activated, raised, renamed, moved and resized
    XSetInputFocus (s_dpy, a, RevertToParent, CurrentTime);
    XRaiseWindow (s_dpy, a);
    s_set_title (a, "Alpha - changed");
    XMoveResizeWindow (s_dpy, a, 100, 110, 320, 240);
    wins = s_check (desk, "the main window changed");
    e = s_entry (wins, a);
    REQUIRE (e);
    CHECK_STR (ufo_value_map_str (e, "title", ""), "Alpha - changed");
    CHECK (ufo_value_map_bool (e, "active", false));
    CHECK_INT (ufo_value_int (ufo_value_list_at (ufo_value_map_get (e, "rect"), 0)), 100);
    CHECK_INT (ufo_value_int (ufo_value_list_at (ufo_value_map_get (e, "rect"), 3)), 350);
    CHECK (s_index (wins, d) < s_index (wins, a));
    ufo_value_destroy (&wins);

    //  a capture uses the followed geometry
    ufo_image_t *img = ufo_desktop_capture_window (desk, (int64_t) a, NULL);
    REQUIRE (img);
    CHECK_INT (ufo_image_width (img), 320);
    CHECK_INT (ufo_image_height (img), 240);
    CHECK_INT (ufo_image_origin_x (img), 100);
    ufo_image_destroy (&img);

    //  a popup (override-redirect) is not a window of the list; its stacking still moves
    XSetWindowAttributes sa = { .override_redirect = True };
    Window pop = XCreateWindow (s_dpy, DefaultRootWindow (s_dpy), 120, 130, 50, 40, 0,
                                CopyFromParent, InputOutput, CopyFromParent, CWOverrideRedirect, &sa);
    XMapWindow (s_dpy, pop);
    wins = s_check (desk, "a popup opened");
    CHECK (!s_entry (wins, pop));
    ufo_value_destroy (&wins);
    XDestroyWindow (s_dpy, pop);

    //  the dialog is hidden, shown again, and closed
    XUnmapWindow (s_dpy, d);
    wins = s_check (desk, "the dialog hidden");
    CHECK (!s_entry (wins, d));
    ufo_value_destroy (&wins);
    XMapWindow (s_dpy, d);
    wins = s_check (desk, "the dialog shown again");
    CHECK (s_entry (wins, d));
    ufo_value_destroy (&wins);
    XDestroyWindow (s_dpy, d);
    wins = s_check (desk, "the dialog closed");
    CHECK (!s_entry (wins, d));
    CHECK (s_entry (wins, a));
    ufo_value_destroy (&wins);
    ufo_error_t err = { 0 };
    CHECK (!ufo_desktop_capture_window (desk, (int64_t) d, &err));

    //  a window manager appears (it publishes _NET_CLIENT_LIST, here with the main window
    //  only): the list is what it says; it goes: the root's children again
    Window b = s_window ("Beta", "beta", 400, 20, 200, 100);
    XMapWindow (s_dpy, b);
    long clients [1] = { (long) a };
    Atom client_list = XInternAtom (s_dpy, "_NET_CLIENT_LIST", False);
    XChangeProperty (s_dpy, DefaultRootWindow (s_dpy), client_list, XA_WINDOW, 32,
                     PropModeReplace, (const unsigned char *) clients, 1);
    wins = s_check (desk, "a window manager's client list");
    CHECK (s_entry (wins, a));
    CHECK (!s_entry (wins, b));
    ufo_value_destroy (&wins);
    XDeleteProperty (s_dpy, DefaultRootWindow (s_dpy), client_list);
    wins = s_check (desk, "the client list gone");
    CHECK (s_entry (wins, a));
    CHECK (s_entry (wins, b));
    ufo_value_destroy (&wins);

    //  restacked by circulation (the lowest mapped child raised, the highest lowered), and a
    //  window reparented into another (no longer top-level) and back to the root
    XCirculateSubwindowsUp (s_dpy, DefaultRootWindow (s_dpy));
    wins = s_check (desk, "circulated up");
    ufo_value_destroy (&wins);
    XCirculateSubwindowsDown (s_dpy, DefaultRootWindow (s_dpy));
    wins = s_check (desk, "circulated down");
    ufo_value_destroy (&wins);
    XRaiseWindow (s_dpy, a);
    XReparentWindow (s_dpy, b, a, 5, 5);
    XMapWindow (s_dpy, b);
    XMoveWindow (s_dpy, b, 7, 9);
    wins = s_check (desk, "reparented into another window");
    CHECK (!s_entry (wins, b));
    ufo_value_destroy (&wins);
    XReparentWindow (s_dpy, b, DefaultRootWindow (s_dpy), 410, 30);
    wins = s_check (desk, "reparented back to the root");
    e = s_entry (wins, b);
    REQUIRE (e);
    CHECK_INT (ufo_value_int (ufo_value_list_at (ufo_value_map_get (e, "rect"), 0)), 410);
    CHECK (s_index (wins, a) < s_index (wins, b));      //  on top of its new siblings
    ufo_value_destroy (&wins);

    //  many changes while nobody lists: the owner's loop serves the X connection's
    //  descriptor (pump), after which it has nothing left to read
    int fd = ufo_desktop_x_fd (desk);
    CHECK (fd >= 0);
    for (int i = 0; i < 300; i++) {
        char title [32];
        snprintf (title, sizeof title, "Beta %d", i);
        s_set_title (b, title);
    }
    XSync (s_dpy, False);
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    int64_t until = ufo_time_mono_ms () + 5000;
    while (poll (&pfd, 1, 50) > 0 && ufo_time_mono_ms () < until)
        ufo_desktop_pump (desk);
    CHECK_INT (poll (&pfd, 1, 0), 0);
    wins = s_check (desk, "after 300 title changes");
    CHECK_STR (ufo_value_map_str (s_entry (wins, b), "title", ""), "Beta 299");
    ufo_value_destroy (&wins);

    XDestroyWindow (s_dpy, a);
    XDestroyWindow (s_dpy, b);
    wins = s_check (desk, "all closed");
    CHECK (!s_entry (wins, a) && !s_entry (wins, b));
    ufo_value_destroy (&wins);
    ufo_desktop_destroy (&desk);
}

int
main (void)
{
    if (dfx_session_start () < 0)
        return 1;
    s_dpy = XOpenDisplay (NULL);
    if (!s_dpy) {
        fprintf (stderr, "cannot open the display\n");
        dfx_session_stop ();
        return 1;
    }
    UFO_RUN (test_window_list_follows_x_events);
    XCloseDisplay (s_dpy);
    dfx_session_stop ();
    return UFO_TEST_END ();
}
