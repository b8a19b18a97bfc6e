/*  ufo_desktop_win.c - top-level windows from X: listing, focus and raise without a window
    manager, move/resize, launching allow-listed applications and closing them. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"
#include <spawn.h>

extern char **environ;

//  --- Windows -------------------------------------------------------------------------------

static bool
s_is_app_window (ufo_desktop_t *self, Window w)
{
    XWindowAttributes attr;
    if (!XGetWindowAttributes (self->dpy, w, &attr))
        return false;
    return attr.map_state == IsViewable && !attr.override_redirect && attr.class == InputOutput
        && attr.width > 1 && attr.height > 1;
}

//  What X says about a top-level window's kind: the window it is transient for (0 none),
//  whether its type is a dialog (_NET_WM_WINDOW_TYPE_DIALOG, or transient without a type, as
//  the EWMH says to assume) and whether it is modal (_NET_WM_STATE_MODAL). Toolkits set these
//  before mapping (GTK, Qt), so they hold with and without a window manager.
void
ufo_desktop_x_window_kind_ (ufo_desktop_t *self, Window w, int64_t *transient_p, bool *dialog_p,
                            bool *modal_p)
{
    Window owner = None;
    *transient_p = XGetTransientForHint (self->dpy, w, &owner) && owner != None ? (int64_t) owner : 0;
    *dialog_p = false;
    *modal_p = false;
    Atom actual;
    int format;
    unsigned long n = 0, after;
    unsigned char *data = NULL;
    bool typed = false;
    Atom type_prop = XInternAtom (self->dpy, "_NET_WM_WINDOW_TYPE", False);
    Atom dialog = XInternAtom (self->dpy, "_NET_WM_WINDOW_TYPE_DIALOG", False);
    if (XGetWindowProperty (self->dpy, w, type_prop, 0, 32, False, XA_ATOM, &actual, &format, &n,
                            &after, &data) == Success && data) {
        if (format == 32)
            for (unsigned long i = 0; i < n; i++) {
                typed = true;
                *dialog_p |= ((unsigned long *) data) [i] == dialog;
            }
        XFree (data);
        data = NULL;
    }
    if (!typed && *transient_p)
        *dialog_p = true;
    Atom state_prop = XInternAtom (self->dpy, "_NET_WM_STATE", False);
    Atom modal = XInternAtom (self->dpy, "_NET_WM_STATE_MODAL", False);
    if (XGetWindowProperty (self->dpy, w, state_prop, 0, 32, False, XA_ATOM, &actual, &format, &n,
                            &after, &data) == Success && data) {
        if (format == 32)
            for (unsigned long i = 0; i < n; i++)
                *modal_p |= ((unsigned long *) data) [i] == modal;
        XFree (data);
    }
}

//  The child of the root window that holds focus (the window XGetInputFocus named), or None.
static Window
s_focus_toplevel (ufo_desktop_t *self, Window focus)
{
    Window root, parent, *kids = NULL;
    unsigned int n;
    if (ufo_desktop_xwin_peek_ (self, (int64_t) focus, 0))
        return focus;           //  a root child itself (followed through X events)
    //  climb to the child of the root window
    for (int depth = 0; focus != None && focus != PointerRoot && depth < 64; depth++) {
        ufo_desktop_x_trap_begin_ (self);
        Status ok = XQueryTree (self->dpy, focus, &root, &parent, &kids, &n);
        ufo_desktop_x_trap_end_ (self);
        if (!ok)
            return None;
        if (kids)
            XFree (kids);
        kids = NULL;
        if (parent == root || parent == None)
            return focus;
        focus = parent;
    }
    return None;
}

//  What the window list says of one top-level window.
typedef struct {
    bool app;                   //  a viewable, managed, input-output window bigger than 1x1
    bool has_class;
    const char *res_name, *res_class;
    int64_t transient;
    bool dialog, modal;
    int x, y, w, h, pid;
    const char *title;
} s_listed_t;

static ufo_value_t *
s_list_item (const s_listed_t *l, Window xid, Window focus, size_t index)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "label", "");
    //  the name a user knows: a profile maps WM_CLASS (Firefox's "Navigator",
    //  LibreOffice's "soffice" dialogs) to one application name
    const char *res = l->has_class && l->res_name ? l->res_name : "";
    const char *prof = ufo_desktop_profile_of (res);
    if (!prof && l->has_class && l->res_class)
        prof = ufo_desktop_profile_of (l->res_class);
    ufo_value_map_set_str (item, "name", prof ? prof : res);
    ufo_value_map_set_int (item, "pid", l->pid);
    ufo_value_map_set_int (item, "xid", (int64_t) xid);
    ufo_value_map_set_str (item, "title", l->title);
    ufo_value_t *rect = ufo_desktop_rect_value_ (l->x, l->y, l->w, l->h);
    ufo_value_map_set (item, "rect", &rect);
    ufo_value_map_set_bool (item, "active", xid == focus);
    ufo_value_map_set_bool (item, "dialog", l->dialog);
    ufo_value_map_set_bool (item, "modal", l->modal);
    ufo_value_map_set_int (item, "transient_for", l->transient);
    ufo_value_t *label = ufo_value_new_stringf ("%zu", index);
    ufo_value_map_set (item, "label", &label);
    return item;
}

//  Lists the windows the way ufo_desktop_windows did before X events were followed: every
//  attribute and property asked of X (a window manager's client windows).
static void
s_list_asking (ufo_desktop_t *self, const Window *wins, unsigned int n, Window focus,
               ufo_value_t *list)
{
    for (unsigned int i = 0; i < n; i++) {
        ufo_desktop_x_trap_begin_ (self);
        s_listed_t l = { 0 };
        l.app = s_is_app_window (self, wins [i]);
        XClassHint hint = { NULL, NULL };
        l.has_class = l.app ? XGetClassHint (self->dpy, wins [i], &hint) : 0;
        l.res_name = hint.res_name;
        l.res_class = hint.res_class;
        if (l.app)
            ufo_desktop_x_window_kind_ (self, wins [i], &l.transient, &l.dialog, &l.modal);
        ufo_desktop_x_trap_end_ (self);
        char *title = NULL;
        if (l.app && ufo_desktop_x_window_info_ (self, (int64_t) wins [i], &l.x, &l.y, &l.w, &l.h,
                                                 &title, &l.pid)
        &&  (*title || l.pid > 0)) {
            l.title = title;
            ufo_value_t *item = s_list_item (&l, wins [i], focus, ufo_value_size (list) + 1);
            ufo_value_list_push (list, &item);
        }
        free (title);
        if (hint.res_name)
            XFree (hint.res_name);
        if (hint.res_class)
            XFree (hint.res_class);
    }
}

ufo_value_t *
ufo_desktop_windows (ufo_desktop_t *self, ufo_error_t *err)
{
    assert (self);
    if (self->x_dead) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "the X display is gone");
        return NULL;
    }
    //  the focus first: its round trip also brings every X event sent before it, so the
    //  windows followed through events are as current as if each were asked for
    Window focus = None;
    int revert;
    ufo_desktop_x_trap_begin_ (self);
    XGetInputFocus (self->dpy, &focus, &revert);
    ufo_desktop_x_trap_end_ (self);
    ufo_value_t *list = ufo_value_new_list ();
    if (ufo_desktop_xwin_listable_ (self)) {
        //  no window manager: the root window's children, as X events keep them
        Window *wins = NULL;
        size_t n = ufo_desktop_xwin_stack_ (self, &wins);
        focus = s_focus_toplevel (self, focus);
        for (size_t i = 0; i < n; i++) {
            const ufo_dxwin_info_t *k = ufo_desktop_xwin_peek_ (self, (int64_t) wins [i],
                UFO_DXWIN_TITLE | UFO_DXWIN_PID | UFO_DXWIN_CLASS | UFO_DXWIN_KIND);
            if (!k)
                continue;       //  gone meanwhile
            const XWindowAttributes *a = k->attr;
            if (!k->viewable || a->override_redirect || a->class != InputOutput || a->width <= 1
            ||  a->height <= 1 || (!*k->title && k->pid <= 0))
                continue;
            s_listed_t l = { true, k->has_class, k->res_name, k->res_class, k->transient,
                             k->dialog, k->modal, k->x, k->y, a->width, a->height, k->pid, k->title };
            ufo_value_t *item = s_list_item (&l, wins [i], focus, ufo_value_size (list) + 1);
            ufo_value_list_push (list, &item);
        }
        free (wins);
        return list;
    }
    ufo_desktop_x_trap_begin_ (self);
    Window root, parent, *kids = NULL;
    unsigned int n = 0;
    Atom client_list = XInternAtom (self->dpy, "_NET_CLIENT_LIST", False);
    Atom actual;
    int format;
    unsigned long count = 0, after;
    unsigned char *data = NULL;
    Window *wins = NULL;
    if (XGetWindowProperty (self->dpy, self->root_win, client_list, 0, 4096, False, XA_WINDOW,
                            &actual, &format, &count, &after, &data) == Success
    &&  data && format == 32 && count > 0) {
        wins = ufo_calloc (count, sizeof (Window));
        for (unsigned long i = 0; i < count; i++)
            wins [i] = ((unsigned long *) data) [i];
        n = (unsigned int) count;
    }
    else if (XQueryTree (self->dpy, self->root_win, &root, &parent, &kids, &n)) {
        wins = ufo_calloc (n ? n : 1, sizeof (Window));
        if (n && kids)
            memcpy (wins, kids, n * sizeof (Window));
    }
    if (data)
        XFree (data);
    if (kids)
        XFree (kids);
    if (ufo_desktop_x_trap_end_ (self) && !wins) {
        ufo_value_destroy (&list);
        ufo_error_set (err, UFO_E_IO, "cannot list X windows");
        return NULL;
    }
    focus = s_focus_toplevel (self, focus);
    s_list_asking (self, wins, n, focus, list);
    free (wins);
    return list;
}

//  Raises window xid, unless it is the top-most normal window already: the override-redirect
//  windows above it (its open popover, popup menu or drop-down) stay above it. Raising a
//  window over its own open popover put the pointer of the click that followed outside the
//  popover (GTK4 then takes the press as a click outside it and closes the popover: GDK
//  dismisses an autohide popup on a press that comes while its surface does not hold the
//  pointer, docs/DESKTOP.md "Rows of lists"). Returns 0, or the X error of raising xid.
static int
s_raise_under_popups (ufo_desktop_t *self, Window xid)
{
    Window top = ufo_desktop_xwin_toplevel_ (self, xid);
    Window *stack = NULL;
    size_t n = ufo_desktop_xwin_stack_ (self, &stack);
    size_t at = n;
    bool covered = false;           //  by a normal window
    for (size_t i = 0; i < n; i++) {                //  bottom to top
        if (stack [i] == top)
            at = i;
        const ufo_dxwin_info_t *w = at < i ? ufo_desktop_xwin_peek_ (self, (int64_t) stack [i], 0)
                                           : NULL;
        if (w && w->viewable && !w->attr->override_redirect)
            covered = true;
    }
    //  the popups above it (read before the trap: a first read is a trapped round trip)
    GArray *popups = g_array_new (false, false, sizeof (Window));
    for (size_t i = at + 1; covered && i < n; i++) {
        const ufo_dxwin_info_t *w = ufo_desktop_xwin_peek_ (self, (int64_t) stack [i], 0);
        if (w && w->viewable && w->attr->override_redirect)
            g_array_append_val (popups, stack [i]);
    }
    free (stack);
    int code = 0;
    if (at == n || covered) {
        ufo_desktop_x_trap_begin_ (self);
        XRaiseWindow (self->dpy, xid);
        code = ufo_desktop_x_trap_end_ (self);
        //  the popups that were above it go back above it, in their order (one gone
        //  meanwhile is no error)
        ufo_desktop_x_trap_begin_ (self);
        for (guint i = 0; i < popups->len; i++)
            XRaiseWindow (self->dpy, g_array_index (popups, Window, i));
        ufo_desktop_x_trap_end_ (self);
    }
    g_array_free (popups, true);
    return code;
}

int
ufo_desktop_focus (ufo_desktop_t *self, int64_t xid, ufo_error_t *err)
{
    assert (self);
    if (!ufo_desktop_x_window_info_ (self, xid, NULL, NULL, NULL, NULL, NULL, NULL))
        return ufo_error_set (err, UFO_E_NOT_FOUND, "window %" PRId64 " does not exist", xid);
    if (s_raise_under_popups (self, (Window) xid) != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot raise window %" PRId64, xid);
    ufo_desktop_x_trap_begin_ (self);
    XSetInputFocus (self->dpy, (Window) xid, RevertToParent, CurrentTime);
    Atom active = XInternAtom (self->dpy, "_NET_ACTIVE_WINDOW", False);
    XEvent ev = { 0 };          //  for a window manager, if there is one
    ev.xclient.type = ClientMessage;
    ev.xclient.window = (Window) xid;
    ev.xclient.message_type = active;
    ev.xclient.format = 32;
    ev.xclient.data.l [0] = 2;
    XSendEvent (self->dpy, self->root_win, False,
                SubstructureRedirectMask | SubstructureNotifyMask, &ev);
    if (ufo_desktop_x_trap_end_ (self))
        return ufo_error_set (err, UFO_E_IO, "cannot focus window %" PRId64, xid);
    return 0;
}

int
ufo_desktop_move_resize (ufo_desktop_t *self, int64_t xid, int x, int y, int width, int height,
                         ufo_error_t *err)
{
    assert (self);
    if (width < 1 || height < 1 || width > 16384 || height > 16384)
        return ufo_error_set (err, UFO_E_RANGE, "window size %dx%d out of range", width, height);
    if (!ufo_desktop_x_window_info_ (self, xid, NULL, NULL, NULL, NULL, NULL, NULL))
        return ufo_error_set (err, UFO_E_NOT_FOUND, "window %" PRId64 " does not exist", xid);
    ufo_desktop_x_trap_begin_ (self);
    XMoveResizeWindow (self->dpy, (Window) xid, x, y, (unsigned) width, (unsigned) height);
    if (ufo_desktop_x_trap_end_ (self))
        return ufo_error_set (err, UFO_E_IO, "cannot move window %" PRId64, xid);
    return 0;
}

int
ufo_desktop_launch (ufo_desktop_t *self, const char *name, ufo_error_t *err)
{
    assert (self);
    const ufo_value_t *argv_v = name ? ufo_value_map_get (self->launchers, name) : NULL;
    if (!argv_v)
        return ufo_error_set (err, UFO_E_DENIED, "launcher '%s' is not in desktop.launchers",
                              name ? name : "(null)");
    size_t argc = ufo_value_size (argv_v);
    if (ufo_value_type (argv_v) != UFO_TLIST || argc == 0 || argc > 64)
        return ufo_error_set (err, UFO_E_INVALID, "launcher '%s' must be a list of 1..64 strings",
                              name);
    char **argv = ufo_calloc (argc + 1, sizeof (char *));
    for (size_t i = 0; i < argc; i++) {
        argv [i] = (char *) ufo_value_str (ufo_value_list_at (argv_v, i));
        if (!argv [i]) {
            free (argv);
            return ufo_error_set (err, UFO_E_INVALID, "launcher '%s': argument %zu is not a string",
                                  name, i);
        }
    }
    //  a profiled application: its private profile prepared, $PROFILE in the arguments
    //  expanded, its extra environment added
    const char *app = ufo_desktop_profile_of (argv [0]);
    const ufo_value_t *env_v = app ? ufo_value_map_get (ufo_value_map_get (
                                         ufo_desktop_profiles (), app), "env") : NULL;
    if (app && ufo_desktop_profile_prepare (app, err) != 0) {
        free (argv);
        return -1;
    }
    GPtrArray *owned = g_ptr_array_new_with_free_func (free);
    for (size_t i = 0; app && i < argc; i++)
        if (strstr (argv [i], "$PROFILE")) {
            argv [i] = ufo_desktop_profile_expand (app, argv [i]);
            g_ptr_array_add (owned, argv [i]);
        }
    GPtrArray *envp = g_ptr_array_new_with_free_func (g_free);
    for (char **e = environ; *e; e++) {
        bool replaced = false;
        for (size_t k = 0; k < ufo_value_size (env_v) && !replaced; k++) {
            const char *key = ufo_value_map_key_at (env_v, k);
            size_t n = strlen (key);
            replaced = strncmp (*e, key, n) == 0 && (*e) [n] == '=';
        }
        if (!replaced)
            g_ptr_array_add (envp, g_strdup (*e));
    }
    for (size_t k = 0; k < ufo_value_size (env_v); k++) {
        const char *v = ufo_value_str (ufo_value_map_value_at (env_v, k));
        if (v)
            g_ptr_array_add (envp, g_strdup_printf ("%s=%s", ufo_value_map_key_at (env_v, k), v));
    }
    g_ptr_array_add (envp, NULL);
    pid_t pid;
    posix_spawnattr_t attr;
    posix_spawnattr_init (&attr);
    posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup (&attr, 0);
    int rc = posix_spawnp (&pid, argv [0], NULL, &attr, argv, (char **) envp->pdata);
    posix_spawnattr_destroy (&attr);
    free (argv);
    g_ptr_array_unref (owned);
    g_ptr_array_unref (envp);
    if (rc != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot start launcher '%s': %s", name, strerror (rc));
    g_array_append_val (self->children, pid);
    ufo_info ("desktop: launched '%s' as pid %d", name, (int) pid);
    return (int) pid;
}

typedef struct {
    int64_t xid;
    int pid;
    bool terminated;
} s_close_t;

static bool
s_close_poll (ufo_desktop_op_t *op)
{
    s_close_t *st = op->state;
    if (!ufo_desktop_x_window_info_ (op->desk, st->xid, NULL, NULL, NULL, NULL, NULL, NULL)) {
        ufo_desktop_win_forget_ (op->desk, st->xid);
        ufo_desktop_op_finish_ (op, true, st->terminated ? "terminated" : "closed", NULL);
        return true;
    }
    int64_t now = ufo_desktop_now_ms_ ();
    if (!st->terminated && now > op->deadline - 1000) {
        for (guint i = 0; i < op->desk->children->len; i++)
            if (g_array_index (op->desk->children, pid_t, i) == st->pid && st->pid > 0) {
                kill (st->pid, SIGTERM);
                st->terminated = true;
            }
    }
    return false;
}

static void
s_close_free (ufo_desktop_op_t *op)
{
    free (op->state);
    op->state = NULL;
}

ufo_desktop_op_t *
ufo_desktop_close_begin (ufo_desktop_t *self, int64_t xid)
{
    assert (self);
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (self, self->action_timeout_ms + 1000);
    s_close_t *st = ufo_calloc (1, sizeof (*st));
    st->xid = xid;
    op->state = st;
    op->free_state = s_close_free;
    op->poll = s_close_poll;
    if (!ufo_desktop_x_window_info_ (self, xid, NULL, NULL, NULL, NULL, NULL, &st->pid)) {
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " does not exist", xid);
        free (st);
        op->state = NULL;
        return op;
    }
    ufo_desktop_x_trap_begin_ (self);
    Atom protocols = XInternAtom (self->dpy, "WM_PROTOCOLS", False);
    Atom del = XInternAtom (self->dpy, "WM_DELETE_WINDOW", False);
    XEvent ev = { 0 };
    ev.xclient.type = ClientMessage;
    ev.xclient.window = (Window) xid;
    ev.xclient.message_type = protocols;
    ev.xclient.format = 32;
    ev.xclient.data.l [0] = (long) del;
    ev.xclient.data.l [1] = CurrentTime;
    XSendEvent (self->dpy, (Window) xid, False, NoEventMask, &ev);
    ufo_desktop_x_trap_end_ (self);
    return op;
}
