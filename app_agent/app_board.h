/*  app_board.h - the AppAgent's access to the session blackboard: through the process's one
    broker connection (common/bus/ufo_conn.h), or, without a broker (ufo-app --subtask
    without --broker), an in-process board (common/model/ufo_board.h) per session name.

    Writes do not wait: each is sent at once on the connection, in the order made (so a
    later read, and the task's completion, come after it at the broker), and its outcome
    arrives later from the loop; a failed write is logged and kept for app_board_take_errors.
    The step's board read (app_board_prompt_start) runs while the step observes the desktop,
    the resume read (app_board_snapshot_start) before the first step; app_board_snapshot, the
    one read that waits (serving the connection meanwhile), is left for tools and tests. */
#ifndef APP_BOARD_H_INCLUDED
#define APP_BOARD_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _app_board_t app_board_t;

typedef struct _ufo_conn_t ufo_conn_t;

//  Boards on the broker through conn (borrowed; it must outlive the board), or, with conn
//  NULL, kept in this process. Never NULL.
app_board_t *app_board_new (ufo_conn_t *conn);

//  Closes; sets *self_p to NULL. Safe with NULL.
void app_board_destroy (app_board_t **self_p);

//  True when the boards live in a broker.
bool app_board_remote (const app_board_t *self);

//  The board of session `board` in the original's dict shape {"questions": [...], ...}
//  (caller owns). Waits for the broker's reply (serving the connection meanwhile). Returns
//  NULL with err when the broker does not answer.
ufo_value_t *app_board_snapshot (app_board_t *self, const char *board, ufo_error_t *err);

//  Starts reading a board without waiting: fn(arg, board map or NULL, err) runs from the
//  loop once the reply is in (board map borrowed for the call). In-process boards: fn runs
//  before this returns. Returns an id for app_board_forget (0 in-process).
typedef void (app_board_read_fn) (void *arg, const ufo_value_t *board, const ufo_error_t *err);
uint64_t app_board_snapshot_start (app_board_t *self, const char *board, app_board_read_fn *fn, void *arg);

//  Forgets a read started with app_board_snapshot_start: its fn will not run.
void app_board_forget (app_board_t *self, uint64_t id);

//  Starts reading the blackboard prompt parts of a board (a mirror of it brought up to date,
//  screenshots' data URLs filled from the blob store); a read already running for the same
//  board is kept. In-process boards are ready at once.
void app_board_prompt_start (app_board_t *self, const char *board);

//  True when the read started for board has ended (or none was started: then take starts
//  one and waits for it).
bool app_board_prompt_ready (app_board_t *self, const char *board);

//  The prompt parts (ufo_board_to_prompt) of the read that ended, caller owns; NULL with
//  err when it failed. Waits (serving the connection) when the read has not ended yet.
ufo_value_t *app_board_prompt_take (app_board_t *self, const char *board, ufo_error_t *err);

//  Writes waiting for their outcome.
size_t app_board_pending (app_board_t *self);

//  The writes that failed since the last call (a list of texts, caller owns), or NULL when
//  none did.
ufo_value_t *app_board_take_errors (app_board_t *self);

//  Waits (serving the connection, bounded by timeout_ms) for the outcome of every write.
//  Returns 0, or -1 when some are still pending (they are reported as failed).
int app_board_flush (app_board_t *self, int timeout_ms);

//  Adds one item (a map; ownership of *item_p taken) to a memory of a board: at once
//  in-process, else sent without waiting (the outcome as above).
//  Returns 0, or -1 with err (a bad memory name in-process).
int app_board_add (app_board_t *self, const char *board, const char *memory,
                   ufo_value_t **item_p, ufo_error_t *err);

//  Stores a screenshot: with a broker, the PNG bytes as a blob and an item {"metadata",
//  "image_path", "blob", "mime"} (both sent without waiting; the blob's name is its SHA-256,
//  computed here); in-process, {"metadata", "image_path", "image_str"} with a data URL.
//  Returns 0, or -1 with err.
int app_board_add_screenshot (app_board_t *self, const char *board, const char *image_path,
                              const void *png, size_t len, const ufo_value_t *metadata,
                              ufo_error_t *err);

//  Appends "data:<mime>;base64,..." of data[0..len) to a new string (caller frees).
char *app_data_url (const char *mime, const void *data, size_t len);

#endif
