/*  ufo_experience.h - experience records: what a finished session did, summarised (by the
    model, with the summariser prompt prompts/experience/), kept on the broker so that every
    host shares them, and retrieved by request text for the agents' prompts (RAG_EXPERIENCE).

    A record is a map:
      {"request": str, "applications": [str], "subtasks": [{"subtask": str, "application": str,
       "steps": [{"control": str, "action": str, "args": map}]}], "tips": [str] (optional)}
    plus what the saver adds: "session", "device", "saved_at", "evaluation".
    Steps name controls by their names (ControlText), never by a step's label.

    Storage: each record is one board "experience:<id>" on the broker (memory "requests", one
    item {"experience": record}); it lives until `ufo knowledge delete` (bb.delete). Only the
    existing blackboard requests are used (bb.add, bb.list, bb.snapshot, bb.delete).

    Demonstrations (`ufo record`, imported plans; RAG_DEMONSTRATION) are records of the same
    shape of kind "demonstration", on boards "demonstration:<id>". Every function that
    touches the broker or the index takes the kind: "experience" or "demonstration". */
#ifndef UFO_EXPERIENCE_H_INCLUDED
#define UFO_EXPERIENCE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_bb_client.h"
#include "ufo_error.h"
#include "ufo_kb.h"
#include "ufo_value.h"

#define UFO_EXPERIENCE_PREFIX "experience:"
#define UFO_DEMONSTRATION_PREFIX "demonstration:"

//  Checks a record's shape (above). Returns 0, or -1 with err naming the first bad field.
int ufo_experience_check (const ufo_value_t *record, ufo_error_t *err);

//  The record as text for the index and the prompt: the request, then one line per subtask
//  with its steps ("click_input on \"Save\""). Caller frees.
char *ufo_experience_text (const ufo_value_t *record);

//  The steps of a session's blackboard (the map of board_get / bb.snapshot "board") for the
//  summariser: a new list of {"subtask", "application", "control", "action", "args"} from the
//  trajectories that did something, in order; control is the control's name.
ufo_value_t *ufo_experience_trajectory (const ufo_value_t *board);

//  --- Requests and replies: the blackboard calls as bodies to send and replies to read,
//  for callers that make the calls themselves (ufo-host, asynchronously on its ufo_conn);
//  the blocking functions below are built on them.

#define UFO_EXPERIENCE_BOARD_MAX 96

//  The board name of record id of kind into board. Returns 0, or -1 with err (unknown
//  kind, or id not 1..63 bytes of [A-Za-z0-9_-]).
int ufo_experience_board (const char *kind, const char *id, char board [UFO_EXPERIENCE_BOARD_MAX],
                          ufo_error_t *err);

//  The bb.add body that stores a record (checked first; ownership of *record_p taken) as a
//  new board; id_out (at least 64 bytes) receives its id. NULL with err.
ufo_value_t *ufo_experience_save_request (const char *kind, ufo_value_t **record_p, char *id_out,
                                          ufo_error_t *err);

//  The bb.snapshot body that reads record id of kind. NULL with err.
ufo_value_t *ufo_experience_get_request (const char *kind, const char *id, ufo_error_t *err);

//  The record (a new map with "id" added) in the bb.snapshot reply of get_request, or NULL
//  with err: UFO_E_NOT_FOUND when the board does not exist, else the record's bad shape.
ufo_value_t *ufo_experience_get_reply (const ufo_value_t *reply, const char *kind, const char *id,
                                       ufo_error_t *err);

//  The boards of kind in a bb.list reply: a new list of {"id", "last"}, in the reply's order
//  (empty for an unknown kind).
ufo_value_t *ufo_experience_boards (const ufo_value_t *list_reply, const char *kind);

//  Whether a failed read means the broker is not answering (timeout, connection lost,
//  cancelled: give up) rather than one bad record (skip it).
bool ufo_experience_fatal (const ufo_error_t *err);

//  Bringing the index in step with the broker, in two halves around the reads:
//  sync_wanted: the ids (a new list of strings) of boards (ufo_experience_boards) whose
//  record the index does not hold at that "last": the records to read.
ufo_value_t *ufo_experience_sync_wanted (ufo_kb_t *kb, const ufo_value_t *boards);

//  sync_apply: indexes records (a map id -> record as read for the wanted ids; a wanted id
//  missing from it was skipped) by request and steps, and removes the passages of kind whose
//  board is gone or whose record was skipped. Returns the number of records indexed, or -1
//  with err (the index keeps what it had).
int ufo_experience_sync_apply (ufo_kb_t *kb, const char *kind, const ufo_value_t *boards,
                               const ufo_value_t *records, ufo_error_t *err);

//  --- Blocking calls (the CLI tools) ----------------------------------------------------

//  Stores a record (checked first; ownership of *record_p taken) as a new board. id_out
//  (at least 64 bytes) receives its id. Returns 0, or -1 with err.
int ufo_experience_save (ufo_bb_client_t *bb, const char *kind, ufo_value_t **record_p,
                         char *id_out, ufo_error_t *err);

//  Every record on the broker: a new list of {"id", "record", "last"} in bb.list's order; a
//  board whose record has a bad shape is skipped with a log line. NULL with err when the
//  broker does not answer.
ufo_value_t *ufo_experience_list (ufo_bb_client_t *bb, const char *kind, ufo_error_t *err);

//  One record by id (caller owns), or NULL with err (UFO_E_NOT_FOUND when there is none).
ufo_value_t *ufo_experience_get (ufo_bb_client_t *bb, const char *kind, const char *id,
                                 ufo_error_t *err);

//  Deletes a record. Returns 0, or -1 with err (UFO_E_NOT_FOUND when there is none).
int ufo_experience_delete (ufo_bb_client_t *bb, const char *kind, const char *id,
                           ufo_error_t *err);

//  The top topk records for query from the index (after a sync): a new list of records,
//  each with "id" added; empty when none. max_text bounds the JSON text of each record:
//  a longer one loses steps from the end.
ufo_value_t *ufo_experience_retrieve (ufo_kb_t *kb, const char *kind, const char *query,
                                      size_t topk, size_t max_text);

#endif
