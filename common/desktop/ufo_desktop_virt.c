/*  ufo_desktop_virt.c - huge and virtual containers (a spreadsheet's 2^31 cells, a list of
    thousands of rows): which part of them a snapshot reads. Pure functions, no D-Bus; the
    walk (ufo_desktop_walk.c) asks the application for the corners of the visible part and
    reads the cells these functions choose, never the container's whole child list. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include <ctype.h>

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

//  --- the kind of a huge table's cells ----------------------------------------------------

void
ufo_desktop_cell_kind_reset (ufo_desktop_cell_kind_t *kind)
{
    assert (kind);
    bool mixed = kind->mixed;
    memset (kind, 0, sizeof (*kind));
    kind->mixed = mixed;
}

void
ufo_desktop_cell_kind_note (ufo_desktop_cell_kind_t *kind, int sample, bool ifaces,
                            uint32_t value)
{
    assert (kind);
    if (sample < 0 || sample >= UFO_DESKTOP_KIND_SAMPLES)
        return;
    if (ifaces)
        kind->ifaces [sample] = value;
    else
        kind->role [sample] = value;
    kind->got |= 1u << (2 * sample + (ifaces ? 1 : 0));
}

bool
ufo_desktop_cell_kind_uniform (const ufo_desktop_cell_kind_t *kind, uint32_t *role,
                               uint32_t *ifaces)
{
    assert (kind);
    if (kind->mixed || kind->got != (1u << (2 * UFO_DESKTOP_KIND_SAMPLES)) - 1
    ||  kind->role [0] == 0)
        return false;
    for (int i = 1; i < UFO_DESKTOP_KIND_SAMPLES; i++)
        if (kind->role [i] != kind->role [0] || kind->ifaces [i] != kind->ifaces [0])
            return false;
    if (role)
        *role = kind->role [0];
    if (ifaces)
        *ifaces = kind->ifaces [0];
    return true;
}

void
ufo_desktop_cell_kind_contradict (ufo_desktop_cell_kind_t *kind)
{
    assert (kind);
    kind->mixed = true;
}

//  --- A1-style cell addresses (spreadsheet actions, ufo_desktop_sheet.c) -------------------

//  Reads "B12" / "$B$12" / "b12" at *p: column (0-based) and row (0-based). Advances *p.
static bool
s_cell (const char **p, int *row, int *col)
{
    const char *s = *p;
    if (*s == '$')
        s++;
    int64_t c = 0;
    int letters = 0;
    while (isalpha ((unsigned char) *s) && letters < 4) {
        c = c * 26 + (toupper ((unsigned char) *s) - 'A' + 1);
        s++;
        letters++;
    }
    if (letters == 0 || isalpha ((unsigned char) *s))
        return false;
    if (*s == '$')
        s++;
    int64_t r = 0;
    int digits = 0;
    while (isdigit ((unsigned char) *s) && digits < 8) {
        r = r * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || r < 1 || isdigit ((unsigned char) *s))
        return false;
    *row = (int) (r - 1);
    *col = (int) (c - 1);
    *p = s;
    return true;
}

int
ufo_desktop_cell_range_parse (const char *text, int nrows, int ncols, ufo_desktop_range_t *out,
                              ufo_error_t *err)
{
    assert (out);
    const char *p = text ? text : "";
    while (*p == ' ')
        p++;
    ufo_desktop_range_t r = { 0, 0, 0, 0 };
    bool ok = s_cell (&p, &r.row0, &r.col0);
    r.row1 = r.row0;
    r.col1 = r.col0;
    if (ok && *p == ':') {
        p++;
        ok = s_cell (&p, &r.row1, &r.col1);
    }
    while (ok && *p == ' ')
        p++;
    if (!ok || *p) {
        ufo_error_set (err, UFO_E_INVALID, "\"%.40s\" is not a cell or range in A1 style "
                       "(a cell such as \"B2\", a range such as \"A1:C3\")", text ? text : "");
        return -1;
    }
    if (r.row1 < r.row0) {
        int t = r.row0; r.row0 = r.row1; r.row1 = t;
    }
    if (r.col1 < r.col0) {
        int t = r.col0; r.col0 = r.col1; r.col1 = t;
    }
    if ((nrows > 0 && r.row1 >= nrows) || (ncols > 0 && r.col1 >= ncols)) {
        char last [16];
        ufo_desktop_cell_name (nrows > 0 ? nrows - 1 : 0, ncols > 0 ? ncols - 1 : 0, last, sizeof last);
        ufo_error_set (err, UFO_E_INVALID, "\"%.40s\" is outside the sheet, which ends at %s "
                       "(%d columns, %d rows)", text, last, ncols, nrows);
        return -1;
    }
    *out = r;
    return 0;
}

char *
ufo_desktop_cell_name (int row, int col, char *buf, size_t size)
{
    assert (buf && size >= 16);
    char letters [8];
    int n = 0;
    for (int64_t c = (int64_t) col + 1; c > 0 && n < 7; c = (c - 1) / 26)
        letters [n++] = (char) ('A' + (c - 1) % 26);
    size_t at = 0;
    while (n > 0)
        buf [at++] = letters [--n];
    snprintf (buf + at, size - at, "%d", row + 1);
    return buf;
}
