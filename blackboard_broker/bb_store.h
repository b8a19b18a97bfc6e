/*  bb_store.h - the broker's in-memory boards: named boards, each with the four memories of
    the original (questions, requests, trajectories, screenshots), every item tagged with the
    global sequence number of the change that added it.

    Items are kept as the msgpack bytes they arrived in (checked by the request decoder, never
    decoded on the write path): the items of one add share one allocation, counted by
    reference, so a write costs one allocation per batch, not per field, and a snapshot reply
    copies bytes. Not thread-safe (the broker's event loop owns it; a forked child
    may read it to write a snapshot). */
#ifndef BB_STORE_H_INCLUDED
#define BB_STORE_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _bb_store_t bb_store_t;
typedef struct _bb_board_t bb_board_t;

bb_store_t *bb_store_new (void);
void bb_store_destroy (bb_store_t **self_p);

//  Last sequence number applied (0 for an empty store), and counts.
uint64_t bb_store_seq (const bb_store_t *self);
//  Sequence number of the snapshot loaded at start-up (0: none).
uint64_t bb_store_snapshot_seq (const bb_store_t *self);
size_t bb_store_boards (const bb_store_t *self);
uint64_t bb_store_items (const bb_store_t *self);

//  The board of that name, or NULL. Borrowed.
bb_board_t *bb_store_board (bb_store_t *self, const char *name);
//  Items held by a board (all memories), and the seq of its last change.
size_t bb_board_items (const bb_board_t *board);
uint64_t bb_board_last (const bb_board_t *board);

//  Adds n items to a memory, with sequence numbers seq, seq+1, ...: item i is the msgpack map
//  data[ends[i-1] .. ends[i]) (ends[-1] = 0), already validated. The bytes are copied (one
//  allocation for the n items). seq must be bb_store_seq()+1 (asserted). Creates the board if
//  needed. Returns the board's previous last seq (0 for a new board).
uint64_t bb_store_add (bb_store_t *self, const char *name, int memory, const uint8_t *data,
                       const uint32_t *ends, size_t n, uint64_t seq);
//  Takes sequence number seq (above the current one) for a change that is not a board
//  change (a dispatch event, see bb_dispatch.h): the next board change gets seq + 1.
void bb_store_advance (bb_store_t *self, uint64_t seq);

//  Clears one memory (memory >= 0) or all four (UFO_BB_MEMORY_ALL) of a board, as change
//  number seq. A missing board is created empty (so the change has a place in its chain).
//  Returns the board's previous last seq.
uint64_t bb_store_clear (bb_store_t *self, const char *name, int memory, uint64_t seq);

//  Deletes a board as change number seq. Returns its previous last seq (0 if absent).
uint64_t bb_store_delete (bb_store_t *self, const char *name, uint64_t seq);

//  Appends the msgpack body of a bb.snapshot reply (see docs/PROTOCOL.md) to buf.
void bb_store_encode_snapshot (bb_store_t *self, const char *name, int memory, uint64_t after,
                               ufo_buf_t *buf);

//  True if the msgpack bytes of any item of any board contain text (len bytes; a blob
//  reference): conservative, an item that merely mentions it counts. Scans every item.
bool bb_store_mentions (const bb_store_t *self, const char *text);

//  Returns a new list of {"name", "items", "last"} maps, sorted by name.
ufo_value_t *bb_store_list (bb_store_t *self);

//  Applies one log record (an event envelope as published on the bus). Records at or below
//  the current seq are skipped (covered by the snapshot). Returns 0, or -1 with err when
//  the record cannot be decoded or breaks the sequence.
int bb_store_apply_record (bb_store_t *self, const void *payload, size_t len, ufo_error_t *err);

//  Writes a complete snapshot of every board into data_dir/snap-<seq>/ (one JSON file per
//  board in the original's shape, plus manifest.json naming the log segment that follows),
//  syncing every file and the directories. Used in a forked child. Returns 0 or -1 with err.
int bb_store_write_snapshot (bb_store_t *self, const char *data_dir, uint64_t segment, ufo_error_t *err);

//  Loads the newest complete snapshot from data_dir (if any), removing older and partial
//  ones. *segment_p receives the first log segment to replay (1 without a snapshot).
//  Returns 0, or -1 with err (a snapshot that exists but cannot be read).
int bb_store_load_snapshot (bb_store_t *self, const char *data_dir, uint64_t *segment_p, ufo_error_t *err);

//  Removes snapshot directories older than seq (and unfinished ones) from data_dir.
void bb_store_prune_snapshots (const char *data_dir, uint64_t keep_seq);

//  Removes the snapshot of seq (complete or partial), durably: one the log does not back.
void bb_store_remove_snapshot (const char *data_dir, uint64_t seq);

#endif
