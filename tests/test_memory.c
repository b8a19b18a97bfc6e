/*  test_memory.c - memories: add, delete by step, filters, latest, cap, list and JSON forms,
    and the incremental JSON text staying equal to a from-scratch serialisation. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "ufo_test.h"

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
    //  canonical text comes back as it was
    const char *canon = "[{\"Step\": 1, \"u\": \"\\u00e9\"}, {\"Step\": 2, \"f\": 0.25, \"l\": [1, 2]}]";
    CHECK_INT (ufo_memory_from_json (mem, canon, strlen (canon), &err), 0);
    CHECK_INT (ufo_memory_length (mem), 2);
    char *text = ufo_memory_to_json (mem, NULL);
    CHECK_STR (text, canon);
    free (text);
    CHECK_INT (ufo_item_get_int (ufo_memory_at (mem, 1), "Step", 0), 2);
    CHECK (s_consistent (mem));

    //  other spellings of the same data give the same canonical text
    const char *other = " [ {\"Step\":1,\"u\":\"\xC3\xA9\"} ,\n{\"Step\":2,\"f\":2.5e-1,\"l\":[1,2]}]\n";
    ufo_memory_t *mem2 = ufo_memory_new ();
    CHECK_INT (ufo_memory_from_json (mem2, other, strlen (other), &err), 0);
    text = ufo_memory_to_json (mem2, NULL);
    CHECK_STR (text, canon);
    free (text);
    //  whitespace between items
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

    //  a mix of canonical and other spellings: one canonical text in the end
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
    //  mutate a loaded item
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
    //  a long capped session
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

//  Inputs that look canonical but are not (or are, at the edges): the memory's text must
//  equal a fresh json.dumps of what was loaded.
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
    //  a lone surrogate: whatever the parser makes of it, the text stays consistent with
    //  the loaded value
    const char *lone = "[{\"s\": \"\\ud800\"}]";
    ufo_memory_t *mem = ufo_memory_new ();
    if (ufo_memory_from_json (mem, lone, strlen (lone), &err) == 0)
        CHECK (s_consistent (mem));

    //  an object with many keys (hash-indexed map), and deep nesting
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

UFO_TEST (test_skewed_item_sizes)
{
    //  32 long items then many short ones (a text buffer's reservation guessed from the
    //  first 32 once asked for 30,000 x 1 MB and aborted)
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
    UFO_RUN (test_skewed_item_sizes);
    return UFO_TEST_END ();
}
