/*  model_private.h - private to the blackboard data model (ufo_item.c, ufo_memory.c,
    ufo_board.c). Not installed, not included by ufo.h.

    Text cache: every item keeps its canonical JSON text (Python json.dumps form) once it
    was asked for, until the item changes. A memory's JSON list is "[" + the items' texts
    joined by ", " + "]", put together from those texts when it is asked for: a prompt
    writes each item's text once, and later prompts copy it. */
#ifndef UFO_MODEL_PRIVATE_H_INCLUDED
#define UFO_MODEL_PRIVATE_H_INCLUDED

#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "value_model.h"

struct _ufo_item_t {
    ufo_value_t *fields;        //  map
    char *text;                 //  cached canonical text, or NULL
    size_t text_len;            //  its length
    ufo_memory_t *owner;        //  memory holding the item, or NULL
};

struct _ufo_memory_t {
    ufo_item_t **items;
    size_t count;
    size_t alloc;
    size_t cap;                 //  0 = no cap
};

//  Parse limits used for everything the model reads: NaN / Infinity allowed (as Python).
extern const ufo_json_limits_t ufo_model_limits;

//  --- ufo_item.c ---
//  Text of the item, computed and cached now if needed. Borrowed.
const char *ufo_item__text (ufo_item_t *self, size_t *len_p);

//  --- ufo_memory.c ---
//  Length of the memory's JSON list text ("[" + texts joined by ", " + "]"); computes
//  and caches the items' texts.
size_t ufo_memory__json_len (ufo_memory_t *self);
//  Writes that text (ufo_memory__json_len bytes, no NUL) at out, which must have room
//  (call ufo_memory__json_len first); returns the end of what it wrote.
char *ufo_memory__write_json (ufo_memory_t *self, char *out);
//  Exchanges the items of two memories; caps stay. Then applies caps.
void ufo_memory__swap (ufo_memory_t *a, ufo_memory_t *b);
//  ufo_memory_from_list, adopting the maps of list (they are taken out of it, nulls left
//  in their place; the caller still destroys list). name is used in messages.
int ufo_memory__from_list_take (ufo_memory_t *self, ufo_value_t *list, const char *name,
                                ufo_error_t *err);

//  ufo_value__thaw, ufo_value__dup_frozen, ufo_value__list_take (ufo_value.c): value_model.h

#endif
