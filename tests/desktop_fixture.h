/*  desktop_fixture.h - helpers for the desktop system tests and the benchmark: a private
    headless session per test (scripts/desktop-session), launching applications and
    bounded waits for their windows and controls. Header-only, for test programs. */
#ifndef DESKTOP_FIXTURE_H_INCLUDED
#define DESKTOP_FIXTURE_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dfx_session_dir_ [512];

//  Starts a fresh session and exports its environment into this process.
//  Returns 0, or -1 (with a message on stderr).
static inline int
dfx_session_start (void)
{
    const char *src = getenv ("UFO_SOURCE_DIR");
    char cmd [1024];
    snprintf (cmd, sizeof (cmd), "'%s/scripts/desktop-session' start --owner %d",
              src ? src : UFO_SOURCE_DIR, (int) getpid ());
    FILE *p = popen (cmd, "r");
    if (!p)
        return -1;
    char line [2048];
    dfx_session_dir_ [0] = '\0';
    while (fgets (line, sizeof (line), p)) {
        if (strncmp (line, "export ", 7) != 0)
            continue;
        char *name = line + 7, *eq = strchr (name, '=');
        if (!eq)
            continue;
        *eq = '\0';
        //  undo bash's printf %q escaping (backslashes before , = and friends)
        char value [2048];
        size_t n = 0;
        for (char *s = eq + 1; *s && *s != '\n' && n + 1 < sizeof (value); s++) {
            if (*s == '\\' && s [1])
                s++;
            value [n++] = *s;
        }
        value [n] = '\0';
        setenv (name, value, 1);
        if (strcmp (name, "UFO_DESKTOP_SESSION") == 0)
            snprintf (dfx_session_dir_, sizeof (dfx_session_dir_), "%.500s", value);
    }
    int rc = pclose (p);
    unsetenv ("NO_AT_BRIDGE");
    unsetenv ("GTK_A11Y");
    unsetenv ("AT_SPI_BUS_ADDRESS");
    setenv ("GSK_RENDERER", "cairo", 1);    //  GTK4 idles at ~3% CPU instead of ~35%
    if (rc != 0 || !dfx_session_dir_ [0]) {
        fprintf (stderr, "desktop-session start failed (%d)\n", rc);
        return -1;
    }
    return 0;
}

static inline void
dfx_session_stop (void)
{
    if (!dfx_session_dir_ [0])
        return;
    const char *src = getenv ("UFO_SOURCE_DIR");
    char cmd [1024];
    snprintf (cmd, sizeof (cmd), "'%s/scripts/desktop-session' stop '%s'",
              src ? src : UFO_SOURCE_DIR, dfx_session_dir_);
    if (system (cmd) != 0)
        fprintf (stderr, "desktop-session stop failed\n");
    dfx_session_dir_ [0] = '\0';
}

//  Waits (bounded) for a window of process pid whose title contains `title` (NULL: any).
//  Returns its xid, or 0.
static inline int64_t
dfx_wait_window (ufo_desktop_t *desk, int pid, const char *title, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
        int64_t xid = 0;
        for (size_t i = 0; wins && i < ufo_value_size (wins) && !xid; i++) {
            const ufo_value_t *w = ufo_value_list_at (wins, i);
            if ((pid <= 0 || ufo_value_map_int (w, "pid", 0) == pid)
            &&  (!title || strstr (ufo_value_map_str (w, "title", ""), title)))
                xid = ufo_value_map_int (w, "xid", 0);
        }
        ufo_value_destroy (&wins);
        if (xid)
            return xid;
        ufo_desktop_iterate (desk, 50);
    }
    return 0;
}

//  Takes snapshots until one contains a control of `type` whose text contains `text`
//  (NULL: any); bounded. Returns the snapshot result (caller owns) or NULL.
static inline ufo_value_t *
dfx_wait_control (ufo_desktop_t *desk, int64_t xid, const char *type, const char *text,
                  int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < end) {
        ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
        ufo_value_t *r = ufo_desktop_op_run (desk, &op);
        const ufo_value_t *controls = ufo_value_map_get (r, "controls");
        for (size_t i = 0; i < ufo_value_size (controls); i++) {
            const ufo_value_t *c = ufo_value_list_at (controls, i);
            if ((!type || strcmp (ufo_value_map_str (c, "control_type", ""), type) == 0)
            &&  (!text || strstr (ufo_value_map_str (c, "control_text", ""), text)))
                return r;
        }
        ufo_value_destroy (&r);
        ufo_desktop_iterate (desk, 100);
    }
    return NULL;
}

//  The label of the first control of `type` whose text equals `text` (NULL: any), or NULL.
static inline const char *
dfx_find (const ufo_value_t *snapshot, const char *type, const char *text)
{
    const ufo_value_t *controls = ufo_value_map_get (snapshot, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if ((!type || strcmp (ufo_value_map_str (c, "control_type", ""), type) == 0)
        &&  (!text || strcmp (ufo_value_map_str (c, "control_text", ""), text) == 0))
            return ufo_value_map_str (c, "label", NULL);
    }
    return NULL;
}

//  How many controls of `type` a snapshot offers.
static inline size_t
dfx_count (const ufo_value_t *snapshot, const char *type)
{
    size_t n = 0;
    const ufo_value_t *controls = ufo_value_map_get (snapshot, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++)
        n += strcmp (ufo_value_map_str (ufo_value_list_at (controls, i), "control_type", ""), type) == 0;
    return n;
}

//  Runs one action to its end; returns the result (caller owns).
static inline ufo_value_t *
dfx_act (ufo_desktop_t *desk, int64_t xid, const char *label, const char *function,
         const char *args_json)
{
    ufo_value_t *args = args_json ? ufo_json_parse_str (args_json, NULL) : NULL;
    ufo_desktop_op_t *op = ufo_desktop_act_begin (desk, xid, label, function, args);
    ufo_value_destroy (&args);
    return ufo_desktop_op_run (desk, &op);
}

//  Clicks the control of `type` named `name` once a snapshot of xid shows it (bounded).
//  Returns true if the click succeeded; says why not on stderr.
static inline bool
dfx_click_named (ufo_desktop_t *desk, int64_t xid, const char *type, const char *name,
                 int timeout_ms)
{
    ufo_value_t *snap = dfx_wait_control (desk, xid, type, name, timeout_ms);
    const char *label = snap ? dfx_find (snap, type, name) : NULL;
    ufo_value_t *r = label ? dfx_act (desk, xid, label, "click_input", NULL) : NULL;
    bool ok = ufo_value_map_bool (r, "success", false);
    if (!ok)
        fprintf (stderr, "click %s '%s': %s\n", type, name,
                 r ? ufo_value_map_str (r, "error", "") : "not found");
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    return ok;
}

//  The centre of control `label` in a snapshot as fractions of its window (for
//  click_on_coordinates: a pointer click at the reported position, no accessible action).
static inline bool
dfx_centre_fraction (const ufo_value_t *snap, const char *label, double *fx, double *fy)
{
    const ufo_value_t *wr = ufo_value_map_get (ufo_value_map_get (snap, "window"), "rect");
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls) && ufo_value_size (wr) == 4; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        const ufo_value_t *r = ufo_value_map_get (c, "control_rect");
        if (!strcmp (ufo_value_map_str (c, "label", ""), label) == 0 || ufo_value_size (r) != 4)
            continue;
        double wx = (double) ufo_value_int (ufo_value_list_at (wr, 0));
        double wy = (double) ufo_value_int (ufo_value_list_at (wr, 1));
        double ww = (double) ufo_value_int (ufo_value_list_at (wr, 2)) - wx;
        double wh = (double) ufo_value_int (ufo_value_list_at (wr, 3)) - wy;
        double cx = (ufo_value_int (ufo_value_list_at (r, 0)) + ufo_value_int (ufo_value_list_at (r, 2))) / 2.0;
        double cy = (ufo_value_int (ufo_value_list_at (r, 1)) + ufo_value_int (ufo_value_list_at (r, 3))) / 2.0;
        *fx = (cx - wx) / ww;
        *fy = (cy - wy) / wh;
        return ww > 0 && wh > 0;
    }
    return false;
}

//  The first vertical scroll bar (taller than wide) among a snapshot's controls, or NULL.
static inline const ufo_value_t *
dfx_vbar (const ufo_value_t *controls)
{
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        const ufo_value_t *r = ufo_value_map_get (c, "control_rect");
        int64_t w = ufo_value_int (ufo_value_list_at (r, 2)) - ufo_value_int (ufo_value_list_at (r, 0));
        int64_t h = ufo_value_int (ufo_value_list_at (r, 3)) - ufo_value_int (ufo_value_list_at (r, 1));
        if (strcmp (ufo_value_map_str (c, "control_type", ""), "ScrollBar") == 0 && h > 4 * w)
            return c;
    }
    return NULL;
}

#endif
