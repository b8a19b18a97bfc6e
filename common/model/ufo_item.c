/*  ufo_item.c - one blackboard record with a cached canonical JSON text.
    See ufo_item.h for the contract and model_private.h for the cache design. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "model_private.h"

const ufo_json_limits_t ufo_model_limits = { 128, 0, true };

static ufo_item_t *
s_alloc (void)
{
    return (ufo_item_t *) ufo_calloc (1, sizeof (ufo_item_t));
}

ufo_item_t *
ufo_item_new (void)
{
    ufo_item_t *self = s_alloc ();
    self->fields = ufo_value_new_map ();
    return self;
}

void
ufo_item_destroy (ufo_item_t **self_p)
{
    assert (self_p);
    ufo_item_t *self = *self_p;
    if (!self)
        return;
    assert (!self->owner);          //  items held by a memory belong to it
    ufo_value_destroy (&self->fields);
    free (self->text);
    free (self);
    *self_p = NULL;
}

const char *
ufo_item__text (ufo_item_t *self, size_t *len_p)
{
    if (!self->text) {
        self->text = ufo_json_dump (self->fields, UFO_JSON_PY, &self->text_len);
        //  the writer's buffer grows by doubling: keep only what the text needs
        self->text = (char *) ufo_realloc (self->text, self->text_len + 1);
    }
    if (len_p)
        *len_p = self->text_len;
    return self->text;
}

//  Called before every mutation: the cached text is dropped, and a map shared by
//  ufo_item_to_map is replaced by a copy of our own.
static void
s_touch (ufo_item_t *self)
{
    if (ufo_value_frozen (self->fields) && !ufo_value__thaw (self->fields)) {
        //  the map is shared (ufo_item_to_map): change a copy of our own (what is below
        //  its top stays frozen: the item only ever replaces whole fields)
        ufo_value_t *copy = ufo_value__dup_frozen (self->fields);
        ufo_value_destroy (&self->fields);
        self->fields = copy;
        ufo_value__thaw (copy);
    }
    free (self->text);
    self->text = NULL;
    self->text_len = 0;
}

ufo_item_t *
ufo_item_dup (ufo_item_t *self)
{
    assert (self);
    ufo_item_t *copy = s_alloc ();
    copy->fields = ufo_value__dup_frozen (self->fields);
    return copy;
}

void
ufo_item_set (ufo_item_t *self, const char *key, ufo_value_t **value_p)
{
    assert (self && key && value_p && *value_p);
    s_touch (self);
    ufo_value_map_set (self->fields, key, value_p);
}

void
ufo_item_set_str (ufo_item_t *self, const char *key, const char *s)
{
    ufo_value_t *v = ufo_value_new_string (s);
    ufo_item_set (self, key, &v);
}

void
ufo_item_set_int (ufo_item_t *self, const char *key, int64_t i)
{
    ufo_value_t *v = ufo_value_new_int (i);
    ufo_item_set (self, key, &v);
}

void
ufo_item_set_float (ufo_item_t *self, const char *key, double f)
{
    ufo_value_t *v = ufo_value_new_float (f);
    ufo_item_set (self, key, &v);
}

void
ufo_item_set_bool (ufo_item_t *self, const char *key, bool b)
{
    ufo_value_t *v = ufo_value_new_bool (b);
    ufo_item_set (self, key, &v);
}

void
ufo_item_set_null (ufo_item_t *self, const char *key)
{
    ufo_value_t *v = ufo_value_new_null ();
    ufo_item_set (self, key, &v);
}

void
ufo_item_set_copy (ufo_item_t *self, const char *key, const ufo_value_t *value)
{
    ufo_value_t *v = value ? ufo_value_dup (value) : ufo_value_new_null ();
    ufo_item_set (self, key, &v);
}

const ufo_value_t *
ufo_item_get (ufo_item_t *self, const char *key)
{
    assert (self);
    if (!key)
        return NULL;
    return ufo_value_map_get (self->fields, key);
}

bool
ufo_item_has (ufo_item_t *self, const char *key)
{
    return ufo_item_get (self, key) != NULL;
}

const char *
ufo_item_get_str (ufo_item_t *self, const char *key, const char *dflt)
{
    const ufo_value_t *v = ufo_item_get (self, key);
    return v && ufo_value_type (v) == UFO_TSTRING ? ufo_value_str (v) : dflt;
}

int64_t
ufo_item_get_int (ufo_item_t *self, const char *key, int64_t dflt)
{
    const ufo_value_t *v = ufo_item_get (self, key);
    return v && ufo_value_type (v) == UFO_TINT ? ufo_value_int (v) : dflt;
}

bool
ufo_item_remove (ufo_item_t *self, const char *key)
{
    assert (self);
    if (!key || !ufo_item_has (self, key))
        return false;
    s_touch (self);
    return ufo_value_map_remove (self->fields, key);
}

size_t
ufo_item_size (ufo_item_t *self)
{
    assert (self);
    return ufo_value_size (self->fields);
}

const char *
ufo_item_key_at (ufo_item_t *self, size_t index)
{
    assert (self);
    return ufo_value_map_key_at (self->fields, index);
}

const ufo_value_t *
ufo_item_fields (ufo_item_t *self)
{
    assert (self);
    return self->fields;
}

bool
ufo_item_step (ufo_item_t *self, int64_t *step_p)
{
    const ufo_value_t *v = ufo_item_get (self, "Step");
    if (!v || ufo_value_type (v) != UFO_TINT)
        v = ufo_item_get (self, "step");
    if (!v || ufo_value_type (v) != UFO_TINT)
        return false;
    if (step_p)
        *step_p = ufo_value_int (v);
    return true;
}

int
ufo_item_add_from_map (ufo_item_t *self, const ufo_value_t *map, ufo_error_t *err)
{
    assert (self);
    if (!map || ufo_value_type (map) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "item values: expected a map, got %s",
                              map ? ufo_value_type_name (ufo_value_type (map)) : "nothing");
    size_t n = ufo_value_size (map);
    if (n == 0)
        return 0;
    s_touch (self);
    for (size_t i = 0; i < n; i++)
        ufo_value_map_set_copy (self->fields, ufo_value_map_key_at (map, i),
                                ufo_value_map_value_at (map, i));
    return 0;
}

ufo_value_t *
ufo_item_filter (ufo_item_t *self, const char *const *keys, size_t nkeys)
{
    assert (self);
    ufo_value_t *out = ufo_value_new_map ();
    size_t n = ufo_value_size (self->fields);
    for (size_t i = 0; i < n; i++) {
        const char *key = ufo_value_map_key_at (self->fields, i);
        for (size_t k = 0; k < nkeys; k++) {
            if (keys [k] && strcmp (keys [k], key) == 0) {
                ufo_value_map_set_copy (out, key, ufo_value_map_value_at (self->fields, i));
                break;
            }
        }
    }
    return out;
}

ufo_value_t *
ufo_item_to_map (ufo_item_t *self)
{
    assert (self);
    ufo_value_freeze (self->fields);
    return ufo_value_share (self->fields);
}

ufo_item_t *
ufo_item_from_map (const ufo_value_t *map, ufo_error_t *err)
{
    if (!map || ufo_value_type (map) != UFO_TMAP) {
        ufo_error_set (err, UFO_E_TYPE, "item: expected a map, got %s",
                       map ? ufo_value_type_name (ufo_value_type (map)) : "nothing");
        return NULL;
    }
    ufo_item_t *self = s_alloc ();
    self->fields = ufo_value__dup_frozen (map);
    return self;
}

ufo_item_t *
ufo_item_from_map_take (ufo_value_t **map_p, ufo_error_t *err)
{
    assert (map_p);
    ufo_value_t *map = *map_p;
    *map_p = NULL;
    if (!map || ufo_value_type (map) != UFO_TMAP) {
        ufo_error_set (err, UFO_E_TYPE, "item: expected a map, got %s",
                       map ? ufo_value_type_name (ufo_value_type (map)) : "nothing");
        ufo_value_destroy (&map);
        return NULL;
    }
    ufo_item_t *self = s_alloc ();
    self->fields = map;
    return self;
}

const char *
ufo_item_json (ufo_item_t *self, size_t *len_p)
{
    assert (self);
    return ufo_item__text (self, len_p);
}

char *
ufo_item_to_json (ufo_item_t *self, int style, size_t *len_p)
{
    assert (self);
    if (style == UFO_JSON_PY) {
        size_t len;
        const char *text = ufo_item__text (self, &len);
        if (len_p)
            *len_p = len;
        return ufo_strndup (text, len);
    }
    return ufo_json_dump (self->fields, style, len_p);
}

ufo_item_t *
ufo_item_from_json (const char *text, size_t len, ufo_error_t *err)
{
    if (!text)
        return ufo_error_set (err, UFO_E_INVALID, "item: no JSON text"), NULL;
    ufo_value_t *map = ufo_json_parse (text, len, &ufo_model_limits, err);
    if (!map)
        return NULL;
    return ufo_item_from_map_take (&map, err);
}

void
ufo_item_to_msgpack (ufo_item_t *self, ufo_buf_t *buf)
{
    assert (self && buf);
    ufo_msgpack_append (buf, self->fields);
}

ufo_item_t *
ufo_item_from_msgpack (const void *data, size_t len, ufo_error_t *err)
{
    if (!data)
        return ufo_error_set (err, UFO_E_INVALID, "item: no msgpack data"), NULL;
    ufo_value_t *map = ufo_msgpack_decode (data, len, NULL, err);
    if (!map)
        return NULL;
    return ufo_item_from_map_take (&map, err);
}
