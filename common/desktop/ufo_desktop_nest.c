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
