/*  ufo_value.c - JSON-like value trees with ordered maps.

    Layout: a string value is one allocation (the node followed by its bytes); map keys
    shorter than UFO_KEY_INLINE bytes live inside the map entry; maps are arrays in
    insertion order, looked up by a linear scan up to UFO_MAP_HASH_MIN pairs and through an
    open-addressing index of entry positions beyond that, so a hostile document with a
    million keys costs linear time, not quadratic. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_value.h"
#include "value_private.h"
#include "value_model.h"

#define UFO_MAP_HASH_MIN 16
#define UFO_KEY_INLINE UFO_VALUE_KEY_INLINE

static inline const char *
s_key (const s_entry_t *e)
{
    return e->keylen < UFO_KEY_INLINE ? e->k.inl : e->k.heap;
}

static ufo_value_t *
s_node (uint8_t type)
{
    ufo_value_t *self = (ufo_value_t *) ufo_malloc (sizeof (ufo_value_t));
    *self = (ufo_value_t) { .type = type };
    return self;
}

ufo_value_t *
ufo_value_new_null (void)
{
    return s_node (UFO_TNULL);
}

ufo_value_t *
ufo_value_new_bool (bool b)
{
    ufo_value_t *self = s_node (UFO_TBOOL);
    self->u.b = b;
    return self;
}

ufo_value_t *
ufo_value_new_int (int64_t i)
{
    ufo_value_t *self = s_node (UFO_TINT);
    self->u.i = i;
    return self;
}

ufo_value_t *
ufo_value_new_float (double f)
{
    ufo_value_t *self = s_node (UFO_TFLOAT);
    self->u.f = f;
    return self;
}

//  A string node of len bytes (content left to the caller), NUL-terminated.
static ufo_value_t *
s_string_node (size_t len)
{
    ufo_value_t *self = (ufo_value_t *) ufo_malloc (sizeof (ufo_value_t) + len + 1);
    *self = (ufo_value_t) { .type = UFO_TSTRING };
    self->len = len;
    self->u.s = (char *) (self + 1);
    self->u.s [len] = 0;
    return self;
}

ufo_value_t *
ufo_value_new_stringn (const char *s, size_t len)
{
    ufo_value_t *self = s_string_node (len);
    if (len)
        memcpy (self->u.s, s, len);
    return self;
}

ufo_value_t *
ufo_value_new_string_fill (size_t len, char **data_p)
{
    assert (data_p);
    ufo_value_t *self = s_string_node (len);
    *data_p = self->u.s;
    return self;
}

ufo_value_t *
ufo_value_new_string (const char *s)
{
    return ufo_value_new_stringn (s ? s : "", s ? strlen (s) : 0);
}

ufo_value_t *
ufo_value_new_stringf (const char *format, ...)
{
    ufo_buf_t buf = {0};
    va_list args;
    va_start (args, format);
    char small [256];
    int n = vsnprintf (small, sizeof (small), format, args);
    va_end (args);
    if (n < 0)
        n = 0;
    if ((size_t) n < sizeof (small))
        return ufo_value_new_stringn (small, (size_t) n);
    ufo_buf_reserve (&buf, (size_t) n);
    va_start (args, format);
    vsnprintf (buf.data, (size_t) n + 1, format, args);
    va_end (args);
    ufo_value_t *self = ufo_value_new_stringn (buf.data, (size_t) n);
    ufo_buf_free (&buf);
    return self;
}

ufo_value_t *
ufo_value_new_list (void)
{
    return s_node (UFO_TLIST);
}

ufo_value_t *
ufo_value_new_map (void)
{
    return s_node (UFO_TMAP);
}

void
ufo_value__entry_key_free (s_entry_t *e)
{
    if (e->keylen >= UFO_KEY_INLINE)
        free (e->k.heap);
}

static void
s_entry_free (s_entry_t *e)
{
    ufo_value__entry_key_free (e);
    ufo_value_destroy (&e->value);
}

//  Makes room for one more element (elem bytes each) in a list's or map's array.
static void
s_grow (ufo_value_t *self, size_t elem)
{
    assert (self->cap < UINT32_MAX / 2);
    uint32_t cap = self->cap ? self->cap * 2 : 4;
    if (self->type == UFO_TLIST)
        self->u.items = (ufo_value_t **) ufo_realloc (self->u.items, cap * elem);
    else
        self->u.entries = (s_entry_t *) ufo_realloc (self->u.entries, cap * elem);
    self->cap = cap;
}

//  Destroys every element / pair of a list or map (frozen or not).
static void
s_clear (ufo_value_t *self)
{
    if (self->type == UFO_TLIST) {
        for (size_t i = 0; i < self->len; i++)
            ufo_value_destroy (&self->u.items [i]);
        self->len = 0;
    }
    else
    if (self->type == UFO_TMAP) {
        for (size_t i = 0; i < self->len; i++)
            s_entry_free (&self->u.entries [i]);
        self->len = 0;
        free (self->hidx);
        self->hidx = NULL;
        self->hcap = 0;
    }
}

void
ufo_value_clear (ufo_value_t *self)
{
    if (!self)
        return;
    assert (!(self->flags & S_FROZEN));
    s_clear (self);
}

void
ufo_value_destroy (ufo_value_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_value_t *self = *self_p;
    *self_p = NULL;
    if (self->refs) {
        //  a shared frozen value: drop one reference, the last one destroys it
        self->refs--;
        return;
    }
    //  Iterative for lists of lists would be nicer; depth is bounded by every decoder.
    if (self->type == UFO_TLIST) {
        s_clear (self);
        free (self->u.items);
    }
    else
    if (self->type == UFO_TMAP) {
        s_clear (self);
        free (self->u.entries);
    }
    free (self);
}

void
ufo_value_freeze (ufo_value_t *self)
{
    if (!self || (self->flags & S_FROZEN))
        return;                 //  a frozen node's subtree is frozen already
    self->flags |= S_FROZEN;
    if (self->type == UFO_TLIST)
        for (size_t i = 0; i < self->len; i++)
            ufo_value_freeze (self->u.items [i]);
    else
    if (self->type == UFO_TMAP)
        for (size_t i = 0; i < self->len; i++)
            ufo_value_freeze (self->u.entries [i].value);
}

bool
ufo_value_frozen (const ufo_value_t *self)
{
    return self && (self->flags & S_FROZEN);
}

ufo_value_t *
ufo_value_share (ufo_value_t *self)
{
    assert (ufo_value_frozen (self));
    assert (self->refs < UINT32_MAX);
    self->refs++;
    return self;
}

bool
ufo_value__thaw (ufo_value_t *self)
{
    if (self->refs)
        return false;
    self->flags &= (uint8_t) ~S_FROZEN;
    return true;
}

ufo_type_t
ufo_value_type (const ufo_value_t *self)
{
    return self ? (ufo_type_t) self->type : UFO_TNULL;
}

const char *
ufo_value_type_name (ufo_type_t type)
{
    static const char *names [] = { "null", "bool", "int", "float", "string", "list", "map" };
    return (unsigned) type < UFO_ARRAY_SIZE (names) ? names [type] : "unknown";
}

bool
ufo_value_bool (const ufo_value_t *self)
{
    return self && self->type == UFO_TBOOL ? self->u.b : false;
}

int64_t
ufo_value_int (const ufo_value_t *self)
{
    return self && self->type == UFO_TINT ? self->u.i : 0;
}

double
ufo_value_float (const ufo_value_t *self)
{
    if (!self)
        return 0.0;
    if (self->type == UFO_TFLOAT)
        return self->u.f;
    if (self->type == UFO_TINT)
        return (double) self->u.i;
    return 0.0;
}

const char *
ufo_value_str (const ufo_value_t *self)
{
    return self && self->type == UFO_TSTRING ? self->u.s : NULL;
}

size_t
ufo_value_strlen (const ufo_value_t *self)
{
    return self && self->type == UFO_TSTRING ? self->len : 0;
}

size_t
ufo_value_size (const ufo_value_t *self)
{
    return self && (self->type == UFO_TLIST || self->type == UFO_TMAP) ? self->len : 0;
}

void
ufo_value_view (const ufo_value_t *self, ufo_value_view_t *view)
{
    assert (view);
    ufo_value__view (self, view);
}

size_t
ufo_value_map_entries (const ufo_value_t *self, const ufo_value_entry_t **out)
{
    assert (out);
    if (!self || self->type != UFO_TMAP) {
        *out = NULL;
        return 0;
    }
    *out = self->u.entries;
    return self->len;
}

//  --- Lists -------------------------------------------------------------------

ufo_value_t *
ufo_value_list_at (const ufo_value_t *self, size_t index)
{
    if (!self || self->type != UFO_TLIST || index >= self->len)
        return NULL;
    return self->u.items [index];
}

ufo_value_t *
ufo_value_list_push (ufo_value_t *self, ufo_value_t **item_p)
{
    assert (self && self->type == UFO_TLIST);
    assert (!(self->flags & S_FROZEN));
    assert (item_p && *item_p);
    if (self->len == self->cap)
        s_grow (self, sizeof (ufo_value_t *));
    ufo_value_t *item = *item_p;
    self->u.items [self->len++] = item;
    *item_p = NULL;
    return item;
}

ufo_value_t *
ufo_value_list_push_str (ufo_value_t *self, const char *s)
{
    ufo_value_t *item = ufo_value_new_string (s);
    return ufo_value_list_push (self, &item);
}

ufo_value_t *
ufo_value_list_push_int (ufo_value_t *self, int64_t i)
{
    ufo_value_t *item = ufo_value_new_int (i);
    return ufo_value_list_push (self, &item);
}

ufo_value_t *
ufo_value_list_set (ufo_value_t *self, size_t index, ufo_value_t **item_p)
{
    assert (self && self->type == UFO_TLIST && index < self->len);
    assert (!(self->flags & S_FROZEN));
    assert (item_p && *item_p);
    ufo_value_t *item = *item_p;
    *item_p = NULL;
    ufo_value_destroy (&self->u.items [index]);
    self->u.items [index] = item;
    return item;
}

int
ufo_value_list_remove (ufo_value_t *self, size_t index)
{
    if (!self || self->type != UFO_TLIST || index >= self->len)
        return -1;
    assert (!(self->flags & S_FROZEN));
    ufo_value_destroy (&self->u.items [index]);
    memmove (self->u.items + index, self->u.items + index + 1,
             (self->len - index - 1) * sizeof (ufo_value_t *));
    self->len--;
    return 0;
}

//  --- Maps --------------------------------------------------------------------

static inline uint64_t
s_hash (const char *key, size_t len)
{
    //  FNV-1a, 64-bit
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char) key [i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void
s_hidx_insert (ufo_value_t *self, size_t pos)
{
    const s_entry_t *e = &self->u.entries [pos];
    size_t mask = self->hcap - 1;
    size_t slot = (size_t) s_hash (s_key (e), e->keylen) & mask;
    while (self->hidx [slot])
        slot = (slot + 1) & mask;
    self->hidx [slot] = (uint32_t) (pos + 1);
}

static void
s_hidx_rebuild (ufo_value_t *self)
{
    free (self->hidx);
    self->hidx = NULL;
    self->hcap = 0;
    if (self->len < UFO_MAP_HASH_MIN)
        return;
    size_t hcap = 64;
    while (hcap < self->len * 2)
        hcap *= 2;
    assert (hcap <= UINT32_MAX);
    self->hidx = (uint32_t *) ufo_calloc (hcap, sizeof (uint32_t));
    self->hcap = (uint32_t) hcap;
    for (size_t i = 0; i < self->len; i++)
        s_hidx_insert (self, i);
}

//  Returns the position of key, or -1.
static ptrdiff_t
s_map_find (const ufo_value_t *self, const char *key, size_t keylen)
{
    if (self->hidx) {
        size_t mask = self->hcap - 1;
        size_t slot = (size_t) s_hash (key, keylen) & mask;
        while (self->hidx [slot]) {
            const s_entry_t *e = &self->u.entries [self->hidx [slot] - 1];
            if (e->keylen == keylen && memcmp (s_key (e), key, keylen) == 0)
                return (ptrdiff_t) self->hidx [slot] - 1;
            slot = (slot + 1) & mask;
        }
        return -1;
    }
    for (size_t i = 0; i < self->len; i++) {
        const s_entry_t *e = &self->u.entries [i];
        if (e->keylen == keylen && memcmp (s_key (e), key, keylen) == 0)
            return (ptrdiff_t) i;
    }
    return -1;
}

//  Appends the pair *e (key and value taken) at the end of map and indexes it.
static void
s_map_append (ufo_value_t *self, const s_entry_t *e)
{
    if (self->len == self->cap)
        s_grow (self, sizeof (s_entry_t));
    self->u.entries [self->len++] = *e;
    if (self->hidx) {
        if (self->len * 2 > self->hcap)
            s_hidx_rebuild (self);
        else
            s_hidx_insert (self, self->len - 1);
    }
    else
    if (self->len >= UFO_MAP_HASH_MIN)
        s_hidx_rebuild (self);
}

//  Moves the pair *e into map (taking its key and value), replacing the value of an
//  existing equal key in place.
static void
s_map_put (ufo_value_t *self, s_entry_t *e)
{
    assert (!(self->flags & S_FROZEN));
    ptrdiff_t pos = s_map_find (self, s_key (e), e->keylen);
    if (pos >= 0) {
        s_entry_t *old = &self->u.entries [pos];
        ufo_value_destroy (&old->value);
        old->value = e->value;
        ufo_value__entry_key_free (e);
    }
    else
        s_map_append (self, e);
}

ufo_value_t *
ufo_value_map_setn (ufo_value_t *self, const char *key, size_t keylen, ufo_value_t **value_p)
{
    assert (self && self->type == UFO_TMAP);
    assert (!(self->flags & S_FROZEN));
    assert (key && value_p && *value_p);
    assert (keylen < UINT32_MAX);
    ufo_value_t *value = *value_p;
    *value_p = NULL;
    ptrdiff_t pos = s_map_find (self, key, keylen);
    if (pos >= 0) {
        s_entry_t *e = &self->u.entries [pos];
        ufo_value_destroy (&e->value);
        e->value = value;
        return value;
    }
    s_entry_t e;
    e.keylen = (uint32_t) keylen;
    char *dest = keylen < UFO_KEY_INLINE ? e.k.inl : (e.k.heap = (char *) ufo_malloc (keylen + 1));
    memcpy (dest, key, keylen);
    dest [keylen] = 0;
    e.plain = ufo_value__key_plain (key, keylen);
    e.value = value;
    s_map_append (self, &e);
    return value;
}

ufo_value_t *
ufo_value_map_set (ufo_value_t *self, const char *key, ufo_value_t **value_p)
{
    assert (key);
    return ufo_value_map_setn (self, key, strlen (key), value_p);
}

ufo_value_t *
ufo_value_map_get (const ufo_value_t *self, const char *key)
{
    if (!self || self->type != UFO_TMAP || !key)
        return NULL;
    ptrdiff_t pos = s_map_find (self, key, strlen (key));
    return pos >= 0 ? self->u.entries [pos].value : NULL;
}

ufo_value_t *
ufo_value_map_getn (const ufo_value_t *self, const char *key, size_t keylen)
{
    if (!self || self->type != UFO_TMAP || !key)
        return NULL;
    ptrdiff_t pos = s_map_find (self, key, keylen);
    return pos >= 0 ? self->u.entries [pos].value : NULL;
}

bool
ufo_value_map_has (const ufo_value_t *self, const char *key)
{
    return ufo_value_map_get (self, key) != NULL;
}

const char *
ufo_value_map_key_at (const ufo_value_t *self, size_t index)
{
    if (!self || self->type != UFO_TMAP || index >= self->len)
        return NULL;
    return s_key (&self->u.entries [index]);
}

size_t
ufo_value_map_keylen_at (const ufo_value_t *self, size_t index)
{
    if (!self || self->type != UFO_TMAP || index >= self->len)
        return 0;
    return self->u.entries [index].keylen;
}

ufo_value_t *
ufo_value_map_value_at (const ufo_value_t *self, size_t index)
{
    if (!self || self->type != UFO_TMAP || index >= self->len)
        return NULL;
    return self->u.entries [index].value;
}

ufo_value_t *
ufo_value_map_set_str (ufo_value_t *self, const char *key, const char *s)
{
    ufo_value_t *v = ufo_value_new_string (s);
    return ufo_value_map_set (self, key, &v);
}

ufo_value_t *
ufo_value_map_set_int (ufo_value_t *self, const char *key, int64_t i)
{
    ufo_value_t *v = ufo_value_new_int (i);
    return ufo_value_map_set (self, key, &v);
}

ufo_value_t *
ufo_value_map_set_float (ufo_value_t *self, const char *key, double f)
{
    ufo_value_t *v = ufo_value_new_float (f);
    return ufo_value_map_set (self, key, &v);
}

ufo_value_t *
ufo_value_map_set_bool (ufo_value_t *self, const char *key, bool b)
{
    ufo_value_t *v = ufo_value_new_bool (b);
    return ufo_value_map_set (self, key, &v);
}

ufo_value_t *
ufo_value_map_set_null (ufo_value_t *self, const char *key)
{
    ufo_value_t *v = ufo_value_new_null ();
    return ufo_value_map_set (self, key, &v);
}

ufo_value_t *
ufo_value_map_set_copy (ufo_value_t *self, const char *key, const ufo_value_t *value)
{
    ufo_value_t *v = value ? ufo_value_dup (value) : ufo_value_new_null ();
    return ufo_value_map_set (self, key, &v);
}

bool
ufo_value_map_remove (ufo_value_t *self, const char *key)
{
    if (!self || self->type != UFO_TMAP || !key)
        return false;
    ptrdiff_t pos = s_map_find (self, key, strlen (key));
    if (pos < 0)
        return false;
    assert (!(self->flags & S_FROZEN));
    s_entry_free (&self->u.entries [pos]);
    memmove (self->u.entries + pos, self->u.entries + pos + 1,
             (self->len - (size_t) pos - 1) * sizeof (s_entry_t));
    self->len--;
    if (self->hidx)
        s_hidx_rebuild (self);
    return true;
}

const char *
ufo_value_map_str (const ufo_value_t *self, const char *key, const char *dflt)
{
    const ufo_value_t *v = ufo_value_map_get (self, key);
    return v && v->type == UFO_TSTRING ? v->u.s : dflt;
}

int64_t
ufo_value_map_int (const ufo_value_t *self, const char *key, int64_t dflt)
{
    const ufo_value_t *v = ufo_value_map_get (self, key);
    return v && v->type == UFO_TINT ? v->u.i : dflt;
}

double
ufo_value_map_float (const ufo_value_t *self, const char *key, double dflt)
{
    const ufo_value_t *v = ufo_value_map_get (self, key);
    if (v && v->type == UFO_TFLOAT)
        return v->u.f;
    if (v && v->type == UFO_TINT)
        return (double) v->u.i;
    return dflt;
}

bool
ufo_value_map_bool (const ufo_value_t *self, const char *key, bool dflt)
{
    const ufo_value_t *v = ufo_value_map_get (self, key);
    return v && v->type == UFO_TBOOL ? v->u.b : dflt;
}

ufo_value_t *
ufo_value_path (const ufo_value_t *self, const char *path)
{
    if (!self || !path)
        return NULL;
    const ufo_value_t *cursor = self;
    const char *p = path;
    while (cursor) {
        const char *dot = strchr (p, '.');
        size_t n = dot ? (size_t) (dot - p) : strlen (p);
        if (cursor->type == UFO_TMAP)
            cursor = ufo_value_map_getn (cursor, p, n);
        else
        if (cursor->type == UFO_TLIST) {
            if (n == 0 || n > 19)
                return NULL;
            size_t index = 0;
            for (size_t i = 0; i < n; i++) {
                if (!isdigit ((unsigned char) p [i]))
                    return NULL;
                index = index * 10 + (size_t) (p [i] - '0');
            }
            cursor = ufo_value_list_at (cursor, index);
        }
        else
            return NULL;
        if (!dot)
            break;
        p = dot + 1;
    }
    return (ufo_value_t *) cursor;
}

//  --- Built whole (the parser), deep copy ---------------------------------------

ufo_value_t *
ufo_value__list_of (ufo_value_t *const *items, size_t n)
{
    assert (n < UINT32_MAX / 2);
    ufo_value_t *self = s_node (UFO_TLIST);
    if (n) {
        self->u.items = (ufo_value_t **) ufo_malloc (n * sizeof (ufo_value_t *));
        memcpy (self->u.items, items, n * sizeof (ufo_value_t *));
        self->len = n;
        self->cap = (uint32_t) n;
    }
    return self;
}

ufo_value_t *
ufo_value__map_of (s_entry_t *entries, size_t n)
{
    assert (n < UINT32_MAX / 2);
    ufo_value_t *self = s_node (UFO_TMAP);
    if (n) {
        self->u.entries = (s_entry_t *) ufo_malloc (n * sizeof (s_entry_t));
        self->cap = (uint32_t) n;
    }
    for (size_t i = 0; i < n; i++)
        s_map_put (self, &entries [i]);
    return self;
}

//  Deep copy of self (not NULL); every node of the copy gets the flags fl (0 or S_FROZEN).
static ufo_value_t *
s_copy (const ufo_value_t *self, uint8_t fl)
{
    ufo_value_t *copy;
    if (self->type == UFO_TSTRING)
        copy = ufo_value_new_stringn (self->u.s, self->len);
    else {
        copy = s_node (self->type);
        copy->u = self->u;
    }
    copy->flags = fl;
    size_t n = self->len;
    if (self->type == UFO_TLIST && n) {
        copy->u.items = (ufo_value_t **) ufo_malloc (n * sizeof (ufo_value_t *));
        for (size_t i = 0; i < n; i++)
            copy->u.items [i] = s_copy (self->u.items [i], fl);
        copy->len = n;
        copy->cap = (uint32_t) n;
    }
    else
    if (self->type == UFO_TMAP && n) {
        copy->u.entries = (s_entry_t *) ufo_malloc (n * sizeof (s_entry_t));
        for (size_t i = 0; i < n; i++) {
            const s_entry_t *from = &self->u.entries [i];
            s_entry_t *to = &copy->u.entries [i];
            *to = *from;
            if (from->keylen >= UFO_KEY_INLINE)
                to->k.heap = ufo_strndup (from->k.heap, from->keylen);
            to->value = s_copy (from->value, fl);
        }
        copy->len = n;
        copy->cap = (uint32_t) n;
        if (n >= UFO_MAP_HASH_MIN)
            s_hidx_rebuild (copy);
    }
    else
    if (self->type == UFO_TLIST || self->type == UFO_TMAP)
        copy->u.items = NULL;           //  empty: no array
    return copy;
}

ufo_value_t *
ufo_value_dup (const ufo_value_t *self)
{
    return self ? s_copy (self, 0) : NULL;
}

ufo_value_t *
ufo_value__list_take (ufo_value_t *list, size_t index)
{
    assert (list && list->type == UFO_TLIST && !(list->flags & S_FROZEN));
    assert (index < list->len);
    ufo_value_t *item = list->u.items [index];
    list->u.items [index] = s_node (UFO_TNULL);
    return item;
}

ufo_value_t *
ufo_value__dup_frozen (const ufo_value_t *self)
{
    return self ? s_copy (self, S_FROZEN) : NULL;
}

//  --- Compare -------------------------------------------------------------------

bool
ufo_value_equal (const ufo_value_t *a, const ufo_value_t *b)
{
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return false;
    switch (a->type) {
        case UFO_TNULL:
            return true;
        case UFO_TBOOL:
            return a->u.b == b->u.b;
        case UFO_TINT:
            return a->u.i == b->u.i;
        case UFO_TFLOAT:
            return a->u.f == b->u.f || (isnan (a->u.f) && isnan (b->u.f));
        case UFO_TSTRING:
            return a->len == b->len && memcmp (a->u.s, b->u.s, a->len) == 0;
        case UFO_TLIST:
            if (a->len != b->len)
                return false;
            for (size_t i = 0; i < a->len; i++)
                if (!ufo_value_equal (a->u.items [i], b->u.items [i]))
                    return false;
            return true;
        case UFO_TMAP:
            if (a->len != b->len)
                return false;
            for (size_t i = 0; i < a->len; i++) {
                const s_entry_t *e = &a->u.entries [i];
                if (!ufo_value_equal (e->value, ufo_value_map_getn (b, s_key (e), e->keylen)))
                    return false;
            }
            return true;
        default:
            return false;
    }
}
