/*  ufo_template.c - render {{...}} templates (see ufo_template.h for the syntax). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_template.h"

#define S_MAX_FRAMES  32
#define S_MAX_PARTIAL 8
#define S_MAX_OUT     (16u * 1024 * 1024)

typedef struct {
    const ufo_value_t *value;
    int64_t index;              //  -1 for the root frame
    const char *key;            //  map iteration key, else NULL
} s_frame_t;

typedef struct {
    ufo_template_loader_fn *load;
    void *arg;
    s_frame_t frames [S_MAX_FRAMES];
    int nframes;
    int partials;               //  partial nesting
    ufo_buf_t *out;
    ufo_error_t *err;
} s_ctx_t;

//  The text being rendered (the template or a partial), for error positions.
typedef struct {
    const char *src;
    size_t len;
    const char *name;
} s_text_t;

static int
s_fail (s_ctx_t *ctx, const s_text_t *t, size_t at, const char *what, const char *detail)
{
    size_t line = 1;
    for (size_t i = 0; i < at && i < t->len; i++)
        if (t->src [i] == '\n')
            line++;
    return ufo_error_set_at (ctx->err, UFO_E_SYNTAX, at, "%s line %zu: %s%s%.80s%s", t->name, line, what,
                             detail ? " \"" : "", detail ? detail : "", detail ? "\"" : "");
}

//  Next tag at or after from: sets *ts (at "{{") and *te (after "}}"). 0 none, 1 found, -1 unclosed.
static int
s_next_tag (const s_text_t *t, size_t from, size_t end, size_t *ts, size_t *te)
{
    const char *open = from < end ? memmem (t->src + from, end - from, "{{", 2) : NULL;
    if (!open)
        return 0;
    *ts = (size_t) (open - t->src);
    const char *close = memmem (open + 2, end - *ts - 2, "}}", 2);
    if (!close)
        return -1;
    *te = (size_t) (close - t->src) + 2;
    return 1;
}

//  The tag's inner text, trimmed, into buf.
static void
s_tag_text (const s_text_t *t, size_t ts, size_t te, char *buf, size_t size)
{
    size_t a = ts + 2, b = te - 2;
    while (a < b && isspace ((unsigned char) t->src [a]))
        a++;
    while (b > a && isspace ((unsigned char) t->src [b - 1]))
        b--;
    size_t n = b - a < size - 1 ? b - a : size - 1;
    memcpy (buf, t->src + a, n);
    buf [n] = 0;
}

//  A block tag alone on its line: the whole line (from *ls to *after) is dropped.
static bool
s_standalone (const s_text_t *t, size_t floor, size_t ts, size_t te, size_t *ls, size_t *after)
{
    size_t a = ts;
    while (a > floor && (t->src [a - 1] == ' ' || t->src [a - 1] == '\t'))
        a--;
    if (a > 0 && t->src [a - 1] != '\n')
        return false;
    size_t b = te;
    while (b < t->len && (t->src [b] == ' ' || t->src [b] == '\t'))
        b++;
    if (b < t->len && t->src [b] == '\r')
        b++;
    if (b < t->len && t->src [b] != '\n')
        return false;
    *ls = a;
    *after = b < t->len ? b + 1 : b;
    return true;
}

static bool
s_is_block_tag (const char *tag)
{
    return tag [0] == '#' || tag [0] == '/' || tag [0] == '!' || tag [0] == '>' || !strcmp (tag, "else");
}

//  Where a tag's surroundings start / end once standalone lines are dropped.
static void
s_tag_span (const s_text_t *t, size_t floor, size_t ts, size_t te, const char *tag, size_t *start, size_t *next)
{
    size_t ls, after;
    if (s_is_block_tag (tag) && s_standalone (t, floor, ts, te, &ls, &after)) {
        *start = ls;
        *next = after;
    }
    else {
        *start = ts;
        *next = te;
    }
}

static const ufo_value_t *
s_lookup (s_ctx_t *ctx, const char *name, bool *found, ufo_value_t **tmp)
{
    *found = true;
    *tmp = NULL;
    const s_frame_t *top = &ctx->frames [ctx->nframes - 1];
    if (name [0] == '@') {
        for (int i = ctx->nframes - 1; i >= 0; i--) {
            const s_frame_t *f = &ctx->frames [i];
            if (f->index < 0)
                continue;
            if (!strcmp (name, "@index"))
                return *tmp = ufo_value_new_int (f->index);
            if (!strcmp (name, "@number"))
                return *tmp = ufo_value_new_int (f->index + 1);
            if (!strcmp (name, "@key") && f->key)
                return *tmp = ufo_value_new_string (f->key);
            break;
        }
        *found = false;
        return NULL;
    }
    if (!strcmp (name, "this") || !strcmp (name, "."))
        return top->value;
    if (!strncmp (name, "this.", 5)) {
        const ufo_value_t *v = ufo_value_path (top->value, name + 5);
        *found = v != NULL;
        return v;
    }
    for (int i = ctx->nframes - 1; i >= 0; i--) {
        ufo_type_t type = ufo_value_type (ctx->frames [i].value);
        if (type != UFO_TMAP && type != UFO_TLIST)
            continue;
        const ufo_value_t *v = ufo_value_path (ctx->frames [i].value, name);
        if (v)
            return v;
    }
    *found = false;
    return NULL;
}

static bool
s_truthy (const ufo_value_t *v)
{
    switch (ufo_value_type (v)) {
        case UFO_TNULL:   return false;
        case UFO_TBOOL:   return ufo_value_bool (v);
        case UFO_TINT:    return ufo_value_int (v) != 0;
        case UFO_TFLOAT:  return ufo_value_float (v) != 0;
        case UFO_TSTRING: return ufo_value_strlen (v) > 0;
        default:          return ufo_value_size (v) > 0;
    }
}

static void
s_emit_value (ufo_buf_t *out, const ufo_value_t *v)
{
    char num [40];
    switch (ufo_value_type (v)) {
        case UFO_TNULL:
            break;
        case UFO_TBOOL:
            ufo_buf_puts (out, ufo_value_bool (v) ? "true" : "false");
            break;
        case UFO_TINT:
            ufo_buf_printf (out, "%" PRId64, ufo_value_int (v));
            break;
        case UFO_TFLOAT:
            ufo_json_format_double (num, ufo_value_float (v));
            ufo_buf_puts (out, num);
            break;
        case UFO_TSTRING:
            ufo_buf_append (out, ufo_value_str (v), ufo_value_strlen (v));
            break;
        default:
            ufo_json_append (out, v, UFO_JSON_PY);
            break;
    }
}

static int s_render (s_ctx_t *ctx, const s_text_t *t, size_t start, size_t end);

static int
s_partial (s_ctx_t *ctx, const s_text_t *t, size_t at, const char *name)
{
    if (ctx->partials >= S_MAX_PARTIAL)
        return s_fail (ctx, t, at, "partials nested too deeply at", name);
    char *text = ctx->load ? ctx->load (name, ctx->arg) : NULL;
    if (!text)
        return s_fail (ctx, t, at, "no partial named", name);
    s_text_t sub = { text, strlen (text), name };
    ctx->partials++;
    int rc = s_render (ctx, &sub, 0, sub.len);
    ctx->partials--;
    free (text);
    return rc;
}

//  Renders a block tag at [ts, te) whose body starts at next; sets *resume after its close.
static int
s_block (s_ctx_t *ctx, const s_text_t *t, size_t end, size_t ts, size_t next, const char *tag, size_t *resume)
{
    char kind [16], arg [200];
    if (sscanf (tag + 1, "%15s %199s", kind, arg) != 2
    ||  (strcmp (kind, "if") && strcmp (kind, "unless") && strcmp (kind, "each")))
        return s_fail (ctx, t, ts, "unknown block", tag);
    //  Find the matching {{/kind}} and a top-level {{else}}.
    size_t pos = next, a, b, body_end = 0, else_next = 0, close_start = 0;
    int depth = 0;
    bool have_else = false, closed = false;
    while (!closed) {
        int rc = s_next_tag (t, pos, end, &a, &b);
        if (rc <= 0)
            return s_fail (ctx, t, ts, "this block is never closed:", tag);
        char inner [256];
        s_tag_text (t, a, b, inner, sizeof inner);
        size_t s0, s1;
        s_tag_span (t, pos, a, b, inner, &s0, &s1);
        if (inner [0] == '#')
            depth++;
        else
        if (inner [0] == '/') {
            if (depth == 0) {
                if (strcmp (inner + 1, kind))
                    return s_fail (ctx, t, a, "mismatched close tag", inner);
                close_start = s0;
                *resume = s1;
                closed = true;
            }
            else
                depth--;
        }
        else
        if (!strcmp (inner, "else") && depth == 0) {
            if (have_else)
                return s_fail (ctx, t, a, "a second {{else}} in", tag);
            have_else = true;
            body_end = s0;
            else_next = s1;
        }
        pos = b;
    }
    if (!have_else)
        body_end = close_start;
    bool found;
    ufo_value_t *tmp;
    const ufo_value_t *v = s_lookup (ctx, arg, &found, &tmp);
    int rc = 0;
    if (strcmp (kind, "each")) {
        bool yes = found && s_truthy (v);
        if (!strcmp (kind, "unless"))
            yes = !yes;
        if (yes)
            rc = s_render (ctx, t, next, body_end);
        else
        if (have_else)
            rc = s_render (ctx, t, else_next, close_start);
    }
    else {
        ufo_type_t type = ufo_value_type (v);
        if (found && type != UFO_TNULL && type != UFO_TLIST && type != UFO_TMAP)
            rc = s_fail (ctx, t, ts, "{{#each}} needs a list or a map:", arg);
        else
        if (ctx->nframes >= S_MAX_FRAMES)
            rc = s_fail (ctx, t, ts, "blocks nested too deeply at", tag);
        else
        if (!found || ufo_value_size (v) == 0) {
            if (have_else)
                rc = s_render (ctx, t, else_next, close_start);
        }
        else
            for (size_t i = 0; i < ufo_value_size (v) && rc == 0; i++) {
                s_frame_t *f = &ctx->frames [ctx->nframes++];
                f->index = (int64_t) i;
                f->value = type == UFO_TLIST ? ufo_value_list_at (v, i) : ufo_value_map_value_at (v, i);
                f->key = type == UFO_TMAP ? ufo_value_map_key_at (v, i) : NULL;
                rc = s_render (ctx, t, next, body_end);
                ctx->nframes--;
            }
    }
    ufo_value_destroy (&tmp);
    return rc;
}

static int
s_render (s_ctx_t *ctx, const s_text_t *t, size_t start, size_t end)
{
    size_t pos = start;
    while (pos < end) {
        if (ctx->out->len > S_MAX_OUT)
            return s_fail (ctx, t, pos, "output too large", NULL);
        size_t ts, te;
        int rc = s_next_tag (t, pos, end, &ts, &te);
        if (rc < 0)
            return s_fail (ctx, t, ts, "unclosed {{", NULL);
        if (rc == 0) {
            ufo_buf_append (ctx->out, t->src + pos, end - pos);
            break;
        }
        char tag [256];
        s_tag_text (t, ts, te, tag, sizeof tag);
        size_t lead, next;
        s_tag_span (t, pos, ts, te, tag, &lead, &next);
        ufo_buf_append (ctx->out, t->src + pos, lead - pos);
        if (tag [0] == '!')
            ;
        else
        if (tag [0] == '>') {
            const char *name = tag + 1;
            while (isspace ((unsigned char) *name))
                name++;
            if (s_partial (ctx, t, ts, name))
                return -1;
        }
        else
        if (tag [0] == '#') {
            if (s_block (ctx, t, end, ts, next, tag, &next))
                return -1;
        }
        else
        if (tag [0] == '/' || !strcmp (tag, "else"))
            return s_fail (ctx, t, ts, "unexpected", tag);
        else {
            bool found;
            ufo_value_t *tmp;
            const ufo_value_t *v = s_lookup (ctx, tag, &found, &tmp);
            if (!found)
                return s_fail (ctx, t, ts, "unknown name", tag);
            s_emit_value (ctx->out, v);
            ufo_value_destroy (&tmp);
        }
        pos = next;
    }
    return 0;
}

char *
ufo_template_render (const char *text, size_t len, const ufo_value_t *vars,
                     ufo_template_loader_fn *load, void *arg, ufo_error_t *err)
{
    ufo_buf_t out = { 0 };
    s_ctx_t ctx;
    memset (&ctx, 0, sizeof ctx);
    ctx.load = load;
    ctx.arg = arg;
    ctx.out = &out;
    ctx.err = err;
    ufo_value_t *empty = vars ? NULL : ufo_value_new_map ();
    ctx.frames [0].value = vars ? vars : empty;
    ctx.frames [0].index = -1;
    ctx.nframes = 1;
    s_text_t t = { text ? text : "", text ? len : 0, "template" };
    int rc = s_render (&ctx, &t, 0, t.len);
    ufo_value_destroy (&empty);
    if (rc) {
        ufo_buf_free (&out);
        return NULL;
    }
    return ufo_buf_detach (&out, NULL);
}
