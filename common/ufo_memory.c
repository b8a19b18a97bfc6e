/*  ufo_memory.c - ordered list of items with an incrementally maintained JSON list text.
    See ufo_memory.h for the contract and model_private.h for the cache design. */
#include "ufo_prelude.h"
#include "model_private.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

ufo_memory_t *
ufo_memory_new (void)
{
    return (ufo_memory_t *) ufo_calloc (1, sizeof (ufo_memory_t));
}

//  Releases an item the memory holds.
static void
s_drop_item (ufo_item_t *item)
{
    item->owner = NULL;
    item->in_owner = false;
    ufo_item_destroy (&item);
}

void
ufo_memory_clear (ufo_memory_t *self)
{
    assert (self);
    for (size_t i = 0; i < self->count; i++)
        s_drop_item (self->items [i]);
    self->count = 0;
    if (self->joined.cap > ((size_t) 1 << 20))
        ufo_buf_free (&self->joined);       //  give big texts back; keep small buffers
    else
        ufo_buf_reset (&self->joined);
    self->start = 0;
    self->synced = 0;
    self->dirty = false;
}

void
ufo_memory_destroy (ufo_memory_t **self_p)
{
    assert (self_p);
    ufo_memory_t *self = *self_p;
    if (!self)
        return;
    ufo_memory_clear (self);
    free (self->items);
    ufo_buf_free (&self->joined);
    free (self);
    *self_p = NULL;
}

void
ufo_memory__invalidate (ufo_memory_t *self)
{
    self->dirty = true;
}

void
ufo_memory__reserve (ufo_memory_t *self, size_t n, size_t bytes)
{
    if (self->count + n > self->alloc) {
        size_t alloc = self->alloc ? self->alloc : 16;
        while (alloc < self->count + n)
            alloc *= 2;
        self->items = (ufo_item_t **) ufo_realloc (self->items, alloc * sizeof (ufo_item_t *));
        self->alloc = alloc;
    }
    //  exact growth (not the buffer's power of two): big loads then get a block of a size
    //  the allocator can hand out again next time
    ufo_buf_t *buf = &self->joined;
    if (bytes && buf->cap < buf->len + bytes + 1) {
        buf->data = (char *) ufo_realloc (buf->data, buf->len + bytes + 1);
        buf->cap = buf->len + bytes + 1;
        buf->data [buf->len] = 0;
    }
}

//  Moves joined so that it starts at offset 0 again (after many drops of the oldest).
static void
s_compact (ufo_memory_t *self)
{
    size_t start = self->start;
    memmove (self->joined.data, self->joined.data + start, self->joined.len - start);
    self->joined.len -= start;
    self->joined.data [self->joined.len] = 0;
    for (size_t i = 0; i < self->synced; i++)
        self->items [i]->owner_off -= start;
    self->start = 0;
}

//  Removes and destroys the oldest item, keeping joined valid when it can.
static void
s_drop_oldest (ufo_memory_t *self)
{
    assert (self->count > 0);
    ufo_item_t *oldest = self->items [0];
    if (!self->dirty && self->synced > 0) {
        if (self->synced == 1) {
            ufo_buf_reset (&self->joined);
            self->start = 0;
        }
        else
            self->start = self->items [1]->owner_off;
        self->synced--;
    }
    s_drop_item (oldest);
    memmove (self->items, self->items + 1, (self->count - 1) * sizeof (ufo_item_t *));
    self->count--;
    if (self->start > 65536 && self->start > self->joined.len / 2)
        s_compact (self);
}

static void
s_apply_cap (ufo_memory_t *self)
{
    if (!self->cap || self->count <= self->cap)
        return;
    size_t excess = self->count - self->cap;
    if (excess == 1) {
        s_drop_oldest (self);
        return;
    }
    //  many at once (set_cap, swap): one pass, then a rebuild on the next sync
    for (size_t i = 0; i < excess; i++)
        s_drop_item (self->items [i]);
    memmove (self->items, self->items + excess, self->cap * sizeof (ufo_item_t *));
    self->count = self->cap;
    self->dirty = true;
}

ufo_item_t *
ufo_memory_add (ufo_memory_t *self, ufo_item_t **item_p)
{
    assert (self && item_p && *item_p);
    ufo_item_t *item = *item_p;
    assert (!item->owner);          //  an item lives in one memory at a time
    *item_p = NULL;
    ufo_memory__reserve (self, 1, 0);
    item->owner = self;
    item->in_owner = false;
    self->items [self->count++] = item;
    s_apply_cap (self);
    return item;
}

//  Appends the text of item to buf as the next element of a ", "-joined list and points
//  the item at it. old_base is the buffer its in_owner text currently lives in.
static void
s_append_item (ufo_buf_t *buf, ufo_item_t *item, const char *old_base, bool first)
{
    if (!first)
        ufo_buf_append (buf, ", ", 2);
    size_t off = buf->len;
    if (item->text) {
        ufo_buf_append (buf, item->text, item->text_len);
        free (item->text);
        item->text = NULL;
    }
    else
    if (item->in_owner)
        ufo_buf_append (buf, old_base + item->owner_off, item->text_len);
    else
        ufo_json_append (buf, item->fields, UFO_JSON_PY);
    item->text_len = buf->len - off;
    item->owner_off = off;
    item->in_owner = true;
}

//  Before item i is written or frozen: asks for the item ahead + 1 places on and for the
//  first 2 KB of the tree of the one ahead places on (a tree built by the parser or
//  ufo_value_dup lies in one block, root first; ~1.75 KB for a trajectory item of ~500
//  bytes of JSON), one line in two: the hardware fetches the other with it. On a big memory
//  the trees are no longer in the cache, and walking them is otherwise one wait for memory
//  after another: with 10,000 items the first JSON went from 2.0 to 1.65 ms (ahead 1: an
//  item takes ~165 ns to write), the first to dict from 0.73 to 0.34 ms (ahead 6: ~35 ns
//  to freeze). Only a tree that will be walked is asked for: when writing, that of an item
//  without text; when freezing, one not frozen yet (ufo_item_to_map then only counts a
//  reference; the test reads the tree's first line, a miss taken 6 items early). A
//  prefetch never faults, so the 2 KB may run past a small tree. Always inlined: gcc 12
//  deems a function that only prefetches free of effects and drops the calls to it.
static inline __attribute__ ((always_inline)) void
s_prefetch_items (const ufo_memory_t *self, size_t i, size_t ahead, bool freezing)
{
    if (i + ahead + 1 < self->count)
        __builtin_prefetch (self->items [i + ahead + 1]);
    if (i + ahead < self->count) {
        const ufo_item_t *item = self->items [i + ahead];
        const ufo_value_t *tree = item->fields;
        bool walked = tree && (freezing ? !ufo_value_frozen (tree)
                                        : !item->text && !item->in_owner);
        if (walked) {
            uintptr_t at = (uintptr_t) tree;
            for (uintptr_t k = 0; k < 16; k++)
                __builtin_prefetch ((const void *) (at + 128 * k));
        }
    }
}

void
ufo_memory__sync (ufo_memory_t *self)
{
    if (self->dirty) {
        ufo_buf_t fresh = {0};
        ufo_buf_reserve (&fresh, self->joined.len - self->start + 64);
        for (size_t i = 0; i < self->count; i++) {
            s_prefetch_items (self, i, 1, false);
            s_append_item (&fresh, self->items [i], self->joined.data, i == 0);
        }
        ufo_buf_free (&self->joined);
        self->joined = fresh;
        self->start = 0;
        self->synced = self->count;
        self->dirty = false;
        return;
    }
    size_t first = self->synced, before = self->joined.len;
    for (size_t i = self->synced; i < self->count; i++) {
        if (i == first + 32 && self->count - i > 32) {
            //  many new items: room for the rest at the size of the first 32, so that the
            //  text is not copied again and again by the buffer's doubling. Only a guess:
            //  at most what is already there again plus 64 MB (32 long items followed by
            //  many short ones must not reserve gigabytes); doubling does the rest.
            size_t each = (self->joined.len - before) / 32 + 1;
            size_t rest = self->count - i;
            size_t want = rest > SIZE_MAX / (each + each / 8) ? SIZE_MAX : rest * (each + each / 8);
            size_t bound = self->joined.len + ((size_t) 64 << 20);
            ufo_buf_reserve (&self->joined, want < bound ? want : bound);
        }
        s_prefetch_items (self, i, 1, false);
        s_append_item (&self->joined, self->items [i], self->joined.data, i == 0);
    }
    self->synced = self->count;
}

ufo_item_t *
ufo_memory__add_text (ufo_memory_t *self, const char *text, size_t len, ufo_item_slab_t *slab)
{
    ufo_item_t *item;
    if (!self->dirty && self->synced == self->count) {
        item = ufo_item__slab_take (slab);
        if (self->count)
            ufo_buf_append (&self->joined, ", ", 2);
        item->owner_off = self->joined.len;
        item->text_len = len;
        item->in_owner = true;
        ufo_buf_append (&self->joined, text, len);
        ufo_memory__reserve (self, 1, 0);
        item->owner = self;
        self->items [self->count++] = item;
        self->synced = self->count;
        s_apply_cap (self);
        return item;
    }
    item = ufo_item__slab_take (slab);
    item->text = ufo_strndup (text, len);
    item->text_len = len;
    return ufo_memory_add (self, &item);
}

void
ufo_memory__swap (ufo_memory_t *a, ufo_memory_t *b)
{
    ufo_memory_t tmp = *a;
    size_t cap_a = a->cap, cap_b = b->cap;
    *a = *b;
    *b = tmp;
    a->cap = cap_a;
    b->cap = cap_b;
    for (size_t i = 0; i < a->count; i++)
        a->items [i]->owner = a;
    for (size_t i = 0; i < b->count; i++)
        b->items [i]->owner = b;
    s_apply_cap (a);
    s_apply_cap (b);
}

size_t
ufo_memory_delete_step (ufo_memory_t *self, int64_t step)
{
    assert (self);
    size_t kept = 0;
    size_t removed = 0;
    for (size_t i = 0; i < self->count; i++) {
        ufo_item_t *item = self->items [i];
        int64_t s;
        if (ufo_item_step (item, &s) && s == step) {
            s_drop_item (item);
            removed++;
        }
        else
            self->items [kept++] = item;
    }
    self->count = kept;
    if (removed)
        self->dirty = true;
    return removed;
}

ufo_value_t *
ufo_memory_filter_keys (ufo_memory_t *self, const char *const *keys, size_t nkeys)
{
    assert (self);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < self->count; i++) {
        ufo_value_t *map = ufo_item_filter (self->items [i], keys, nkeys);
        ufo_value_list_push (list, &map);
    }
    return list;
}

ufo_value_t *
ufo_memory_filter_steps (ufo_memory_t *self, const int64_t *steps, size_t nsteps)
{
    assert (self);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < self->count; i++) {
        int64_t s;
        if (!ufo_item_step (self->items [i], &s))
            continue;
        for (size_t k = 0; k < nsteps; k++) {
            if (steps [k] == s) {
                ufo_value_t *map = ufo_item_to_map (self->items [i]);
                ufo_value_list_push (list, &map);
                break;
            }
        }
    }
    return list;
}

ufo_item_t *
ufo_memory_latest (ufo_memory_t *self)
{
    assert (self);
    return self->count ? self->items [self->count - 1] : NULL;
}

ufo_item_t *
ufo_memory_at (ufo_memory_t *self, size_t index)
{
    assert (self);
    return index < self->count ? self->items [index] : NULL;
}

size_t
ufo_memory_length (ufo_memory_t *self)
{
    assert (self);
    return self->count;
}

bool
ufo_memory_is_empty (ufo_memory_t *self)
{
    assert (self);
    return self->count == 0;
}

void
ufo_memory_set_cap (ufo_memory_t *self, size_t cap)
{
    assert (self);
    self->cap = cap;
    s_apply_cap (self);
}

size_t
ufo_memory_cap (ufo_memory_t *self)
{
    assert (self);
    return self->cap;
}

ufo_value_t *
ufo_memory_to_list (ufo_memory_t *self)
{
    assert (self);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < self->count; i++) {
        s_prefetch_items (self, i, 6, true);
        ufo_value_t *map = ufo_item_to_map (self->items [i]);
        ufo_value_list_push (list, &map);
    }
    return list;
}

//  Checks that list is a list of maps; name is used in the message.
static int
s_check_list (const ufo_value_t *list, const char *name, ufo_error_t *err)
{
    if (!list || ufo_value_type (list) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "%s: expected a list, got %s", name,
                              list ? ufo_value_type_name (ufo_value_type (list)) : "nothing");
    size_t n = ufo_value_size (list);
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *v = ufo_value_list_at (list, i);
        if (ufo_value_type (v) != UFO_TMAP)
            return ufo_error_set (err, UFO_E_TYPE, "%s[%zu]: expected a map, got %s", name, i,
                                  ufo_value_type_name (ufo_value_type (v)));
    }
    return 0;
}

int
ufo_memory_from_list (ufo_memory_t *self, const ufo_value_t *list, ufo_error_t *err)
{
    assert (self);
    if (s_check_list (list, "memory", err))
        return -1;
    ufo_memory_t *fresh = ufo_memory_new ();
    size_t n = ufo_value_size (list);
    ufo_memory__reserve (fresh, n, 0);
    for (size_t i = 0; i < n; i++) {
        ufo_item_t *item = ufo_item_from_map (ufo_value_list_at (list, i), NULL);
        ufo_memory_add (fresh, &item);
    }
    ufo_memory__swap (self, fresh);
    ufo_memory_destroy (&fresh);
    return 0;
}

void
ufo_memory_append_json (ufo_memory_t *self, ufo_buf_t *buf)
{
    assert (self && buf);
    ufo_memory__sync (self);
    size_t n = self->joined.len - self->start;
    ufo_buf_reserve (buf, n + 2);
    ufo_buf_putc (buf, '[');
    if (n)
        ufo_buf_append (buf, self->joined.data + self->start, n);
    ufo_buf_putc (buf, ']');
}

size_t
ufo_memory__json_len (ufo_memory_t *self)
{
    ufo_memory__sync (self);
    return self->joined.len - self->start + 2;
}

char *
ufo_memory__write_json (ufo_memory_t *self, char *out)
{
    size_t n = self->joined.len - self->start;
    *out++ = '[';
    if (n)
        memcpy (out, self->joined.data + self->start, n);
    out += n;
    *out++ = ']';
    return out;
}

char *
ufo_memory_to_json (ufo_memory_t *self, size_t *len_p)
{
    assert (self);
    size_t len = ufo_memory__json_len (self);
    char *text = (char *) ufo_malloc (len + 1);
    *ufo_memory__write_json (self, text) = 0;
    if (len_p)
        *len_p = len;
    return text;
}

static inline const char *
s_ws (const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

//  Next byte at or after p that is '"' or '\\' (in_string) or '"', '{', '}', '[', ']'
//  (outside strings; may also stop at 'Y', '_', 'y', DEL), or end.
static inline const char *
s_next_special (const char *p, const char *end, bool in_string)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8 ('"');
    const __m128i bslash = _mm_set1_epi8 ('\\');
    //  '[' 0x5b, ']' 0x5d, '{' 0x7b, '}' 0x7d all become 0x59 once bits 1, 2 and 5 are
    //  cleared (so do 'Y', '_', 'y' and DEL: the caller looks at the byte again)
    const __m128i fold = _mm_set1_epi8 ((char) ~0x26);
    const __m128i open = _mm_set1_epi8 (0x59);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128 ((const __m128i *) (const void *) p);
        __m128i m = _mm_cmpeq_epi8 (v, quote);
        if (in_string)
            m = _mm_or_si128 (m, _mm_cmpeq_epi8 (v, bslash));
        else
            m = _mm_or_si128 (m, _mm_cmpeq_epi8 (_mm_and_si128 (v, fold), open));
        int mask = _mm_movemask_epi8 (m);
        if (mask)
            return p + __builtin_ctz ((unsigned) mask);
        p += 16;
    }
#endif
    for (; p < end; p++) {
        char ch = *p;
        if (ch == '"' || (in_string ? ch == '\\'
                                    : (ch == '{' || ch == '}' || ch == '[' || ch == ']')))
            break;
    }
    return p;
}

//  End of the JSON object starting at p ('{'), found by matching brackets outside strings;
//  NULL if the text ends first. Does not validate: the caller parses the span.
static const char *
s_skip_object (const char *p, const char *end)
{
    size_t depth = 0;
    while ((p = s_next_special (p, end, false)) < end) {
        char ch = *p;
        if (ch == '"') {
            p++;
            for (;;) {
                p = s_next_special (p, end, true);
                if (p >= end)
                    return NULL;
                if (*p == '"')
                    break;
                p += 2;                 //  a backslash and the byte it escapes
            }
        }
        else
        if (ch == '{' || ch == '[')
            depth++;
        else
        if (ch == '}' || ch == ']') {
            if (depth == 0)
                return NULL;
            if (--depth == 0)
                return p + 1;
        }
        p++;
    }
    return NULL;
}

typedef struct {
    const char *p;              //  the object's text in the input
    size_t len;
    ufo_value_t *map;           //  parsed map when the text is not canonical, else NULL
} s_span_t;

//  Loader of a list of objects, any JSON whitespace between them. An object already in
//  canonical form is kept as text (a lazy item); any other is parsed alone into its item's
//  map (no tree of the whole list, no second copy). When every object is canonical, their
//  texts go into one buffer of the exact size and the memory is in sync at once.
//  Loads into fresh (empty) and returns the end of the list, or NULL when the text is not a
//  list of valid objects (the caller then runs the full parser, which names the error).
static const char *
s_load_list (ufo_memory_t *fresh, const char *p, const char *end)
{
    assert (fresh->count == 0 && fresh->joined.len == 0);
    if (p >= end || *p != '[')
        return NULL;
    p = s_ws (p + 1, end);
    if (p < end && *p == ']')
        return p + 1;
    s_span_t *spans = NULL;
    size_t count = 0, alloc = 0, total = 0, parsed = 0;
    const char *stop = NULL;
    const char *first = p;
    bool tight = true;              //  items separated by exactly ", " (json.dumps)
    ufo_canon_t canon;
    ufo_canon_begin (&canon, p, (size_t) (end - p));
    for (;;) {
        if (p >= end || *p != '{')
            break;
        ufo_value_t *map = NULL;
        const char *stop_canon = ufo_canon_next (&canon, p);
        size_t n = stop_canon ? (size_t) (stop_canon - p) : 0;
        if (!n) {
            const char *stop_at = s_skip_object (p, end);
            if (!stop_at)
                break;
            n = (size_t) (stop_at - p);
            ufo_error_t err;
            map = ufo_json_parse (p, n, &ufo_model_limits, &err);
            if (!map)
                break;
            parsed++;
        }
        if (count == alloc) {
            alloc = alloc ? alloc * 2 : 64;
            spans = (s_span_t *) ufo_realloc (spans, alloc * sizeof (s_span_t));
        }
        spans [count].p = p;
        spans [count].len = n;
        spans [count].map = map;
        count++;
        total += n + 2;
        const char *after = p + n;
        p = s_ws (after, end);
        if (p >= end)
            break;
        if (*p == ']') {
            stop = p + 1;
            tight = tight && p == after;
            break;
        }
        if (*p != ',')
            break;
        p = s_ws (p + 1, end);
        tight = tight && p == after + 2 && after [1] == ' ';
    }
    if (!stop) {
        for (size_t i = 0; i < count; i++)
            ufo_value_destroy (&spans [i].map);
        free (spans);
        return NULL;
    }
    ufo_memory__reserve (fresh, count, 0);
    ufo_item_slab_t *slab = ufo_item__slab_new (count);
    if (parsed) {
        //  mixed: lazy items own their text, parsed ones their map; the memory's text is
        //  put together on its first serialisation
        for (size_t i = 0; i < count; i++) {
            ufo_item_t *item = ufo_item__slab_take (slab);
            if (spans [i].map) {
                item->fields = spans [i].map;
                spans [i].map = NULL;
            }
            else {
                item->text = ufo_strndup (spans [i].p, spans [i].len);
                item->text_len = spans [i].len;
            }
            item->owner = fresh;
            fresh->items [i] = item;
        }
        fresh->count = count;
        fresh->synced = 0;
    }
    else {
        //  one buffer of the exact size: the text is copied once and never moved
        ufo_buf_t *buf = &fresh->joined;
        buf->data = (char *) ufo_malloc (total + 1);
        buf->cap = total + 1;
        char *o = buf->data;
        if (tight) {
            //  the list's inner text is already the joined form: one copy
            size_t len = (size_t) (spans [count - 1].p + spans [count - 1].len - first);
            memcpy (o, first, len);
            for (size_t i = 0; i < count; i++) {
                ufo_item_t *item = ufo_item__slab_take (slab);
                item->owner = fresh;
                item->in_owner = true;
                item->owner_off = (size_t) (spans [i].p - first);
                item->text_len = spans [i].len;
                fresh->items [i] = item;
            }
            o += len;
        }
        else
        for (size_t i = 0; i < count; i++) {
            if (i) {
                *o++ = ',';
                *o++ = ' ';
            }
            ufo_item_t *item = ufo_item__slab_take (slab);
            item->owner = fresh;
            item->in_owner = true;
            item->owner_off = (size_t) (o - buf->data);
            item->text_len = spans [i].len;
            memcpy (o, spans [i].p, spans [i].len);
            o += spans [i].len;
            fresh->items [i] = item;
        }
        *o = 0;
        buf->len = (size_t) (o - buf->data);
        fresh->count = fresh->synced = count;
    }
    ufo_item__slab_done (&slab);
    free (spans);
    return stop;
}

const char *
ufo_memory__load_list (ufo_memory_t *fresh, const char *p, const char *end)
{
    return s_load_list (fresh, p, end);
}

int
ufo_memory_from_json (ufo_memory_t *self, const char *text, size_t len, ufo_error_t *err)
{
    assert (self);
    if (!text)
        return ufo_error_set (err, UFO_E_INVALID, "memory: no JSON text");
    const char *end = text + len;
    ufo_memory_t *fresh = ufo_memory_new ();
    const char *p = s_load_list (fresh, s_ws (text, end), end);
    if (p && s_ws (p, end) == end) {
        ufo_memory__swap (self, fresh);
        ufo_memory_destroy (&fresh);
        return 0;
    }
    ufo_memory_destroy (&fresh);
    ufo_value_t *list = ufo_json_parse (text, len, &ufo_model_limits, err);
    if (!list)
        return -1;
    int rc = ufo_memory_from_list (self, list, err);
    ufo_value_destroy (&list);
    return rc;
}
