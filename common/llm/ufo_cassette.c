/*  ufo_cassette.c - record / replay of LLM exchanges as JSON lines. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_cassette.h"
#include "ufo_hash.h"

#define S_MAX_LINE (64u * 1024 * 1024)

typedef struct {
    char key [65];
    char *agent;
    int64_t step;
    char *model;
    ufo_value_t *messages;      //  normalized
    char *content;
    char finish_reason [UFO_CASSETTE_FINISH_MAX];
    int64_t prompt_tokens, completion_tokens;
    double latency_s;
    size_t line;
    bool used;
} s_entry_t;

struct _ufo_cassette_t {
    ufo_cassette_mode_t mode;
    char *path;
    int fd;                     //  record: append-only file
    s_entry_t *entries;         //  replay
    size_t nentries;
};

int
ufo_cassette_mode_parse (const char *text)
{
    if (text && strcasecmp (text, "record") == 0)
        return UFO_CASSETTE_RECORD;
    if (text && strcasecmp (text, "replay") == 0)
        return UFO_CASSETTE_REPLAY;
    return 0;
}

ufo_cassette_mode_t
ufo_cassette_mode (const ufo_cassette_t *self)
{
    return self->mode;
}

const char *
ufo_cassette_path (const ufo_cassette_t *self)
{
    return self->path;
}

size_t
ufo_cassette_size (const ufo_cassette_t *self)
{
    return self->nentries;
}

static void
s_entry_free (s_entry_t *e)
{
    free (e->agent);
    free (e->model);
    free (e->content);
    ufo_value_destroy (&e->messages);
}

void
ufo_cassette_destroy (ufo_cassette_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_cassette_t *self = *self_p;
    if (self->fd >= 0)
        close (self->fd);
    for (size_t i = 0; i < self->nentries; i++)
        s_entry_free (&self->entries [i]);
    free (self->entries);
    free (self->path);
    free (self);
    *self_p = NULL;
}

//  A copy of messages with each image data URL replaced: by "image:<hash16>:<length>"
//  (with_hash), or by "image" (for the lookup key: screenshots of a real desktop are never
//  byte-identical from one run to the next, so replay matches on the text and image count).
static ufo_value_t *
s_normalize (const ufo_value_t *messages, bool with_hash)
{
    ufo_value_t *copy = ufo_value_dup (messages);
    for (size_t i = 0; i < ufo_value_size (copy); i++) {
        ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (copy, i), "content");
        for (size_t k = 0; ufo_value_type (content) == UFO_TLIST && k < ufo_value_size (content); k++) {
            ufo_value_t *image = ufo_value_map_get (ufo_value_list_at (content, k), "image_url");
            const char *url = ufo_value_map_str (image, "url", NULL);
            if (!url || (strncmp (url, "data:", 5) != 0 && strncmp (url, "image:", 6) != 0))
                continue;
            ufo_value_t *repl;
            if (!with_hash)
                repl = ufo_value_new_string ("image");
            else
            if (!strncmp (url, "image:", 6))
                continue;       //  already normalised
            else {
                char hex [65];
                size_t len = ufo_value_strlen (ufo_value_map_get (image, "url"));
                ufo_sha256_hex (url, len, hex);
                hex [16] = 0;
                repl = ufo_value_new_stringf ("image:%s:%zu", hex, len);
            }
            ufo_value_map_set (image, "url", &repl);
        }
    }
    return copy;
}

ufo_value_t *
ufo_cassette_normalize (const ufo_value_t *messages)
{
    return s_normalize (messages, true);
}

static void
s_key_of_normalized (const char *model, const ufo_value_t *normalized, char key [65])
{
    ufo_value_t *pair = ufo_value_new_list ();
    ufo_value_list_push_str (pair, model ? model : "");
    ufo_value_t *m = s_normalize (normalized, false);
    ufo_value_list_push (pair, &m);
    size_t len;
    char *text = ufo_json_dump (pair, UFO_JSON_COMPACT, &len);
    ufo_sha256_hex (text, len, key);
    free (text);
    ufo_value_destroy (&pair);
}

void
ufo_cassette_key (const char *model, const ufo_value_t *messages, char key [65])
{
    ufo_value_t *n = ufo_cassette_normalize (messages);
    s_key_of_normalized (model, n, key);
    ufo_value_destroy (&n);
}

static int
s_load_line (ufo_cassette_t *self, const char *line, size_t len, size_t lineno, ufo_error_t *err)
{
    ufo_error_t perr;
    ufo_value_t *v = ufo_json_parse (line, len, NULL, &perr);
    if (!v)
        return ufo_error_set (err, UFO_E_SYNTAX, "%s:%zu: %s", self->path, lineno, perr.message);
    const char *key = ufo_value_map_str (v, "key", NULL);
    const char *content = ufo_value_map_str (v, "content", NULL);
    const ufo_value_t *messages = ufo_value_map_get (v, "messages");
    if (!key || strlen (key) != 64 || !content || ufo_value_type (messages) != UFO_TLIST) {
        ufo_value_destroy (&v);
        return ufo_error_set (err, UFO_E_MISSING, "%s:%zu: a recording needs \"key\" (64 hex), \"content\" "
                             "and \"messages\"", self->path, lineno);
    }
    self->entries = ufo_realloc (self->entries, (self->nentries + 1) * sizeof (s_entry_t));
    s_entry_t *e = &self->entries [self->nentries++];
    memset (e, 0, sizeof *e);
    snprintf (e->key, sizeof e->key, "%s", key);
    e->agent = ufo_strdup (ufo_value_map_str (v, "agent", ""));
    e->step = ufo_value_map_int (v, "step", 0);
    e->model = ufo_strdup (ufo_value_map_str (v, "model", ""));
    e->messages = ufo_value_dup (messages);
    e->content = ufo_strdup (content);
    //  Outside input: only a short printable word is kept (a longer one is no finish_reason).
    const char *finish = ufo_value_map_str (v, "finish_reason", "");
    bool finish_ok = strlen (finish) < sizeof e->finish_reason;
    for (const char *c = finish; finish_ok && *c; c++)
        finish_ok = isalnum ((unsigned char) *c) || *c == '_' || *c == '-';
    if (finish_ok)
        snprintf (e->finish_reason, sizeof e->finish_reason, "%s", finish);
    e->prompt_tokens = ufo_value_int (ufo_value_path (v, "usage.prompt_tokens"));
    e->completion_tokens = ufo_value_int (ufo_value_path (v, "usage.completion_tokens"));
    e->latency_s = ufo_value_map_float (v, "latency_s", 0);
    e->line = lineno;
    ufo_value_destroy (&v);
    return 0;
}

ufo_cassette_t *
ufo_cassette_open (const char *path, ufo_cassette_mode_t mode, ufo_error_t *err)
{
    if (!path || !*path || (mode != UFO_CASSETTE_RECORD && mode != UFO_CASSETTE_REPLAY)) {
        ufo_error_set (err, UFO_E_INVALID, "a cassette needs a file and the mode record or replay");
        return NULL;
    }
    ufo_cassette_t *self = ufo_calloc (1, sizeof (ufo_cassette_t));
    self->mode = mode;
    self->path = ufo_strdup (path);
    self->fd = -1;
    if (mode == UFO_CASSETTE_RECORD) {
        self->fd = open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (self->fd < 0) {
            ufo_error_set (err, UFO_E_IO, "cannot open cassette %s: %s", path, strerror (errno));
            ufo_cassette_destroy (&self);
        }
        return self;
    }
    FILE *f = fopen (path, "re");
    if (!f) {
        ufo_error_set (err, UFO_E_IO, "cannot read cassette %s: %s", path, strerror (errno));
        ufo_cassette_destroy (&self);
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    while ((n = getline (&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t) n;
        while (len && (line [len - 1] == '\n' || line [len - 1] == '\r'))
            len--;
        if (!len)
            continue;
        if (len > S_MAX_LINE || s_load_line (self, line, len, lineno, err)) {
            if (len > S_MAX_LINE)
                ufo_error_set (err, UFO_E_TOO_LARGE, "%s:%zu: line too long", path, lineno);
            ufo_cassette_destroy (&self);
            break;
        }
    }
    free (line);
    fclose (f);
    return self;
}

int
ufo_cassette_record (ufo_cassette_t *self, const char *agent, int64_t step, const char *model,
                     const ufo_value_t *messages, const char *content, const char *finish_reason,
                     int64_t prompt_tokens, int64_t completion_tokens, double latency_s,
                     ufo_error_t *err)
{
    if (self->mode != UFO_CASSETTE_RECORD)
        return ufo_error_set (err, UFO_E_CONFLICT, "cassette %s is not open for recording", self->path);
    ufo_value_t *normalized = ufo_cassette_normalize (messages);
    char key [65];
    s_key_of_normalized (model, normalized, key);
    ufo_value_t *line = ufo_value_new_map ();
    ufo_value_map_set_str (line, "key", key);
    ufo_value_map_set_str (line, "agent", agent ? agent : "");
    ufo_value_map_set_int (line, "step", step);
    ufo_value_map_set_str (line, "model", model ? model : "");
    ufo_value_map_set (line, "messages", &normalized);
    ufo_value_map_set_str (line, "content", content ? content : "");
    ufo_value_t *usage = ufo_value_new_map ();
    ufo_value_map_set_int (usage, "prompt_tokens", prompt_tokens);
    ufo_value_map_set_int (usage, "completion_tokens", completion_tokens);
    ufo_value_map_set (line, "usage", &usage);
    ufo_value_map_set_float (line, "latency_s", latency_s);
    if (finish_reason && *finish_reason)
        ufo_value_map_set_str (line, "finish_reason", finish_reason);
    ufo_buf_t b = { 0 };
    ufo_json_append (&b, line, UFO_JSON_COMPACT);
    ufo_buf_putc (&b, '\n');
    ufo_value_destroy (&line);
    ssize_t w = write (self->fd, b.data, b.len);
    int rc = 0;
    if (w < 0 || (size_t) w != b.len)
        rc = ufo_error_set (err, UFO_E_IO, "cannot write cassette %s: %s", self->path,
                            w < 0 ? strerror (errno) : "short write");
    ufo_buf_free (&b);
    return rc;
}

//  --- Explaining a miss -------------------------------------------------------------

typedef struct {
    size_t msg, part, offset;   //  position of the first difference
    char what [96];             //  "role", "text", "image", "message count", ...
    char recorded [160];
    char now [160];
} s_diff_t;

static void
s_excerpt (const char *s, size_t len, size_t at, char *out, size_t size)
{
    size_t start = at > 40 ? at - 40 : 0;
    while (start > 0 && start < len && ((unsigned char) s [start] & 0xC0) == 0x80)
        start++;
    size_t end = at + 60 < len ? at + 60 : len;
    while (end < len && end > start && ((unsigned char) s [end] & 0xC0) == 0x80)
        end--;
    size_t n = 0;
    if (start > 0 && n + 3 < size) {
        memcpy (out, "...", 3);
        n = 3;
    }
    for (size_t i = start; i < end && n + 4 < size; i++)
        out [n++] = (s [i] == '\n' || s [i] == '\r' || s [i] == '\t') ? ' ' : s [i];
    if (end < len && n + 4 < size) {
        memcpy (out + n, "...", 3);
        n += 3;
    }
    out [n] = 0;
}

//  Content as a list of parts (a string is one text part). Caller destroys.
static ufo_value_t *
s_parts (const ufo_value_t *message)
{
    const ufo_value_t *content = ufo_value_map_get (message, "content");
    if (ufo_value_type (content) == UFO_TLIST)
        return ufo_value_dup (content);
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *part = ufo_value_new_map ();
    ufo_value_map_set_str (part, "type", "text");
    ufo_value_map_set_str (part, "text", ufo_value_str (content) ? ufo_value_str (content) : "");
    ufo_value_list_push (list, &part);
    return list;
}

static const char *
s_part_text (const ufo_value_t *part)
{
    const char *t = ufo_value_map_str (part, "text", NULL);
    if (!t)
        t = ufo_value_str (ufo_value_path (part, "image_url.url"));
    return t ? t : "";
}

//  Finds the first difference between recorded and current messages. Returns false if equal.
static bool
s_compare (const ufo_value_t *rec, const ufo_value_t *now, s_diff_t *d)
{
    memset (d, 0, sizeof *d);
    size_t n = ufo_value_size (rec) < ufo_value_size (now) ? ufo_value_size (rec) : ufo_value_size (now);
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *rm = ufo_value_list_at (rec, i), *nm = ufo_value_list_at (now, i);
        d->msg = i;
        const char *rr = ufo_value_map_str (rm, "role", ""), *nr = ufo_value_map_str (nm, "role", "");
        if (strcmp (rr, nr)) {
            snprintf (d->what, sizeof d->what, "role");
            snprintf (d->recorded, sizeof d->recorded, "%s", rr);
            snprintf (d->now, sizeof d->now, "%s", nr);
            return true;
        }
        ufo_value_t *rp = s_parts (rm), *np = s_parts (nm);
        size_t pn = ufo_value_size (rp) < ufo_value_size (np) ? ufo_value_size (rp) : ufo_value_size (np);
        bool differ = false;
        for (size_t k = 0; k < pn && !differ; k++) {
            const ufo_value_t *a = ufo_value_list_at (rp, k), *b = ufo_value_list_at (np, k);
            d->part = k;
            const char *ta = s_part_text (a), *tb = s_part_text (b);
            bool images = !strcmp (ufo_value_map_str (a, "type", ""), "image_url")
                       && !strcmp (ufo_value_map_str (b, "type", ""), "image_url");
            if (images)
                continue;       //  images do not take part in matching
            if (strcmp (ufo_value_map_str (a, "type", ""), ufo_value_map_str (b, "type", "")) || strcmp (ta, tb)) {
                size_t off = 0;
                while (ta [off] && ta [off] == tb [off])
                    off++;
                d->offset = off;
                snprintf (d->what, sizeof d->what, "%s part %zu (%s)", nr, k, ufo_value_map_str (b, "type", "?"));
                s_excerpt (ta, strlen (ta), off, d->recorded, sizeof d->recorded);
                s_excerpt (tb, strlen (tb), off, d->now, sizeof d->now);
                differ = true;
            }
        }
        if (!differ && ufo_value_size (rp) != ufo_value_size (np)) {
            d->part = pn;
            snprintf (d->what, sizeof d->what, "%s number of parts", nr);
            snprintf (d->recorded, sizeof d->recorded, "%zu parts", ufo_value_size (rp));
            snprintf (d->now, sizeof d->now, "%zu parts", ufo_value_size (np));
            differ = true;
        }
        ufo_value_destroy (&rp);
        ufo_value_destroy (&np);
        if (differ)
            return true;
    }
    if (ufo_value_size (rec) == ufo_value_size (now))
        return false;
    d->msg = n;
    snprintf (d->what, sizeof d->what, "number of messages");
    snprintf (d->recorded, sizeof d->recorded, "%zu messages", ufo_value_size (rec));
    snprintf (d->now, sizeof d->now, "%zu messages", ufo_value_size (now));
    return true;
}

static bool
s_later (const s_diff_t *a, const s_diff_t *b)
{
    if (a->msg != b->msg)
        return a->msg > b->msg;
    if (a->part != b->part)
        return a->part > b->part;
    return a->offset > b->offset;
}

static char *
s_explain (ufo_cassette_t *self, const char *agent, int64_t step, const char *model,
           const ufo_value_t *normalized)
{
    ufo_buf_t b = { 0 };
    ufo_buf_printf (&b, "replay miss: %s step %" PRId64 ": no recording of this prompt in %s (%zu recordings)",
                    agent && *agent ? agent : "LLM", step, self->path, self->nentries);
    //  Closest: same agent first, then the latest first difference.
    const s_entry_t *best = NULL;
    s_diff_t best_diff;
    memset (&best_diff, 0, sizeof best_diff);
    for (int pass = 0; pass < 2 && !best; pass++)
        for (size_t i = 0; i < self->nentries; i++) {
            const s_entry_t *e = &self->entries [i];
            if (pass == 0 && strcmp (e->agent, agent ? agent : ""))
                continue;
            s_diff_t d;
            if (!s_compare (e->messages, normalized, &d)) {
                if (strcmp (e->model, model ? model : "")) {
                    best = e;
                    snprintf (best_diff.what, sizeof best_diff.what, "model");
                    snprintf (best_diff.recorded, sizeof best_diff.recorded, "%s", e->model);
                    snprintf (best_diff.now, sizeof best_diff.now, "%s", model ? model : "");
                    goto found;
                }
                continue;
            }
            if (!best || s_later (&d, &best_diff)) {
                best = e;
                best_diff = d;
            }
        }
found:
    if (best)
        ufo_buf_printf (&b, "\n  closest recording: %s step %" PRId64 " (line %zu)\n"
                            "  first difference: message %zu, %s, at character %zu\n"
                            "    recorded: %s\n    now:      %s",
                        best->agent, best->step, best->line, best_diff.msg, best_diff.what,
                        best_diff.offset, best_diff.recorded, best_diff.now);
    return ufo_buf_detach (&b, NULL);
}

int
ufo_cassette_lookup (ufo_cassette_t *self, const char *agent, int64_t step, const char *model,
                     const ufo_value_t *messages, char **content_p,
                     char finish_reason [UFO_CASSETTE_FINISH_MAX],
                     int64_t *prompt_tokens, int64_t *completion_tokens, double *latency_s,
                     char **why_p)
{
    ufo_value_t *normalized = ufo_cassette_normalize (messages);
    char key [65];
    s_key_of_normalized (model, normalized, key);
    s_entry_t *hit = NULL, *last = NULL;
    for (size_t i = 0; i < self->nentries && !hit; i++) {
        s_entry_t *e = &self->entries [i];
        if (strcmp (e->key, key))
            continue;
        last = e;
        if (!e->used)
            hit = e;
    }
    if (!hit)
        hit = last;
    if (!hit) {
        if (why_p)
            *why_p = s_explain (self, agent, step, model, normalized);
        ufo_value_destroy (&normalized);
        return -1;
    }
    ufo_value_destroy (&normalized);
    hit->used = true;
    *content_p = ufo_strdup (hit->content);
    if (finish_reason)
        snprintf (finish_reason, UFO_CASSETTE_FINISH_MAX, "%s", hit->finish_reason);
    if (prompt_tokens)
        *prompt_tokens = hit->prompt_tokens;
    if (completion_tokens)
        *completion_tokens = hit->completion_tokens;
    if (latency_s)
        *latency_s = hit->latency_s;
    return 0;
}
