/*  value_private.h - private to ufo_value.c and the JSON modules (parser, writer): the
    layout of a value node. Not installed, not included by ufo.h. Every node, its string
    bytes (right after the node) and its element / pair array are plain heap allocations. */
#ifndef UFO_VALUE_PRIVATE_H_INCLUDED
#define UFO_VALUE_PRIVATE_H_INCLUDED

#include "ufo_value.h"

typedef ufo_value_entry_t s_entry_t;       //  public read-only view (ufo_value.h)

//  flags
#define S_FROZEN 1              //  read-only, and so is everything below it (ufo_value_freeze)

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
};

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

//  A list of the n values at items (ownership taken), its array of the exact size.
ufo_value_t *ufo_value__list_of (ufo_value_t *const *items, size_t n);
//  A map of the n pairs at entries, in order (keys and values taken; the entries' storage
//  stays the caller's). A later pair with the key of an earlier one replaces its value
//  in the earlier one's place, as ufo_value_map_set does.
ufo_value_t *ufo_value__map_of (s_entry_t *entries, size_t n);

//  --- ufo_json.c ---
//  strtod in the C locale (whatever the process's locale), on the len bytes at s (not
//  NUL-terminated). For the JSON parser and writer.
double ufo_json__strtod (const char *s, size_t len);

//  --- ufo_value.c ---
//  ufo_value__thaw, ufo_value__dup_frozen, ufo_value__list_take: value_model.h (the model uses them).
//  Frees what an entry owns besides its value (a long key).
void ufo_value__entry_key_free (s_entry_t *e);

#endif
