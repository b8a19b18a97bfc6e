/*  model_private.h - private to the blackboard data model (ufo_item.c, ufo_memory.c,
    ufo_board.c, ufo_canon.c). Not installed, not included by ufo.h.

    Text cache design. Every item can produce its canonical JSON text (Python json.dumps
    form). Inside a memory, the texts of the items live back to back in the memory's
    `joined` buffer, separated by ", ", so that the memory's JSON list is "[" + joined + "]"
    with no work at serialisation time:

      joined.data + start                                     joined.data + joined.len
      |item0 text|, |item1 text|, ... |item(synced-1) text|

    - items [0, synced) have in_owner set and owner_off/text_len pointing into joined;
    - items [synced, count) are not in joined yet: they are appended on the next sync
      (adding an item costs nothing until a serialisation needs it);
    - dirty means joined is stale (delete, mutation of a held item): the next sync rebuilds
      it from the items' own texts (owned, in the old buffer, or freshly written).
    A lazy item has fields == NULL: its text (owned or in joined) is the truth, and the map
    is parsed from it on first access. */
#ifndef UFO_MODEL_PRIVATE_H_INCLUDED
#define UFO_MODEL_PRIVATE_H_INCLUDED

typedef struct _ufo_item_slab_t ufo_item_slab_t;

struct _ufo_item_t {
    ufo_item_slab_t *slab;      //  block this item was carved from, or NULL (own allocation)
    ufo_value_t *fields;        //  map; NULL while lazy
    char *text;                 //  owned canonical text, or NULL
    size_t text_len;            //  length of the text (owned or in owner's joined)
    ufo_memory_t *owner;        //  memory holding the item, or NULL
    size_t owner_off;           //  offset of the text in owner->joined when in_owner
    bool in_owner;              //  text lives in owner->joined
};

//  Bulk loads carve their items from one block instead of one allocation each; the block
//  is freed when its last item is destroyed.
struct _ufo_item_slab_t {
    size_t live;                //  items taken and not destroyed yet
    size_t used;                //  items taken
    size_t count;               //  items in the block
    bool open;                  //  still handing out items (not freed before done)
    ufo_item_t items [];
};

struct _ufo_memory_t {
    ufo_item_t **items;
    size_t count;
    size_t alloc;
    ufo_buf_t joined;           //  ", "-joined texts of items [0, synced), from `start`
    size_t start;               //  offset of item 0's text (grows when the oldest is dropped)
    size_t synced;
    bool dirty;
    size_t cap;                 //  0 = no cap
};

//  Parse limits used for everything the model reads: NaN / Infinity allowed (as Python).
extern const ufo_json_limits_t ufo_model_limits;

//  --- ufo_item.c ---
//  Text of the item: owned, in the owner's buffer, or computed and cached now. Borrowed.
const char *ufo_item__text (ufo_item_t *self, size_t *len_p);
//  Creates a lazy item from canonical text (validated by ufo_canon_value), copying it.
ufo_item_t *ufo_item__new_lazy (const char *text, size_t len);
//  A block for up to count items (count > 0).
ufo_item_slab_t *ufo_item__slab_new (size_t count);
//  The next zeroed item of the block, or a separately allocated one when it is used up.
ufo_item_t *ufo_item__slab_take (ufo_item_slab_t *slab);
//  Ends the caller's use of the block (frees it now if no item was taken); sets *slab_p NULL.
void ufo_item__slab_done (ufo_item_slab_t **slab_p);
//  Parses the text of a lazy item into its field map (no-op when already a map).
void ufo_item__materialize (ufo_item_t *self);

//  --- ufo_memory.c ---
//  Brings joined up to date with every item (see above).
void ufo_memory__sync (ufo_memory_t *self);
//  Adds a lazy item from canonical object text, appending it to joined directly when the
//  memory is in sync (no per-item copy). Applies the cap. slab (may be NULL) supplies the
//  item's storage. Returns the item (borrowed).
ufo_item_t *ufo_memory__add_text (ufo_memory_t *self, const char *text, size_t len,
                                  ufo_item_slab_t *slab);
//  Length of the memory's JSON list text ("[" + joined + "]"), syncing first.
size_t ufo_memory__json_len (ufo_memory_t *self);
//  Writes that text (ufo_memory__json_len bytes, no NUL) at out, which must be synced and
//  have room; returns the end of what it wrote.
char *ufo_memory__write_json (ufo_memory_t *self, char *out);
//  Reserves room for n more items and bytes more bytes of text.
void ufo_memory__reserve (ufo_memory_t *self, size_t n, size_t bytes);
//  Exchanges the content (items and texts) of two memories; caps stay. Then applies caps.
void ufo_memory__swap (ufo_memory_t *a, ufo_memory_t *b);
//  List loader of the JSON loaders: loads a list of objects ("[" at p, any JSON whitespace
//  between elements) into fresh (empty); canonical objects stay text (lazy items), others
//  are parsed one by one. Returns the end of the list, or NULL when the text is not a list
//  of valid objects (fresh is then untouched; the caller runs the full parser).
const char *ufo_memory__load_list (ufo_memory_t *fresh, const char *p, const char *end);
//  Called by an item held by this memory when it changes.
void ufo_memory__invalidate (ufo_memory_t *self);

//  --- ufo_canon.c ---
//  If text[0..len) starts with one JSON value in canonical Python json.dumps form
//  (ensure_ascii, ", " and ": " separators, repr floats, no duplicate keys, depth <= 32),
//  returns its length in bytes; otherwise 0 (the caller then takes the full parser's path).
size_t ufo_canon_value (const char *text, size_t len);

//  The same over a sequence of values in one input (the objects of a list, the lines of a
//  file), sharing the block masks between them. Fields are private to ufo_canon.c.
#define UFO_CANON_WINDOW 64     //  blocks of 64 bytes whose masks are computed in one pass
#define UFO_CANON_TMPL_DEPTH 6  //  nesting levels that remember the keys of their last map
#define UFO_CANON_TMPL_KEYS 24  //  keys remembered per level
typedef struct {
    size_t count;               //  keys of the last map accepted at this level (0: none)
    const char *at [UFO_CANON_TMPL_KEYS];   //  each key's opening quote, in the input
    uint8_t len [UFO_CANON_TMPL_KEYS];      //  its length with the quotes and the ": " after it
} ufo_canon_keys_t;
typedef struct {
    const char *text;           //  start of the input: blocks are 64-byte steps from here
    const char *end;
    const char *block;          //  block whose masks are cached
    const char *block_end;      //  block + 64 (the end, for the last block), or text before the first load
    uint64_t special;           //  bit i: block [i] ends or interrupts a plain string run
    uint64_t quotes;            //  bit i: block [i] is '"'
    size_t win_first;           //  index of the first block of the window
    size_t win_count;           //  blocks whose masks are in the window (0: none yet)
    uint64_t win_special [UFO_CANON_WINDOW];
    uint64_t win_quotes [UFO_CANON_WINDOW];
    ufo_canon_keys_t keys [UFO_CANON_TMPL_DEPTH];
} ufo_canon_t;
//  Starts a scan of text[0..len); nothing is allocated (the window and the key
//  templates live in self, ~2.4 KB). The text must stay alive and unchanged for the
//  whole scan: the remembered masks and keys point into it.
void ufo_canon_begin (ufo_canon_t *self, const char *text, size_t len);
//  If one canonical value starts at p, returns the end of it, else NULL. p must not be
//  before the end of what an earlier call of this scan looked at (calls go forward: at or
//  after the previous call's p plus the bytes it accepted, or the next line after a refusal).
//  A canonical value never holds a raw line break, so a scan over a whole file stops at the
//  end of each line by itself.
const char *ufo_canon_next (ufo_canon_t *self, const char *p);
//  Tests: true makes every later scan use the portable masks instead of AVX-512BW (where the
//  CPU has it); false goes back to the CPU's best. Both give the same answers.
void ufo_canon__portable (bool on);

//  (ufo_value.c) Makes a frozen value that nothing else references changeable again: the
//  node itself, not what is below it (which stays frozen). Returns false, changing
//  nothing, when the value is shared (ufo_value_share); true when it is changeable now or
//  was not frozen. Lets an item change the map it once handed out by ufo_item_to_map.
bool ufo_value__thaw (ufo_value_t *self);
//  (ufo_value_block.c) ufo_value_dup, frozen throughout (ufo_value_freeze) at no extra
//  cost: the copy an item makes of a caller's map, so that ufo_item_to_map need not walk it.
ufo_value_t *ufo_value__dup_frozen (const ufo_value_t *self);

#endif
