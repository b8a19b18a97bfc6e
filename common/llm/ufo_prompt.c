/*  ufo_prompt.c - assemble an agent step's chat messages from prompts/ templates. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_paths.h"
#include "ufo_value.h"
#include "ufo_prompt.h"
#include "ufo_template.h"
#include "ufo_llm_parse.h"

#define S_MAX_TEMPLATE (1024 * 1024)

struct _ufo_prompts_t {
    char *dir;
};

typedef struct {
    const ufo_prompts_t *self;
    const char *agent_dir;
} s_loader_t;

static bool
s_is_prompt_dir (const char *dir)
{
    char path [4200];               //  a longer dir is refused, not checked truncated
    int n = snprintf (path, sizeof path, "%s/host_agent/system.tmpl", dir);
    return n > 0 && (size_t) n < sizeof path && access (path, R_OK) == 0;
}

ufo_prompts_t *
ufo_prompts_new (const char *dir, ufo_error_t *err)
{
    char found [4096];
    const char *candidates [] = { dir, getenv ("UFO_PROMPTS_DIR"),
                                  ufo_data_find ("prompts", found, sizeof found) ? found : NULL };
    size_t first = 0, count = UFO_ARRAY_SIZE (candidates);
    if (dir)
        count = 1;              //  an explicit directory must be right
    for (size_t i = first; i < count; i++)
        if (candidates [i] && *candidates [i] && s_is_prompt_dir (candidates [i])) {
            ufo_prompts_t *self = ufo_calloc (1, sizeof (ufo_prompts_t));
            self->dir = ufo_strdup (candidates [i]);
            return self;
        }
    ufo_error_set (err, UFO_E_NOT_FOUND, "no prompt templates in %s (need host_agent/system.tmpl)",
                   dir ? dir : "$UFO_PROMPTS_DIR, ./prompts or the installed prompts");
    return NULL;
}

void
ufo_prompts_destroy (ufo_prompts_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->dir);
    free (*self_p);
    *self_p = NULL;
}

const char *
ufo_prompts_dir (const ufo_prompts_t *self)
{
    return self->dir;
}

//  Reads a template file; NULL if absent or unreadable. Names are plain words.
static char *
s_read (const ufo_prompts_t *self, const char *sub, const char *name)
{
    for (const char *c = name; *c; c++)
        if (!isalnum ((unsigned char) *c) && *c != '_' && *c != '-')
            return NULL;
    char path [1400];
    snprintf (path, sizeof path, "%s/%s/%s.tmpl", self->dir, sub, name);
    FILE *f = fopen (path, "r");
    if (!f)
        return NULL;
    ufo_buf_t b = { 0 };
    char chunk [4096];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0 && b.len < S_MAX_TEMPLATE)
        ufo_buf_append (&b, chunk, n);
    fclose (f);
    return ufo_buf_detach (&b, NULL);
}

static char *
s_load_partial (const char *name, void *arg)
{
    s_loader_t *l = (s_loader_t *) arg;
    char *text = s_read (l->self, l->agent_dir, name);
    return text ? text : s_read (l->self, "shared", name);
}

char *
ufo_prompts_render (ufo_prompts_t *self, const char *agent_dir, const char *name,
                    const ufo_value_t *vars, ufo_error_t *err)
{
    char *text = s_read (self, agent_dir, name);
    if (!text) {
        ufo_error_set (err, UFO_E_NOT_FOUND, "no template %s/%s/%s.tmpl", self->dir, agent_dir, name);
        return NULL;
    }
    s_loader_t loader = { self, agent_dir };
    ufo_error_t terr;
    ufo_error_clear (&terr);
    char *out = ufo_template_render (text, strlen (text), vars, s_load_partial, &loader, &terr);
    free (text);
    if (!out)
        ufo_error_set (err, terr.code, "%s/%s.tmpl: %s", agent_dir, name, terr.message);
    return out;
}

static void
s_push_text (ufo_value_t *parts, const char *text)
{
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "type", "text");
    ufo_value_map_set_str (p, "text", text);
    ufo_value_list_push (parts, &p);
}

ufo_value_t *
ufo_prompt_messages (ufo_prompts_t *self, const ufo_prompt_input_t *in, ufo_error_t *err)
{
    const char *agent_dir = in->schema == UFO_SCHEMA_HOST ? "host_agent"
                          : in->schema == UFO_SCHEMA_APP ? "app_agent"
                          : in->schema == UFO_SCHEMA_EVAL ? "eval_agent" : NULL;
    if (!agent_dir) {
        ufo_error_set (err, UFO_E_INVALID, "prompt: unknown agent schema %d", in->schema);
        return NULL;
    }
    if (in->vars && ufo_value_type (in->vars) != UFO_TMAP) {
        ufo_error_set (err, UFO_E_TYPE, "prompt: vars must be a map");
        return NULL;
    }
    if ((in->images && ufo_value_type (in->images) != UFO_TLIST)
    ||  (in->blackboard && ufo_value_type (in->blackboard) != UFO_TLIST)
    ||  (in->memory && ufo_value_type (in->memory) != UFO_TLIST)) {
        ufo_error_set (err, UFO_E_TYPE, "prompt: images, blackboard and memory must be lists");
        return NULL;
    }
    ufo_value_t *vars = in->vars ? ufo_value_dup (in->vars) : ufo_value_new_map ();
    ufo_value_map_set_bool (vars, "visual", in->visual);
    ufo_value_map_set_bool (vars, "has_blackboard", ufo_value_size (in->blackboard) > 0);
    ufo_value_map_set (vars, "memory", &(ufo_value_t *) {
        in->memory ? ufo_value_dup (in->memory) : ufo_value_new_list () });
    char *system = ufo_prompts_render (self, agent_dir, "system", vars, err);
    char *user = system ? ufo_prompts_render (self, agent_dir, "user", vars, err) : NULL;
    ufo_value_destroy (&vars);
    if (!user) {
        free (system);
        return NULL;
    }
    ufo_value_t *messages = ufo_value_new_list ();
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "system");
    ufo_value_map_set_str (m, "content", system);
    ufo_value_list_push (messages, &m);
    ufo_value_t *parts = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (in->blackboard); i++) {
        ufo_value_t *p = ufo_value_dup (ufo_value_list_at (in->blackboard, i));
        if (!strcmp (ufo_value_map_str (p, "type", ""), "image_url")
        &&  (!in->visual || !*ufo_value_map_str (ufo_value_map_get (p, "image_url"), "url", ""))) {
            ufo_value_destroy (&p);
            continue;           //  no images for a text-only model; an empty URL is refused by APIs
        }
        ufo_value_list_push (parts, &p);
    }
    for (size_t i = 0; in->visual && i < ufo_value_size (in->images); i++) {
        const ufo_value_t *img = ufo_value_list_at (in->images, i);
        const char *url = ufo_value_map_str (img, "url", NULL);
        if (!url) {
            ufo_error_set (err, UFO_E_MISSING, "prompt: image %zu has no \"url\"", i);
            ufo_value_destroy (&parts);
            ufo_value_destroy (&messages);
            free (system);
            free (user);
            return NULL;
        }
        const char *label = ufo_value_map_str (img, "label", NULL);
        if (label && *label)
            s_push_text (parts, label);
        ufo_value_t *p = ufo_value_new_map ();
        ufo_value_map_set_str (p, "type", "image_url");
        ufo_value_t *u = ufo_value_new_map ();
        ufo_value_map_set_str (u, "url", url);
        ufo_value_map_set (p, "image_url", &u);
        ufo_value_list_push (parts, &p);
    }
    s_push_text (parts, user);
    m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "user");
    ufo_value_map_set (m, "content", &parts);
    ufo_value_list_push (messages, &m);
    free (system);
    free (user);
    return messages;
}
