/*  ufo_desktop.h - the Linux desktop: windows, controls, screenshots and actions.

    What the original UFO does with Windows UI Automation, ufobus does with AT-SPI (spoken
    directly over D-Bus, asynchronously) and X11. This is the only header the rest of the
    code needs: no AT-SPI, GLib, X11, cairo or libpng type appears here. docs/DESKTOP.md
    explains the control types, the key syntax and the caching.

    Event loop. Everything slow (a D-Bus walk of a window, an action waiting for its effect,
    `wait`) is an operation (ufo_desktop_op_t) that advances while the owner calls
    ufo_desktop_pump() from its own loop; nothing here blocks for long unless the caller
    asks for it with ufo_desktop_op_run(). AT-SPI events that keep the control cache fresh
    are also delivered by ufo_desktop_pump(), so call it regularly (every few ms while an
    operation is pending, at least every ~100 ms otherwise).

    Results. Operations end with a map {"success": bool, "error": string, "text": string,
    ...more fields per operation}; they never crash on a vanished window or a stale label,
    they report it. Windows are named by their X window id (int64 "xid"); controls by the
    label ("1", "2", ...) of the latest snapshot of that window. */
#ifndef UFO_DESKTOP_H_INCLUDED
#define UFO_DESKTOP_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_desktop_t ufo_desktop_t;
typedef struct _ufo_desktop_op_t ufo_desktop_op_t;
typedef struct _ufo_image_t ufo_image_t;

//  Opens the desktop: the X display and the AT-SPI bus of the session. Use it from the
//  calling thread only (its GLib context stays acquired by that thread). options (may be NULL):
//    "display"            string, X display name (default: $DISPLAY)
//    "launchers"          map name -> list of argv strings (the config key desktop.launchers)
//    "action_timeout_ms"  int, how long an action waits for its effect (default 3000)
//    "settle_ms"          int, quiet time after the last event that ends an action (default 60)
//    "text_excerpt"       int, characters of text shown per control (default 120)
//    "control_list"       list of control type names offered (default: CONTROL_LIST)
//  Returns NULL with err when the display or the accessibility bus cannot be reached.
ufo_desktop_t *ufo_desktop_new (const ufo_value_t *options, ufo_error_t *err);

//  Closes everything; pending operations are cancelled (their handles stay valid until
//  destroyed). Sets *self_p to NULL. Safe with NULL.
void ufo_desktop_destroy (ufo_desktop_t **self_p);

//  Dispatches whatever is ready (D-Bus replies, AT-SPI events, timers, child exits)
//  without blocking. Returns the number of dispatched sources.
int ufo_desktop_pump (ufo_desktop_t *self);

//  A file descriptor that becomes readable when something is ready to dispatch, for
//  loops that poll (zloop, epoll): when it is readable, call ufo_desktop_pump. -1 if the
//  platform gives none (then call ufo_desktop_pump on a timer). Owned by the desktop.
int ufo_desktop_fd (ufo_desktop_t *self);

//  The X connection's file descriptor (-1 once the display is gone), for loops that poll:
//  when it is readable, call ufo_desktop_pump, which applies the X events that keep the
//  window list current (ufo_desktop_pump also does so when called for any other reason).
int ufo_desktop_x_fd (ufo_desktop_t *self);

//  Waits up to timeout_ms for something to dispatch, then dispatches it. For callers that
//  own no other loop (tests, tools, ufo_desktop_op_run). Returns dispatched sources.
int ufo_desktop_iterate (ufo_desktop_t *self, int timeout_ms);

//  --- Operations -------------------------------------------------------------------------
//  True when the operation has finished (it is advanced by ufo_desktop_pump / iterate).
bool ufo_desktop_op_done (ufo_desktop_op_t *op);

//  Monotonic time (ms, CLOCK_MONOTONIC) by which the operation will have ended at the
//  latest; a caller that sleeps in its own loop should wake by then (wait, drag).
int64_t ufo_desktop_op_deadline (const ufo_desktop_op_t *op);

//  Monotonic time (ms) by which the caller should call ufo_desktop_op_done again even if the
//  desktop's fd stayed silent: parts of an operation advance with time alone (the quiet
//  period that ends an effect wait, text polling, a drag's motion, `wait`). <= the deadline.
int64_t ufo_desktop_op_wake (const ufo_desktop_op_t *op);

//  Takes the result map of a finished operation (caller owns it). NULL if not finished.
ufo_value_t *ufo_desktop_op_take_result (ufo_desktop_op_t *op);

//  Destroys an operation, cancelling it if it is still running. Sets *op_p to NULL.
void ufo_desktop_op_destroy (ufo_desktop_op_t **op_p);

//  Blocking convenience: iterates until the operation ends, destroys it and returns its
//  result (never NULL). Takes ownership of *op_p.
ufo_value_t *ufo_desktop_op_run (ufo_desktop_t *self, ufo_desktop_op_t **op_p);

//  --- Seeing -----------------------------------------------------------------------------
//  Lists the top-level application windows (X only, fast, synchronous). Returns a list of
//  maps {"label": "1".., "name": application, "pid": int, "xid": int, "title": string,
//  "rect": [left, top, right, bottom] on screen, "active": bool}. NULL with err on failure.
ufo_value_t *ufo_desktop_windows (ufo_desktop_t *self, ufo_error_t *err);

//  Starts a control snapshot of window xid. options (may be NULL): "control_list" (list of
//  type names, overrides the default), "tree" (bool: also return the full visible tree as
//  "tree", for SAVE_UI_TREE). The result has "controls": a list of maps {"label",
//  "control_type", "control_text", "control_rect": [l, t, r, b], "actions": [..],
//  "value": string, "states": [..]} numbered in tree order (depth first, as the toolkit lists
//  them), plus "window" (xid, title, pid, rect), "nodes" (nodes in the visible tree),
//  "fetched" (nodes whose role/states were re-read), "calls" (D-Bus calls made), "rewalks"
//  (passes repeated because events arrived meanwhile, or positions were read again),
//  "position_calls" (calls of the position pass, profile "pointer_enter"), "misnested"
//  (shown nodes outside their container: positions not settled; 0 normally).
//  Unchanged parts come from the cache kept up to date by AT-SPI events.
//  The labels become the current labels of the window for ufo_desktop_act_begin.
ufo_desktop_op_t *ufo_desktop_controls_begin (ufo_desktop_t *self, int64_t xid,
                                              const ufo_value_t *options);

//  Forgets every cached node (the next snapshot reads everything again) and which windows the
//  pointer was moved into (profile "pointer_enter"): every window is new again.
void ufo_desktop_cache_clear (ufo_desktop_t *self);

//  --- Acting -----------------------------------------------------------------------------
//  Starts one of the original's actions on window xid: click_input, click_on_coordinates,
//  drag_on_coordinates, set_edit_text, keyboard_input, wheel_mouse_input, texts, summary,
//  annotation, wait (arguments as in UFO; see docs/DESKTOP.md). label names the control
//  (from the latest snapshot) for the actions that need one; may be NULL otherwise.
//  args may be NULL. The result: {"success", "error", "text"} (+ "control_labels" for
//  annotation; + "wait_s", seconds spent waiting for the application's effect once the action
//  was sent, for an action that waits). Never NULL; bad arguments end the operation at once with an error.
ufo_desktop_op_t *ufo_desktop_act_begin (ufo_desktop_t *self, int64_t xid, const char *label,
                                         const char *function, const ufo_value_t *args);

//  Raises window xid and gives it the keyboard focus (works without a window manager); a
//  window that no normal window covers is not raised, and the popups (override-redirect
//  windows) above it stay above it.
//  Returns 0, or -1 with err (e.g. the window is gone).
int ufo_desktop_focus (ufo_desktop_t *self, int64_t xid, ufo_error_t *err);

//  Moves and resizes window xid (screen coordinates; works without a window manager). The
//  application applies the size asynchronously: ufo_desktop_windows shows when it has.
//  Returns 0, or -1 with err.
int ufo_desktop_move_resize (ufo_desktop_t *self, int64_t xid, int x, int y, int width, int height,
                             ufo_error_t *err);

//  Launches the allow-listed launcher `name` (argv from the "launchers" option, no shell).
//  Returns the pid, or -1 with err (UFO_E_DENIED for a name not in the list).
int ufo_desktop_launch (ufo_desktop_t *self, const char *name, ufo_error_t *err);

//  Starts closing the application of window xid: asks politely (WM_DELETE_WINDOW), and if
//  the window is still there after the timeout and its process was launched by us, sends
//  SIGTERM. Result {"success", "error", "text"}.
ufo_desktop_op_t *ufo_desktop_close_begin (ufo_desktop_t *self, int64_t xid);

//  --- Images -----------------------------------------------------------------------------
//  Captures window xid (its own pixels, also when covered by other windows) or the whole
//  screen. Returns an image owned by the caller, or NULL with err.
ufo_image_t *ufo_desktop_capture_window (ufo_desktop_t *self, int64_t xid, ufo_error_t *err);
ufo_image_t *ufo_desktop_capture_screen (ufo_desktop_t *self, ufo_error_t *err);

//  Destroys an image. Sets *self_p to NULL. Safe with NULL.
void ufo_image_destroy (ufo_image_t **self_p);

//  Size in pixels, and the screen position of the top-left pixel.
int ufo_image_width (const ufo_image_t *self);
int ufo_image_height (const ufo_image_t *self);
int ufo_image_origin_x (const ufo_image_t *self);
int ufo_image_origin_y (const ufo_image_t *self);

//  The pixel at (x, y) as 0xRRGGBB; 0 outside the image.
uint32_t ufo_image_pixel (const ufo_image_t *self, int x, int y);

//  A copy with a numbered box on every control of `controls` (a list as returned in
//  "controls"; screen rectangles) that lies in the image, coloured per control type.
//  If marks_p is not NULL it receives a list of {"label", "control_type", "box": [x, y, w, h]
//  in image pixels, "color": 0xRRGGBB}, one per drawn mark. Returns a new image.
ufo_image_t *ufo_image_annotate (const ufo_image_t *self, const ufo_value_t *controls,
                                 ufo_value_t **marks_p);

//  A copy with one control highlighted (its "control_rect"), for the selected control.
ufo_image_t *ufo_image_highlight (const ufo_image_t *self, const ufo_value_t *control);

//  The two images side by side (a left, b right), for CONCAT_SCREENSHOT.
ufo_image_t *ufo_image_concat (const ufo_image_t *a, const ufo_image_t *b);

//  Encodes as PNG with zlib level 0..9 (1 is fast and small enough for screenshots).
//  save writes the file (atomically: temp + rename); encode returns bytes (caller frees).
//  Return 0, or -1 with err.
int ufo_image_save_png (const ufo_image_t *self, const char *path, int level, ufo_error_t *err);
int ufo_image_encode_png (const ufo_image_t *self, int level, void **data_p, size_t *size_p,
                          ufo_error_t *err);

//  --- Names and prompt lines (pure functions on snapshot values; docs/DESKTOP.md "Names") ---
//  Gives every control of `controls` (a snapshot's list, modified in place) its best name in
//  "control_text": the accessible name; else the text of its labelled-by target ("labelled_by");
//  else, for fields (Edit, ComboBox, Spinner, CheckBox, RadioButton, Document), the caption
//  beside or above it, taken from `captions` (list of {"text", "rect": [l, t, r, b], optional
//  "scope": [ancestor ids], "notice": true}; each caption names at most one field, the
//  closest; a "notice" - text of an info bar, alert or notification - names none, nor does a
//  caption whose scope shares no id with the field's "scope"); else its description/tooltip
//  ("description"); else what it shows ("content": the labels inside an unnamed button);
//  else "(unnamed, top right)" (where it is in `window_rect` [l, t, r, b]). A field's own
//  name equal to its "container" (Qt names a field in a group box after the box) comes
//  after the caption; an Edit with "in_combo" (an editable combo box's entry) takes the name
//  of the ComboBox listed just before it and no caption.
//  Toolkit class names ("GtkButton") never count as names. Controls of one type with the same
//  name get " (in CONTAINER)" (their "container": nearest named ancestor) when that tells
//  them apart, else " (1)", " (2)" in list order. The helper fields "labelled_by",
//  "container", "description", "scope", "content" and "in_combo" are removed. A controls
//  value that is not a list is ignored.
void ufo_desktop_name_controls (ufo_value_t *controls, const ufo_value_t *captions,
                                const ufo_value_t *window_rect);

//  True if name is a toolkit class name ("GtkButton", "GtkImage", "AdwHeaderBar",
//  "QPushButton") rather than a name a person gave the control.
bool ufo_desktop_class_name (const char *name);

//  True if name has the shape of a type name, as GTK4 names a widget that has no name
//  ("EditorSourceView", "ClocksWindow"): one identifier, capitalised, with a capital inside
//  after a lower-case letter or digit. The snapshot applies it to GTK4 applications only
//  ("GitHub" has that shape too).
bool ufo_desktop_type_name (const char *name);

//  The variables of one control's line in the AppAgent prompt: a new map {"label", "type",
//  "name" (on one line, at most ~120 bytes), "value" (the value excerpt on one line, at most
//  ~80 bytes, "" when it only repeats the name, blanks around either aside), "states" (the states that matter, comma-separated: disabled, focused, checked,
//  selected, pressed, expanded, editable, indeterminate)}. Caller owns the result.
ufo_value_t *ufo_desktop_control_prompt (const ufo_value_t *control);

//  --- Application profiles (ufo_desktop_profile.c; docs/DESKTOP.md "Application profiles") ---
//  All profiles: a map application name -> {"names": [...], "env": {...}, "launchers":
//  {name: argv}, "files": {path: content}}. Parsed on first use; owned by the module.
const ufo_value_t *ufo_desktop_profiles (void);

//  The profile (application name) that `name` belongs to - a launcher, process, path,
//  WM_CLASS or accessibility name, case-insensitive: "Navigator" and "firefox" give
//  "firefox-esr", "soffice" and "libreoffice-calc" give "libreoffice". NULL if none.
const char *ufo_desktop_profile_of (const char *name);

//  The name a user knows: the profile's application name, else name itself ("" for NULL).
const char *ufo_desktop_app_name (const char *name);

//  True if a and b name the same application (after ufo_desktop_app_name).
bool ufo_desktop_same_app (const char *a, const char *b);

//  text with "$PROFILE" replaced by the application's private profile directory
//  ($XDG_CONFIG_HOME/ufobus-profiles/APP). Caller frees.
char *ufo_desktop_profile_expand (const char *app, const char *text);

//  The boolean `key` of application app's profile ("pointer_enter"); false when the app has
//  no profile or the profile does not say.
bool ufo_desktop_profile_flag (const char *app, const char *key);

//  Creates the private profile directory of app and writes its profile's "files" that do not
//  exist yet (start-up dialogs switched off). 0, or -1 with err. Nothing for an unknown app.
int ufo_desktop_profile_prepare (const char *app, ufo_error_t *err);

//  Names controls that an application's accessibility leaves unnamed, from its profile's
//  "controls" rules {"type", "in" (the control's "container"), "name"}: the first control of
//  `controls` (a snapshot's list before the naming rules) of that type in that container
//  with neither name nor "labelled_by" gets "labelled_by" = name (LibreOffice's Name Box).
//  Nothing for an unknown app (NULL) or a value that is not a list.
void ufo_desktop_profile_name_controls (const char *app, ufo_value_t *controls);

//  --- Huge and virtual containers (pure; exposed for tests; docs/DESKTOP.md) -------------
//  True if a container reporting child_count children is not to be enumerated (GetChildren):
//  more than bound, or a negative count (AT-SPI's int32 overflowed).
bool ufo_desktop_huge_container (int child_count, int bound);

//  The rows and columns of a huge table (or list: ncols <= 1) a snapshot reads: from the first
//  visible cell (first_row, first_col) to the last (last_row, last_col), as found at the
//  corners of the visible area (-1: unknown), clamped to nrows x ncols (-1: unknown) and to
//  max_cells cells, whole visible rows first. row1 < row0 means nothing to read.
typedef struct { int row0, row1, col0, col1; } ufo_desktop_range_t;
ufo_desktop_range_t ufo_desktop_visible_range (int nrows, int ncols, int first_row, int first_col,
                                               int last_row, int last_col, int max_cells);

//  A cell ("B2", "$B$2", "b2") or range ("A1:C3") in A1 style: rows and columns 0-based into
//  *out, corners ordered (row0 <= row1, col0 <= col1). nrows / ncols (> 0) bound the sheet.
//  Returns 0, or -1 with err saying what was wrong (not A1 style; outside the sheet).
int ufo_desktop_cell_range_parse (const char *text, int nrows, int ncols, ufo_desktop_range_t *out,
                                  ufo_error_t *err);

//  What every cell of a huge table is, learnt from sample cells (the corners of its visible
//  part): their role and interface bits. A cell's role and interfaces are then not asked of
//  each cell, while the samples agreed and no cell contradicted them since.
#define UFO_DESKTOP_KIND_SAMPLES 2
typedef struct {
    uint32_t role [UFO_DESKTOP_KIND_SAMPLES], ifaces [UFO_DESKTOP_KIND_SAMPLES];
    unsigned got;               //  bit 2 * sample: role answered, + 1: interfaces answered
    bool mixed;                 //  a cell contradicted them: ask every cell (kept over reads)
} ufo_desktop_cell_kind_t;

//  Starts a new sampling of kind (what a contradiction taught is kept).
void ufo_desktop_cell_kind_reset (ufo_desktop_cell_kind_t *kind);
//  Notes sample (0..UFO_DESKTOP_KIND_SAMPLES-1)'s role (ifaces false) or interface bits (ifaces
//  true). An out-of-range sample is ignored.
void ufo_desktop_cell_kind_note (ufo_desktop_cell_kind_t *kind, int sample, bool ifaces,
                                 uint32_t value);
//  True, with *role and *ifaces (either may be NULL), when every sample answered both, all
//  alike, with a role (not 0, "invalid"), and no cell contradicted them.
bool ufo_desktop_cell_kind_uniform (const ufo_desktop_cell_kind_t *kind, uint32_t *role,
                                    uint32_t *ifaces);
//  A cell whose role or interfaces were assumed answered otherwise (a call on an assumed
//  interface failed): from now on every cell is asked.
void ufo_desktop_cell_kind_contradict (ufo_desktop_cell_kind_t *kind);

//  The A1-style name of a cell (0-based row and column): (0, 0) "A1", (38, 12) "M39".
//  buf must hold at least 16 bytes; returns buf.
char *ufo_desktop_cell_name (int row, int col, char *buf, size_t size);

//  --- Keys (exposed for tests and documentation) ----------------------------------------
//  Parses pywinauto key syntax ("^a{DELETE}Hello{ENTER}", "%f", "+{TAB}", "{VK_F5 3}") into a
//  list of {"keysym": int, "down": bool} events. Returns NULL with err on a syntax error.
ufo_value_t *ufo_desktop_keys_parse (const char *keys, ufo_error_t *err);

#endif
