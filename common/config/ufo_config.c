/*  ufo_config.c - configuration: schema defaults, a JSON file, then the environment.

    Every change (file, text, environment, set) is applied to a copy of the tree, checked
    against the schema as it goes, and swapped in only when all of it was accepted, so a
    failed load leaves the configuration exactly as it was. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_paths.h"
#include "ufo_value.h"
#include "ufo_mcp_spec.h"

#define UFO_CONFIG_MAX_BYTES (16u * 1024u * 1024u)
#define UFO_CONFIG_MAX_DEPTH 64

struct _ufo_config_t {
    ufo_value_t *root;
};

//  --------------------------------------------------------------------------
//  Schema helpers

//  A map row is a section when other rows live below it.
static bool
s_is_section (const ufo_config_key_t *row)
{
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    size_t len = strlen (row->path);
    for (size_t i = 0; i < count; i++)
        if (strncmp (schema [i].path, row->path, len) == 0 && schema [i].path [len] == '.')
            return true;
    return false;
}

//  Short description of a value for error messages: its type and (the start of) its JSON.
static void
s_describe (const ufo_value_t *value, char *out, size_t cap)
{
    size_t len;
    char *json = ufo_json_dump (value, UFO_JSON_COMPACT, &len);
    if (len > 40)
        snprintf (out, cap, "%s %.40s...", ufo_value_type_name (ufo_value_type (value)), json);
    else
        snprintf (out, cap, "%s %s", ufo_value_type_name (ufo_value_type (value)), json);
    free (json);
}

//  Parses "min..max" (either end may be empty). Returns false if there is no range.
static bool
s_range (const char *range, double *min, double *max)
{
    if (!range)
        return false;
    const char *dots = strstr (range, "..");
    assert (dots);          //  a malformed range in the schema is a programmer error
    *min = dots == range ? -INFINITY : strtod (range, NULL);
    *max = dots [2] ? strtod (dots + 2, NULL) : INFINITY;
    return true;
}

static bool
s_choice_ok (const char *choices, const char *s, size_t len)
{
    const char *p = choices;
    while (*p) {
        const char *bar = strchr (p, '|');
        size_t n = bar ? (size_t) (bar - p) : strlen (p);
        if (n == len && memcmp (p, s, n) == 0)
            return true;
        if (!bar)
            break;
        p = bar + 1;
    }
    return false;
}

//  Checks value against the type signature sig[0..siglen); row gives the range and
//  choices when the value is the row's own (not an element of a container).
//  Errors name source and keypath.
static int
s_check (const ufo_value_t *value, const char *sig, size_t siglen, const ufo_config_key_t *row,
         const char *source, const char *keypath, ufo_error_t *err)
{
    ufo_type_t type = ufo_value_type (value);
    char found [96];
#define SIG_IS(name) (siglen == strlen (name) && memcmp (sig, name, siglen) == 0)
    bool ok;
    if (SIG_IS ("any"))
        return 0;
    else
    if (SIG_IS ("bool"))
        ok = type == UFO_TBOOL;
    else
    if (SIG_IS ("int"))
        ok = type == UFO_TINT;
    else
    if (SIG_IS ("float"))
        ok = type == UFO_TINT || type == UFO_TFLOAT;
    else
    if (SIG_IS ("string"))
        ok = type == UFO_TSTRING;
    else
    if (SIG_IS ("map"))
        ok = type == UFO_TMAP;
    else
    if (SIG_IS ("mcp_servers")) {       //  MCP servers per agent and application (ufo_mcp_spec.h)
        ufo_error_t sub;
        if (ufo_mcp_servers_check (value, keypath, &sub) < 0)
            return ufo_error_set (err, sub.code, "%s: %s", source, sub.message);
        ok = true;
    }
    else
    if (siglen > 6 && memcmp (sig, "list<", 5) == 0 && sig [siglen - 1] == '>') {
        if (type != UFO_TLIST)
            ok = false;
        else {
            for (size_t i = 0; i < ufo_value_size (value); i++) {
                char sub [256];
                snprintf (sub, sizeof (sub), "%s[%zu]", keypath, i);
                if (s_check (ufo_value_list_at (value, i), sig + 5, siglen - 6, NULL,
                             source, sub, err))
                    return -1;
            }
            ok = true;
        }
    }
    else
    if (siglen > 5 && memcmp (sig, "map<", 4) == 0 && sig [siglen - 1] == '>') {
        if (type != UFO_TMAP)
            ok = false;
        else {
            for (size_t i = 0; i < ufo_value_size (value); i++) {
                char sub [256];
                snprintf (sub, sizeof (sub), "%s.%s", keypath, ufo_value_map_key_at (value, i));
                if (s_check (ufo_value_map_value_at (value, i), sig + 4, siglen - 5, NULL,
                             source, sub, err))
                    return -1;
            }
            ok = true;
        }
    }
    else {
        assert (!"unknown type signature in the configuration schema");
        ok = false;
    }
#undef SIG_IS
    if (!ok) {
        s_describe (value, found, sizeof (found));
        return ufo_error_set (err, UFO_E_TYPE, "%s: %s: expected %.*s, found %s",
                              source, keypath, (int) siglen, sig, found);
    }
    if (type == UFO_TSTRING && strlen (ufo_value_str (value)) != ufo_value_strlen (value))
        return ufo_error_set (err, UFO_E_RANGE, "%s: %s: the string contains a NUL byte",
                              source, keypath);
    if (!row)
        return 0;
    double min, max;
    if ((type == UFO_TINT || type == UFO_TFLOAT) && s_range (row->range, &min, &max)) {
        double x = ufo_value_float (value);
        if (!(x >= min && x <= max)) {
            s_describe (value, found, sizeof (found));
            return ufo_error_set (err, UFO_E_RANGE, "%s: %s: %s is out of range %s",
                                  source, keypath, found, row->range);
        }
    }
    if (type == UFO_TSTRING && row->choices
    &&  !s_choice_ok (row->choices, ufo_value_str (value), ufo_value_strlen (value))) {
        s_describe (value, found, sizeof (found));
        return ufo_error_set (err, UFO_E_RANGE, "%s: %s: %s is not one of %s",
                              source, keypath, found, row->choices);
    }
    return 0;
}

//  Checks *value_p against its row; a float key given an integer gets the equal float.
static int
s_check_row (ufo_value_t **value_p, const ufo_config_key_t *row, const char *source,
             ufo_error_t *err)
{
    if (s_check (*value_p, row->type, strlen (row->type), row, source, row->path, err))
        return -1;
    if (ufo_value_type (*value_p) == UFO_TINT && strcmp (row->type, "float") == 0) {
        ufo_value_t *f = ufo_value_new_float ((double) ufo_value_int (*value_p));
        ufo_value_destroy (value_p);
        *value_p = f;
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  Merging a tree of settings into the configuration tree

#define UFO_CONFIG_MAX_WARNINGS 20     //  per load; the rest are counted in one line

static int
s_merge (ufo_value_t *dst, const ufo_value_t *src, const char *prefix, const char *source,
         size_t *warned, ufo_error_t *err)
{
    for (size_t i = 0; i < ufo_value_size (src); i++) {
        const char *key = ufo_value_map_key_at (src, i);
        const ufo_value_t *value = ufo_value_map_value_at (src, i);
        char path [512];
        snprintf (path, sizeof (path), "%s%s%s", prefix, *prefix ? "." : "", key);
        //  A key holding a dot could never be read back by its dotted path: unknown.
        const ufo_config_key_t *row = strchr (key, '.') ? NULL : ufo_config_schema_find (path);
        if (!row) {
            if ((*warned)++ < UFO_CONFIG_MAX_WARNINGS)
                ufo_warn ("%s: unknown configuration key '%s' (kept, but nothing reads it)",
                          source, path);
            ufo_value_map_set_copy (dst, key, value);
            continue;
        }
        if (ufo_value_type (value) == UFO_TNULL && !row->dflt) {
            ufo_value_map_remove (dst, key);        //  null unsets an optional key
            continue;
        }
        ufo_value_t *copy = ufo_value_dup (value);
        if (s_check_row (&copy, row, source, err)) {
            ufo_value_destroy (&copy);
            return -1;
        }
        if (ufo_value_type (copy) == UFO_TMAP) {
            //  Sections and free maps merge key by key.
            ufo_value_t *child = ufo_value_map_get (dst, key);
            if (!child || ufo_value_type (child) != UFO_TMAP) {
                ufo_value_t *fresh = ufo_value_new_map ();
                child = ufo_value_map_set (dst, key, &fresh);
            }
            int rc = 0;
            if (s_is_section (row))
                rc = s_merge (child, copy, path, source, warned, err);
            else
                for (size_t j = 0; j < ufo_value_size (copy); j++)
                    ufo_value_map_set_copy (child, ufo_value_map_key_at (copy, j),
                                            ufo_value_map_value_at (copy, j));
            ufo_value_destroy (&copy);
            if (rc)
                return -1;
        }
        else
            ufo_value_map_set (dst, key, &copy);
    }
    return 0;
}

//  Builds {a: {b: {c: *value_p}}} for the path "a.b.c", taking ownership of *value_p.
static ufo_value_t *
s_patch (const char *path, ufo_value_t **value_p)
{
    const char *dot = strrchr (path, '.');
    ufo_value_t *inner = *value_p;
    *value_p = NULL;
    const char *end = path + strlen (path);
    while (true) {
        const char *start = dot ? dot + 1 : path;
        char key [256];
        snprintf (key, sizeof (key), "%.*s", (int) (end - start), start);
        ufo_value_t *map = ufo_value_new_map ();
        ufo_value_map_set (map, key, &inner);
        inner = map;
        if (!dot)
            break;
        end = dot;
        dot = NULL;
        for (const char *p = end - 1; p >= path; p--)
            if (*p == '.') {
                dot = p;
                break;
            }
    }
    return inner;
}

//  Applies a settings tree to a copy of the configuration; swaps it in on success.
static int
s_apply (ufo_config_t *self, const ufo_value_t *src, const char *source, ufo_error_t *err)
{
    if (ufo_value_type (src) != UFO_TMAP) {
        char found [96];
        s_describe (src, found, sizeof (found));
        return ufo_error_set (err, UFO_E_TYPE, "%s: the configuration must be a JSON object, "
                              "found %s", source, found);
    }
    ufo_value_t *copy = ufo_value_dup (self->root);
    size_t warned = 0;
    int rc = s_merge (copy, src, "", source, &warned, err);
    if (warned > UFO_CONFIG_MAX_WARNINGS)
        ufo_warn ("%s: %zu more unknown configuration keys", source,
                  warned - UFO_CONFIG_MAX_WARNINGS);
    if (rc) {
        ufo_value_destroy (&copy);
        return -1;
    }
    ufo_value_destroy (&self->root);
    self->root = copy;
    return 0;
}

//  --------------------------------------------------------------------------
//  Construction

ufo_config_t *
ufo_config_new (void)
{
    ufo_config_t *self = (ufo_config_t *) ufo_calloc (1, sizeof (ufo_config_t));
    self->root = ufo_value_new_map ();
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    for (size_t i = 0; i < count; i++) {
        if (!schema [i].dflt)
            continue;
        ufo_error_t err;
        ufo_value_t *value = ufo_json_parse_str (schema [i].dflt, &err);
        assert (value);     //  the schema's defaults are ours: a bad one is a bug
        int rc = s_check_row (&value, &schema [i], "schema", &err);
        assert (rc == 0);
        UFO_UNUSED (rc);
        //  Rows come parents first, so the parent map already exists.
        const char *dot = strrchr (schema [i].path, '.');
        ufo_value_t *parent = self->root;
        if (dot) {
            char parent_path [256];
            snprintf (parent_path, sizeof (parent_path), "%.*s",
                      (int) (dot - schema [i].path), schema [i].path);
            parent = ufo_value_path (self->root, parent_path);
            assert (parent && ufo_value_type (parent) == UFO_TMAP);
        }
        ufo_value_map_set (parent, dot ? dot + 1 : schema [i].path, &value);
    }
    return self;
}

void
ufo_config_destroy (ufo_config_t **self_p)
{
    if (self_p && *self_p) {
        ufo_value_destroy (&(*self_p)->root);
        free (*self_p);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Loading

static int
s_load_text (ufo_config_t *self, const char *text, size_t len, const char *source,
             ufo_error_t *err)
{
    ufo_json_limits_t limits = { UFO_CONFIG_MAX_DEPTH, UFO_CONFIG_MAX_BYTES, false };
    ufo_error_t perr;
    ufo_error_clear (&perr);
    ufo_value_t *tree = ufo_json_parse (text, len, &limits, &perr);
    if (!tree) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < perr.offset && i < len; i++) {
            if (text [i] == '\n') {
                line++;
                col = 1;
            }
            else
                col++;
        }
        return ufo_error_set_at (err, perr.code, perr.offset,
                                 "%s: invalid JSON at line %zu, column %zu (offset %zu): %s",
                                 source, line, col, perr.offset, perr.message);
    }
    int rc = s_apply (self, tree, source, err);
    ufo_value_destroy (&tree);
    return rc;
}

int
ufo_config_load_text (ufo_config_t *self, const char *text, size_t len, ufo_error_t *err)
{
    assert (self);
    ufo_error_clear (err);
    if (!text && len)
        return ufo_error_set (err, UFO_E_INVALID, "configuration text: no data");
    return s_load_text (self, text ? text : "", len, "configuration text", err);
}

int
ufo_config_load_file (ufo_config_t *self, const char *path, ufo_error_t *err)
{
    assert (self);
    ufo_error_clear (err);
    if (!path)
        return ufo_error_set (err, UFO_E_INVALID, "configuration file: no path given");
    FILE *file = fopen (path, "rb");
    if (!file)
        return ufo_error_set (err, errno == ENOENT ? UFO_E_NOT_FOUND : UFO_E_IO,
                              "%s: cannot open the configuration file: %s", path, strerror (errno));
    ufo_buf_t buf = {0};
    char chunk [65536];
    size_t got;
    int rc = 0;
    while ((got = fread (chunk, 1, sizeof (chunk), file)) > 0) {
        if (buf.len + got > UFO_CONFIG_MAX_BYTES) {
            rc = ufo_error_set (err, UFO_E_TOO_LARGE, "%s: the configuration file is larger "
                                "than %u bytes", path, UFO_CONFIG_MAX_BYTES);
            break;
        }
        ufo_buf_append (&buf, chunk, got);
    }
    if (rc == 0 && ferror (file))
        rc = ufo_error_set (err, UFO_E_IO, "%s: cannot read the configuration file", path);
    fclose (file);
    if (rc == 0)
        rc = s_load_text (self, buf.data ? buf.data : "", buf.len, path, err);
    ufo_buf_free (&buf);
    return rc;
}

//  --------------------------------------------------------------------------
//  Environment

//  Finds the schema row whose path equals the variable's name after UFO_, with "__"
//  read as "." and letters compared without case.
static const ufo_config_key_t *
s_env_row (const char *name, size_t len)
{
    char path [256];
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < sizeof (path); i++) {
        if (name [i] == '_' && i + 1 < len && name [i + 1] == '_') {
            path [o++] = '.';
            i++;
        }
        else
            path [o++] = name [i];
    }
    path [o] = 0;
    if (o == 0 || o + 1 >= sizeof (path))
        return NULL;
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    for (size_t i = 0; i < count; i++)
        if (strcasecmp (schema [i].path, path) == 0)
            return &schema [i];
    return NULL;
}

static bool
s_env_ignored (const char *name, size_t len)
{
    for (const char *const *p = ufo_config_env_ignored (); *p; p++)
        if (strlen (*p) == len && memcmp (*p, name, len) == 0)
            return true;
    return false;
}

extern char **environ;

//  The one model setting: UFO_API_TYPE, UFO_API_BASE, UFO_API_KEY, UFO_API_MODEL,
//  UFO_API_VERSION and UFO_API_DEPLOYMENT_ID set that key in every agent block whose value
//  is still the built-in default (the shipped config/ufo.json repeats the defaults, so
//  "default" is what a block that does not choose its own value holds). EVALUATION_AGENT
//  follows APP_AGENT as always. Applied before the per-key variables, so
//  UFO_HOST_AGENT__API_BASE and friends still win for their block.
static int
s_apply_model_env (ufo_config_t *staged, char **envp, ufo_error_t *err)
{
    static const char *const blocks [] = { "HOST_AGENT", "APP_AGENT", "BACKUP_AGENT" };
    for (char **e = envp; *e; e++) {
        if (strncmp (*e, "UFO_API_", 8) != 0)
            continue;
        const char *eq = strchr (*e, '=');
        if (!eq)
            continue;
        char key [64];
        size_t klen = (size_t) (eq - *e) - 4;
        if (klen >= sizeof key || !eq [1])
            continue;       //  empty: not set (compose passes every variable, set or not)
        snprintf (key, sizeof key, "%.*s", (int) klen, *e + 4);
        for (size_t b = 0; b < UFO_ARRAY_SIZE (blocks); b++) {
            char path [128];
            snprintf (path, sizeof path, "%s.%s", blocks [b], key);
            const ufo_config_key_t *row = ufo_config_schema_find (path);
            if (!row || strcmp (row->type, "string") || !row->dflt)
                continue;       //  not one of the model keys: the loop below warns
            const ufo_value_t *now = ufo_value_path (staged->root, path);
            ufo_value_t *dflt = ufo_json_parse (row->dflt, strlen (row->dflt), NULL, NULL);
            bool is_default = !now || ufo_value_type (now) == UFO_TNULL
                           || (ufo_value_type (now) == UFO_TSTRING
                               && !strcmp (ufo_value_str (now), ufo_value_str (dflt)));
            ufo_value_destroy (&dflt);
            if (!is_default)
                continue;
            char source [96];
            snprintf (source, sizeof source, "environment variable UFO_%s", key);
            ufo_value_t *value = ufo_value_new_string (eq + 1);
            ufo_value_t *patch = s_patch (path, &value);
            int rc = s_apply (staged, patch, source, err);
            ufo_value_destroy (&patch);
            if (rc)
                return -1;
        }
    }
    return 0;
}

int
ufo_config_apply_env (ufo_config_t *self, char **envp, ufo_error_t *err)
{
    assert (self);
    ufo_error_clear (err);
    if (!envp)
        envp = environ;
    ufo_config_t staged = { ufo_value_dup (self->root) };
    int rc = s_apply_model_env (&staged, envp, err);
    for (char **e = envp; *e && rc == 0; e++) {
        if (strncmp (*e, "UFO_", 4) != 0)
            continue;
        const char *eq = strchr (*e, '=');
        if (!eq)
            continue;
        size_t name_len = (size_t) (eq - *e);
        if (s_env_ignored (*e, name_len))
            continue;
        const char *text = eq + 1;
        char source [160];
        snprintf (source, sizeof (source), "environment variable %.*s",
                  (int) (name_len > 120 ? 120 : name_len), *e);
        const ufo_config_key_t *row = s_env_row (*e + 4, name_len - 4);
        if (!row) {
            ufo_warn ("%s matches no configuration key (ignored)", source);
            continue;
        }
        ufo_value_t *value;
        if (strcmp (row->type, "string") == 0)
            value = ufo_value_new_string (text);
        else {
            ufo_json_limits_t limits = { UFO_CONFIG_MAX_DEPTH, UFO_CONFIG_MAX_BYTES, false };
            ufo_error_t perr;
            value = ufo_json_parse (text, strlen (text), &limits, &perr);
            if (!value) {
                rc = ufo_error_set (err, UFO_E_TYPE, "%s: %s: expected %s, found '%.40s' "
                                    "(not JSON: %s)", source, row->path, row->type, text,
                                    perr.message);
                break;
            }
        }
        ufo_value_t *patch = s_patch (row->path, &value);
        rc = s_apply (&staged, patch, source, err);
        ufo_value_destroy (&patch);
    }
    if (rc == 0) {
        ufo_value_destroy (&self->root);
        self->root = staged.root;
    }
    else
        ufo_value_destroy (&staged.root);
    return rc;
}

ufo_config_t *
ufo_config_load (const char *path, ufo_error_t *err)
{
    ufo_error_clear (err);
    ufo_config_t *self = ufo_config_new ();
    if (!path) {
        const char *named = getenv ("UFO_CONFIG");
        if (named && *named)
            path = named;
    }
    char found [4096];
    if (!path && ufo_data_find ("config/ufo.json", found, sizeof found))
        path = found;           //  ./config, the installation, or the source tree
    if (path) {
        if (ufo_config_load_file (self, path, err))
            goto failed;
        ufo_debug ("config: loaded %s", path);
    }
    else
        ufo_info ("config: no configuration file found; using the built-in defaults");
    if (ufo_config_apply_env (self, NULL, err))
        goto failed;
    return self;

failed:
    ufo_config_destroy (&self);
    return NULL;
}

//  --------------------------------------------------------------------------
//  Reading and setting

const ufo_value_t *
ufo_config_get (const ufo_config_t *self, const char *path)
{
    assert (self);
    return path ? ufo_value_path (self->root, path) : NULL;
}

int64_t
ufo_config_int (const ufo_config_t *self, const char *path, int64_t dflt)
{
    const ufo_value_t *value = ufo_config_get (self, path);
    if (ufo_value_type (value) == UFO_TINT)
        return ufo_value_int (value);
    if (value && ufo_value_type (value) == UFO_TFLOAT) {
        double f = ufo_value_float (value);
        if (f == floor (f) && f >= -9.2e18 && f <= 9.2e18)
            return (int64_t) f;
    }
    return dflt;
}

double
ufo_config_float (const ufo_config_t *self, const char *path, double dflt)
{
    const ufo_value_t *value = ufo_config_get (self, path);
    ufo_type_t type = value ? ufo_value_type (value) : UFO_TNULL;
    return type == UFO_TINT || type == UFO_TFLOAT ? ufo_value_float (value) : dflt;
}

bool
ufo_config_bool (const ufo_config_t *self, const char *path, bool dflt)
{
    const ufo_value_t *value = ufo_config_get (self, path);
    return value && ufo_value_type (value) == UFO_TBOOL ? ufo_value_bool (value) : dflt;
}

const char *
ufo_config_str (const ufo_config_t *self, const char *path, const char *dflt)
{
    const ufo_value_t *value = ufo_config_get (self, path);
    return value && ufo_value_type (value) == UFO_TSTRING ? ufo_value_str (value) : dflt;
}

int
ufo_config_set (ufo_config_t *self, const char *path, ufo_value_t **value_p, ufo_error_t *err)
{
    assert (self);
    assert (value_p);
    ufo_error_clear (err);
    if (!path || !*path || strlen (path) >= 256 || path [0] == '.' || strstr (path, "..")
    ||  path [strlen (path) - 1] == '.') {
        ufo_value_destroy (value_p);
        return ufo_error_set (err, UFO_E_INVALID, "ufo_config_set: invalid key path '%.200s'",
                              path ? path : "(null)");
    }
    if (!*value_p)
        *value_p = ufo_value_new_null ();
    ufo_value_t *patch = s_patch (path, value_p);
    int rc = s_apply (self, patch, "ufo_config_set", err);
    ufo_value_destroy (&patch);
    return rc;
}

const ufo_value_t *
ufo_config_root (const ufo_config_t *self)
{
    assert (self);
    return self->root;
}

const ufo_value_t *
ufo_config_agent (const ufo_config_t *self, const char *block, const char *key)
{
    assert (self);
    if (!block || !key)
        return NULL;
    const ufo_value_t *value = ufo_value_map_get (ufo_value_map_get (self->root, block), key);
    if (!value && strcmp (block, "EVALUATION_AGENT") == 0)
        value = ufo_value_map_get (ufo_value_map_get (self->root, "APP_AGENT"), key);
    if (!value)
        value = ufo_value_map_get (self->root, key);
    return value;
}

void
ufo_config_apply_log (const ufo_config_t *self)
{
    assert (self);
    const char *env_level = getenv ("UFO_LOG_LEVEL");
    if (!env_level || ufo_log_level_parse (env_level) < 0) {
        int level = ufo_log_level_parse (ufo_config_str (self, "log.level", "info"));
        if (level >= 0)
            ufo_log_set_level ((ufo_log_level_t) level);
    }
    const char *env_json = getenv ("UFO_LOG_JSON");
    if (!env_json || !*env_json)
        ufo_log_set_json (ufo_config_bool (self, "log.json", false));
}
