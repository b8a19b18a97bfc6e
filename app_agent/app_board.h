/*  app_board.h - the AppAgent's access to the session blackboard: through the blackboard
    broker (common/bus/ufo_bb_client.h), or, without a broker (ufo-app --subtask without
    --broker), an in-process board (common/model/ufo_board.h) per session name.

    Calls to the broker wait for their reply (bounded by a timeout); a dispatched ufo-app
    keeps its heartbeats in the worker's own thread meanwhile. */
#ifndef APP_BOARD_H_INCLUDED
#define APP_BOARD_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _app_board_t app_board_t;

//  Connects to the broker at endpoint (cmd socket), or, with endpoint NULL, keeps boards in
//  this process. Returns NULL with err on a malformed endpoint.
app_board_t *app_board_new (const char *endpoint, ufo_error_t *err);

//  Closes; sets *self_p to NULL. Safe with NULL.
void app_board_destroy (app_board_t **self_p);

//  True when the boards live in a broker.
bool app_board_remote (const app_board_t *self);

//  The board of session `board` in the original's dict shape {"questions": [...], ...}
//  (caller owns). Returns NULL with err when the broker does not answer.
ufo_value_t *app_board_snapshot (app_board_t *self, const char *board, ufo_error_t *err);

//  The blackboard prompt parts of a board (ufo_board_to_prompt), screenshot data URLs
//  filled from the blob store. The trajectory items of the asking subtask (Round = round,
//  SubtaskIndex = subtask_index) are left out of "[Step Trajectories Completed
//  Previously:]": the agent's step history shows them (pass -1 to keep every item).
//  Caller owns. NULL with err.
ufo_value_t *app_board_prompt (app_board_t *self, const char *board, int64_t round,
                               int64_t subtask_index, ufo_error_t *err);

//  Adds one item (a map; ownership of *item_p taken) to a memory of a board.
//  Returns 0, or -1 with err.
int app_board_add (app_board_t *self, const char *board, const char *memory,
                   ufo_value_t **item_p, ufo_error_t *err);

//  Stores a screenshot: with a broker, the PNG bytes as a blob and an item {"metadata",
//  "image_path", "blob", "mime"}; in-process, {"metadata", "image_path", "image_str"} with a
//  data URL. Returns 0, or -1 with err.
int app_board_add_screenshot (app_board_t *self, const char *board, const char *image_path,
                              const void *png, size_t len, const ufo_value_t *metadata,
                              ufo_error_t *err);

//  Appends "data:<mime>;base64,..." of data[0..len) to a new string (caller frees).
char *app_data_url (const char *mime, const void *data, size_t len);

#endif
