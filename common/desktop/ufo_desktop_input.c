/*  ufo_desktop_input.c - synthetic input with XTest, and the pywinauto key syntax of
    keyboard_input (docs/DESKTOP.md "Key syntax"). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

//  The escaping rule, quoted by every syntax error.
#define S_ESCAPES "the characters ( ) + ^ % ~ # { } are special: to type one, put it in braces, " \
                  "e.g. {(} {)} {+} {{} {}}"
#include <X11/keysym.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>

#define S_MAX_EVENTS 20000          //  keys of one keyboard_input, after repeats
#define S_MAX_REPEAT 1000

static const struct { const char *name; unsigned long keysym; } s_named [] = {
    { "ENTER", XK_Return }, { "TAB", XK_Tab }, { "ESC", XK_Escape }, { "ESCAPE", XK_Escape },
    { "BACKSPACE", XK_BackSpace }, { "BS", XK_BackSpace }, { "BKSP", XK_BackSpace },
    { "DELETE", XK_Delete }, { "DEL", XK_Delete }, { "INSERT", XK_Insert }, { "INS", XK_Insert },
    { "HOME", XK_Home }, { "END", XK_End }, { "PGUP", XK_Prior }, { "PGDN", XK_Next },
    { "UP", XK_Up }, { "DOWN", XK_Down }, { "LEFT", XK_Left }, { "RIGHT", XK_Right },
    { "SPACE", XK_space }, { "CAPSLOCK", XK_Caps_Lock }, { "NUMLOCK", XK_Num_Lock },
    { "SCROLLLOCK", XK_Scroll_Lock }, { "PRTSC", XK_Print }, { "BREAK", XK_Break },
    { "HELP", XK_Help }, { "APPS", XK_Menu },
    { "VK_RETURN", XK_Return }, { "VK_TAB", XK_Tab }, { "VK_ESCAPE", XK_Escape },
    { "VK_BACK", XK_BackSpace }, { "VK_DELETE", XK_Delete }, { "VK_INSERT", XK_Insert },
    { "VK_HOME", XK_Home }, { "VK_END", XK_End }, { "VK_PRIOR", XK_Prior }, { "VK_NEXT", XK_Next },
    { "VK_UP", XK_Up }, { "VK_DOWN", XK_Down }, { "VK_LEFT", XK_Left }, { "VK_RIGHT", XK_Right },
    { "VK_SPACE", XK_space }, { "VK_CAPITAL", XK_Caps_Lock }, { "VK_NUMLOCK", XK_Num_Lock },
    { "VK_SCROLL", XK_Scroll_Lock }, { "VK_SNAPSHOT", XK_Print }, { "VK_APPS", XK_Menu },
    { "VK_CONTROL", XK_Control_L }, { "VK_LCONTROL", XK_Control_L }, { "VK_RCONTROL", XK_Control_R },
    { "VK_SHIFT", XK_Shift_L }, { "VK_LSHIFT", XK_Shift_L }, { "VK_RSHIFT", XK_Shift_R },
    { "VK_MENU", XK_Alt_L }, { "VK_LMENU", XK_Alt_L }, { "VK_RMENU", XK_Alt_R },
    { "VK_LWIN", XK_Super_L }, { "VK_RWIN", XK_Super_R },
    { "VK_ADD", XK_KP_Add }, { "VK_SUBTRACT", XK_KP_Subtract }, { "VK_MULTIPLY", XK_KP_Multiply },
    { "VK_DIVIDE", XK_KP_Divide }, { "VK_DECIMAL", XK_KP_Decimal },
};

static unsigned long
s_char_keysym (uint32_t cp)
{
    if (cp == '\n' || cp == '\r')
        return XK_Return;
    if (cp == '\t')
        return XK_Tab;
    if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
        return cp;
    return 0x01000000UL | cp;
}

//  Decodes one UTF-8 character; returns its length, or 0 if malformed.
static size_t
s_utf8 (const unsigned char *s, uint32_t *cp)
{
    if (s [0] < 0x80) { *cp = s [0]; return 1; }
    int n = (s [0] & 0xE0) == 0xC0 ? 2 : (s [0] & 0xF0) == 0xE0 ? 3 : (s [0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!n)
        return 0;
    uint32_t c = s [0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s [i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s [i] & 0x3F);
    }
    *cp = c;
    return (size_t) n;
}

static unsigned long
s_brace_keysym (const char *name)
{
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_named); i++)
        if (strcasecmp (s_named [i].name, name) == 0)
            return s_named [i].keysym;
    //  F1..F24, VK_F1..VK_F24, VK_NUMPAD0..9
    const char *f = strncasecmp (name, "VK_", 3) == 0 ? name + 3 : name;
    if ((f [0] == 'F' || f [0] == 'f') && isdigit ((unsigned char) f [1])) {
        int n = atoi (f + 1);
        if (n >= 1 && n <= 24)
            return XK_F1 + (unsigned long) (n - 1);
    }
    if (strncasecmp (name, "VK_NUMPAD", 9) == 0 && isdigit ((unsigned char) name [9]) && !name [10])
        return XK_KP_0 + (unsigned long) (name [9] - '0');
    //  a single character in braces is that character, literally: {+} {%} {{} {~}
    uint32_t cp;
    size_t n = s_utf8 ((const unsigned char *) name, &cp);
    if (n && !name [n])
        return s_char_keysym (cp);
    return 0;
}

static void
s_push (ufo_value_t *list, unsigned long keysym, bool down)
{
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_int (ev, "keysym", (int64_t) keysym);
    ufo_value_map_set_bool (ev, "down", down);
    ufo_value_list_push (list, &ev);
}

static const unsigned long s_mod_keysym [4] = { XK_Control_L, XK_Alt_L, XK_Shift_L, XK_Super_L };

static int
s_mod_index (char c)
{
    return c == '^' ? 0 : c == '%' ? 1 : c == '+' ? 2 : c == '#' ? 3 : -1;
}

ufo_value_t *
ufo_desktop_keys_parse (const char *keys, ufo_error_t *err)
{
    if (!keys)
        keys = "";
    ufo_value_t *list = ufo_value_new_list ();
    unsigned mods = 0;          //  pending modifiers for the next key or group
    unsigned group_mods = 0;    //  modifiers held over an open group
    bool in_group = false;
    const char *p = keys;
    while (*p) {
        if (ufo_value_size (list) > S_MAX_EVENTS) {
            ufo_value_destroy (&list);
            ufo_error_set (err, UFO_E_TOO_LARGE, "keys: more than %d key events", S_MAX_EVENTS);
            return NULL;
        }
        int m = s_mod_index (*p);
        if (m >= 0) {
            if (!(mods & (1u << m)) && !(group_mods & (1u << m)))
                s_push (list, s_mod_keysym [m], true);
            mods |= 1u << m;
            p++;
            continue;
        }
        if (*p == '(') {
            if (in_group) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                  "keys: nested '(' at \"%.24s\"; %s", p, S_ESCAPES);
                return NULL;
            }
            in_group = true;
            group_mods = mods;
            mods = 0;
            p++;
            continue;
        }
        if (*p == ')') {
            if (!in_group) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                  "keys: ')' without '(' at \"%.24s\"; %s", p, S_ESCAPES);
                return NULL;
            }
            for (int i = 3; i >= 0; i--)
                if (group_mods & (1u << i))
                    s_push (list, s_mod_keysym [i], false);
            in_group = false;
            group_mods = 0;
            p++;
            continue;
        }
        unsigned long keysym = 0;
        int repeat = 1;
        int only = 0;               //  1: down only, 2: up only
        if (*p == '{') {
            //  {}} and {{} name the brace itself
            const char *start = p + 1;
            const char *end = *start ? strchr (start + 1, '}') : NULL;
            if (start [0] == '}')
                end = start [1] == '}' ? start + 1 : NULL;
            if (!end) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                  "keys: unclosed '{' at \"%.24s\"; %s", p, S_ESCAPES);
                return NULL;
            }
            char body [64];
            size_t blen = (size_t) (end - start);
            if (blen == 0 || blen >= sizeof (body)) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                  "keys: bad \"%.*s\"; %s", (int) (end - p + 1), p, S_ESCAPES);
                return NULL;
            }
            memcpy (body, start, blen);
            body [blen] = '\0';
            char *space = strrchr (body, ' ');
            if (space && space != body) {
                *space = '\0';
                const char *arg = space + 1;
                if (strcasecmp (arg, "down") == 0)
                    only = 1;
                else if (strcasecmp (arg, "up") == 0)
                    only = 2;
                else {
                    char *endp = NULL;
                    long n = strtol (arg, &endp, 10);
                    if (!*arg || *endp || n < 0 || n > S_MAX_REPEAT) {
                        ufo_value_destroy (&list);
                        ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                          "keys: bad count or action '%s' in \"%.*s\" "
                                          "(write {KEY n}, {KEY down} or {KEY up})", arg,
                                          (int) (end - p + 1), p);
                        return NULL;
                    }
                    repeat = (int) n;
                }
            }
            keysym = s_brace_keysym (body);
            if (!keysym) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_SYNTAX, (size_t) (p - keys),
                                  "keys: unknown key \"%.*s\" (names: {ENTER}, {TAB}, {ESC}, "
                                  "{F5} ...; Ctrl, Shift, Alt are written ^ + %% before a key, "
                                  "e.g. \"^s\"); %s", (int) (end - p + 1), p, S_ESCAPES);
                return NULL;
            }
            p = end + 1;
        }
        else if (*p == '~') {
            keysym = XK_Return;
            p++;
        }
        else {
            uint32_t cp;
            size_t n = s_utf8 ((const unsigned char *) p, &cp);
            if (!n) {
                ufo_value_destroy (&list);
                ufo_error_set_at (err, UFO_E_UTF8, (size_t) (p - keys), "keys: invalid UTF-8");
                return NULL;
            }
            keysym = s_char_keysym (cp);
            p += n;
        }
        for (int r = 0; r < repeat; r++) {
            if (only != 2)
                s_push (list, keysym, true);
            if (only != 1)
                s_push (list, keysym, false);
        }
        for (int i = 3; i >= 0; i--)
            if (mods & (1u << i) && !(group_mods & (1u << i)))
                s_push (list, s_mod_keysym [i], false);
        mods = 0;
    }
    if (in_group) {
        ufo_value_destroy (&list);
        ufo_error_set (err, UFO_E_SYNTAX, "keys: unclosed '(' in \"%.40s\"; %s", keys, S_ESCAPES);
        return NULL;
    }
    if (ufo_value_size (list) > S_MAX_EVENTS) {
        ufo_value_destroy (&list);
        ufo_error_set (err, UFO_E_TOO_LARGE, "keys: more than %d key events", S_MAX_EVENTS);
        return NULL;
    }
    for (int i = 3; i >= 0; i--)            //  dangling modifiers ("^") are released
        if (mods & (1u << i))
            s_push (list, s_mod_keysym [i], false);
    return list;
}

//  --- XTest -------------------------------------------------------------------------------

//  A keycode for keysym; maps it onto a spare keycode if the keymap lacks it.
//  *shift is set when the keysym sits on the shifted level.
static KeyCode
s_keycode (ufo_desktop_t *desk, unsigned long keysym, bool *shift, int *spare_next)
{
    *shift = false;
    KeyCode kc = XKeysymToKeycode (desk->dpy, (KeySym) keysym);
    if (kc) {
        if (XkbKeycodeToKeysym (desk->dpy, kc, 0, 0) != (KeySym) keysym
        &&  XkbKeycodeToKeysym (desk->dpy, kc, 0, 1) == (KeySym) keysym)
            *shift = true;
        return kc;
    }
    int min, max;
    XDisplayKeycodes (desk->dpy, &min, &max);
    for (int k = max - *spare_next; k >= min && k > max - 64; k--) {
        (*spare_next)++;
        if (XkbKeycodeToKeysym (desk->dpy, (KeyCode) k, 0, 0) != NoSymbol)
            continue;
        KeySym syms [2] = { (KeySym) keysym, (KeySym) keysym };
        XChangeKeyboardMapping (desk->dpy, k, 2, syms, 1);
        XSync (desk->dpy, False);
        return (KeyCode) k;
    }
    return 0;
}

int
ufo_desktop_send_keys_ (ufo_desktop_t *desk, const ufo_value_t *events, ufo_error_t *err)
{
    int spare = 0;
    bool shift_held = false;
    for (size_t i = 0; i < ufo_value_size (events); i++) {
        const ufo_value_t *ev = ufo_value_list_at (events, i);
        unsigned long keysym = (unsigned long) ufo_value_map_int (ev, "keysym", 0);
        bool down = ufo_value_map_bool (ev, "down", false);
        if (keysym == XK_Shift_L)
            shift_held = down;
        bool shift = false;
        KeyCode kc = s_keycode (desk, keysym, &shift, &spare);
        if (!kc)
            return ufo_error_set (err, UFO_E_INVALID, "no keycode for keysym 0x%lx", keysym);
        KeyCode shift_kc = XKeysymToKeycode (desk->dpy, XK_Shift_L);
        if (shift && !shift_held && down)
            XTestFakeKeyEvent (desk->dpy, shift_kc, True, 0);
        XTestFakeKeyEvent (desk->dpy, kc, down ? True : False, 0);
        if (shift && !shift_held && down) {
            //  release the key before shift so that the shifted level is what arrives
            XTestFakeKeyEvent (desk->dpy, kc, False, 0);
            XTestFakeKeyEvent (desk->dpy, shift_kc, False, 0);
            if (i + 1 < ufo_value_size (events)
            &&  (unsigned long) ufo_value_map_int (ufo_value_list_at (events, i + 1), "keysym", 0)
                 == keysym && !ufo_value_map_bool (ufo_value_list_at (events, i + 1), "down", true))
                i++;            //  its own release is already sent
        }
    }
    XSync (desk->dpy, False);
    return 0;
}

void
ufo_desktop_pointer_move_ (ufo_desktop_t *desk, int x, int y)
{
    XTestFakeMotionEvent (desk->dpy, -1, x, y, 0);
    XFlush (desk->dpy);
}

void
ufo_desktop_pointer_button_ (ufo_desktop_t *desk, int button, bool down)
{
    XTestFakeButtonEvent (desk->dpy, (unsigned) button, down ? True : False, 0);
    XFlush (desk->dpy);
}

//  --- input barriers: _NET_WM_PING -----------------------------------------------------------

uint32_t
ufo_desktop_ping_send_ (ufo_desktop_t *desk, int64_t xid)
{
    if (desk->x_dead || xid <= 0) {
        ufo_debug ("desktop: no X connection or window: no input barrier");
        return 0;
    }
    Atom ping = XInternAtom (desk->dpy, "_NET_WM_PING", False);
    Atom *protocols = NULL;
    int n = 0;
    bool listed = false;
    ufo_desktop_x_trap_begin_ (desk);
    if (XGetWMProtocols (desk->dpy, (Window) xid, &protocols, &n))
        for (int i = 0; i < n; i++)
            listed = listed || protocols [i] == ping;
    if (protocols)
        XFree (protocols);
    if (ufo_desktop_x_trap_end_ (desk) || !listed) {
        ufo_debug ("desktop: window %" PRId64 " takes no _NET_WM_PING: no input barrier", xid);
        return 0;
    }
    //  the answer goes to the root window, to those who select its substructure events:
    //  the window list (ufo_desktop_xwin.c) selects them for good and hands ping answers to
    //  ufo_desktop_ping_note_ as it drains the X queue
    ufo_desktop_xwin_drain_ (desk);
    desk->pings_out++;
    uint32_t serial = ++desk->ping_serial;
    if (serial == 0)
        serial = ++desk->ping_serial;
    XEvent ev;
    memset (&ev, 0, sizeof ev);
    ev.xclient.type = ClientMessage;
    ev.xclient.window = (Window) xid;
    ev.xclient.message_type = XInternAtom (desk->dpy, "WM_PROTOCOLS", False);
    ev.xclient.format = 32;
    ev.xclient.data.l [0] = (long) ping;
    ev.xclient.data.l [1] = (long) serial;          //  the "timestamp": our serial
    ev.xclient.data.l [2] = (long) xid;
    ufo_desktop_x_trap_begin_ (desk);
    XSendEvent (desk->dpy, (Window) xid, False, NoEventMask, &ev);
    if (ufo_desktop_x_trap_end_ (desk)) {           //  the window went away
        ufo_debug ("desktop: window %" PRId64 " is gone: no input barrier", xid);
        ufo_desktop_ping_end_ (desk, serial);
        return 0;
    }
    return serial;
}

void
ufo_desktop_ping_note_ (ufo_desktop_t *desk, const XEvent *ev)
{
    if (ev->type != ClientMessage || ev->xclient.window != desk->root_win
    ||  ev->xclient.format != 32)
        return;
    if ((Atom) ev->xclient.data.l [0] != XInternAtom (desk->dpy, "_NET_WM_PING", False))
        return;
    desk->pings_seen [desk->pings_seen_at++ % UFO_ARRAY_SIZE (desk->pings_seen)] =
        (uint32_t) ev->xclient.data.l [1];
}

bool
ufo_desktop_ping_answered_ (ufo_desktop_t *desk, uint32_t serial)
{
    if (desk->x_dead)
        return true;                    //  no X: nothing to wait for
    //  everything queued is read and applied; answers are kept (a ring of the latest)
    ufo_desktop_xwin_drain_ (desk);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (desk->pings_seen); i++)
        if (desk->pings_seen [i] == serial)
            return true;
    return false;
}

void
ufo_desktop_ping_end_ (ufo_desktop_t *desk, uint32_t serial)
{
    if (serial && desk->pings_out > 0)
        desk->pings_out--;
}

//  --- typed text arriving: text-changed insert events ----------------------------------------

void
ufo_desktop_inserted_ (ufo_desktop_t *desk, GVariant *params)
{
    //  (siiva{sv}): "insert", offset, length, the inserted text, properties
    if (g_variant_n_children (params) < 4)
        return;
    GVariant *v = g_variant_get_child_value (params, 3);
    GVariant *inner = g_variant_is_of_type (v, G_VARIANT_TYPE_VARIANT) ? g_variant_get_variant (v)
                                                                       : g_variant_ref (v);
    if (g_variant_is_of_type (inner, G_VARIANT_TYPE_STRING)) {
        gsize n = 0;
        const char *text = g_variant_get_string (inner, &n);
        size_t cap = sizeof desk->inserted - 1;
        if (n > cap) {
            text += n - cap;
            n = cap;
        }
        if (desk->inserted_len + n > cap) {        //  keep the latest: drop the oldest
            size_t drop = desk->inserted_len + n - cap;
            memmove (desk->inserted, desk->inserted + drop, desk->inserted_len - drop);
            desk->inserted_len -= drop;
        }
        memcpy (desk->inserted + desk->inserted_len, text, n);
        desk->inserted_len += n;
        desk->inserted [desk->inserted_len] = '\0';
        desk->inserted_total += n;
    }
    g_variant_unref (inner);
    g_variant_unref (v);
}

char *
ufo_desktop_keys_tail_ (const ufo_value_t *events)
{
    GString *run = g_string_new (NULL);
    bool ctrl = false, alt = false, shift = false;
    for (size_t i = 0; i < ufo_value_size (events); i++) {
        const ufo_value_t *ev = ufo_value_list_at (events, i);
        unsigned long keysym = (unsigned long) ufo_value_map_int (ev, "keysym", 0);
        bool down = ufo_value_map_bool (ev, "down", false);
        if (keysym == XK_Control_L || keysym == XK_Control_R)
            ctrl = down;
        else if (keysym == XK_Alt_L || keysym == XK_Alt_R || keysym == XK_Super_L
             ||  keysym == XK_Super_R)
            alt = down;
        else if (keysym == XK_Shift_L || keysym == XK_Shift_R)
            shift = down;
        if (!down || keysym == XK_Shift_L || keysym == XK_Shift_R)
            continue;
        uint32_t cp = 0;
        if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff))
            cp = (uint32_t) keysym;
        else if ((keysym & 0xff000000UL) == 0x01000000UL)
            cp = (uint32_t) (keysym & 0x00ffffffUL);
        if (cp && shift && cp >= 'a' && cp <= 'z')
            cp = cp - 'a' + 'A';                    //  "+a" types "A"
        else if (cp && shift)
            cp = 0;                 //  "+1": what it types depends on the keyboard map
        if (cp && !ctrl && !alt)
            g_string_append_unichar (run, cp);
        else if (!(keysym >= XK_Shift_L && keysym <= XK_Hyper_R))
            g_string_truncate (run, 0);            //  Enter, Tab, arrows, Ctrl+key ...
    }
    size_t keep = run->len > 32 ? 32 : run->len;
    const char *from = run->str + run->len - keep;
    while (keep > 0 && ((unsigned char) *from & 0xC0) == 0x80) {      //  whole characters
        from++;
        keep--;
    }
    char *tail = ufo_strndup (from, keep);
    g_string_free (run, TRUE);
    return tail;
}

bool
ufo_desktop_inserted_since_ (const ufo_desktop_t *desk, uint64_t mark, const char *text)
{
    uint64_t since = desk->inserted_total - mark;
    if (since > desk->inserted_len)
        since = desk->inserted_len;                 //  more than is kept: what is kept
    const char *from = desk->inserted + desk->inserted_len - since;
    return strstr (from, text) != NULL;
}
