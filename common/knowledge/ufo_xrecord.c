/*  ufo_xrecord.c - mouse and keyboard through X RECORD (see ufo_xrecord.h). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_xrecord.h"
#include <X11/Xlib.h>
#include <X11/XKBlib.h>
#include <X11/Xproto.h>
#include <X11/keysym.h>
#include <X11/extensions/record.h>

#define S_MAX_QUEUED 4096

struct _ufo_xrecord_t {
    Display *ctrl;              //  for the context and keysym lookups
    Display *data;              //  the recording connection
    XRecordContext context;
    XRecordRange *range;
    ufo_value_t *queue;         //  events not yet taken
    bool shift, ctrl_down, alt_down;
};

static void
s_push (ufo_xrecord_t *self, ufo_value_t **event_p)
{
    if (ufo_value_size (self->queue) >= S_MAX_QUEUED)
        ufo_value_list_remove (self->queue, 0);
    ufo_value_list_push (self->queue, event_p);
}

static void
s_key (ufo_xrecord_t *self, unsigned int keycode, bool press)
{
    KeySym base = XkbKeycodeToKeysym (self->ctrl, (KeyCode) keycode, 0, 0);
    if (base == XK_Shift_L || base == XK_Shift_R) {
        self->shift = press;
        return;
    }
    if (base == XK_Control_L || base == XK_Control_R) {
        self->ctrl_down = press;
        return;
    }
    if (base == XK_Alt_L || base == XK_Alt_R || base == XK_Meta_L || base == XK_Meta_R) {
        self->alt_down = press;
        return;
    }
    if (base == XK_Super_L || base == XK_Super_R || base == XK_Caps_Lock || base == XK_ISO_Level3_Shift)
        return;
    if (!press)
        return;
    KeySym sym = XkbKeycodeToKeysym (self->ctrl, (KeyCode) keycode, 0, self->shift ? 1 : 0);
    if (sym == NoSymbol)
        sym = base;
    ufo_value_t *e = ufo_value_new_map ();
    ufo_value_map_set_str (e, "type", "key");
    if (!self->ctrl_down && !self->alt_down && sym >= 0x20 && sym <= 0x7e) {
        char text [2] = { (char) sym, 0 };
        ufo_value_map_set_str (e, "text", text);
    }
    else
    if (!self->ctrl_down && !self->alt_down && sym >= 0xa0 && sym <= 0xff) {
        char text [4] = { 0 };
        ufo_utf8_encode ((uint32_t) sym, text);
        ufo_value_map_set_str (e, "text", text);
    }
    else {
        const char *name = XKeysymToString (sym);
        ufo_value_map_set_str (e, "key", name ? name : "?");
        ufo_value_map_set_bool (e, "ctrl", self->ctrl_down);
        ufo_value_map_set_bool (e, "alt", self->alt_down);
    }
    s_push (self, &e);
}

static void
s_on_data (XPointer closure, XRecordInterceptData *d)
{
    ufo_xrecord_t *self = (ufo_xrecord_t *) closure;
    if (d->category == XRecordFromServer && d->data_len * 4 >= sizeof (xEvent)) {
        const xEvent *ev = (const xEvent *) d->data;
        int type = ev->u.u.type & 0x7f;
        if (type == ButtonPress) {
            ufo_value_t *e = ufo_value_new_map ();
            ufo_value_map_set_str (e, "type", "click");
            ufo_value_map_set_int (e, "x", ev->u.keyButtonPointer.rootX);
            ufo_value_map_set_int (e, "y", ev->u.keyButtonPointer.rootY);
            ufo_value_map_set_int (e, "button", ev->u.u.detail);
            s_push (self, &e);
        }
        else
        if (type == KeyPress || type == KeyRelease)
            s_key (self, ev->u.u.detail, type == KeyPress);
    }
    XRecordFreeData (d);
}

ufo_xrecord_t *
ufo_xrecord_new (const char *display, ufo_error_t *err)
{
    ufo_xrecord_t *self = ufo_calloc (1, sizeof *self);
    self->queue = ufo_value_new_list ();
    self->ctrl = XOpenDisplay (display);
    self->data = self->ctrl ? XOpenDisplay (display) : NULL;
    if (!self->data) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot open the X display %s",
                       display ? display : getenv ("DISPLAY") ? getenv ("DISPLAY") : "(DISPLAY unset)");
        ufo_xrecord_destroy (&self);
        return NULL;
    }
    int major = 0, minor = 0;
    if (!XRecordQueryVersion (self->ctrl, &major, &minor)) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "the X server has no RECORD extension");
        ufo_xrecord_destroy (&self);
        return NULL;
    }
    self->range = XRecordAllocRange ();
    self->range->device_events.first = KeyPress;
    self->range->device_events.last = ButtonPress;
    XRecordClientSpec clients = XRecordAllClients;
    self->context = XRecordCreateContext (self->ctrl, 0, &clients, 1, &self->range, 1);
    XSync (self->ctrl, False);
    if (!self->context || !XRecordEnableContextAsync (self->data, self->context, s_on_data,
                                                     (XPointer) self)) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot start an X RECORD context");
        ufo_xrecord_destroy (&self);
        return NULL;
    }
    return self;
}

void
ufo_xrecord_destroy (ufo_xrecord_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_xrecord_t *self = *self_p;
    if (self->context) {
        XRecordDisableContext (self->ctrl, self->context);
        XRecordFreeContext (self->ctrl, self->context);
        XSync (self->ctrl, False);
    }
    if (self->range)
        XFree (self->range);
    if (self->data)
        XCloseDisplay (self->data);
    if (self->ctrl)
        XCloseDisplay (self->ctrl);
    ufo_value_destroy (&self->queue);
    free (self);
    *self_p = NULL;
}

int
ufo_xrecord_fd (ufo_xrecord_t *self)
{
    return ConnectionNumber (self->data);
}

ufo_value_t *
ufo_xrecord_next (ufo_xrecord_t *self)
{
    if (ufo_value_size (self->queue) == 0)
        XRecordProcessReplies (self->data);
    if (ufo_value_size (self->queue) == 0)
        return NULL;
    ufo_value_t *first = ufo_value_dup (ufo_value_list_at (self->queue, 0));
    ufo_value_list_remove (self->queue, 0);
    return first;
}
