/*  ufo_policy.h - the confirmation policy's patterns (desktop.confirm_actions,
    desktop.confirm_controls; docs/APP_AGENT.md), shared by the AppAgent's actions and tools
    and the HostAgent's tools. */
#ifndef UFO_POLICY_H_INCLUDED
#define UFO_POLICY_H_INCLUDED

#include "ufo_value.h"

//  The first pattern of list (shell wildcards, fnmatch(3), case-insensitive; entries that
//  are not non-empty strings are skipped) that text matches, borrowed from list; NULL when
//  none does or list is not a list.
const char *ufo_policy_match (const ufo_value_t *list, const char *text);

#endif
