/*  value_private.h - private to ufo_value*.c and the JSON modules (parser, writer,
    canonical-text check): the layout of a value node and the blocks that trees are carved
    from. Not installed, not included by ufo.h.

    Blocks. A decoder (ufo_json_parse) and ufo_value_dup carve the nodes of the tree they
    build, with their string bytes and their exact element / pair arrays, from few big
    blocks instead of one malloc each. Ownership does not change: every node can still be
    replaced, removed or destroyed on its own. A block counts its live nodes; destroying a
    carved node decrements that count and the block is freed when it reaches zero (and
    its builder has finished with it). An array carved from a block that must grow moves
    to the heap (S_OWN_ARRAY). Keys of UFO_VALUE_KEY_INLINE bytes or more, map hash
    indexes and the pair arrays of maps of 16 pairs or more are always separate heap
    allocations.

    The nodes of one block are parts of one tree (no API moves a node out of its tree
    without destroying it), except that a frozen node shared (ufo_value_share) into other
    trees can outlive the tree it was carved for; it keeps its block alive until it goes.
    The non-atomic counts follow the rule of ufo_value.h: one tree, with every tree sharing
    a part of it, is changed or destroyed by one thread at a time. */
#ifndef UFO_VALUE_PRIVATE_H_INCLUDED
#define UFO_VALUE_PRIVATE_H_INCLUDED

typedef ufo_value_entry_t s_entry_t;       //  public read-only view (ufo_value.h)

typedef struct _ufo_value_block_t ufo_value_block_t;

//  flags
#define S_OWN_ARRAY 1           //  u.items / u.entries is a heap allocation of the node
#define S_FROZEN 2              //  read-only, and so is everything below it (ufo_value_freeze)

struct _ufo_value_t {
    uint8_t type;
    uint8_t flags;
    uint32_t cap;               //  allocated elements / pairs
    uint32_t hcap;              //  slots in hidx (power of two)
    uint32_t refs;              //  references besides the first (frozen nodes only,
                                //  ufo_value_share); the node goes with the last one
    size_t len;                 //  string bytes, list elements, map pairs
    union {
        bool b;
        int64_t i;
        double f;
        char *s;                //  strings: points just past the node
        ufo_value_t **items;
        s_entry_t *entries;
    } u;
    uint32_t *hidx;             //  maps: index of entry+1 per slot (0 = empty), or NULL
    ufo_value_block_t *block;   //  block the node was carved from, or NULL (own malloc)
};

struct _ufo_value_block_t {
    size_t live;                //  nodes carved from this block and not destroyed yet
    uint32_t cls;               //  size class (kept for reuse when freed), 0 = none
    bool open;                  //  a builder still carves from it (not freed at zero)
    max_align_t data [];
};

//  Sets every field of a new node: an empty value of type, carved from block (NULL: its own
//  allocation). The one place that knows all the fields.
static inline void
ufo_value__init (ufo_value_t *self, uint8_t type, ufo_value_block_t *block)
{
    *self = (ufo_value_t) { .type = type, .block = block };
}

//  Releases a block whose last node is gone (kept in the thread's cache of small blocks
//  for the next tree, or freed).
void ufo_value__block_free (ufo_value_block_t *block);

//  True when the n bytes at key need no escaping in any JSON style (see
//  ufo_value_entry_t.plain).
static inline bool
ufo_value__key_plain (const char *key, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) key [i];
        if (c < 0x20 || c > 0x7E || c == '"' || c == '\\')
            return false;
    }
    return true;
}

//  The same for an inline key (n < UFO_VALUE_KEY_INLINE bytes at the start of the
//  24-byte buffer inl), eight bytes at a time. Carries and borrows only run towards the
//  bytes past the key, so those cannot hide a special byte of the key.
static inline bool
ufo_value__inline_key_plain (const char *inl, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x;
        memcpy (&x, inl + i, 8);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
        uint64_t m = ((x - ones * 0x20) & ~x)                 //  < 0x20 (or >= 0x80)
                   | ((x + ones) | x)                          //  >= 0x7F
                   | ((q - ones) & ~q) | ((b - ones) & ~b);    //  '"', '\\'
        m &= highs;
        if (n - i < 8)
            m &= ((uint64_t) 1 << (8 * (n - i))) - 1;
        if (m)
            return false;
    }
    return true;
}

//  ufo_value_view without the call (for the encoders).
static inline void
ufo_value__view (const ufo_value_t *self, ufo_value_view_t *view)
{
    if (!self) {
        view->type = UFO_TNULL;
        view->len = 0;
        view->u.i = 0;
        return;
    }
    view->type = (ufo_type_t) self->type;
    view->len = self->len;
    switch (self->type) {
        case UFO_TBOOL:   view->u.b = self->u.b; break;
        case UFO_TINT:    view->u.i = self->u.i; break;
        case UFO_TFLOAT:  view->u.f = self->u.f; break;
        case UFO_TSTRING: view->u.s = self->u.s; break;
        case UFO_TLIST:   view->u.items = self->u.items; break;
        case UFO_TMAP:    view->u.entries = self->u.entries; break;
        default:          view->u.i = 0; break;
    }
}

//  Carves nodes from blocks. ufo_value_arena_init, carve, then ufo_value_arena_done; what
//  was carved lives on until its nodes are destroyed.
typedef struct {
    ufo_value_block_t *block;   //  current block (open), or NULL
    char *next;                 //  free space in it
    char *end;
    size_t next_size;           //  bytes of the next block's data
    bool prefetch;              //  ask for a new small block's lines for writing at once
                                //  (for trees built in no particular order: the parser)
} ufo_value_arena_t;

//  Largest block a growing arena allocates, and the largest node (with its bytes or its
//  array) carved from a growing arena's block (bigger ones are plain heap allocations).
#define UFO_VALUE_BLOCK_MAX ((size_t) 256 << 10)
#define UFO_VALUE_CARVE_MAX ((size_t) 4 << 10)

//  Starts an arena whose first block holds first_size bytes (rounded up to 256).
void ufo_value_arena_init (ufo_value_arena_t *self, size_t first_size);
//  Ends carving: the current block is freed now if nothing carved from it is alive.
void ufo_value_arena_done (ufo_value_arena_t *self);

//  Node constructors (same contracts as the public ones); a NULL arena gives heap nodes.
//  A string node is carved with its bytes, a list or map node with its array.
ufo_value_t *ufo_value__node (ufo_value_arena_t *arena, uint8_t type);
ufo_value_t *ufo_value__string (ufo_value_arena_t *arena, const char *s, size_t len);
//  A list of the n values at items (ownership taken), its array of the exact size.
ufo_value_t *ufo_value__list_of (ufo_value_arena_t *arena, ufo_value_t *const *items, size_t n);
//  A map of the n pairs at entries, in order (keys and values taken; the entries' storage
//  stays the caller's). A later pair with the key of an earlier one replaces its value
//  in the earlier one's place, as ufo_value_map_set does.
ufo_value_t *ufo_value__map_of (ufo_value_arena_t *arena, s_entry_t *entries, size_t n);

//  --- ufo_json.c ---
//  strtod in the C locale (whatever the process's locale), on the len bytes at s (not
//  NUL-terminated). For the JSON parser, writer and canonical-text check.
double ufo_json__strtod (const char *s, size_t len);

//  --- ufo_value.c ---
//  ufo_value__thaw: declared in model_private.h (the item uses it).
//  Frees what an entry owns besides its value (a long key).
void ufo_value__entry_key_free (s_entry_t *e);
//  Moves the pair *e into map (taking its key and value), replacing the value of an
//  existing equal key in place. The map's array must be its own (S_OWN_ARRAY) or empty.
void ufo_value__map_put (ufo_value_t *map, s_entry_t *e);
//  Builds the hash index of a map of UFO_MAP_HASH_MIN or more pairs.
void ufo_value__hidx_rebuild (ufo_value_t *map);
#define UFO_MAP_HASH_MIN 16

#endif
