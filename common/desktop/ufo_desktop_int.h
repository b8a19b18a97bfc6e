/*  ufo_desktop_int.h - private to the desktop module (ufo_desktop*.c): the one place where
    GLib/GIO (D-Bus), X11 and the AT-SPI constants meet. Never include it elsewhere. */
#ifndef UFO_DESKTOP_INT_H_INCLUDED
#define UFO_DESKTOP_INT_H_INCLUDED

#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include <gio/gio.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/Xatom.h>
#include <atspi/atspi-constants.h>

#define streq(a, b) (strcmp ((a), (b)) == 0)
#define UFO_DESKTOP_CALL_TIMEOUT_MS 5000    //  one D-Bus call
#define UFO_DESKTOP_SNAPSHOT_TIMEOUT_MS 20000
#define UFO_DESKTOP_APP_WAIT_MS 10000       //  a window's application not yet on the bus
#define UFO_DESKTOP_MAX_KIDS 400            //  more children: read only the visible part
#define UFO_DESKTOP_MAX_CELLS 200           //  cells of a huge table offered at most

//  Interfaces a node offers (bit set).
enum {
    S_IF_COMPONENT = 1, S_IF_ACTION = 2, S_IF_TEXT = 4, S_IF_EDITABLE = 8,
    S_IF_VALUE = 16, S_IF_SELECTION = 32, S_IF_TABLE = 64
};

typedef struct _ufo_dnode_t ufo_dnode_t;
struct _ufo_dnode_t {
    char *names;                //  "bus\0path": storage for bus and path
    char *bus, *path;           //  point into names (desk->nodes is keyed by "bus path")
    uint64_t serial;            //  tells this node from a later one with the same path
    ufo_dnode_t *parent;        //  weak
    GPtrArray *kids;            //  owned ufo_dnode_t*, NULL until read
    uint32_t role;
    char *name;
    uint64_t states;            //  bit i = AtspiStateType i
    uint32_t ifaces;
    int32_t ext [4];            //  x, y, w, h relative to the window; w = -1 unknown
    char **actions;             //  NULL-terminated, NULL until read
    char *text;                 //  text / value excerpt
    bool text_whole;            //  text is the control's whole text exactly as GetText gives it
                                //  (at most text_excerpt characters, no embedded objects);
                                //  fresh while extra_valid (ufo_desktop_act.c `texts`)
    char *desc;                 //  description, read when the name is empty or a class name
    char *relby;                //  "bus path" of the labelled-by target, read with desc
    bool valid;                 //  role and states fresh
    bool detail_valid;          //  extents, name, interfaces fresh
    bool ext_stale;             //  extents to re-read (layout may have changed)
    bool states_stale;          //  states to re-read (role kept): after an action of ours
    bool ext_retry;             //  reading the extents failed for now: ext_stale after the read
    bool ext_moved;             //  moved (scrolled) while its details were being read: the
                                //  extents read may be from before: ext_stale after the read
    int stage;                  //  1: reading role/states, 2: reading details
    bool kids_valid;
    bool extra_valid;           //  actions/text fresh
    bool noname;                //  its name says nothing (empty, a toolkit class or GTK4 type
                                //  name): a button's inside is then read for the labels in it
    int busy;                   //  calls in flight for this node
    unsigned walk_gen;          //  last walk that visited it
    int fetched;                //  pending field replies
    GPtrArray *new_kids;        //  children reply being assembled
    //  a huge or virtual container (more children than UFO_DESKTOP_MAX_KIDS): its visible
    //  part is read through Table / Component instead of GetChildren (ufo_desktop_walk.c)
    bool virt;                  //  the children list holds only the visible part
    int vwait;                  //  its probing calls in flight
    bool vmoved;                //  scrolled while its visible part was being read: the
                                //  part read may be from before: read again (kids_valid)
    int vrows, vcols;           //  Table NRows / NColumns, -1 unknown (not a table)
    int vcorner [4];            //  first row, first column, last row, last column seen; -1
    int vcells;                 //  cells being read
    int vprobe_y;               //  where the first corner was last probed (read coordinates)
    int vtries;                 //  probes of the first corner that met no row (a header)
    int vtop;                   //  below a column header the probes met: rows start here
                                //  (read coordinates), INT_MIN if none met
    char **vkids;               //  "bus path" per cell slot (NULL until read)
    ufo_desktop_cell_kind_t vkind;  //  its cells' role and interfaces, from the corner cells
    bool assumed;               //  a cell whose role and interfaces are its table's vkind
};

//  A label of a snapshot (ufo_desktop_label.c): which object it names, and its identity.
typedef struct {
    int label;                  //  1.. (0 while not yet assigned)
    size_t index;               //  position in the snapshot's control list
    char *key;                  //  node key "bus path"
    char *ident;                //  "ROLE|name|ancestor roles" (see ufo_desktop_label.c)
    int cx, cy;                 //  centre on screen
} ufo_dlabel_t;

//  What an application's toolkit is (AT-SPI Application ToolkitName and Version, read once
//  per bus name by ufo_desktop_find.c into desk->bus_toolkit).
#define UFO_DTK_READ        1   //  the properties were asked (the entry exists)
#define UFO_DTK_NO_SHOWING  2   //  it never sets SHOWING below the window (GTK4)
#define UFO_DTK_EVENTS      4   //  it sends an event for every change an action of ours
                                //  makes to what a window shows (GTK3): no re-validation
                                //  after an action (ufo_desktop_walk.c s_revalidate)

typedef struct _ufo_dwin_t ufo_dwin_t;
struct _ufo_dwin_t {
    int64_t xid;
    int pid;                    //  _NET_WM_PID when the frame was found (X ids are reused)
    ufo_dnode_t *root;          //  the frame; owned
    int width, height;          //  X geometry at the last snapshot
    bool uses_showing;          //  the toolkit sets SHOWING (GTK3 yes, GTK4 no)
    int64_t snap_ms;            //  when the last snapshot ended
    GPtrArray *labels;          //  ufo_dlabel_t* of the last snapshot, in list order
    int next_label;             //  the highest label ever given in this window
    ufo_value_t *controls;      //  the last snapshot's control list (owned)
    bool acted;                 //  an action of ours was sent to it: the next snapshot
                                //  re-reads the states of what it shows
    bool scrolled;              //  a scroll action was sent: and all extents too
    char *sheet_key;            //  "bus path" of the spreadsheet table seen by the last
                                //  snapshot (a huge Table with A1-named cells), or NULL
    ufo_dwin_t *next;
};

typedef struct _ufo_dxwin_t ufo_dxwin_t;

struct _ufo_desktop_t {
    Display *dpy;
    ufo_dxwin_t *xwin;          //  the root window's children, kept by X events (ufo_desktop_xwin.c)
    bool x_dead;                //  the X connection was lost: every X call is skipped
    Window root_win;
    int screen_w, screen_h;
    bool composite;
    void *shm;                  //  the captures' shared memory segment, attached to the X
                                //  server once and reused (ufo_desktop_image.c), or NULL
    bool shm_off;               //  MIT-SHM is not usable on this display
    GMainContext *ctx;
    int wake_fd;                //  the context's wake-up fd once known, else -1
    GDBusConnection *bus;       //  the AT-SPI bus
    guint sig_object, sig_window, sig_document;
    GHashTable *nodes;          //  key -> ufo_dnode_t* (borrowed)
    GHashTable *bus_pid;        //  bus name -> pid (int)
    GHashTable *apps;           //  bus name -> the application's root node (owned): its
                                //  children are its popup windows (GTK3 context menus)
    ufo_dwin_t *wins;
    uint64_t event_seq;         //  AT-SPI events seen
    char *focus_key;            //  "bus path" of the control that last reported the focus
    GHashTable *bus_event_ms;   //  bus name -> last event time (ms) as gint64*
    GHashTable *bus_unplaced_ms;    //  bus name -> last event (ms, gint64*) from an object
    GHashTable *bus_toolkit;        //  bus name -> UFO_DTK_* flags (GINT_TO_POINTER) of the
                                    //  application's toolkit, read once (ufo_desktop_find.c)
    GHashTable *entered;            //  X window ids (gint64*) the pointer was moved into
                                    //  (profile "pointer_enter"): gint64 [5] = id, geometry,
                                    //  last motion (ms), motions, motions for unsettled
                                    //  positions (ufo_desktop_walk.c s_pointer_enter)
                                    //  the cache does not hold (a widget new to it)
    ufo_value_t *launchers;
    ufo_value_t *control_list;
    GArray *children;           //  pid_t we launched
    int action_timeout_ms, settle_ms, text_excerpt;
    //  input barriers (_NET_WM_PING round trips, ufo_desktop_input.c)
    int pings_out;              //  pings sent and not yet ended
    uint32_t ping_serial;       //  the last serial sent
    uint32_t pings_seen [16];   //  serials answered lately (a ring)
    unsigned pings_seen_at;
    char inserted [512];        //  the latest text inserted in any application (text-changed
    size_t inserted_len;        //  insert events, in order), for keys' arrival
    uint64_t inserted_total;    //  bytes ever inserted
    unsigned walk_gen;
    int64_t calls;              //  D-Bus calls issued (statistics)
    GPtrArray *ops;             //  live operations (borrowed), detached at destroy
};

//  Operation: a small state machine advanced by D-Bus replies and by polls.
typedef struct _ufo_desktop_op_t ufo_desktop_op_t;
typedef bool (*ufo_op_poll_fn) (ufo_desktop_op_t *op);     //  true when finished
typedef void (*ufo_op_free_fn) (ufo_desktop_op_t *op);
typedef int64_t (*ufo_op_wake_fn) (const ufo_desktop_op_t *op);     //  next time-based step
struct _ufo_desktop_op_t {
    ufo_desktop_t *desk;        //  NULL once the desktop is gone
    int refs;                   //  1 for the handle + 1 per call in flight
    bool done, cancelled, handle_gone;
    int pending;                //  D-Bus calls in flight
    int64_t started, deadline;
    int64_t wait_from_us;       //  an action: when it began to wait for the application's
                                //  effect (CLOCK_MONOTONIC us), 0 if it does not wait
    ufo_value_t *result;
    ufo_op_poll_fn poll;
    ufo_op_free_fn free_state;
    ufo_op_wake_fn wake;        //  NULL: nothing happens by time alone before the deadline
    void *state;
};

//  State of one control snapshot (ufo_desktop_walk.c, ufo_desktop_find.c).
typedef struct {
    int64_t xid;
    int wx, wy, ww, wh, pid;
    char *title;
    char *app_bus;
    int frames_left;
    GPtrArray *frames;          //  char* "bus path" keys of the app's windows
    GPtrArray *frame_names;
    bool want_tree;
    bool entered;                   //  the pointer moved in the window (profile "pointer_enter"):
                                    //  its extents are read once more at the end
    bool raw;                   //  controls before the naming rules, plus "captions"
    ufo_value_t *types;         //  control types offered
    int fetched;
    unsigned gen;
    bool uses_showing;
    char *tk_version;           //  the application's Application.Version (NULL: not read)
    bool walking;
    int rewalks;
    bool retry;                 //  waiting for another walk's replies
    int64_t calls0;             //  desk->calls when the snapshot started
    int64_t calls_pos0;         //  desk->calls when the position pass (entered) started, or -1
    bool enter_app;             //  the application has profile "pointer_enter"
    GPtrArray *probes;          //  the position pass's probe cells (ufo_desktop_nest.c)
    //  waiting for the application to appear on the accessibility bus (ufo_desktop_find.c)
    int64_t find_until;         //  ms: give up then (0: not started)
    int64_t find_tried;         //  ms: the last attempt started
    bool find_waiting;          //  an attempt failed: try again on an event or in a while
    uint64_t find_seq;          //  desk->event_seq when the attempt failed
    int find_attempts;
} ufo_dsnap_t;

typedef void (*ufo_reply_fn) (ufo_desktop_op_t *op, GVariant *reply, const char *error,
                              void *data);

//  ufo_desktop.c
int64_t ufo_desktop_now_ms_ (void);
ufo_desktop_op_t *ufo_desktop_op_new_ (ufo_desktop_t *desk, int timeout_ms);
void ufo_desktop_op_finish_ (ufo_desktop_op_t *op, bool success, const char *text,
                             const char *error_format, ...)
    __attribute__ ((format (printf, 4, 5)));
void ufo_desktop_call_ (ufo_desktop_op_t *op, const char *bus, const char *path,
                        const char *iface, const char *method, GVariant *params,
                        const char *reply_type, ufo_reply_fn fn, void *data);
bool ufo_desktop_x_window_info_ (ufo_desktop_t *desk, int64_t xid, int *x, int *y, int *w,
                                 int *h, char **title, int *pid);
int ufo_desktop_x_trap_begin_ (ufo_desktop_t *desk);
int ufo_desktop_x_trap_end_ (ufo_desktop_t *desk);
//  Detaches and frees the captures' shared memory segment, if any (at destroy).
void ufo_desktop_shm_free_ (ufo_desktop_t *desk);
ufo_dwin_t *ufo_desktop_win_ (ufo_desktop_t *desk, int64_t xid, bool create);
void ufo_desktop_win_forget_ (ufo_desktop_t *desk, int64_t xid);

//  The X window's title (_NET_WM_NAME, else WM_NAME; valid UTF-8, "" if none; caller frees)
//  and _NET_WM_PID (-1 if none), each one round trip.
char *ufo_desktop_x_title_ (ufo_desktop_t *desk, Window win);
int ufo_desktop_x_pid_ (ufo_desktop_t *desk, Window win);

//  ufo_desktop_win.c: what X says about a top-level window's kind (transient-for, dialog,
//  modal); two or three round trips. Call inside a trap.
void ufo_desktop_x_window_kind_ (ufo_desktop_t *desk, Window w, int64_t *transient_p,
                                 bool *dialog_p, bool *modal_p);

//  ufo_desktop_xwin.c: the root window's children followed through X events
#define UFO_DXWIN_TITLE 1
#define UFO_DXWIN_PID   2
#define UFO_DXWIN_CLASS 4
#define UFO_DXWIN_KIND  8
typedef struct {
    const XWindowAttributes *attr;  //  as XGetWindowAttributes would answer now
    bool viewable;
    int x, y;                   //  its inside's top-left on the root window
    char *title;                //  UFO_DXWIN_TITLE ("" if none)
    int pid;                    //  UFO_DXWIN_PID (-1 if none)
    bool has_class;             //  UFO_DXWIN_CLASS: XGetClassHint succeeded
    char *res_name, *res_class; //  (NULL if none)
    int64_t transient;          //  UFO_DXWIN_KIND
    bool dialog, modal;
} ufo_dxwin_info_t;
ufo_dxwin_t *ufo_desktop_xwin_new_ (ufo_desktop_t *desk);
void ufo_desktop_xwin_destroy_ (ufo_dxwin_t **self_p);
//  Applies the X events the connection holds (never waits). Returns how many.
int ufo_desktop_xwin_drain_ (ufo_desktop_t *desk);
//  What is known of root child xid with the UFO_DXWIN_* fields of want read (a round trip
//  each the first time and after X said they changed), after applying the pending events;
//  NULL when xid is not a child of the root window (the caller asks X). Valid until the next
//  call into the desktop.
const ufo_dxwin_info_t *ufo_desktop_xwin_get_ (ufo_desktop_t *desk, int64_t xid, unsigned want);
//  The same without applying pending events first: for the windows of one list, after one
//  ufo_desktop_xwin_get_ / _listable_ / _stack_ (a read from the socket each is saved).
const ufo_dxwin_info_t *ufo_desktop_xwin_peek_ (ufo_desktop_t *desk, int64_t xid, unsigned want);
//  True when the top-level windows are the root window's children (no window manager
//  publishes _NET_CLIENT_LIST), so that the list can come from ufo_desktop_xwin_stack_.
bool ufo_desktop_xwin_listable_ (ufo_desktop_t *desk);
//  The root window's children, bottom to top (as XQueryTree); *wins_p is the caller's (free).
size_t ufo_desktop_xwin_stack_ (ufo_desktop_t *desk, Window **wins_p);
//  The ancestor of window `win` among the root's children (a window manager frames windows;
//  at most 16 levels up), or win itself when it is one or when X cannot tell.
Window ufo_desktop_xwin_toplevel_ (ufo_desktop_t *desk, Window win);

//  ufo_desktop_node.c
void ufo_dnode_free_ (ufo_desktop_t *desk, ufo_dnode_t *node);
ufo_dnode_t *ufo_dnode_new_ (ufo_desktop_t *desk, const char *bus, const char *path,
                             ufo_dnode_t *parent);
uint64_t ufo_dnode_serial_ (ufo_dnode_t *node);
char *ufo_dnode_key_ (const char *bus, const char *path);      //  "bus path", g_free
bool ufo_dnode_leaf_ (const ufo_dnode_t *node);   //  inside not walked (an open menu button's is)
bool ufo_dnode_shut_ (const ufo_dnode_t *node);   //  a closed submenu (its items not read)

//  ufo_desktop_nest.c
//  The number of shown nodes under root (cached, read) whose extents stick out of those of
//  their nearest ancestor with extents, not counting what scrolls or pops up: positions read
//  while the application's were not settled (0 in a settled window).
int ufo_desktop_misnested_ (const ufo_dnode_t *root, bool uses_showing);
//  The position pass: every node under node has its extents read again by the next walk, but
//  of a huge container's cells only two probes (the first and the last), recorded in probes
//  (from ufo_desktop_probes_new_; NULL: every cell).
GPtrArray *ufo_desktop_probes_new_ (void);
void ufo_desktop_stale_extents_ (ufo_dnode_t *node, GPtrArray *probes);
//  After that walk: the other cells move by their probes' delta when both moved alike;
//  otherwise they are made stale and true is returned (walk again). Empties probes.
bool ufo_desktop_probes_apply_ (ufo_desktop_t *desk, GPtrArray *probes);
bool ufo_dnode_label_role_ (uint32_t role);
bool ufo_dnode_text_role_ (uint32_t role);
bool ufo_dnode_value_role_ (uint32_t role);
ufo_value_t *ufo_dnode_states_value_ (const ufo_dnode_t *node);    //  ["focused", ...]
ufo_value_t *ufo_dnode_excerpt_ (const char *text, int max);       //  UTF-8-safe, "..." if cut
ufo_value_t *ufo_dnode_clean_name_ (const char *name);             //  "2 2" -> "2" (GTK4)
void ufo_desktop_invalidate_ (ufo_desktop_t *desk, const char *bus, const char *path,
                              const char *member, const char *detail);
const char *ufo_desktop_control_type_ (const ufo_desktop_t *desk, const ufo_dnode_t *node);
bool ufo_dnode_hidden_ (const ufo_dnode_t *node, bool uses_showing);
bool ufo_dnode_has_state_ (const ufo_dnode_t *node, AtspiStateType state);

void ufo_desktop_walk_start_ (ufo_desktop_op_t *op, ufo_dwin_t *win);

//  ufo_desktop_scroll.c
//  The value of scroll bar `bar` (a cached node) changed: the area it scrolls has moved its
//  content without bounds events (GTK3, Qt); the cached extents inside the area are read
//  again by the next snapshot.
void ufo_desktop_scrolled_ (ufo_dnode_t *bar);
//  Item `item` (a cached node whose states were read before) was shown or hidden since: if
//  it is an item of a list, table or tree, the view scrolled and the extents of its
//  siblings are read again (Qt moves a view's items without bounds events and exposes no
//  scroll bar for it).
void ufo_desktop_item_shown_ (ufo_dnode_t *item);
//  Item `item` (a cached node) reported a focus or selection change: if it is an item of a
//  list, table or tree of an application that reports no scrolling (not UFO_DTK_EVENTS), the
//  states of its siblings are read again by the next snapshot, so that items shown or hidden
//  by a scroll are seen (ufo_desktop_item_shown_) also when the keys' effect came after the
//  snapshot that followed the action.
void ufo_desktop_item_current_ (ufo_desktop_t *desk, ufo_dnode_t *item);

//  ufo_desktop_rows.c (rows of lists; docs/DESKTOP.md "Rows of lists")
#define UFO_DESKTOP_NO_ROWS "no accessible rows"     //  the value of a view without rows
bool ufo_dnode_row_role_ (uint32_t role);   //  a list item, tree item, table row or cell
//  True for a view whose toolkit exposes no rows at all: a node without a role of its own,
//  named after a cell-renderer view class (GTK 4.8's GtkTreeView, GtkIconView). Offered as a
//  List (ufo_desktop_control_type_).
bool ufo_dnode_rowless_view_ (const ufo_dnode_t *node);
//  UFO_DESKTOP_NO_ROWS for a rowless view none of whose children is a row, else NULL.
const char *ufo_dnode_rows_note_ (const ufo_dnode_t *node);

//  ufo_desktop_label.c
void ufo_dlabel_free_ (void *label);
//  Gives each entry of fresh (labels 0) the label of the same control in the last snapshot,
//  or a new one; fresh (a reference is taken) becomes win->labels.
void ufo_desktop_labels_assign_ (ufo_dwin_t *win, GPtrArray *fresh);
//  The entry with this label ("12") in the window's latest snapshot, or NULL.
const ufo_dlabel_t *ufo_desktop_label_find_ (const ufo_dwin_t *win, const char *label);

//  ufo_desktop_find.c
void ufo_desktop_find_start_ (ufo_desktop_op_t *op);
bool ufo_desktop_find_poll_ (ufo_desktop_op_t *op);         //  true: a new attempt started
int64_t ufo_desktop_find_wake_ (const ufo_desktop_op_t *op);

//  ufo_desktop_sheet.c (spreadsheet actions: get_range_values, select_table_range, go_to_cell)
bool ufo_desktop_sheet_action_ (const char *function);
ufo_desktop_op_t *ufo_desktop_sheet_begin_ (ufo_desktop_t *desk, int64_t xid, const char *function,
                                            const ufo_value_t *args);

//  ufo_desktop_caret.c (caret_to_text, select_text: the caret or selection at a phrase)
bool ufo_desktop_caret_action_ (const char *function);
ufo_desktop_op_t *ufo_desktop_caret_begin_ (ufo_desktop_t *desk, int64_t xid, const char *label,
                                            const char *function, const ufo_value_t *args);

//  A rectangle as the results carry it: the list [left, top, right, bottom] of a box at
//  (x, y) of size w x h. Caller owns it.
ufo_value_t *ufo_desktop_rect_value_ (int64_t x, int64_t y, int64_t w, int64_t h);

//  ufo_desktop_input.c (XTest and key syntax)
int ufo_desktop_send_keys_ (ufo_desktop_t *desk, const ufo_value_t *events, ufo_error_t *err);
//  An input barrier for window xid: a _NET_WM_PING sent to its client after input we sent
//  with XTest. A toolkit answers a ping when its event loop reaches it, after the input
//  events queued before it (GTK takes one X event at a time, dispatching each before reading
//  the next; Qt and others keep the X order too), so the answer means the application has
//  taken that input. Returns the ping's serial, or 0 when the window does not list
//  _NET_WM_PING in WM_PROTOCOLS (no barrier possible). Every non-zero serial is ended with
//  ufo_desktop_ping_end_ once (answered or given up).
uint32_t ufo_desktop_ping_send_ (ufo_desktop_t *desk, int64_t xid);
//  True once the client answered ping `serial` (never blocks: reads what X has queued).
bool ufo_desktop_ping_answered_ (ufo_desktop_t *desk, uint32_t serial);
//  Ends ping `serial` (answered or not); 0 is ignored.
//  Called by the X queue's drain (ufo_desktop_xwin_drain_) for every event: records a ping
//  answer (a ClientMessage to the root window).
void ufo_desktop_ping_note_ (ufo_desktop_t *desk, const XEvent *ev);
void ufo_desktop_ping_end_ (ufo_desktop_t *desk, uint32_t serial);
//  Records the text of an object:text-changed:insert event (its params).
void ufo_desktop_inserted_ (ufo_desktop_t *desk, GVariant *params);
//  The text typed by the key events' last run of characters (after the last key that is not
//  a character, without Ctrl or Alt), at most its last 32 bytes; "" if none. Caller frees.
char *ufo_desktop_keys_tail_ (const ufo_value_t *events);
//  True if `text` was inserted (in one or several text-changed events) since the count of
//  inserted bytes was `mark` (desk->inserted_total then).
bool ufo_desktop_inserted_since_ (const ufo_desktop_t *desk, uint64_t mark, const char *text);
void ufo_desktop_pointer_move_ (ufo_desktop_t *desk, int x, int y);
void ufo_desktop_pointer_button_ (ufo_desktop_t *desk, int button, bool down);

#endif
