/*  test_knowledge.c - the knowledge index (ufo_kb), help documents (ufo_helpdoc) and offline
    help indexing (ufo_knowledge): on the real installed help of gnome-calculator and zenity,
    with the questions of tests/data/knowledge/questions.json, and on bad input. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_helpdoc.h"
#include "ufo_json.h"
#include "ufo_kb.h"
#include "ufo_knowledge.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "test_files.h"

static char s_tmp [64];

static void
s_path (char *out, size_t size, const char *name)
{
    snprintf (out, size, "%s/%s", s_tmp, name);
}

static void
s_collect (const char *title, const char *text, const char *ref, void *arg)
{
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "title", title);
    ufo_value_map_set_str (p, "text", text);
    ufo_value_map_set_str (p, "ref", ref);
    ufo_value_list_push (arg, &p);
}

static ufo_value_t *
s_list_of (const char *a, const char *b)
{
    ufo_value_t *list = ufo_value_new_list ();
    if (a)
        ufo_value_list_push_str (list, a);
    if (b)
        ufo_value_list_push_str (list, b);
    return list;
}

UFO_TEST (test_kb_search)
{
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (":memory:", &err);
    REQUIRE (kb);
    ufo_kb_passage_t p1 = { "help", "calc", "a.page", "Percentages", "Percentages are calculated using the % symbol", "a.page" };
    ufo_kb_passage_t p2 = { "help", "calc", "b.page", "Logarithms", "Logarithms can be calculated using the log function", "b.page" };
    ufo_kb_passage_t p3 = { "help", "editor", "c.page", "Saving files", "Save the document with Ctrl+S", NULL };
    ufo_kb_passage_t p4 = { "experience", "", "rec-1", "write a note", "typed the note into the Text View", NULL };
    int64_t id1 = ufo_kb_add (kb, &p1, &err);
    int64_t id2 = ufo_kb_add (kb, &p2, &err);
    CHECK (id1 > 0 && id2 > id1);
    CHECK (ufo_kb_add (kb, &p3, &err) > 0);
    CHECK (ufo_kb_add (kb, &p4, &err) > 0);
    CHECK_INT (ufo_kb_count (kb, NULL), 4);
    CHECK_INT (ufo_kb_count (kb, "help"), 3);

    //  BM25: the passage about the asked words first; stemming (calculating ~ calculated)
    ufo_value_t *hits = ufo_kb_search (kb, "calculating a logarithm", "help", NULL, 5, NULL, 0, &err);
    REQUIRE (hits);
    CHECK_INT (ufo_value_size (hits), 2);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "title", ""), "Logarithms");
    CHECK (ufo_value_map_float (ufo_value_list_at (hits, 0), "score", 0)
           > ufo_value_map_float (ufo_value_list_at (hits, 1), "score", 0));
    ufo_value_destroy (&hits);
    //  app and kind filters
    hits = ufo_kb_search (kb, "save the note", "help", "editor", 5, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "source", ""), "c.page");
    ufo_value_destroy (&hits);
    hits = ufo_kb_search (kb, "note", "experience", NULL, 5, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 1);
    ufo_value_destroy (&hits);
    //  FTS syntax in the query is only text; a query of stop words only finds nothing
    const char *hostile [] = { "\"unbalanced", "NEAR(log* OR", "title:^x AND NOT", "- ( ) *", "the of a",
                               "", "\xff\xfe bad utf8 log" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (hostile); i++) {
        hits = ufo_kb_search (kb, hostile [i], NULL, NULL, 5, NULL, 0, &err);
        CHECK (hits != NULL);
        ufo_value_destroy (&hits);
    }
    hits = ufo_kb_search (kb, "NEAR(log* OR", NULL, NULL, 5, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 1);       //  "near" matches nothing, "log" the logarithm page
    ufo_value_destroy (&hits);
    //  text that is not UTF-8 is refused
    ufo_kb_passage_t bad = { "help", "calc", "d.page", "x", "bad \xc3\x28 text", NULL };
    CHECK (ufo_kb_add (kb, &bad, &err) < 0);
    CHECK_INT (err.code, UFO_E_UTF8);

    //  vectors: re-ranking by cosine; passages of another dimension are ignored
    float v1 [3] = { 1, 0, 0 }, v2 [3] = { 0, 1, 0 }, q [3] = { 0.1f, 1, 0 };
    CHECK_INT (ufo_kb_set_vector (kb, id1, v1, 3, &err), 0);
    CHECK_INT (ufo_kb_set_vector (kb, id2, v2, 3, &err), 0);
    ufo_value_t *todo = ufo_kb_without_vector (kb, 10);
    CHECK_INT (ufo_value_size (todo), 2);
    ufo_value_destroy (&todo);
    hits = ufo_kb_search (kb, "percentages calculated", "help", NULL, 2, q, 3, &err);
    REQUIRE (hits && ufo_value_size (hits) >= 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "title", ""), "Logarithms");
    ufo_value_destroy (&hits);
    //  without vectors of that size: BM25 alone
    float q4 [4] = { 1, 1, 1, 1 };
    hits = ufo_kb_search (kb, "percentages", "help", NULL, 2, q4, 4, &err);
    REQUIRE (hits && ufo_value_size (hits) == 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "title", ""), "Percentages");
    ufo_value_destroy (&hits);

    //  sources: remembered, removed with their passages
    CHECK_INT (ufo_kb_source_set (kb, "a.page", "help", "calc", 7, 9, &err), 0);
    int64_t mtime = 0, size = 0;
    CHECK (ufo_kb_source_get (kb, "a.page", &mtime, &size));
    CHECK (mtime == 7 && size == 9);
    CHECK_INT (ufo_kb_source_remove (kb, "a.page", &err), 1);
    CHECK (!ufo_kb_source_get (kb, "a.page", NULL, NULL));
    CHECK_INT (ufo_kb_count (kb, "help"), 2);
    ufo_kb_destroy (&kb);
    ufo_kb_destroy (&kb);
}

UFO_TEST (test_kb_file)
{
    char path [PATH_MAX];
    s_path (path, sizeof path, "sub/dir/index.db");
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (path, &err);
    REQUIRE (kb);
    ufo_kb_passage_t p = { "help", "calc", "a.page", "Percentages", "the % symbol", NULL };
    CHECK (ufo_kb_add (kb, &p, &err) > 0);
    ufo_kb_destroy (&kb);
    kb = ufo_kb_open (path, &err);
    REQUIRE (kb);
    CHECK_INT (ufo_kb_count (kb, NULL), 1);
    ufo_kb_destroy (&kb);
    //  a file that is not an index is refused and left as it was
    char other [PATH_MAX];
    s_path (other, sizeof other, "not-an-index.db");
    const char *text = "this is not a database, it is a note that must survive\n";
    REQUIRE (tf_write (other, text));
    kb = ufo_kb_open (other, &err);
    CHECK (kb == NULL);
    CHECK (strlen (err.message) > 0);
    char *after = tf_read_text (other);
    CHECK_STR (after, text);
    free (after);
}

UFO_TEST (test_helpdoc_formats)
{
    CHECK_STR (ufo_helpdoc_format ("/x/percentage.page"), "mallard");
    CHECK_STR (ufo_helpdoc_format ("index.docbook"), "docbook");
    CHECK_STR (ufo_helpdoc_format ("/usr/share/man/man1/zenity.1.gz"), "man");
    CHECK_STR (ufo_helpdoc_format ("notes.md"), "markdown");
    CHECK_STR (ufo_helpdoc_format ("notes.txt"), "text");
    CHECK (ufo_helpdoc_format ("legal.xml") == NULL);
    CHECK (ufo_helpdoc_format ("figure.png") == NULL);

    //  DocBook with sections: one passage each, titled "Document › Section"
    const char *docbook =
        "<?xml version=\"1.0\"?><article><articleinfo><title>Editor Guide</title>"
        "<abstract><para>How to edit.</para></abstract><author>Someone</author></articleinfo>"
        "<para>Intro text.</para>"
        "<sect1 id=\"save\"><title>Saving</title><para>Press <keycap>Ctrl</keycap>+S to save.</para>"
        "<sect2 id=\"as\"><title>Save As</title><para>Choose a new name.</para></sect2></sect1>"
        "</article>";
    ufo_value_t *got = ufo_value_new_list ();
    ufo_error_t err = {0};
    CHECK_INT (ufo_helpdoc_parse_mem ("guide.docbook", docbook, strlen (docbook), s_collect, got, &err), 3);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 0), "title", ""), "Editor Guide");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (got, 0), "text", ""), "How to edit.");
    CHECK (!strstr (ufo_value_map_str (ufo_value_list_at (got, 0), "text", ""), "Someone"));
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 1), "title", ""), "Editor Guide \xe2\x80\xba Saving");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 1), "text", ""), "Press Ctrl+S to save.");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 1), "ref", ""), "guide.docbook#save");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 2), "title", ""), "Editor Guide \xe2\x80\xba Save As");
    ufo_value_destroy (&got);

    //  a man page: sections by .SH, font escapes gone
    const char *man = ".TH EDIT 1\n.SH NAME\nedit \\- a \\fBsmall\\fR editor\n.SH OPTIONS\n.TP\n"
                      "\\fB\\-\\-quiet\\fR\nprint nothing\n";
    got = ufo_value_new_list ();
    CHECK_INT (ufo_helpdoc_parse_mem ("edit.1", man, strlen (man), s_collect, got, &err), 2);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 0), "title", ""), "edit \xe2\x80\xba NAME");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (got, 0), "text", ""), "edit - a small editor");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (got, 1), "text", ""), "--quiet");
    ufo_value_destroy (&got);

    //  a long section is cut into passages of at most UFO_HELPDOC_PASSAGE_MAX bytes
    ufo_buf_t big = {0};
    ufo_buf_puts (&big, "# Long\n");
    for (int i = 0; i < 400; i++)
        ufo_buf_printf (&big, "word%d is here.%s", i, i % 20 == 19 ? "\n\n" : " ");
    got = ufo_value_new_list ();
    int n = ufo_helpdoc_parse_mem ("long.md", big.data, big.len, s_collect, got, &err);
    CHECK (n >= 3);
    for (size_t i = 0; i < ufo_value_size (got); i++)
        CHECK (strlen (ufo_value_map_str (ufo_value_list_at (got, i), "text", "")) <= UFO_HELPDOC_PASSAGE_MAX);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (got, n - 1), "text", ""), "word399");
    ufo_value_destroy (&got);
    ufo_buf_free (&big);

    //  bad input: errors name the reason and nothing is called
    got = ufo_value_new_list ();
    CHECK_INT (ufo_helpdoc_parse_mem ("x.page", "<page><p>unclosed", 17, s_collect, got, &err), -1);
    CHECK_INT (err.code, UFO_E_SYNTAX);
    CHECK_INT (ufo_helpdoc_parse_mem ("x.page", "<page>\xff</page>", 14, s_collect, got, &err), -1);
    CHECK_INT (err.code, UFO_E_UTF8);
    CHECK_INT (ufo_helpdoc_parse_mem ("x.md", "# T\n\0text", 10, s_collect, got, &err), -1);
    CHECK_CONTAINS (err.message, "NUL byte at 4");
    CHECK_INT (ufo_helpdoc_parse_mem ("x.page", "", 0, s_collect, got, &err), -1);
    CHECK_INT (ufo_value_size (got), 0);
    ufo_value_destroy (&got);
}

//  Copies a file (for a private help tree).
static bool
s_copy (const char *from, const char *to)
{
    size_t len = 0;
    char *data = tf_read (from, &len);
    if (!data)
        return false;
    FILE *f = fopen (to, "wb");
    bool ok = f && fwrite (data, 1, len, f) == len;
    if (f)
        ok = fclose (f) == 0 && ok;
    free (data);
    return ok;
}

UFO_TEST (test_real_help_questions)
{
    //  the installed help of the two applications, indexed one application at a time
    char path [PATH_MAX];
    s_path (path, sizeof path, "real.db");
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (path, &err);
    REQUIRE (kb);
    ufo_value_t *help_dirs = s_list_of ("/usr/share/help", NULL);
    ufo_knowledge_opts_t opts = { .help_dirs = help_dirs, .lang = "C", .max_file_bytes = 1 << 20 };
    ufo_knowledge_stats_t stats;
    const char *apps [] = { "gnome-calculator", "zenity" };
    for (size_t i = 0; i < 2; i++) {
        opts.app = apps [i];
        CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
        CHECK (stats.files >= 15);
        CHECK_INT (stats.indexed, stats.files);
        CHECK_INT (stats.skipped, 0);
    }
    //  indexing one application again leaves the other's passages alone
    int64_t before = ufo_kb_count (kb, "help");
    opts.app = "zenity";
    CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
    CHECK_INT (stats.indexed, 0);
    CHECK_INT (stats.unchanged, stats.files);
    CHECK_INT (ufo_kb_count (kb, "help"), before);

    char qpath [PATH_MAX];
    snprintf (qpath, sizeof qpath, "%s/data/knowledge/questions.json", getenv ("UFO_TEST_DATA"));
    ufo_value_t *doc = ufo_json_parse_file (qpath, NULL, &err);
    REQUIRE (doc);
    const ufo_value_t *questions = ufo_value_map_get (doc, "questions");
    CHECK (ufo_value_size (questions) >= 10);
    size_t found = 0;
    for (size_t i = 0; i < ufo_value_size (questions); i++) {
        const ufo_value_t *q = ufo_value_list_at (questions, i);
        const char *page = ufo_value_map_str (q, "page", "?");
        ufo_value_t *hits = ufo_kb_search (kb, ufo_value_map_str (q, "q", ""), "help",
                                           ufo_value_map_str (q, "app", ""), 3, NULL, 0, &err);
        bool hit = false;
        for (size_t h = 0; h < ufo_value_size (hits); h++) {
            const char *source = ufo_value_map_str (ufo_value_list_at (hits, h), "source", "");
            const char *slash = strrchr (source, '/');
            hit |= slash && strcmp (slash + 1, page) == 0;
        }
        fprintf (stderr, "  %s %-60s -> %s\n", hit ? "yes" : "NO ", ufo_value_map_str (q, "q", ""),
                 page);
        found += hit;
        ufo_value_destroy (&hits);
    }
    fprintf (stderr, "  %zu of %zu questions found their page in the top 3\n", found,
             ufo_value_size (questions));
    CHECK (found >= 8);
    //  the agent's retrieval: bounded text
    ufo_value_t *got = ufo_knowledge_retrieve (kb, "help", "progress bar", "zenity", 2, 40);
    CHECK_INT (ufo_value_size (got), 2);
    CHECK (strlen (ufo_value_map_str (ufo_value_list_at (got, 0), "text", "")) <= 43);
    ufo_value_destroy (&got);
    got = ufo_knowledge_retrieve (NULL, "help", "progress bar", "zenity", 2, 40);
    CHECK_INT (ufo_value_size (got), 0);
    ufo_value_destroy (&got);
    ufo_value_destroy (&doc);
    ufo_value_destroy (&help_dirs);
    ufo_kb_destroy (&kb);
}

UFO_TEST (test_incremental_and_bad_files)
{
    //  a private help tree: three real pages, then bad ones
    char root [256], app_dir [512], path [1024], notes [256];
    s_path (root, sizeof root, "help");
    snprintf (app_dir, sizeof app_dir, "%s/C/calc", root);
    REQUIRE (mkdir (root, 0755) == 0);
    snprintf (path, sizeof path, "%s/C", root);
    REQUIRE (mkdir (path, 0755) == 0 && mkdir (app_dir, 0755) == 0);
    const char *pages [] = { "percentage.page", "logarithm.page", "power.page" };
    for (size_t i = 0; i < 3; i++) {
        char from [256];
        snprintf (from, sizeof from, "/usr/share/help/C/gnome-calculator/%s", pages [i]);
        snprintf (path, sizeof path, "%s/%s", app_dir, pages [i]);
        REQUIRE (s_copy (from, path));
    }
    s_path (notes, sizeof notes, "notes");
    REQUIRE (mkdir (notes, 0755) == 0);
    snprintf (path, sizeof path, "%s/tips.md", notes);
    REQUIRE (tf_write (path, "# Calculator tips\n\nIntro.\n\n## Rounding\n\nUse the Result Format menu to round.\n"));

    s_path (path, sizeof path, "incr.db");
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (path, &err);
    REQUIRE (kb);
    ufo_value_t *help_dirs = s_list_of (root, NULL);
    ufo_value_t *man_dirs = s_list_of ("/usr/share/man", NULL);
    ufo_value_t *launchers = ufo_json_parse_str ("{\"mousepad\": [\"/usr/bin/mousepad\", \"--disable-server\"]}", NULL);
    ufo_value_t *folders = ufo_value_new_map ();
    ufo_value_t *dirs = s_list_of (notes, NULL);
    ufo_value_map_set (folders, "calc", &dirs);
    ufo_knowledge_opts_t opts = { .help_dirs = help_dirs, .lang = "C", .man_dirs = man_dirs,
                                  .launchers = launchers, .folders = folders,
                                  .max_file_bytes = 64 * 1024 };
    ufo_knowledge_stats_t stats;
    CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
    CHECK_INT (stats.files, 5);         //  3 pages, the man page of mousepad, the notes
    CHECK_INT (stats.indexed, 5);
    ufo_value_t *hits = ufo_kb_search (kb, "rounding result", "help", "calc", 1, NULL, 0, &err);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "title", ""), "Calculator tips \xe2\x80\xba Rounding");
    ufo_value_destroy (&hits);
    hits = ufo_kb_search (kb, "text editor", "help", "mousepad", 1, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 1);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (hits, 0), "source", ""), "mousepad.1");
    ufo_value_destroy (&hits);

    //  again: nothing changed, nothing read
    CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
    CHECK_INT (stats.unchanged, 5);
    CHECK_INT (stats.indexed, 0);

    //  one page changed, one removed, three bad files added
    snprintf (path, sizeof path, "%s/power.page", app_dir);
    REQUIRE (tf_write (path, "<page xmlns=\"http://projectmallard.org/1.0/\" id=\"power\">"
                             "<title>Exponents</title><p>Use the caret for zebra powers.</p></page>"));
    snprintf (path, sizeof path, "%s/logarithm.page", app_dir);
    REQUIRE (unlink (path) == 0);
    snprintf (path, sizeof path, "%s/latin1.page", app_dir);
    REQUIRE (tf_write (path, "<page><title>Caf\xe9</title><p>not UTF-8</p></page>"));
    snprintf (path, sizeof path, "%s/broken.page", app_dir);
    REQUIRE (tf_write (path, "<page><title>Broken</title><p>never closed</page>"));
    snprintf (path, sizeof path, "%s/huge.page", app_dir);
    FILE *f = fopen (path, "w");
    REQUIRE (f);
    fputs ("<page><title>Huge</title>", f);
    for (int i = 0; i < 20000; i++)
        fputs ("<p>filler</p>", f);
    fputs ("</page>", f);
    fclose (f);
    //  the log lines of the skipped files
    char log_path [256];
    s_path (log_path, sizeof log_path, "index.log");
    FILE *log = fopen (log_path, "w");
    REQUIRE (log);
    ufo_log_set_stream (log);
    CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
    ufo_log_set_stream (stderr);
    fclose (log);
    CHECK_INT (stats.files, 7);
    CHECK_INT (stats.indexed, 1);
    CHECK_INT (stats.unchanged, 3);
    CHECK_INT (stats.skipped, 3);
    CHECK_INT (stats.removed, 1);
    char *logged = tf_read_text (log_path);
    CHECK_CONTAINS (logged, "latin1.page: not valid UTF-8");
    CHECK_CONTAINS (logged, "broken.page: not well-formed XML");
    CHECK_CONTAINS (logged, "huge.page");
    CHECK_CONTAINS (logged, "more than 65536");
    free (logged);
    hits = ufo_kb_search (kb, "zebra", "help", "calc", 3, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 1);
    ufo_value_destroy (&hits);
    hits = ufo_kb_search (kb, "logarithm", "help", "calc", 3, NULL, 0, &err);
    for (size_t i = 0; i < ufo_value_size (hits); i++)
        CHECK (!strstr (ufo_value_map_str (ufo_value_list_at (hits, i), "source", ""), "logarithm.page"));
    ufo_value_destroy (&hits);
    //  an unchanged bad file is not read again
    CHECK_INT (ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err), 0);
    CHECK_INT (stats.skipped, 0);
    CHECK_INT (stats.unchanged, 7);

    ufo_value_destroy (&help_dirs);
    ufo_value_destroy (&man_dirs);
    ufo_value_destroy (&launchers);
    ufo_value_destroy (&folders);
    ufo_kb_destroy (&kb);
}

UFO_TEST (test_experience_records)
{
    const char *good =
        "{\"request\": \"Write a note in Mousepad\", \"applications\": [\"mousepad\"],"
        " \"subtasks\": [{\"subtask\": \"Type the note\", \"application\": \"mousepad\","
        " \"steps\": [{\"control\": \"Text View\", \"action\": \"set_edit_text\", \"args\": {\"text\": \"hi\"}},"
        " {\"control\": \"Save\", \"action\": \"click_input\", \"args\": {}}]}], \"tips\": [\"save at the end\"]}";
    ufo_value_t *r = ufo_json_parse_str (good, NULL);
    ufo_error_t err = {0};
    CHECK_INT (ufo_experience_check (r, &err), 0);
    char *text = ufo_experience_text (r);
    CHECK_CONTAINS (text, "Write a note in Mousepad\n1. Type the note (mousepad): set_edit_text on \"Text View\"; click_input on \"Save\"");
    CHECK_CONTAINS (text, "Tip: save at the end");
    free (text);
    //  missing or mistyped fields, each named
    const char *bad [][2] = {
        { "[]", "must be a map" },
        { "{\"applications\": [], \"subtasks\": [{}]}", "'request'" },
        { "{\"request\": \"x\", \"subtasks\": [{}]}", "'applications'" },
        { "{\"request\": \"x\", \"applications\": [1], \"subtasks\": []}", "applications' [0]" },
        { "{\"request\": \"x\", \"applications\": [], \"subtasks\": []}", "'subtasks'" },
        { "{\"request\": \"x\", \"applications\": [], \"subtasks\": [{\"subtask\": \"s\", \"application\": \"a\"}]}", "steps must be a list" },
        { "{\"request\": \"x\", \"applications\": [], \"subtasks\": [{\"subtask\": \"s\", \"application\": \"a\","
          " \"steps\": [{\"control\": 3, \"action\": \"click_input\"}]}]}", "steps [0]" },
        { "{\"request\": \"x\", \"applications\": [], \"subtasks\": [{\"subtask\": \"s\", \"application\": \"a\","
          " \"steps\": [{\"control\": \"c\", \"action\": \"click_input\", \"args\": []}]}]}", "'args' a map" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        ufo_value_t *b = ufo_json_parse_str (bad [i][0], NULL);
        REQUIRE (b);
        CHECK_INT (ufo_experience_check (b, &err), -1);
        CHECK_CONTAINS (err.message, bad [i][1]);
        ufo_value_destroy (&b);
    }
    //  the steps of a blackboard: only trajectories that acted, controls by name
    ufo_value_t *board = ufo_json_parse_str (
        "{\"trajectories\": [{\"Subtask\": \"\", \"Application\": \"\", \"Action\": {\"function\": \"\"}},"
        " {\"Subtask\": \"Type\", \"Application\": \"mousepad\", \"Action\": {\"function\": \"set_edit_text\","
        " \"args\": {\"text\": \"hi\"}, \"control_label\": \"12\", \"control_text\": \"Text View\"}}]}", NULL);
    ufo_value_t *traj = ufo_experience_trajectory (board);
    REQUIRE (ufo_value_size (traj) == 1);
    CHECK_STR (ufo_value_str (ufo_value_path (traj, "0.control")), "Text View");
    CHECK_STR (ufo_value_str (ufo_value_path (traj, "0.action")), "set_edit_text");
    CHECK (!strstr (ufo_value_str (ufo_value_path (traj, "0.control")), "12"));
    ufo_value_destroy (&traj);
    ufo_value_destroy (&board);
    //  retrieval from an index: by request words, bounded by dropping steps
    ufo_kb_t *kb = ufo_kb_open (":memory:", &err);
    REQUIRE (kb);
    char *json = ufo_json_dump (r, UFO_JSON_COMPACT, NULL);
    text = ufo_experience_text (r);
    ufo_kb_passage_t p = { "experience", "", "id-1", "Write a note in Mousepad", text, json };
    CHECK (ufo_kb_add (kb, &p, &err) > 0);
    ufo_value_t *got = ufo_experience_retrieve (kb, "experience", "note in mousepad", 5, 0);
    CHECK_INT (ufo_value_size (got), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (got, "0.id")), "id-1");
    CHECK_INT (ufo_value_size (ufo_value_path (got, "0.subtasks.0.steps")), 2);
    ufo_value_destroy (&got);
    //  a bound just under the record's size drops its last step only
    got = ufo_experience_retrieve (kb, "experience", "note in mousepad", 5, strlen (json) - 10);
    CHECK_INT (ufo_value_size (ufo_value_path (got, "0.subtasks.0.steps")), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (got, "0.subtasks.0.steps.0.action")), "set_edit_text");
    ufo_value_destroy (&got);
    got = ufo_experience_retrieve (kb, "demonstration", "note in mousepad", 5, 0);
    CHECK_INT (ufo_value_size (got), 0);
    ufo_value_destroy (&got);
    free (json);
    free (text);
    ufo_kb_destroy (&kb);
    ufo_value_destroy (&r);
}

//  The requests and replies ufo-host sends on its connection (and the blocking calls use),
//  and the index sync in two halves: only new or changed boards are read; a skipped or
//  deleted record leaves the index.
UFO_TEST (test_experience_requests_and_sync)
{
    const char *good =
        "{\"request\": \"Write a note in Mousepad\", \"applications\": [\"mousepad\"],"
        " \"subtasks\": [{\"subtask\": \"Type\", \"application\": \"mousepad\","
        " \"steps\": [{\"control\": \"Text View\", \"action\": \"set_edit_text\"}]}]}";
    ufo_error_t err = {0};
    char id [64], board [UFO_EXPERIENCE_BOARD_MAX];
    ufo_value_t *r = ufo_json_parse_str (good, NULL);
    ufo_value_t *add = ufo_experience_save_request ("experience", &r, id, &err);
    REQUIRE (add);
    CHECK (!r);
    CHECK_INT (ufo_experience_board ("experience", id, board, &err), 0);
    CHECK_STR (ufo_value_map_str (add, "board", ""), board);
    CHECK_STR (ufo_value_map_str (add, "memory", ""), "requests");
    CHECK_STR (ufo_value_str (ufo_value_path (add, "item.experience.request")), "Write a note in Mousepad");
    //  refused: unknown kind, a bad record, a bad id
    r = ufo_json_parse_str (good, NULL);
    CHECK (!ufo_experience_save_request ("nope", &r, id, &err));
    CHECK (!r);
    CHECK_CONTAINS (err.message, "unknown record kind");
    r = ufo_json_parse_str ("{\"request\": \"x\"}", NULL);
    CHECK (!ufo_experience_save_request ("experience", &r, id, &err));
    CHECK (!ufo_experience_get_request ("experience", "../etc", &err));
    CHECK_CONTAINS (err.message, "not an experience id");
    ufo_value_t *get = ufo_experience_get_request ("demonstration", "d-1", &err);
    REQUIRE (get);
    CHECK_STR (ufo_value_map_str (get, "board", ""), "demonstration:d-1");
    ufo_value_destroy (&get);
    //  a bb.snapshot reply: the record with its id; a missing board; a bad shape
    char text [1024];
    snprintf (text, sizeof text, "{\"exists\": true, \"board\": {\"requests\": [{\"experience\": %s}]}}", good);
    ufo_value_t *snap = ufo_json_parse_str (text, NULL);
    ufo_value_t *rec = ufo_experience_get_reply (snap, "experience", "e-2", &err);
    REQUIRE (rec);
    CHECK_STR (ufo_value_map_str (rec, "id", ""), "e-2");
    CHECK_STR (ufo_value_map_str (rec, "request", ""), "Write a note in Mousepad");
    ufo_value_t *none = ufo_json_parse_str ("{\"exists\": false}", NULL);
    CHECK (!ufo_experience_get_reply (none, "experience", "e-9", &err));
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    ufo_value_t *broken = ufo_json_parse_str ("{\"exists\": true, \"board\": {\"requests\": [{\"experience\": {\"request\": \"x\"}}]}}", NULL);
    CHECK (!ufo_experience_get_reply (broken, "experience", "e-3", &err));
    CHECK (!ufo_experience_fatal (&err));
    //  a bb.list reply: the boards of the kind only
    ufo_value_t *list = ufo_json_parse_str (
        "{\"boards\": [{\"name\": \"experience:e-2\", \"last\": 4}, {\"name\": \"session-1\", \"last\": 9},"
        " {\"name\": \"demonstration:d-1\", \"last\": 2}, {\"name\": \"experience:e-3\", \"last\": 1}]}", NULL);
    ufo_value_t *boards = ufo_experience_boards (list, "experience");
    REQUIRE (ufo_value_size (boards) == 2);
    CHECK_STR (ufo_value_str (ufo_value_path (boards, "0.id")), "e-2");
    CHECK_INT (ufo_value_int (ufo_value_path (boards, "0.last")), 4);
    //  first sync: both wanted; e-3 was skipped (bad shape), so one record is indexed
    ufo_kb_t *kb = ufo_kb_open (":memory:", &err);
    REQUIRE (kb);
    ufo_value_t *wanted = ufo_experience_sync_wanted (kb, boards);
    CHECK_INT (ufo_value_size (wanted), 2);
    ufo_value_destroy (&wanted);
    ufo_value_t *records = ufo_value_new_map ();
    ufo_value_map_set (records, "e-2", &rec);
    CHECK_INT (ufo_experience_sync_apply (kb, "experience", boards, records, &err), 1);
    ufo_value_t *got = ufo_experience_retrieve (kb, "experience", "note in mousepad", 5, 0);
    CHECK_INT (ufo_value_size (got), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (got, "0.id")), "e-2");
    ufo_value_destroy (&got);
    //  second sync at the same "last": only the skipped one is wanted again; nothing read keeps e-2
    wanted = ufo_experience_sync_wanted (kb, boards);
    REQUIRE (ufo_value_size (wanted) == 1);
    CHECK_STR (ufo_value_str (ufo_value_list_at (wanted, 0)), "e-3");
    ufo_value_destroy (&wanted);
    ufo_value_t *empty = ufo_value_new_map ();
    CHECK_INT (ufo_experience_sync_apply (kb, "experience", boards, empty, &err), 1);
    got = ufo_experience_retrieve (kb, "experience", "note in mousepad", 5, 0);
    CHECK_INT (ufo_value_size (got), 1);
    ufo_value_destroy (&got);
    //  the board deleted on the broker: its passage leaves the index
    ufo_value_t *gone = ufo_value_new_list ();
    CHECK_INT (ufo_experience_sync_apply (kb, "experience", gone, empty, &err), 0);
    got = ufo_experience_retrieve (kb, "experience", "note in mousepad", 5, 0);
    CHECK_INT (ufo_value_size (got), 0);
    ufo_value_destroy (&got);
    ufo_kb_destroy (&kb);
    ufo_value_destroy (&gone);
    ufo_value_destroy (&empty);
    ufo_value_destroy (&records);
    ufo_value_destroy (&wanted);
    ufo_value_destroy (&boards);
    ufo_value_destroy (&list);
    ufo_value_destroy (&broken);
    ufo_value_destroy (&none);
    ufo_value_destroy (&snap);
    ufo_value_destroy (&add);
}

int
main (void)
{
    snprintf (s_tmp, sizeof s_tmp, "/tmp/test_knowledge.XXXXXX");
    if (!mkdtemp (s_tmp))
        return 1;
    UFO_RUN (test_kb_search);
    UFO_RUN (test_kb_file);
    UFO_RUN (test_helpdoc_formats);
    UFO_RUN (test_real_help_questions);
    UFO_RUN (test_incremental_and_bad_files);
    UFO_RUN (test_experience_records);
    UFO_RUN (test_experience_requests_and_sync);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_tmp);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_tmp);
    return UFO_TEST_END ();
}
