/*  ufo_config.h - configuration: a JSON file with the original UFO's key names and defaults,
    overridable by environment variables.

    Layering, lowest first: built-in defaults (the schema in ufo_config_schema.c), the JSON
    file, then the environment. Keys of the original are UPPER_CASE (MAX_STEP, HOST_AGENT...);
    settings that ufobus adds live in lower-case blocks (broker, dispatch, desktop, llm,
    security, log). Every known key has a type, a default and (for numbers) a range:
    a wrong type or out-of-range value is an error naming the key; an unknown key is a warning.
    docs/CONFIG.md explains every key and the environment naming. */
#ifndef UFO_CONFIG_H_INCLUDED
#define UFO_CONFIG_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_config_t ufo_config_t;

//  Creates a configuration holding the built-in defaults only.
ufo_config_t *ufo_config_new (void);

//  Destroys it; sets *self_p to NULL. Safe with NULL.
void ufo_config_destroy (ufo_config_t **self_p);

//  Merges a JSON file over the current values (maps merge key by key, other values replace).
//  Returns 0, or -1 with err naming the file and the key (and nothing changed).
int ufo_config_load_file (ufo_config_t *self, const char *path, ufo_error_t *err);

//  Merges JSON text (as from a file) over the current values. Same contract as load_file.
int ufo_config_load_text (ufo_config_t *self, const char *text, size_t len, ufo_error_t *err);

//  Applies environment overrides from envp (NULL: the process environment), as documented
//  in docs/CONFIG.md: first the one model setting (UFO_API_TYPE, UFO_API_BASE, UFO_API_KEY,
//  UFO_API_MODEL, UFO_API_VERSION, UFO_API_DEPLOYMENT_ID: into every HOST_AGENT, APP_AGENT
//  and BACKUP_AGENT key still at its built-in default), then UFO_<KEY> / UFO_<BLOCK>__<KEY>.
//  Returns 0, or -1 with err naming the variable and key.
int ufo_config_apply_env (ufo_config_t *self, char **envp, ufo_error_t *err);

//  The usual start-up: defaults, then the file at path (NULL: $UFO_CONFIG, else
//  ./config/ufo.json if present, else the installed default), then the environment.
//  Returns NULL with err on failure.
ufo_config_t *ufo_config_load (const char *path, ufo_error_t *err);

//  Looks up a key or a dotted path ("MAX_STEP", "HOST_AGENT.API_MODEL", "broker.fsync").
//  Borrowed; NULL when absent.
const ufo_value_t *ufo_config_get (const ufo_config_t *self, const char *path);

//  Typed reads of a dotted path; the default of the schema is always present for known keys,
//  so these return dflt only for unknown or mistyped paths.
int64_t ufo_config_int (const ufo_config_t *self, const char *path, int64_t dflt);
double ufo_config_float (const ufo_config_t *self, const char *path, double dflt);
bool ufo_config_bool (const ufo_config_t *self, const char *path, bool dflt);
const char *ufo_config_str (const ufo_config_t *self, const char *path, const char *dflt);

//  Sets a dotted path to *value_p (ownership taken), validating it against the schema.
//  Returns 0, or -1 with err (the config is unchanged and *value_p is destroyed).
int ufo_config_set (ufo_config_t *self, const char *path, ufo_value_t **value_p, ufo_error_t *err);

//  The whole configuration as a map (borrowed).
const ufo_value_t *ufo_config_root (const ufo_config_t *self);

//  A per-agent setting with the original's fallback chain: block.key (block is "HOST_AGENT",
//  "APP_AGENT", "BACKUP_AGENT" or "EVALUATION_AGENT"), then, for EVALUATION_AGENT only,
//  APP_AGENT.key, then the top-level key (so MAX_TOKENS, TEMPERATURE, TOP_P, TIMEOUT and
//  MAX_RETRY set in a block override the top-level ones). Borrowed; NULL when set nowhere.
const ufo_value_t *ufo_config_agent (const ufo_config_t *self, const char *block, const char *key);

//  Applies the log section to the process's logger: log.level and log.json. The logger's
//  own variables win when set (UFO_LOG_LEVEL, UFO_LOG_JSON), so an operator can always
//  raise verbosity from the shell. Call once after loading.
void ufo_config_apply_log (const ufo_config_t *self);

//  --- The schema (rows live in ufo_config_schema.c) ---------------------------------------
//  One row per known key. type is "bool", "int", "float" (an integer is accepted and
//  stored as a float), "string", "any", "map" (a map row whose path prefixes other rows is
//  a section: its children are checked row by row and unknown children warn; otherwise a
//  free map, merged key by key), or the container forms "list<T>" and "map<T>" with T any
//  of these types. dflt is the JSON text of the default, or NULL for an optional key that
//  is absent unless set (null in a file or the environment unsets it again).
typedef struct {
    const char *path;       //  dotted path: "MAX_STEP", "HOST_AGENT.API_MODEL", "broker.fsync"
    const char *type;       //  see above
    const char *dflt;       //  JSON text, or NULL: optional, no default
    const char *range;      //  numbers: "min..max", either end may be empty; NULL: any
    const char *choices;    //  strings: allowed values "a|b|c"; NULL: any
    const char *help;       //  one line for docs/CONFIG.md
} ufo_config_key_t;

//  The schema rows, in documentation order; *count_p receives their number. Static data.
const ufo_config_key_t *ufo_config_schema (size_t *count_p);

//  Looks up the schema row of a dotted path (exact, case-sensitive). NULL when unknown.
const ufo_config_key_t *ufo_config_schema_find (const char *path);

//  Environment variables starting with UFO_ that are not configuration keys (UFO_CONFIG,
//  UFO_LOG_LEVEL, test variables...): ufo_config_apply_env neither warns about nor applies
//  them. NULL-terminated static list, kept in ufo_config_schema.c.
const char *const *ufo_config_env_ignored (void);

#endif
