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

int
main (void)
{
    UFO_RUN (test_inner_frame_display);
    return UFO_TEST_END ();
}
