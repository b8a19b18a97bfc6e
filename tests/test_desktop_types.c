/*  test_desktop_types.c - control types of accessible roles (ufo_desktop_control_type_ in
    ufo_desktop_node.c) without a display. White-box: it includes the desktop module's private
    header to build nodes by hand, with the parents, children and names the walk would have
    read. Cases come from applications no other test uses (docs/DESKTOP.md, "Tried on"). */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_desktop_int.h"

static const char *
s_type (const ufo_dnode_t *node)
{
    const char *type = ufo_desktop_control_type_ (NULL, node);
    return type ? type : "(none)";
}

//  KCalc 22.12 (Qt 5): the result display is a QFrame subclass, a frame inside the window
//  named after the number it shows ("0"), with no children. It is read as Text; the window's
//  own frame, an unnamed or class-named inner frame, and one holding widgets are not controls.
UFO_TEST (test_inner_frame_display)
{
    ufo_dnode_t app = { .role = ATSPI_ROLE_APPLICATION, .name = "kcalc" };
    ufo_dnode_t window = { .role = ATSPI_ROLE_FRAME, .name = "KCalc", .kids_valid = true };
    ufo_dnode_t filler = { .role = ATSPI_ROLE_FILLER, .parent = &window, .kids_valid = true };
    ufo_dnode_t display = { .role = ATSPI_ROLE_FRAME, .name = "0", .parent = &filler,
                            .kids_valid = true };
    window.kids = g_ptr_array_new ();
    g_ptr_array_add (window.kids, &filler);
    filler.kids = g_ptr_array_new ();
    g_ptr_array_add (filler.kids, &display);
    CHECK_STR (s_type (&display), "Text");
    //  its children not read yet: not known to be a display
    display.kids_valid = false;
    CHECK_STR (s_type (&display), "(none)");
    display.kids_valid = true;
    display.kids = g_ptr_array_new ();            //  read, empty
    CHECK_STR (s_type (&display), "Text");
    //  the window's frame: no parent in the window's tree, or the application's child
    CHECK_STR (s_type (&window), "(none)");
    window.parent = &app;
    CHECK_STR (s_type (&window), "(none)");
    //  a frame holding widgets (Qt's "Outline" dock, a group of buttons) is structure
    ufo_dnode_t button = { .role = ATSPI_ROLE_PUSH_BUTTON, .name = "7", .parent = &display };
    g_ptr_array_add (display.kids, &button);
    CHECK_STR (s_type (&display), "(none)");
    g_ptr_array_set_size (display.kids, 0);
    //  nothing to read: no name, blanks, a class name
    display.name = "";
    CHECK_STR (s_type (&display), "(none)");
    display.name = " \t";
    CHECK_STR (s_type (&display), "(none)");
    display.name = "QFrame";
    CHECK_STR (s_type (&display), "(none)");
    g_ptr_array_free (display.kids, TRUE);
    g_ptr_array_free (filler.kids, TRUE);
    g_ptr_array_free (window.kids, TRUE);
}

//  geany 1.38 (GTK3): the symbol tree's column packs an icon and the text, and GTK3 exposes
//  a cell per row holding one cell per renderer - three ListItems per row, two of them
//  "(unnamed ...)". Only the named renderer (which has the row's states and actions) is a
//  control; a checkable one is kept for its state; a name not read yet keeps the cell a
//  control (names are read for controls only).
UFO_TEST (test_renderer_cells)
{
    ufo_dnode_t tree = { .role = ATSPI_ROLE_TREE_TABLE, .kids_valid = true };
    ufo_dnode_t holder = { .role = ATSPI_ROLE_TABLE_CELL, .name = "", .parent = &tree,
                           .kids_valid = true };
    ufo_dnode_t icon = { .role = ATSPI_ROLE_TABLE_CELL, .name = "", .parent = &holder,
                         .kids_valid = true };
    ufo_dnode_t text = { .role = ATSPI_ROLE_TABLE_CELL, .name = "Functions", .parent = &holder,
                         .kids_valid = true };
    holder.kids = g_ptr_array_new ();
    g_ptr_array_add (holder.kids, &icon);
    g_ptr_array_add (holder.kids, &text);
    CHECK_STR (s_type (&holder), "(none)");
    CHECK_STR (s_type (&icon), "(none)");
    CHECK_STR (s_type (&text), "ListItem");
    //  a toggle renderer before the text: its state matters
    icon.states = 1ull << ATSPI_STATE_CHECKABLE;
    CHECK_STR (s_type (&icon), "ListItem");
    icon.states = 0;
    //  a renderer's name not read yet: still a control, so that it is read
    icon.name = NULL;
    CHECK_STR (s_type (&icon), "ListItem");
    //  a holder's name is not read (it is no control): still the holder; before its
    //  children are read it is a control, so that they and its name are read
    holder.name = NULL;
    CHECK_STR (s_type (&holder), "(none)");
    GPtrArray *kids = holder.kids;
    holder.kids = NULL;
    CHECK_STR (s_type (&holder), "ListItem");
    holder.kids = kids;
    //  a holder with a name of its own is the row's cell
    holder.name = "Functions";
    CHECK_STR (s_type (&holder), "ListItem");
    //  a plain cell (one renderer per column, gucharmap's script list), even unnamed, is one
    ufo_dnode_t plain = { .role = ATSPI_ROLE_TABLE_CELL, .name = "", .parent = &tree,
                          .kids_valid = true };
    CHECK_STR (s_type (&plain), "ListItem");
    g_ptr_array_free (holder.kids, TRUE);
}

//  gnome-system-monitor 42 (GTK3) and qpdfview (Qt 5): a list's column headers ("Process
//  Name", "% CPU") sort it when clicked; they are offered as buttons, as GTK4's are.
UFO_TEST (test_column_headers)
{
    ufo_dnode_t tree = { .role = ATSPI_ROLE_TREE_TABLE, .kids_valid = true };
    ufo_dnode_t header = { .role = ATSPI_ROLE_TABLE_COLUMN_HEADER, .name = "% CPU",
                           .parent = &tree, .kids_valid = true };
    CHECK_STR (s_type (&header), "Button");
    header.role = ATSPI_ROLE_COLUMN_HEADER;
    CHECK_STR (s_type (&header), "Button");
    //  in a document (a web page's table heading) it is text
    ufo_dnode_t page = { .role = ATSPI_ROLE_DOCUMENT_WEB, .kids_valid = true };
    tree.parent = &page;
    CHECK_STR (s_type (&header), "Text");
    tree.parent = NULL;
    //  a row header is no control (Qt lists one per column, with no place)
    header.role = ATSPI_ROLE_TABLE_ROW_HEADER;
    CHECK_STR (s_type (&header), "(none)");
}

int
main (void)
{
    UFO_RUN (test_column_headers);
    UFO_RUN (test_renderer_cells);
    UFO_RUN (test_inner_frame_display);
    return UFO_TEST_END ();
}
