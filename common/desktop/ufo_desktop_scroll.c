/*  ufo_desktop_scroll.c - positions inside an area that scrolled. GTK3 and Qt move a scrolled
    area's content without a bounds event for anything in it (a key moving a list's selection
    or the focus past the visible part, typing at the end of a long text). Two signs are used:
    - the value event of the area's scroll bar (object:property-change:accessible-value, sent
      by GTK3 and Qt): the cached extents inside the area are marked stale;
    - an item of a list, table or tree shown or hidden since its states were last read (Qt's
      item views expose no scroll bar; their items' states say which are in view, and the
      states are read again after an action of ours, and after the current item moved): its
      siblings' extents are marked stale.
    The next snapshot reads them again (only for what it shows: hidden subtrees are not
    entered), and nothing else. An area that does not scroll costs nothing. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_desktop_int.h"

#define S_CLIMB_MAX 3           //  levels from a scroll bar up to the area it scrolls

//  The node's extents and those of everything cached below it are read again; a huge
//  container's visible part (ufo_desktop_walk.c) is read again too.
static void
s_moved (ufo_dnode_t *node)
{
    node->ext_stale = true;
    //  a read of its details in flight may have had its extents answered before the move
    //  and finish after it: the read ends stale again (ufo_desktop_walk.c)
    if (node->stage == 2 && node->busy > 0)
        node->ext_moved = true;
    if (node->virt)
        node->kids_valid = false;
    if (node->virt && node->vwait > 0)
        node->vmoved = true;            //  (its visible part, as it is being read)
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_moved (g_ptr_array_index (node->kids, i));
}

void
ufo_desktop_scrolled_ (ufo_dnode_t *bar)
{
    assert (bar);
    //  the area: the nearest ancestor holding more than the bar - GTK3's scroll pane (its
    //  children are the content and its bars), Qt's scroll area (plain fillers: the viewport
    //  and, beside it, a filler holding only the bar)
    ufo_dnode_t *area = bar->parent;
    for (int i = 0; area && i < S_CLIMB_MAX && area->parent && area->kids && area->kids->len < 2; i++)
        area = area->parent;
    if (!area || !area->kids || area->kids->len < 2)
        return;
    ufo_trace ("desktop: scroll bar %s moved: extents below %s are read again", bar->path,
               area->path);
    s_moved (area);
}

//  Containers whose items a view scrolls.
static bool
s_item_view (uint32_t role)
{
    switch (role) {
        case ATSPI_ROLE_LIST: case ATSPI_ROLE_LIST_BOX: case ATSPI_ROLE_TABLE:
        case ATSPI_ROLE_TREE: case ATSPI_ROLE_TREE_TABLE:
            return true;
        default:
            return false;
    }
}

void
ufo_desktop_item_shown_ (ufo_dnode_t *item)
{
    assert (item);
    ufo_dnode_t *view = item->parent;
    if (!view || !s_item_view (view->role))
        return;
    ufo_trace ("desktop: item %s shown or hidden: extents below %s are read again",
               item->path, view->path);
    s_moved (view);
}

void
ufo_desktop_item_current_ (ufo_desktop_t *desk, ufo_dnode_t *item)
{
    assert (desk);
    assert (item);
    ufo_dnode_t *view = item->parent;
    if (!view || !s_item_view (view->role) || !view->kids)
        return;
    //  GTK3 reports a scroll through its scroll bars (ufo_desktop_scrolled_), and keeps every
    //  row "showing" whether in view or not: nothing to learn from the rows' states
    int flags = GPOINTER_TO_INT (g_hash_table_lookup (desk->bus_toolkit, item->bus));
    if (flags & UFO_DTK_EVENTS)
        return;
    for (guint i = 0; i < view->kids->len; i++) {
        ufo_dnode_t *kid = g_ptr_array_index (view->kids, i);
        if (kid->valid)
            kid->states_stale = true;
    }
}
