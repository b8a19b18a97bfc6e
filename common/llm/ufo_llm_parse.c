/*  ufo_llm_parse.c - find, parse and validate the JSON object in a model's reply. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_llm_parse.h"

#define S_MAX_TEXT    (1024u * 1024)       //  longer replies are refused (MAX_TOKENS is ~2000)
#define S_MAX_STARTS  256                  //  '{' positions tried in one reply

const char *
ufo_schema_name (ufo_schema_t schema)
{
    switch (schema) {
        case UFO_SCHEMA_NONE:   return "none";
        case UFO_SCHEMA_OBJECT: return "object";
        case UFO_SCHEMA_HOST:   return "HostAgent";
        case UFO_SCHEMA_APP:    return "AppAgent";
        case UFO_SCHEMA_EVAL:   return "EvaluationAgent";
    }
    return "unknown";
}

//  --- Field helpers -----------------------------------------------------------------

static int
s_string (ufo_value_t *obj, const char *key, bool required, ufo_error_t *err)
{
    ufo_value_t *v = ufo_value_map_get (obj, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        if (required)
            return ufo_error_set (err, UFO_E_MISSING, "the field \"%s\" (a string) is missing", key);
        ufo_value_map_set_str (obj, key, "");
        return 0;
    }
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "the field \"%s\" must be a string, not %s",
                              key, ufo_value_type_name (ufo_value_type (v)));
    return 0;
}

//  A label may come as a number: make it the string the prompt showed.
static int
s_label (ufo_value_t *obj, const char *key, ufo_error_t *err)
{
    ufo_value_t *v = ufo_value_map_get (obj, key);
    if (v && ufo_value_type (v) == UFO_TINT) {
        ufo_value_map_set (obj, key, &(ufo_value_t *) { ufo_value_new_stringf ("%" PRId64, ufo_value_int (v)) });
        return 0;
    }
    return s_string (obj, key, false, err);
}

//  A list of strings; a single string becomes a one-element list ("" an empty one).
static int
s_string_list (ufo_value_t *obj, const char *key, bool required, ufo_error_t *err)
{
    ufo_value_t *v = ufo_value_map_get (obj, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        if (required)
            return ufo_error_set (err, UFO_E_MISSING, "the field \"%s\" (a list of strings) is missing", key);
        ufo_value_map_set (obj, key, &(ufo_value_t *) { ufo_value_new_list () });
        return 0;
    }
    if (ufo_value_type (v) == UFO_TSTRING) {
        ufo_value_t *list = ufo_value_new_list ();
        if (ufo_value_strlen (v))
            ufo_value_list_push_str (list, ufo_value_str (v));
        ufo_value_map_set (obj, key, &list);
        return 0;
    }
    if (ufo_value_type (v) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "the field \"%s\" must be a list of strings, not %s",
                              key, ufo_value_type_name (ufo_value_type (v)));
    for (size_t i = 0; i < ufo_value_size (v); i++)
        if (ufo_value_type (ufo_value_list_at (v, i)) != UFO_TSTRING)
            return ufo_error_set (err, UFO_E_TYPE, "element %zu of \"%s\" must be a string, not %s",
                                  i, key, ufo_value_type_name (ufo_value_type (ufo_value_list_at (v, i))));
    return 0;
}

//  An enumerated string; matched case-insensitively and rewritten to the canonical spelling.
static int
s_enum (ufo_value_t *obj, const char *key, const char *const *allowed, ufo_error_t *err)
{
    ufo_value_t *v = ufo_value_map_get (obj, key);
    char list [200] = "";
    for (size_t i = 0; allowed [i]; i++) {
        strncat (list, i ? ", " : "", sizeof list - strlen (list) - 1);
        strncat (list, allowed [i], sizeof list - strlen (list) - 1);
    }
    if (!v || ufo_value_type (v) == UFO_TNULL)
        return ufo_error_set (err, UFO_E_MISSING, "the field \"%s\" is missing; it must be one of %s", key, list);
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "the field \"%s\" must be a string, one of %s", key, list);
    for (size_t i = 0; allowed [i]; i++)
        if (strcasecmp (ufo_value_str (v), allowed [i]) == 0) {
            ufo_value_map_set_str (obj, key, allowed [i]);
            return 0;
        }
    return ufo_error_set (err, UFO_E_RANGE, "\"%s\": \"%.60s\" is not allowed; it must be one of %s",
                          key, ufo_value_str (v), list);
}

static bool
s_is_number (const ufo_value_t *v)
{
    return v && (ufo_value_type (v) == UFO_TINT || ufo_value_type (v) == UFO_TFLOAT);
}

//  --- Actions -------------------------------------------------------------------------

typedef enum { A_STR, A_BOOL, A_INT, A_FRAC, A_NUM, A_LABELS, A_BUTTON } s_argtype_t;

typedef struct {
    const char *name;
    s_argtype_t type;
    bool required;
    double max;                 //  for A_NUM: upper bound (inclusive), 0 = none
} s_arg_t;

typedef struct {
    const char *name;
    s_arg_t args [6];
} s_action_t;

static const s_action_t s_actions [] = {
    { "click_input", { { "button", A_BUTTON, false, 0 }, { "double", A_BOOL, false, 0 } } },
    { "click_on_coordinates", { { "x", A_FRAC, true, 0 }, { "y", A_FRAC, true, 0 },
                                { "button", A_BUTTON, false, 0 }, { "double", A_BOOL, false, 0 } } },
    { "drag_on_coordinates", { { "start_x", A_FRAC, true, 0 }, { "start_y", A_FRAC, true, 0 },
                               { "end_x", A_FRAC, true, 0 }, { "end_y", A_FRAC, true, 0 },
                               { "button", A_BUTTON, false, 0 }, { "duration", A_NUM, false, 60 } } },
    { "set_edit_text", { { "text", A_STR, true, 0 }, { "clear_current_text", A_BOOL, false, 0 } } },
    { "keyboard_input", { { "keys", A_STR, true, 0 }, { "control_focus", A_BOOL, false, 0 } } },
    { "wheel_mouse_input", { { "wheel_dist", A_INT, true, 0 } } },
    { "texts", { { NULL } } },
    { "summary", { { "text", A_STR, true, 0 } } },
    { "annotation", { { "control_labels", A_LABELS, true, 0 } } },
    { "wait", { { "seconds", A_NUM, true, 300 } } },
    //  spreadsheets (offered when the window shows one; the desktop checks the range)
    { "get_range_values", { { "range", A_STR, true, 0 } } },
    { "select_table_range", { { "range", A_STR, true, 0 } } },
    { "go_to_cell", { { "cell", A_STR, true, 0 } } },
    //  documents: the caret or selection at a phrase
    { "caret_to_text", { { "text", A_STR, true, 0 }, { "at", A_STR, false, 0 } } },
    { "select_text", { { "text", A_STR, true, 0 } } },
};

static int
s_check_arg (const char *fn, const s_arg_t *a, const ufo_value_t *v, ufo_error_t *err)
{
    ufo_type_t t = ufo_value_type (v);
    switch (a->type) {
        case A_STR:
            if (t != UFO_TSTRING)
                return ufo_error_set (err, UFO_E_TYPE, "%s: argument \"%s\" must be a string", fn, a->name);
            return 0;
        case A_BOOL:
            if (t != UFO_TBOOL)
                return ufo_error_set (err, UFO_E_TYPE, "%s: argument \"%s\" must be true or false", fn, a->name);
            return 0;
        case A_INT:
            if (t == UFO_TINT || (t == UFO_TFLOAT && ufo_value_float (v) == floor (ufo_value_float (v))
                                  && fabs (ufo_value_float (v)) < 1e9))
                return 0;
            return ufo_error_set (err, UFO_E_TYPE, "%s: argument \"%s\" must be an integer", fn, a->name);
        case A_FRAC:
            if (!s_is_number (v) || ufo_value_float (v) < 0 || ufo_value_float (v) > 1)
                return ufo_error_set (err, UFO_E_RANGE,
                                      "%s: argument \"%s\" must be a number from 0 to 1 (a fraction of the window)",
                                      fn, a->name);
            return 0;
        case A_NUM:
            if (!s_is_number (v) || ufo_value_float (v) < 0
            ||  (a->max > 0 && ufo_value_float (v) > a->max))
                return ufo_error_set (err, UFO_E_RANGE, "%s: argument \"%s\" must be a number from 0 to %g",
                                      fn, a->name, a->max);
            return 0;
        case A_LABELS:
            if (t != UFO_TLIST)
                return ufo_error_set (err, UFO_E_TYPE, "%s: argument \"%s\" must be a list of control labels",
                                      fn, a->name);
            for (size_t i = 0; i < ufo_value_size (v); i++) {
                ufo_type_t et = ufo_value_type (ufo_value_list_at (v, i));
                if (et != UFO_TSTRING && et != UFO_TINT)
                    return ufo_error_set (err, UFO_E_TYPE, "%s: \"%s\" element %zu is not a label",
                                          fn, a->name, i);
            }
            return 0;
        case A_BUTTON:
            if (t != UFO_TSTRING || (strcmp (ufo_value_str (v), "left") && strcmp (ufo_value_str (v), "right")
                                     && strcmp (ufo_value_str (v), "middle")))
                return ufo_error_set (err, UFO_E_RANGE, "%s: argument \"%s\" must be \"left\", \"right\" or \"middle\"",
                                      fn, a->name);
            return 0;
    }
    return 0;
}

int
ufo_llm_validate_action (const char *function, const ufo_value_t *args, ufo_error_t *err)
{
    if (!function || !*function)
        return 0;
    if (strchr (function, '.')) {
        //  an API tool of an MCP server ("<server>.<tool>"): the agent that offered it checks
        //  the name and the arguments against the tool's input schema (ufo_mcp_hub_check)
        if (args && ufo_value_type (args) != UFO_TMAP)
            return ufo_error_set (err, UFO_E_TYPE, "\"Args\" must be an object");
        return 0;
    }
    const s_action_t *act = NULL;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_actions); i++)
        if (strcmp (s_actions [i].name, function) == 0)
            act = &s_actions [i];
    if (!act)
        return ufo_error_set (err, UFO_E_INVALID,
                              "\"Function\": \"%.40s\" is not an available action (use one of click_input, "
                              "click_on_coordinates, drag_on_coordinates, set_edit_text, keyboard_input, "
                              "wheel_mouse_input, texts, caret_to_text, select_text, summary, annotation, wait, or "
                              "\"\"; in a spreadsheet also get_range_values, select_table_range, "
                              "go_to_cell)", function);
    if (args && ufo_value_type (args) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "\"Args\" must be an object");
    for (size_t i = 0; i < ufo_value_size (args); i++) {
        const char *name = ufo_value_map_key_at (args, i);
        const s_arg_t *a = NULL;
        for (size_t k = 0; k < UFO_ARRAY_SIZE (act->args) && act->args [k].name; k++)
            if (strcmp (act->args [k].name, name) == 0)
                a = &act->args [k];
        if (!a)
            return ufo_error_set (err, UFO_E_INVALID, "%s has no argument \"%.40s\"", function, name);
        if (s_check_arg (function, a, ufo_value_map_value_at (args, i), err))
            return -1;
    }
    for (size_t k = 0; k < UFO_ARRAY_SIZE (act->args) && act->args [k].name; k++)
        if (act->args [k].required && !ufo_value_map_has (args, act->args [k].name))
            return ufo_error_set (err, UFO_E_MISSING, "%s needs the argument \"%s\"", function, act->args [k].name);
    return 0;
}

//  --- Schemas -------------------------------------------------------------------------

static const char *const s_app_status [] = { "CONTINUE", "FINISH", "FAIL", "PENDING", "CONFIRM", "SCREENSHOT", NULL };
static const char *const s_host_status [] = { "ASSIGN", "CONTINUE", "PENDING", "FINISH", "FAIL", NULL };
static const char *const s_judgement [] = { "yes", "no", "unsure", NULL };

//  "ActionList" (ACTION_SEQUENCE): a list of {Function, Args, ControlLabel, ControlText,
//  Status}, each checked as a single action is; absent or null: nothing to check.
static int
s_action_list (ufo_value_t *obj, ufo_error_t *err)
{
    ufo_value_t *list = ufo_value_map_get (obj, "ActionList");
    if (!list || ufo_value_type (list) == UFO_TNULL) {
        ufo_value_map_remove (obj, "ActionList");
        return 0;
    }
    if (ufo_value_type (list) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "\"ActionList\" must be a list of actions, not %s",
                              ufo_value_type_name (ufo_value_type (list)));
    if (ufo_value_size (list) > 20)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "\"ActionList\" has %zu actions; at most 20",
                              ufo_value_size (list));
    for (size_t i = 0; i < ufo_value_size (list); i++) {
        ufo_value_t *e = ufo_value_list_at (list, i);
        ufo_error_t sub;
        if (ufo_value_type (e) != UFO_TMAP)
            return ufo_error_set (err, UFO_E_TYPE, "\"ActionList\"[%zu] must be an object", i);
        ufo_value_t *args = ufo_value_map_get (e, "Args");
        if (!args || ufo_value_type (args) == UFO_TNULL)
            args = ufo_value_map_set (e, "Args", &(ufo_value_t *) { ufo_value_new_map () });
        if (s_string (e, "Function", true, &sub) || s_label (e, "ControlLabel", &sub)
        ||  s_string (e, "ControlText", false, &sub)
        ||  (ufo_value_map_has (e, "Status") && s_enum (e, "Status", s_app_status, &sub))
        ||  ufo_llm_validate_action (ufo_value_map_str (e, "Function", ""), args, &sub))
            return ufo_error_set (err, sub.code, "\"ActionList\"[%zu]: %s", i, sub.message);
        if (!*ufo_value_map_str (e, "Function", ""))
            return ufo_error_set (err, UFO_E_MISSING, "\"ActionList\"[%zu] names no \"Function\"", i);
    }
    return 0;
}

static int
s_validate_app (ufo_value_t *obj, ufo_error_t *err)
{
    if (s_string (obj, "Observation", true, err) || s_string (obj, "Thought", true, err)
    ||  s_label (obj, "ControlLabel", err) || s_string (obj, "ControlText", false, err)
    ||  s_enum (obj, "Status", s_app_status, err))
        return -1;
    ufo_value_t *fn = ufo_value_map_get (obj, "Function");
    if (!fn || ufo_value_type (fn) == UFO_TNULL)
        ufo_value_map_set_str (obj, "Function", "");
    else
    if (s_string (obj, "Function", true, err))
        return -1;
    ufo_value_t *args = ufo_value_map_get (obj, "Args");
    if (!args || ufo_value_type (args) == UFO_TNULL)
        args = ufo_value_map_set (obj, "Args", &(ufo_value_t *) { ufo_value_new_map () });
    if (ufo_value_type (args) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "the field \"Args\" must be an object, not %s",
                              ufo_value_type_name (ufo_value_type (args)));
    const char *function = ufo_value_map_str (obj, "Function", "");
    if (ufo_llm_validate_action (function, args, err))
        return -1;
    if ((!strcmp (function, "click_input") || !strcmp (function, "set_edit_text") || !strcmp (function, "texts"))
    &&  !*ufo_value_map_str (obj, "ControlLabel", ""))
        return ufo_error_set (err, UFO_E_MISSING, "%s acts on a control: \"ControlLabel\" must name one", function);
    if (s_string_list (obj, "Plan", false, err) || s_string (obj, "Comment", false, err)
    ||  s_string_list (obj, "Questions", false, err))
        return -1;
    const char *status = ufo_value_map_str (obj, "Status", "");
    if (!strcmp (status, "PENDING") && ufo_value_size (ufo_value_map_get (obj, "Questions")) == 0)
        return ufo_error_set (err, UFO_E_MISSING, "Status PENDING needs at least one question in \"Questions\"");
    if (!strcmp (status, "CONFIRM") && !*function)
        return ufo_error_set (err, UFO_E_MISSING, "Status CONFIRM needs the action to confirm in \"Function\"");
    if (s_action_list (obj, err))
        return -1;
    ufo_value_t *save = ufo_value_map_get (obj, "SaveScreenshot");
    if (!save || ufo_value_type (save) == UFO_TNULL) {
        save = ufo_value_new_map ();
        ufo_value_map_set_bool (save, "save", false);
        ufo_value_map_set_str (save, "reason", "");
        ufo_value_map_set (obj, "SaveScreenshot", &save);
    }
    else
    if (ufo_value_type (save) != UFO_TMAP
    ||  ufo_value_type (ufo_value_map_get (save, "save")) != UFO_TBOOL)
        return ufo_error_set (err, UFO_E_TYPE,
                              "\"SaveScreenshot\" must be {\"save\": true or false, \"reason\": \"...\"}");
    return 0;
}

static int
s_validate_host (ufo_value_t *obj, ufo_error_t *err)
{
    if (s_string (obj, "Observation", true, err) || s_string (obj, "Thought", true, err)
    ||  s_enum (obj, "Status", s_host_status, err)
    ||  s_string (obj, "CurrentSubtask", false, err) || s_string_list (obj, "Message", false, err)
    ||  s_label (obj, "ControlLabel", err) || s_string (obj, "ControlText", false, err)
    ||  s_string_list (obj, "Plan", false, err) || s_string (obj, "Bash", false, err)
    ||  s_string (obj, "Function", false, err)
    ||  s_string_list (obj, "Questions", false, err) || s_string (obj, "Comment", false, err))
        return -1;
    const char *status = ufo_value_map_str (obj, "Status", "");
    if (!strcmp (status, "ASSIGN")) {
        if (!*ufo_value_map_str (obj, "ControlLabel", "") && !*ufo_value_map_str (obj, "ControlText", ""))
            return ufo_error_set (err, UFO_E_MISSING,
                                  "Status ASSIGN needs the application: set \"ControlLabel\" and \"ControlText\"");
        if (!*ufo_value_map_str (obj, "CurrentSubtask", ""))
            return ufo_error_set (err, UFO_E_MISSING, "Status ASSIGN needs a non-empty \"CurrentSubtask\"");
    }
    if (!strcmp (status, "PENDING") && ufo_value_size (ufo_value_map_get (obj, "Questions")) == 0)
        return ufo_error_set (err, UFO_E_MISSING, "Status PENDING needs at least one question in \"Questions\"");
    if (*ufo_value_map_str (obj, "Bash", "") && strcmp (status, "CONTINUE"))
        return ufo_error_set (err, UFO_E_INVALID, "\"Bash\" may only be used with Status CONTINUE");
    return 0;
}

static int
s_validate_eval (ufo_value_t *obj, ufo_error_t *err)
{
    if (s_string (obj, "reason", true, err) || s_enum (obj, "complete", s_judgement, err))
        return -1;
    ufo_value_t *scores = ufo_value_map_get (obj, "sub_scores");
    if (!scores || ufo_value_type (scores) == UFO_TNULL)
        scores = ufo_value_map_set (obj, "sub_scores", &(ufo_value_t *) { ufo_value_new_map () });
    if (ufo_value_type (scores) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "\"sub_scores\" must be an object of sub-goal -> \"yes\"/\"no\"/\"unsure\"");
    for (size_t i = 0; i < ufo_value_size (scores); i++)
        if (s_enum (scores, ufo_value_map_key_at (scores, i), s_judgement, err))
            return -1;
    return 0;
}

int
ufo_llm_validate (ufo_value_t *obj, ufo_schema_t schema, ufo_error_t *err)
{
    if (schema == UFO_SCHEMA_NONE)
        return 0;
    if (ufo_value_type (obj) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "the reply must be a JSON object");
    switch (schema) {
        case UFO_SCHEMA_HOST: return s_validate_host (obj, err);
        case UFO_SCHEMA_APP:  return s_validate_app (obj, err);
        case UFO_SCHEMA_EVAL: return s_validate_eval (obj, err);
        default:              return 0;
    }
}

//  --- Extraction ----------------------------------------------------------------------

//  Index one past the '}' that closes the object starting at text[start] == '{', honouring
//  strings and escapes; 0 if the text ends first.
static size_t
s_match (const char *text, size_t len, size_t start)
{
    int depth = 0;
    bool in_str = false;
    for (size_t i = start; i < len; i++) {
        char c = text [i];
        if (in_str) {
            if (c == '\\')
                i++;
            else
            if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"')
            in_str = true;
        else
        if (c == '{' || c == '[')
            depth++;
        else
        if (c == '}' || c == ']') {
            if (--depth == 0)
                return c == '}' ? i + 1 : 0;
            if (depth < 0)
                return 0;
        }
    }
    return 0;
}

//  Copy of text without commas that directly precede } or ] (outside strings): the one
//  slip models make that is safe to repair.
static char *
s_strip_trailing_commas (const char *text, size_t len, size_t *out_len)
{
    char *out = ufo_malloc (len + 1);
    size_t n = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char c = text [i];
        if (in_str) {
            out [n++] = c;
            if (c == '\\' && i + 1 < len)
                out [n++] = text [++i];
            else
            if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"')
            in_str = true;
        if (c == ',') {
            size_t j = i + 1;
            while (j < len && isspace ((unsigned char) text [j]))
                j++;
            if (j < len && (text [j] == '}' || text [j] == ']'))
                continue;
        }
        out [n++] = c;
    }
    out [n] = 0;
    *out_len = n;
    return out;
}

typedef struct {
    ufo_schema_t schema;
    ufo_value_t *found;         //  first valid object
    bool parsed_any;            //  some candidate parsed as an object
    ufo_error_t first_invalid;  //  validation error of the first parsed object
    ufo_error_t first_syntax;   //  parse error of the first candidate
    bool have_syntax;
} s_search_t;

//  Tries one candidate; returns true when it parsed as an object (valid or not).
static bool
s_try (s_search_t *s, const char *text, size_t len)
{
    if (s->found)
        return true;
    ufo_error_t perr;
    ufo_error_clear (&perr);
    ufo_value_t *v = ufo_json_parse (text, len, NULL, &perr);
    if (!v) {
        size_t rlen;
        char *repaired = s_strip_trailing_commas (text, len, &rlen);
        if (rlen != len)
            v = ufo_json_parse (repaired, rlen, NULL, NULL);
        free (repaired);
    }
    if (!v) {
        if (!s->have_syntax) {
            s->first_syntax = perr;
            s->have_syntax = true;
        }
        return false;
    }
    if (ufo_value_type (v) != UFO_TMAP) {
        ufo_value_destroy (&v);
        return false;
    }
    ufo_error_t verr;
    ufo_error_clear (&verr);
    if (ufo_llm_validate (v, s->schema, &verr) == 0)
        s->found = v;
    else {
        if (!s->parsed_any)
            s->first_invalid = verr;
        ufo_value_destroy (&v);
    }
    s->parsed_any = true;
    return true;
}

//  Every balanced {...} in text[0..len), outermost first, left to right.
static void
s_scan (s_search_t *s, const char *text, size_t len, bool *unclosed)
{
    size_t starts = 0;
    for (size_t i = 0; i < len && !s->found && starts < S_MAX_STARTS; i++) {
        if (text [i] != '{')
            continue;
        starts++;
        size_t end = s_match (text, len, i);
        if (!end) {
            *unclosed = true;
            continue;
        }
        if (s_try (s, text + i, end - i))
            i = end - 1;        //  do not look for objects inside a parsed one
    }
}

ufo_value_t *
ufo_llm_extract_json (const char *text, size_t len, ufo_schema_t schema, ufo_error_t *err)
{
    if (!text)
        len = 0;
    if (len > S_MAX_TEXT) {
        ufo_error_set (err, UFO_E_TOO_LARGE, "the reply is too long (%zu bytes)", len);
        return NULL;
    }
    s_search_t s;
    memset (&s, 0, sizeof s);
    s.schema = schema == UFO_SCHEMA_NONE ? UFO_SCHEMA_OBJECT : schema;
    bool unclosed = false;
    //  1. Fenced blocks, in order. An unclosed fence runs to the end of the text.
    const char *p = text;
    const char *end = text + len;
    while (p && p < end && !s.found) {
        const char *open = memmem (p, (size_t) (end - p), "```", 3);
        if (!open)
            break;
        const char *body = open + 3;
        const char *eol = memchr (body, '\n', (size_t) (end - body));
        //  Skip the info string ("json") unless the object starts on the fence line.
        const char *brace = memchr (body, '{', (size_t) (end - body));
        if (eol && (!brace || brace > eol))
            body = eol + 1;
        const char *close = memmem (body, (size_t) (end - body), "```", 3);
        const char *stop = close ? close : end;
        s_scan (&s, body, (size_t) (stop - body), &unclosed);
        p = close ? close + 3 : NULL;
    }
    //  2. The whole text: bare JSON, or objects in the prose.
    if (!s.found)
        s_scan (&s, text, len, &unclosed);
    if (s.found)
        return s.found;
    if (s.parsed_any) {
        if (err)
            *err = s.first_invalid;
    }
    else
    if (unclosed)
        ufo_error_set (err, UFO_E_TRUNCATED, "the reply ends inside a JSON object (it looks cut off)");
    else
    if (s.have_syntax)
        ufo_error_set (err, UFO_E_SYNTAX, "the reply contains no valid JSON object (%s)",
                       s.first_syntax.message);
    else
        ufo_error_set (err, UFO_E_SYNTAX, "the reply contains no JSON object");
    return NULL;
}

char *
ufo_llm_corrective_message (ufo_schema_t schema, const char *reason)
{
    const char *fields = "";
    switch (schema) {
        case UFO_SCHEMA_HOST:
            fields = " It must have the fields Observation, Thought, CurrentSubtask, Message, ControlLabel, "
                     "ControlText, Status (ASSIGN, CONTINUE, PENDING, FINISH or FAIL), Plan, Bash, Questions "
                     "and Comment.";
            break;
        case UFO_SCHEMA_APP:
            fields = " It must have the fields Observation, Thought, ControlLabel, ControlText, Function, Args, "
                     "Status (CONTINUE, FINISH, FAIL, PENDING, CONFIRM or SCREENSHOT), Plan, Comment and "
                     "SaveScreenshot.";
            break;
        case UFO_SCHEMA_EVAL:
            fields = " It must have the fields reason, sub_scores and complete (yes, no or unsure).";
            break;
        default:
            break;
    }
    ufo_buf_t b = { 0 };
    ufo_buf_printf (&b, "Your previous reply could not be used: %s. Reply again with exactly one JSON "
                        "object and nothing else (no code fences, no text around it).%s",
                    reason && *reason ? reason : "it was not a valid JSON object", fields);
    return ufo_buf_detach (&b, NULL);
}
