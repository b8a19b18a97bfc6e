/*  test_desktop_nest.c - the containment check of ufo_desktop_nest.c without a display
    (ufo_desktop_misnested_: shown nodes sticking out of their nearest ancestor with extents,
    the sign that LibreOffice's positions were read before they settled). White-box: it
    includes the desktop module's private header to build a cached tree by hand, the way the
    walk leaves it. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_desktop_int.h"

#define SHOWN ((1ull << ATSPI_STATE_VISIBLE) | (1ull << ATSPI_STATE_SHOWING))

//  A node read in full (role, states, extents; w = -1: extents not read), added to parent.
static ufo_dnode_t *
s_node (ufo_dnode_t *parent, uint32_t role, int x, int y, int w, int h)
{
    ufo_dnode_t *node = calloc (1, sizeof (*node));
    node->path = "/test";
    node->role = role;
    node->states = SHOWN;
    node->valid = node->detail_valid = true;
    node->ext [0] = x, node->ext [1] = y, node->ext [2] = w, node->ext [3] = h;
    node->parent = parent;
    if (parent) {
        if (!parent->kids)
            parent->kids = g_ptr_array_new ();
        g_ptr_array_add (parent->kids, node);
    }
    return node;
}

static void
s_free (ufo_dnode_t *node)
{
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_free (g_ptr_array_index (node->kids, i));
    if (node->kids)
        g_ptr_array_unref (node->kids);
    free (node);
}

UFO_TEST (test_nesting)
{
    ufo_dnode_t *frame = s_node (NULL, ATSPI_ROLE_FRAME, 0, 0, 800, 600);
    ufo_dnode_t *panel = s_node (frame, ATSPI_ROLE_PANEL, 10, 10, 200, 100);
    s_node (panel, ATSPI_ROLE_PUSH_BUTTON, 20, 20, 50, 20);             //  inside
    s_node (panel, ATSPI_ROLE_PUSH_BUTTON, 10, 10, 200, 100);           //  exactly its size
    s_node (panel, ATSPI_ROLE_PUSH_BUTTON, 7, 8, 206, 104);             //  out by the slack
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);

    //  LibreOffice's 25 px: a button of the panel drawn below it
    ufo_dnode_t *off = s_node (panel, ATSPI_ROLE_PUSH_BUTTON, 20, 100, 50, 20);
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    off->ext [1] = 94;                  //  out by 4 px at the bottom: within the slack
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    off->ext [1] = 95;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    off->ext [0] = 5, off->ext [1] = 20;                //  out at the left
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    //  not counted: hidden (not visible; not showing where the toolkit sets showing), not
    //  read, not read in detail, or of no size
    off->states = 1ull << ATSPI_STATE_VISIBLE;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    CHECK_INT (ufo_desktop_misnested_ (frame, false), 1);
    off->states = SHOWN;
    off->valid = false;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    off->valid = true;
    off->detail_valid = false;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    off->detail_valid = true;
    off->ext [2] = -1;                  //  extents unknown
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    off->ext [2] = 50;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    off->ext [0] = 20;                  //  back inside
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);

    //  a container without extents: its inside is checked against the nearest one with them
    ufo_dnode_t *filler = s_node (panel, ATSPI_ROLE_FILLER, 0, 0, -1, -1);
    ufo_dnode_t *deep = s_node (filler, ATSPI_ROLE_CHECK_BOX, 300, 20, 20, 20);
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    deep->ext [0] = 30;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);

    //  what may lie outside its container: the inside of what scrolls, of popups, and the
    //  cells of a huge table (a cell at the edge is partly outside); a leaf's inside is not
    //  looked at
    ufo_dnode_t *scroll = s_node (panel, ATSPI_ROLE_SCROLL_PANE, 10, 40, 200, 50);
    ufo_dnode_t *row = s_node (scroll, ATSPI_ROLE_PUSH_BUTTON, 10, 400, 200, 20);
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    ufo_dnode_t *table = s_node (panel, ATSPI_ROLE_TABLE, 10, 40, 200, 50);
    table->virt = true;
    s_node (table, ATSPI_ROLE_TABLE_CELL, 190, 80, 80, 20);
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    s_node (row, ATSPI_ROLE_LABEL, 900, 900, 10, 10);
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 0);
    //  the same table not huge: its cell sticking out counts
    table->virt = false;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    //  but the scroll pane itself is checked against its own container
    table->virt = true;
    scroll->ext [1] = 200;
    CHECK_INT (ufo_desktop_misnested_ (frame, true), 1);
    s_free (frame);
}

int
main (void)
{
    UFO_RUN (test_nesting);
    return UFO_TEST_END ();
}
