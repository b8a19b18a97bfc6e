/*  ufo_eval_input.c - what the EvaluationAgent is shown, read from a log directory:
    requests, trajectory records, the catalogue descriptions of the actions used, subtask
    statuses and the screenshot files (docs/EVALUATION.md). Everything read from the logs
    is checked for shape; a malformed record is skipped, never trusted. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_eval_int.h"

#define S_MAX_TEXT        4000              //  bytes kept of one string field of a step
#define S_MAX_IMAGE_FILE  (32 * 1024 * 1024) //  a larger screenshot file is skipped
#define S_MAX_ROUNDS      10000
#define S_MAX_SHOTS       2000              //  screenshots considered; beyond, the latest replaces the last

//  Copies at most max bytes of s, cut on a UTF-8 character boundary, with a marker.
static ufo_value_t *
s_text (const char *s, size_t len)
{
    if (len <= S_MAX_TEXT)
        return ufo_value_new_stringn (s, len);
    size_t cut = S_MAX_TEXT;
    while (cut > 0 && ((unsigned char) s [cut] & 0xC0) == 0x80)
        cut--;
    ufo_value_t *v = ufo_value_new_stringf ("%.*s... [%zu bytes cut]", (int) cut, s, len - cut);
    return v;
}

//  Deep copy with long strings shortened.
static ufo_value_t *
s_bounded (const ufo_value_t *v, int depth)
{
    switch (ufo_value_type (v)) {
        case UFO_TSTRING:
            return s_text (ufo_value_str (v), ufo_value_strlen (v));
        case UFO_TLIST: {
            ufo_value_t *out = ufo_value_new_list ();
            for (size_t i = 0; i < ufo_value_size (v) && depth < 16; i++) {
                ufo_value_t *c = s_bounded (ufo_value_list_at (v, i), depth + 1);
                ufo_value_list_push (out, &c);
            }
            return out;
        }
        case UFO_TMAP: {
            ufo_value_t *out = ufo_value_new_map ();
            for (size_t i = 0; i < ufo_value_size (v) && depth < 16; i++) {
                ufo_value_t *c = s_bounded (ufo_value_map_value_at (v, i), depth + 1);
                ufo_value_map_set (out, ufo_value_map_key_at (v, i), &c);
            }
            return out;
        }
        default:
            return ufo_value_dup (v);
    }
}

//  True when a field is worth showing (present, not null, not an empty string/list/map).
static bool
s_present (const ufo_value_t *v)
{
    switch (ufo_value_type (v)) {
        case UFO_TNULL:
            return false;
        case UFO_TSTRING:
            return ufo_value_strlen (v) > 0;
        case UFO_TLIST:
        case UFO_TMAP:
            return ufo_value_size (v) > 0;
        default:
            return v != NULL;
    }
}

//  The step fields the evaluator sees, in this order (those present).
static const char *s_step_keys [] = {
    "Step", "Round", "AgentName", "Application", "Subtask", "Observation", "Thought",
    "CurrentSubtask", "ControlText", "Action", "Bash", "Message", "Status", "Comment", "Results",
    "ActionSuccess", "Questions", "Answers", "UserConfirm", "error"
};

ufo_value_t *
ufo_eval_step_item (const ufo_value_t *record)
{
    ufo_value_t *item = ufo_value_new_map ();
    for (size_t k = 0; k < UFO_ARRAY_SIZE (s_step_keys); k++) {
        const char *key = s_step_keys [k];
        const ufo_value_t *v = ufo_value_map_get (record, key);
        if (strcmp (key, "AgentName") == 0 && !s_present (v))
            v = ufo_value_map_get (record, "Agent");
        if (strcmp (key, "Action") == 0 && !s_present (v)) {
            //  Older or partial records: the called function alone.
            const ufo_value_t *fn = ufo_value_map_get (record, "FunctionCall");
            if (s_present (fn)) {
                ufo_value_t *a = ufo_value_new_map ();
                ufo_value_map_set_copy (a, "function", fn);
                const ufo_value_t *args = ufo_value_map_get (record, "Args");
                if (args)
                    ufo_value_map_set_copy (a, "args", args);
                ufo_value_map_set (item, "Action", &a);
            }
            continue;
        }
        if ((strcmp (key, "Step") == 0 || strcmp (key, "Round") == 0)
        &&  ufo_value_type (v) == UFO_TINT) {
            ufo_value_map_set_int (item, key, ufo_value_int (v));
            continue;
        }
        if (!s_present (v))
            continue;
        ufo_value_t *copy = s_bounded (v, 0);
        ufo_value_map_set (item, strcmp (key, "AgentName") == 0 ? "Agent" : key, &copy);
    }
    return item;
}

const char *
ufo_eval_step_function (const ufo_value_t *record)
{
    const char *fn = ufo_value_map_str (record, "FunctionCall", NULL);
    if (!fn || !*fn)
        fn = ufo_value_map_str (ufo_value_map_get (record, "Action"), "function", NULL);
    if (!fn || !*fn)
        fn = ufo_value_map_str (record, "Function", NULL);
    return fn && *fn ? fn : NULL;
}

//  --- Requests ---------------------------------------------------------------------

//  The board's {"request_<r>": text} items as a list by round, or NULL when there are none.
static ufo_value_t *
s_board_requests (const ufo_value_t *board)
{
    const ufo_value_t *items = ufo_value_map_get (board, "requests");
    const char *texts [64] = { NULL };
    size_t rounds = 0;
    for (size_t i = 0; i < ufo_value_size (items); i++) {
        const ufo_value_t *item = ufo_value_list_at (items, i);
        for (size_t k = 0; k < ufo_value_size (item); k++) {
            const char *key = ufo_value_map_key_at (item, k);
            const ufo_value_t *v = ufo_value_map_value_at (item, k);
            char *end = NULL;
            if (!key || strncmp (key, "request_", 8) != 0 || ufo_value_type (v) != UFO_TSTRING)
                continue;
            long r = strtol (key + 8, &end, 10);
            if (end == key + 8 || *end || r < 0 || r >= (long) UFO_ARRAY_SIZE (texts))
                continue;
            texts [r] = ufo_value_str (v);
            if ((size_t) r + 1 > rounds)
                rounds = (size_t) r + 1;
        }
    }
    if (rounds == 0)
        return NULL;
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t r = 0; r < rounds; r++)
        ufo_value_list_push_str (out, texts [r] ? texts [r] : "");
    return out;
}

ufo_value_t *
ufo_eval_load_requests (const char *dir, const ufo_value_t *given, const ufo_value_t *records,
                        const ufo_value_t *board)
{
    ufo_value_t *out = ufo_value_new_list ();
    const ufo_value_t *from = given;
    ufo_value_t *doc = NULL;
    if ((ufo_value_type (from) != UFO_TLIST || ufo_value_size (from) == 0) && dir) {
        char path [PATH_MAX];
        snprintf (path, sizeof path, "%s/request.json", dir);
        ufo_json_limits_t limits = { .max_depth = 64, .max_bytes = 16 * 1024 * 1024 };
        if (access (path, R_OK) == 0) {
            ufo_error_t err;
            doc = ufo_json_parse_file (path, &limits, &err);
            if (!doc)
                ufo_warn ("evaluation: %s is unreadable (%s); requests come from response.log",
                          path, err.message);
        }
        from = ufo_value_map_get (doc, "requests");
    }
    if (ufo_value_type (from) != UFO_TLIST || ufo_value_size (from) == 0) {
        ufo_value_destroy (&doc);
        doc = s_board_requests (board);
        from = doc;
    }
    if (ufo_value_type (from) == UFO_TLIST && ufo_value_size (from) > 0) {
        for (size_t i = 0; i < ufo_value_size (from) && i < S_MAX_ROUNDS; i++) {
            const ufo_value_t *r = ufo_value_list_at (from, i);
            ufo_value_list_push_str (out, ufo_value_type (r) == UFO_TSTRING ? ufo_value_str (r) : "");
        }
        ufo_value_destroy (&doc);
        return out;
    }
    ufo_value_destroy (&doc);
    //  Last resort: the Request field of the steps, by round (the first one seen wins).
    int64_t rounds = 0;
    for (size_t i = 0; i < ufo_value_size (records); i++) {
        int64_t round = ufo_value_map_int (ufo_value_list_at (records, i), "Round", 0);
        if (round >= 0 && round < S_MAX_ROUNDS && round + 1 > rounds)
            rounds = round + 1;
    }
    for (int64_t r = 0; r < rounds; r++) {
        const char *text = "";
        for (size_t i = 0; i < ufo_value_size (records) && !*text; i++) {
            const ufo_value_t *rec = ufo_value_list_at (records, i);
            const char *req = ufo_value_map_str (rec, "Request", NULL);
            if (ufo_value_map_int (rec, "Round", 0) == r && req)
                text = req;
        }
        ufo_value_list_push_str (out, text);
    }
    return out;
}

//  --- The action catalogue -------------------------------------------------------------

ufo_value_t *
ufo_eval_load_catalogue (const char *prompts_dir)
{
    ufo_value_t *map = ufo_value_new_map ();
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/app_agent/actions.tmpl", prompts_dir ? prompts_dir : ".");
    FILE *f = fopen (path, "r");
    if (!f) {
        ufo_warn ("evaluation: no action catalogue at %s; actions are shown without descriptions",
                  path);
        return map;
    }
    char line [4096];
    while (fgets (line, sizeof line, f)) {
        //  - "name": description
        if (strncmp (line, "- \"", 3) != 0)
            continue;
        char *end = strchr (line + 3, '"');
        if (!end || end [1] != ':')
            continue;
        size_t n = strlen (line);
        while (n > 0 && (line [n - 1] == '\n' || line [n - 1] == '\r'))
            line [--n] = '\0';
        *end = '\0';
        ufo_value_map_set_str (map, line + 3, end + 2 + (end [2] == ' '));
    }
    fclose (f);
    return map;
}

//  --- Screenshots ----------------------------------------------------------------------

//  A file name from the logs is accepted only as a plain name inside the directory.
static bool
s_safe_name (const char *name)
{
    return name && *name && !strchr (name, '/') && strcmp (name, ".") && strcmp (name, "..")
        && strlen (name) < 256;
}

static const char *
s_mime (const char *name)
{
    const char *dot = strrchr (name, '.');
    if (dot && (strcasecmp (dot, ".jpg") == 0 || strcasecmp (dot, ".jpeg") == 0))
        return "image/jpeg";
    if (dot && strcasecmp (dot, ".png") == 0)
        return "image/png";
    return NULL;
}

//  Adds {"file", "label", "bytes"} when the file exists, is an image and was not added yet.
//  At most S_MAX_SHOTS are kept: a later one replaces the last, so the last stays the latest.
void
ufo_eval_add_shot (ufo_value_t *shots, const char *dir, const char *name, const char *label)
{
    if (!s_safe_name (name) || !s_mime (name))
        return;
    for (size_t i = 0; i < ufo_value_size (shots); i++)
        if (strcmp (ufo_value_map_str (ufo_value_list_at (shots, i), "file", ""), name) == 0)
            return;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        return;
    if (st.st_size <= 0 || st.st_size > S_MAX_IMAGE_FILE) {
        ufo_warn ("evaluation: screenshot %s skipped (%lld bytes)", path, (long long) st.st_size);
        return;
    }
    if (ufo_value_size (shots) >= S_MAX_SHOTS)
        ufo_value_list_remove (shots, ufo_value_size (shots) - 1);
    ufo_value_t *s = ufo_value_new_map ();
    ufo_value_map_set_str (s, "file", name);
    ufo_value_map_set_str (s, "label", label);
    ufo_value_map_set_int (s, "bytes", (int64_t) st.st_size);
    ufo_value_list_push (shots, &s);
}

char *
ufo_eval_data_url (const char *dir, const char *name, ufo_error_t *err)
{
    const char *mime = s_mime (name);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *f = mime ? fopen (path, "rb") : NULL;
    if (!f) {
        ufo_error_set (err, UFO_E_IO, "cannot read screenshot %s", path);
        return NULL;
    }
    ufo_buf_t raw = { 0 };
    char chunk [65536];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0 && raw.len <= S_MAX_IMAGE_FILE)
        ufo_buf_append (&raw, chunk, n);
    fclose (f);
    const unsigned char *png = (const unsigned char *) "\x89PNG\r\n\x1a\n";
    bool ok = strcmp (mime, "image/png") == 0
            ? raw.len >= 8 && memcmp (raw.data, png, 8) == 0
            : raw.len >= 3 && (unsigned char) raw.data [0] == 0xFF && (unsigned char) raw.data [1] == 0xD8;
    if (!ok || raw.len > S_MAX_IMAGE_FILE) {
        ufo_buf_free (&raw);
        ufo_error_set (err, UFO_E_SYNTAX, "screenshot %s is not a valid %s file", path, mime);
        return NULL;
    }
    ufo_buf_t out = { 0 };
    ufo_buf_reserve (&out, 32 + (raw.len + 2) / 3 * 4);
    ufo_buf_printf (&out, "data:%s;base64,", mime);
    ufo_buf_base64 (&out, raw.data, raw.len);
    ufo_buf_free (&raw);
    return ufo_buf_detach (&out, NULL);
}

void
ufo_eval_board_shots (ufo_value_t *shots, const ufo_value_t *board, int64_t only_round)
{
    const ufo_value_t *items = ufo_value_map_get (board, "screenshots");
    for (size_t i = 0; i < ufo_value_size (items); i++) {
        const ufo_value_t *item = ufo_value_list_at (items, i);
        const char *url = ufo_value_map_str (item, "image_str", "");
        if (strncmp (url, "data:image/png;base64,", 22) != 0
        &&  strncmp (url, "data:image/jpeg;base64,", 23) != 0)
            continue;           //  no image fetched (or not an image we send)
        size_t len = strlen (url);
        if (len > S_MAX_IMAGE_FILE / 3 * 4 + 64)
            continue;
        const ufo_value_t *meta = ufo_value_map_get (item, "metadata");
        if (only_round >= 0 && ufo_value_map_int (meta, "Round", only_round) != only_round)
            continue;
        if (ufo_value_size (shots) >= S_MAX_SHOTS)
            ufo_value_list_remove (shots, ufo_value_size (shots) - 1);
        const char *path = ufo_value_map_str (item, "image_path", "");
        const char *base = strrchr (path, '/');
        base = base ? base + 1 : path;
        ufo_value_t *s = ufo_value_new_map ();
        ufo_value_map_set_str (s, "file", *base ? base : "(board image)");
        const char *reason = ufo_value_map_str (meta, "reason", ufo_value_map_str (meta, "Reason", ""));
        ufo_value_t *label = ufo_value_new_stringf ("Screenshot saved on the blackboard%s%s%s:",
                                                    *reason ? " (" : "", reason, *reason ? ")" : "");
        ufo_value_map_set (s, "label", &label);
        ufo_value_map_set_int (s, "bytes", (int64_t) (len / 4 * 3));
        ufo_value_map_set_str (s, "url", url);
        ufo_value_list_push (shots, &s);
    }
}
