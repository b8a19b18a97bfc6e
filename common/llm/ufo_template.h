/*  ufo_template.h - a small text template engine for the prompts (a Mustache/Handlebars subset).

    {{name}}  {{a.b.0}}      the value at a dotted path: strings as they are, numbers and
                             booleans as text, lists and maps as Python-style JSON, null as "".
                             A name that is not found is an error (typos fail loudly).
    {{#if x}}..{{else}}..{{/if}}      x is true unless absent, null, false, 0, "", [] or {}
    {{#unless x}}..{{/unless}}        the opposite
    {{#each xs}}..{{/each}}           once per element of a list (or value of a map); inside,
                                      {{this}}, {{this.field}}, {{@index}} (0-based),
                                      {{@number}} (1-based), {{@key}} (maps), and outer names
    {{> name}}                        a partial: the loader's text for name, same context
    {{! comment }}                    nothing
    A line holding only a block tag ({{#if}}, {{else}}, {{/each}}, {{! }}, ...) and blanks
    disappears entirely, newline included, so templates can be laid out readably.
    Everything else is literal text: there is no HTML escaping. */
#ifndef UFO_TEMPLATE_H_INCLUDED
#define UFO_TEMPLATE_H_INCLUDED

#include <stddef.h>
#include "ufo_error.h"
#include "ufo_value.h"

//  Returns the text of partial `name` (caller frees), or NULL if there is none.
typedef char *(ufo_template_loader_fn) (const char *name, void *arg);

//  Renders template text[0..len) with vars (a map; may be NULL). load may be NULL (then a
//  partial is an error). Returns the text (caller frees), or NULL with err naming the line
//  and the problem (unclosed block, unknown name, missing partial, nesting too deep).
char *ufo_template_render (const char *text, size_t len, const ufo_value_t *vars,
                           ufo_template_loader_fn *load, void *arg, ufo_error_t *err);

#endif
