/*  app_window.h - which window of its application an AppAgent works on at a step. Pure: it
    reads a window list as ufo_desktop_windows returns it, nothing else.

    The AppAgent works on an application, not on one window: a dialog the application opens
    (Save As, a file chooser, a confirmation) is a top-level window of its own, and the step
    after the action that opened it must offer the dialog's controls; once the dialog has
    closed, the main window comes back. Windows belong to the application when their
    _NET_WM_PID is the application's (else only the subtask's own window does). */
#ifndef APP_WINDOW_H_INCLUDED
#define APP_WINDOW_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_value.h"

//  Picks the window of the application for this step from wins (a list of
//  {"xid", "pid", "title", "active", "dialog", "modal", "transient_for"} maps, in the order
//  windows were mapped, oldest first). pid: the application's (0 unknown); main_xid: the
//  subtask's window; last_xid: the window of the previous step (0 none). The subtask's
//  windows are the main and the last one and the dialogs transient for one of them (to any
//  depth) or for no window; another top-level window of the same process (a second
//  document) and its dialogs are not. Among the subtask's windows, in order:
//    1. the newest modal one (it blocks the others);
//    2. the one that holds the keyboard focus (the toolkit or window manager gives it to a
//       window it presents);
//    3. the newest dialog (a dialog type, modal, or transient for another window);
//    4. the previous step's window, then the main window.
//  When both of those are gone: the newest window of the application. Returns the window's
//  map (borrowed from wins), or NULL when the application has no window left.
const ufo_value_t *app_window_pick (const ufo_value_t *wins, int64_t pid, int64_t main_xid,
                                    int64_t last_xid);

#endif
