/*  ufo_llm_parse.h - from a model's reply text to a validated decision.

    Models wrap their JSON in ``` fences, put prose around it, or cut it short. We find
    candidate objects (fenced blocks first, then every balanced {...} in the text, with
    braces inside strings handled), parse each strictly, and take the first one that
    validates against the agent's schema (field names of the original UFO², see
    docs/LLM.md). On failure the reason is a sentence meant for the model itself: the
    client sends it back as a corrective message (JSON_PARSING_RETRY times). */
#ifndef UFO_LLM_PARSE_H_INCLUDED
#define UFO_LLM_PARSE_H_INCLUDED

#include <stddef.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef enum {
    UFO_SCHEMA_NONE = 0,        //  no JSON expected: the reply text is the result
    UFO_SCHEMA_OBJECT = 1,      //  any JSON object
    UFO_SCHEMA_HOST = 2,        //  HostAgent response
    UFO_SCHEMA_APP = 3,         //  AppAgent response
    UFO_SCHEMA_EVAL = 4         //  EvaluationAgent response
} ufo_schema_t;

//  Name of a schema ("HostAgent", "AppAgent", "EvaluationAgent", "object", "none").
const char *ufo_schema_name (ufo_schema_t schema);

//  Finds the JSON object in text[0..len) and validates it against schema (UFO_SCHEMA_OBJECT:
//  any object). Returns a new map owned by the caller (normalised, see ufo_llm_validate), or
//  NULL with err: UFO_E_SYNTAX / UFO_E_TRUNCATED when no object could be parsed, or the
//  validation error of the first parseable object.
ufo_value_t *ufo_llm_extract_json (const char *text, size_t len, ufo_schema_t schema,
                                   ufo_error_t *err);

//  Validates a parsed object in place against schema. Small, unambiguous repairs are made
//  (documented in docs/LLM.md): an integer ControlLabel becomes a string, a string Plan or
//  Message becomes a one-element list, a null or missing Args becomes {}, missing optional
//  fields get their empty value. Returns 0, or -1 with err naming the field and the rule.
int ufo_llm_validate (ufo_value_t *obj, ufo_schema_t schema, ufo_error_t *err);

//  Validates an AppAgent action: Function name from the catalogue and its Args types.
//  "" means no action. Returns 0, or -1 with err.
int ufo_llm_validate_action (const char *function, const ufo_value_t *args, ufo_error_t *err);

//  Builds the corrective user message sent after an unusable reply. Caller frees.
char *ufo_llm_corrective_message (ufo_schema_t schema, const char *reason);

#endif
