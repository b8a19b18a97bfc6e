/*  ufo_policy.c - see ufo_policy.h. */
#include "ufo_prelude.h"
#include "ufo_value.h"
#include "ufo_policy.h"
#include <fnmatch.h>

const char *
ufo_policy_match (const ufo_value_t *list, const char *text)
{
    if (!text || ufo_value_type (list) != UFO_TLIST)
        return NULL;
    for (size_t i = 0; i < ufo_value_size (list); i++) {
        const ufo_value_t *p = ufo_value_list_at (list, i);
        if (ufo_value_type (p) != UFO_TSTRING || !*ufo_value_str (p))
            continue;
        if (fnmatch (ufo_value_str (p), text, FNM_CASEFOLD) == 0)
            return ufo_value_str (p);
    }
    return NULL;
}
