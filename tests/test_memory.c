/*  test_memory.c - memories: add, delete by step, filters, latest, cap, list and JSON forms,
    and the incremental JSON text staying equal to a from-scratch serialisation. */
#include "ufo.h"
#include "ufo_test.h"
#include "model_private.h"         //  white-box checks of the load paths

//  The memory's JSON must always equal json.dumps(list of dicts) written from scratch.
static bool
s_consistent (ufo_memory_t *mem)
{
    size_t len;
    char *cached = ufo_memory_to_json (mem, &len);
    ufo_value_t *list = ufo_memory_to_list (mem);
    size_t len2;
    char *fresh = ufo_json_dump (list, UFO_JSON_PY, &len2);
    bool same = len == len2 && memcmp (cached, fresh, len) == 0;
    if (!same)
        fprintf (stderr, "  cached: %.300s\n  fresh:  %.300s\n", cached, fresh);
    free (cached);
    free (fresh);
    ufo_value_destroy (&list);
    return same;
}

static ufo_item_t *
s_step_item (int64_t step, const char *action)
{
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_int (item, "Step", step);
    ufo_item_set_str (item, "Action", action);
    return item;
}

static void
s_add (ufo_memory_t *mem, int64_t step, const char *action)
{
    ufo_item_t *item = s_step_item (step, action);
    ufo_memory_add (mem, &item);
    CHECK (item == NULL);
}

UFO_TEST (test_basics)
{
    ufo_memory_t *mem = ufo_memory_new ();
    CHECK (ufo_memory_is_empty (mem));
    CHECK (ufo_memory_latest (mem) == NULL);
    CHECK (ufo_memory_at (mem, 0) == NULL);
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[]");
    free (text);
    s_add (mem, 1, "click");
    s_add (mem, 2, "type");
    s_add (mem, 2, "type again");
    CHECK_INT (ufo_memory_length (mem), 3);
    CHECK (!ufo_memory_is_empty (mem));
    CHECK_STR (ufo_item_get_str (ufo_memory_latest (mem), "Action", NULL), "type again");
    CHECK_STR (ufo_item_get_str (ufo_memory_at (mem, 0), "Action", NULL), "click");
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 1, \"Action\": \"click\"}, {\"Step\": 2, \"Action\": \"type\"}, "
                     "{\"Step\": 2, \"Action\": \"type again\"}]");
    free (text);
    CHECK_INT (ufo_memory_delete_step (mem, 2), 2);
    CHECK_INT (ufo_memory_delete_step (mem, 7), 0);
    CHECK_INT (ufo_memory_length (mem), 1);
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 1, \"Action\": \"click\"}]");
    free (text);
    ufo_memory_clear (mem);
    CHECK (ufo_memory_is_empty (mem));
    CHECK (s_consistent (mem));
    ufo_memory_destroy (&mem);
    CHECK (mem == NULL);
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_filters)
{
    ufo_memory_t *mem = ufo_memory_new ();
    for (int i = 1; i <= 5; i++)
        s_add (mem, i, i % 2 ? "odd" : "even");
    ufo_item_t *plain = ufo_item_new ();
    ufo_item_set_str (plain, "note", "no step");
    ufo_memory_add (mem, &plain);

    int64_t steps [] = { 2, 5, 42 };
    ufo_value_t *list = ufo_memory_filter_steps (mem, steps, 3);
    char *text = ufo_json_dump (list, UFO_JSON_PY, NULL);
    CHECK_STR (text, "[{\"Step\": 2, \"Action\": \"even\"}, {\"Step\": 5, \"Action\": \"odd\"}]");
    free (text);
    ufo_value_destroy (&list);
    list = ufo_memory_filter_steps (mem, NULL, 0);
    CHECK_INT (ufo_value_size (list), 0);
    ufo_value_destroy (&list);

    const char *keys [] = { "Action", "note" };
    list = ufo_memory_filter_keys (mem, keys, 2);
    CHECK_INT (ufo_value_size (list), 6);
    text = ufo_json_dump (list, UFO_JSON_PY, NULL);
    CHECK_STR (text, "[{\"Action\": \"odd\"}, {\"Action\": \"even\"}, {\"Action\": \"odd\"}, "
                     "{\"Action\": \"even\"}, {\"Action\": \"odd\"}, {\"note\": \"no step\"}]");
    free (text);
    ufo_value_destroy (&list);
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_list_forms)
{
    ufo_error_t err;
    ufo_value_t *list = ufo_json_parse_str ("[{\"a\": 1}, {\"b\": [2, {\"c\": \"\\u00e9\"}]}]", &err);
    REQUIRE (list);
    ufo_memory_t *mem = ufo_memory_new ();
    s_add (mem, 9, "old content");
    CHECK_INT (ufo_memory_from_list (mem, list, &err), 0);
    CHECK_INT (ufo_memory_length (mem), 2);
    ufo_value_t *back = ufo_memory_to_list (mem);
    CHECK (ufo_value_equal (back, list));
    ufo_value_destroy (&back);
    CHECK (s_consistent (mem));

    //  wrong shapes: clear error, memory unchanged
    ufo_value_t *bad = ufo_json_parse_str ("[{\"a\": 1}, 3]", &err);
    CHECK_INT (ufo_memory_from_list (mem, bad, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "[1]");
    ufo_value_destroy (&bad);
    bad = ufo_value_new_map ();
    CHECK_INT (ufo_memory_from_list (mem, bad, &err), -1);
    CHECK_CONTAINS (err.message, "expected a list");
    CHECK_INT (ufo_memory_from_list (mem, NULL, &err), -1);
    ufo_value_destroy (&bad);
    CHECK_INT (ufo_memory_length (mem), 2);
    ufo_value_destroy (&list);
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_json_forms)
{
    ufo_error_t err;
    ufo_memory_t *mem = ufo_memory_new ();
    //  canonical text (fast path: kept as is)
    const char *canon = "[{\"Step\": 1, \"u\": \"\\u00e9\"}, {\"Step\": 2, \"f\": 0.25, \"l\": [1, 2]}]";
    CHECK_INT (ufo_memory_from_json (mem, canon, strlen (canon), &err), 0);
    CHECK_INT (ufo_memory_length (mem), 2);
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, canon);
    free (text);
    CHECK_INT (ufo_item_get_int (ufo_memory_at (mem, 1), "Step", 0), 2);
    CHECK (s_consistent (mem));

    //  other spellings of the same data (slow path) give the same canonical text
    const char *other = " [ {\"Step\":1,\"u\":\"\xC3\xA9\"} ,\n{\"Step\":2,\"f\":2.5e-1,\"l\":[1,2]}]\n";
    ufo_memory_t *mem2 = ufo_memory_new ();
    CHECK_INT (ufo_memory_from_json (mem2, other, strlen (other), &err), 0);
    text = ufo_memory_to_json (mem2, NULL);
    CHECK_STR (text, canon);
    free (text);
    //  whitespace between canonical items is fine for the fast path too
    const char *spaced = "[\n  {\"a\": 1},\n  {\"b\": 2}\n]";
    CHECK_INT (ufo_memory_from_json (mem2, spaced, strlen (spaced), &err), 0);
    text = ufo_memory_to_json (mem2, NULL);
    CHECK_STR (text, "[{\"a\": 1}, {\"b\": 2}]");
    free (text);
    //  duplicate keys: the last wins, in the first one's place (as Python)
    const char *dup = "[{\"a\": 1, \"b\": 2, \"a\": 3}]";
    CHECK_INT (ufo_memory_from_json (mem2, dup, strlen (dup), &err), 0);
    text = ufo_memory_to_json (mem2, NULL);
    CHECK_STR (text, "[{\"a\": 3, \"b\": 2}]");
    free (text);
    ufo_memory_destroy (&mem2);

    //  a mix: canonical objects stay text, the others are parsed alone; one text in the end
    const char *mixed = "[{\"a\": 1}, {\"b\":[1,2]}, {\"c\": \"\\u00e9\"},\n{\"d\":\"\xC3\xA9\"}, {}]";
    ufo_memory_t *mem3 = ufo_memory_new ();
    CHECK_INT (ufo_memory_from_json (mem3, mixed, strlen (mixed), &err), 0);
    CHECK_INT (ufo_memory_length (mem3), 5);
    text = ufo_memory_to_json (mem3, NULL);
    CHECK_STR (text, "[{\"a\": 1}, {\"b\": [1, 2]}, {\"c\": \"\\u00e9\"}, {\"d\": \"\\u00e9\"}, {}]");
    free (text);
    CHECK (s_consistent (mem3));
    CHECK_STR (ufo_item_get_str (ufo_memory_at (mem3, 3), "d", NULL), "\xC3\xA9");
    ufo_item_set_int (ufo_memory_at (mem3, 0), "a", 2);
    s_add (mem3, 7, "x");
    CHECK (s_consistent (mem3));
    //  a bad object after good ones: an error, and the memory keeps its content
    const char *bad_late = "[{\"a\": 1}, {\"b\":2}, {\"c\": tru}]";
    CHECK_INT (ufo_memory_from_json (mem3, bad_late, strlen (bad_late), &err), -1);
    CHECK_INT (ufo_memory_length (mem3), 6);
    const char *bad_brackets = "[{\"a\": [1}, {\"b\": \"}\"}]";
    CHECK_INT (ufo_memory_from_json (mem3, bad_brackets, strlen (bad_brackets), &err), -1);
    CHECK_INT (ufo_memory_length (mem3), 6);
    ufo_memory_destroy (&mem3);

    //  errors leave the memory unchanged
    const char *bads [] = { "", "[", "[{\"a\": 1},]", "{\"a\": 1}", "[1, 2]", "[{\"a\": 1}] x",
                            "[{\"a\": \"\xff\"}]", "[[{}]]", "nul" };
    for (size_t i = 0; i < sizeof (bads) / sizeof (bads [0]); i++) {
        ufo_error_clear (&err);
        CHECK_INT (ufo_memory_from_json (mem, bads [i], strlen (bads [i]), &err), -1);
        CHECK (err.code != UFO_OK);
    }
    CHECK_INT (ufo_memory_from_json (mem, NULL, 0, &err), -1);
    CHECK_INT (ufo_memory_length (mem), 2);
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, canon);
    free (text);
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_cache_follows_changes)
{
    ufo_error_t err;
    ufo_memory_t *mem = ufo_memory_new ();
    s_add (mem, 1, "a");
    CHECK (s_consistent (mem));
    s_add (mem, 2, "b");                    //  appended after a serialisation
    CHECK (s_consistent (mem));
    //  mutate a held item after it was serialised
    ufo_item_set_str (ufo_memory_at (mem, 0), "Action", "changed");
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 1, \"Action\": \"changed\"}, {\"Step\": 2, \"Action\": \"b\"}]");
    free (text);
    //  mutate a lazily loaded item
    const char *canon = "[{\"Step\": 1}, {\"Step\": 2}, {\"Step\": 3}]";
    CHECK_INT (ufo_memory_from_json (mem, canon, strlen (canon), &err), 0);
    ufo_item_set_int (ufo_memory_at (mem, 1), "x", 5);
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 1}, {\"Step\": 2, \"x\": 5}, {\"Step\": 3}]");
    free (text);
    ufo_item_remove (ufo_memory_latest (mem), "Step");
    CHECK (s_consistent (mem));
    ufo_memory_delete_step (mem, 1);
    CHECK (s_consistent (mem));
    s_add (mem, 4, "d");
    CHECK (s_consistent (mem));
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 2, \"x\": 5}, {}, {\"Step\": 4, \"Action\": \"d\"}]");
    free (text);
    ufo_memory_clear (mem);
    text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[]");
    free (text);
    s_add (mem, 5, "e");
    CHECK (s_consistent (mem));
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_cap)
{
    ufo_memory_t *mem = ufo_memory_new ();
    CHECK_INT (ufo_memory_cap (mem), 0);
    for (int i = 1; i <= 5; i++)
        s_add (mem, i, "x");
    ufo_memory_set_cap (mem, 3);
    CHECK_INT (ufo_memory_cap (mem), 3);
    CHECK_INT (ufo_memory_length (mem), 3);
    CHECK_INT (ufo_item_get_int (ufo_memory_at (mem, 0), "Step", 0), 3);
    CHECK (s_consistent (mem));
    s_add (mem, 6, "y");
    CHECK_INT (ufo_memory_length (mem), 3);
    CHECK_INT (ufo_item_get_int (ufo_memory_at (mem, 0), "Step", 0), 4);
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"Step\": 4, \"Action\": \"x\"}, {\"Step\": 5, \"Action\": \"x\"}, "
                     "{\"Step\": 6, \"Action\": \"y\"}]");
    free (text);
    //  a long capped session: the text buffer is compacted as the oldest items go
    char big [300];
    memset (big, 'z', sizeof (big) - 1);
    big [sizeof (big) - 1] = 0;
    for (int i = 7; i < 2000; i++) {
        s_add (mem, i, big);
        if (i % 7 == 0)
            CHECK (s_consistent (mem));
        if (i % 500 == 0)
            ufo_item_set_int (ufo_memory_at (mem, 1), "Step", -i);
    }
    CHECK_INT (ufo_memory_length (mem), 3);
    CHECK_INT (ufo_item_get_int (ufo_memory_latest (mem), "Step", 0), 1999);
    CHECK (s_consistent (mem));
    //  cap of 1 and removing the cap
    ufo_memory_set_cap (mem, 1);
    s_add (mem, 3000, "only");
    CHECK (s_consistent (mem));
    CHECK_INT (ufo_memory_length (mem), 1);
    ufo_memory_set_cap (mem, 0);
    s_add (mem, 3001, "two");
    CHECK_INT (ufo_memory_length (mem), 2);
    CHECK (s_consistent (mem));
    ufo_memory_destroy (&mem);
}

//  Inputs that look canonical but are not (or are, at the edges): whichever path the loader
//  takes, the memory's text must equal a fresh json.dumps of what was loaded.
UFO_TEST (test_canonical_edges)
{
    struct { const char *in, *out; } cases [] = {
        { "[{\"s\": \"\\u00E9\"}]", "[{\"s\": \"\\u00e9\"}]" },          //  upper-case hex
        { "[{\"s\": \"\\/\"}]", "[{\"s\": \"/\"}]" },                       //  needless escape
        { "[{\"s\": \"\\u0041\"}]", "[{\"s\": \"A\"}]" },                   //  printable as \u
        { "[{\"s\": \"\\u000a\"}]", "[{\"s\": \"\\n\"}]" },               //  short escape exists
        { "[{\"s\": \"\\ud83d\\ude00\"}]", "[{\"s\": \"\\ud83d\\ude00\"}]" },
        { "[{\"s\": \"\\u007f\\u0000\\u001f\"}]", "[{\"s\": \"\\u007f\\u0000\\u001f\"}]" },
        { "[{\"n\": -0}]", "[{\"n\": 0}]" },
        { "[{\"n\": 9223372036854775807, \"m\": -9223372036854775808}]",
          "[{\"n\": 9223372036854775807, \"m\": -9223372036854775808}]" },
        { "[{\"f\": 1.50}]", "[{\"f\": 1.5}]" },
        { "[{\"f\": 1e16}]", "[{\"f\": 1e+16}]" },
        { "[{\"f\": 0.00001}]", "[{\"f\": 1e-05}]" },
        { "[{\"f\": 100.0, \"g\": -0.0, \"h\": 0.0001}]", "[{\"f\": 100.0, \"g\": -0.0, \"h\": 0.0001}]" },
        { "[{\"f\": NaN, \"g\": Infinity, \"h\": -Infinity}]", "[{\"f\": NaN, \"g\": Infinity, \"h\": -Infinity}]" },
        { "[{\"a\":1}]", "[{\"a\": 1}]" },
        { "[{\"a\": [1,2]}]", "[{\"a\": [1, 2]}]" },
        { "[{\"a\": 1, \"b\": {\"a\": 2, \"a\": 3}}]", "[{\"a\": 1, \"b\": {\"a\": 3}}]" },
        { "[{\"\": 1, \"x\": {}, \"y\": [], \"z\": [[]]}]", "[{\"\": 1, \"x\": {}, \"y\": [], \"z\": [[]]}]" },
    };
    ufo_error_t err;
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases [0]); i++) {
        ufo_memory_t *mem = ufo_memory_new ();
        CHECK_INT (ufo_memory_from_json (mem, cases [i].in, strlen (cases [i].in), &err), 0);
        char *text = ufo_memory_to_json (mem, NULL);
        CHECK_STR (text, cases [i].out);
        free (text);
        CHECK (s_consistent (mem));
        ufo_memory_destroy (&mem);
    }
    //  a lone surrogate is not kept as text (the fast path refuses it); whatever the parser
    //  makes of it, the text stays consistent with the loaded value
    const char *lone = "[{\"s\": \"\\ud800\"}]";
    ufo_memory_t *mem = ufo_memory_new ();
    if (ufo_memory_from_json (mem, lone, strlen (lone), &err) == 0)
        CHECK (s_consistent (mem));

    //  an object with more keys than the fast path tracks, and deep nesting: full parser
    ufo_buf_t big = {0};
    ufo_buf_puts (&big, "[{");
    for (int k = 0; k < 100; k++)
        ufo_buf_printf (&big, "%s\"k%d\": %d", k ? ", " : "", k, k);
    ufo_buf_puts (&big, "}, {\"d\": ");
    for (int k = 0; k < 60; k++)
        ufo_buf_putc (&big, '[');
    for (int k = 0; k < 60; k++)
        ufo_buf_putc (&big, ']');
    ufo_buf_puts (&big, "}]");
    CHECK_INT (ufo_memory_from_json (mem, big.data, big.len, &err), 0);
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, big.data);
    free (text);
    CHECK (s_consistent (mem));
    ufo_buf_free (&big);
    ufo_memory_destroy (&mem);
}

//  The canonical check finds string ends with bit masks per 64-byte block, made with
//  AVX-512BW where the CPU has it and with portable code otherwise: both give the same
//  verdicts, for strings that end, hold an escape or a raw control byte at every offset
//  of a block and across block ends.
UFO_TEST (test_canon_mask_variants)
{
    for (int portable = 0; portable < 2; portable++) {
        ufo_canon__portable (portable == 1);
        for (size_t lead = 0; lead < 64; lead++) {
            for (size_t len = 0; len < 140; len += 7) {
                //  ["<lead x's>", "<len bytes with an escape at len/2>"]
                ufo_buf_t text = {0};
                ufo_buf_puts (&text, "[\"");
                for (size_t i = 0; i < lead; i++)
                    ufo_buf_putc (&text, 'x');
                ufo_buf_puts (&text, "\", \"");
                for (size_t i = 0; i < len; i++)
                    ufo_buf_puts (&text, i == len / 2 ? "\\u00e9" : "y");
                ufo_buf_puts (&text, "\"]");
                CHECK_INT (ufo_canon_value (text.data, text.len), text.len);
                //  a raw tab, a raw non-ASCII byte, DEL, an upper-case escape: refused
                size_t at = lead + 5 + len / 2;
                char *bad = (char *) malloc (text.len);
                REQUIRE (bad);
                memcpy (bad, text.data, text.len);
                bad [2 + lead / 2] = '\t';
                CHECK_INT (ufo_canon_value (bad, text.len), 0);
                memcpy (bad, text.data, text.len);
                bad [at < text.len - 2 ? at : 2] = (char) 0xC3;
                CHECK_INT (ufo_canon_value (bad, text.len), 0);
                memcpy (bad, text.data, text.len);
                bad [at < text.len - 2 ? at : 2] = 0x7f;                //  DEL
                CHECK_INT (ufo_canon_value (bad, text.len), 0);
                if (len) {
                    memcpy (bad, text.data, text.len);
                    bad [lead + 5 + len / 2 + 4] = 'E';
                    CHECK_INT (ufo_canon_value (bad, text.len), 0);
                }
                //  cut anywhere inside the last string: never accepted past the cut
                size_t cut = text.len - 2 - len / 3;
                CHECK_INT (ufo_canon_value (text.data, cut), 0);
                free (bad);
                ufo_buf_free (&text);
            }
        }
    }
    ufo_canon__portable (false);
}

//  Maps of one level are matched against the keys of the level's last accepted map; from
//  the first key that differs on, keys are scanned and checked for duplicates among all of
//  the map's keys, the matched ones included. Each case: canonical (1) or not (0).
UFO_TEST (test_canon_key_templates)
{
    struct { const char *text; int canonical; } cases [] = {
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"b\": 2}]", 1 },
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"a\": 2}]", 0 },           //  matched key again
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"c\": 3, \"b\": 4}]", 1 },
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"c\": 3, \"a\": 4}]", 0 }, //  after a difference
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"b\": 2, \"b\": 5}]", 0 }, //  past the known keys
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1}, {\"a\": 1, \"b\": 2, \"b\": 3}]", 0 },
        { "[{\"a\": 1, \"b\": 2}, {\"a\": 1}, {\"a\": 1, \"b\": 2}]", 1 },
        { "[{\"a\": 1, \"b\": 2}, {\"b\": 1, \"a\": 2}]", 1 },
        { "[{\"a\": 1, \"b\": 2}, {\"b\": 1, \"b\": 2}]", 0 },
        { "[{\"ab\": 1}, {\"a\": 1}, {\"a\": 1, \"ab\": 2}]", 1 },
        { "[{\"a\": 1, \"b\": 1}, {\"a\":1, \"b\": 1}]", 0 },              //  known key, no space
        { "[{\"x\": {\"a\": 1, \"b\": 2}}, {\"x\": {\"a\": 1, \"a\": 2}}]", 0 },
        { "[{\"x\": {\"a\": 1}}, {\"a\": {\"x\": 1}}, {\"x\": {\"a\": 1}}]", 1 },
        { "[[{\"a\": 1}], [{\"a\": 1, \"a\": 1}]]", 0 },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases [0]); i++) {
        size_t len = strlen (cases [i].text);
        CHECK_INT (ufo_canon_value (cases [i].text, len), cases [i].canonical ? len : 0);
    }
    //  keys longer than the 32 bytes compared at once, longer than a level remembers (253
    //  bytes with the quotes), and more keys than it remembers (24): a repeat of any of them
    //  is refused
    for (int kind = 0; kind < 3; kind++) {
        size_t count = kind == 2 ? 30 : 2;
        size_t base = kind == 0 ? 40 : kind == 1 ? 300 : 1;
        ufo_buf_t first = {0}, good = {0}, list = {0};
        for (size_t c = 0; c < base; c++)
            ufo_buf_putc (&first, 'k');
        ufo_buf_putc (&first, '0');
        for (size_t k = 0; k < count; k++)
            ufo_buf_printf (&good, "%s\"%.*s%zu\": %zu", k ? ", " : "{", (int) base,
                            first.data, k, k);
        ufo_buf_putc (&good, '}');
        //  [good, good] is canonical; [good, good, good with its first key again] is not
        ufo_buf_printf (&list, "[%s, %s]", good.data, good.data);
        CHECK_INT (ufo_canon_value (list.data, list.len), list.len);
        ufo_buf_reset (&list);
        ufo_buf_printf (&list, "[%s, %s, ", good.data, good.data);
        ufo_buf_append (&list, good.data, good.len - 1);
        ufo_buf_printf (&list, ", \"%s\": 1}]", first.data);
        CHECK_INT (ufo_canon_value (list.data, list.len), 0);
        ufo_buf_free (&first);
        ufo_buf_free (&good);
        ufo_buf_free (&list);
    }
}

//  Which path each loaded object took: canonical text stays text (lazy item), anything else
//  is parsed alone into its map; a list that is not one of objects goes to the full parser.
UFO_TEST (test_load_paths)
{
    ufo_error_t err;
    ufo_memory_t *mem = ufo_memory_new ();
    const char *canon = "[{\"a\": 1}, {\"b\": [2]}]";
    CHECK_INT (ufo_memory_from_json (mem, canon, strlen (canon), &err), 0);
    for (size_t i = 0; i < 2; i++) {
        CHECK (ufo_memory_at (mem, i)->fields == NULL);
        CHECK (ufo_memory_at (mem, i)->in_owner);
    }
    CHECK (ufo_memory_at (mem, 0)->slab != NULL);
    CHECK (ufo_memory_at (mem, 0)->slab == ufo_memory_at (mem, 1)->slab);

    const char *mixed = "[{\"a\":1}, {\"b\": [2]}, {\"s\":\"}]{[\\\"\"}]";
    CHECK_INT (ufo_memory_from_json (mem, mixed, strlen (mixed), &err), 0);
    REQUIRE (ufo_memory_length (mem) == 3);
    CHECK (ufo_memory_at (mem, 0)->fields != NULL);                 //  parsed alone
    CHECK (ufo_memory_at (mem, 1)->fields == NULL);                 //  kept as text
    CHECK (ufo_memory_at (mem, 1)->text != NULL);
    CHECK (ufo_memory_at (mem, 2)->fields != NULL);
    CHECK_STR (ufo_item_get_str (ufo_memory_at (mem, 2), "s", NULL), "}]{[\"");
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, "[{\"a\": 1}, {\"b\": [2]}, {\"s\": \"}]{[\\\"\"}]");
    free (text);
    CHECK (s_consistent (mem));
    ufo_memory_destroy (&mem);
}

UFO_TEST (test_skewed_item_sizes)
{
    //  32 long items then many short ones: the text buffer's reservation is a guess from the
    //  first 32 and must stay bounded (it once asked for 30,000 x 1 MB and aborted)
    ufo_memory_t *mem = ufo_memory_new ();
    char *big = malloc (1 << 20);
    memset (big, 'x', (1 << 20) - 1);
    big [(1 << 20) - 1] = 0;
    for (int i = 0; i < 32; i++)
        s_add (mem, i, big);
    for (int i = 32; i < 30032; i++)
        s_add (mem, i, "small");
    size_t len;
    char *json = ufo_memory_to_json (mem, &len);
    CHECK (json && len > 32u * (1 << 20));
    CHECK (json && strstr (json + len - 100, "\"Step\": 30031, \"Action\": \"small\"}]") != NULL);
    free (json);
    CHECK_INT (ufo_memory_length (mem), 30032);
    free (big);
    ufo_memory_destroy (&mem);
}

int
main (void)
{
    UFO_RUN (test_basics);
    UFO_RUN (test_filters);
    UFO_RUN (test_list_forms);
    UFO_RUN (test_json_forms);
    UFO_RUN (test_cache_follows_changes);
    UFO_RUN (test_cap);
    UFO_RUN (test_canonical_edges);
    UFO_RUN (test_canon_mask_variants);
    UFO_RUN (test_canon_key_templates);
    UFO_RUN (test_load_paths);
    UFO_RUN (test_skewed_item_sizes);
    return UFO_TEST_END ();
}
