/*  value_model.h - private: what the blackboard model (model/, a higher layer) needs from
    ufo_value.c beyond ufo_value.h. Not installed, not included by ufo.h. */
#ifndef UFO_VALUE_MODEL_H_INCLUDED
#define UFO_VALUE_MODEL_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_value.h"

//  Makes a frozen value that nothing else references changeable again: the node itself, not
//  what is below it (which stays frozen). Returns false, changing nothing, when the value is
//  shared (ufo_value_share); true when it is changeable now or was not frozen. Lets an item
//  change the map it once handed out by ufo_item_to_map.
bool ufo_value__thaw (ufo_value_t *self);
//  ufo_value_dup, frozen throughout (ufo_value_freeze) in the same walk: the copy an item
//  makes of a caller's map, so that ufo_item_to_map need not walk it.
ufo_value_t *ufo_value__dup_frozen (const ufo_value_t *self);
//  Takes the element at index out of a list (not frozen, index in range: asserted), leaving
//  a null in its place. The caller owns the result.
ufo_value_t *ufo_value__list_take (ufo_value_t *list, size_t index);

#endif
