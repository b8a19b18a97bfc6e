/*  ufo_desktop_find.c - finding the accessible window of an X window: the application by
    pid (registry children, GetConnectionUnixProcessID, cached per bus name), its toolkit
    (Application ToolkitName and Version, read once per bus name: GTK4 never sets SHOWING,
    GTK3 reports what an action changes by events), and the window by title. Then the walk starts.

    A window shows up in X before its application is on the accessibility bus (a freshly
    launched editor; in a fresh session even the registry may not run yet), and an
    application's accessible window may get its title after the X window: a failed look-up
    is tried again, when the next AT-SPI event arrives (an application registering makes the
    registry announce it) or after 250 ms at the latest, for UFO_DESKTOP_APP_WAIT_MS in all;
    only then does the snapshot fail. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

#define S_RETRY_MS 250          //  try again at the latest after this
#define S_RETRY_MIN_MS 40       //  and not more often than this, whatever the events

//  A look-up failed: try again later while the wait lasts, else end the snapshot with the
//  error (and how long it waited).
static void
s_find_fail (ufo_desktop_op_t *op, const char *format, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_find_fail (ufo_desktop_op_t *op, const char *format, ...)
{
    ufo_dsnap_t *st = op->state;
    char message [400];
    va_list ap;
    va_start (ap, format);
    vsnprintf (message, sizeof message, format, ap);
    va_end (ap);
    int64_t now = ufo_desktop_now_ms_ ();
    if (now < st->find_until) {
        ufo_trace ("desktop: %s; trying again", message);
        free (st->app_bus);
        st->app_bus = NULL;
        g_ptr_array_set_size (st->frames, 0);
        for (guint i = 0; i < st->frame_names->len; i++)
            g_free (g_ptr_array_index (st->frame_names, i));
        g_ptr_array_set_size (st->frame_names, 0);
        st->find_waiting = true;
        st->find_seq = op->desk->event_seq;
        return;
    }
    if (st->find_attempts > 1)
        ufo_desktop_op_finish_ (op, false, NULL, "%s (waited %" PRId64 " ms, %d attempts)", message,
                                now - (st->find_until - UFO_DESKTOP_APP_WAIT_MS), st->find_attempts);
    else
        ufo_desktop_op_finish_ (op, false, NULL, "%s", message);
}

//  The index of the only frame whose name is not the title of another X window of the same
//  process, or -1.
static int
s_pick_unclaimed (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    ufo_value_t *wins = ufo_desktop_windows (op->desk, NULL);
    int pick = -1, count = 0;
    for (guint i = 0; i < st->frames->len; i++) {
        const char *name = g_ptr_array_index (st->frame_names, i);
        bool claimed = false;
        for (size_t k = 0; k < ufo_value_size (wins) && !claimed; k++) {
            const ufo_value_t *w = ufo_value_list_at (wins, k);
            claimed = ufo_value_map_int (w, "pid", 0) == st->pid
                   && ufo_value_map_int (w, "xid", 0) != st->xid
                   && streq (ufo_value_map_str (w, "title", ""), name);
        }
        if (!claimed) {
            pick = (int) i;
            count++;
        }
    }
    ufo_value_destroy (&wins);
    return count == 1 ? pick : -1;
}

static void
s_on_frame_name (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    size_t index = (size_t) (uintptr_t) data;
    UFO_UNUSED (error);
    if (!op)
        return;
    ufo_dsnap_t *st = op->state;
    GVariant *v = NULL;
    if (reply)
        g_variant_get (reply, "(v)", &v);
    g_ptr_array_index (st->frame_names, index) = g_strdup (
        v && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING) ? g_variant_get_string (v, NULL) : "");
    if (v)
        g_variant_unref (v);
    if (--st->frames_left > 0 || op->done || op->cancelled)
        return;
    //  the window whose accessible name is the X title; else the only one; else the only one
    //  not named after another X window of the application (GTK4 names a window that is not
    //  active after its class, "ClocksWindow", while its modal dialog is up)
    int pick = -1;
    for (guint i = 0; i < st->frames->len && pick < 0; i++)
        if (streq (g_ptr_array_index (st->frame_names, i), st->title))
            pick = (int) i;
    if (pick < 0 && st->frames->len == 1)
        pick = 0;
    if (pick < 0)
        pick = s_pick_unclaimed (op);
    if (pick < 0) {
        s_find_fail (op, "no accessible window titled '%s' in %s", st->title, st->app_bus);
        return;
    }
    const char *key = g_ptr_array_index (st->frames, (guint) pick);
    const char *space = strchr (key, ' ');
    char *bus = g_strndup (key, (gsize) (space - key));
    ufo_dwin_t *win = ufo_desktop_win_ (op->desk, st->xid, true);
    if (win->root)
        ufo_dnode_free_ (op->desk, win->root);
    win->root = ufo_dnode_new_ (op->desk, bus, space + 1, NULL);
    win->pid = st->pid;
    win->width = st->ww;
    win->height = st->wh;
    win->uses_showing = st->uses_showing;
    g_free (bus);
    ufo_desktop_walk_start_ (op, win);
}

static void
s_on_frames (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done || op->cancelled)
        return;
    ufo_dsnap_t *st = op->state;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "cannot list windows of %s: %s", st->app_bus,
                                error);
        return;
    }
    GVariant *arr = g_variant_get_child_value (reply, 0);
    GVariantIter iter;
    const char *bus, *path;
    g_variant_iter_init (&iter, arr);
    while (g_variant_iter_next (&iter, "(&s&o)", &bus, &path) && st->frames->len < 256) {
        g_ptr_array_add (st->frames, ufo_dnode_key_ (bus, path));
        g_ptr_array_add (st->frame_names, NULL);
    }
    g_variant_unref (arr);
    if (st->frames->len == 0) {
        s_find_fail (op, "application %s has no accessible window", st->app_bus);
        return;
    }
    st->frames_left = (int) st->frames->len;
    for (guint i = 0; i < st->frames->len; i++) {
        const char *key = g_ptr_array_index (st->frames, i);
        const char *space = strchr (key, ' ');
        char *fbus = g_strndup (key, (gsize) (space - key));
        ufo_desktop_call_ (op, fbus, space + 1, "org.freedesktop.DBus.Properties", "Get",
                           g_variant_new ("(ss)", "org.a11y.atspi.Accessible", "Name"), "(v)",
                           s_on_frame_name, (void *) (uintptr_t) i);
        g_free (fbus);
    }
}

//  A string property's value in a Properties.Get reply, as a new string; NULL if none.
static char *
s_reply_string (GVariant *reply)
{
    GVariant *v = NULL;
    char *text = NULL;
    if (reply)
        g_variant_get (reply, "(v)", &v);
    if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING))
        text = ufo_strdup (g_variant_get_string (v, NULL));
    if (v)
        g_variant_unref (v);
    return text;
}

//  True if the profile of process pid says `"revalidate": true`: an application on an
//  event-reporting toolkit that draws its own widgets inside it (LibreOffice 7.4's GTK3
//  plug-in calls itself "gtk" 3.x) and does not report their changes by events.
static bool
s_profile_revalidates (int pid)
{
    char path [64], comm [64] = "";
    snprintf (path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = pid > 0 ? fopen (path, "r") : NULL;
    if (!f)
        return false;
    if (!fgets (comm, sizeof comm, f))
        comm [0] = '\0';
    fclose (f);
    comm [strcspn (comm, "\n")] = '\0';
    return ufo_desktop_profile_flag (ufo_desktop_profile_of (comm), "revalidate");
}

//  The application's Version, asked just before its ToolkitName (s_on_toolkit).
static void
s_on_version (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    UFO_UNUSED (data);
    if (!op)
        return;
    ufo_dsnap_t *st = op->state;
    free (st->tk_version);
    st->tk_version = s_reply_string (reply);
}

//  The toolkit, from ToolkitName and Version (whose reply came first: the application
//  answers in order), kept per bus name for the application's life:
//  - GTK4 never sets SHOWING below the window: there, visible + non-empty extents decide;
//  - GTK3 ("gtk" 3.x) sends an event for every change an action of ours makes to what a
//    window shows (states, children, bounds, to the listeners the desktop registers), so the
//    next snapshot need not re-read it (ufo_desktop_walk.c s_revalidate). Qt, Chromium,
//    Gecko, GTK4, toolkits that say nothing, and applications whose profile says
//    "revalidate" (LibreOffice: "gtk" 3.x on its GTK3 plug-in, its VCL widgets send no
//    such events) keep the re-validation.
static void
s_on_toolkit (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    char *bus = data;
    if (op) {
        ufo_dsnap_t *st = op->state;
        char *name = s_reply_string (reply);
        const char *version = st->tk_version ? st->tk_version : "";
        int flags = UFO_DTK_READ;
        if (strncmp (version, "4.", 2) == 0)
            flags |= UFO_DTK_NO_SHOWING;
        if (name && strcasecmp (name, "gtk") == 0 && strncmp (version, "3.", 2) == 0
        &&  !s_profile_revalidates (st->pid))
            flags |= UFO_DTK_EVENTS;
        ufo_trace ("desktop: application %s: toolkit '%s' version '%s'%s", bus,
                   name ? name : "", version,
                   flags & UFO_DTK_EVENTS ? ", reports changes by events" : "");
        g_hash_table_replace (op->desk->bus_toolkit, g_strdup (bus), GINT_TO_POINTER (flags));
        if (streq (bus, st->app_bus ? st->app_bus : ""))
            st->uses_showing = !(flags & UFO_DTK_NO_SHOWING);
        free (name);
    }
    g_free (bus);
}

static bool
s_try_app (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init (&iter, op->desk->bus_pid);
    while (g_hash_table_iter_next (&iter, &key, &value))
        if (GPOINTER_TO_INT (value) == st->pid) {
            st->app_bus = ufo_strdup (key);
            int flags = GPOINTER_TO_INT (g_hash_table_lookup (op->desk->bus_toolkit, key));
            if (flags)              //  the toolkit is read once per application
                st->uses_showing = !(flags & UFO_DTK_NO_SHOWING);
            else {
                ufo_desktop_call_ (op, st->app_bus, "/org/a11y/atspi/accessible/root",
                                   "org.freedesktop.DBus.Properties", "Get",
                                   g_variant_new ("(ss)", "org.a11y.atspi.Application", "Version"),
                                   "(v)", s_on_version, NULL);
                ufo_desktop_call_ (op, st->app_bus, "/org/a11y/atspi/accessible/root",
                                   "org.freedesktop.DBus.Properties", "Get",
                                   g_variant_new ("(ss)", "org.a11y.atspi.Application",
                                                  "ToolkitName"),
                                   "(v)", s_on_toolkit, g_strdup (st->app_bus));
            }
            ufo_desktop_call_ (op, st->app_bus, "/org/a11y/atspi/accessible/root",
                               "org.a11y.atspi.Accessible", "GetChildren", NULL, "(a(so))",
                               s_on_frames, NULL);
            return true;
        }
    return false;
}

static void
s_on_pid (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    char *bus = data;
    UFO_UNUSED (error);
    if (op && reply) {
        guint32 pid = 0;
        g_variant_get (reply, "(u)", &pid);
        g_hash_table_replace (op->desk->bus_pid, g_strdup (bus), GINT_TO_POINTER ((int) pid));
    }
    g_free (bus);
    if (!op || op->done || op->cancelled || op->pending > 0)
        return;
    ufo_dsnap_t *st = op->state;
    if (!s_try_app (op))
        s_find_fail (op, "no accessible application for window %" PRId64 " (pid %d)", st->xid,
                     st->pid);
}

static void
s_on_apps (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done || op->cancelled)
        return;
    if (!reply) {
        //  in a fresh session the registry starts with the first application
        s_find_fail (op, "cannot list accessible applications: %s", error);
        return;
    }
    GVariant *arr = g_variant_get_child_value (reply, 0);
    GVariantIter iter;
    const char *bus, *path;
    int asked = 0;
    g_variant_iter_init (&iter, arr);
    while (g_variant_iter_next (&iter, "(&s&o)", &bus, &path) && asked < 1000) {
        if (g_hash_table_contains (op->desk->bus_pid, bus))
            continue;
        ufo_desktop_call_ (op, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                           "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                           g_variant_new ("(s)", bus), "(u)", s_on_pid, g_strdup (bus));
        asked++;
    }
    g_variant_unref (arr);
    if (asked == 0)
        s_on_pid (op, NULL, NULL, g_strdup (""));
}

void
ufo_desktop_find_start_ (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    st->find_tried = ufo_desktop_now_ms_ ();
    if (!st->find_until)
        st->find_until = st->find_tried + UFO_DESKTOP_APP_WAIT_MS;
    st->find_waiting = false;
    st->find_attempts++;
    if (!s_try_app (op))
        ufo_desktop_call_ (op, "org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root",
                           "org.a11y.atspi.Accessible", "GetChildren", NULL, "(a(so))",
                           s_on_apps, NULL);
}

bool
ufo_desktop_find_poll_ (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    if (!st->find_waiting || op->done || op->pending > 0)
        return false;
    int64_t now = ufo_desktop_now_ms_ ();
    bool event = op->desk->event_seq != st->find_seq;
    if (now < st->find_tried + S_RETRY_MIN_MS || (!event && now < st->find_tried + S_RETRY_MS))
        return false;
    //  the X window may have gone, or got its title, meanwhile
    free (st->title);
    st->title = NULL;
    if (!ufo_desktop_x_window_info_ (op->desk, st->xid, &st->wx, &st->wy, &st->ww, &st->wh,
                                     &st->title, &st->pid)) {
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " does not exist", st->xid);
        return false;
    }
    ufo_desktop_find_start_ (op);
    return true;
}

int64_t
ufo_desktop_find_wake_ (const ufo_desktop_op_t *op)
{
    const ufo_dsnap_t *st = op->state;
    if (!st || !st->find_waiting)
        return op->deadline;
    return st->find_tried + S_RETRY_MS;
}
