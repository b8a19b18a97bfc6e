/*  ufo_helpdoc.c - help documents into titled passages (see ufo_helpdoc.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_helpdoc.h"
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <zlib.h>

//  --- Passage builder ----------------------------------------------------------------------

typedef struct {
    ufo_helpdoc_fn *fn;
    void *arg;
    const char *base;           //  file base name, the ref's first part
    char *doc_title;            //  the document's title
    ufo_buf_t text;             //  text of the passage being built
    ufo_buf_t title;            //  its full title
    ufo_buf_t ref;
    int passages;
    bool space;                 //  a space is pending before the next word
} s_out_t;

static void
s_out_init (s_out_t *out, const char *name, ufo_helpdoc_fn *fn, void *arg)
{
    memset (out, 0, sizeof *out);
    out->fn = fn;
    out->arg = arg;
    const char *slash = strrchr (name, '/');
    out->base = slash ? slash + 1 : name;
    ufo_buf_puts (&out->ref, out->base);
}

static void
s_out_free (s_out_t *out)
{
    ufo_buf_free (&out->text);
    ufo_buf_free (&out->title);
    ufo_buf_free (&out->ref);
    free (out->doc_title);
}

//  Trims trailing blanks and newlines of a buffer.
static void
s_rtrim (ufo_buf_t *b)
{
    while (b->len && isspace ((unsigned char) b->data [b->len - 1]))
        b->data [--b->len] = '\0';
}

static void
s_emit (s_out_t *out, const char *text, size_t len)
{
    //  skip leading blanks
    while (len && isspace ((unsigned char) *text)) {
        text++;
        len--;
    }
    if (len == 0)
        return;
    char *copy = ufo_strndup (text, len);
    const char *title = out->title.len ? out->title.data
                      : out->doc_title ? out->doc_title : out->base;
    out->fn (title, copy, out->ref.data, out->arg);
    out->passages++;
    free (copy);
}

//  Hands the passage built so far to the callback, cut into pieces of at most
//  UFO_HELPDOC_PASSAGE_MAX bytes at paragraph (then line, then word) ends.
static void
s_flush (s_out_t *out)
{
    s_rtrim (&out->text);
    const char *s = out->text.data;
    size_t len = out->text.len;
    while (len > UFO_HELPDOC_PASSAGE_MAX) {
        size_t cut = 0;
        for (size_t i = UFO_HELPDOC_PASSAGE_MAX; i > UFO_HELPDOC_PASSAGE_MAX / 2 && !cut; i--)
            if (s [i] == '\n' && s [i - 1] == '\n')
                cut = i;
        for (size_t i = UFO_HELPDOC_PASSAGE_MAX; i > UFO_HELPDOC_PASSAGE_MAX / 2 && !cut; i--)
            if (s [i] == '\n' || s [i] == ' ')
                cut = i;
        if (!cut)
            cut = ufo_utf8_prefix (s, len, UFO_HELPDOC_PASSAGE_MAX);
        s_emit (out, s, cut);
        s += cut;
        len -= cut;
    }
    s_emit (out, s, len);
    ufo_buf_reset (&out->text);
    out->space = false;
}

//  Appends text with runs of white space collapsed to one space.
static void
s_words (s_out_t *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) s [i];
        if (isspace (c))
            out->space = true;
        else {
            if (out->space && out->text.len && out->text.data [out->text.len - 1] != '\n')
                ufo_buf_putc (&out->text, ' ');
            out->space = false;
            ufo_buf_putc (&out->text, (char) c);
        }
    }
}

static void
s_newline (s_out_t *out, bool paragraph)
{
    s_rtrim (&out->text);
    if (out->text.len)
        ufo_buf_puts (&out->text, paragraph ? "\n\n" : "\n");
    out->space = false;
}

//  Sets the passage title: "Document › section" (or the document title alone).
static void
s_set_title (s_out_t *out, const char *section, const char *id)
{
    ufo_buf_reset (&out->title);
    if (out->doc_title)
        ufo_buf_puts (&out->title, out->doc_title);
    if (section && *section) {
        if (out->title.len)
            ufo_buf_puts (&out->title, " \xe2\x80\xba ");
        ufo_buf_puts (&out->title, section);
    }
    ufo_buf_reset (&out->ref);
    ufo_buf_puts (&out->ref, out->base);
    if (id && *id)
        ufo_buf_printf (&out->ref, "#%s", id);
}

//  --- XML: Mallard and DocBook ---------------------------------------------------------------

static bool
s_is (const xmlNode *node, const char *const *names)
{
    for (size_t i = 0; names [i]; i++)
        if (strcmp ((const char *) node->name, names [i]) == 0)
            return true;
    return false;
}

static const char *const s_sections [] = {
    "section", "sect1", "sect2", "sect3", "sect4", "sect5", "chapter", "appendix", "refsect1",
    "refsect2", "refsect3", "simplesect", "refsection", NULL };
//  metadata blocks: skipped, except their description
static const char *const s_infos [] = {
    "info", "articleinfo", "bookinfo", "chapterinfo", "sectioninfo", "refmeta", "refentryinfo", NULL };
static const char *const s_descs [] = { "desc", "abstract", NULL };
static const char *const s_skipped [] = { "media", "comment", "figure", "graphic", "mediaobject",
    "imageobject", "indexterm", "include", NULL };
//  elements that end a line (others are inline)
static const char *const s_blocks [] = {
    "p", "para", "simpara", "item", "listitem", "td", "th", "tr", "entry", "row", "title", "term",
    "varlistentry", "screen", "programlisting", "example", "note", "tip", "warning", "caution",
    "important", "steps", "list", "terms", "table", "tree", "synopsis", "formalpara", "desc",
    "subtitle", "caption", "code", NULL };

//  Text of a node and its descendants with white space collapsed (for titles).
static char *
s_node_text (xmlNode *node)
{
    xmlChar *raw = xmlNodeGetContent (node);
    ufo_buf_t b = {0};
    bool space = false;
    for (const xmlChar *p = raw; p && *p; p++) {
        if (isspace (*p))
            space = b.len > 0;
        else {
            if (space)
                ufo_buf_putc (&b, ' ');
            space = false;
            ufo_buf_putc (&b, (char) *p);
        }
    }
    xmlFree (raw);
    return b.data ? ufo_buf_detach (&b, NULL) : ufo_strdup ("");
}

static void s_walk (s_out_t *out, xmlNode *parent, bool container, const char *section_title);

static void
s_section (s_out_t *out, xmlNode *node)
{
    s_flush (out);
    char *title = NULL;
    for (xmlNode *c = node->children; c && !title; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp ((const char *) c->name, "title") == 0)
            title = s_node_text (c);
    xmlChar *id = xmlGetProp (node, (const xmlChar *) "id");
    //  keep the enclosing title and ref to restore them after the section
    char *outer_title = out->title.data ? ufo_strdup (out->title.data) : NULL;
    char *outer_ref = ufo_strdup (out->ref.data);
    s_set_title (out, title, (const char *) id);
    s_walk (out, node, true, title);
    s_flush (out);
    ufo_buf_reset (&out->title);
    if (outer_title)
        ufo_buf_puts (&out->title, outer_title);
    ufo_buf_reset (&out->ref);
    ufo_buf_puts (&out->ref, outer_ref);
    free (outer_title);
    free (outer_ref);
    free (title);
    xmlFree (id);
}

//  Walks the children of parent. container: parent is the page or a section, so its first
//  <title> child is the passage title (already taken) rather than text.
static void
s_walk (s_out_t *out, xmlNode *parent, bool container, const char *section_title)
{
    bool title_seen = false;
    for (xmlNode *c = parent->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                s_words (out, (const char *) c->content, strlen ((const char *) c->content));
            continue;
        }
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (container && !title_seen && strcmp ((const char *) c->name, "title") == 0) {
            title_seen = true;
            if (section_title)
                continue;
        }
        if (s_is (c, s_sections))
            s_section (out, c);
        else
        if (s_is (c, s_infos)) {
            //  only the description of a metadata block is text
            for (xmlNode *d = c->children; d; d = d->next)
                if (d->type == XML_ELEMENT_NODE && s_is (d, s_descs)) {
                    s_walk (out, d, false, NULL);
                    s_newline (out, true);
                }
        }
        else
        if (!s_is (c, s_skipped)) {
            bool block = s_is (c, s_blocks);
            if (block)
                s_newline (out, false);
            s_walk (out, c, false, NULL);
            if (block)
                s_newline (out, strcmp ((const char *) c->name, "p") == 0
                                || strcmp ((const char *) c->name, "para") == 0);
        }
    }
}

//  libxml2 reports errors through a global handler; keep them out of stderr.
static void
s_xml_quiet (void *ctx, const char *msg, ...)
{
    UFO_UNUSED (ctx);
    UFO_UNUSED (msg);
}

static int
s_parse_xml (s_out_t *out, const char *name, const char *data, size_t len, ufo_error_t *err)
{
    static bool initialised = false;
    if (!initialised) {
        xmlInitParser ();
        initialised = true;
    }
    xmlSetGenericErrorFunc (NULL, s_xml_quiet);
    if (len > INT_MAX)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "%s: too large", name);
    xmlDoc *doc = xmlReadMemory (data, (int) len, out->base, "UTF-8",
                                 XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING
                                 | XML_PARSE_NOCDATA);
    if (!doc) {
        const xmlError *e = xmlGetLastError ();
        return ufo_error_set (err, UFO_E_SYNTAX, "%s: not well-formed XML (line %d: %s)", name,
                              e ? e->line : 0, e && e->message ? e->message : "?");
    }
    xmlNode *root = xmlDocGetRootElement (doc);
    if (!root) {
        xmlFreeDoc (doc);
        return ufo_error_set (err, UFO_E_SYNTAX, "%s: no root element", name);
    }
    //  the document title: the root's <title>, or that of its info block
    for (xmlNode *c = root->children; c && !out->doc_title; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp ((const char *) c->name, "title") == 0)
            out->doc_title = s_node_text (c);
    for (xmlNode *c = root->children; c && !out->doc_title; c = c->next)
        if (c->type == XML_ELEMENT_NODE && s_is (c, s_infos))
            for (xmlNode *d = c->children; d && !out->doc_title; d = d->next)
                if (d->type == XML_ELEMENT_NODE && strcmp ((const char *) d->name, "title") == 0)
                    out->doc_title = s_node_text (d);
    s_set_title (out, NULL, NULL);
    s_walk (out, root, true, out->doc_title);
    s_flush (out);
    xmlFreeDoc (doc);
    return 0;
}

//  --- man pages (roff) ------------------------------------------------------------------------

//  Appends one line of roff text without its escapes (fonts, special characters).
static void
s_roff_text (s_out_t *out, const char *s, size_t len)
{
    ufo_buf_t b = {0};
    for (size_t i = 0; i < len; i++) {
        if (s [i] != '\\' || i + 1 >= len) {
            if (s [i] != '"')
                ufo_buf_putc (&b, s [i]);
            continue;
        }
        char e = s [++i];
        if (e == 'f' && i + 1 < len) {                  //  \fB \fI \fR \fP \f(XX \f[..]
            if (s [i + 1] == '(')
                i += 3;
            else if (s [i + 1] == '[') {
                while (i < len && s [i] != ']')
                    i++;
            }
            else
                i++;
        }
        else if (e == '(' && i + 2 < len) {             //  \(em, \(co ...: a two-letter glyph
            if (s [i + 1] == 'e' && s [i + 2] == 'm')
                ufo_buf_puts (&b, "-");
            i += 2;
        }
        else if (e == '*' && i + 1 < len)               //  \*(XX string
            i += s [i + 1] == '(' ? 3 : 1;
        else if (e == '-' || e == 'e' || e == '\\')
            ufo_buf_putc (&b, e == '-' ? '-' : '\\');
        else if (e == ' ' || e == '~')
            ufo_buf_putc (&b, ' ');
        //  \& \| \^ \c and others: nothing
    }
    //  an escape may have cut a multi-byte character: keep only whole characters
    size_t kept = 0;
    for (size_t i = 0; i < b.len; ) {
        size_t k = ufo_utf8_seq (b.data + i, b.len - i, NULL);
        if (k == 0) {
            i++;
            continue;
        }
        memmove (b.data + kept, b.data + i, k);
        kept += k;
        i += k;
    }
    b.len = kept;
    if (b.len)
        s_words (out, b.data, b.len);
    out->space = true;
    ufo_buf_free (&b);
}

static int
s_parse_man (s_out_t *out, const char *data, size_t len)
{
    //  the document title: the page name from .TH, else the file's name up to the first dot
    const char *dot = strchr (out->base, '.');
    out->doc_title = ufo_strndup (out->base, dot ? (size_t) (dot - out->base) : strlen (out->base));
    s_set_title (out, NULL, NULL);
    const char *end = data + len;
    for (const char *line = data; line < end; ) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        size_t n = nl ? (size_t) (nl - line) : (size_t) (end - line);
        if (n >= 3 && line [0] == '.' && (memcmp (line, ".SH", 3) == 0 || memcmp (line, ".SS", 3) == 0)) {
            s_flush (out);
            s_out_t heading;
            s_out_init (&heading, out->base, NULL, NULL);
            s_roff_text (&heading, line + 3, n - 3);
            s_rtrim (&heading.text);
            const char *h = heading.text.data ? heading.text.data : "";
            while (*h == ' ')
                h++;
            s_set_title (out, h, NULL);
            s_out_free (&heading);
        }
        else if (n >= 1 && (line [0] == '.' || line [0] == '\'')) {
            //  requests: font macros carry text, paragraph macros break lines, others go
            const char *arg = line + 1;
            while (arg < line + n && !isspace ((unsigned char) *arg))
                arg++;
            size_t req = (size_t) (arg - line);
            bool text_macro = (req == 2 && strchr ("BI", line [1]))
                           || (req == 3 && strchr ("BIR", line [1]) && strchr ("BIR", line [2]));
            if (text_macro)
                s_roff_text (out, arg, (size_t) (line + n - arg));
            else
            if ((req == 3 && (memcmp (line, ".PP", 3) == 0 || memcmp (line, ".TP", 3) == 0
                              || memcmp (line, ".LP", 3) == 0))
            ||  (req == 2 && memcmp (line, ".P", 2) == 0))
                s_newline (out, true);
            else
            if (req == 3 && memcmp (line, ".IP", 3) == 0) {
                s_newline (out, false);
                s_roff_text (out, arg, (size_t) (line + n - arg));
            }
            else
            if (req == 3 && memcmp (line, ".br", 3) == 0)
                s_newline (out, false);
        }
        else
            s_roff_text (out, line, n);
        line += n + 1;
    }
    s_flush (out);
    return 0;
}

//  --- notes: Markdown and plain text ----------------------------------------------------------

static int
s_parse_notes (s_out_t *out, const char *data, size_t len, bool markdown)
{
    const char *dot = strrchr (out->base, '.');
    out->doc_title = ufo_strndup (out->base, dot ? (size_t) (dot - out->base) : strlen (out->base));
    s_set_title (out, NULL, NULL);
    const char *end = data + len;
    bool first_heading = true;
    for (const char *line = data; line < end; ) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        size_t n = nl ? (size_t) (nl - line) : (size_t) (end - line);
        if (markdown && n && line [0] == '#') {
            s_flush (out);
            size_t i = 0;
            while (i < n && (line [i] == '#' || line [i] == ' '))
                i++;
            char *heading = ufo_strndup (line + i, n - i);
            if (first_heading && (n < 2 || line [1] != '#')) {         //  "# Title" names the document
                free (out->doc_title);
                out->doc_title = heading;
                heading = NULL;
                s_set_title (out, NULL, NULL);
            }
            else
                s_set_title (out, heading, NULL);
            first_heading = false;
            free (heading);
        }
        else if (n == 0 || (n == 1 && line [0] == '\r'))
            s_newline (out, true);
        else
            s_words (out, line, n);
        line += n + 1;
    }
    s_flush (out);
    return 0;
}

//  --- public --------------------------------------------------------------------------------

static bool
s_ends (const char *s, const char *suffix)
{
    size_t a = strlen (s), b = strlen (suffix);
    return a >= b && strcmp (s + a - b, suffix) == 0;
}

const char *
ufo_helpdoc_format (const char *path)
{
    if (!path)
        return NULL;
    const char *slash = strrchr (path, '/');
    const char *base = slash ? slash + 1 : path;
    if (s_ends (base, ".page"))
        return "mallard";
    if (s_ends (base, ".docbook") || (s_ends (base, ".xml") && strcmp (base, "legal.xml") != 0))
        return "docbook";
    if (s_ends (base, ".md"))
        return "markdown";
    if (s_ends (base, ".txt"))
        return "text";
    //  name.N or name.N.gz with N a manual section digit
    size_t len = strlen (base);
    if (s_ends (base, ".gz"))
        len -= 3;
    if (len >= 3 && base [len - 2] == '.' && base [len - 1] >= '1' && base [len - 1] <= '9')
        return "man";
    return NULL;
}

static void
s_collect (const char *title, const char *text, const char *ref, void *list)
{
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "title", title);
    ufo_value_map_set_str (p, "text", text);
    ufo_value_map_set_str (p, "ref", ref);
    ufo_value_list_push ((ufo_value_t *) list, &p);
}

int
ufo_helpdoc_parse_mem (const char *name, const char *data, size_t len, ufo_helpdoc_fn *fn,
                       void *arg, ufo_error_t *err)
{
    assert (name && fn);
    const char *format = ufo_helpdoc_format (name);
    if (!format)
        return ufo_error_set (err, UFO_E_INVALID, "%s: not a help document", name);
    if (!ufo_utf8_valid (data, len))
        return ufo_error_set (err, UFO_E_UTF8, "%s: not valid UTF-8 (at byte %zu)", name,
                              ufo_utf8_check (data, len));
    const char *nul = len ? memchr (data, 0, len) : NULL;
    if (nul)
        return ufo_error_set (err, UFO_E_INVALID, "%s: a NUL byte at %zu (not a text file)", name,
                              (size_t) (nul - data));
    //  collect first, so a failure calls nothing
    s_out_t out;
    ufo_value_t *collected = ufo_value_new_list ();
    s_out_init (&out, name, NULL, NULL);
    out.fn = s_collect;
    out.arg = collected;
    int rc;
    if (strcmp (format, "mallard") == 0 || strcmp (format, "docbook") == 0)
        rc = s_parse_xml (&out, name, data, len, err);
    else if (strcmp (format, "man") == 0)
        rc = s_parse_man (&out, data, len);
    else
        rc = s_parse_notes (&out, data, len, strcmp (format, "markdown") == 0);
    s_out_free (&out);
    int count = -1;
    if (rc == 0) {
        count = (int) ufo_value_size (collected);
        for (size_t i = 0; i < ufo_value_size (collected); i++) {
            const ufo_value_t *p = ufo_value_list_at (collected, i);
            fn (ufo_value_map_str (p, "title", ""), ufo_value_map_str (p, "text", ""),
                ufo_value_map_str (p, "ref", ""), arg);
        }
    }
    ufo_value_destroy (&collected);
    return count;
}

//  Reads a file, gunzipping .gz, up to max_bytes. Returns the bytes or NULL with err.
static char *
s_read (const char *path, size_t max_bytes, size_t *len_p, ufo_error_t *err)
{
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        return ufo_error_set (err, UFO_E_IO, "%s: %s", path, strerror (errno ? errno : EINVAL)),
               NULL;
    if ((uint64_t) st.st_size > max_bytes)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "%s: %lld bytes, more than %zu", path,
                              (long long) st.st_size, max_bytes), NULL;
    gzFile f = gzopen (path, "rb");         //  reads plain files as they are
    if (!f)
        return ufo_error_set (err, UFO_E_IO, "%s: %s", path, strerror (errno)), NULL;
    ufo_buf_t b = {0};
    char chunk [16384];
    int n;
    while ((n = gzread (f, chunk, sizeof chunk)) > 0) {
        if (b.len + (size_t) n > max_bytes) {
            gzclose (f);
            ufo_buf_free (&b);
            return ufo_error_set (err, UFO_E_TOO_LARGE, "%s: more than %zu bytes uncompressed",
                                  path, max_bytes), NULL;
        }
        ufo_buf_append (&b, chunk, (size_t) n);
    }
    bool failed = n < 0;
    gzclose (f);
    if (failed) {
        ufo_buf_free (&b);
        return ufo_error_set (err, UFO_E_IO, "%s: unreadable (bad compression?)", path), NULL;
    }
    if (!b.data)
        ufo_buf_puts (&b, "");
    return ufo_buf_detach (&b, len_p);
}

int
ufo_helpdoc_parse (const char *path, size_t max_bytes, ufo_helpdoc_fn *fn, void *arg,
                   ufo_error_t *err)
{
    size_t len = 0;
    char *data = s_read (path, max_bytes, &len, err);
    if (!data)
        return -1;
    //  the format is that of the name without .gz
    char name [PATH_MAX];
    snprintf (name, sizeof name, "%s", path);
    int rc = ufo_helpdoc_parse_mem (name, data, len, fn, arg, err);
    free (data);
    return rc;
}
