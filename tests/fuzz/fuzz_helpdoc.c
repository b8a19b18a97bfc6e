/*  fuzz_helpdoc.c - libFuzzer target for the help documents (installed files, user notes:
    input from outside) and the knowledge index's query text. The first byte picks the
    format (Mallard, DocBook, man, Markdown, text); the rest is the document. Each passage
    must be valid UTF-8 of at most UFO_HELPDOC_PASSAGE_MAX bytes; a failure must say why.
    The same bytes are then a search query on a small index: never an FTS syntax error. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_helpdoc.h"
#include "ufo_kb.h"
#include "ufo_utf8.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static ufo_kb_t *s_kb;

static void
s_check (const char *title, const char *text, const char *ref, void *arg)
{
    if (!ufo_utf8_valid (title, strlen (title)) || !ufo_utf8_valid (text, strlen (text))
    ||  strlen (text) > UFO_HELPDOC_PASSAGE_MAX || !*text || !ref)
        abort ();
    (*(size_t *) arg)++;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static const char *const names [] = { "x.page", "x.docbook", "x.1", "x.md", "x.txt" };
    if (size == 0)
        return 0;
    const char *name = names [data [0] % UFO_ARRAY_SIZE (names)];
    ufo_error_t err;
    ufo_error_clear (&err);
    size_t seen = 0;
    int n = ufo_helpdoc_parse_mem (name, (const char *) data + 1, size - 1, s_check, &seen, &err);
    if (n < 0 ? (err.code == UFO_OK || seen != 0) : (size_t) n != seen)
        abort ();
    if (!s_kb) {
        s_kb = ufo_kb_open (":memory:", &err);
        ufo_kb_passage_t p = { "help", "app", "a.page", "Percentages", "Percentages are calculated using the % symbol", NULL };
        if (!s_kb || ufo_kb_add (s_kb, &p, &err) < 0)
            abort ();
    }
    char *query = ufo_strndup ((const char *) data + 1, size - 1);
    ufo_value_t *hits = ufo_kb_search (s_kb, query, NULL, NULL, 3, NULL, 0, &err);
    if (!hits)
        abort ();                   //  a query is text: it never fails
    ufo_value_destroy (&hits);
    free (query);
    return 0;
}
