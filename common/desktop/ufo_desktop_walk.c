/*  ufo_desktop_walk.c - control snapshots: a pipelined, visible-only AT-SPI walk over D-Bus
    with a node cache that AT-SPI events invalidate piece by piece.

    Every node of a window is read with five calls issued together (role, states, name,
    interfaces, extents) plus its children list; all nodes of the walk are in flight at
    once, so a walk costs about one round trip per tree level instead of eight per node.
    Hidden subtrees are not entered. Nodes stay cached between snapshots; an event on a
    node marks only that node (or its children list) stale. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"
#include <atspi/atspi.h>


typedef struct {
    char *key;
    uint64_t serial;
    int what;
    int slot;                   //  W_VDIM: 0 rows 1 columns; W_VAT..W_VRC: the corner; W_VCELL
} s_ref_t;

//  W_ROLE..W_KIDS keep the node busy. W_NKIDS..W_VCELL read a huge container's visible part.
enum { W_ROLE, W_STATE, W_NAME, W_IFACES, W_EXTENTS, W_NKIDS, W_VEXT, W_VDIM, W_VAT, W_VIDX,
       W_VRC, W_VKIND, W_VCELL, W_KIDS, W_ACTIONS, W_TEXT, W_VALUE, W_DESC, W_RELS, W_COUNT, W_TEXT2, W_ANAME };


static bool
s_offered (const ufo_dsnap_t *st, const char *type)
{
    if (!type)
        return false;
    for (size_t i = 0; i < ufo_value_size (st->types); i++) {
        const char *name = ufo_value_str (ufo_value_list_at (st->types, i));
        if (name && streq (name, type))     //  a non-string entry is ignored
            return true;
    }
    return false;
}

//  A top-level window of the application other than a popup (a frame or dialog that is not
//  the snapshot's window): listed among the application's children, never walked from there.
static bool
s_foreign (const ufo_dnode_t *node)
{
    return node->parent && node->parent->role == ATSPI_ROLE_APPLICATION
        && node->valid && node->role != ATSPI_ROLE_WINDOW;
}

//  True if node is the application's root or below it (a popup window's subtree).
static bool
s_under_app (const ufo_dnode_t *node)
{
    for (; node; node = node->parent)
        if (node->role == ATSPI_ROLE_APPLICATION)
            return true;
    return false;
}

//  True if node is the one the cache answers for its key (a popup window's copy of an
//  object a window tree took over is not).
static bool
s_registered (ufo_desktop_t *desk, const ufo_dnode_t *node)
{
    char *key = ufo_dnode_key_ (node->bus, node->path);
    bool yes = g_hash_table_lookup (desk->nodes, key) == node;
    g_free (key);
    return yes;
}

//  The application's root node (cached per bus name): its children list holds its popup
//  windows - a GTK3 context or combo menu is a top-level "window" of the application, not a
//  child of the frame. The frame itself (a node of its own) is left out of that list.
static ufo_dnode_t *
s_app_node (ufo_desktop_t *desk, const char *bus)
{
    ufo_dnode_t *app = g_hash_table_lookup (desk->apps, bus);
    if (!app) {
        app = ufo_dnode_new_ (desk, bus, "/org/a11y/atspi/accessible/root", NULL);
        app->role = ATSPI_ROLE_APPLICATION;
        app->states = (1ull << ATSPI_STATE_VISIBLE) | (1ull << ATSPI_STATE_SHOWING)
                    | (1ull << ATSPI_STATE_SENSITIVE);
        app->valid = true;
        app->detail_valid = true;
        g_hash_table_insert (desk->apps, g_strdup (bus), app);
    }
    return app;
}

//  --- the walk ------------------------------------------------------------------------------

//  Extents are asked in screen coordinates where the toolkit gives them right (GTK3: also
//  for popup menus, which are windows of their own), else relative to the window (GTK4 gives
//  window-relative extents whatever is asked), and the window's origin is added.
static GVariant *
s_coords (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    return g_variant_new ("(u)", (guint32) (st->uses_showing ? ATSPI_COORD_TYPE_SCREEN
                                                             : ATSPI_COORD_TYPE_WINDOW));
}

static guint32
st_coords (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    return st->uses_showing ? ATSPI_COORD_TYPE_SCREEN : ATSPI_COORD_TYPE_WINDOW;
}

//  The node's top-left corner on screen.
static void
s_origin (const ufo_dsnap_t *st, const ufo_dnode_t *node, int *x, int *y)
{
    *x = node->ext [0] + (st->uses_showing ? 0 : st->wx);
    *y = node->ext [1] + (st->uses_showing ? 0 : st->wy);
}

static void s_visit (ufo_desktop_op_t *op, ufo_dnode_t *node);
static void s_details (ufo_desktop_op_t *op, ufo_dnode_t *node);
static void s_maybe_finish (ufo_desktop_op_t *op);

static void
s_node_call (ufo_desktop_op_t *op, ufo_dnode_t *node, int what, const char *iface,
             const char *method, GVariant *params, const char *reply_type);
static void
s_vcall (ufo_desktop_op_t *op, ufo_dnode_t *node, int what, int slot, const char *bus,
         const char *path, const char *iface, const char *method, GVariant *params,
         const char *reply_type);

static ufo_dnode_t *
s_ref_node (ufo_desktop_t *desk, s_ref_t *ref)
{
    char *key = ref->key;
    ufo_dnode_t *node = g_hash_table_lookup (desk->nodes, key);
    return (node && ufo_dnode_serial_ (node) == ref->serial) ? node : NULL;
}

//  A copy of text without U+FFFC, the object replacement character that stands for each
//  embedded child (Firefox's paragraphs and documents, LibreOffice's frames).
static char *
s_drop_objects (const char *text)
{
    char *out = ufo_strdup (text);
    char *w = out;
    for (const char *r = text; *r; ) {
        if ((unsigned char) r [0] == 0xEF && (unsigned char) r [1] == 0xBF
        &&  (unsigned char) r [2] == 0xBC)
            r += 3;
        else
            *w++ = *r++;
    }
    *w = '\0';
    return out;
}

static void
s_set_kids (ufo_desktop_t *desk, ufo_dnode_t *node, GVariant *arr)
{
    GPtrArray *old = node->kids;
    GPtrArray *kids = g_ptr_array_new ();
    GVariantIter iter;
    const char *bus, *path;
    g_variant_iter_init (&iter, arr);
    while (g_variant_iter_next (&iter, "(&s&o)", &bus, &path)) {
        if (kids->len >= 5000)
            break;                  //  a list this long is data, not controls
        ufo_dnode_t *kid = NULL;
        for (guint i = 0; old && i < old->len; i++) {
            ufo_dnode_t *o = g_ptr_array_index (old, i);
            if (o && streq (o->bus, bus) && streq (o->path, path)) {
                kid = o;
                g_ptr_array_index (old, i) = NULL;
                //  an object that moved in the list may hold other content now
                if (i != kids->len)
                    o->extra_valid = false;
                break;
            }
        }
        if (!kid && s_under_app (node)) {
            //  reached through the application's popup windows: an object some window's tree
            //  already holds (a window root; a GTK3 combo's menu, which is also the child of
            //  its popup window) stays that tree's, so nothing is offered twice
            char *key = ufo_dnode_key_ (bus, path);
            ufo_dnode_t *known = g_hash_table_lookup (desk->nodes, key);
            g_free (key);
            if (known)
                continue;
        }
        if (!kid)
            kid = ufo_dnode_new_ (desk, bus, path, node);
        g_ptr_array_add (kids, kid);
    }
    if (old) {
        for (guint i = 0; i < old->len; i++)
            if (g_ptr_array_index (old, i))
                ufo_dnode_free_ (desk, g_ptr_array_index (old, i));
        g_ptr_array_unref (old);
    }
    node->kids = kids;
    node->kids_valid = true;
}


//  The interface bits of a GetInterfaces reply.
static uint32_t
s_iface_bits (GVariant *reply)
{
    const char **names = NULL;
    uint32_t bits = 0;
    g_variant_get (reply, "(^a&s)", &names);
    for (int i = 0; names && names [i]; i++) {
        const char *s = names [i];
        if (streq (s, "org.a11y.atspi.Component")) bits |= S_IF_COMPONENT;
        else if (streq (s, "org.a11y.atspi.Action")) bits |= S_IF_ACTION;
        else if (streq (s, "org.a11y.atspi.Text")) bits |= S_IF_TEXT;
        else if (streq (s, "org.a11y.atspi.EditableText")) bits |= S_IF_EDITABLE;
        else if (streq (s, "org.a11y.atspi.Value")) bits |= S_IF_VALUE;
        else if (streq (s, "org.a11y.atspi.Selection")) bits |= S_IF_SELECTION;
    }
    g_free (names);
    return bits;
}

//  True, with the cells' role and interfaces, if node is a cell of a huge table whose cells
//  are all alike (its corner cells said so, and no cell contradicted them): then neither is
//  asked of the cell.
static bool
s_cell_kind (const ufo_dnode_t *node, uint32_t *role, uint32_t *ifaces)
{
    return node->parent && node->parent->virt
        && ufo_desktop_cell_kind_uniform (&node->parent->vkind, role, ifaces);
}

//  --- huge and virtual containers --------------------------------------------------------------
//  A spreadsheet reports 2^31 - 1 cells, a long list thousands of rows: asking for all children
//  makes the application build them all (LibreOffice then spins and grows for minutes). The
//  roles that can be that large are counted first (ChildCount); above UFO_DESKTOP_MAX_KIDS only
//  the visible part is read: the cells at the corners of the container's visible area
//  (Component.GetAccessibleAtPoint), their row and column (GetIndexInParent, then the Table's
//  GetRowColumnExtentsAtIndex), and the cells between (Table.GetAccessibleAt; a list without
//  Table: GetChildAtIndex), at most UFO_DESKTOP_MAX_CELLS (ufo_desktop_visible_range).

static bool
s_maybe_huge (uint32_t role)
{
    switch (role) {
        case ATSPI_ROLE_TABLE: case ATSPI_ROLE_TREE_TABLE: case ATSPI_ROLE_TREE:
        case ATSPI_ROLE_LIST: case ATSPI_ROLE_LIST_BOX: case ATSPI_ROLE_DOCUMENT_SPREADSHEET:
        case ATSPI_ROLE_DOCUMENT_TEXT: case ATSPI_ROLE_DOCUMENT_FRAME: case ATSPI_ROLE_DOCUMENT_WEB:
        case ATSPI_ROLE_DOCUMENT_PRESENTATION: case ATSPI_ROLE_SCROLL_PANE: case ATSPI_ROLE_VIEWPORT:
            return true;
        default:
            return false;
    }
}

//  A container that shows only part of its inside: a scroll pane or viewport (what is
//  scrolled out of it is not on screen, though inside the window), and the list of a combo
//  box (Qt keeps a closed combo's list, "showing", with no size, its items at made-up
//  places). Their extents are read; an empty one hides its inside (ufo_dnode_hidden_), and
//  controls outside them are not offered (s_collect).
static bool
s_clips (const ufo_dnode_t *node)
{
    if (node->role == ATSPI_ROLE_SCROLL_PANE || node->role == ATSPI_ROLE_VIEWPORT)
        return true;
    return (node->role == ATSPI_ROLE_LIST || node->role == ATSPI_ROLE_LIST_BOX)
        && node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX;
}

//  An item view (Qt's QTableView, QTreeView, QListView; GTK's tree view): its extents are
//  read, and one of no size hides its items (ufo_dnode_hidden_): Qt reports the view on a
//  tab page not shown with no size, and one of its cells as showing, at the place it would
//  have (qpdfview's Shortcuts table, offered on the Behavior page). Its column headers are
//  at its top (s_header_bottom).
static bool
s_view_role (uint32_t role)
{
    return role == ATSPI_ROLE_TABLE || role == ATSPI_ROLE_TREE_TABLE || role == ATSPI_ROLE_TREE
        || role == ATSPI_ROLE_LIST || role == ATSPI_ROLE_LIST_BOX;
}

//  A column header of a table or list: its extents are read, the rows under it are not in
//  view (s_header_bottom).
static bool
s_column_header (const ufo_dnode_t *node)
{
    return node->role == ATSPI_ROLE_TABLE_COLUMN_HEADER || node->role == ATSPI_ROLE_COLUMN_HEADER;
}

//  The visible part of the container in the coordinates its extents are read in.
static bool
s_visible_box (ufo_desktop_op_t *op, const ufo_dnode_t *node, int box [4])
{
    ufo_dsnap_t *st = op->state;
    int wx = st->uses_showing ? st->wx : 0, wy = st->uses_showing ? st->wy : 0;
    int l = MAX (node->ext [0], wx), t = MAX (node->ext [1], wy);
    int r = MIN (node->ext [0] + node->ext [2], wx + st->ww);
    int b = MIN (node->ext [1] + node->ext [3], wy + st->wh);
    if (node->ext [2] <= 0 || node->ext [3] <= 0 || r - l < 2 || b - t < 2)
        return false;
    box [0] = l, box [1] = t, box [2] = r, box [3] = b;
    return true;
}

//  The children list of a huge container: the cells read, in row order.
static void
s_vfinish (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    GVariantBuilder b;
    g_variant_builder_init (&b, G_VARIANT_TYPE ("a(so)"));
    for (int i = 0; node->vkids && i < node->vcells; i++) {
        char *key = node->vkids [i];
        char *sp = key ? strchr (key, ' ') : NULL;
        if (sp && g_variant_is_object_path (sp + 1)) {
            *sp = '\0';
            g_variant_builder_add (&b, "(so)", key, sp + 1);
            *sp = ' ';
        }
        free (key);
    }
    free (node->vkids);
    node->vkids = NULL;
    node->vcells = 0;
    GVariant *arr = g_variant_ref_sink (g_variant_builder_end (&b));
    s_set_kids (op->desk, node, arr);
    g_variant_unref (arr);
    if (node->vmoved) {         //  probed before a scroll, cells read after: read again
        ufo_trace ("desktop: %s scrolled while its visible part was read: read again",
                   node->path);
        node->kids_valid = false;
        node->vmoved = false;
    }
}

//  All probing calls answered: read the cells of the visible range.
static void
s_vnext (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    if (node->vcells > 0 || node->vkids) {      //  the cells are in: done
        s_vfinish (op, node);
        return;
    }
    bool table = node->vrows >= 0 && node->vcols >= 0;
    ufo_desktop_range_t r = ufo_desktop_visible_range (
        node->vrows, table ? node->vcols : 1, node->vcorner [0], table ? node->vcorner [1] : 0,
        node->vcorner [2], table ? node->vcorner [3] : 0, UFO_DESKTOP_MAX_CELLS);
    if (r.row1 < r.row0 || r.col1 < r.col0 || op->cancelled || op->done) {
        s_vfinish (op, node);
        return;
    }
    int n = (r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1);
    node->vkids = ufo_calloc ((size_t) n, sizeof (char *));
    node->vcells = n;
    int slot = 0;
    for (int row = r.row0; row <= r.row1; row++)
        for (int col = r.col0; col <= r.col1; col++, slot++) {
            if (table)
                s_vcall (op, node, W_VCELL, slot, node->bus, node->path, "org.a11y.atspi.Table",
                         "GetAccessibleAt", g_variant_new ("(ii)", row, col), "((so))");
            else
                s_vcall (op, node, W_VCELL, slot, node->bus, node->path,
                         "org.a11y.atspi.Accessible", "GetChildAtIndex", g_variant_new ("(i)", row),
                         "((so))");
        }
}

//  The first corner of a huge table probed met no row: at the top of a table with column
//  headers is the header row, where GTK answers nothing and Qt a header, not a cell (the
//  list scrolled, reading from row 0 would offer no row in view). The corner is probed
//  again a few pixels lower, within the visible part and a bound that covers a header row.
#define S_VPROBE_STEP 2
#define S_VPROBE_TRIES 40

static void
s_vprobe_lower (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    int box [4];
    if (op->cancelled || op->done || node->vtries >= S_VPROBE_TRIES
    ||  !s_visible_box (op, node, box) || node->vprobe_y + S_VPROBE_STEP >= box [3] - 2)
        return;
    node->vtries++;
    node->vprobe_y += S_VPROBE_STEP;
    s_vcall (op, node, W_VAT, 0, node->bus, node->path, "org.a11y.atspi.Component",
             "GetAccessibleAtPoint", g_variant_new ("(iiu)", box [0] + 1, node->vprobe_y,
                                                    st_coords (op)), "((so))");
}

//  A reply of the huge-container reading. Returns after issuing what comes next.
static void
s_vreply (ufo_desktop_op_t *op, ufo_dnode_t *node, const s_ref_t *ref, GVariant *reply)
{
    bool go = !op->cancelled && !op->done;
    switch (ref->what) {
        case W_NKIDS: {
            GVariant *v = NULL;
            if (reply)
                g_variant_get (reply, "(v)", &v);
            int count = v && g_variant_is_of_type (v, G_VARIANT_TYPE_INT32)
                      ? g_variant_get_int32 (v) : 0;
            if (v)
                g_variant_unref (v);
            if (!reply || !go)
                s_set_kids (op->desk, node, g_variant_new ("a(so)", NULL));
            else if (!ufo_desktop_huge_container (count, UFO_DESKTOP_MAX_KIDS)) {
                node->virt = false;
                s_node_call (op, node, W_KIDS, "org.a11y.atspi.Accessible", "GetChildren", NULL,
                             "(a(so))");
            }
            else {
                ufo_trace ("desktop: %s has %d children: reading the visible part", node->path,
                           count);
                node->virt = true;
                node->vrows = node->vcols = -1;
                ufo_desktop_cell_kind_reset (&node->vkind);
                node->vtries = 0;
                node->vtop = INT_MIN;
                for (int i = 0; i < 4; i++)
                    node->vcorner [i] = -1;
                s_vcall (op, node, W_VEXT, 0, node->bus, node->path, "org.a11y.atspi.Component",
                         "GetExtents", s_coords (op), "((iiii))");
                for (int i = 0; i < 2; i++)
                    s_vcall (op, node, W_VDIM, i, node->bus, node->path,
                             "org.freedesktop.DBus.Properties", "Get",
                             g_variant_new ("(ss)", "org.a11y.atspi.Table",
                                            i == 0 ? "NRows" : "NColumns"), "(v)");
            }
            return;
        }
        case W_VEXT: {
            int box [4];
            if (reply)
                g_variant_get (reply, "((iiii))", &node->ext [0], &node->ext [1], &node->ext [2],
                               &node->ext [3]);
            if (reply && go && s_visible_box (op, node, box)) {
                guint32 coords = st_coords (op);
                node->vprobe_y = box [1] + 1;
                s_vcall (op, node, W_VAT, 0, node->bus, node->path, "org.a11y.atspi.Component",
                         "GetAccessibleAtPoint", g_variant_new ("(iiu)", box [0] + 1, box [1] + 1,
                                                                coords), "((so))");
                s_vcall (op, node, W_VAT, 1, node->bus, node->path, "org.a11y.atspi.Component",
                         "GetAccessibleAtPoint", g_variant_new ("(iiu)", box [2] - 2, box [3] - 2,
                                                                coords), "((so))");
            }
            break;
        }
        case W_VDIM: {
            GVariant *v = NULL;
            if (reply)
                g_variant_get (reply, "(v)", &v);
            if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_INT32)) {
                if (ref->slot == 0)
                    node->vrows = g_variant_get_int32 (v);
                else
                    node->vcols = g_variant_get_int32 (v);
                node->ifaces |= S_IF_TABLE;
            }
            if (v)
                g_variant_unref (v);
            break;
        }
        case W_VAT: {
            const char *bus = NULL, *path = NULL;
            if (reply)
                g_variant_get (reply, "((&s&o))", &bus, &path);
            if (go && bus && *bus && path && !streq (path, "/org/a11y/atspi/null")) {
                s_vcall (op, node, W_VIDX, ref->slot, bus, path, "org.a11y.atspi.Accessible",
                         "GetIndexInParent", NULL, "(i)");
                //  the corner cells tell what the cells are (ufo_desktop_cell_kind_t)
                s_vcall (op, node, W_VKIND, ref->slot * 2, bus, path, "org.a11y.atspi.Accessible",
                         "GetRole", NULL, "(u)");
                if (((ufo_dsnap_t *) op->state)->uses_showing)
                    s_vcall (op, node, W_VKIND, ref->slot * 2 + 1, bus, path,
                             "org.a11y.atspi.Accessible", "GetInterfaces", NULL, "(as)");
                else            //  (not asked of the cells either: s_details)
                    ufo_desktop_cell_kind_note (&node->vkind, ref->slot, true, 0);
            }
            else if (ref->slot == 0)
                s_vprobe_lower (op, node);
            break;
        }
        case W_VKIND: {
            uint32_t value = 0;
            if (reply && ref->slot % 2 == 0)
                g_variant_get (reply, "(u)", &value);
            else if (reply)
                value = s_iface_bits (reply);
            if (reply)
                ufo_desktop_cell_kind_note (&node->vkind, ref->slot / 2, ref->slot % 2 == 1, value);
            break;
        }
        case W_VIDX: {
            int index = -1;
            if (reply)
                g_variant_get (reply, "(i)", &index);
            if (index < 0 && ref->slot == 0)
                s_vprobe_lower (op, node);
            if (index < 0 || !go)
                break;
            //  a list: the index is the row; a table: ask it (the index of a far cell of a
            //  huge sheet may have overflowed: then the corner stays unknown)
            if (node->vrows < 0 || node->vcols < 0) {
                node->vcorner [ref->slot * 2] = index;
                node->vcorner [ref->slot * 2 + 1] = 0;
            }
            s_vcall (op, node, W_VRC, ref->slot, node->bus, node->path, "org.a11y.atspi.Table",
                     "GetRowColumnExtentsAtIndex", g_variant_new ("(i)", index), "(biiiib)");
            break;
        }
        case W_VRC: {
            gboolean ok = FALSE, sel = FALSE;
            int row = -1, col = -1, rs = 0, cs = 0;
            if (reply)
                g_variant_get (reply, "(biiiib)", &ok, &row, &col, &rs, &cs, &sel);
            if (ok && row >= 0 && col >= 0) {
                //  the far corner: the last row and column the spanning cell covers
                node->vcorner [ref->slot * 2] = ref->slot ? row + MAX (rs, 1) - 1 : row;
                node->vcorner [ref->slot * 2 + 1] = ref->slot ? col + MAX (cs, 1) - 1 : col;
                if (ref->slot == 0 && node->vtries > 0)
                    node->vtop = node->vprobe_y - S_VPROBE_STEP + 1;
            }
            else if (ref->slot == 0 && node->vrows >= 0 && node->vcols >= 0)
                s_vprobe_lower (op, node);      //  a column header (not a row of cells)
            break;
        }
        case W_VCELL: {
            const char *bus = NULL, *path = NULL;
            if (reply)
                g_variant_get (reply, "((&s&o))", &bus, &path);
            if (bus && *bus && path && !streq (path, "/org/a11y/atspi/null")
            &&  node->vkids && ref->slot < node->vcells) {
                free (node->vkids [ref->slot]);
                char *key = ufo_dnode_key_ (bus, path);
                node->vkids [ref->slot] = ufo_strdup (key);
                g_free (key);
            }
            break;
        }
    }
    if (--node->vwait == 0)
        s_vnext (op, node);
}

//  The hidden menu or list of options inside a combo box (a closed select in Chromium): its
//  children are read - only the selected one further, being the one shown - so that the
//  combo box's value is its selection; nothing in it is offered.
static bool
s_closed_options (const ufo_dsnap_t *st, const ufo_dnode_t *node)
{
    return node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX
        && (node->role == ATSPI_ROLE_MENU || node->role == ATSPI_ROLE_LIST
            || node->role == ATSPI_ROLE_LIST_BOX)
        && (!ufo_dnode_has_state_ (node, ATSPI_STATE_VISIBLE)
            || (st->uses_showing && !ufo_dnode_has_state_ (node, ATSPI_STATE_SHOWING)));
}

static bool
s_is_button (const ufo_dnode_t *node)
{
    return node->role == ATSPI_ROLE_PUSH_BUTTON || node->role == ATSPI_ROLE_TOGGLE_BUTTON;
}

//  True if name names the control: not empty, not a toolkit class name ("GtkButton"), and in
//  GTK4, which names an unnamed widget after its type, not a type name ("EditorSourceView").
static bool
s_named (const ufo_dsnap_t *st, const char *name)
{
    while (name && *name == ' ')
        name++;
    return name && *name && !ufo_desktop_class_name (name)
        && (st->uses_showing || !ufo_desktop_type_name (name));
}

static void
s_expand (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    ufo_dsnap_t *st = op->state;
    if (ufo_dnode_hidden_ (node, st->uses_showing)) {
        if (s_closed_options (st, node))
            for (guint i = 0; node->kids && i < node->kids->len; i++)
                s_visit (op, g_ptr_array_index (node->kids, i));
        return;
    }
    if (!node->kids_valid && !ufo_dnode_leaf_ (node) && node->busy == 0
    &&  (node->role == ATSPI_ROLE_PUSH_BUTTON || node->role == ATSPI_ROLE_TOGGLE_BUTTON)) {
        //  a button that turned out (by its class name, read with the details) to hold what
        //  it shows (GTK4's menu button): its children now, then this again
        node->stage = 2;
        s_node_call (op, node, W_KIDS, "org.a11y.atspi.Accessible", "GetChildren", NULL,
                     "(a(so))");
        return;
    }
    if (!node->extra_valid && s_offered (st, ufo_desktop_control_type_ (op->desk, node))) {
        node->extra_valid = true;
        free (node->desc);
        node->desc = NULL;
        free (node->relby);
        node->relby = NULL;
        //  no usable name (none, or a class name such as GtkButton): the naming rules need
        //  the labelled-by relation and the description (tooltip)
        if (!s_named (st, node->name)) {
            s_node_call (op, node, W_DESC, "org.freedesktop.DBus.Properties", "Get",
                         g_variant_new ("(ss)", "org.a11y.atspi.Accessible", "Description"),
                         "(v)");
            s_node_call (op, node, W_RELS, "org.a11y.atspi.Accessible", "GetRelationSet", NULL,
                         "(a(ua(so)))");
        }
        if (node->ext [2] < 0)      //  a named panel (Group): its extents now
            s_node_call (op, node, W_EXTENTS, "org.a11y.atspi.Component", "GetExtents",
                         s_coords (op), "((iiii))");
        g_strfreev (node->actions);
        node->actions = NULL;
        free (node->text);
        node->text = NULL;
        node->text_whole = false;
        if (ufo_dnode_label_role_ (node->role))
            node->text = ufo_strdup (node->name ? node->name : "");
        else {
            //  where the interfaces are known (GTK3) only the offered ones are called;
            //  elsewhere (GTK4, where a call costs more) a failing call says "not offered"
            bool known = st->uses_showing;
            if (!known || (node->ifaces & S_IF_ACTION))
                s_node_call (op, node, W_ACTIONS, "org.a11y.atspi.Action", "GetActions", NULL,
                             "(a(sss))");
            bool text = known ? (node->ifaces & S_IF_TEXT) != 0 : ufo_dnode_text_role_ (node->role);
            bool value = known ? (node->ifaces & S_IF_VALUE) != 0 : ufo_dnode_value_role_ (node->role);
            if (text)
                s_node_call (op, node, W_TEXT, "org.a11y.atspi.Text", "GetText",
                             g_variant_new ("(ii)", 0, op->desk->text_excerpt + 1), "(s)");
            else if (value)
                s_node_call (op, node, W_VALUE, "org.freedesktop.DBus.Properties", "Get",
                             g_variant_new ("(ss)", "org.a11y.atspi.Value", "CurrentValue"),
                             "(v)");
        }
    }
    if (node->kids && !ufo_dnode_leaf_ (node))
        for (guint i = 0; i < node->kids->len; i++)
            s_visit (op, g_ptr_array_index (node->kids, i));
}

//  Second stage, once role and states are known: extents, and for controls their name and
//  interfaces; the children list unless the control is a leaf.
static void
s_details (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    ufo_dsnap_t *st = op->state;
    if ((!ufo_dnode_has_state_ (node, ATSPI_STATE_VISIBLE)
         || (st->uses_showing && !ufo_dnode_has_state_ (node, ATSPI_STATE_SHOWING))
         || s_foreign (node))
    &&  !s_closed_options (st, node))
        return;
    bool detail = !node->detail_valid;
    bool ext_only = !detail && node->ext_stale;
    //  the visible part of a huge container changes with its details (scrolled, resized)
    bool kids = !ufo_dnode_leaf_ (node) && (!node->kids_valid || (node->virt && detail));
    if (!detail && !kids && !ext_only) {
        s_expand (op, node);
        return;
    }
    //  extents are read for controls only (and for the full tree): containers are pruned by
    //  their states, and a control's own extents decide whether it is on screen
    //  a panel is a Group only when named: its name is read, its extents only if named
    bool control = ufo_desktop_control_type_ (op->desk, node) != NULL
                || node->role == ATSPI_ROLE_PANEL || node->parent == NULL
                || node->role == ATSPI_ROLE_MENU_BAR   //  one of no size hides its items
                                                        //  (LibreOffice's second menu bar)
                || node->role == ATSPI_ROLE_TOOL_BAR   //  its name is its controls' container
                || node->role == ATSPI_ROLE_FRAME;     //  an inner one may be a display
    bool inner = node->role == ATSPI_ROLE_PANEL || (node->role == ATSPI_ROLE_FRAME && node->parent);
    bool extents = (control && (!inner || (node->name && *node->name)))
                || s_clips (node) || node->virt || st->want_tree   //  (a huge container's
                                                //  are read with its cells, and re-read here)
                || s_column_header (node)       //  rows under it are hidden
                || s_view_role (node->role);    //  one of no size hides its items
    if (ext_only && !extents) {
        node->ext_stale = false;
        ext_only = false;
        if (!kids) {
            s_expand (op, node);
            return;
        }
    }
    node->stage = 2;
    if (ext_only)
        s_node_call (op, node, W_EXTENTS, "org.a11y.atspi.Component", "GetExtents",
                     s_coords (op), "((iiii))");
    if (detail) {
        node->extra_valid = false;
        node->ext [2] = -1;
        if (extents)
            s_node_call (op, node, W_EXTENTS, "org.a11y.atspi.Component", "GetExtents",
                         s_coords (op), "((iiii))");
        //  interfaces are learnt from the calls that succeed (saves a call per control)
        node->ifaces = 0;
        //  a focusable filler's name tells whether it is a view without rows (GTK 4.8's
        //  "GtkTreeView": ufo_desktop_rows.c), then a control whose extents s_expand reads
        bool view = node->role == ATSPI_ROLE_FILLER
                 && ufo_dnode_has_state_ (node, ATSPI_STATE_FOCUSABLE);
        if (control || view) {
            s_node_call (op, node, W_NAME, "org.freedesktop.DBus.Properties", "Get",
                         g_variant_new ("(ss)", "org.a11y.atspi.Accessible", "Name"), "(v)");
            //  GTK3's bridge logs a CRITICAL for a call on a missing interface: ask first
            //  (a cell of a huge table: its table's cells' kind)
            uint32_t ifaces = 0;
            node->assumed = s_cell_kind (node, NULL, &ifaces);
            if (node->assumed)
                node->ifaces = ifaces;
            else if (st->uses_showing && control)
                s_node_call (op, node, W_IFACES, "org.a11y.atspi.Accessible", "GetInterfaces",
                             NULL, "(as)");
        }
        else {
            free (node->name);
            node->name = NULL;
        }
    }
    if (kids && s_maybe_huge (node->role)) {
        //  count first: a huge or virtual container is never enumerated
        node->vwait = 0;
        s_node_call (op, node, W_NKIDS, "org.freedesktop.DBus.Properties", "Get",
                     g_variant_new ("(ss)", "org.a11y.atspi.Accessible", "ChildCount"), "(v)");
    }
    else if (kids)
        s_node_call (op, node, W_KIDS, "org.a11y.atspi.Accessible", "GetChildren", NULL,
                     "(a(so))");
    if (node->busy == 0) {      //  nothing to read for this container
        node->stage = 0;
        node->detail_valid = true;
        node->ext_stale = false;
        s_expand (op, node);
    }
}

static void
s_on_reply (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    s_ref_t *ref = data;
    ufo_dnode_t *node = op ? s_ref_node (op->desk, ref) : NULL;
    if (!node) {
        free (ref->key);
        free (ref);
        if (op)
            s_maybe_finish (op);
        return;
    }
    if (ref->what <= W_KIDS)
        node->busy--;
    if (ref->what >= W_NKIDS && ref->what < W_KIDS)
        s_vreply (op, node, ref, reply);
    else if (reply) {
        switch (ref->what) {
            case W_ROLE: g_variant_get (reply, "(u)", &node->role); break;
            case W_STATE: {
                GVariant *au = g_variant_get_child_value (reply, 0);
                gsize n = 0;
                const guint32 *bits = g_variant_get_fixed_array (au, &n, sizeof (guint32));
                uint64_t shown = (1ull << ATSPI_STATE_VISIBLE) | (1ull << ATSPI_STATE_SHOWING);
                uint64_t old = node->states;
                node->states = (n > 0 ? bits [0] : 0) | (n > 1 ? (uint64_t) bits [1] << 32 : 0);
                g_variant_unref (au);
                //  LibreOffice says its formula bar's frame (the panel "Input line") is
                //  defunct and nothing else, while it and the paragraph in it are on screen:
                //  a node whose only state is defunct, inside a showing one, is looked into
                //  (its children carry their own states)
                if (node->states == (1ull << ATSPI_STATE_DEFUNCT) && node->parent
                &&  ufo_dnode_has_state_ (node->parent, ATSPI_STATE_SHOWING))
                    node->states |= (1ull << ATSPI_STATE_VISIBLE) | (1ull << ATSPI_STATE_SHOWING);
                //  shown now, or opened or closed: what was read of its children is read again
                //  (Chromium shows and hides a select's options with it, and no event says so)
                //  and so is the list of its children (options removed when a select closes)
                //  (a submenu opened or closed: ufo_dnode_shut_)
                if (((old & shown) != shown && (node->states & shown) == shown)
                ||  ((old ^ node->states) & (1ull << ATSPI_STATE_EXPANDED))
                ||  (node->role == ATSPI_ROLE_MENU
                     && ((old ^ node->states) & (1ull << ATSPI_STATE_SELECTED)))) {
                    for (guint i = 0; node->kids && i < node->kids->len; i++)
                        ((ufo_dnode_t *) g_ptr_array_index (node->kids, i))->valid = false;
                    if (node->kids && !ufo_dnode_leaf_ (node))
                        node->kids_valid = false;
                }
                //  an item of a list, table or tree shown or hidden since its states were
                //  last read: the view scrolled (ufo_desktop_scroll.c)
                if (node->valid && ((old ^ node->states) & shown))
                    ufo_desktop_item_shown_ (node);
                break;
            }
            case W_NAME: {
                GVariant *v = NULL;
                g_variant_get (reply, "(v)", &v);
                free (node->name);
                node->name = ufo_strdup (v && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING)
                                         ? g_variant_get_string (v, NULL) : "");
                if (v)
                    g_variant_unref (v);
                node->noname = !s_named (op->state, node->name);
                break;
            }
            case W_IFACES:
                node->ifaces |= s_iface_bits (reply);
                break;
            case W_EXTENTS:
                g_variant_get (reply, "((iiii))", &node->ext [0], &node->ext [1], &node->ext [2],
                               &node->ext [3]);
                node->ifaces |= S_IF_COMPONENT;
                //  no size yet (Firefox answers -1 while a page lays out, and sends no
                //  bounds event afterwards): read again on the next pass
                node->ext_retry = node->ext [2] < 0 || node->ext [3] < 0;
                break;
            case W_KIDS: {
                GVariant *arr = g_variant_get_child_value (reply, 0);
                s_set_kids (op->desk, node, arr);
                g_variant_unref (arr);
                break;
            }
            case W_ACTIONS: {
                GVariant *arr = g_variant_get_child_value (reply, 0);
                gsize n = g_variant_n_children (arr);
                g_strfreev (node->actions);
                node->actions = g_new0 (char *, n + 1);
                for (gsize i = 0; i < n; i++) {
                    const char *name = NULL;
                    g_variant_get_child (arr, i, "(&sss)", &name, NULL, NULL);
                    node->actions [i] = g_strdup (name ? name : "");
                }
                g_variant_unref (arr);
                if (n > 0)
                    node->ifaces |= S_IF_ACTION;
                //  GetActions gives the localized name (LibreOffice: "", Firefox: ";;"): the
                //  name actions are chosen by is GetName's (press, click, activate, jump)
                for (gsize i = 0; i < n && i < 8 && !op->cancelled && !op->done; i++)
                    s_vcall (op, node, W_ANAME, (int) i, node->bus, node->path,
                             "org.a11y.atspi.Action", "GetName", g_variant_new ("(i)", (gint32) i),
                             "(s)");
                break;
            }
            case W_ANAME: {
                const char *name = NULL;
                g_variant_get (reply, "(&s)", &name);
                int count = 0;
                while (node->actions && node->actions [count])
                    count++;
                if (name && *name && ref->slot < count) {
                    g_free (node->actions [ref->slot]);
                    node->actions [ref->slot] = g_strdup (name);
                }
                break;
            }
            case W_TEXT:
            case W_TEXT2: {
                const char *s = NULL;
                g_variant_get (reply, "(&s)", &s);
                free (node->text);
                node->text = s_drop_objects (s ? s : "");
                node->text_whole = s && *s && !strstr (s, "\xEF\xBF\xBC")
                                && g_utf8_strlen (s, -1) <= op->desk->text_excerpt;
                node->ifaces |= S_IF_TEXT;
                if (ufo_dnode_has_state_ (node, ATSPI_STATE_EDITABLE))
                    node->ifaces |= S_IF_EDITABLE;
                //  GTK4, Qt (and Firefox for short texts) answer "" when the end offset is past
                //  the text: ask for the character count, then for exactly that much
                if (ref->what == W_TEXT && !*node->text && !op->cancelled && !op->done)
                    s_node_call (op, node, W_COUNT, "org.freedesktop.DBus.Properties", "Get",
                                 g_variant_new ("(ss)", "org.a11y.atspi.Text", "CharacterCount"),
                                 "(v)");
                break;
            }
            case W_COUNT: {
                GVariant *v = NULL;
                g_variant_get (reply, "(v)", &v);
                int count = v && g_variant_is_of_type (v, G_VARIANT_TYPE_INT32)
                          ? g_variant_get_int32 (v) : 0;
                if (v)
                    g_variant_unref (v);
                int want = count < op->desk->text_excerpt + 1 ? count : op->desk->text_excerpt + 1;
                if (want > 0 && !op->cancelled && !op->done)
                    s_node_call (op, node, W_TEXT2, "org.a11y.atspi.Text", "GetText",
                                 g_variant_new ("(ii)", 0, want), "(s)");
                break;
            }
            case W_RELS: {
                GVariant *arr = g_variant_get_child_value (reply, 0);
                GVariantIter iter;
                guint32 type;
                GVariant *targets;
                g_variant_iter_init (&iter, arr);
                while (!node->relby && g_variant_iter_next (&iter, "(u@a(so))", &type, &targets)) {
                    const char *bus, *path;
                    if (type == ATSPI_RELATION_LABELLED_BY && g_variant_n_children (targets) > 0) {
                        g_variant_get_child (targets, 0, "(&s&o)", &bus, &path);
                        char *key = ufo_dnode_key_ (bus, path);
                        node->relby = ufo_strdup (key);
                        g_free (key);
                    }
                    g_variant_unref (targets);
                }
                g_variant_unref (arr);
                break;
            }
            case W_DESC: {
                GVariant *v = NULL;
                g_variant_get (reply, "(v)", &v);
                free (node->desc);
                node->desc = ufo_strdup (v && g_variant_is_of_type (v, G_VARIANT_TYPE_STRING)
                                         ? g_variant_get_string (v, NULL) : "");
                if (v)
                    g_variant_unref (v);
                break;
            }
            case W_VALUE: {
                GVariant *v = NULL;
                g_variant_get (reply, "(v)", &v);
                free (node->text);
                if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE)) {
                    node->text = g_strdup_printf ("%g", g_variant_get_double (v));
                    node->ifaces |= S_IF_VALUE;
                }
                else
                    node->text = ufo_strdup ("");
                if (v)
                    g_variant_unref (v);
                break;
            }
        }
    }
    else if (node->assumed && node->parent && ((ufo_dsnap_t *) op->state)->uses_showing
         &&  (ref->what == W_TEXT || ref->what == W_ACTIONS || ref->what == W_VALUE)) {
        //  an interface assumed for a cell (where interfaces are known, only those offered
        //  are called) is not there: the cell is without it, and every cell's interfaces
        //  are asked from now on
        ufo_trace ("desktop: cell %s contradicts its table's kind: %s", node->path,
                   error ? error : "");
        ufo_desktop_cell_kind_contradict (&node->parent->vkind);
        node->ifaces &= ~(uint32_t) (ref->what == W_TEXT ? S_IF_TEXT
                                     : ref->what == W_ACTIONS ? S_IF_ACTION : S_IF_VALUE);
    }
    else if (ref->what == W_KIDS) {
        //  no children interface: a leaf
        s_set_kids (op->desk, node, g_variant_new ("a(so)", NULL));
    }
    else if (ref->what == W_EXTENTS) {
        node->ext [2] = -1;
        //  a page still loading (Firefox) fails GetExtents for a moment: read them again
        //  next time, unless the object has no Component interface at all
        node->ext_retry = !error || !strstr (error, "Unknown");
        ufo_trace ("desktop: GetExtents of %s failed: %s", node->path, error ? error : "");
    }
    if (ref->what <= W_KIDS && node->busy == 0) {
        int stage = node->stage;
        node->stage = 0;
        if (stage == 1)
            node->valid = true;
        else {
            node->detail_valid = true;
            //  a failed read is retried by the next snapshot; so is one that a scroll may
            //  have overtaken (GetExtents answered before the move, another call after it)
            if (node->ext_moved)
                ufo_trace ("desktop: %s moved while it was read: its extents are read again",
                           node->path);
            node->ext_stale = node->ext_moved;
            node->ext_moved = false;
        }
        if (!op->cancelled && !op->done) {
            if (stage == 1)
                s_details (op, node);
            else
                s_expand (op, node);
        }
    }
    free (ref->key);
    free (ref);
    s_maybe_finish (op);
}

static void
s_node_call (ufo_desktop_op_t *op, ufo_dnode_t *node, int what, const char *iface,
             const char *method, GVariant *params, const char *reply_type)
{
    s_ref_t *ref = ufo_calloc (1, sizeof (*ref));
    ref->key = ufo_dnode_key_ (node->bus, node->path);
    ref->serial = ufo_dnode_serial_ (node);
    ref->what = what;
    if (what <= W_KIDS)
        node->busy++;
    ufo_desktop_call_ (op, node->bus, node->path, iface, method, params, reply_type,
                       s_on_reply, ref);
}

//  A call about node (on node itself or, for a huge container, on one of its cells) whose
//  reply needs a slot: a corner, a cell, an action's index.
static void
s_vcall (ufo_desktop_op_t *op, ufo_dnode_t *node, int what, int slot, const char *bus,
         const char *path, const char *iface, const char *method, GVariant *params,
         const char *reply_type)
{
    s_ref_t *ref = ufo_calloc (1, sizeof (*ref));
    ref->key = ufo_dnode_key_ (node->bus, node->path);
    ref->serial = ufo_dnode_serial_ (node);
    ref->what = what;
    ref->slot = slot;
    if (what <= W_KIDS)
        node->busy++;
    if (what >= W_VEXT && what <= W_VCELL)
        node->vwait++;
    ufo_desktop_call_ (op, bus, path, iface, method, params, reply_type, s_on_reply, ref);
}

static void
s_visit (ufo_desktop_op_t *op, ufo_dnode_t *node)
{
    ufo_dsnap_t *st = op->state;
    if (node->walk_gen == st->gen)
        return;
    node->walk_gen = st->gen;
    if (node->busy > 0)
        return;                     //  still being read by an earlier, cancelled walk
    if (node->valid && !node->states_stale) {
        s_details (op, node);
        return;
    }
    st->fetched++;
    node->stage = 1;
    const char *acc = "org.a11y.atspi.Accessible";
    if (!node->valid && !s_cell_kind (node, &node->role, NULL))
        s_node_call (op, node, W_ROLE, acc, "GetRole", NULL, "(u)");
    node->states_stale = false;         //  (after an action: states only, role kept)
    s_node_call (op, node, W_STATE, acc, "GetState", NULL, "(au)");
    //  (asking for the children here too, before knowing whether the node is shown, saves
    //  a round trip per level but measured slower: hidden menus are large)
}

//  --- building the result ------------------------------------------------------------------

static ufo_value_t *
s_rect (const ufo_dsnap_t *st, const ufo_dnode_t *node)
{
    int x, y;
    s_origin (st, node, &x, &y);
    return ufo_desktop_rect_value_ (x, y, node->ext [2] > 0 ? node->ext [2] : 0,
                                    node->ext [3] > 0 ? node->ext [3] : 0);
}

//  What s_collect gathers besides the control list.
typedef struct {
    ufo_value_t *controls;      //  the control list (labels filled in later)
    GPtrArray *labels;          //  ufo_dlabel_t*, one per control
    GPtrArray *tree_refs;       //  the tree node of each control (borrowed) or NULL
    ufo_value_t *captions;      //  labels that may name a field: {text, rect}
    int nodes;
    const ufo_dnode_t *sheet;   //  the first spreadsheet table on screen (s_sheet_table)
} s_collect_t;

//  True if node is a spreadsheet's table: a huge Table (read through its visible part) whose
//  cells are named by their A1-style address ("A1", "M39"), whatever the application.
static bool
s_sheet_table (const ufo_dnode_t *node)
{
    if (!node->virt || !(node->ifaces & S_IF_TABLE) || node->vrows < 1 || node->vcols < 1
    ||  !node->kids || node->kids->len == 0)
        return false;
    const ufo_dnode_t *cell = g_ptr_array_index (node->kids, 0);
    ufo_desktop_range_t r;
    return cell->name && ufo_desktop_cell_range_parse (cell->name, node->vrows, node->vcols, &r,
                                                       NULL) == 0 && !strchr (cell->name, ':');
}

//  "ROLE|name|parent role/grandparent role/..." (see ufo_desktop_label.c).
static char *
s_ident (const ufo_dnode_t *node)
{
    GString *s = g_string_new (NULL);
    g_string_append_printf (s, "%u|%s|", node->role, node->name ? node->name : "");
    for (const ufo_dnode_t *up = node->parent; up; up = up->parent)
        g_string_append_printf (s, "%u/", up->role);
    char *out = ufo_strdup (s->str);
    g_string_free (s, TRUE);
    return out;
}

//  The name of the nearest named ancestor below the window (a panel, group, menu ...).
static const char *
s_container (const ufo_dnode_t *node)
{
    for (const ufo_dnode_t *up = node->parent; up && up->parent; up = up->parent) {
        const char *name = up->name;
        while (name && *name == ' ')
            name++;
        if (name && *name && !ufo_desktop_class_name (name))
            return name;
    }
    return "";
}

//  The name of a named panel whose only child is node (LibreOffice's formula bar, an
//  unnamed paragraph in the panel "Input line"): the name of the field it frames, or NULL.
static const char *
s_panel_name (const ufo_dnode_t *node)
{
    const ufo_dnode_t *up = node->parent;
    if (!up || up->role != ATSPI_ROLE_PANEL || !up->kids || up->kids->len != 1 || !up->name
    ||  !up->name [strspn (up->name, " ")] || ufo_desktop_class_name (up->name))
        return NULL;
    return up->name;
}

//  The selected option of a combo box (a web page's select keeps its options, hidden, in a
//  menu inside it; the selected one has the selected state), or NULL.
static const char *
s_combo_choice (const ufo_dnode_t *node, int depth)
{
    for (guint i = 0; node->kids && depth < 2 && i < node->kids->len; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (!kid->valid)
            continue;
        if ((kid->role == ATSPI_ROLE_MENU_ITEM || kid->role == ATSPI_ROLE_LIST_ITEM)
        &&  ufo_dnode_has_state_ (kid, ATSPI_STATE_SELECTED) && kid->name && *kid->name)
            return kid->name;
        const char *found = s_combo_choice (kid, depth + 1);
        if (found)
            return found;
    }
    return NULL;
}

//  What a button that holds other widgets shows (GTK4's menu button: a button inside it named
//  after the current choice, "Basic"; a class-named button's label, "π"): the first usable
//  name of a shown label or button at most two levels below, or NULL.
static const char *
s_button_shows (const ufo_dnode_t *node, bool uses_showing)
{
    for (guint i = 0; node->kids && i < node->kids->len; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (!kid->valid || !kid->detail_valid || ufo_dnode_hidden_ (kid, uses_showing))
            continue;
        bool named = (ufo_dnode_label_role_ (kid->role) || kid->role == ATSPI_ROLE_PUSH_BUTTON
                      || kid->role == ATSPI_ROLE_TOGGLE_BUTTON)
                  && kid->name && kid->name [strspn (kid->name, " ")]
                  && !ufo_desktop_class_name (kid->name);
        if (named)
            return kid->name;
        for (guint k = 0; kid->kids && k < kid->kids->len; k++) {
            const ufo_dnode_t *sub = g_ptr_array_index (kid->kids, k);
            if (sub->valid && sub->detail_valid && !ufo_dnode_hidden_ (sub, uses_showing)
            &&  ufo_dnode_label_role_ (sub->role) && sub->name && *sub->name
            &&  !ufo_desktop_class_name (sub->name))
                return sub->name;
        }
    }
    return NULL;
}

//  The name of the first label at most `depth` levels below node (walked, shown), or NULL.
static const char *
s_shown_label (const ufo_dnode_t *node, int depth, bool uses_showing)
{
    for (guint i = 0; depth > 0 && node->kids && i < node->kids->len; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (!kid->valid || !kid->detail_valid || ufo_dnode_hidden_ (kid, uses_showing))
            continue;           //  not shown (a closed drop-down's list)
        if (ufo_dnode_label_role_ (kid->role) && kid->name && *kid->name
        &&  !ufo_desktop_class_name (kid->name))
            return kid->name;
        const char *found = s_shown_label (kid, depth - 1, uses_showing);
        if (found)
            return found;
    }
    return NULL;
}

//  The groups a caption and its field share (ufo_desktop_name_controls): the object paths of
//  a node's nearest S_SCOPE_LEVELS ancestors. A label whose groups are none of a field's (a
//  message bar above an editor, in a box of its own) does not caption it.
#define S_SCOPE_LEVELS 3
static ufo_value_t *
s_scope (const ufo_dnode_t *node)
{
    ufo_value_t *list = ufo_value_new_list ();
    const ufo_dnode_t *up = node->parent;
    for (int i = 0; up && i < S_SCOPE_LEVELS; i++, up = up->parent)
        ufo_value_list_push_str (list, up->path);
    return list;
}

//  True inside a message to the user - an info bar, alert, notification, status bar or
//  tooltip - whose text is never a field's caption.
static bool
s_in_notice (const ufo_dnode_t *node)
{
    for (const ufo_dnode_t *up = node->parent; up; up = up->parent)
        if (up->role == ATSPI_ROLE_INFO_BAR || up->role == ATSPI_ROLE_ALERT
        ||  up->role == ATSPI_ROLE_NOTIFICATION || up->role == ATSPI_ROLE_STATUS_BAR
        ||  up->role == ATSPI_ROLE_TOOL_TIP)
            return true;
    return false;
}

//  True inside a bar - a tool bar, a menu bar, or a header bar (GTK4 gives it the role of a
//  panel and names it after its type: "GtkHeaderBar", "AdwHeaderBar") - whose labels say what
//  the window shows (a header bar's title and subtitle), never what a document or text view
//  below it is ("bar" on the caption: ufo_desktop_name_controls).
static bool
s_in_bar (const ufo_dnode_t *node)
{
    for (const ufo_dnode_t *up = node->parent; up; up = up->parent) {
        if (up->role == ATSPI_ROLE_TOOL_BAR || up->role == ATSPI_ROLE_MENU_BAR)
            return true;
        size_t len = up->name ? strlen (up->name) : 0;
        if (len > 9 && (ufo_desktop_class_name (up->name) || ufo_desktop_type_name (up->name))
        &&  (streq (up->name + len - 9, "HeaderBar") || streq (up->name + len - 8, "TitleBar")))
            return true;
    }
    return false;
}

//  Control types that may take a caption (ufo_desktop_name.c has the same list).
static bool
s_captioned (const char *type)
{
    static const char *const types [] = { "Edit", "ComboBox", "Spinner", "CheckBox",
                                          "RadioButton", "Document" };
    for (size_t i = 0; type && i < UFO_ARRAY_SIZE (types); i++)
        if (streq (type, types [i]))
            return true;
    return false;
}

//  The text of the labels inside node (at most `depth` levels down, shown), joined by
//  spaces, appended to buf (at most ~120 bytes): an unnamed button's content.
static void
s_content (const ufo_dnode_t *node, int depth, bool uses_showing, GString *buf)
{
    for (guint i = 0; depth > 0 && node->kids && i < node->kids->len && buf->len < 120; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (!kid->valid || !kid->detail_valid || ufo_dnode_hidden_ (kid, uses_showing))
            continue;
        if (ufo_dnode_label_role_ (kid->role) && kid->name && *kid->name
        &&  !ufo_desktop_class_name (kid->name)) {
            if (buf->len)
                g_string_append_c (buf, ' ');
            g_string_append (buf, kid->name);
        }
        else
            s_content (kid, depth - 1, uses_showing, buf);
    }
}

//  True for a button named by what it shows when it has no name of its own: a push or toggle
//  button, not open (an open menu button holds its popover) and not a combo box's.
static bool
s_button_content (const ufo_dnode_t *node)
{
    return s_is_button (node) && !ufo_dnode_has_state_ (node, ATSPI_STATE_EXPANDED)
        && !(node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX);
}

//  A scroll area without the scroll pane role (Qt's QScrollArea is a filler holding the
//  viewport and, beside it, a filler holding only the scroll bar): the span of such a
//  scroll bar bounds what node shows - a vertical bar its rows, a horizontal one its
//  columns. Narrows clip (screen coordinates). (A scroll pane's own scroll bars, its direct
//  children, may span less than it shows: GTK's column headers sit above the rows' bar.)
static void
s_scroll_span (const ufo_dsnap_t *st, const ufo_dnode_t *node, int clip [4])
{
    if (node->role != ATSPI_ROLE_FILLER && node->role != ATSPI_ROLE_PANEL)
        return;
    for (guint i = 0; node->kids && i < node->kids->len; i++) {
        const ufo_dnode_t *holder = g_ptr_array_index (node->kids, i);
        if (holder->role == ATSPI_ROLE_SCROLL_BAR || !holder->kids || holder->kids->len != 1)
            continue;
        const ufo_dnode_t *bar = g_ptr_array_index (holder->kids, 0);
        if (bar->role != ATSPI_ROLE_SCROLL_BAR || !bar->valid || !bar->detail_valid
        ||  ufo_dnode_hidden_ (bar, st->uses_showing) || bar->ext [2] <= 0 || bar->ext [3] <= 0)
            continue;
        int x, y;
        s_origin (st, bar, &x, &y);
        if (bar->ext [3] > bar->ext [2]) {
            clip [1] = MAX (clip [1], y);
            clip [3] = MIN (clip [3], y + bar->ext [3]);
        }
        else {
            clip [0] = MAX (clip [0], x);
            clip [2] = MIN (clip [2], x + bar->ext [2]);
        }
    }
}

//  The node's rectangle on screen, cut to clip: a control partly scrolled out of view is
//  the part on screen (a click aims at its centre; a caption beside it is on its row).
static ufo_value_t *
s_clipped_rect (const ufo_dsnap_t *st, const ufo_dnode_t *node, const int clip [4])
{
    ufo_value_t *rect = s_rect (st, node);
    for (size_t k = 0; k < 4; k++) {
        int64_t v = ufo_value_int (ufo_value_list_at (rect, k));
        int64_t in = k < 2 ? MAX (v, clip [k]) : MIN (v, clip [k]);
        if (in != v) {
            ufo_value_t *item = ufo_value_new_int (in);
            ufo_value_list_set (rect, k, &item);
        }
    }
    return rect;
}

//  True if node's name or text has a character other than a blank.
static bool
s_has_words (const ufo_dnode_t *node)
{
    const char *name = node->name ? node->name : "", *text = node->text ? node->text : "";
    return name [strspn (name, " \t\r\n")] || text [strspn (text, " \t\r\n")];
}

//  No clip (screen coordinates).
static const int s_everywhere [4] = { INT_MIN, INT_MIN, INT_MAX, INT_MAX };
//  The least a clipped control must show of its width and height (pixels) to be offered.
#define S_MIN_VISIBLE 4

//  The bottom (screen coordinates) of the column-header row of a table, tree or list: the
//  lowest edge of its column headers that are children of it (GTK's tree view, Qt's item
//  views) and have a size, or of the header the probes of a huge one met (s_vprobe_lower);
//  INT_MIN if it has none. Rows scrolled under it are not in view: a click there hits
//  the header.
static int
s_header_bottom (const ufo_dsnap_t *st, const ufo_dnode_t *node)
{
    int bottom = INT_MIN, x, y;
    if (!s_view_role (node->role) || node->ext [2] <= 0 || node->ext [3] <= 0)
        return bottom;
    if (node->virt && node->vtop != INT_MIN) {
        s_origin (st, node, &x, &y);
        bottom = node->vtop + (y - node->ext [1]);
    }
    for (guint i = 0; node->kids && i < node->kids->len; i++) {
        const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        if (!kid || !s_column_header (kid) || kid->ext [2] <= 0 || kid->ext [3] <= 0)
            continue;
        s_origin (st, kid, &x, &y);
        //  a header at the top of the view, not one of a nested table lower down
        if (y < node->ext [1] + (y - kid->ext [1]) + node->ext [3] / 2)
            bottom = MAX (bottom, y + kid->ext [3]);
    }
    return bottom;
}

static void
s_collect (ufo_desktop_op_t *op, ufo_dnode_t *node, s_collect_t *out, ufo_value_t *tree_parent,
           bool popup, const int clip [4])
{
    ufo_dsnap_t *st = op->state;
    if (!node->valid || !node->detail_valid || ufo_dnode_hidden_ (node, st->uses_showing)
    ||  s_foreign (node) || (popup && !s_registered (op->desk, node)))
        return;
    out->nodes += node->role != ATSPI_ROLE_APPLICATION;
    const char *type = ufo_desktop_control_type_ (op->desk, node);
    ufo_value_t *tree_node = NULL;
    if (tree_parent) {
        tree_node = ufo_value_new_map ();
        char *role = atspi_role_get_name ((AtspiRole) node->role);
        ufo_value_map_set_str (tree_node, "role", role ? role : "unknown");
        g_free (role);
        ufo_value_map_set_str (tree_node, "control_type", type ? type : "");
        ufo_value_map_set_str (tree_node, "name", node->name ? node->name : "");
        ufo_value_t *rect = s_rect (st, node);
        ufo_value_map_set (tree_node, "rect", &rect);
        ufo_value_t *states = ufo_dnode_states_value_ (node);
        ufo_value_map_set (tree_node, "states", &states);
    }
    //  offered: inside the window; a menu item may also be in a popup outside it
    int x, y;
    s_origin (st, node, &x, &y);
    //  popups (menus, GTK4 popovers, the open menu button holding one) may extend
    //  beyond the window: what is inside them counts if it is on the screen
    bool was_popup = popup;
    popup = popup || node->role == ATSPI_ROLE_MENU || node->role == ATSPI_ROLE_POPUP_MENU
         || (node->parent && node->role == ATSPI_ROLE_WINDOW)
         || (s_clips (node) && node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX)
         || ((node->role == ATSPI_ROLE_PUSH_BUTTON || node->role == ATSPI_ROLE_TOGGLE_BUTTON)
             && ufo_dnode_has_state_ (node, ATSPI_STATE_EXPANDED));
    bool menu = popup || (type && streq (type, "MenuItem"));
    int bx = menu ? 0 : st->wx, by = menu ? 0 : st->wy;
    int bw = menu ? op->desk->screen_w : st->ww, bh = menu ? op->desk->screen_h : st->wh;
    //  a popup opening here is not clipped by the scroll pane its owner is in
    if (popup && !was_popup)
        clip = s_everywhere;
    bool on_screen = node->ext [2] > 0 && node->ext [3] > 0
                  && x < bx + bw && y < by + bh
                  && x + node->ext [2] > bx && y + node->ext [3] > by
                  && x < clip [2] && y < clip [3]
                  && x + node->ext [2] > clip [0] && y + node->ext [3] > clip [1];
    //  a control scrolled almost out of view (a strip of a row left under a column header or
    //  at a pane's edge) is not offered: a click on a sliver that thin is no click on it
    if (on_screen && clip != s_everywhere) {
        int vw = MIN (x + node->ext [2], clip [2]) - MAX (x, clip [0]);
        int vh = MIN (y + node->ext [3], clip [3]) - MAX (y, clip [1]);
        on_screen = vw >= MIN (S_MIN_VISIBLE, node->ext [2])
                 && vh >= MIN (S_MIN_VISIBLE, node->ext [3]);
    }
    if (on_screen && !out->sheet && s_sheet_table (node))
        out->sheet = node;
    //  what is inside a scrolled or popup container is on screen only within it
    int inner [4] = { clip [0], clip [1], clip [2], clip [3] };
    if (s_clips (node) && node->ext [2] >= 0 && node->ext [3] >= 0) {
        inner [0] = MAX (inner [0], x);
        inner [1] = MAX (inner [1], y);
        inner [2] = MIN (inner [2], x + node->ext [2]);
        inner [3] = MIN (inner [3], y + node->ext [3]);
    }
    s_scroll_span (st, node, inner);
    //  a label inside a button (GTK4 exposes both) is the button's text, not a control
    if (type && streq (type, "Text") && node->parent) {
        const ufo_dnode_t *up = node->parent;
        for (int i = 0; i < 2 && up; i++, up = up->parent) {
            const char *ptype = ufo_desktop_control_type_ (op->desk, up);
            if (ptype && !streq (ptype, "Text") && !streq (ptype, "Group")
            &&  !streq (ptype, "Document"))     //  a page's headings are the page's
                type = NULL;
            //  and text inside a heading or paragraph with words of its own is part of it
            //  (Chromium puts each run of a heading's text in a child of its own)
            if (ptype && streq (ptype, "Text") && s_has_words (up))
                type = NULL;
        }
    }
    //  a label inside a combo box shows its selection: that is the combo's value
    for (const ufo_dnode_t *up = node->parent; type && up && up->parent; up = up->parent)
        if (up->role == ATSPI_ROLE_COMBO_BOX && streq (type, "Text"))
            type = NULL;
    //  a button inside a button (GTK4's menu button holds the toggle that opens its popover)
    //  is part of the outer one, which is offered and clicked through it
    if (type && streq (type, "Button") && node->parent
    &&  (node->parent->role == ATSPI_ROLE_PUSH_BUTTON || node->parent->role == ATSPI_ROLE_TOGGLE_BUTTON
         || node->parent->role == ATSPI_ROLE_COMBO_BOX))
        type = NULL;
    //  a GTK4 label named after its type with no text of its own ("GtkLabel") says nothing
    if (type && streq (type, "Text") && ufo_desktop_class_name (node->name)
    &&  (!node->text || !*node->text || streq (node->text, node->name)))
        type = NULL;
    //  any label on screen may be the caption of a field, offered or not
    if (on_screen && type && streq (type, "Text") && node->name && *node->name) {
        ufo_value_t *cap = ufo_value_new_map ();
        ufo_value_map_set_str (cap, "text", node->name);
        ufo_value_t *rect = s_clipped_rect (st, node, clip);
        ufo_value_map_set (cap, "rect", &rect);
        ufo_value_map_set (cap, "scope", &(ufo_value_t *) { s_scope (node) });
        if (s_in_notice (node))
            ufo_value_map_set_bool (cap, "notice", true);
        //  in a bar, or the window's title shown in it (a header bar's title or subtitle,
        //  whose panels GTK4 leaves unnamed: "/tmp" of "probe (/tmp) - Text Editor")
        size_t tlen = strlen (node->name);
        if (s_in_bar (node) || (tlen >= 2 && st->title && strstr (st->title, node->name)))
            ufo_value_map_set_bool (cap, "bar", true);
        ufo_value_list_push (out->captions, &cap);
    }
    //  a paragraph is text to read: one with no text of its own (a row of a form, whose
    //  widgets are its children) is structure
    bool wordless = !node->text || !node->text [strspn (node->text, " \t\r\n")];
    if (type && streq (type, "Text") && node->role == ATSPI_ROLE_PARAGRAPH && wordless)
        type = NULL;
    //  nor is a text with neither name nor text, blanks aside (LibreOffice's empty status bar
    //  fields, galculator's empty second display line " ")
    if (type && streq (type, "Text") && !s_has_words (node))
        type = NULL;
    if (on_screen && s_offered (st, type)) {
        ufo_value_t *c = ufo_value_new_map ();
        ufo_value_map_set_str (c, "label", "");
        ufo_value_map_set_str (c, "control_type", type);
        //  unnamed text (a paragraph, a heading whose name is empty) is named by its start
        bool by_text = streq (type, "Text") && (!node->name || !*node->name) && !wordless;
        //  GTK4 names an unnamed widget after its type ("EditorSourceView"): no name
        bool type_name = !st->uses_showing && ufo_desktop_type_name (node->name);
        ufo_value_t *text = by_text ? ufo_dnode_excerpt_ (node->text, 60)
                          : ufo_dnode_clean_name_ (type_name ? "" : node->name);
        ufo_value_map_set (c, "control_text", &text);
        ufo_value_t *rect = s_clipped_rect (st, node, clip);
        int cx = (int) (ufo_value_int (ufo_value_list_at (rect, 0))
                        + ufo_value_int (ufo_value_list_at (rect, 2))) / 2;
        int cy = (int) (ufo_value_int (ufo_value_list_at (rect, 1))
                        + ufo_value_int (ufo_value_list_at (rect, 3))) / 2;
        ufo_value_map_set (c, "control_rect", &rect);
        ufo_value_t *actions = ufo_value_new_list ();
        for (int i = 0; node->actions && node->actions [i]; i++)
            ufo_value_list_push_str (actions, node->actions [i]);
        ufo_value_map_set (c, "actions", &actions);
        const char *shown = node->text;
        const char *chosen = streq (type, "ComboBox") ? s_combo_choice (node, 0) : NULL;
        if (chosen)
            shown = chosen;         //  a web page's select: its selected option
        else if ((!shown || !*shown) && node->role == ATSPI_ROLE_COMBO_BOX)
            shown = s_shown_label (node, 6, st->uses_showing);    //  a GTK4 drop-down's selection
        else if ((!shown || !*shown) && !ufo_dnode_leaf_ (node)
             &&  (node->role == ATSPI_ROLE_PUSH_BUTTON || node->role == ATSPI_ROLE_TOGGLE_BUTTON)
             &&  !ufo_dnode_has_state_ (node, ATSPI_STATE_EXPANDED))
            shown = s_button_shows (node, st->uses_showing);     //  a GTK4 menu button's choice
        if (streq (type, "List"))
            shown = ufo_dnode_rows_note_ (node);    //  a view that exposes no rows says so
        ufo_value_t *value = ufo_dnode_excerpt_ (shown, op->desk->text_excerpt);
        ufo_value_map_set (c, "value", &value);
        ufo_value_t *states = ufo_dnode_states_value_ (node);
        ufo_value_map_set (c, "states", &states);
        //  inputs of the naming rules (ufo_desktop_name_controls removes them)
        if (node->desc && *node->desc)
            ufo_value_map_set_str (c, "description", node->desc);
        ufo_dnode_t *lab = node->relby ? g_hash_table_lookup (op->desk->nodes, node->relby) : NULL;
        if (lab && lab->name && *lab->name)
            ufo_value_map_set_str (c, "labelled_by", lab->name);
        else if (streq (type, "Edit") && s_panel_name (node))
            ufo_value_map_set_str (c, "labelled_by", s_panel_name (node));
        //  the entry of an editable combo box (GTK3, Qt) is named with the combo box
        if (streq (type, "Edit") && node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX)
            ufo_value_map_set_bool (c, "in_combo", true);
        const char *in = s_container (node);
        if (*in)
            ufo_value_map_set_str (c, "container", in);
        if (s_captioned (type))
            ufo_value_map_set (c, "scope", &(ufo_value_t *) { s_scope (node) });
        //  (and an unnamed row by the labels in it: GTK4's list rows have no name)
        if (node->noname && (s_button_content (node) || ufo_dnode_row_role_ (node->role))) {
            GString *content = g_string_new (NULL);
            s_content (node, 4, st->uses_showing, content);
            if (content->len)
                ufo_value_map_set_str (c, "content", content->str);
            g_string_free (content, TRUE);
        }
        ufo_dlabel_t *l = ufo_calloc (1, sizeof (*l));
        l->index = ufo_value_size (out->controls);
        char *key = ufo_dnode_key_ (node->bus, node->path);
        l->key = ufo_strdup (key);
        g_free (key);
        l->ident = s_ident (node);
        l->cx = cx;
        l->cy = cy;
        g_ptr_array_add (out->labels, l);
        g_ptr_array_add (out->tree_refs, tree_node);
        ufo_value_list_push (out->controls, &c);
    }
    ufo_value_t *kids = tree_node ? ufo_value_new_list () : NULL;
    //  an unnamed button's inside was read for its labels only (it names the button)
    bool content_only = node->noname && s_button_content (node);
    //  the rows of a table or list with column headers are in view only below the headers
    int below [4] = { inner [0], MAX (inner [1], s_header_bottom (st, node)), inner [2], inner [3] };
    for (guint i = 0; node->kids && !content_only && !ufo_dnode_leaf_ (node) && i < node->kids->len; i++) {
        ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        s_collect (op, kid, out, kids, popup, s_column_header (kid) ? inner : below);
    }
    if (tree_node) {
        ufo_value_map_set (tree_node, "children", &kids);
        ufo_value_list_push (tree_parent, &tree_node);
    }
}


//  True if a node that a snapshot would show (or whose inside it would show) is stale.
static bool
s_stale (const ufo_dsnap_t *st, const ufo_dnode_t *node)
{
    if (!node->valid)
        return true;
    if (s_foreign (node))
        return false;
    if (!ufo_dnode_has_state_ (node, ATSPI_STATE_VISIBLE)
    ||  (st->uses_showing && !ufo_dnode_has_state_ (node, ATSPI_STATE_SHOWING)))
        return false;           //  hidden by its states: nothing more is read
    if (!node->detail_valid || node->ext_stale) {
        ufo_trace ("desktop: stale node %s role %u busy %d stage %d", node->path, node->role,
                   node->busy, node->stage);
        return true;
    }
    if (ufo_dnode_hidden_ (node, st->uses_showing) || ufo_dnode_leaf_ (node))
        return false;
    if (!node->kids_valid)
        return true;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        if (s_stale (st, g_ptr_array_index (node->kids, i)))
            return true;
    return false;
}

static bool
s_busy (const ufo_dnode_t *node)
{
    if (node->busy > 0)
        return true;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        if (s_busy (g_ptr_array_index (node->kids, i)))
            return true;
    return false;
}

static void s_pointer_enter (ufo_desktop_t *self, ufo_dsnap_t *st, ufo_dwin_t *win, bool force);
#define S_SETTLE_MAX 3            //  extra motions + position passes for an unsettled window

static void
s_maybe_finish (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    if (op->done || op->cancelled || !st->walking || op->pending > 0)
        return;
    ufo_dwin_t *win = ufo_desktop_win_ (op->desk, st->xid, false);
    if (!win || !win->root) {
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " vanished", st->xid);
        return;
    }
    //  events that arrived during the walk may have made parts stale again: walk again
    //  (only those parts are read); bounded, a window that never settles is taken as is
    ufo_dnode_t *app = s_app_node (op->desk, win->root->bus);
    if (s_stale (st, win->root) || s_stale (st, app)) {
        if (s_busy (win->root) || s_busy (app)) {
            //  a cancelled snapshot is still reading parts of this window: try again once
            //  its replies have been pumped (s_snap_poll); bounded by the deadline
            ufo_trace ("desktop: snapshot waits for a cancelled walk's replies");
            st->retry = true;
            return;
        }
        if (st->rewalks < 8) {
            st->rewalks++;
            ufo_desktop_walk_start_ (op, win);
            return;
        }
    }
    //  the position pass is in: cells moved with their probes, or read again
    if (st->probes && st->probes->len > 0 && ufo_desktop_probes_apply_ (op->desk, st->probes)
    &&  st->rewalks < 8) {
        st->rewalks++;
        ufo_desktop_walk_start_ (op, win);
        return;
    }
    //  positions that contradict the tree (ufo_desktop_nest.c) in an application that needs a
    //  pointer motion for them (a window still laying itself out lost the last one): a motion
    //  again, and the position pass below; a few times at most
    //  (only when this snapshot read something, and S_SETTLE_MAX times per window and geometry:
    //  a window whose positions contradict its tree for good costs no more than that)
    gint64 xkey = st->xid;
    gint64 *entry = st->enter_app ? g_hash_table_lookup (op->desk->entered, &xkey) : NULL;
    if (!st->entered && entry && entry [4] < S_SETTLE_MAX && st->rewalks < 8
    &&  op->desk->calls > st->calls0 && ufo_desktop_misnested_ (win->root, st->uses_showing) > 0) {
        ufo_trace ("desktop: window %" PRId64 " unsettled (positions outside their containers): "
                   "pointer motion %d", st->xid, (int) entry [4] + 1);
        s_pointer_enter (op->desk, st, win, true);
    }
    if (st->entered && st->rewalks < 8) {
        //  the pointer moved in the window before this walk (s_pointer_enter); the
        //  application may have answered before it handled the motion: extents once more
        st->entered = false;
        st->rewalks++;
        if (st->calls_pos0 < 0)
            st->calls_pos0 = op->desk->calls;
        if (!st->probes)
            st->probes = ufo_desktop_probes_new_ ();
        ufo_desktop_stale_extents_ (win->root, st->probes);
        ufo_desktop_walk_start_ (op, win);
        return;
    }
    win->snap_ms = ufo_desktop_now_ms_ ();
    s_collect_t out = {
        .controls = ufo_value_new_list (),
        .labels = g_ptr_array_new_with_free_func (ufo_dlabel_free_),
        .tree_refs = g_ptr_array_new (),
        .captions = ufo_value_new_list ()
    };
    ufo_value_t *tree = st->want_tree ? ufo_value_new_list () : NULL;
    s_collect (op, win->root, &out, tree, false, s_everywhere);
    s_collect (op, app, &out, NULL, true, s_everywhere);   //  open popup windows, after the window
    //  stable labels, then the best names
    ufo_desktop_labels_assign_ (win, out.labels);
    for (guint i = 0; i < out.labels->len; i++) {
        const ufo_dlabel_t *l = g_ptr_array_index (out.labels, i);
        char num [16];
        snprintf (num, sizeof num, "%d", l->label);
        ufo_value_map_set_str (ufo_value_list_at (out.controls, l->index), "label", num);
        if (g_ptr_array_index (out.tree_refs, i))
            ufo_value_map_set_str (g_ptr_array_index (out.tree_refs, i), "label", num);
    }
    g_ptr_array_unref (out.labels);
    g_ptr_array_unref (out.tree_refs);
    ufo_value_t *controls = out.controls;
    int nodes = out.nodes;
    op->result = ufo_value_new_map ();
    ufo_value_t *info = ufo_value_new_map ();
    ufo_value_map_set_int (info, "xid", st->xid);
    ufo_value_map_set_str (info, "title", st->title ? st->title : "");
    ufo_value_map_set_int (info, "pid", st->pid);
    ufo_value_t *rect = ufo_desktop_rect_value_ (st->wx, st->wy, st->ww, st->wh);
    ufo_value_map_set (info, "rect", &rect);
    //  what the accessible window says of itself: a dialog (dialog, file chooser and alert
    //  roles, or the modal state), modal, active (the toolkit's focused top-level)
    uint32_t role = win->root->role;
    bool modal = ufo_dnode_has_state_ (win->root, ATSPI_STATE_MODAL);
    ufo_value_map_set_bool (info, "dialog", modal || role == ATSPI_ROLE_DIALOG
                            || role == ATSPI_ROLE_FILE_CHOOSER || role == ATSPI_ROLE_ALERT);
    ufo_value_map_set_bool (info, "modal", modal);
    ufo_value_map_set_bool (info, "active", ufo_dnode_has_state_ (win->root, ATSPI_STATE_ACTIVE));
    //  a spreadsheet on screen: its table is where the spreadsheet actions act
    free (win->sheet_key);
    win->sheet_key = NULL;
    if (out.sheet) {
        char *key = ufo_dnode_key_ (out.sheet->bus, out.sheet->path);
        win->sheet_key = ufo_strdup (key);
        g_free (key);
    }
    if (out.sheet) {
        ufo_value_t *sheet = ufo_value_new_map ();
        ufo_value_map_set_str (sheet, "name", out.sheet->name ? out.sheet->name : "");
        ufo_value_map_set_int (sheet, "rows", out.sheet->vrows);
        ufo_value_map_set_int (sheet, "columns", out.sheet->vcols);
        ufo_value_map_set (op->result, "spreadsheet", &sheet);
    }
    //  names an application's profile gives to controls its accessibility leaves unnamed
    char comm [64] = "";
    char comm_path [64];
    snprintf (comm_path, sizeof comm_path, "/proc/%d/comm", st->pid);
    FILE *cf = st->pid > 0 ? fopen (comm_path, "r") : NULL;
    if (cf) {
        if (!fgets (comm, sizeof comm, cf))
            comm [0] = '\0';
        comm [strcspn (comm, "\n")] = '\0';
        fclose (cf);
    }
    ufo_desktop_profile_name_controls (ufo_desktop_profile_of (comm), controls);
    if (st->raw)                //  the inputs of the naming rules, as recorded for tests
        ufo_value_map_set_copy (op->result, "captions", out.captions);
    else
        ufo_desktop_name_controls (controls, out.captions, ufo_value_map_get (info, "rect"));
    ufo_value_destroy (&out.captions);
    ufo_value_map_set (op->result, "window", &info);
    ufo_value_destroy (&win->controls);
    win->controls = ufo_value_dup (controls);
    ufo_value_map_set (op->result, "controls", &controls);
    if (tree) {
        ufo_value_t *root = ufo_value_list_at (tree, 0) ? ufo_value_dup (ufo_value_list_at (tree, 0))
                                                        : ufo_value_new_map ();
        ufo_value_map_set (op->result, "tree", &root);
        ufo_value_destroy (&tree);
    }
    ufo_value_map_set_int (op->result, "nodes", nodes);
    ufo_value_map_set_int (op->result, "fetched", st->fetched);
    ufo_value_map_set_int (op->result, "rewalks", st->rewalks);
    ufo_value_map_set_int (op->result, "calls", op->desk->calls - st->calls0);
    ufo_value_map_set_int (op->result, "misnested",
                           ufo_desktop_misnested_ (win->root, st->uses_showing));
    ufo_value_map_set_int (op->result, "position_calls",
                           st->calls_pos0 >= 0 ? op->desk->calls - st->calls_pos0 : 0);
    ufo_value_map_set_int (op->result, "events", (int64_t) op->desk->event_seq);
    //  nothing at all under the window's cached root (LibreOffice at load 16: a frame read
    //  while it started, nothing offered from it in 90 s, while a fresh handle read the
    //  window): the next snapshot finds the window's accessible again
    if (nodes == 0)
        ufo_desktop_win_forget_ (op->desk, st->xid);
    ufo_desktop_op_finish_ (op, true, "", NULL);
}

void
ufo_desktop_walk_start_ (ufo_desktop_op_t *op, ufo_dwin_t *win)
{
    ufo_dsnap_t *st = op->state;
    st->walking = true;
    st->gen = ++op->desk->walk_gen;
    if (!st->gen)
        st->gen = ++op->desk->walk_gen;
    s_visit (op, win->root);
    //  the application's popup windows (GTK3 context menus): its children list is cached
    //  and refreshed by children-changed events like any other
    ufo_dnode_t *app = s_app_node (op->desk, win->root->bus);
    app->walk_gen = st->gen;
    app->valid = app->detail_valid = true;      //  its role and states are ours, not read
    if (app->kids_valid)
        s_expand (op, app);
    else if (app->busy == 0)
        s_node_call (op, app, W_KIDS, "org.a11y.atspi.Accessible", "GetChildren", NULL,
                     "(a(so))");
    s_maybe_finish (op);
}

static void
s_snap_free (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    if (!st)
        return;
    free (st->title);
    free (st->app_bus);
    free (st->tk_version);
    g_ptr_array_unref (st->frames);
    for (guint i = 0; i < st->frame_names->len; i++)
        g_free (g_ptr_array_index (st->frame_names, i));
    g_ptr_array_unref (st->frame_names);
    ufo_value_destroy (&st->types);
    if (st->probes)
        g_ptr_array_unref (st->probes);
    free (st);
    op->state = NULL;
}

//  GTK4 sends neither bounds events nor, for parts of a window no client has read yet (a
//  stack page shown, rows added to a list inside it), children-changed: after any event
//  from the application, the extents and the child lists of what is cached are read again
//  (children already known keep what was read of them).
static void
s_stale_layout (ufo_dnode_t *node)
{
    node->ext_stale = true;
    if (!ufo_dnode_leaf_ (node))
        node->kids_valid = false;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_stale_layout (g_ptr_array_index (node->kids, i));
}

//  The child lists of what is cached are read again (of the nodes a snapshot shows: hidden
//  ones are not read); children already known keep what was read of them.
static void
s_stale_kids (ufo_dnode_t *node)
{
    if (!ufo_dnode_leaf_ (node))
        node->kids_valid = false;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_stale_kids (g_ptr_array_index (node->kids, i));
}

//  After an event from the application: extents that could not be read (no size yet, a
//  failed call) are read again, once (not pass after pass: a control may never have a
//  size), and so is the text of paragraphs.
static void
s_retry_extents (ufo_dnode_t *node)
{
    if (node->ext_retry) {
        node->ext_retry = false;
        node->ext_stale = true;
    }
    //  LibreOffice sends no text event for the paragraph left behind when one is split:
    //  paragraphs (visible ones: only those are read) are read again after any event
    if (node->role == ATSPI_ROLE_PARAGRAPH)
        node->extra_valid = false;
    if (node->role == ATSPI_ROLE_DOCUMENT_TEXT)     //  and which paragraphs are shown
        node->kids_valid = false;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_retry_extents (g_ptr_array_index (node->kids, i));
}

static void
s_invalidate_tree (ufo_dnode_t *node)
{
    node->detail_valid = false;
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_invalidate_tree (g_ptr_array_index (node->kids, i));
}

//  After an action of ours on the window: every cached node's states and extents are read
//  again by the next walk - of the nodes it shows only, hidden subtrees are not entered (a
//  scroll: Firefox gives what scrolled into view the showing state and new extents, Qt moves
//  a scrolled area's content, and neither sends an event). A node whose states then say it
//  was shown, opened or closed has its child list read again (s_on_reply: a closed select's
//  options). A document has its name and child list read again, and so has its parent (a
//  followed link: Firefox replaces the page without an event a client sees).
//  To keep it cheap, the role is not read again (one call per shown node, not two), and
//  extents only inside what scrolls - a scroll pane, a viewport, a combo box's list, a
//  document (`moved`; all of them after a scroll action, which may move what no role says
//  scrolls: Qt): elsewhere a layout change comes with a resize or bounds events.
//  Nodes of an application whose toolkit reports such changes by events (UFO_DTK_EVENTS:
//  GTK3) are left alone unless the action scrolled (`moved`); their children are still
//  visited (a plug of another application, a web view's process, may sit inside).
static void
s_revalidate (ufo_desktop_t *desk, ufo_dnode_t *node, bool moved)
{
    int flags = GPOINTER_TO_INT (g_hash_table_lookup (desk->bus_toolkit, node->bus));
    bool quiet = !moved && (flags & UFO_DTK_EVENTS);
    if (!quiet) {
        bool doc = node->role == ATSPI_ROLE_DOCUMENT_WEB
                || node->role == ATSPI_ROLE_DOCUMENT_FRAME;
        if (moved)
            node->ext_stale = true;
        if (node->parent && node->valid)    //  the window's own states stay
            node->states_stale = true;
        if (doc) {
            node->detail_valid = false;
            node->kids_valid = false;
            if (node->parent)
                node->parent->kids_valid = false;
        }
        moved = moved || doc || s_clips (node);
    }
    for (guint i = 0; node->kids && i < node->kids->len; i++)
        s_revalidate (desk, g_ptr_array_index (node->kids, i), moved);
}

//  Profile "pointer_enter" (LibreOffice): the application learns where its own drawing area
//  lies from a pointer motion in the window, reports its own objects' positions off by the
//  height of the menu bar above it until then, and can lose it again while it lays out the
//  window (docs/DESKTOP.md). So a window of such an application gets a pointer motion before
//  it is read: the first time (to the window's centre), and again (a one-pixel move where the
//  pointer is) when it was moved or resized, or (up to S_ENTER_MAX times for one geometry: the
//  motion itself makes events) its application sent an event since. The
//  application may answer the walk's calls before it handles the motion, and sends no event
//  for the change: the walk's end reads the window's extents once more (s_maybe_finish). An
//  unchanged window costs nothing.
#define S_ENTER_MAX 3             //  motions per window and geometry

//  force (a window found unsettled at the walk's end): a motion whatever was done before.
static void
s_pointer_enter (ufo_desktop_t *self, ufo_dsnap_t *st, ufo_dwin_t *win, bool force)
{
    gint64 key = st->xid;
    gint64 geometry = ((gint64) (st->wx & 0xffff) << 48) | ((gint64) (st->wy & 0xffff) << 32)
                    | ((gint64) (st->ww & 0xffff) << 16) | (gint64) (st->wh & 0xffff);
    gint64 *was = g_hash_table_lookup (self->entered, &key);
    if (was)
        st->enter_app = true;       //  (entries are made for the profile's windows only)
    if (st->pid <= 0 || st->ww <= 2 || st->wh <= 2)
        return;
    if (was && was [1] == geometry && !force) {
        //  events: a few times only (while it starts; the motion itself makes events)
        gint64 *last = win && win->root
                     ? g_hash_table_lookup (self->bus_event_ms, win->root->bus) : NULL;
        if (!last || *last < was [2] || was [3] >= S_ENTER_MAX)
            return;
    }
    char path [64], comm [64] = "";
    snprintf (path, sizeof path, "/proc/%d/comm", st->pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    if (!fgets (comm, sizeof comm, f))
        comm [0] = '\0';
    fclose (f);
    comm [strcspn (comm, "\n")] = '\0';
    if (!ufo_desktop_profile_flag (ufo_desktop_profile_of (comm), "pointer_enter"))
        return;
    st->enter_app = true;
    int x = st->wx + st->ww / 2, y = st->wy + st->wh / 2;
    Window root_ret, child_ret;
    int px, py, cx, cy;
    unsigned int mask;
    if (XQueryPointer (self->dpy, DefaultRootWindow (self->dpy), &root_ret, &child_ret,
                       &px, &py, &cx, &cy, &mask)
    &&  px > st->wx && px < st->wx + st->ww - 1 && py > st->wy && py < st->wy + st->wh - 1) {
        x = px;                     //  in the window: it stays where it is
        y = py;
    }
    ufo_trace ("desktop: pointer motion in window %" PRId64 " at %d,%d for its positions",
               st->xid, x, y);
    //  two motions: a pointer already there would make no motion event
    ufo_desktop_pointer_move_ (self, x - 1, y - 1);
    ufo_desktop_pointer_move_ (self, x, y);
    XSync (self->dpy, False);
    gint64 *entered = g_new (gint64, 5);
    bool same = was && was [1] == geometry;
    entered [0] = key;
    entered [1] = geometry;
    entered [2] = ufo_desktop_now_ms_ ();
    entered [3] = same ? was [3] + 1 : 1;
    entered [4] = (same ? was [4] : 0) + (force ? 1 : 0);   //  motions for unsettled positions
    g_hash_table_replace (self->entered, entered, entered);
    UFO_UNUSED (win);
    st->entered = true;
}

static bool
s_snap_poll (ufo_desktop_op_t *op)
{
    ufo_dsnap_t *st = op->state;
    ufo_desktop_find_poll_ (op);
    if (st->retry && !op->done && op->pending == 0) {
        st->retry = false;
        ufo_dwin_t *win = ufo_desktop_win_ (op->desk, st->xid, false);
        if (win && win->root)
            ufo_desktop_walk_start_ (op, win);
        else
            s_maybe_finish (op);
    }
    return op->done;
}

ufo_desktop_op_t *
ufo_desktop_controls_begin (ufo_desktop_t *self, int64_t xid, const ufo_value_t *options)
{
    assert (self);
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (self, UFO_DESKTOP_SNAPSHOT_TIMEOUT_MS);
    ufo_dsnap_t *st = ufo_calloc (1, sizeof (*st));
    op->state = st;
    op->free_state = s_snap_free;
    op->poll = s_snap_poll;
    op->wake = ufo_desktop_find_wake_;
    st->xid = xid;
    st->frames = g_ptr_array_new_with_free_func (g_free);
    st->frame_names = g_ptr_array_new ();
    st->want_tree = ufo_value_map_bool (options, "tree", false);
    st->raw = ufo_value_map_bool (options, "raw", false);
    st->uses_showing = true;
    st->calls0 = self->calls;
    st->calls_pos0 = -1;
    const ufo_value_t *types = ufo_value_map_get (options, "control_list");
    st->types = ufo_value_dup (ufo_value_type (types) == UFO_TLIST ? types : self->control_list);
    if (!ufo_desktop_x_window_info_ (self, xid, &st->wx, &st->wy, &st->ww, &st->wh, &st->title,
                                     &st->pid)) {
        ufo_desktop_win_forget_ (self, xid);
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " does not exist", xid);
        return op;
    }
    ufo_dwin_t *win = ufo_desktop_win_ (self, xid, false);
    s_pointer_enter (self, st, win, false);
    if (win && win->root && win->pid != st->pid) {
        //  X reuses window ids: this id now belongs to another process, so the cached
        //  tree (and the application it names) is not this window's
        ufo_desktop_win_forget_ (self, xid);
        win = NULL;
    }
    if (win && win->root) {
        if (win->acted) {           //  an action may have changed what no event tells
            s_revalidate (self, win->root, win->scrolled);
            win->acted = false;
            win->scrolled = false;
        }
        if (win->width != st->ww || win->height != st->wh) {
            //  a resized window has new extents everywhere; the structure is still good
            s_invalidate_tree (win->root);
            win->width = st->ww;
            win->height = st->wh;
        }
        st->uses_showing = win->uses_showing;
        //  GTK4 sends no bounds events and few children-changed: after any event from the
        //  application, re-read the extents and child lists of what is cached (s_stale_layout);
        //  an unchanged window costs nothing
        gint64 *last = g_hash_table_lookup (self->bus_event_ms, win->root->bus);
        if (!win->uses_showing && last && *last >= win->snap_ms)
            s_stale_layout (win->root);
        //  other toolkits: when an object the cache does not hold sent an event since the
        //  last snapshot (a widget added without children-changed: GTK3's search bar, a
        //  web page's late heading), the child lists of what is shown are read again
        gint64 *unplaced = g_hash_table_lookup (self->bus_unplaced_ms, win->root->bus);
        if (win->uses_showing && unplaced && *unplaced >= win->snap_ms)
            s_stale_kids (win->root);
        //  extents that could not be read are tried again once the application has done
        //  something (an unchanged window still costs no call)
        if (last && *last >= win->snap_ms)
            s_retry_extents (win->root);
        ufo_desktop_walk_start_ (op, win);
        return op;
    }
    if (st->pid <= 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " has no _NET_WM_PID", xid);
        return op;
    }
    ufo_desktop_find_start_ (op);
    return op;
}
