/*  ufo_desktop_virt.c - huge and virtual containers (a spreadsheet's 2^31 cells, a list of
    thousands of rows): which part of them a snapshot reads. Pure functions, no D-Bus; the
    walk (ufo_desktop_walk.c) asks the application for the corners of the visible part and
    reads the cells these functions choose, never the container's whole child list. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"

bool
ufo_desktop_huge_container (int child_count, int bound)
{
    return child_count < 0 || child_count > bound;
}

ufo_desktop_range_t
ufo_desktop_visible_range (int nrows, int ncols, int first_row, int first_col, int last_row,
                           int last_col, int max_cells)
{
    ufo_desktop_range_t r = { 0, -1, 0, -1 };
    if (max_cells < 1)
        return r;
    if (ncols < 1)
        ncols = 1;                  //  a list: one column
    if (nrows == 0)
        return r;                   //  an empty table
    r.row0 = first_row >= 0 ? first_row : 0;
    r.col0 = first_col >= 0 && first_col < ncols ? first_col : 0;
    if (nrows > 0 && r.row0 >= nrows)
        r.row0 = nrows - 1;
    //  the far corner unknown (or before the near one): as many as the bound allows
    r.row1 = last_row >= r.row0 ? last_row : INT_MAX;
    r.col1 = last_col >= r.col0 && last_col < ncols ? last_col : ncols - 1;
    if (nrows > 0 && r.row1 > nrows - 1)
        r.row1 = nrows - 1;
    //  whole rows first: the columns that fit, then as many rows as the bound leaves
    int64_t cols = (int64_t) r.col1 - r.col0 + 1;
    if (cols > max_cells) {
        cols = max_cells;
        r.col1 = r.col0 + (int) cols - 1;
    }
    int64_t rows = max_cells / cols;
    if ((int64_t) r.row1 - r.row0 + 1 > rows)
        r.row1 = r.row0 + (int) rows - 1;
    return r;
}
