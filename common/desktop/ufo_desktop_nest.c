/*  ufo_desktop_nest.c - positions that contradict the tree. A control lies inside the
    containers that hold it; a snapshot in which a shown node sticks out of its nearest
    ancestor with extents (by more than a few pixels) was read while the application's
    positions were not settled. LibreOffice (profile "pointer_enter", docs/DESKTOP.md) gives
    its own objects positions 25 px off until it has handled a pointer motion in the
    window, and may lose that again while a new window lays itself out; the GTK widgets
    inside its objects (the Name Box in the formula tool bar) keep the right ones: the two
    then disagree. Pure reading of the cache, no D-Bus. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_desktop_int.h"

#define S_SLACK 4               //  pixels a child may stick out (borders, focus rings)

//  Containers whose inside may legitimately lie outside them: what scrolls (a scroll pane,
//  a viewport, the visible cells of a huge table: a cell at the edge is partly outside),
//  popups (menus, windows, tool tips), and a combo box's list.
static bool
s_unbounded (const ufo_dnode_t *node)
{
    switch (node->role) {
        case ATSPI_ROLE_SCROLL_PANE: case ATSPI_ROLE_VIEWPORT: case ATSPI_ROLE_MENU:
        case ATSPI_ROLE_POPUP_MENU: case ATSPI_ROLE_WINDOW: case ATSPI_ROLE_TOOL_TIP:
        case ATSPI_ROLE_COMBO_BOX: case ATSPI_ROLE_MENU_BAR:
            return true;
        default:
            return node->virt;
    }
}

static int
s_count (const ufo_dnode_t *node, const int *box, bool uses_showing)
{
    if (!node->valid || !node->detail_valid || ufo_dnode_hidden_ (node, uses_showing))
        return 0;
    int bad = 0;
    bool has = node->ext [2] > 0 && node->ext [3] > 0;
    if (has && box
    &&  (node->ext [0] < box [0] - S_SLACK || node->ext [1] < box [1] - S_SLACK
         || node->ext [0] + node->ext [2] > box [0] + box [2] + S_SLACK
         || node->ext [1] + node->ext [3] > box [1] + box [3] + S_SLACK)) {
        ufo_trace ("desktop: %s (role %u) at %d,%d %dx%d lies outside its container at %d,%d "
                   "%dx%d", node->path, node->role, node->ext [0], node->ext [1], node->ext [2],
                   node->ext [3], box [0], box [1], box [2], box [3]);
        bad++;
    }
    if (ufo_dnode_leaf_ (node))
        return bad;
    const int *inner = s_unbounded (node) ? NULL : has ? node->ext : box;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        bad += s_count (g_ptr_array_index (node->kids, i), inner, uses_showing);
    return bad;
}

int
ufo_desktop_misnested_ (const ufo_dnode_t *root, bool uses_showing)
{
    assert (root);
    return s_count (root, NULL, uses_showing);
}

//  --- the position pass ---------------------------------------------------------------------
//  (profile "pointer_enter", ufo_desktop_walk.c): one GetExtents per node whose extents were
//  read; roles and states are kept (a motion changes none of them: all 854 states of a Calc
//  window compared before and after with pyatspi). The shift is not uniform across a window
//  (LibreOffice's own objects move by 25 px, the GTK widgets inside them do not), so a delta
//  seen on a few probes is applied only inside a huge container, to its cells.

//  The cells of a huge container (a sheet's visible cells) are laid out in its frame: when the
//  application moves its objects (LibreOffice's 25 px), they move together. So the position
//  pass reads the extents of two probe cells only - the first and the last of the list, read
//  first and last, so that a change between the two reads shows as two different deltas - and
//  moves the others by their delta when both moved alike; otherwise every cell is read again.
typedef struct {
    char *container;            //  "bus path" keys
    char *first, *last;
    int first_ext [4], last_ext [4];
} s_probe_t;

static void
s_probe_free (gpointer data)
{
    s_probe_t *p = data;
    free (p->container);
    free (p->first);
    free (p->last);
    free (p);
}

GPtrArray *
ufo_desktop_probes_new_ (void)
{
    return g_ptr_array_new_with_free_func (s_probe_free);
}

static char *
s_key (const ufo_dnode_t *node)
{
    char *k = ufo_dnode_key_ (node->bus, node->path);
    char *copy = ufo_strdup (k);
    g_free (k);
    return copy;
}

void
ufo_desktop_stale_extents_ (ufo_dnode_t *node, GPtrArray *probes)
{
    node->ext_stale = true;
    guint n = node->kids ? node->kids->len : 0;
    if (node->virt && probes && n >= 3) {
        ufo_dnode_t *first = g_ptr_array_index (node->kids, 0);
        ufo_dnode_t *last = g_ptr_array_index (node->kids, n - 1);
        if (first->ext [2] > 0 && last->ext [2] > 0) {
            s_probe_t *p = ufo_calloc (1, sizeof (*p));
            p->container = s_key (node);
            p->first = s_key (first);
            p->last = s_key (last);
            memcpy (p->first_ext, first->ext, sizeof p->first_ext);
            memcpy (p->last_ext, last->ext, sizeof p->last_ext);
            g_ptr_array_add (probes, p);
            first->ext_stale = true;
            last->ext_stale = true;
            return;             //  (cells are leaves to the walk)
        }
    }
    for (guint i = 0; i < n; i++)
        ufo_desktop_stale_extents_ (g_ptr_array_index (node->kids, i), probes);
}

bool
ufo_desktop_probes_apply_ (ufo_desktop_t *desk, GPtrArray *probes)
{
    bool again = false;
    for (guint k = 0; probes && k < probes->len; k++) {
        const s_probe_t *p = g_ptr_array_index (probes, k);
        ufo_dnode_t *box = g_hash_table_lookup (desk->nodes, p->container);
        ufo_dnode_t *first = g_hash_table_lookup (desk->nodes, p->first);
        ufo_dnode_t *last = g_hash_table_lookup (desk->nodes, p->last);
        if (!box || !box->kids)
            continue;           //  gone, or re-read as a whole
        int dx = first ? first->ext [0] - p->first_ext [0] : 0;
        int dy = first ? first->ext [1] - p->first_ext [1] : 0;
        bool alike = first && last && first->ext [2] == p->first_ext [2]
                  && first->ext [3] == p->first_ext [3] && last->ext [2] == p->last_ext [2]
                  && last->ext [3] == p->last_ext [3]
                  && last->ext [0] - p->last_ext [0] == dx && last->ext [1] - p->last_ext [1] == dy;
        ufo_trace ("desktop: position pass of %s: probe cells moved %s (%d,%d)", p->container,
                   alike ? "alike" : "differently", dx, dy);
        for (guint i = 0; i < box->kids->len; i++) {
            ufo_dnode_t *cell = g_ptr_array_index (box->kids, i);
            if (cell == first || cell == last)
                continue;
            if (!alike) {
                cell->ext_stale = true;
                again = true;
            }
            else if (cell->ext [2] >= 0) {
                cell->ext [0] += dx;
                cell->ext [1] += dy;
            }
        }
    }
    if (probes)
        g_ptr_array_set_size (probes, 0);
    return again;
}
