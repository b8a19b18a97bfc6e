/*  ufo_prompt.h - the chat messages of an agent step, from the templates under prompts/.

    prompts/<agent>/system.tmpl and user.tmpl, with <agent> host_agent, app_agent or
    eval_agent, and partials ({{> name}}) looked up in the agent's directory first, then in
    prompts/shared/. The messages are, as in the original UFO²:
      [ {"role": "system", "content": <system.tmpl>},
        {"role": "user", "content": [ <blackboard prompt parts>,
                                      for each image: {"type":"text", <its label>}, {"type":"image_url", ...},
                                      {"type": "text", "text": <user.tmpl>} ]} ]
    Images are only sent in visual mode (VISUAL_MODE); a blackboard image part with an empty
    URL (a screenshot file that was missing) is left out. Template variables: everything in
    vars, plus "visual" (bool), "memory" (the recent memory items) and "has_blackboard". */
#ifndef UFO_PROMPT_H_INCLUDED
#define UFO_PROMPT_H_INCLUDED

#include <stdbool.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_prompts_t ufo_prompts_t;

//  Opens a prompt directory. dir NULL: $UFO_PROMPTS_DIR, else ./prompts, else the source
//  tree's prompts/, else the installed one. Returns NULL with err if none has host_agent/.
ufo_prompts_t *ufo_prompts_new (const char *dir, ufo_error_t *err);

//  Destroys; sets *self_p to NULL. Safe with NULL.
void ufo_prompts_destroy (ufo_prompts_t **self_p);

//  The directory in use.
const char *ufo_prompts_dir (const ufo_prompts_t *self);

//  Renders prompts/<agent_dir>/<name>.tmpl with vars. Caller frees; NULL with err.
char *ufo_prompts_render (ufo_prompts_t *self, const char *agent_dir, const char *name,
                          const ufo_value_t *vars, ufo_error_t *err);

//  What an agent step puts into its prompt. Everything is borrowed.
typedef struct {
    int schema;                     //  ufo_schema_t: UFO_SCHEMA_HOST, _APP or _EVAL
    bool visual;                    //  VISUAL_MODE: send the images
    const ufo_value_t *vars;        //  template variables (map): request, subtask, controls, ...
    const ufo_value_t *images;      //  list of {"label": text, "url": data URL}, in order
    const ufo_value_t *blackboard;  //  content parts from the blackboard (list), may be NULL
    const ufo_value_t *memory;      //  the agent's recent memory items (list of maps), may be NULL
} ufo_prompt_input_t;

//  Builds the chat messages for one step (caller owns the list). NULL with err when a
//  template fails or an input has the wrong shape.
ufo_value_t *ufo_prompt_messages (ufo_prompts_t *self, const ufo_prompt_input_t *input,
                                  ufo_error_t *err);

#endif
