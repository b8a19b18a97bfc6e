/*  ufo_desktop.c - the desktop object: X display, AT-SPI bus and its events, the event
    loop glue (pump) and operations. Windows, launching and closing: ufo_desktop_win.c. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"
#include <sys/wait.h>
#include <X11/extensions/Xcomposite.h>

static const char *s_default_controls [] = {
    "Button", "Edit", "TabItem", "Document", "ListItem", "MenuItem", "ScrollBar", "TreeItem",
    "Hyperlink", "ComboBox", "RadioButton", "Spinner", "CheckBox", "Group", "Text", "List"
};

//  Events that keep the cache fresh; registered with the AT-SPI registry so that
//  toolkits which emit only what someone listens to (GTK3) send them.
static const char *s_events [] = {
    "object:children-changed", "object:property-change", "object:state-changed",
    "object:text-changed", "object:bounds-changed", "object:visible-data-changed",
    "object:row-reordered", "object:model-changed",
    "window:activate", "window:create", "window:destroy",
    "document:load-complete", "document:reload",
    //  Qt sends a scroll bar's value change (PropertyChange accessible-value) only to this
    //  listener, not to property-change's (ufo_desktop_scroll.c)
    "object:value-changed"
};

int64_t
ufo_desktop_now_ms_ (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

//  --- X error trapping: Xlib's default handler exits the process ---------------------------

static int s_x_error_code = 0;

static int
s_x_error_handler (Display *dpy, XErrorEvent *ev)
{
    UFO_UNUSED (dpy);
    s_x_error_code = ev->error_code ? ev->error_code : 1;
    return 0;
}

//  Called by Xlib when the connection to the X server is lost. Returning (instead of the
//  default exit) leaves the display unusable but the process alive; we stop using it.
static void
s_x_io_exit (Display *dpy, void *data)
{
    UFO_UNUSED (dpy);
    ufo_desktop_t *desk = data;
    if (!desk->x_dead)
        ufo_error ("desktop: lost the connection to the X display");
    desk->x_dead = true;
}

//  Xlib's default I/O error handler exits the process; this one returns, and the exit
//  handler above marks the desktop so that nothing uses the display again.
static int
s_x_io_handler (Display *dpy)
{
    UFO_UNUSED (dpy);
    return 0;
}

//  Makes the server answer every request sent so far (their errors reach the handler), with
//  a round trip only if one is outstanding: after a request with a reply (XGetWindowAttributes,
//  XQueryTree, XShmGetImage ...) all earlier ones are answered, and a sync would cost a
//  second round trip for nothing.
static void
s_x_settle (Display *dpy)
{
    if (LastKnownRequestProcessed (dpy) != NextRequest (dpy) - 1)
        XSync (dpy, False);
}

int
ufo_desktop_x_trap_begin_ (ufo_desktop_t *desk)
{
    s_x_settle (desk->dpy);
    s_x_error_code = 0;
    return 0;
}

int
ufo_desktop_x_trap_end_ (ufo_desktop_t *desk)
{
    s_x_settle (desk->dpy);
    int code = desk->x_dead ? BadImplementation : s_x_error_code;
    s_x_error_code = 0;
    return code;
}

static char *
s_x_prop_string (Display *dpy, Window w, const char *name, const char *type_name)
{
    Atom prop = XInternAtom (dpy, name, False);
    Atom type = type_name ? XInternAtom (dpy, type_name, False) : AnyPropertyType;
    Atom actual;
    int format;
    unsigned long n, after;
    unsigned char *data = NULL;
    if (XGetWindowProperty (dpy, w, prop, 0, 4096, False, type, &actual, &format, &n, &after,
                            &data) != Success || !data)
        return NULL;
    char *s = (format == 8 && n > 0) ? ufo_strndup ((char *) data, n) : NULL;
    XFree (data);
    return s;
}

static long
s_x_prop_card (Display *dpy, Window w, const char *name)
{
    Atom prop = XInternAtom (dpy, name, False);
    Atom actual;
    int format;
    unsigned long n, after;
    unsigned char *data = NULL;
    long value = -1;
    if (XGetWindowProperty (dpy, w, prop, 0, 1, False, XA_CARDINAL, &actual, &format, &n,
                            &after, &data) == Success && data) {
        if (format == 32 && n == 1)
            value = (long) * (unsigned long *) data;
        XFree (data);
    }
    return value;
}

char *
ufo_desktop_x_title_ (ufo_desktop_t *desk, Window win)
{
    ufo_desktop_x_trap_begin_ (desk);
    char *title = s_x_prop_string (desk->dpy, win, "_NET_WM_NAME", "UTF8_STRING");
    if (!title)
        title = s_x_prop_string (desk->dpy, win, "WM_NAME", NULL);
    ufo_desktop_x_trap_end_ (desk);
    if (!title)
        title = ufo_strdup ("");
    else if (!g_utf8_validate (title, -1, NULL)) {
        //  WM_NAME may be Latin-1: keep what is valid
        char *valid = g_utf8_make_valid (title, -1);
        free (title);
        title = ufo_strdup (valid);
        g_free (valid);
    }
    return title;
}

int
ufo_desktop_x_pid_ (ufo_desktop_t *desk, Window win)
{
    ufo_desktop_x_trap_begin_ (desk);
    int pid = (int) s_x_prop_card (desk->dpy, win, "_NET_WM_PID");
    ufo_desktop_x_trap_end_ (desk);
    return pid;
}

bool
ufo_desktop_x_window_info_ (ufo_desktop_t *desk, int64_t xid, int *x, int *y, int *w, int *h,
                            char **title, int *pid)
{
    if (xid <= 0 || xid > (int64_t) UINT32_MAX || desk->x_dead)
        return false;
    Window win = (Window) xid;
    //  a top-level window without a window manager: from what X events told (ufo_desktop_xwin.c)
    const ufo_dxwin_info_t *known = ufo_desktop_xwin_get_ (desk, xid, (title ? UFO_DXWIN_TITLE : 0)
                                                                      | (pid ? UFO_DXWIN_PID : 0));
    if (known) {
        if (!known->viewable)
            return false;
        if (x) *x = known->x;
        if (y) *y = known->y;
        if (w) *w = known->attr->width;
        if (h) *h = known->attr->height;
        if (title) *title = ufo_strdup (known->title);
        if (pid) *pid = known->pid;
        return true;
    }
    XWindowAttributes attr;
    ufo_desktop_x_trap_begin_ (desk);
    Status ok = XGetWindowAttributes (desk->dpy, win, &attr);
    Window child;
    int rx = 0, ry = 0;
    if (ok)
        XTranslateCoordinates (desk->dpy, win, desk->root_win, 0, 0, &rx, &ry, &child);
    if (ufo_desktop_x_trap_end_ (desk) || !ok || attr.map_state != IsViewable)
        return false;
    if (x) *x = rx;
    if (y) *y = ry;
    if (w) *w = attr.width;
    if (h) *h = attr.height;
    if (title)
        *title = ufo_desktop_x_title_ (desk, win);
    if (pid)
        *pid = ufo_desktop_x_pid_ (desk, win);
    return true;
}

//  --- AT-SPI events ---------------------------------------------------------------------

static void
s_on_signal (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
             const char *member, GVariant *params, gpointer data)
{
    UFO_UNUSED (conn);
    UFO_UNUSED (iface);
    ufo_desktop_t *desk = data;
    if (!sender || !path || !member)
        return;
    desk->event_seq++;
    ufo_trace ("desktop: event %s %s %s", sender, path, member);
    gint64 *when = g_new (gint64, 1);
    *when = ufo_desktop_now_ms_ ();
    g_hash_table_replace (desk->bus_event_ms, g_strdup (sender), when);
    const char *detail = "";
    if (params && g_variant_is_of_type (params, G_VARIANT_TYPE_TUPLE)
    &&  g_variant_n_children (params) > 0) {
        GVariant *first = g_variant_get_child_value (params, 0);
        if (g_variant_is_of_type (first, G_VARIANT_TYPE_STRING))
            detail = g_variant_get_string (first, NULL);
        //  object:state-changed:focused with detail1 = 1: where untargeted keys will go
        if (streq (member, "StateChanged") && streq (detail, "focused")
        &&  g_variant_n_children (params) > 1) {
            GVariant *d1 = g_variant_get_child_value (params, 1);
            if (g_variant_is_of_type (d1, G_VARIANT_TYPE_INT32) && g_variant_get_int32 (d1) == 1) {
                g_free (desk->focus_key);
                desk->focus_key = ufo_dnode_key_ (sender, path);
            }
            g_variant_unref (d1);
        }
        if (streq (member, "TextChanged") && g_str_has_prefix (detail, "insert"))
            ufo_desktop_inserted_ (desk, params);       //  typed keys arriving
        ufo_desktop_invalidate_ (desk, sender, path, member, detail);
        g_variant_unref (first);
    }
    else
        ufo_desktop_invalidate_ (desk, sender, path, member, detail);
}

static GDBusConnection *
s_a11y_bus (ufo_error_t *err)
{
    GError *gerr = NULL;
    char *address = NULL;
    const char *env = getenv ("AT_SPI_BUS_ADDRESS");
    if (env && *env)
        address = g_strdup (env);
    else {
        GDBusConnection *session = g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, &gerr);
        if (!session) {
            ufo_error_set (err, UFO_E_UNAVAILABLE, "no D-Bus session bus: %s",
                           gerr ? gerr->message : "?");
            g_clear_error (&gerr);
            return NULL;
        }
        GVariant *reply = g_dbus_connection_call_sync (session, "org.a11y.Bus", "/org/a11y/bus",
            "org.a11y.Bus", "GetAddress", NULL, G_VARIANT_TYPE ("(s)"),
            G_DBUS_CALL_FLAGS_NONE, 20000, NULL, &gerr);
        g_object_unref (session);
        if (!reply) {
            ufo_error_set (err, UFO_E_UNAVAILABLE, "AT-SPI bus not available: %s",
                           gerr ? gerr->message : "?");
            g_clear_error (&gerr);
            return NULL;
        }
        g_variant_get (reply, "(s)", &address);
        g_variant_unref (reply);
    }
    GDBusConnection *bus = g_dbus_connection_new_for_address_sync (address,
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
        | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &gerr);
    if (!bus) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot connect to the AT-SPI bus %s: %s",
                       address, gerr ? gerr->message : "?");
        g_clear_error (&gerr);
    }
    g_free (address);
    return bus;
}

ufo_desktop_t *
ufo_desktop_new (const ufo_value_t *options, ufo_error_t *err)
{
    const char *display = ufo_value_map_str (options, "display", NULL);
    XSetErrorHandler (s_x_error_handler);
    XSetIOErrorHandler (s_x_io_handler);
    Display *dpy = XOpenDisplay (display);
    if (!dpy) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot open X display %s",
                       display ? display : (getenv ("DISPLAY") ? getenv ("DISPLAY") : "(unset)"));
        return NULL;
    }
    ufo_desktop_t *self = ufo_calloc (1, sizeof (*self));
    self->dpy = dpy;
    XSetIOErrorExitHandler (dpy, s_x_io_exit, self);
    self->root_win = DefaultRootWindow (dpy);
    self->xwin = ufo_desktop_xwin_new_ (self);
    self->screen_w = DisplayWidth (dpy, DefaultScreen (dpy));
    self->screen_h = DisplayHeight (dpy, DefaultScreen (dpy));
    int ev_base, err_base, major = 0, minor = 4;
    if (XCompositeQueryExtension (dpy, &ev_base, &err_base)
    &&  XCompositeQueryVersion (dpy, &major, &minor) && (major > 0 || minor >= 2)) {
        //  Keeps every top-level window's pixels in its own buffer while this
        //  connection lives, so that covered windows can be captured.
        XCompositeRedirectSubwindows (dpy, self->root_win, CompositeRedirectAutomatic);
        self->composite = true;
    }
    self->action_timeout_ms = (int) ufo_value_map_int (options, "action_timeout_ms", 3000);
    self->settle_ms = (int) ufo_value_map_int (options, "settle_ms", 60);
    self->text_excerpt = (int) ufo_value_map_int (options, "text_excerpt", 120);
    if (self->action_timeout_ms < 100 || self->action_timeout_ms > 600000)
        self->action_timeout_ms = 3000;
    if (self->settle_ms < 0 || self->settle_ms > 5000)
        self->settle_ms = 60;
    if (self->text_excerpt < 0 || self->text_excerpt > 100000)
        self->text_excerpt = 120;
    const ufo_value_t *launchers = ufo_value_map_get (options, "launchers");
    self->launchers = ufo_value_type (launchers) == UFO_TMAP ? ufo_value_dup (launchers)
                                                             : ufo_value_new_map ();
    const ufo_value_t *list = ufo_value_map_get (options, "control_list");
    if (ufo_value_type (list) == UFO_TLIST)
        self->control_list = ufo_value_dup (list);
    else {
        self->control_list = ufo_value_new_list ();
        for (size_t i = 0; i < UFO_ARRAY_SIZE (s_default_controls); i++)
            ufo_value_list_push_str (self->control_list, s_default_controls [i]);
    }
    self->nodes = g_hash_table_new (g_str_hash, g_str_equal);
    self->bus_pid = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    self->apps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    self->bus_event_ms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
    self->bus_unplaced_ms = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
    self->bus_toolkit = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
    self->entered = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
    self->children = g_array_new (FALSE, FALSE, sizeof (pid_t));
    self->ops = g_ptr_array_new ();
    //  The context stays acquired by this thread for the desktop's life: GDBus's I/O thread
    //  then signals the context's wake-up fd (ufo_desktop_fd) for every reply or event it
    //  queues, also while nobody iterates. (G_MAIN_CONTEXT_FLAGS_OWNERLESS_POLLING does the
    //  same but measured twice as slow for a snapshot.)
    self->ctx = g_main_context_new ();
    g_main_context_acquire (self->ctx);
    self->wake_fd = -1;

    g_main_context_push_thread_default (self->ctx);
    self->bus = s_a11y_bus (err);
    if (self->bus) {
        self->sig_object = g_dbus_connection_signal_subscribe (self->bus, NULL,
            "org.a11y.atspi.Event.Object", NULL, NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
            s_on_signal, self, NULL);
        self->sig_window = g_dbus_connection_signal_subscribe (self->bus, NULL,
            "org.a11y.atspi.Event.Window", NULL, NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
            s_on_signal, self, NULL);
        //  a web page that finished loading (its parts may have come without events)
        self->sig_document = g_dbus_connection_signal_subscribe (self->bus, NULL,
            "org.a11y.atspi.Event.Document", NULL, NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
            s_on_signal, self, NULL);
        for (size_t i = 0; i < UFO_ARRAY_SIZE (s_events); i++)
            g_dbus_connection_call (self->bus, "org.a11y.atspi.Registry",
                "/org/a11y/atspi/registry", "org.a11y.atspi.Registry", "RegisterEvent",
                g_variant_new ("(s@ass)", s_events [i], g_variant_new_strv (NULL, 0), ""),
                NULL, G_DBUS_CALL_FLAGS_NONE, UFO_DESKTOP_CALL_TIMEOUT_MS, NULL, NULL, NULL);
    }
    g_main_context_pop_thread_default (self->ctx);
    if (!self->bus) {
        ufo_desktop_destroy (&self);
        return NULL;
    }
    return self;
}

ufo_dwin_t *
ufo_desktop_win_ (ufo_desktop_t *desk, int64_t xid, bool create)
{
    for (ufo_dwin_t *w = desk->wins; w; w = w->next)
        if (w->xid == xid)
            return w;
    if (!create)
        return NULL;
    ufo_dwin_t *w = ufo_calloc (1, sizeof (*w));
    w->xid = xid;
    w->labels = g_ptr_array_new_with_free_func (ufo_dlabel_free_);
    w->next = desk->wins;
    desk->wins = w;
    return w;
}

void
ufo_desktop_win_forget_ (ufo_desktop_t *desk, int64_t xid)
{
    for (ufo_dwin_t **p = &desk->wins; *p; p = &(*p)->next) {
        if ((*p)->xid != xid)
            continue;
        ufo_dwin_t *w = *p;
        *p = w->next;
        if (w->root)
            ufo_dnode_free_ (desk, w->root);
        g_ptr_array_unref (w->labels);
        ufo_value_destroy (&w->controls);
        free (w->sheet_key);
        free (w);
        return;
    }
}

void
ufo_desktop_cache_clear (ufo_desktop_t *self)
{
    assert (self);
    while (self->wins)
        ufo_desktop_win_forget_ (self, self->wins->xid);
    if (self->bus_pid)
        g_hash_table_remove_all (self->bus_pid);
    if (self->bus_toolkit)
        g_hash_table_remove_all (self->bus_toolkit);
    if (self->entered)              //  windows new again: the pointer is moved in again
        g_hash_table_remove_all (self->entered);
    if (self->apps) {
        GHashTableIter iter;
        gpointer key, node;
        g_hash_table_iter_init (&iter, self->apps);
        while (g_hash_table_iter_next (&iter, &key, &node))
            ufo_dnode_free_ (self, node);
        g_hash_table_remove_all (self->apps);
    }
}

static void s_reap (ufo_desktop_t *self);

void
ufo_desktop_destroy (ufo_desktop_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_desktop_t *self = *self_p;
    for (guint i = 0; self->ops && i < self->ops->len; i++) {
        ufo_desktop_op_t *op = g_ptr_array_index (self->ops, i);
        if (!op->done)
            ufo_desktop_op_finish_ (op, false, NULL, "the desktop was closed");
        op->desk = NULL;
    }
    ufo_desktop_cache_clear (self);
    if (self->bus) {
        g_dbus_connection_signal_unsubscribe (self->bus, self->sig_object);
        g_dbus_connection_signal_unsubscribe (self->bus, self->sig_window);
        g_dbus_connection_signal_unsubscribe (self->bus, self->sig_document);
        g_dbus_connection_close_sync (self->bus, NULL, NULL);
        //  let cancelled calls deliver their errors so their operations are released
        for (int i = 0; i < 1000 && g_main_context_iteration (self->ctx, FALSE); i++)
            ;
        g_object_unref (self->bus);
    }
    if (self->ctx) {
        for (int i = 0; i < 100 && g_main_context_iteration (self->ctx, FALSE); i++)
            ;
        g_main_context_release (self->ctx);
        g_main_context_unref (self->ctx);
    }
    s_reap (self);
    if (self->nodes)
        g_hash_table_destroy (self->nodes);
    if (self->bus_pid)
        g_hash_table_destroy (self->bus_pid);
    if (self->bus_event_ms)
        g_hash_table_destroy (self->bus_event_ms);
    if (self->entered)
        g_hash_table_destroy (self->entered);
    if (self->bus_unplaced_ms)
        g_hash_table_destroy (self->bus_unplaced_ms);
    if (self->bus_toolkit)
        g_hash_table_destroy (self->bus_toolkit);
    if (self->apps)
        g_hash_table_destroy (self->apps);
    g_free (self->focus_key);
    if (self->children)
        g_array_free (self->children, TRUE);
    if (self->ops)
        g_ptr_array_unref (self->ops);
    ufo_value_destroy (&self->launchers);
    ufo_value_destroy (&self->control_list);
    ufo_desktop_shm_free_ (self);
    ufo_desktop_xwin_destroy_ (&self->xwin);
    if (self->dpy && !self->x_dead)
        XCloseDisplay (self->dpy);
    free (self);
    *self_p = NULL;
}

static void
s_reap (ufo_desktop_t *self)
{
    for (guint i = 0; self->children && i < self->children->len; ) {
        pid_t pid = g_array_index (self->children, pid_t, i);
        if (waitpid (pid, NULL, WNOHANG) == pid)
            g_array_remove_index_fast (self->children, i);
        else
            i++;
    }
}

int
ufo_desktop_pump (ufo_desktop_t *self)
{
    assert (self);
    int n = 0;
    while (n < 10000 && g_main_context_iteration (self->ctx, FALSE))
        n++;
    n += ufo_desktop_xwin_drain_ (self);
    s_reap (self);
    return n;
}

int
ufo_desktop_fd (ufo_desktop_t *self)
{
    assert (self);
    if (self->wake_fd >= 0)
        return self->wake_fd;
    //  The context's only poll fd is its wake-up fd (GDBus does its I/O in its own thread
    //  and wakes this context when a reply or signal is queued): learn it from one
    //  prepare/query/check/dispatch cycle.
    if (!g_main_context_acquire (self->ctx))
        return -1;
    gint priority = 0, timeout = 0;
    GPollFD fds [8];
    g_main_context_prepare (self->ctx, &priority);
    gint n = g_main_context_query (self->ctx, priority, &timeout, fds, 8);
    g_main_context_check (self->ctx, priority, fds, n < 8 ? n : 8);
    g_main_context_dispatch (self->ctx);
    g_main_context_release (self->ctx);
    if (n == 1)
        self->wake_fd = fds [0].fd;
    return self->wake_fd;
}

static gboolean
s_timeout_cb (gpointer data)
{
    UFO_UNUSED (data);
    return G_SOURCE_REMOVE;
}

int
ufo_desktop_iterate (ufo_desktop_t *self, int timeout_ms)
{
    assert (self);
    if (timeout_ms <= 0)
        return ufo_desktop_pump (self);
    //  One blocking iteration bounded by a timeout source, then whatever else is ready.
    GSource *timer = g_timeout_source_new ((guint) timeout_ms);
    g_source_set_callback (timer, s_timeout_cb, NULL, NULL);
    g_source_attach (timer, self->ctx);
    int n = g_main_context_iteration (self->ctx, TRUE) ? 1 : 0;
    g_source_destroy (timer);
    g_source_unref (timer);
    return n + ufo_desktop_pump (self);
}

//  --- Operations ----------------------------------------------------------------------------

ufo_desktop_op_t *
ufo_desktop_op_new_ (ufo_desktop_t *desk, int timeout_ms)
{
    ufo_desktop_op_t *op = ufo_calloc (1, sizeof (*op));
    op->desk = desk;
    op->refs = 1;
    op->started = ufo_desktop_now_ms_ ();
    op->deadline = op->started + (timeout_ms > 0 ? timeout_ms : 1);
    g_ptr_array_add (desk->ops, op);
    return op;
}

static void
s_op_unref (ufo_desktop_op_t *op)
{
    if (--op->refs > 0)
        return;
    if (op->desk)
        g_ptr_array_remove_fast (op->desk->ops, op);
    if (op->free_state)
        op->free_state (op);
    ufo_value_destroy (&op->result);
    free (op);
}

void
ufo_desktop_op_finish_ (ufo_desktop_op_t *op, bool success, const char *text,
                        const char *error_format, ...)
{
    if (op->done)
        return;
    op->done = true;
    if (!op->result || ufo_value_type (op->result) != UFO_TMAP) {
        ufo_value_destroy (&op->result);
        op->result = ufo_value_new_map ();
    }
    ufo_value_map_set_bool (op->result, "success", success);
    char message [512] = "";
    if (error_format) {
        va_list args;
        va_start (args, error_format);
        vsnprintf (message, sizeof (message), error_format, args);
        va_end (args);
    }
    ufo_value_map_set_str (op->result, "error", message);
    if (!ufo_value_map_has (op->result, "text") || text)
        ufo_value_map_set_str (op->result, "text", text ? text : "");
    if (op->wait_from_us > 0)           //  the application's reaction, not ours
        ufo_value_map_set_float (op->result, "wait_s",
                                 (double) (ufo_time_mono_us () - op->wait_from_us) / 1e6);
}

bool
ufo_desktop_op_done (ufo_desktop_op_t *op)
{
    if (!op)
        return true;
    if (op->done)
        return true;
    if (!op->desk) {
        ufo_desktop_op_finish_ (op, false, NULL, "the desktop was closed");
        return true;
    }
    ufo_desktop_pump (op->desk);
    if (!op->done && op->poll && op->poll (op))
        return true;
    if (!op->done && ufo_desktop_now_ms_ () > op->deadline)
        ufo_desktop_op_finish_ (op, false, NULL, "timed out after %" PRId64 " ms",
                                op->deadline - op->started);
    return op->done;
}

int64_t
ufo_desktop_op_deadline (const ufo_desktop_op_t *op)
{
    return op ? op->deadline : 0;
}

int64_t
ufo_desktop_op_wake (const ufo_desktop_op_t *op)
{
    if (!op)
        return 0;
    if (op->done)
        return ufo_desktop_now_ms_ ();
    int64_t wake = op->wake ? op->wake (op) : op->deadline;
    return wake < op->deadline ? wake : op->deadline;
}

ufo_value_t *
ufo_desktop_op_take_result (ufo_desktop_op_t *op)
{
    if (!op || !op->done)
        return NULL;
    ufo_value_t *result = op->result;
    op->result = NULL;
    return result ? result : ufo_value_new_map ();
}

void
ufo_desktop_op_destroy (ufo_desktop_op_t **op_p)
{
    if (!op_p || !*op_p)
        return;
    ufo_desktop_op_t *op = *op_p;
    op->cancelled = true;
    op->handle_gone = true;
    s_op_unref (op);
    *op_p = NULL;
}

ufo_value_t *
ufo_desktop_op_run (ufo_desktop_t *self, ufo_desktop_op_t **op_p)
{
    assert (op_p && *op_p);
    ufo_desktop_op_t *op = *op_p;
    //  bounded: every operation has a deadline, after which op_done finishes it
    while (!ufo_desktop_op_done (op)) {
        int64_t left = ufo_desktop_op_wake (op) - ufo_desktop_now_ms_ ();
        ufo_desktop_iterate (self, (int) (left < 1 ? 1 : left > 50 ? 50 : left));
    }
    ufo_value_t *result = ufo_desktop_op_take_result (op);
    ufo_desktop_op_destroy (op_p);
    return result;
}

typedef struct {
    ufo_desktop_op_t *op;
    ufo_reply_fn fn;
    void *data;
} s_call_t;

static void
s_call_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
    s_call_t *call = user_data;
    GError *gerr = NULL;
    GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &gerr);
    ufo_desktop_op_t *op = call->op;
    op->pending--;
    if (op->desk)
        call->fn (op, reply, reply ? NULL : (gerr ? gerr->message : "D-Bus error"), call->data);
    else
        call->fn (NULL, NULL, "closed", call->data);        //  lets fn free its data
    if (reply)
        g_variant_unref (reply);
    g_clear_error (&gerr);
    s_op_unref (op);
    free (call);
}

void
ufo_desktop_call_ (ufo_desktop_op_t *op, const char *bus, const char *path, const char *iface,
                   const char *method, GVariant *params, const char *reply_type,
                   ufo_reply_fn fn, void *data)
{
    s_call_t *call = ufo_calloc (1, sizeof (*call));
    call->op = op;
    call->fn = fn;
    call->data = data;
    op->refs++;
    op->pending++;
    op->desk->calls++;
    ufo_trace ("desktop: call %s %s", method, path);
    g_main_context_push_thread_default (op->desk->ctx);
    g_dbus_connection_call (op->desk->bus, bus, path, iface, method, params,
                            reply_type ? G_VARIANT_TYPE (reply_type) : NULL,
                            G_DBUS_CALL_FLAGS_NO_AUTO_START, UFO_DESKTOP_CALL_TIMEOUT_MS, NULL,
                            s_call_done, call);
    g_main_context_pop_thread_default (op->desk->ctx);
}

ufo_value_t *
ufo_desktop_rect_value_ (int64_t x, int64_t y, int64_t w, int64_t h)
{
    ufo_value_t *rect = ufo_value_new_list ();
    ufo_value_list_push_int (rect, x);
    ufo_value_list_push_int (rect, y);
    ufo_value_list_push_int (rect, x + w);
    ufo_value_list_push_int (rect, y + h);
    return rect;
}
