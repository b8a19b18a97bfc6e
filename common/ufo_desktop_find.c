/*  ufo_desktop_find.c - finding the accessible window of an X window: the application by
    pid (registry children, GetConnectionUnixProcessID, cached per bus name), its toolkit
    (GTK4 never sets SHOWING), and the window by title. Then the walk starts. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

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
    //  the window whose accessible name is the X title; else the only one
    int pick = -1;
    for (guint i = 0; i < st->frames->len && pick < 0; i++)
        if (streq (g_ptr_array_index (st->frame_names, i), st->title))
            pick = (int) i;
    if (pick < 0 && st->frames->len == 1)
        pick = 0;
    if (pick < 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "no accessible window titled '%s' in %s",
                                st->title, st->app_bus);
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
        ufo_desktop_op_finish_ (op, false, NULL, "application %s has no accessible window",
                                st->app_bus);
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

//  GTK4 never sets SHOWING below the window: there, visible + non-empty extents decide.
static void
s_on_version (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    UFO_UNUSED (data);
    if (!op || !reply)
        return;
    GVariant *v = NULL;
    g_variant_get (reply, "(v)", &v);
    ufo_dsnap_t *st = op->state;
    if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING)
    &&  strncmp (g_variant_get_string (v, NULL), "4.", 2) == 0)
        st->uses_showing = false;
    if (v)
        g_variant_unref (v);
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
            ufo_desktop_call_ (op, st->app_bus, "/org/a11y/atspi/accessible/root",
                               "org.freedesktop.DBus.Properties", "Get",
                               g_variant_new ("(ss)", "org.a11y.atspi.Application", "Version"),
                               "(v)", s_on_version, NULL);
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
        ufo_desktop_op_finish_ (op, false, NULL,
                                "no accessible application for window %" PRId64 " (pid %d)",
                                st->xid, st->pid);
}

static void
s_on_apps (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done || op->cancelled)
        return;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "cannot list accessible applications: %s",
                                error);
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
    if (!s_try_app (op))
        ufo_desktop_call_ (op, "org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root",
                           "org.a11y.atspi.Accessible", "GetChildren", NULL, "(a(so))",
                           s_on_apps, NULL);
}
