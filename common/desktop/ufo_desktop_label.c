/*  ufo_desktop_label.c - stable control labels: a control that is still there keeps its label
    from one snapshot of a window to the next; a control that is new gets a number never used
    before in that window.

    Identity. A control is the same as one of the previous snapshot when
      1. it is the same AT-SPI object (bus name + object path) with the same role, or else
      2. it has the same identity string - role, accessible name (as the toolkit gives it,
         before naming rules) and the roles of its ancestors up to the window - and, among the
         pairs of a new and a previous control with that string, the closest are matched
         first (toolkits that rebuild a widget, e.g. a GTK4 list row or a re-opened popover,
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

//  A candidate match of pass 2: fresh entry, old entry, squared distance of their centres.
typedef struct { guint fresh, old; int64_t d; } s_pair_t;

//  By distance, then list order: deterministic.
static gint
s_pair_cmp (gconstpointer a, gconstpointer b)
{
    const s_pair_t *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->fresh != y->fresh)
        return x->fresh < y->fresh ? -1 : 1;
    return x->old < y->old ? -1 : (x->old > y->old);
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
    //  2. the same identity: of all such pairs, the closest first (a rebuilt widget takes the
    //  label of the one that was where it is now)
    GArray *pairs = g_array_new (FALSE, FALSE, sizeof (s_pair_t));
    for (guint i = 0; i < fresh->len; i++) {
        ufo_dlabel_t *f = g_ptr_array_index (fresh, i);
        for (guint k = 0; !f->label && k < old->len; k++) {
            ufo_dlabel_t *o = g_ptr_array_index (old, k);
            if (taken [k] || !streq (o->ident, f->ident))
                continue;
            int64_t dx = o->cx - f->cx, dy = o->cy - f->cy;
            s_pair_t p = { i, k, dx * dx + dy * dy };
            g_array_append_val (pairs, p);
        }
    }
    g_array_sort (pairs, s_pair_cmp);
    for (guint p = 0; p < pairs->len; p++) {
        s_pair_t *pr = &g_array_index (pairs, s_pair_t, p);
        ufo_dlabel_t *f = g_ptr_array_index (fresh, pr->fresh);
        if (f->label || taken [pr->old])
            continue;
        taken [pr->old] = true;
        f->label = ((ufo_dlabel_t *) g_ptr_array_index (old, pr->old))->label;
    }
    g_array_free (pairs, TRUE);
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
