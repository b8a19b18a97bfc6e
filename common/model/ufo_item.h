/*  ufo_item.h - one blackboard record (the original's MemoryItem): ordered keys mapped to
    JSON-like values (ufo_value_t).

    Keys keep insertion order; setting an existing key keeps its place (as attribute order
    in the original's dataclass). An item caches its canonical JSON text (Python's
    json.dumps() form, see UFO_JSON_PY) once it is asked for; any mutation through this API
    drops the cache, so serialisations stay correct. Values are only reachable read-only
    (const); to change a nested value, set the key again.

    An item's "step" (used by ufo_memory_delete_step / filter_steps) is its integer "Step"
    field (the HISTORY_KEYS name), else its integer "step" field; other types do not count.

    Getters take a non-const item (they may fill the text cache). Not thread-safe: one
    owner at a time. */
#ifndef UFO_ITEM_H_INCLUDED
#define UFO_ITEM_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_item_t ufo_item_t;

//  Creates an empty item owned by the caller (never NULL).
ufo_item_t *ufo_item_new (void);

//  Destroys an item and sets *self_p to NULL. Safe with NULL or *NULL. An item held by a
//  memory belongs to the memory: do not destroy it yourself (asserted).
void ufo_item_destroy (ufo_item_t **self_p);

//  Returns a deep copy owned by the caller, not held by any memory.
ufo_item_t *ufo_item_dup (ufo_item_t *self);

//  Sets key to *value_p, taking ownership (sets *value_p to NULL). An existing key keeps its
//  position. key must be non-NULL UTF-8.
void ufo_item_set (ufo_item_t *self, const char *key, ufo_value_t **value_p);
//  Convenience setters (copy their argument).
void ufo_item_set_str (ufo_item_t *self, const char *key, const char *s);
void ufo_item_set_int (ufo_item_t *self, const char *key, int64_t i);
void ufo_item_set_float (ufo_item_t *self, const char *key, double f);
void ufo_item_set_bool (ufo_item_t *self, const char *key, bool b);
void ufo_item_set_null (ufo_item_t *self, const char *key);
void ufo_item_set_copy (ufo_item_t *self, const char *key, const ufo_value_t *value);

//  Value of key (borrowed, valid until the item changes), or NULL when absent.
const ufo_value_t *ufo_item_get (ufo_item_t *self, const char *key);
bool ufo_item_has (ufo_item_t *self, const char *key);
//  Typed reads with a default when absent or of another type.
const char *ufo_item_get_str (ufo_item_t *self, const char *key, const char *dflt);
int64_t ufo_item_get_int (ufo_item_t *self, const char *key, int64_t dflt);

//  Removes key. Returns true if it was there.
bool ufo_item_remove (ufo_item_t *self, const char *key);

//  Number of fields; key at index in insertion order (NULL when out of range).
size_t ufo_item_size (ufo_item_t *self);
const char *ufo_item_key_at (ufo_item_t *self, size_t index);

//  The fields as a map (borrowed, read-only, valid until the item changes).
const ufo_value_t *ufo_item_fields (ufo_item_t *self);

//  Step of the item (see above). Returns true and sets *step_p when the item has one.
bool ufo_item_step (ufo_item_t *self, int64_t *step_p);

//  Copies every pair of map into the item, in map order (add_values_from_dict).
//  Returns 0, or -1 with err (UFO_E_TYPE) if map is not a map; the item is then unchanged.
int ufo_item_add_from_map (ufo_item_t *self, const ufo_value_t *map, ufo_error_t *err);

//  Returns a new map (caller owns) of the fields whose key is one of keys[0..nkeys), in the
//  item's order (the original's filter(keys)).
ufo_value_t *ufo_item_filter (ufo_item_t *self, const char *const *keys, size_t nkeys);

//  Returns the fields as a map owned by the caller (to_dict), without copying them: the
//  item's own map, frozen (read-only, see ufo_value_freeze) and shared with the item
//  (ufo_value_share). Destroy it when done; it stays valid, unchanged, after the item is
//  changed or destroyed (a later change of the item works on a copy). For a map you can
//  change, ufo_value_dup the result. The first call walks the item's tree once to freeze
//  it; later calls cost one counter increment. Threads: see ufo_value.h (the map and the
//  item count as one tree).
ufo_value_t *ufo_item_to_map (ufo_item_t *self);

//  Builds an item from a map (copied). NULL with err (UFO_E_TYPE) if map is not a map.
ufo_item_t *ufo_item_from_map (const ufo_value_t *map, ufo_error_t *err);

//  Builds an item from a map, taking ownership of *map_p (set to NULL, also on error; a
//  non-map is destroyed). NULL with err (UFO_E_TYPE) if it is not a map. O(1), no copy.
ufo_item_t *ufo_item_from_map_take (ufo_value_t **map_p, ufo_error_t *err);

//  Canonical JSON text of the item (Python json.dumps(item.to_dict()) byte for byte),
//  borrowed: valid until the item changes or its memory is changed. len_p is optional.
//  Computed once and cached.
const char *ufo_item_json (ufo_item_t *self, size_t *len_p);

//  Returns the JSON text in a style of ufo_json.h (UFO_JSON_PY, _COMPACT, _PRETTY), a new
//  string the caller frees. len_p is optional.
char *ufo_item_to_json (ufo_item_t *self, int style, size_t *len_p);

//  Parses a JSON object into a new item. NULL with err on bad JSON or a non-object.
//  NaN / Infinity are accepted, as Python's json.loads does.
ufo_item_t *ufo_item_from_json (const char *text, size_t len, ufo_error_t *err);

//  Appends the msgpack encoding of the fields (a map) to buf.
void ufo_item_to_msgpack (ufo_item_t *self, ufo_buf_t *buf);

//  Decodes a msgpack map into a new item. NULL with err on bad input or a non-map.
ufo_item_t *ufo_item_from_msgpack (const void *data, size_t len, ufo_error_t *err);

#endif
