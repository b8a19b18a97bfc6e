/*  ufo_desktop_sheet.c - the spreadsheet actions the original offers for Excel, on any window
    whose latest snapshot showed a spreadsheet table (a huge AT-SPI Table whose cells are
    named by their A1 address; ufo_desktop_walk.c finds it, docs/DESKTOP.md "Spreadsheets"):

      get_range_values   {"range": "A1:B3"}  the cells' shown values, row by row, read through
                         the Table interface (GetAccessibleAt, then Text and the cell's
                         attributes for its formula), never by enumerating the sheet; a
                         formula the attributes cut short (LibreOffice cuts at the first ":"
                         or ";") is read from the formula bar ("Input line") with the cell
                         made active through the Name Box, at most S_MAX_CUT per call, and
                         the active cell or range put back afterwards
      select_table_range {"range": "A1:B3"}  selects the range, the cursor at its first cell
      go_to_cell         {"cell": "C7"}      makes C7 the active cell

    Selecting and going to a cell put the address into the window's Name Box (an Edit named
    "Name Box", by its accessible name or the application's profile) through EditableText,
    press Enter in it (keyboard_input), then read the Name Box back to check that the sheet
    followed. (Component.GrabFocus on a cell moved LibreOffice's cursor only while no range
    was selected: not used.) */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

typedef struct {
    char *path;                 //  the cell's object path, NULL until known
    char *value;                //  its text
    char *formula;              //  its formula ("=SUM(A1:A3)"), NULL if none or unreadable
    char *cut;                  //  the start of a formula the attributes cut ("=SUM(A1"), or NULL
    int left;                   //  replies still expected for this cell
} s_cell_t;

//  get_range_values reads at most this many cut formulas from the formula bar per call (each
//  one moves the active cell: a Name Box entry and an Enter)
#define S_MAX_CUT 20

//  The formula bar's text is polled this often, this long, after the active cell moved.
#define S_BAR_POLL_MS 30
#define S_BAR_WAIT_MS 3000

//  Phases of reading cut formulas from the formula bar (get_range_values).
typedef enum { B_NONE, B_ORIGIN, B_GOTO, B_READ, B_RESTORE } s_bar_t;

typedef struct {
    int64_t xid;
    char *function;
    char *bus, *table_path;     //  the sheet's table
    ufo_desktop_range_t r;
    int rows, cols;             //  of the range
    s_cell_t *cells;            //  rows x cols, row-major
    int left;                   //  cells not yet complete
    ufo_desktop_op_t *inner;    //  the keyboard_input into the Name Box
    char *nb_bus, *nb_path;     //  the Name Box
    char *expect;               //  what the Name Box shows once the sheet followed
    bool checking;              //  reading the Name Box back
    ufo_value_t *enter;         //  the keyboard_input args for the Name Box (Enter)
    char *nb_label;             //  the Name Box's label
    int64_t xid_;
    //  get_range_values: cut formulas read from the formula bar
    s_bar_t bar;                //  the phase, B_NONE while not reading them
    char *il_bus, *il_path;     //  the formula bar ("Input line")
    char *origin;               //  what the Name Box showed before (put back at the end)
    int *cut;                   //  indexes into cells of the cut formulas to read
    int ncut, icut;             //  how many, the one being read
    int64_t bar_until, bar_next;    //  B_READ: give up after, next poll at
    bool bar_polling;           //  B_READ: a GetText is in flight
    ufo_value_t *unread;        //  cells whose formula could not be read (names), or NULL
} s_sheet_t;

static void
s_free (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    if (!st)
        return;
    for (int i = 0; st->cells && i < st->rows * st->cols; i++) {
        free (st->cells [i].path);
        free (st->cells [i].value);
        free (st->cells [i].formula);
        free (st->cells [i].cut);
    }
    free (st->cells);
    free (st->function);
    free (st->bus);
    free (st->table_path);
    free (st->nb_bus);
    free (st->nb_path);
    free (st->expect);
    free (st->nb_label);
    free (st->il_bus);
    free (st->il_path);
    free (st->origin);
    free (st->cut);
    ufo_value_destroy (&st->unread);
    ufo_value_destroy (&st->enter);
    ufo_desktop_op_destroy (&st->inner);
    free (st);
    op->state = NULL;
}

bool
ufo_desktop_sheet_action_ (const char *function)
{
    return function && (streq (function, "get_range_values")
                        || streq (function, "select_table_range") || streq (function, "go_to_cell"));
}

//  --- get_range_values ----------------------------------------------------------------------

//  All cells read: the result. text is JSON: {"range", "values": [[...], ...], "formulas":
//  {"A4": "=SUM(A1:A3)"}} (formulas only where the cell has one and it could be read), and
//  "formulas_unread": ["C9", ...] when some cell's formula was cut and could not be read.
static void
s_read_done (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    ufo_value_t *values = ufo_value_new_list ();
    ufo_value_t *formulas = ufo_value_new_map ();
    for (int r = 0; r < st->rows; r++) {
        ufo_value_t *row = ufo_value_new_list ();
        for (int c = 0; c < st->cols; c++) {
            const s_cell_t *cell = &st->cells [r * st->cols + c];
            ufo_value_list_push_str (row, cell->value ? cell->value : "");
            if (cell->formula) {
                char name [16];
                ufo_desktop_cell_name (st->r.row0 + r, st->r.col0 + c, name, sizeof name);
                ufo_value_map_set_str (formulas, name, cell->formula);
            }
        }
        ufo_value_list_push (values, &row);
    }
    char first [16], last [16];
    ufo_desktop_cell_name (st->r.row0, st->r.col0, first, sizeof first);
    ufo_desktop_cell_name (st->r.row1, st->r.col1, last, sizeof last);
    char range [40];
    snprintf (range, sizeof range, "%s:%s", first, last);
    ufo_value_t *out = ufo_value_new_map ();
    ufo_value_map_set_str (out, "range", range);
    ufo_value_map_set_copy (out, "values", values);
    ufo_value_map_set_copy (out, "formulas", formulas);
    if (st->unread)
        ufo_value_map_set_copy (out, "formulas_unread", st->unread);
    char *text = ufo_json_dump (out, 0, NULL);
    ufo_value_destroy (&out);
    op->result = ufo_value_new_map ();
    ufo_value_map_set (op->result, "values", &values);
    ufo_value_map_set (op->result, "formulas", &formulas);
    if (st->unread)
        ufo_value_map_set (op->result, "formulas_unread", &st->unread);
    ufo_desktop_op_finish_ (op, true, text, NULL);
    free (text);
}

static void s_bar_begin (ufo_desktop_op_t *op);

static void
s_cell_step (ufo_desktop_op_t *op, s_cell_t *cell)
{
    s_sheet_t *st = op->state;
    if (--cell->left == 0 && --st->left == 0 && !op->done)
        s_bar_begin (op);
}

static void
s_on_text (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    if (!op || op->done)
        return;
    s_cell_t *cell = data;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "reading a cell's text failed: %s", error);
        return;
    }
    const char *text = NULL;
    g_variant_get (reply, "(&s)", &text);
    free (cell->value);
    cell->value = ufo_strdup (text ? text : "");
    s_cell_step (op, cell);
}

//  The cell's attributes: LibreOffice gives its formula as "Formula" without the "=", with
//  \ ; = , : escaped by a backslash, and its ATK bridge cuts the value at the first ":" or
//  ";" (the attribute string is split there: "SUM(A1\"). A whole formula is unescaped; a
//  cut one (ending in a lone backslash) keeps its start in cell->cut for the formula bar.
static void
s_on_attrs (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);             //  no attributes: no formula
    if (!op || op->done)
        return;
    s_cell_t *cell = data;
    if (reply) {
        GVariant *dict = g_variant_get_child_value (reply, 0);
        const char *formula = NULL;
        if (g_variant_lookup (dict, "Formula", "&s", &formula) && formula && *formula) {
            size_t n = strlen (formula);
            char *plain = ufo_malloc (n + 2), *o = plain;
            bool cut = false;
            if (formula [0] != '=')
                *o++ = '=';
            for (const char *p = formula; *p; p++) {
                if (*p == '\\' && !p [1])
                    cut = true;
                else if (*p == '\\')
                    *o++ = *++p;
                else
                    *o++ = *p;
            }
            *o = '\0';
            free (cell->formula);
            free (cell->cut);
            cell->formula = cut ? NULL : plain;
            cell->cut = cut ? plain : NULL;
        }
        g_variant_unref (dict);
    }
    s_cell_step (op, cell);
}

//  --- get_range_values: cut formulas, from the formula bar ------------------------------------

static void s_goto (ufo_desktop_op_t *op, const char *where, s_bar_t phase);
static void s_bar_next (ufo_desktop_op_t *op);
static void s_on_namebox (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data);

//  The label of the window's `type` control named `name` in its latest snapshot, or NULL.
static const char *
s_control_label (const ufo_dwin_t *win, const char *type, const char *name)
{
    for (size_t i = 0; win && i < ufo_value_size (win->controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (win->controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), type)
        &&  streq (ufo_value_map_str (c, "control_text", ""), name))
            return ufo_value_map_str (c, "label", NULL);
    }
    return NULL;
}

//  The bus and path of the control labelled `label` of window win; false if there is none.
static bool
s_control_at (const ufo_dwin_t *win, const char *label, char **bus, char **path)
{
    const ufo_dlabel_t *entry = label ? ufo_desktop_label_find_ (win, label) : NULL;
    const char *space = entry ? strchr (entry->key, ' ') : NULL;
    if (!space)
        return false;
    *bus = ufo_strndup (entry->key, (size_t) (space - entry->key));
    *path = ufo_strdup (space + 1);
    return true;
}

//  Adds the name of cell index i to the cells whose formula was not read.
static void
s_unread (s_sheet_t *st, int i)
{
    char name [16];
    ufo_desktop_cell_name (st->r.row0 + i / st->cols, st->r.col0 + i % st->cols, name, sizeof name);
    if (!st->unread)
        st->unread = ufo_value_new_list ();
    ufo_value_list_push_str (st->unread, name);
}

//  All cells' replies are in: the cut formulas are read from the formula bar (when the
//  window has a Name Box and an Input line), else the result is given at once.
static void
s_bar_begin (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    int n = st->rows * st->cols;
    st->cut = ufo_calloc ((size_t) n, sizeof (int));
    for (int i = 0; i < n; i++)
        if (st->cells [i].cut) {
            if (st->ncut < S_MAX_CUT)
                st->cut [st->ncut++] = i;
            else
                s_unread (st, i);
        }
    ufo_dwin_t *win = ufo_desktop_win_ (op->desk, st->xid, false);
    const char *nb = s_control_label (win, "Edit", "Name Box");
    if (st->ncut == 0 || !nb || !s_control_at (win, nb, &st->nb_bus, &st->nb_path)
    ||  !s_control_at (win, s_control_label (win, "Edit", "Input line"), &st->il_bus,
                       &st->il_path)) {
        for (int k = 0; k < st->ncut; k++)
            s_unread (st, st->cut [k]);
        s_read_done (op);
        return;
    }
    st->nb_label = ufo_strdup (nb);
    st->xid_ = st->xid;
    st->enter = ufo_value_new_map ();
    ufo_value_map_set_str (st->enter, "keys", "{ENTER}");
    st->bar = B_ORIGIN;             //  what the Name Box shows now, to put it back
    op->deadline = ufo_desktop_now_ms_ () + op->desk->action_timeout_ms + 2000;
    ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.Text", "GetText",
                       g_variant_new ("(ii)", 0, -1), "(s)", s_on_namebox, NULL);
}

//  B_READ: the formula bar's text; the formula once it starts as the cut one did (the bar
//  follows the active cell a moment later), else polled again until S_BAR_WAIT_MS.
static void
s_on_bar (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    UFO_UNUSED (error);
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    st->bar_polling = false;
    s_cell_t *cell = &st->cells [st->cut [st->icut]];
    const char *text = NULL;
    if (reply)
        g_variant_get (reply, "(&s)", &text);
    if (text && strncmp (text, cell->cut, strlen (cell->cut)) == 0) {
        cell->formula = ufo_strdup (text);
        st->icut++;
        s_bar_next (op);
    }
    else if (ufo_desktop_now_ms_ () >= st->bar_until) {
        s_unread (st, st->cut [st->icut]);
        st->icut++;
        s_bar_next (op);
    }
    else
        st->bar_next = ufo_desktop_now_ms_ () + S_BAR_POLL_MS;
}

//  The next cut formula's cell made active, or (all read) the Name Box's first text put
//  back.
static void
s_bar_next (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    if (st->icut < st->ncut) {
        char name [16];
        int i = st->cut [st->icut];
        ufo_desktop_cell_name (st->r.row0 + i / st->cols, st->r.col0 + i % st->cols, name,
                               sizeof name);
        s_goto (op, name, B_GOTO);
    }
    else if (st->origin && *st->origin)
        s_goto (op, st->origin, B_RESTORE);
    else
        s_read_done (op);
}

static void
s_on_cell (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    s_cell_t *cell = data;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "the sheet did not give a cell: %s", error);
        return;
    }
    const char *bus = NULL, *path = NULL;
    g_variant_get (reply, "((&s&o))", &bus, &path);
    if (!path || streq (path, "/org/a11y/atspi/null")) {
        ufo_desktop_op_finish_ (op, false, NULL, "the sheet has no cell there");
        return;
    }
    cell->path = ufo_strdup (path);
    cell->left = 2;
    ufo_desktop_call_ (op, st->bus, cell->path, "org.a11y.atspi.Text", "GetText",
                       g_variant_new ("(ii)", 0, -1), "(s)", s_on_text, cell);
    ufo_desktop_call_ (op, st->bus, cell->path, "org.a11y.atspi.Accessible", "GetAttributes",
                       NULL, "(a{ss})", s_on_attrs, cell);
}

//  --- select_table_range, go_to_cell ---------------------------------------------------------

static void
s_on_namebox (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    const char *text = NULL;
    if (reply)
        g_variant_get (reply, "(&s)", &text);
    if (st->bar == B_ORIGIN) {              //  unread: nothing is put back
        st->origin = ufo_strdup (text ? text : "");
        s_bar_next (op);
        return;
    }
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "reading the Name Box failed: %s", error);
        return;
    }
    if (text && g_ascii_strcasecmp (text, st->expect) == 0) {
        char *note = streq (st->function, "go_to_cell")
            ? g_strdup_printf ("%s is the active cell", st->expect)
            : g_strdup_printf ("%s is selected", st->expect);
        ufo_desktop_op_finish_ (op, true, note, NULL);
        g_free (note);
    }
    else
        ufo_desktop_op_finish_ (op, false, NULL, "%s was typed into the Name Box, but it shows "
                                "'%.40s' (the sheet did not follow)", st->expect, text ? text : "");
}

static bool
s_poll (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    if (!op->done && st->bar == B_READ && !st->bar_polling
    &&  ufo_desktop_now_ms_ () >= st->bar_next) {
        st->bar_polling = true;
        ufo_desktop_call_ (op, st->il_bus, st->il_path, "org.a11y.atspi.Text", "GetText",
                           g_variant_new ("(ii)", 0, -1), "(s)", s_on_bar, NULL);
    }
    if (op->done || !st->inner || st->checking)
        return op->done;
    if (!ufo_desktop_op_done (st->inner))
        return false;
    ufo_value_t *r = ufo_desktop_op_take_result (st->inner);
    ufo_desktop_op_destroy (&st->inner);
    if (st->bar == B_GOTO || st->bar == B_RESTORE) {
        bool ok = ufo_value_map_bool (r, "success", false);
        ufo_value_destroy (&r);
        if (st->bar == B_RESTORE)
            s_read_done (op);       //  the formulas are read; a lost restore costs nothing read
        else if (!ok) {
            s_unread (st, st->cut [st->icut]);
            st->icut++;
            s_bar_next (op);
        }
        else {
            st->bar = B_READ;
            st->bar_until = ufo_desktop_now_ms_ () + S_BAR_WAIT_MS;
            st->bar_next = 0;
            op->deadline = st->bar_until + 2000;
        }
        return op->done;
    }
    if (!ufo_value_map_bool (r, "success", false))
        ufo_desktop_op_finish_ (op, false, NULL, "typing into the Name Box failed: %s",
                                ufo_value_map_str (r, "error", ""));
    else {
        st->checking = true;
        ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.Text", "GetText",
                           g_variant_new ("(ii)", 0, -1), "(s)", s_on_namebox, NULL);
    }
    ufo_value_destroy (&r);
    return op->done;
}

static int64_t
s_wake (const ufo_desktop_op_t *op)
{
    const s_sheet_t *st = op->state;
    if (st && st->inner)
        return ufo_desktop_op_wake (st->inner);
    if (st && st->bar == B_READ && !st->bar_polling)
        return st->bar_next;
    return op->deadline;
}

//  The address put into the Name Box (EditableText, no keys: under load keys typed after a
//  D-Bus GrabFocus could reach the sheet instead), then Enter in it (keyboard_input: the Name
//  Box focused first); s_poll then reads it back. A lost Enter leaves the Name Box showing
//  something else: the action fails saying so.
static void
s_on_namebox_set (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    gboolean ok = FALSE;
    if (reply)
        g_variant_get (reply, "(b)", &ok);
    if (!ok && st->bar == B_GOTO) {           //  this formula stays unread
        s_unread (st, st->cut [st->icut]);
        st->icut++;
        s_bar_next (op);
        return;
    }
    if (!ok && st->bar == B_RESTORE) {
        s_read_done (op);
        return;
    }
    if (!ok) {
        ufo_desktop_op_finish_ (op, false, NULL, "the Name Box did not take '%s'%s%s", st->expect,
                                error ? ": " : "", error ? error : "");
        return;
    }
    st->inner = ufo_desktop_act_begin (op->desk, st->xid_, st->nb_label, "keyboard_input", st->enter);
    op->deadline = ufo_desktop_op_deadline (st->inner) + 2000;
}

//  Puts `where` (a cell or range) into the Name Box and presses Enter there (s_on_namebox_set,
//  then s_poll once the Enter is done), in get_range_values' phase `phase`.
static void
s_goto (ufo_desktop_op_t *op, const char *where, s_bar_t phase)
{
    s_sheet_t *st = op->state;
    st->bar = phase;
    free (st->expect);
    st->expect = ufo_strdup (where);
    op->deadline = ufo_desktop_now_ms_ () + op->desk->action_timeout_ms + 2000;
    ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.EditableText", "SetTextContents",
                       g_variant_new ("(s)", where), "(b)", s_on_namebox_set, NULL);
}

ufo_desktop_op_t *
ufo_desktop_sheet_begin_ (ufo_desktop_t *desk, int64_t xid, const char *function,
                          const ufo_value_t *args)
{
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (desk, desk->action_timeout_ms + 2000);
    s_sheet_t *st = ufo_calloc (1, sizeof (*st));
    op->state = st;
    op->free_state = s_free;
    op->poll = s_poll;
    op->wake = s_wake;
    st->xid = xid;
    st->function = ufo_strdup (function);
    bool go = streq (function, "go_to_cell");
    const char *key = go ? "cell" : "range";
    const ufo_value_t *arg = ufo_value_map_get (args, key);
    if (args && ufo_value_type (args) != UFO_TMAP) {
        ufo_desktop_op_finish_ (op, false, NULL, "Args must be an object");
        return op;
    }
    if (ufo_value_type (arg) != UFO_TSTRING) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs a string '%s' in A1 style, e.g. %s",
                                function, key, go ? "\"C7\"" : "\"A1:B3\"");
        return op;
    }
    ufo_dwin_t *win = ufo_desktop_win_ (desk, xid, false);
    ufo_dnode_t *table = win && win->sheet_key ? g_hash_table_lookup (desk->nodes, win->sheet_key)
                                               : NULL;
    if (!table) {
        ufo_desktop_op_finish_ (op, false, NULL,
                                "%s needs a spreadsheet: the latest snapshot of window %" PRId64
                                " shows no sheet (a table whose cells are named A1, B2 ...)",
                                function, xid);
        return op;
    }
    ufo_error_t err = { 0 };
    if (ufo_desktop_cell_range_parse (ufo_value_str (arg), table->vrows, table->vcols, &st->r,
                                      &err) != 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s: %s", function, err.message);
        return op;
    }
    st->rows = st->r.row1 - st->r.row0 + 1;
    st->cols = st->r.col1 - st->r.col0 + 1;
    if (go && (st->rows > 1 || st->cols > 1)) {
        ufo_desktop_op_finish_ (op, false, NULL, "go_to_cell takes one cell, not the range "
                                "'%.40s' (select_table_range selects a range)", ufo_value_str (arg));
        return op;
    }
    st->bus = ufo_strdup (table->bus);
    st->table_path = ufo_strdup (table->path);
    char first [16], last [16];
    ufo_desktop_cell_name (st->r.row0, st->r.col0, first, sizeof first);
    ufo_desktop_cell_name (st->r.row1, st->r.col1, last, sizeof last);

    if (streq (function, "get_range_values")) {
        if ((int64_t) st->rows * st->cols > UFO_DESKTOP_MAX_CELLS) {
            ufo_desktop_op_finish_ (op, false, NULL, "get_range_values reads at most %d cells at "
                                    "once; %s:%s has %" PRId64 ": read it in parts",
                                    UFO_DESKTOP_MAX_CELLS, first, last,
                                    (int64_t) st->rows * st->cols);
            return op;
        }
        st->cells = ufo_calloc ((size_t) (st->rows * st->cols), sizeof (s_cell_t));
        st->left = st->rows * st->cols;
        for (int r = 0; r < st->rows; r++)
            for (int c = 0; c < st->cols; c++)
                ufo_desktop_call_ (op, st->bus, st->table_path, "org.a11y.atspi.Table",
                                   "GetAccessibleAt",
                                   g_variant_new ("(ii)", st->r.row0 + r, st->r.col0 + c),
                                   "((so))", s_on_cell, &st->cells [r * st->cols + c]);
        return op;
    }

    //  through the Name Box
    const char *label = s_control_label (win, "Edit", "Name Box");
    const ufo_dlabel_t *entry = label ? ufo_desktop_label_find_ (win, label) : NULL;
    if (!entry) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs the window's Name Box (an Edit named "
                                "\"Name Box\"), and the latest snapshot shows none",
                                function);
        return op;
    }
    const char *space = strchr (entry->key, ' ');
    st->nb_bus = ufo_strndup (entry->key, (size_t) (space - entry->key));
    st->nb_path = ufo_strdup (space + 1);
    st->nb_label = ufo_strdup (label);
    st->xid_ = xid;
    char range [40];
    snprintf (range, sizeof range, "%s:%s", first, last);
    st->expect = ufo_strdup (st->rows == 1 && st->cols == 1 ? first : range);
    st->enter = ufo_value_new_map ();
    ufo_value_map_set_str (st->enter, "keys", "{ENTER}");
    ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.EditableText", "SetTextContents",
                       g_variant_new ("(s)", st->expect), "(b)", s_on_namebox_set, NULL);
    return op;
}
