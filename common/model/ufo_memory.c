/*  ufo_memory.c - ordered list of items; its JSON list text is put together from the
    items' cached texts. See ufo_memory.h for the contract, model_private.h for the cache. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "model_private.h"

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
    ufo_item_destroy (&item);
}

void
ufo_memory_clear (ufo_memory_t *self)
{
    assert (self);
    for (size_t i = 0; i < self->count; i++)
        s_drop_item (self->items [i]);
    self->count = 0;
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
    free (self);
    *self_p = NULL;
}

//  Drops the oldest items beyond the cap.
static void
s_apply_cap (ufo_memory_t *self)
{
    if (!self->cap || self->count <= self->cap)
        return;
    size_t excess = self->count - self->cap;
    for (size_t i = 0; i < excess; i++)
        s_drop_item (self->items [i]);
    memmove (self->items, self->items + excess, self->cap * sizeof (ufo_item_t *));
    self->count = self->cap;
}

ufo_item_t *
ufo_memory_add (ufo_memory_t *self, ufo_item_t **item_p)
{
    assert (self && item_p && *item_p);
    ufo_item_t *item = *item_p;
    assert (!item->owner);          //  an item lives in one memory at a time
    *item_p = NULL;
    if (self->count == self->alloc) {
        self->alloc = self->alloc ? self->alloc * 2 : 16;
        self->items = (ufo_item_t **) ufo_realloc (self->items,
                                                   self->alloc * sizeof (ufo_item_t *));
    }
    item->owner = self;
    self->items [self->count++] = item;
    s_apply_cap (self);
    return item;
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
    for (size_t i = 0; i < n; i++) {
        ufo_item_t *item = ufo_item_from_map (ufo_value_list_at (list, i), NULL);
        ufo_memory_add (fresh, &item);
    }
    ufo_memory__swap (self, fresh);
    ufo_memory_destroy (&fresh);
    return 0;
}

size_t
ufo_memory__json_len (ufo_memory_t *self)
{
    size_t len = 2;
    for (size_t i = 0; i < self->count; i++) {
        size_t n;
        ufo_item__text (self->items [i], &n);
        len += n + (i ? 2 : 0);
    }
    return len;
}

char *
ufo_memory__write_json (ufo_memory_t *self, char *out)
{
    *out++ = '[';
    for (size_t i = 0; i < self->count; i++) {
        if (i) {
            *out++ = ',';
            *out++ = ' ';
        }
        size_t n;
        const char *text = ufo_item__text (self->items [i], &n);
        memcpy (out, text, n);
        out += n;
    }
    *out++ = ']';
    return out;
}

void
ufo_memory_append_json (ufo_memory_t *self, ufo_buf_t *buf)
{
    assert (self && buf);
    size_t len = ufo_memory__json_len (self);
    ufo_buf_reserve (buf, len);
    buf->len = (size_t) (ufo_memory__write_json (self, buf->data + buf->len) - buf->data);
    buf->data [buf->len] = 0;
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

int
ufo_memory__from_list_take (ufo_memory_t *self, ufo_value_t *list, const char *name,
                            ufo_error_t *err)
{
    if (s_check_list (list, name, err))
        return -1;
    ufo_memory_t *fresh = ufo_memory_new ();
    size_t n = ufo_value_size (list);
    for (size_t i = 0; i < n; i++) {
        ufo_value_t *map = ufo_value__list_take (list, i);
        ufo_item_t *item = ufo_item_from_map_take (&map, NULL);
        ufo_memory_add (fresh, &item);
    }
    ufo_memory__swap (self, fresh);
    ufo_memory_destroy (&fresh);
    return 0;
}

int
ufo_memory_from_json (ufo_memory_t *self, const char *text, size_t len, ufo_error_t *err)
{
    assert (self);
    if (!text)
        return ufo_error_set (err, UFO_E_INVALID, "memory: no JSON text");
    ufo_value_t *list = ufo_json_parse (text, len, &ufo_model_limits, err);
    if (!list)
        return -1;
    int rc = ufo_memory__from_list_take (self, list, "memory", err);
    ufo_value_destroy (&list);
    return rc;
}
