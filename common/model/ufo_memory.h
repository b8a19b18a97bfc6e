/*  ufo_memory.h - an ordered list of items (the original's Memory).

    The memory owns its items. The JSON text of its item list (json.dumps of the list of
    dicts) is put together from the items' cached texts (ufo_item_json): each item is
    written once, until it changes, and later serialisations and blackboard prompts copy
    the texts.

    Optional cap: with a cap N > 0, adding an item to a full memory drops the oldest.
    Not thread-safe. */
#ifndef UFO_MEMORY_H_INCLUDED
#define UFO_MEMORY_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_value.h"

typedef struct _ufo_memory_t ufo_memory_t;

//  Creates an empty memory without a cap (never NULL).
ufo_memory_t *ufo_memory_new (void);

//  Destroys the memory and its items; sets *self_p to NULL. Safe with NULL or *NULL.
void ufo_memory_destroy (ufo_memory_t **self_p);

//  Appends *item_p, taking ownership (sets *item_p to NULL) (add_memory_item). The item must
//  not be held by another memory (asserted). With a cap, drops the oldest items beyond it.
//  Returns the added item (borrowed).
ufo_item_t *ufo_memory_add (ufo_memory_t *self, ufo_item_t **item_p);

//  Removes and destroys every item whose step (see ufo_item.h) equals step
//  (delete_memory_item). Returns how many were removed. Builds the field maps of lazily
//  loaded items to read their step.
size_t ufo_memory_delete_step (ufo_memory_t *self, int64_t step);

//  Returns a new list (caller owns) with, for every item, a map of its fields whose key is
//  one of keys[0..nkeys) (filter_memory_from_keys).
ufo_value_t *ufo_memory_filter_keys (ufo_memory_t *self, const char *const *keys, size_t nkeys);

//  Returns a new list (caller owns) of the fields (maps) of the items whose step is one of
//  steps[0..nsteps) (filter_memory_from_steps). The maps are shared, read-only, as those
//  of ufo_item_to_map.
ufo_value_t *ufo_memory_filter_steps (ufo_memory_t *self, const int64_t *steps, size_t nsteps);

//  Newest item (borrowed), or NULL when empty (get_latest_item).
ufo_item_t *ufo_memory_latest (ufo_memory_t *self);

//  Item at index, oldest first (borrowed), or NULL when out of range.
ufo_item_t *ufo_memory_at (ufo_memory_t *self, size_t index);

size_t ufo_memory_length (ufo_memory_t *self);
bool ufo_memory_is_empty (ufo_memory_t *self);

//  Destroys every item.
void ufo_memory_clear (ufo_memory_t *self);

//  Sets the cap on the item count (0 = none) and drops the oldest items beyond it now.
void ufo_memory_set_cap (ufo_memory_t *self, size_t cap);
size_t ufo_memory_cap (ufo_memory_t *self);

//  Returns the list of the items' fields as a new list of maps (caller owns) (list_content).
//  The list is new; the maps are the items' own, shared and read-only (ufo_item_to_map);
//  the list counts as part of the memory for threads (see ufo_board_to_map).
ufo_value_t *ufo_memory_to_list (ufo_memory_t *self);

//  Replaces the content with one item per map of list (copied) (from_list_of_dicts).
//  Returns 0, or -1 with err (UFO_E_TYPE naming the index) if list is not a list of maps;
//  the memory is then unchanged.
int ufo_memory_from_list (ufo_memory_t *self, const ufo_value_t *list, ufo_error_t *err);

//  JSON text of the list of items, Python json.dumps() form (to_json): a new string the
//  caller frees; len_p optional.
char *ufo_memory_to_json (ufo_memory_t *self, size_t *len_p);

//  Appends the same text to buf (no intermediate copy).
void ufo_memory_append_json (ufo_memory_t *self, ufo_buf_t *buf);

//  Replaces the content from the JSON text of a list of objects. Returns 0, or -1 with err
//  on bad JSON or a wrong shape; the memory is then unchanged. NaN / Infinity accepted.
int ufo_memory_from_json (ufo_memory_t *self, const char *text, size_t len, ufo_error_t *err);

#endif
