/*  ufo_board.h - the blackboard shared by the agents of a session (the original's Blackboard).

    Four memories: questions, requests, trajectories, screenshots. The JSON / map shape is the
    original's: {"questions": [...], "requests": [...], "trajectories": [...],
    "screenshots": [...]}, each a list of objects. ufo_board_to_prompt produces the same
    content parts as the original's blackboard_to_prompt, byte for byte.
    Not thread-safe. */
#ifndef UFO_BOARD_H_INCLUDED
#define UFO_BOARD_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_memory.h"
#include "ufo_value.h"

typedef struct _ufo_board_t ufo_board_t;

typedef enum {
    UFO_MEM_QUESTIONS = 0,
    UFO_MEM_REQUESTS = 1,
    UFO_MEM_TRAJECTORIES = 2,
    UFO_MEM_SCREENSHOTS = 3,
    UFO_MEM_COUNT = 4
} ufo_mem_kind_t;

//  "questions", "requests", "trajectories", "screenshots"; NULL for anything else.
const char *ufo_board_memory_name (int which);
//  The kind named by name, or -1.
int ufo_board_memory_parse (const char *name);

//  Creates an empty board (never NULL).
ufo_board_t *ufo_board_new (void);

//  Destroys the board and all its items; sets *self_p to NULL. Safe with NULL or *NULL.
void ufo_board_destroy (ufo_board_t **self_p);

//  The memory of a kind (borrowed; use the ufo_memory_* functions on it, e.g. set_cap).
//  which must be a ufo_mem_kind_t below UFO_MEM_COUNT (asserted).
ufo_memory_t *ufo_board_memory (ufo_board_t *self, int which);

//  Adds an item to a memory, taking ownership of *item_p (set to NULL). Returns it (borrowed).
ufo_item_t *ufo_board_add (ufo_board_t *self, int which, ufo_item_t **item_p);

//  add_data: a map becomes an item with its pairs (copied); a string s becomes {"text": s}.
//  Returns 0, or -1 with err (UFO_E_TYPE) for any other value (nothing added).
int ufo_board_add_data (ufo_board_t *self, int which, const ufo_value_t *data, ufo_error_t *err);

//  Same as ufo_board_add_data but takes ownership of *data_p (set to NULL, also on error);
//  a map is adopted without copying.
int ufo_board_add_data_take (ufo_board_t *self, int which, ufo_value_t **data_p, ufo_error_t *err);

//  Adds {"text": text} to a memory.
void ufo_board_add_text (ufo_board_t *self, int which, const char *text);

//  add_image: adds to screenshots an item {"metadata": <copy of metadata, null if NULL>,
//  "image_path": path, "image_str": "data:<mime>;base64,<file bytes>"}. The mime type comes
//  from the extension (png, jpg/jpeg, gif, bmp, webp, any case; otherwise image/png). A
//  missing file logs the warning "Screenshot path <path> does not exist." (an unreadable one
//  "Screenshot path <path> cannot be read: <reason>") and stores image_str "". Files over
//  256 MB count as unreadable.
void ufo_board_add_image (ufo_board_t *self, const char *path, const ufo_value_t *metadata);

//  The mime type add_image gives a file: from the extension of its last path component
//  (png, jpg/jpeg, gif, bmp, webp, any case), otherwise (or for NULL) "image/png".
const char *ufo_board_image_mime (const char *path);

//  Returns {"questions": [...], ...} as a new map owned by the caller (blackboard_to_dict).
//  The map and its four lists are new; the item maps in them are the items' own, shared and
//  read-only (ufo_item_to_map: no copy, like the original's to_dict, which shares the
//  values). ufo_value_dup the result for a tree you can change throughout. Threads: the
//  result shares the items' maps by a non-atomic count, so it counts as part of the board:
//  use and destroy it on the thread that owns the board, or ufo_value_dup it for another.
ufo_value_t *ufo_board_to_map (ufo_board_t *self);

//  Replaces each memory from the list under its name; a missing name empties that memory
//  (blackboard_from_dict). Other keys are ignored. Returns 0, or -1 with err (UFO_E_TYPE,
//  naming the key and index) if map is not a map or a present list is not a list of maps;
//  the board is then unchanged.
int ufo_board_from_map (ufo_board_t *self, const ufo_value_t *map, ufo_error_t *err);

//  JSON of ufo_board_to_map, Python json.dumps() form: a new string the caller frees.
char *ufo_board_to_json (ufo_board_t *self, size_t *len_p);

//  Replaces the board from JSON text (same rules as ufo_board_from_map). Returns 0, or -1
//  with err on bad JSON or a wrong shape (board unchanged). NaN / Infinity accepted.
int ufo_board_from_json (ufo_board_t *self, const char *text, size_t len, ufo_error_t *err);

//  The prompt content parts (blackboard_to_prompt), a new list owned by the caller:
//    {"type": "text", "text": "[Blackboard:]"},
//    {"type": "text", "text": "[Questions & Answers:]\n " + json(questions)},
//    {"type": "text", "text": "[Request History:]\n " + json(requests)},
//    {"type": "text", "text": "[Step Trajectories Completed Previously:]\n " + json(trajectories)},
//    then per screenshot {"type": "text", "text": json(metadata, "" if absent)} and
//    {"type": "image_url", "image_url": {"url": image_str, "" if absent}}.
//  json() is Python's json.dumps(); the item texts are cached (see ufo_memory.h).
ufo_value_t *ufo_board_to_prompt (ufo_board_t *self);

//  load_questions: reads the JSON-lines file at path and adds to questions each of the last
//  last_k lines (last_k <= 0: all lines, as the original's lines[-0:] and -1), stripped of
//  whitespace and parsed as JSON: an object is added as an item, a string s as {"text": s},
//  other values are ignored (as the original's add_data). A line that does not parse is
//  skipped with the warning "Unable to parse line as JSON: <line>". A missing file adds
//  nothing. Lines end at \n, \r\n or \r; stripping removes what Python's str.strip()
//  does (including Unicode spaces). Returns the number of items added, or -1 with err
//  (UFO_E_IO; UFO_E_TOO_LARGE over 256 MB) if the file exists but cannot be read.
int ufo_board_load_questions (ufo_board_t *self, const char *path, int64_t last_k, ufo_error_t *err);

//  Same as ufo_board_load_questions on the bytes text[0..len) instead of a file.
//  Returns the number of items added.
size_t ufo_board_load_questions_text (ufo_board_t *self, const char *text, size_t len,
                                      int64_t last_k);

//  Empties every memory.
void ufo_board_clear (ufo_board_t *self);

//  True when all four memories are empty.
bool ufo_board_is_empty (ufo_board_t *self);

#endif
