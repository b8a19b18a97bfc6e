/*  ufo_desktop_label.c - stable control labels: a control that is still there keeps its label
    from one snapshot of a window to the next; a control that is new gets a number never used
    before in that window.

    Identity. A control is the same as one of the previous snapshot when
      1. it is the same AT-SPI object (bus name + object path) with the same role, or else
      2. it has the same identity string - role, accessible name (as the toolkit gives it,
         before naming rules) and the roles of its ancestors up to the window - and, among the
         previous controls with that string not yet matched, it is the one whose centre was
         closest (toolkits that rebuild a widget, e.g. a GTK4 list row or a re-opened popover,
         give it a new path but the same place in the tree).
    Anything else is new. Positions alone never match: a control that moved keeps its label,
    and a different control in the old place does not inherit it. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

void
ufo_dlabel_free_ (void *p)
{
    ufo_dlabel_t *l = p;
    if (!l)
        return;
    free (l->key);
    free (l->ident);
    free (l);
}

static uint32_t
s_role (const char *ident)
{
    return (uint32_t) strtoul (ident, NULL, 10);
}

void
ufo_desktop_labels_assign_ (ufo_dwin_t *win, GPtrArray *fresh)
{
    GPtrArray *old = win->labels;
    bool *taken = ufo_calloc (old->len + 1, sizeof (bool));
    //  1. the same object
    GHashTable *by_key = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint i = 0; i < old->len; i++) {
        ufo_dlabel_t *o = g_ptr_array_index (old, i);
        g_hash_table_insert (by_key, o->key, GUINT_TO_POINTER (i + 1));
    }
    for (guint i = 0; i < fresh->len; i++) {
        ufo_dlabel_t *f = g_ptr_array_index (fresh, i);
        guint at = GPOINTER_TO_UINT (g_hash_table_lookup (by_key, f->key));
        if (!at || taken [at - 1])
            continue;
        ufo_dlabel_t *o = g_ptr_array_index (old, at - 1);
        if (s_role (o->ident) != s_role (f->ident))
            continue;
        taken [at - 1] = true;
        f->label = o->label;
    }
    g_hash_table_destroy (by_key);
    //  2. the same identity, the closest first
    for (guint i = 0; i < fresh->len; i++) {
        ufo_dlabel_t *f = g_ptr_array_index (fresh, i);
        if (f->label)
            continue;
        int64_t best_d = INT64_MAX;
        guint best = 0;
        for (guint k = 0; k < old->len; k++) {
            ufo_dlabel_t *o = g_ptr_array_index (old, k);
            if (taken [k] || !streq (o->ident, f->ident))
                continue;
            int64_t dx = o->cx - f->cx, dy = o->cy - f->cy;
            if (dx * dx + dy * dy < best_d) {
                best_d = dx * dx + dy * dy;
                best = k + 1;
            }
        }
        if (best) {
            taken [best - 1] = true;
            f->label = ((ufo_dlabel_t *) g_ptr_array_index (old, best - 1))->label;
        }
    }
    free (taken);
    //  3. new controls: numbers never used in this window
    for (guint i = 0; i < fresh->len; i++) {
        ufo_dlabel_t *f = g_ptr_array_index (fresh, i);
        if (!f->label)
            f->label = ++win->next_label;
    }
    g_ptr_array_unref (win->labels);
    win->labels = g_ptr_array_ref (fresh);
}

const ufo_dlabel_t *
ufo_desktop_label_find_ (const ufo_dwin_t *win, const char *label)
{
    if (!win || !label || !*label)
        return NULL;
    char *end = NULL;
    errno = 0;
    long n = strtol (label, &end, 10);
    if (*end || errno || n < 1 || n > INT_MAX)
        return NULL;
    for (guint i = 0; i < win->labels->len; i++) {
        const ufo_dlabel_t *l = g_ptr_array_index (win->labels, i);
        if (l->label == n)
            return l;
    }
    return NULL;
}
