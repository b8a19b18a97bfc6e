/*  ufo_value.h - JSON-like values: null, bool, 64-bit integer, float, string, list,
    and map with ordered keys. The common currency of ufobus: blackboard items, message
    bodies, configuration and LLM requests are all ufo_value_t trees.

    Ownership: a value is owned by exactly one parent (a list or map) or by the caller.
    Functions that take ownership take `ufo_value_t **` and set the caller's pointer to NULL.
    Pointers returned by getters are borrowed: valid until the parent is changed or destroyed.
    The one exception is a frozen value (ufo_value_freeze): it is read-only, and
    ufo_value_share gives it more owners, each holding one reference that it destroys (or
    hands to a parent) as if it were the only one; the tree goes with the last reference.
    Strings are UTF-8 with an explicit length (they may contain NUL bytes) and are always
    NUL-terminated as well.

    Threads: a tree may be read by several threads at once, but changed or destroyed - any
    part of it, subtrees included - by one thread at a time. A shared frozen tree and every
    tree holding a reference to it count as one tree for this rule: the reference count is
    not atomic. */
#ifndef UFO_VALUE_H_INCLUDED
#define UFO_VALUE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    UFO_TNULL = 0,
    UFO_TBOOL = 1,
    UFO_TINT = 2,
    UFO_TFLOAT = 3,
    UFO_TSTRING = 4,
    UFO_TLIST = 5,
    UFO_TMAP = 6
} ufo_type_t;

typedef struct _ufo_value_t ufo_value_t;

//  Constructors. Each returns a new value owned by the caller (never NULL).
ufo_value_t *ufo_value_new_null (void);
ufo_value_t *ufo_value_new_bool (bool b);
ufo_value_t *ufo_value_new_int (int64_t i);
ufo_value_t *ufo_value_new_float (double f);
ufo_value_t *ufo_value_new_string (const char *s);             //  copies s; NULL gives ""
ufo_value_t *ufo_value_new_stringn (const char *s, size_t len); //  copies len bytes
ufo_value_t *ufo_value_new_stringf (const char *format, ...)
    __attribute__ ((format (printf, 1, 2)));
//  A string of len bytes that the caller fills through *data_p (len bytes, already
//  NUL-terminated after them) before any other use of the value: saves a copy when the
//  text is put together from pieces of known length.
ufo_value_t *ufo_value_new_string_fill (size_t len, char **data_p);
ufo_value_t *ufo_value_new_list (void);
ufo_value_t *ufo_value_new_map (void);

//  Destroys a value and everything below it; sets *self_p to NULL. Safe with NULL or *NULL.
void ufo_value_destroy (ufo_value_t **self_p);

//  Returns a deep copy owned by the caller. NULL in, NULL out.
ufo_value_t *ufo_value_dup (const ufo_value_t *self);

//  --- Read-only sharing ------------------------------------------------------
//  Makes self and everything below it read-only: any later change of a frozen value (set,
//  push, remove, clear; a call that would change nothing, such as removing a missing key,
//  is not a change) is a programmer error (assert). Freezing and sharing count as changes
//  for the threading rule above. Walks the tree the first time only
//  (the subtree of a frozen value is frozen). ufo_value_dup of a frozen value gives an
//  ordinary, changeable copy. NULL is ignored.
void ufo_value_freeze (ufo_value_t *self);
//  True when self is frozen.
bool ufo_value_frozen (const ufo_value_t *self);
//  Returns self, which must be frozen, as one more reference owned by the caller: destroy
//  it or give it to a list or map like any value you own. One counter increment, no copy.
ufo_value_t *ufo_value_share (ufo_value_t *self);

//  Deep equality. Integers and floats compare by type and value (1 != 1.0), maps by
//  their key/value pairs regardless of order. NULL equals NULL only.
bool ufo_value_equal (const ufo_value_t *a, const ufo_value_t *b);

//  Type and its name ("null", "bool", "int", "float", "string", "list", "map").
ufo_type_t ufo_value_type (const ufo_value_t *self);
const char *ufo_value_type_name (ufo_type_t type);

//  Scalar reads. Each is tolerant: a wrong type gives the neutral value (false, 0, 0.0, NULL).
//  ufo_value_float also converts an integer; ufo_value_str returns NULL for non-strings.
bool ufo_value_bool (const ufo_value_t *self);
int64_t ufo_value_int (const ufo_value_t *self);
double ufo_value_float (const ufo_value_t *self);
const char *ufo_value_str (const ufo_value_t *self);
size_t ufo_value_strlen (const ufo_value_t *self);

//  Number of elements of a list or pairs of a map; 0 for anything else.
size_t ufo_value_size (const ufo_value_t *self);

//  --- Read-only views for encoders (JSON writer, msgpack encoder) ------------------
//  One pair of a map as stored: the key is NUL-terminated and keylen bytes long (read it
//  with ufo_value_entry_key); value is borrowed. Do not write through a view.
#define UFO_VALUE_KEY_INLINE 24
typedef struct {
    union {
        char inl [UFO_VALUE_KEY_INLINE];    //  keys shorter than UFO_VALUE_KEY_INLINE
        char *heap;                         //  longer keys
    } k;
    uint32_t keylen;
    uint8_t plain;                          //  the key's bytes are all 0x20..0x7E but '"'
                                            //  and '\\': written as they are in any style
    ufo_value_t *value;
} ufo_value_entry_t;

static inline const char *
ufo_value_entry_key (const ufo_value_entry_t *e)
{
    return e->keylen < UFO_VALUE_KEY_INLINE ? e->k.inl : e->k.heap;
}

//  Everything an encoder needs of one value, read with a single call: its type, and
//  for strings the bytes (NUL-terminated) and length, for lists the element array,
//  for maps the pair array (insertion order), each with len elements. NULL reads as
//  null. Valid until the value (or its parent) is changed or destroyed.
typedef struct {
    ufo_type_t type;
    size_t len;                             //  string bytes, list elements, map pairs
    union {
        bool b;
        int64_t i;
        double f;
        const char *s;
        ufo_value_t *const *items;
        const ufo_value_entry_t *entries;
    } u;
} ufo_value_view_t;

//  Fills *view for self (see ufo_value_view_t). Never fails.
void ufo_value_view (const ufo_value_t *self, ufo_value_view_t *view);

//  Pairs of a map as a read-only array (borrowed, insertion order): stores it in *out and
//  returns the count; a non-map gives 0 and *out = NULL.
size_t ufo_value_map_entries (const ufo_value_t *self, const ufo_value_entry_t **out);

//  --- Lists ----------------------------------------------------------------
//  Element at index, or NULL when out of range or not a list. Borrowed.
ufo_value_t *ufo_value_list_at (const ufo_value_t *self, size_t index);
//  Appends, taking ownership of *item_p (set to NULL). Returns the appended (borrowed) value.
ufo_value_t *ufo_value_list_push (ufo_value_t *self, ufo_value_t **item_p);
//  Convenience appends of new scalars; return the new (borrowed) value.
ufo_value_t *ufo_value_list_push_str (ufo_value_t *self, const char *s);
ufo_value_t *ufo_value_list_push_int (ufo_value_t *self, int64_t i);
//  Replaces the element at index with *item_p (ownership taken, set to NULL) and destroys
//  the old one. index must be below the size (asserted). Returns the new (borrowed) element.
ufo_value_t *ufo_value_list_set (ufo_value_t *self, size_t index, ufo_value_t **item_p);
//  Removes and destroys the element at index. Returns 0, or -1 if out of range.
int ufo_value_list_remove (ufo_value_t *self, size_t index);
//  Removes and destroys every element / pair (lists and maps).
void ufo_value_clear (ufo_value_t *self);

//  --- Maps (keys keep insertion order; setting an existing key keeps its place) ---
//  Value for key, or NULL. Borrowed.
ufo_value_t *ufo_value_map_get (const ufo_value_t *self, const char *key);
bool ufo_value_map_has (const ufo_value_t *self, const char *key);
//  Key and value of the pair at index (insertion order), or NULL when out of range.
const char *ufo_value_map_key_at (const ufo_value_t *self, size_t index);
ufo_value_t *ufo_value_map_value_at (const ufo_value_t *self, size_t index);
//  Sets key to *value_p, taking ownership (set to NULL); replaces and destroys any old value.
//  Returns the stored (borrowed) value.
ufo_value_t *ufo_value_map_set (ufo_value_t *self, const char *key, ufo_value_t **value_p);
//  Same with a key of explicit length (keys may contain any bytes, including NUL).
ufo_value_t *ufo_value_map_setn (ufo_value_t *self, const char *key, size_t keylen,
                                 ufo_value_t **value_p);
ufo_value_t *ufo_value_map_getn (const ufo_value_t *self, const char *key, size_t keylen);
//  Length in bytes of the key at index (0 when out of range).
size_t ufo_value_map_keylen_at (const ufo_value_t *self, size_t index);
//  Convenience setters; each returns the stored (borrowed) value.
ufo_value_t *ufo_value_map_set_str (ufo_value_t *self, const char *key, const char *s);
ufo_value_t *ufo_value_map_set_int (ufo_value_t *self, const char *key, int64_t i);
ufo_value_t *ufo_value_map_set_float (ufo_value_t *self, const char *key, double f);
ufo_value_t *ufo_value_map_set_bool (ufo_value_t *self, const char *key, bool b);
ufo_value_t *ufo_value_map_set_null (ufo_value_t *self, const char *key);
//  Sets key to a deep copy of value (the caller keeps value).
ufo_value_t *ufo_value_map_set_copy (ufo_value_t *self, const char *key, const ufo_value_t *value);
//  Removes key. Returns true if it was there.
bool ufo_value_map_remove (ufo_value_t *self, const char *key);

//  Typed reads with a default when the key is absent or has another type.
const char *ufo_value_map_str (const ufo_value_t *self, const char *key, const char *dflt);
int64_t ufo_value_map_int (const ufo_value_t *self, const char *key, int64_t dflt);
double ufo_value_map_float (const ufo_value_t *self, const char *key, double dflt);
bool ufo_value_map_bool (const ufo_value_t *self, const char *key, bool dflt);

//  Path lookup through nested maps and lists: "a.b.0.c". Borrowed, NULL if absent.
ufo_value_t *ufo_value_path (const ufo_value_t *self, const char *path);

#endif
