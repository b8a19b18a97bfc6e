/*  test_desktop_rows.c - the rules for rows of lists (ufo_desktop_rows.c) without a display.
    White-box: nodes are built by hand the way GTK 4.8 exposes them (docs/DESKTOP.md "Rows of
    lists"); test_desktop_gtklist checks the same on gnome-text-editor. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_desktop_int.h"

static ufo_dnode_t
s_node (uint32_t role, const char *name)
{
    ufo_dnode_t node = { 0 };
    node.role = role;
    node.name = (char *) name;
    return node;
}

UFO_TEST (test_rowless_views)
{
    //  GTK 4.8's file list: a filler named after its class, with only header buttons in it
    ufo_dnode_t view = s_node (ATSPI_ROLE_FILLER, "GtkTreeView");
    ufo_dnode_t header = s_node (ATSPI_ROLE_PUSH_BUTTON, "GtkButton");
    view.kids = g_ptr_array_new ();
    g_ptr_array_add (view.kids, &header);
    CHECK (ufo_dnode_rowless_view_ (&view));
    CHECK_STR (ufo_dnode_rows_note_ (&view), UFO_DESKTOP_NO_ROWS);
    CHECK_STR (ufo_desktop_control_type_ (NULL, &view), "List");
    //  not read yet (no children): still nothing to offer as rows
    GPtrArray *kids = view.kids;
    view.kids = NULL;
    CHECK_STR (ufo_dnode_rows_note_ (&view), UFO_DESKTOP_NO_ROWS);
    //  a toolkit that does give it rows: the List says nothing about them
    ufo_dnode_t row = s_node (ATSPI_ROLE_TABLE_ROW, "");
    view.kids = kids;
    g_ptr_array_add (view.kids, &row);
    CHECK (ufo_dnode_rows_note_ (&view) == NULL);
    g_ptr_array_unref (kids);
    view.kids = NULL;
    ufo_dnode_t icons = s_node (ATSPI_ROLE_FILLER, "GtkIconView");
    CHECK (ufo_dnode_rowless_view_ (&icons));
}

UFO_TEST (test_not_rowless)
{
    //  other fillers, views with roles, and names that are not class names
    const struct { uint32_t role; const char *name; } cases [] = {
        { ATSPI_ROLE_FILLER, "GtkBuiltinIcon" }, { ATSPI_ROLE_FILLER, "GtkListItemWidget" },
        { ATSPI_ROLE_FILLER, "" }, { ATSPI_ROLE_FILLER, NULL },
        { ATSPI_ROLE_FILLER, "TreeView" }, { ATSPI_ROLE_FILLER, "My TreeView" },
        { ATSPI_ROLE_FILLER, "GtkTreeViewColumn" }, { ATSPI_ROLE_TABLE, "GtkTreeView" },
        { ATSPI_ROLE_TREE_TABLE, "GtkTreeView" }, { ATSPI_ROLE_LIST, "GtkListView" },
        { ATSPI_ROLE_PANEL, "GtkTreeView" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_dnode_t node = s_node (cases [i].role, cases [i].name);
        CHECK (!ufo_dnode_rowless_view_ (&node));
        CHECK (ufo_dnode_rows_note_ (&node) == NULL);
        const char *type = ufo_desktop_control_type_ (NULL, &node);
        CHECK (!type || strcmp (type, "List") != 0);
    }
    //  GTK3 gives the same view the table role: its cells are ListItems as before
    ufo_dnode_t cell = s_node (ATSPI_ROLE_TABLE_CELL, "apple");
    CHECK_STR (ufo_desktop_control_type_ (NULL, &cell), "ListItem");
}

UFO_TEST (test_row_roles)
{
    CHECK (ufo_dnode_row_role_ (ATSPI_ROLE_LIST_ITEM));
    CHECK (ufo_dnode_row_role_ (ATSPI_ROLE_TREE_ITEM));
    CHECK (ufo_dnode_row_role_ (ATSPI_ROLE_TABLE_ROW));
    CHECK (ufo_dnode_row_role_ (ATSPI_ROLE_TABLE_CELL));
    CHECK (!ufo_dnode_row_role_ (ATSPI_ROLE_LIST));
    CHECK (!ufo_dnode_row_role_ (ATSPI_ROLE_PUSH_BUTTON));
    CHECK (!ufo_dnode_row_role_ (ATSPI_ROLE_FILLER));
    CHECK (!ufo_dnode_row_role_ (ATSPI_ROLE_INVALID));
}

int
main (void)
{
    UFO_RUN (test_rowless_views);
    UFO_RUN (test_not_rowless);
    UFO_RUN (test_row_roles);
    return UFO_TEST_END ();
}
