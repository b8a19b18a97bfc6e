/*  ufo_desktop_node.c - the cached AT-SPI nodes of the desktop module: creation, keys,
    states, invalidation by events, and the mapping of AT-SPI roles to the original's
    control types (docs/DESKTOP.md has the table). */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

static uint64_t s_serial = 0;           //  distinguishes a node from a later one with its key

//  --- nodes -------------------------------------------------------------------------------

ufo_dnode_t *
ufo_dnode_new_ (ufo_desktop_t *desk, const char *bus, const char *path, ufo_dnode_t *parent)
{
    ufo_dnode_t *node = ufo_calloc (1, sizeof (*node));
    node->serial = ++s_serial;
    size_t blen = strlen (bus), plen = strlen (path);
    node->names = ufo_malloc (blen + plen + 2);
    memcpy (node->names, bus, blen + 1);
    memcpy (node->names + blen + 1, path, plen + 1);
    node->bus = node->names;
    node->path = node->names + blen + 1;
    node->parent = parent;
    node->ext [2] = -1;
    char *key = ufo_dnode_key_ (bus, path);
    gpointer old_key = NULL, old_node = NULL;
    if (g_hash_table_lookup_extended (desk->nodes, key, &old_key, &old_node)) {
        //  the path moved under another parent: the newest node answers for it
        g_hash_table_steal (desk->nodes, key);
        g_free (old_key);
    }
    g_hash_table_insert (desk->nodes, key, node);
    return node;
}

uint64_t
ufo_dnode_serial_ (ufo_dnode_t *node)
{
    return node->serial;
}

char *
ufo_dnode_key_ (const char *bus, const char *path)
{
    return g_strdup_printf ("%s %s", bus, path);
}

void
ufo_dnode_free_ (ufo_desktop_t *desk, ufo_dnode_t *node)
{
    if (!node)
        return;
    if (node->kids) {
        for (guint i = 0; i < node->kids->len; i++)
            ufo_dnode_free_ (desk, g_ptr_array_index (node->kids, i));
        g_ptr_array_unref (node->kids);
    }
    char *key = ufo_dnode_key_ (node->bus, node->path);
    gpointer orig_key = NULL, value = NULL;
    if (g_hash_table_lookup_extended (desk->nodes, key, &orig_key, &value) && value == node) {
        g_hash_table_steal (desk->nodes, key);
        g_free (orig_key);
    }
    g_free (key);
    free (node->names);
    free (node->name);
    free (node->text);
    free (node->desc);
    free (node->relby);
    g_strfreev (node->actions);
    for (int i = 0; node->vkids && i < node->vcells; i++)
        free (node->vkids [i]);
    free (node->vkids);
    free (node);
}

bool
ufo_dnode_has_state_ (const ufo_dnode_t *node, AtspiStateType state)
{
    return (node->states >> (unsigned) state) & 1u;
}

bool
ufo_dnode_hidden_ (const ufo_dnode_t *node, bool uses_showing)
{
    if (!ufo_dnode_has_state_ (node, ATSPI_STATE_VISIBLE))
        return true;
    if (uses_showing && !ufo_dnode_has_state_ (node, ATSPI_STATE_SHOWING))
        return true;
    if (node->ext [2] >= 0 && (node->ext [2] == 0 || node->ext [3] <= 0)) {
        ufo_trace ("desktop: hidden by extents: %s role %u", node->path, node->role);
        return true;
    }
    //  GTK3 menu items never opened report a 1x1 box far off screen
    if (node->ext [2] >= 0 && (node->ext [0] < -10000 || node->ext [1] < -10000))
        return true;
    return false;
}

//  Everything read below node is read again (not node itself).
static void
s_invalidate_below (ufo_dnode_t *node)
{
    node->kids_valid = false;
    for (guint i = 0; node->kids && i < node->kids->len; i++) {
        ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
        kid->valid = false;
        kid->detail_valid = false;
        kid->extra_valid = false;
        s_invalidate_below (kid);
    }
}

void
ufo_desktop_invalidate_ (ufo_desktop_t *desk, const char *bus, const char *path,
                         const char *member, const char *detail)
{
    char *key = ufo_dnode_key_ (bus, path);
    ufo_dnode_t *node = g_hash_table_lookup (desk->nodes, key);
    g_free (key);
    if (!node) {
        //  an object the cache does not hold: a widget added without a children-changed
        //  event (GTK3's search bars, a page's late parts) - the next snapshot of the
        //  application's windows re-reads the child lists it shows
        if (desk->bus_unplaced_ms) {
            gint64 *when = g_new (gint64, 1);
            *when = ufo_desktop_now_ms_ ();
            g_hash_table_replace (desk->bus_unplaced_ms, g_strdup (bus), when);
        }
        return;
    }
    if (streq (member, "ChildrenChanged")) {
        //  and what the node derives from its children: a name from content (a web page's
        //  heading or link gets its text leaf after the node itself, with a children-changed
        //  event and no name or text event), a hypertext's text
        node->kids_valid = false;
        node->detail_valid = false;
        node->extra_valid = false;
    }
    else if (streq (member, "RowReordered") || streq (member, "ModelChanged")) {
        //  a list sorted (a column header clicked) or refilled: its rows, as read, show
        //  other content now, in another order (GTK3 sends no other event for it)
        node->kids_valid = false;
        s_invalidate_below (node);
    }
    else if (streq (member, "LoadComplete") || streq (member, "Reload")
         ||  (streq (member, "StateChanged") && streq (detail, "busy"))) {
        //  a document that finished (re)loading: Firefox adds a loading page's parts without
        //  a children-changed event a client sees, so what was read of it is read again
        node->valid = false;
        node->detail_valid = false;
        node->extra_valid = false;
        s_invalidate_below (node);
    }
    else if (streq (member, "TextChanged"))
        node->extra_valid = false;
    else if (streq (member, "ValueChanged")) {
        node->extra_valid = false;
        if (node->role == ATSPI_ROLE_SCROLL_BAR && node->valid)
            ufo_desktop_scrolled_ (node);           //  (as accessible-value below)
    }
    else if (streq (member, "PropertyChange")) {
        if (streq (detail, "accessible-value") || strstr (detail, "text")) {
            node->extra_valid = false;
            //  a scroll bar moved: so did what its area shows (ufo_desktop_scroll.c)
            if (node->role == ATSPI_ROLE_SCROLL_BAR && node->valid
            &&  streq (detail, "accessible-value"))
                ufo_desktop_scrolled_ (node);
        }
        else {
            node->detail_valid = false;
            node->extra_valid = false;
        }
    }
    else if (streq (member, "StateChanged")) {
        node->valid = false;
        node->detail_valid = false;
        node->extra_valid = false;
        //  the current item of a list, table or tree moved: the view may have scrolled
        if (streq (detail, "focused") || streq (detail, "selected"))
            ufo_desktop_item_current_ (desk, node);
    }
    else if (streq (member, "BoundsChanged") || streq (member, "VisibleDataChanged"))
        node->detail_valid = false;
}

//  --- control types (docs/DESKTOP.md has the table) -------------------------------------------

//  True if node lies inside a document (frame, text, web page, spreadsheet ...).
static bool
s_in_document (const ufo_dnode_t *node)
{
    for (const ufo_dnode_t *up = node->parent; up; up = up->parent)
        switch (up->role) {
            case ATSPI_ROLE_DOCUMENT_FRAME: case ATSPI_ROLE_DOCUMENT_TEXT:
            case ATSPI_ROLE_DOCUMENT_WEB: case ATSPI_ROLE_DOCUMENT_EMAIL:
            case ATSPI_ROLE_DOCUMENT_SPREADSHEET: case ATSPI_ROLE_DOCUMENT_PRESENTATION:
                return true;
            default:
                break;
        }
    return false;
}

//  True for a cell that is only part of a row's cell: GTK3 gives a tree column packing several
//  renderers (an expander or icon, then the text: geany's symbol tree) a cell holding one cell
//  per renderer, all with the same actions and states. The holder, unnamed, and the unnamed
//  renderers (an icon) are not offered: the named renderer is the row's cell. An unnamed one
//  that can be checked (a toggle packed before the text) is kept for its state. A renderer's
//  name not read yet counts as a name (names are read for controls only).
static bool
s_renderer_part (const ufo_dnode_t *node)
{
    bool unnamed = node->name && !node->name [strspn (node->name, " \t\r\n")];
    //  the holder: its children (as last read) are cells; once it is no control its name
    //  is no longer read (NULL)
    for (guint i = 0; (unnamed || !node->name) && node->kids && i < node->kids->len; i++)
        if (((const ufo_dnode_t *) g_ptr_array_index (node->kids, i))->role == ATSPI_ROLE_TABLE_CELL)
            return true;
    return unnamed && node->parent && node->parent->role == ATSPI_ROLE_TABLE_CELL
        && !ufo_dnode_has_state_ (node, ATSPI_STATE_CHECKABLE)
        && !ufo_dnode_has_state_ (node, ATSPI_STATE_CHECKED);
}

//  True for a frame below the window's own (it has a parent in the window's tree), whose
//  children were read and are none, with a name that says something (not a class name).
static bool
s_inner_display (const ufo_dnode_t *node)
{
    return node->parent && node->parent->role != ATSPI_ROLE_APPLICATION
        && node->kids_valid && (!node->kids || node->kids->len == 0)
        && node->name && node->name [strspn (node->name, " \t\r\n")]
        && !ufo_desktop_class_name (node->name);
}

const char *
ufo_desktop_control_type_ (const ufo_desktop_t *desk, const ufo_dnode_t *node)
{
    UFO_UNUSED (desk);
    bool editable = ufo_dnode_has_state_ (node, ATSPI_STATE_EDITABLE);
    switch (node->role) {
        case ATSPI_ROLE_PUSH_BUTTON: case ATSPI_ROLE_TOGGLE_BUTTON: 
            return "Button";
        case ATSPI_ROLE_COLUMN_HEADER: case ATSPI_ROLE_TABLE_COLUMN_HEADER:
            //  a list's column header sorts it when clicked (GTK3, Qt; GTK4's are buttons);
            //  a table's heading in a document (a web page's <th>) is text to read
            return s_in_document (node) ? "Text" : "Button";
        case ATSPI_ROLE_ENTRY: case ATSPI_ROLE_PASSWORD_TEXT:
            return "Edit";
        case ATSPI_ROLE_TEXT:
            return editable ? "Edit" : "Text";
        case ATSPI_ROLE_PAGE_TAB:
            return "TabItem";
        case ATSPI_ROLE_DOCUMENT_FRAME: case ATSPI_ROLE_DOCUMENT_TEXT: case ATSPI_ROLE_DOCUMENT_WEB:
        case ATSPI_ROLE_DOCUMENT_EMAIL: case ATSPI_ROLE_DOCUMENT_SPREADSHEET:
        case ATSPI_ROLE_DOCUMENT_PRESENTATION:
            return "Document";
        case ATSPI_ROLE_LIST_ITEM:
            return "ListItem";
        case ATSPI_ROLE_MENU_ITEM: case ATSPI_ROLE_CHECK_MENU_ITEM: case ATSPI_ROLE_RADIO_MENU_ITEM:
        case ATSPI_ROLE_TEAROFF_MENU_ITEM:
            return "MenuItem";
        case ATSPI_ROLE_MENU:
            //  a submenu ("File" in a menu bar) is an item; a popup menu or a GTK4 popover
            //  (the child of a button, a window) is only the container of its items
            return node->parent && (node->parent->role == ATSPI_ROLE_MENU_BAR
                                    || node->parent->role == ATSPI_ROLE_MENU) ? "MenuItem" : NULL;
        case ATSPI_ROLE_SCROLL_BAR:
            return "ScrollBar";
        case ATSPI_ROLE_TREE_ITEM:
            return "TreeItem";
        case ATSPI_ROLE_LINK:
            return "Hyperlink";
        case ATSPI_ROLE_COMBO_BOX:
            return "ComboBox";
        case ATSPI_ROLE_RADIO_BUTTON:
            return "RadioButton";
        case ATSPI_ROLE_SPIN_BUTTON: case ATSPI_ROLE_SLIDER:
            return "Spinner";
        case ATSPI_ROLE_CHECK_BOX:
            return "CheckBox";
        case ATSPI_ROLE_GROUPING:
            return "Group";
        case ATSPI_ROLE_PANEL:
            return (node->name && *node->name) ? "Group" : NULL;
        case ATSPI_ROLE_PARAGRAPH:
            //  an editable paragraph outside any document is an input line (LibreOffice's
            //  formula bar); in a document (Writer, a web page) it is text to read
            if (editable && !s_in_document (node))
                return "Edit";
            return "Text";
        case ATSPI_ROLE_LABEL: case ATSPI_ROLE_STATIC: case ATSPI_ROLE_CAPTION:
        case ATSPI_ROLE_HEADING:                                //  web pages, Writer
            return "Text";
        case ATSPI_ROLE_TABLE_CELL:
            return s_renderer_part (node) ? NULL : "ListItem";
        case ATSPI_ROLE_FRAME:
            //  a frame inside a window, named, with nothing inside: a display drawn by the
            //  application (Qt gives a QFrame subclass the frame role: KCalc's result display,
            //  its name the number shown); the window's own frame is not a control
            return s_inner_display (node) ? "Text" : NULL;
        case ATSPI_ROLE_FILLER:
            //  a view whose toolkit exposes no rows (GTK 4.8's GtkTreeView): a List whose
            //  value says so (ufo_desktop_rows.c)
            return ufo_dnode_rowless_view_ (node) ? "List" : NULL;
        default:
            return NULL;
    }
}

//  Controls whose inside is not offered: the walk does not enter them (a button's label
//  is the button's name). Containers such as menus, lists, trees and documents are entered,
//  and so is an expanded button (a GTK4 menu button holds its open popover) and the button of
//  a combo box (a GTK4 drop-down shows its selection in a label inside it), and a web page's
//  label (it may wrap its field).
//  True if node is part of a web page (its content, not the browser around it).
static bool
s_in_web_page (const ufo_dnode_t *node)
{
    for (const ufo_dnode_t *up = node->parent; up; up = up->parent)
        if (up->role == ATSPI_ROLE_DOCUMENT_WEB)
            return true;
    return false;
}

//  A closed submenu: a menu in a menu bar or in another menu that is neither selected nor
//  expanded (GTK3, and so LibreOffice's menu bar, select the menu whose items are open;
//  Firefox expands it). Its items are hidden, and a menu bar holds hundreds of them
//  (LibreOffice Calc: 368 of a snapshot's 761 nodes): they are not read until the menu opens.
//  The opening is seen by the menu's state-changed event (or, for applications whose
//  events are not trusted, by the states read again after an action); the walk then reads
//  its items (s_on_reply: a menu whose selected state changed has its children re-read).
bool
ufo_dnode_shut_ (const ufo_dnode_t *node)
{
    return node->role == ATSPI_ROLE_MENU && node->parent
        && (node->parent->role == ATSPI_ROLE_MENU_BAR || node->parent->role == ATSPI_ROLE_MENU)
        && !ufo_dnode_has_state_ (node, ATSPI_STATE_SELECTED)
        && !ufo_dnode_has_state_ (node, ATSPI_STATE_EXPANDED);
}

bool
ufo_dnode_leaf_ (const ufo_dnode_t *node)
{
    if (ufo_dnode_shut_ (node))
        return true;            //  a closed submenu: its items are hidden
    //  a web page's label may hold the field it names (<label>Size <select>...</label>)
    if (node->role == ATSPI_ROLE_LABEL && s_in_web_page (node))
        return false;
    if ((node->role == ATSPI_ROLE_PUSH_BUTTON || node->role == ATSPI_ROLE_TOGGLE_BUTTON)
    &&  (ufo_dnode_has_state_ (node, ATSPI_STATE_EXPANDED) || node->noname
         || (node->parent && node->parent->role == ATSPI_ROLE_COMBO_BOX)
         || (node->name && ufo_desktop_class_name (node->name))))
        return false;           //  (a GTK4 drop-down's button holds the label of its choice;
                                //  an unnamed button is named by the labels inside it; a GTK4
                                //  menu button - named "GtkMenuButton" - holds the button that
                                //  shows the current choice, "Basic")
    switch (node->role) {
        case ATSPI_ROLE_PUSH_BUTTON: case ATSPI_ROLE_TOGGLE_BUTTON: case ATSPI_ROLE_CHECK_BOX:
        case ATSPI_ROLE_RADIO_BUTTON: case ATSPI_ROLE_ENTRY: case ATSPI_ROLE_PASSWORD_TEXT:
        case ATSPI_ROLE_TEXT: case ATSPI_ROLE_LABEL: case ATSPI_ROLE_STATIC:
        case ATSPI_ROLE_CAPTION: case ATSPI_ROLE_SPIN_BUTTON: case ATSPI_ROLE_SLIDER:
        case ATSPI_ROLE_SCROLL_BAR: case ATSPI_ROLE_LINK: case ATSPI_ROLE_PROGRESS_BAR:
        case ATSPI_ROLE_SEPARATOR: case ATSPI_ROLE_ICON: case ATSPI_ROLE_IMAGE:
            return true;
        default:
            return false;
    }
}

//  Roles whose text is their name (no Text call needed, no useful actions).
bool
ufo_dnode_label_role_ (uint32_t role)
{
    return role == ATSPI_ROLE_LABEL || role == ATSPI_ROLE_STATIC || role == ATSPI_ROLE_CAPTION
        || role == ATSPI_ROLE_HEADING;
}

bool
ufo_dnode_text_role_ (uint32_t role)
{
    switch (role) {
        case ATSPI_ROLE_TEXT: case ATSPI_ROLE_ENTRY: case ATSPI_ROLE_PASSWORD_TEXT:
        case ATSPI_ROLE_DOCUMENT_FRAME: case ATSPI_ROLE_DOCUMENT_TEXT: case ATSPI_ROLE_DOCUMENT_WEB:
        case ATSPI_ROLE_DOCUMENT_EMAIL: case ATSPI_ROLE_TERMINAL: case ATSPI_ROLE_PARAGRAPH:
        case ATSPI_ROLE_COMBO_BOX:
            return true;
        default:
            return false;
    }
}

bool
ufo_dnode_value_role_ (uint32_t role)
{
    return role == ATSPI_ROLE_SPIN_BUTTON || role == ATSPI_ROLE_SLIDER
        || role == ATSPI_ROLE_SCROLL_BAR || role == ATSPI_ROLE_PROGRESS_BAR;
}

//  --- descriptions ------------------------------------------------------------------------

static const struct { AtspiStateType state; const char *name; } s_state_names [] = {
    { ATSPI_STATE_FOCUSED, "focused" }, { ATSPI_STATE_CHECKED, "checked" },
    { ATSPI_STATE_SELECTED, "selected" }, { ATSPI_STATE_PRESSED, "pressed" },
    { ATSPI_STATE_EXPANDED, "expanded" }, { ATSPI_STATE_EDITABLE, "editable" },
    { ATSPI_STATE_FOCUSABLE, "focusable" }, { ATSPI_STATE_ACTIVE, "active" },
    { ATSPI_STATE_MULTI_LINE, "multi_line" }, { ATSPI_STATE_INDETERMINATE, "indeterminate" },
};

ufo_value_t *
ufo_dnode_states_value_ (const ufo_dnode_t *node)
{
    ufo_value_t *list = ufo_value_new_list ();
    //  LibreOffice's cells say only ENABLED, toolkits both: either means usable
    if (!ufo_dnode_has_state_ (node, ATSPI_STATE_SENSITIVE)
    &&  !ufo_dnode_has_state_ (node, ATSPI_STATE_ENABLED))
        ufo_value_list_push_str (list, "disabled");
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_state_names); i++)
        if (ufo_dnode_has_state_ (node, s_state_names [i].state))
            ufo_value_list_push_str (list, s_state_names [i].name);
    return list;
}

//  UTF-8-safe excerpt of at most max bytes, with "..." when cut.
ufo_value_t *
ufo_dnode_excerpt_ (const char *text, int max)
{
    if (!text)
        return ufo_value_new_string ("");
    size_t len = strlen (text);
    if (len <= (size_t) max)
        return ufo_value_new_string (text);
    size_t cut = (size_t) max;
    while (cut > 0 && ((unsigned char) text [cut] & 0xC0) == 0x80)
        cut--;
    return ufo_value_new_stringf ("%.*s...", (int) cut, text);
}

//  GTK4 doubles some button names ("2 2", "_Cancel Cancel"): keep the plain half.
ufo_value_t *
ufo_dnode_clean_name_ (const char *name)
{
    if (!name)
        return ufo_value_new_string ("");
    //  GTK3 pads menu item names with spaces (room for the accelerator): trim
    while (*name == ' ')
        name++;
    size_t len = strlen (name);
    while (len > 0 && name [len - 1] == ' ')
        len--;
    char *trimmed = ufo_strndup (name, len);
    name = trimmed;
    //  "2 2", and "_Cancel Cancel" / "Save _As Save As" (the mnemonic text, then the text):
    //  the second half when the first, without underscores, equals it
    ufo_value_t *value = NULL;
    for (size_t k = 1; k + 1 < len && !value; k++) {
        if (name [k] != ' ')
            continue;
        const char *right = name + k + 1;
        size_t rlen = len - k - 1, a = 0, b = 0;
        while (a < k && b < rlen) {
            if (name [a] == '_' && a + 1 < k) {
                a++;            //  a mnemonic mark
                continue;
            }
            if (name [a] != right [b])
                break;
            a++;
            b++;
        }
        if (a == k && b == rlen)
            value = ufo_value_new_stringn (right, rlen);
    }
    if (!value)
        value = ufo_value_new_string (name);
    free (trimmed);
    return value;
}
