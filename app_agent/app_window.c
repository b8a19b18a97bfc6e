/*  app_window.c - which window of its application an AppAgent works on (see app_window.h). */
#include "ufo_prelude.h"
#include "ufo_value.h"
#include "app_window.h"

#define S_MAX_WINDOWS 256

//  True when window w belongs to the application.
static bool
s_mine (const ufo_value_t *w, int64_t pid, int64_t main_xid)
{
    if (ufo_value_type (w) != UFO_TMAP)
        return false;
    if (ufo_value_map_int (w, "xid", 0) == main_xid)
        return true;
    return pid > 0 && ufo_value_map_int (w, "pid", 0) == pid;
}

static bool
s_dialog (const ufo_value_t *w)
{
    return ufo_value_map_bool (w, "dialog", false) || ufo_value_map_bool (w, "modal", false)
        || ufo_value_map_int (w, "transient_for", 0) > 0;
}

const ufo_value_t *
app_window_pick (const ufo_value_t *wins, int64_t pid, int64_t main_xid, int64_t last_xid)
{
    size_t n = ufo_value_size (wins);
    if (n > S_MAX_WINDOWS)
        n = S_MAX_WINDOWS;
    //  the windows of this subtask: the main and the last one, dialogs transient for one of
    //  them (to any depth), and dialogs that name no owner. Another top-level window of
    //  the same process (a second document) is not, nor are its dialogs.
    bool ours [S_MAX_WINDOWS] = { false };
    const ufo_value_t *last = NULL, *main = NULL, *newest = NULL;
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (!s_mine (w, pid, main_xid))
            continue;
        int64_t xid = ufo_value_map_int (w, "xid", 0);
        newest = w;
        if (xid == main_xid)
            main = w;
        if (last_xid && xid == last_xid)
            last = w;
        ours [i] = xid == main_xid || xid == last_xid
                || (s_dialog (w) && ufo_value_map_int (w, "transient_for", 0) <= 0);
    }
    if (!main && !last)
        return newest;          //  the subtask's windows are gone: what the application shows
    for (bool grew = true; grew; ) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            const ufo_value_t *w = ufo_value_list_at (wins, i);
            int64_t owner = ufo_value_map_int (w, "transient_for", 0);
            if (ours [i] || owner <= 0 || !s_mine (w, pid, main_xid))
                continue;
            for (size_t k = 0; k < n && !ours [i]; k++)
                if (ours [k] && ufo_value_map_int (ufo_value_list_at (wins, k), "xid", 0) == owner)
                    ours [i] = grew = true;
        }
    }
    const ufo_value_t *modal = NULL, *active = NULL, *dialog = NULL;
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (!ours [i])
            continue;
        if (ufo_value_map_bool (w, "modal", false))
            modal = w;
        if (ufo_value_map_bool (w, "active", false))
            active = w;
        if (s_dialog (w))
            dialog = w;
    }
    const ufo_value_t *order [] = { modal, active, dialog, last, main };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (order); i++)
        if (order [i])
            return order [i];
    return newest;
}
