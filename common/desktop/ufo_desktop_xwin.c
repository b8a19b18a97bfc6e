/*  ufo_desktop_xwin.c - the X server's top-level windows, followed through X events instead
    of asked for at every use.

    Every step of an agent lists the windows (to notice a dialog), checks its window, reads
    its geometry and captures it: asked of the X server each time that was ~30 round trips
    per step on a ten-node dialog, more than the rest of the step. Here the children of the
    root window (the top-level windows when no window manager frames them) are learnt once
    and then kept by the events X sends for them: SubstructureNotify on the root window
    (created, destroyed, mapped, unmapped, moved, resized, restacked, reparented) and
    PropertyChange on each of them (title, pid, class, transient-for, type, state, read
    again only after X said they changed). PropertyChange on the root window tells whether a
    window manager publishes _NET_CLIENT_LIST; while one does, its client windows are not
    root children and the callers ask X as before (ufo_desktop_win.c).

    The events are applied by ufo_desktop_xwin_drain_, which never blocks (Xlib reads what
    the socket holds): from ufo_desktop_pump (the owner's event loop, also when the X
    connection's descriptor, ufo_desktop_x_fd, is readable) and before every use. A use
    that must see every change made before it (the window list) makes one round trip first
    (the caller's XGetInputFocus): X delivers every event it generated before answering. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

//  Properties of a window, read when asked for and dropped when X says one changed.
enum {
    S_P_TITLE = 1, S_P_PID = 2, S_P_CLASS = 4, S_P_KIND = 8
};

typedef struct {
    Window xid;
    XWindowAttributes attr;     //  valid when attr_ok (then kept by the events)
    bool attr_ok;
    unsigned props;             //  S_P_* read and not changed since
    ufo_dxwin_info_t info;
} s_win_t;

struct _ufo_dxwin_t {
    bool started;               //  root selected, children learnt
    bool stack_dirty;           //  an event named a sibling we do not hold: ask XQueryTree
    bool client_list_ok;        //  client_list tells whether _NET_CLIENT_LIST exists
    bool client_list;
    GPtrArray *stack;           //  s_win_t*, bottom to top (owned)
    GHashTable *by_xid;         //  Window -> s_win_t* (borrowed)
    Atom a_client_list, a_net_name, a_name, a_pid, a_class, a_transient, a_type, a_state;
};

static void
s_win_free (void *data)
{
    s_win_t *w = data;
    free (w->info.title);
    free (w->info.res_name);
    free (w->info.res_class);
    free (w);
}

static s_win_t *
s_find (ufo_dxwin_t *self, Window xid)
{
    return g_hash_table_lookup (self->by_xid, GSIZE_TO_POINTER ((gsize) xid));
}

static void
s_remove (ufo_dxwin_t *self, Window xid)
{
    s_win_t *w = s_find (self, xid);
    if (!w)
        return;
    g_hash_table_remove (self->by_xid, GSIZE_TO_POINTER ((gsize) xid));
    g_ptr_array_remove (self->stack, w);        //  frees it
}

//  Learns a root child (on top of its siblings unless placed by the caller); its attributes
//  and properties are read when first asked for, after the selection below is in place.
static s_win_t *
s_add (ufo_desktop_t *desk, Window xid)
{
    ufo_dxwin_t *self = desk->xwin;
    s_win_t *w = s_find (self, xid);
    if (w)
        return w;
    w = ufo_calloc (1, sizeof (*w));
    w->xid = xid;
    w->info.pid = -1;
    g_ptr_array_add (self->stack, w);
    g_hash_table_insert (self->by_xid, GSIZE_TO_POINTER ((gsize) xid), w);
    //  an error (the window went at once) comes back asynchronously and is ignored: its
    //  DestroyNotify follows
    XSelectInput (desk->dpy, xid, PropertyChangeMask);
    return w;
}

//  Takes w out of the stacking order (it stays in by_xid: the caller puts it back).
static void
s_unstack (ufo_dxwin_t *self, s_win_t *w)
{
    for (guint i = 0; i < self->stack->len; i++)
        if (g_ptr_array_index (self->stack, i) == w) {
            g_ptr_array_steal_index (self->stack, i);
            return;
        }
}

//  Puts w just above sibling `above` (None: at the bottom).
static void
s_restack (ufo_dxwin_t *self, s_win_t *w, Window above)
{
    s_unstack (self, w);
    if (above == None) {
        g_ptr_array_insert (self->stack, 0, w);
        return;
    }
    for (guint i = 0; i < self->stack->len; i++)
        if (((s_win_t *) g_ptr_array_index (self->stack, i))->xid == above) {
            g_ptr_array_insert (self->stack, (gint) i + 1, w);
            return;
        }
    g_ptr_array_add (self->stack, w);
    self->stack_dirty = true;                   //  a sibling we missed: ask X again
}

//  The root's children in stacking order from X (one round trip): windows we did not know
//  are learnt, windows X no longer has are dropped.
static void
s_query_stack (ufo_desktop_t *desk)
{
    ufo_dxwin_t *self = desk->xwin;
    Window root, parent, *kids = NULL;
    unsigned int n = 0;
    ufo_desktop_x_trap_begin_ (desk);
    Status ok = XQueryTree (desk->dpy, desk->root_win, &root, &parent, &kids, &n);
    ufo_desktop_x_trap_end_ (desk);
    if (!ok)
        return;
    GPtrArray *order = g_ptr_array_new ();
    for (unsigned int i = 0; i < n; i++)
        g_ptr_array_add (order, s_add (desk, kids [i]));
    //  what is left of the old stack is gone
    for (guint i = self->stack->len; i-- > 0;) {
        s_win_t *w = g_ptr_array_index (self->stack, i);
        bool kept = false;
        for (guint k = 0; k < order->len && !kept; k++)
            kept = g_ptr_array_index (order, k) == w;
        if (!kept)
            s_remove (self, w->xid);
    }
    for (guint i = 0; i < order->len; i++)
        g_ptr_array_index (self->stack, i) = g_ptr_array_index (order, i);
    g_ptr_array_unref (order);
    if (kids)
        XFree (kids);
    self->stack_dirty = false;
}

static void
s_start (ufo_desktop_t *desk)
{
    ufo_dxwin_t *self = desk->xwin;
    if (self->started || desk->x_dead)
        return;
    self->started = true;
    //  the selection first: whatever changes after it is told by an event, whatever was
    //  before it is in the answers below
    XSelectInput (desk->dpy, desk->root_win, SubstructureNotifyMask | PropertyChangeMask);
    s_query_stack (desk);
}

static void
s_apply (ufo_desktop_t *desk, const XEvent *ev)
{
    ufo_dxwin_t *self = desk->xwin;
    s_win_t *w;
    switch (ev->type) {
        case CreateNotify:
            if (ev->xcreatewindow.parent == desk->root_win)
                s_add (desk, ev->xcreatewindow.window);      //  on top of its siblings
            break;
        case DestroyNotify:
            if (ev->xdestroywindow.event == desk->root_win)
                s_remove (self, ev->xdestroywindow.window);
            break;
        case ReparentNotify:
            if (ev->xreparent.event != desk->root_win)
                break;
            if (ev->xreparent.parent == desk->root_win) {
                s_remove (self, ev->xreparent.window);        //  its attributes changed
                s_add (desk, ev->xreparent.window);
            }
            else
                s_remove (self, ev->xreparent.window);        //  framed by a window manager
            break;
        case MapNotify:
            w = ev->xmap.event == desk->root_win ? s_find (self, ev->xmap.window) : NULL;
            if (w) {
                w->attr.map_state = IsViewable;             //  the root is always viewable
                w->attr.override_redirect = ev->xmap.override_redirect;
            }
            break;
        case UnmapNotify:
            w = ev->xunmap.event == desk->root_win ? s_find (self, ev->xunmap.window) : NULL;
            if (w)
                w->attr.map_state = IsUnmapped;
            break;
        case ConfigureNotify:
            w = ev->xconfigure.event == desk->root_win ? s_find (self, ev->xconfigure.window) : NULL;
            if (w) {
                w->attr.x = ev->xconfigure.x;
                w->attr.y = ev->xconfigure.y;
                w->attr.width = ev->xconfigure.width;
                w->attr.height = ev->xconfigure.height;
                w->attr.border_width = ev->xconfigure.border_width;
                w->attr.override_redirect = ev->xconfigure.override_redirect;
                s_restack (self, w, ev->xconfigure.above);
            }
            break;
        case GravityNotify:
            w = ev->xgravity.event == desk->root_win ? s_find (self, ev->xgravity.window) : NULL;
            if (w) {
                w->attr.x = ev->xgravity.x;
                w->attr.y = ev->xgravity.y;
            }
            break;
        case CirculateNotify:
            w = ev->xcirculate.event == desk->root_win ? s_find (self, ev->xcirculate.window) : NULL;
            if (w) {
                if (ev->xcirculate.place == PlaceOnTop) {
                    s_unstack (self, w);
                    g_ptr_array_add (self->stack, w);
                }
                else
                    s_restack (self, w, None);
            }
            break;
        case PropertyNotify: {
            Atom a = ev->xproperty.atom;
            if (ev->xproperty.window == desk->root_win) {
                if (a == self->a_client_list)
                    self->client_list_ok = false;
                break;
            }
            w = s_find (self, ev->xproperty.window);
            if (!w)
                break;
            if (a == self->a_net_name || a == self->a_name)
                w->props &= ~(unsigned) S_P_TITLE;
            else if (a == self->a_pid)
                w->props &= ~(unsigned) S_P_PID;
            else if (a == self->a_class)
                w->props &= ~(unsigned) S_P_CLASS;
            else if (a == self->a_transient || a == self->a_type || a == self->a_state)
                w->props &= ~(unsigned) S_P_KIND;
            break;
        }
        default:
            break;
    }
}

ufo_dxwin_t *
ufo_desktop_xwin_new_ (ufo_desktop_t *desk)
{
    ufo_dxwin_t *self = ufo_calloc (1, sizeof (*self));
    self->stack = g_ptr_array_new_with_free_func (s_win_free);
    self->by_xid = g_hash_table_new (g_direct_hash, g_direct_equal);
    Display *dpy = desk->dpy;
    self->a_client_list = XInternAtom (dpy, "_NET_CLIENT_LIST", False);
    self->a_net_name = XInternAtom (dpy, "_NET_WM_NAME", False);
    self->a_name = XA_WM_NAME;
    self->a_pid = XInternAtom (dpy, "_NET_WM_PID", False);
    self->a_class = XA_WM_CLASS;
    self->a_transient = XA_WM_TRANSIENT_FOR;
    self->a_type = XInternAtom (dpy, "_NET_WM_WINDOW_TYPE", False);
    self->a_state = XInternAtom (dpy, "_NET_WM_STATE", False);
    return self;
}

void
ufo_desktop_xwin_destroy_ (ufo_dxwin_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_dxwin_t *self = *self_p;
    g_hash_table_destroy (self->by_xid);
    g_ptr_array_unref (self->stack);
    free (self);
    *self_p = NULL;
}

int
ufo_desktop_x_fd (ufo_desktop_t *self)
{
    assert (self);
    return self->x_dead ? -1 : ConnectionNumber (self->dpy);
}

int
ufo_desktop_xwin_drain_ (ufo_desktop_t *desk)
{
    if (!desk->xwin || desk->x_dead)
        return 0;
    s_start (desk);
    int n = 0;
    //  XPending reads what the socket holds without waiting (and sends what is buffered)
    while (!desk->x_dead && XPending (desk->dpy) > 0) {
        XEvent ev;
        XNextEvent (desk->dpy, &ev);
        ufo_desktop_ping_note_ (desk, &ev);     //  an answer to an input barrier
        s_apply (desk, &ev);
        n++;
    }
    return n;
}

//  The window's attributes from X (one round trip), kept by the events from now on; false
//  when the window is gone.
static bool
s_read_attr (ufo_desktop_t *desk, s_win_t *w)
{
    if (w->attr_ok)
        return true;
    ufo_desktop_x_trap_begin_ (desk);
    Status ok = XGetWindowAttributes (desk->dpy, w->xid, &w->attr);
    if (ufo_desktop_x_trap_end_ (desk) || !ok)
        return false;
    w->attr_ok = true;
    return true;
}

const ufo_dxwin_info_t *
ufo_desktop_xwin_get_ (ufo_desktop_t *desk, int64_t xid, unsigned want)
{
    ufo_desktop_xwin_drain_ (desk);
    return ufo_desktop_xwin_peek_ (desk, xid, want);
}

const ufo_dxwin_info_t *
ufo_desktop_xwin_peek_ (ufo_desktop_t *desk, int64_t xid, unsigned want)
{
    ufo_dxwin_t *self = desk->xwin;
    if (!self || desk->x_dead || !self->started || xid <= 0 || xid > (int64_t) UINT32_MAX)
        return NULL;
    s_win_t *w = s_find (self, (Window) xid);
    if (!w)
        return NULL;
    if (!s_read_attr (desk, w)) {
        //  gone (its DestroyNotify is on its way): the caller asks X, which says so
        s_remove (self, (Window) xid);
        return NULL;
    }
    ufo_dxwin_info_t *info = &w->info;
    info->attr = &w->attr;
    info->viewable = w->attr.map_state == IsViewable;
    info->x = w->attr.x + w->attr.border_width;     //  as XTranslateCoordinates (w, root, 0, 0)
    info->y = w->attr.y + w->attr.border_width;
    if ((want & UFO_DXWIN_TITLE) && !(w->props & S_P_TITLE)) {
        free (info->title);
        info->title = ufo_desktop_x_title_ (desk, w->xid);
        w->props |= S_P_TITLE;
    }
    if ((want & UFO_DXWIN_PID) && !(w->props & S_P_PID)) {
        info->pid = ufo_desktop_x_pid_ (desk, w->xid);
        w->props |= S_P_PID;
    }
    if ((want & UFO_DXWIN_CLASS) && !(w->props & S_P_CLASS)) {
        free (info->res_name);
        free (info->res_class);
        info->res_name = info->res_class = NULL;
        XClassHint hint = { NULL, NULL };
        ufo_desktop_x_trap_begin_ (desk);
        info->has_class = XGetClassHint (desk->dpy, w->xid, &hint) != 0;
        ufo_desktop_x_trap_end_ (desk);
        if (hint.res_name) {
            info->res_name = ufo_strdup (hint.res_name);
            XFree (hint.res_name);
        }
        if (hint.res_class) {
            info->res_class = ufo_strdup (hint.res_class);
            XFree (hint.res_class);
        }
        w->props |= S_P_CLASS;
    }
    if ((want & UFO_DXWIN_KIND) && !(w->props & S_P_KIND)) {
        ufo_desktop_x_trap_begin_ (desk);
        ufo_desktop_x_window_kind_ (desk, w->xid, &info->transient, &info->dialog, &info->modal);
        ufo_desktop_x_trap_end_ (desk);
        w->props |= S_P_KIND;
    }
    return info;
}

bool
ufo_desktop_xwin_listable_ (ufo_desktop_t *desk)
{
    ufo_dxwin_t *self = desk->xwin;
    if (!self || desk->x_dead)
        return false;
    ufo_desktop_xwin_drain_ (desk);
    if (!self->client_list_ok) {
        Atom actual;
        int format;
        unsigned long n = 0, after = 0;
        unsigned char *data = NULL;
        ufo_desktop_x_trap_begin_ (desk);
        int rc = XGetWindowProperty (desk->dpy, desk->root_win, self->a_client_list, 0, 1, False,
                                     XA_WINDOW, &actual, &format, &n, &after, &data);
        bool failed = ufo_desktop_x_trap_end_ (desk) != 0;
        self->client_list = rc == Success && data && format == 32 && n + after > 0;
        if (data)
            XFree (data);
        if (failed || rc != Success)
            return false;       //  cannot tell: ask X as before
        self->client_list_ok = true;
    }
    return !self->client_list;
}

size_t
ufo_desktop_xwin_stack_ (ufo_desktop_t *desk, Window **wins_p)
{
    ufo_dxwin_t *self = desk->xwin;
    *wins_p = NULL;
    if (!self || desk->x_dead)
        return 0;
    ufo_desktop_xwin_drain_ (desk);
    if (self->stack_dirty)
        s_query_stack (desk);
    size_t n = self->stack->len;
    Window *wins = ufo_calloc (n ? n : 1, sizeof (Window));
    for (size_t i = 0; i < n; i++)
        wins [i] = ((s_win_t *) g_ptr_array_index (self->stack, (guint) i))->xid;
    *wins_p = wins;
    return n;
}

Window
ufo_desktop_xwin_toplevel_ (ufo_desktop_t *desk, Window win)
{
    Window top = win, root, parent, *kids = NULL;
    unsigned int n = 0;
    for (int depth = 0; depth < 16 && !ufo_desktop_xwin_peek_ (desk, (int64_t) top, 0); depth++) {
        ufo_desktop_x_trap_begin_ (desk);
        Status ok = XQueryTree (desk->dpy, top, &root, &parent, &kids, &n);
        ufo_desktop_x_trap_end_ (desk);
        if (!ok)
            break;
        if (kids)
            XFree (kids);
        kids = NULL;
        if (parent == root || parent == None)
            break;
        top = parent;
    }
    return top;
}
