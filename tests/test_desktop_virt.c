/*  test_desktop_virt.c - huge and virtual containers (issue 19), on values recorded from
    LibreOffice Calc 7.4: its sheet is a table of 1,048,576 x 16,384 cells reporting
    2,147,483,647 children; the cells at the corners of the visible area were A1 (row 0,
    column 0) and M39 (row 38, column 12). The walk reads such a table through the Table
    interface: these are the decisions it makes. */
#include "ufo_test.h"
#include "ufo.h"

UFO_TEST (test_child_count_bound)
{
    //  Calc's sheet, and an int32 count that overflowed: never enumerated
    CHECK (ufo_desktop_huge_container (2147483647, 400));
    CHECK (ufo_desktop_huge_container (-1, 400));
    CHECK (ufo_desktop_huge_container (401, 400));
    //  ordinary containers are read with GetChildren
    CHECK (!ufo_desktop_huge_container (400, 400));
    CHECK (!ufo_desktop_huge_container (0, 400));
}

UFO_TEST (test_calc_visible_range)
{
    //  recorded: 2^20 rows, 2^14 columns, corners A1 and M39; 200 cells at most
    ufo_desktop_range_t r = ufo_desktop_visible_range (1048576, 16384, 0, 0, 38, 12, 200);
    CHECK_INT (r.row0, 0);
    CHECK_INT (r.col0, 0);
    CHECK_INT (r.col1, 12);         //  every visible column (A..M)
    CHECK_INT (r.row1, 14);         //  whole rows while they fit: 15 x 13 = 195 cells
    CHECK ((r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1) <= 200);
    //  scrolled: the range starts at the first visible cell
    r = ufo_desktop_visible_range (1048576, 16384, 1000, 26, 1038, 38, 200);
    CHECK_INT (r.row0, 1000);
    CHECK_INT (r.col0, 26);
    CHECK_INT (r.col1, 38);
    CHECK_INT (r.row1, 1014);
    //  a far corner that could not be read (its index overflowed): bounded all the same
    r = ufo_desktop_visible_range (1048576, 16384, 0, 0, -1, -1, 200);
    CHECK ((int64_t) (r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1) <= 200);
    CHECK (r.row1 >= r.row0 && r.col1 >= r.col0);
    //  wider than the bound: one row of max_cells columns
    r = ufo_desktop_visible_range (10, 1000, 0, 0, 9, 999, 50);
    CHECK_INT (r.row1, 0);
    CHECK_INT (r.col1, 49);
}

UFO_TEST (test_list_and_edges)
{
    //  a long list (no Table interface): one column, rows from the first visible one
    ufo_desktop_range_t r = ufo_desktop_visible_range (-1, -1, 120, -1, 160, -1, 200);
    CHECK_INT (r.col0, 0);
    CHECK_INT (r.col1, 0);
    CHECK_INT (r.row0, 120);
    CHECK_INT (r.row1, 160);
    //  a table smaller than its corners say: clamped
    r = ufo_desktop_visible_range (5, 3, 0, 0, 40, 12, 200);
    CHECK_INT (r.row1, 4);
    CHECK_INT (r.col1, 2);
    //  empty table, no budget: nothing to read
    r = ufo_desktop_visible_range (0, 3, 0, 0, 4, 2, 200);
    CHECK (r.row1 < r.row0);
    r = ufo_desktop_visible_range (5, 3, 0, 0, 4, 2, 0);
    CHECK (r.row1 < r.row0);
    //  a first row past the end is clamped to the last row
    r = ufo_desktop_visible_range (5, 3, 9, 0, 12, 2, 200);
    CHECK_INT (r.row0, 4);
    CHECK_INT (r.row1, 4);
}

int
main (void)
{
    UFO_RUN (test_child_count_bound);
    UFO_RUN (test_calc_visible_range);
    UFO_RUN (test_list_and_edges);
    return UFO_TEST_END ();
}
