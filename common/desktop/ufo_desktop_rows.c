/*  ufo_desktop_rows.c - rows of lists as the toolkits expose them (docs/DESKTOP.md, "Rows of
    lists"): which nodes are rows, and views whose rows the toolkit does not expose at all.
    GTK 4.8 gives a GtkListBox / GtkListView row the role "list item" with no name (its text
    is in the labels inside it: the walk names the row by them), and gives its cell-renderer
    views (GtkTreeView - the file chooser's file list -, GtkIconView) no role and no rows. */
#include "ufo_prelude.h"
#include "ufo_desktop_int.h"

bool
ufo_dnode_row_role_ (uint32_t role)
{
    return role == ATSPI_ROLE_LIST_ITEM || role == ATSPI_ROLE_TREE_ITEM
        || role == ATSPI_ROLE_TABLE_ROW || role == ATSPI_ROLE_TABLE_CELL;
}

//  True if name ends with suffix.
static bool
s_ends_with (const char *name, const char *suffix)
{
    size_t n = strlen (name), k = strlen (suffix);
    return n >= k && streq (name + n - k, suffix);
}

bool
ufo_dnode_rowless_view_ (const ufo_dnode_t *node)
{
    //  no role of its own (a filler, as GTK4 maps a widget without an accessible role) and
    //  named after its toolkit class: a cell-renderer view, which GTK4 exposes without rows
    //  (GTK3 gives the same views the role table / tree table with their cells)
    if (node->role != ATSPI_ROLE_FILLER || !node->name || !ufo_desktop_class_name (node->name))
        return false;
    return s_ends_with (node->name, "TreeView") || s_ends_with (node->name, "IconView");
}

const char *
ufo_dnode_rows_note_ (const ufo_dnode_t *node)
{
    if (!ufo_dnode_rowless_view_ (node))
        return NULL;
    for (guint i = 0; node->kids && i < node->kids->len; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (ufo_dnode_row_role_ (kid->role))
            return NULL;        //  a later toolkit that does expose them: nothing to say
    }
    return UFO_DESKTOP_NO_ROWS;
}
