/*  ufo_value_block.c - trees carved from blocks (see value_private.h): the arena the
    JSON parser builds with, and ufo_value_dup, which measures a tree and copies it into
    one block (small blocks come in 256-byte size classes from a per-thread cache). Long
    keys, and the pair arrays and hash indexes of maps of 16 pairs or more, stay separate
    heap allocations. */
#include "ufo_prelude.h"
#include "value_private.h"

#include <pthread.h>
#if defined (__has_include)
#   if __has_include (<valgrind/valgrind.h>)
#       include <valgrind/valgrind.h>
#       define S_ON_VALGRIND RUNNING_ON_VALGRIND
#   endif
#endif
#if !defined (S_ON_VALGRIND)
#   define S_ON_VALGRIND 0
#endif
#if defined (__SANITIZE_ADDRESS__)
#   define S_NO_CACHE 1
#elif defined (__has_feature)
#   if __has_feature (address_sanitizer)
#       define S_NO_CACHE 1
#   endif
#endif
#if !defined (S_NO_CACHE)
#   define S_NO_CACHE 0
#endif

#define S_ALIGN(n) (((n) + 7) & ~(size_t) 7)

//  --- Blocks ------------------------------------------------------------------------
//  Small blocks (up to S_CLASSES x S_CLASS_BYTES bytes, sizes rounded up to a class) that
//  become empty are kept in a per-thread cache, up to S_CACHE_MAX bytes, for the next
//  trees: a freed tree of 10,000 items is ~20 MB of such blocks, which glibc would give
//  back to the kernel at once (heap trim) and fault in again, page by page, for the next
//  tree. Each class is a ring of block pointers (not a list threaded through the blocks:
//  taking a block must not wait for a cache miss on it), handed out in the order they
//  were freed, so that a tree rebuilt after a freed one gets its blocks in the same
//  address order. The cache is emptied when the thread ends. Not used under ASan or
//  valgrind, so that they see every block's lifetime.
#define S_CLASS_BYTES 256
#define S_CLASSES 16
#define S_CACHE_MAX ((size_t) 32 << 20)

typedef struct {
    ufo_value_block_t **slot;   //  cap entries (a power of two), or NULL
    size_t cap;
    size_t head;                //  oldest
    size_t count;
} s_ring_t;

static __thread s_ring_t s_cache [S_CLASSES + 1];
static __thread size_t s_cached;            //  bytes of the blocks in s_cache
static pthread_key_t s_cache_key;
static pthread_once_t s_cache_once = PTHREAD_ONCE_INIT;
static bool s_cache_off;

//  Thread exit: frees the blocks that thread kept, and the rings.
static void
s_cache_flush (void *unused)
{
    UFO_UNUSED (unused);
    for (int c = 0; c <= S_CLASSES; c++) {
        s_ring_t *r = &s_cache [c];
        for (size_t i = 0; i < r->count; i++)
            free (r->slot [(r->head + i) & (r->cap - 1)]);
        free (r->slot);
        memset (r, 0, sizeof (*r));
    }
    s_cached = 0;
}

static void
s_cache_init (void)
{
    s_cache_off = S_NO_CACHE || S_ON_VALGRIND;
    if (pthread_key_create (&s_cache_key, s_cache_flush) != 0)
        s_cache_off = true;
}

//  A new open block of at least bytes bytes.
static ufo_value_block_t *
s_block_new (size_t bytes)
{
    ufo_value_block_t *block = NULL;
    uint32_t cls = 0;
    if (bytes <= S_CLASSES * S_CLASS_BYTES) {
        cls = (uint32_t) ((bytes + S_CLASS_BYTES - 1) / S_CLASS_BYTES);
        if (cls == 0)
            cls = 1;
        //  this class, else a block of the next classes up (slightly bigger)
        for (uint32_t c = cls; c <= S_CLASSES && c <= cls + 2; c++) {
            s_ring_t *r = &s_cache [c];
            if (r->count) {
                block = r->slot [r->head];
                r->head = (r->head + 1) & (r->cap - 1);
                r->count--;
                s_cached -= (size_t) c * S_CLASS_BYTES;
                cls = c;
                break;
            }
        }
        bytes = cls * S_CLASS_BYTES;
    }
    if (!block)
        block = (ufo_value_block_t *) ufo_malloc (sizeof (ufo_value_block_t) + bytes);
    block->live = 0;
    block->cls = cls;
    block->open = true;
    return block;
}

//  Makes room for bytes more in a full cache by freeing the oldest blocks of the class
//  holding the most bytes, if that is not cls (the cache follows the sizes in use).
static void
s_cache_evict (uint32_t cls, size_t bytes)
{
    uint32_t victim = 0;
    size_t most = 0;
    for (uint32_t c = 1; c <= S_CLASSES; c++)
        if (c != cls && s_cache [c].count * c * S_CLASS_BYTES > most) {
            most = s_cache [c].count * c * S_CLASS_BYTES;
            victim = c;
        }
    s_ring_t *r = &s_cache [victim];
    while (victim && r->count && s_cached + bytes > S_CACHE_MAX) {
        free (r->slot [r->head]);
        r->head = (r->head + 1) & (r->cap - 1);
        r->count--;
        s_cached -= (size_t) victim * S_CLASS_BYTES;
    }
}

void
ufo_value__block_free (ufo_value_block_t *block)
{
    size_t bytes = (size_t) block->cls * S_CLASS_BYTES;
    if (block->cls && s_cached + bytes > S_CACHE_MAX)
        s_cache_evict (block->cls, bytes);
    if (block->cls && s_cached + bytes <= S_CACHE_MAX) {
        pthread_once (&s_cache_once, s_cache_init);
        if (!s_cache_off) {
            s_ring_t *r = &s_cache [block->cls];
            if (r->count == r->cap) {
                //  grow the ring, oldest first at 0
                size_t cap = r->cap ? r->cap * 2 : 256;
                ufo_value_block_t **slot = (ufo_value_block_t **) ufo_malloc (
                    cap * sizeof (ufo_value_block_t *));
                for (size_t i = 0; i < r->count; i++)
                    slot [i] = r->slot [(r->head + i) & (r->cap - 1)];
                free (r->slot);
                r->slot = slot;
                r->cap = cap;
                r->head = 0;
                pthread_setspecific (s_cache_key, (void *) 1);   //  s_cache_flush at exit
            }
            r->slot [(r->head + r->count) & (r->cap - 1)] = block;
            r->count++;
            s_cached += bytes;
            return;
        }
    }
    free (block);
}

void
ufo_value_arena_init (ufo_value_arena_t *self, size_t first_size)
{
    assert (self);
    self->block = NULL;
    self->next = self->end = NULL;
    self->prefetch = false;
    first_size = (first_size + 255) & ~(size_t) 255;
    self->next_size = first_size ? first_size : 256;
}

//  The arena stops carving from its current block; frees it if nothing in it is alive.
static void
s_close (ufo_value_arena_t *self)
{
    ufo_value_block_t *block = self->block;
    if (block) {
        block->open = false;
        if (block->live == 0)
            ufo_value__block_free (block);
    }
    self->block = NULL;
    self->next = self->end = NULL;
}

void
ufo_value_arena_done (ufo_value_arena_t *self)
{
    assert (self);
    s_close (self);
}

//  size bytes (a multiple of 8) for one node with its trailing bytes; counted as one
//  live node of the block returned in *block_p.
static inline void *
s_carve (ufo_value_arena_t *self, size_t size, ufo_value_block_t **block_p)
{
    if (UFO_UNLIKELY ((size_t) (self->end - self->next) < size)) {
        s_close (self);
        size_t bytes = self->next_size > size ? self->next_size : size;
        ufo_value_block_t *block = s_block_new (bytes);
        if (block->cls) {
            bytes = (size_t) block->cls * S_CLASS_BYTES;
            //  a reused block is cold: ask for all its lines for writing at once rather
            //  than stall on each as the tree grows into it
            if (self->prefetch)
                for (size_t off = 0; off < bytes; off += 64)
                    __builtin_prefetch ((const char *) block->data + off, 1);
        }
        self->block = block;
        self->next = (char *) block->data;
        self->end = self->next + bytes;
        if (self->next_size < UFO_VALUE_BLOCK_MAX)
            self->next_size *= 2;
    }
    void *p = self->next;
    self->next += size;
    self->block->live++;
    *block_p = self->block;
    return p;
}

//  A node of type, carved with extra bytes after it when arena is given and the whole is
//  small enough (*carved set), else a heap node without them.
static inline ufo_value_t *
s_alloc (ufo_value_arena_t *arena, uint8_t type, size_t extra, bool *carved)
{
    ufo_value_t *self;
    ufo_value_block_t *block = NULL;
    size_t size = S_ALIGN (sizeof (ufo_value_t) + extra);
    *carved = arena && size <= UFO_VALUE_CARVE_MAX;
    if (*carved)
        self = (ufo_value_t *) s_carve (arena, size, &block);
    else
        self = (ufo_value_t *) ufo_malloc (type == UFO_TSTRING ? size : sizeof (ufo_value_t));
    ufo_value__init (self, type, block);
    return self;
}

ufo_value_t *
ufo_value__node (ufo_value_arena_t *arena, uint8_t type)
{
    bool carved;
    return s_alloc (arena, type, 0, &carved);
}

ufo_value_t *
ufo_value__string (ufo_value_arena_t *arena, const char *s, size_t len)
{
    bool carved;
    ufo_value_t *self = s_alloc (arena, UFO_TSTRING, len + 1, &carved);
    self->len = len;
    self->u.s = (char *) (self + 1);
    if (len)
        memcpy (self->u.s, s, len);
    self->u.s [len] = 0;
    return self;
}

ufo_value_t *
ufo_value__list_of (ufo_value_arena_t *arena, ufo_value_t *const *items, size_t n)
{
    assert (n < UINT32_MAX / 2);
    size_t bytes = n * sizeof (ufo_value_t *);
    bool carved;
    ufo_value_t *self = s_alloc (arena, UFO_TLIST, bytes, &carved);
    if (n) {
        if (carved)
            self->u.items = (ufo_value_t **) (self + 1);
        else {
            self->u.items = (ufo_value_t **) ufo_malloc (bytes);
            self->flags |= S_OWN_ARRAY;
        }
        memcpy (self->u.items, items, bytes);
        self->len = n;
        self->cap = (uint32_t) n;
    }
    return self;
}

static inline bool
s_same_key (const s_entry_t *a, const s_entry_t *b)
{
    //  length and first byte first: distinct keys nearly always differ there
    const char *ka = ufo_value_entry_key (a), *kb = ufo_value_entry_key (b);
    return a->keylen == b->keylen && (a->keylen == 0 || ka [0] == kb [0])
        && memcmp (ka, kb, a->keylen) == 0;
}

ufo_value_t *
ufo_value__map_of (ufo_value_arena_t *arena, s_entry_t *entries, size_t n)
{
    assert (n < UINT32_MAX / 2);
    bool carved;
    if (n >= UFO_MAP_HASH_MIN) {
        //  big maps: indexed insertion (linear time whatever the duplicates)
        ufo_value_t *self = s_alloc (arena, UFO_TMAP, 0, &carved);
        self->u.entries = (s_entry_t *) ufo_malloc (n * sizeof (s_entry_t));
        self->cap = (uint32_t) n;
        self->flags |= S_OWN_ARRAY;
        for (size_t i = 0; i < n; i++)
            ufo_value__map_put (self, &entries [i]);
        return self;
    }
    //  small maps: drop duplicates in place (the later value wins, the first place stays);
    //  a 64-bit filter on length and first byte skips the scan for nearly every key
    size_t kept = 0;
    uint64_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        s_entry_t *e = &entries [i];
        unsigned char first = e->keylen ? (unsigned char) ufo_value_entry_key (e) [0] : 0;
        uint64_t bit = (uint64_t) 1 << ((e->keylen * 7 + first) & 63);
        size_t k = kept;
        if (seen & bit) {
            k = 0;
            while (k < kept && !s_same_key (&entries [k], e))
                k++;
        }
        seen |= bit;
        if (k < kept) {
            ufo_value_destroy (&entries [k].value);
            entries [k].value = e->value;
            ufo_value__entry_key_free (e);
        }
        else
        if (k != i)
            entries [kept++] = *e;
        else
            kept++;
    }
    size_t bytes = kept * sizeof (s_entry_t);
    ufo_value_t *self = s_alloc (arena, UFO_TMAP, bytes, &carved);
    if (kept) {
        if (carved)
            self->u.entries = (s_entry_t *) (self + 1);
        else {
            self->u.entries = (s_entry_t *) ufo_malloc (bytes);
            self->flags |= S_OWN_ARRAY;
        }
        memcpy (self->u.entries, entries, bytes);
        self->len = kept;
        self->cap = (uint32_t) kept;
    }
    return self;
}

//  --- Deep copy -------------------------------------------------------------------

//  Bytes the copy of self takes in one block (each node with its bytes or its array).
static size_t
s_measure (const ufo_value_t *self)
{
    switch (self->type) {
        case UFO_TSTRING:
            return S_ALIGN (sizeof (ufo_value_t) + self->len + 1);
        case UFO_TLIST: {
            size_t size = S_ALIGN (sizeof (ufo_value_t) + self->len * sizeof (ufo_value_t *));
            for (size_t i = 0; i < self->len; i++)
                size += s_measure (self->u.items [i]);
            return size;
        }
        case UFO_TMAP: {
            size_t size = sizeof (ufo_value_t);
            if (self->len < UFO_MAP_HASH_MIN)
                size += self->len * sizeof (s_entry_t);
            for (size_t i = 0; i < self->len; i++)
                size += s_measure (self->u.entries [i].value);
            return S_ALIGN (size);
        }
        default:
            return sizeof (ufo_value_t);
    }
}

//  Copies self into the arena (whose block was sized by s_measure); every node of the
//  copy gets the flags fl (0 or S_FROZEN).
static ufo_value_t *
s_copy (ufo_value_arena_t *arena, const ufo_value_t *self, uint8_t fl)
{
    switch (self->type) {
        case UFO_TSTRING: {
            ufo_value_block_t *block;
            ufo_value_t *copy = (ufo_value_t *) s_carve (
                arena, S_ALIGN (sizeof (ufo_value_t) + self->len + 1), &block);
            *copy = (ufo_value_t) { .type = UFO_TSTRING, .flags = fl, .len = self->len,
                                    .block = block };
            copy->u.s = (char *) (copy + 1);
            memcpy (copy->u.s, self->u.s, self->len + 1);
            return copy;
        }
        case UFO_TLIST: {
            size_t n = self->len;
            ufo_value_block_t *block;
            ufo_value_t *copy = (ufo_value_t *) s_carve (
                arena, S_ALIGN (sizeof (ufo_value_t) + n * sizeof (ufo_value_t *)), &block);
            *copy = (ufo_value_t) { .type = UFO_TLIST, .flags = fl, .len = n, .cap = (uint32_t) n,
                                    .block = block };
            copy->u.items = n ? (ufo_value_t **) (copy + 1) : NULL;
            for (size_t i = 0; i < n; i++)
                copy->u.items [i] = s_copy (arena, self->u.items [i], fl);
            return copy;
        }
        case UFO_TMAP: {
            size_t n = self->len;
            bool inline_array = n < UFO_MAP_HASH_MIN;
            ufo_value_block_t *block;
            ufo_value_t *copy = (ufo_value_t *) s_carve (
                arena, S_ALIGN (sizeof (ufo_value_t) + (inline_array ? n * sizeof (s_entry_t) : 0)),
                &block);
            *copy = (ufo_value_t) { .type = UFO_TMAP, .flags = fl, .len = n, .cap = (uint32_t) n,
                                    .block = block };
            if (!n)
                return copy;
            if (inline_array)
                copy->u.entries = (s_entry_t *) (copy + 1);
            else {
                copy->u.entries = (s_entry_t *) ufo_malloc (n * sizeof (s_entry_t));
                copy->flags |= S_OWN_ARRAY;
            }
            for (size_t i = 0; i < n; i++) {
                const s_entry_t *from = &self->u.entries [i];
                s_entry_t *to = &copy->u.entries [i];
                to->keylen = from->keylen;
                to->plain = from->plain;
                if (from->keylen < UFO_VALUE_KEY_INLINE)
                    memcpy (to->k.inl, from->k.inl, UFO_VALUE_KEY_INLINE);
                else
                    to->k.heap = ufo_strndup (from->k.heap, from->keylen);
                to->value = s_copy (arena, from->value, fl);
            }
            if (!inline_array)
                ufo_value__hidx_rebuild (copy);
            return copy;
        }
        default: {
            ufo_value_block_t *block;
            ufo_value_t *copy = (ufo_value_t *) s_carve (arena, sizeof (ufo_value_t), &block);
            *copy = *self;
            copy->flags = fl;           //  not the original's
            copy->refs = 0;
            copy->block = block;
            return copy;
        }
    }
}

//  ufo_value_dup, or the same copy frozen throughout when frozen is true.
static ufo_value_t *
s_dup (const ufo_value_t *self, bool frozen)
{
    if (!self)
        return NULL;
    ufo_value_arena_t arena;
    ufo_value_arena_init (&arena, 0);
    arena.next_size = s_measure (self);
    ufo_value_t *copy = s_copy (&arena, self, frozen ? S_FROZEN : 0);
    ufo_value_arena_done (&arena);
    return copy;
}

ufo_value_t *
ufo_value_dup (const ufo_value_t *self)
{
    return s_dup (self, false);
}

ufo_value_t *
ufo_value__dup_frozen (const ufo_value_t *self)
{
    return s_dup (self, true);
}
