/*  test_value.c - value trees: construction, ordered maps, ownership, copy, equality. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

UFO_TEST (test_scalars)
{
    ufo_value_t *v = ufo_value_new_int (INT64_MIN);
    CHECK_INT (ufo_value_type (v), UFO_TINT);
    CHECK (ufo_value_int (v) == INT64_MIN);
    CHECK (ufo_value_float (v) == (double) INT64_MIN);
    CHECK (ufo_value_str (v) == NULL);
    CHECK (!ufo_value_bool (v));
    ufo_value_destroy (&v);
    CHECK (v == NULL);
    ufo_value_destroy (&v);             //  safe twice

    v = ufo_value_new_stringn ("a\0b", 3);
    CHECK_INT (ufo_value_strlen (v), 3);
    CHECK (memcmp (ufo_value_str (v), "a\0b", 4) == 0);
    ufo_value_destroy (&v);

    v = ufo_value_new_string (NULL);
    CHECK_STR (ufo_value_str (v), "");
    ufo_value_destroy (&v);

    v = ufo_value_new_stringf ("%s-%d", "x", 42);
    CHECK_STR (ufo_value_str (v), "x-42");
    ufo_value_destroy (&v);

    char big [1000];
    memset (big, 'z', sizeof (big) - 1);
    big [sizeof (big) - 1] = 0;
    v = ufo_value_new_stringf ("%s!", big);
    CHECK_INT (ufo_value_strlen (v), 1000);
    ufo_value_destroy (&v);

    CHECK_STR (ufo_value_type_name (UFO_TMAP), "map");
    CHECK_STR (ufo_value_type_name ((ufo_type_t) 99), "unknown");
    CHECK_INT (ufo_value_type (NULL), UFO_TNULL);
}

UFO_TEST (test_map_order_and_replace)
{
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "Step", "1");
    ufo_value_map_set_int (m, "b", 2);
    ufo_value_map_set_bool (m, "c", true);
    ufo_value_map_set_int (m, "Step", 7);      //  replace keeps position
    CHECK_INT (ufo_value_size (m), 3);
    CHECK_STR (ufo_value_map_key_at (m, 0), "Step");
    CHECK_INT (ufo_value_map_int (m, "Step", -1), 7);
    CHECK_STR (ufo_value_map_key_at (m, 2), "c");
    CHECK (ufo_value_map_key_at (m, 3) == NULL);
    CHECK (ufo_value_map_has (m, "b"));
    CHECK (!ufo_value_map_has (m, "zz"));
    CHECK_STR (ufo_value_map_str (m, "b", "dflt"), "dflt");    //  wrong type -> default
    CHECK (ufo_value_map_remove (m, "b"));
    CHECK (!ufo_value_map_remove (m, "b"));
    CHECK_INT (ufo_value_size (m), 2);
    CHECK_STR (ufo_value_map_key_at (m, 1), "c");
    //  a long key (heap-stored) and a key with a NUL byte
    const char *longkey = "a-key-that-is-longer-than-the-inline-space-of-an-entry";
    ufo_value_map_set_str (m, longkey, "long");
    CHECK_STR (ufo_value_map_str (m, longkey, NULL), "long");
    ufo_value_t *x = ufo_value_new_int (5);
    ufo_value_map_setn (m, "n\0ul", 4, &x);
    CHECK (x == NULL);
    CHECK_INT (ufo_value_int (ufo_value_map_getn (m, "n\0ul", 4)), 5);
    CHECK (ufo_value_map_get (m, "n") == NULL);
    CHECK_INT (ufo_value_map_keylen_at (m, 3), 4);
    ufo_value_destroy (&m);
}

UFO_TEST (test_big_map_uses_index)
{
    //  Enough keys to switch to the hash index, then removals and re-adds.
    ufo_value_t *m = ufo_value_new_map ();
    char key [32];
    for (int i = 0; i < 5000; i++) {
        snprintf (key, sizeof (key), "k%d", i);
        ufo_value_map_set_int (m, key, i);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf (key, sizeof (key), "k%d", i);
        ufo_value_map_set_int (m, key, i * 2);     //  replace, no growth
    }
    CHECK_INT (ufo_value_size (m), 5000);
    for (int i = 0; i < 5000; i += 2) {
        snprintf (key, sizeof (key), "k%d", i);
        CHECK (ufo_value_map_remove (m, key));
    }
    CHECK_INT (ufo_value_size (m), 2500);
    int bad = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf (key, sizeof (key), "k%d", i);
        ufo_value_t *v = ufo_value_map_get (m, key);
        if (i % 2 == 0 ? v != NULL : ufo_value_int (v) != i * 2)
            bad++;
    }
    CHECK_INT (bad, 0);
    CHECK_STR (ufo_value_map_key_at (m, 0), "k1");             //  order kept
    ufo_value_t *copy = ufo_value_dup (m);
    CHECK (ufo_value_equal (m, copy));
    CHECK_INT (ufo_value_map_int (copy, "k4999", -1), 9998);
    ufo_value_destroy (&copy);
    ufo_value_destroy (&m);
}

UFO_TEST (test_lists)
{
    ufo_value_t *l = ufo_value_new_list ();
    for (int i = 0; i < 100; i++)
        ufo_value_list_push_int (l, i);
    ufo_value_list_push_str (l, "end");
    CHECK_INT (ufo_value_size (l), 101);
    CHECK_INT (ufo_value_int (ufo_value_list_at (l, 50)), 50);
    CHECK (ufo_value_list_at (l, 101) == NULL);
    CHECK_INT (ufo_value_list_remove (l, 0), 0);
    CHECK_INT (ufo_value_list_remove (l, 500), -1);
    CHECK_INT (ufo_value_int (ufo_value_list_at (l, 0)), 1);
    CHECK_STR (ufo_value_str (ufo_value_list_at (l, 99)), "end");
    ufo_value_clear (l);
    CHECK_INT (ufo_value_size (l), 0);
    ufo_value_destroy (&l);
}

UFO_TEST (test_equal_and_dup)
{
    ufo_value_t *a = ufo_value_new_map ();
    ufo_value_map_set_int (a, "x", 1);
    ufo_value_map_set_float (a, "y", 1.0);
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_list_push_str (list, "é");
    ufo_value_map_set (a, "z", &list);
    ufo_value_t *b = ufo_value_new_map ();             //  same pairs, other order
    ufo_value_map_set_float (b, "y", 1.0);
    ufo_value_map_set_copy (b, "z", ufo_value_map_get (a, "z"));
    ufo_value_map_set_int (b, "x", 1);
    CHECK (ufo_value_equal (a, b));
    ufo_value_map_set_float (b, "x", 1.0);               //  1 != 1.0
    CHECK (!ufo_value_equal (a, b));
    ufo_value_t *c = ufo_value_dup (a);
    CHECK (ufo_value_equal (a, c));
    ufo_value_map_set_null (c, "w");
    CHECK (!ufo_value_equal (a, c));
    CHECK (ufo_value_equal (NULL, NULL));
    CHECK (!ufo_value_equal (a, NULL));
    ufo_value_t *n1 = ufo_value_new_float (NAN), *n2 = ufo_value_new_float (NAN);
    CHECK (ufo_value_equal (n1, n2));
    ufo_value_destroy (&n1);
    ufo_value_destroy (&n2);
    ufo_value_destroy (&a);
    ufo_value_destroy (&b);
    ufo_value_destroy (&c);
}

UFO_TEST (test_path)
{
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str ("{\"a\": {\"b\": [10, {\"c\": \"deep\"}]}}", &err);
    REQUIRE (v);
    CHECK_STR (ufo_value_str (ufo_value_path (v, "a.b.1.c")), "deep");
    CHECK_INT (ufo_value_int (ufo_value_path (v, "a.b.0")), 10);
    CHECK (ufo_value_path (v, "a.b.2") == NULL);
    CHECK (ufo_value_path (v, "a.b.x") == NULL);
    CHECK (ufo_value_path (v, "a.b.0.c") == NULL);
    CHECK (ufo_value_path (v, "nope") == NULL);
    CHECK (ufo_value_path (NULL, "a") == NULL);
    ufo_value_destroy (&v);
}

UFO_TEST (test_views)
{
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_int (m, "short", -7);
    const char *longkey = "a key of more than twenty-four bytes";
    ufo_value_map_set_str (m, longkey, "text");
    ufo_value_map_set_float (m, "f", 2.5);
    ufo_value_map_set_bool (m, "b", true);
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *one = ufo_value_new_int (1);
    ufo_value_list_push (list, &one);
    ufo_value_map_set (m, "l", &list);
    const ufo_value_entry_t *e;
    CHECK_INT ((int) ufo_value_map_entries (m, &e), 5);
    CHECK_STR (ufo_value_entry_key (&e [0]), "short");
    CHECK_INT ((int) e [0].keylen, 5);
    CHECK_STR (ufo_value_entry_key (&e [1]), longkey);
    CHECK_INT ((int) e [1].keylen, (int) strlen (longkey));
    CHECK (e [4].value == ufo_value_map_get (m, "l"));
    ufo_value_view_t v;
    ufo_value_view (m, &v);
    CHECK (v.type == UFO_TMAP && v.len == 5 && v.u.entries == e);
    ufo_value_view (e [0].value, &v);
    CHECK (v.type == UFO_TINT && v.u.i == -7);
    ufo_value_view (e [1].value, &v);
    CHECK (v.type == UFO_TSTRING && v.len == 4);
    CHECK_STR (v.u.s, "text");
    ufo_value_view (e [2].value, &v);
    CHECK (v.type == UFO_TFLOAT && v.u.f == 2.5);
    ufo_value_view (e [3].value, &v);
    CHECK (v.type == UFO_TBOOL && v.u.b);
    ufo_value_view (e [4].value, &v);
    CHECK (v.type == UFO_TLIST && v.len == 1 && ufo_value_int (v.u.items [0]) == 1);
    ufo_value_view (NULL, &v);
    CHECK (v.type == UFO_TNULL && v.len == 0);
    CHECK_INT ((int) ufo_value_map_entries (e [4].value, &e), 0);
    CHECK (e == NULL);
    ufo_value_destroy (&m);
}


//  Trees from the parser and from ufo_value_dup (arrays of the exact size): every node is
//  replaceable, removable and destroyable on its own, and every container still grows.
//  ASan and valgrind check the memory.
UFO_TEST (test_built_trees)
{
    ufo_error_t err;
    const char *text = "{\"a\": [1, 2.5, \"three\", null, true, {\"x\": \"y\"}],"
                       " \"b\": {\"k1\": 1, \"k2\": 2}, \"a key of more than twenty-four bytes\": \"v\","
                       " \"s\": \"a string\", \"d\": 1, \"d\": 2}";
    ufo_value_t *v = ufo_json_parse_str (text, &err);
    REQUIRE (v);
    //  duplicate keys: the later value at the first place
    CHECK_INT ((int) ufo_value_size (v), 5);
    CHECK_STR (ufo_value_map_key_at (v, 4), "d");
    CHECK_INT (ufo_value_map_int (v, "d", 0), 2);
    ufo_value_t *copy = ufo_value_dup (v);
    CHECK (ufo_value_equal (v, copy));

    //  grow a parsed list and a parsed map, remove and replace parsed nodes
    ufo_value_t *a = ufo_value_map_get (v, "a");
    for (int i = 0; i < 40; i++)
        ufo_value_list_push_int (a, i);
    CHECK_INT ((int) ufo_value_size (a), 46);
    CHECK_STR (ufo_value_str (ufo_value_list_at (a, 2)), "three");
    CHECK_INT (ufo_value_list_remove (a, 0), 0);
    CHECK_INT (ufo_value_list_remove (a, 4), 0);           //  the inner map
    ufo_value_t *b = ufo_value_map_get (v, "b");
    for (int i = 0; i < 30; i++) {
        char key [16];
        snprintf (key, sizeof (key), "n%d", i);
        ufo_value_map_set_int (b, key, i);
    }
    CHECK_INT (ufo_value_map_int (b, "n29", 0), 29);
    CHECK_INT (ufo_value_map_int (b, "k2", 0), 2);
    CHECK (ufo_value_map_remove (b, "k1"));
    ufo_value_map_set_str (v, "s", "replaced");
    CHECK (ufo_value_map_remove (v, "a key of more than twenty-four bytes"));
    ufo_value_clear (ufo_value_map_get (copy, "a"));
    ufo_value_list_push_str (ufo_value_map_get (copy, "a"), "after clear");
    CHECK_INT ((int) ufo_value_size (ufo_value_map_get (copy, "a")), 1);

    //  a copied subtree moved into another tree and the rest destroyed apart
    ufo_value_t *heap = ufo_value_new_map ();
    ufo_value_t *inner = ufo_value_dup (ufo_value_map_get (copy, "b"));
    ufo_value_map_set (heap, "inner", &inner);
    ufo_value_destroy (&v);
    ufo_value_destroy (&copy);
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (heap, "inner"), "k1", 0), 1);
    ufo_value_destroy (&heap);

    //  big maps (indexed) with duplicates, from the parser and from dup
    ufo_buf_t buf = {0};
    ufo_buf_putc (&buf, '{');
    for (int i = 0; i < 100; i++)
        ufo_buf_printf (&buf, "%s\"key%d\": %d", i ? ", " : "", i % 60, i);
    ufo_buf_putc (&buf, '}');
    v = ufo_json_parse (buf.data, buf.len, NULL, &err);
    REQUIRE (v);
    CHECK_INT ((int) ufo_value_size (v), 60);
    CHECK_INT (ufo_value_map_int (v, "key5", 0), 65);
    CHECK_INT (ufo_value_map_int (v, "key59", 0), 59);
    CHECK_STR (ufo_value_map_key_at (v, 5), "key5");
    copy = ufo_value_dup (v);
    CHECK (ufo_value_equal (v, copy));
    CHECK_INT (ufo_value_map_int (copy, "key42", 0), 42);
    ufo_value_destroy (&v);
    ufo_value_destroy (&copy);
    ufo_buf_free (&buf);

    //  a big document, long strings
    ufo_buf_putc (&buf, '[');
    for (int i = 0; i < 3000; i++) {
        ufo_buf_printf (&buf, "%s{\"i\": %d, \"s\": \"", i ? "," : "", i);
        for (int k = 0; k < (i % 500 == 0 ? 9000 : 20); k++)
            ufo_buf_putc (&buf, (char) ('a' + k % 26));
        ufo_buf_puts (&buf, "\"}");
    }
    ufo_buf_putc (&buf, ']');
    v = ufo_json_parse (buf.data, buf.len, NULL, &err);
    REQUIRE (v);
    CHECK_INT ((int) ufo_value_size (v), 3000);
    CHECK_INT ((int) ufo_value_strlen (ufo_value_path (v, "1000.s")), 9000);
    CHECK_INT (ufo_value_int (ufo_value_path (v, "2999.i")), 2999);
    copy = ufo_value_dup (v);
    CHECK (ufo_value_equal (v, copy));
    //  a copy of one element outlives its tree; half the elements go first
    ufo_value_t *kept = ufo_value_dup (ufo_value_list_at (v, 1234));
    for (size_t i = ufo_value_size (v); i-- > 0; )
        if (i % 2)
            ufo_value_list_remove (v, i);
    ufo_value_destroy (&copy);
    CHECK_INT ((int) ufo_value_size (v), 1500);
    ufo_value_destroy (&v);
    CHECK_INT (ufo_value_map_int (kept, "i", 0), 1234);
    ufo_value_destroy (&kept);
    ufo_buf_free (&buf);

    //  errors half way through nested containers leave nothing behind
    const char *bad [] = {
        "{\"a\": [1, 2, {\"b\": \"c\", \"long key long key long key\": [1, 2", "[[[{\"x\": 1}, 2], 3], 4",
        "{\"a\": 1, \"b\": [true, false, nul]}", "{\"a\": {\"b\": {\"c\": \"\\uZZZZ\"}}}",
        "[1, 2, 3] trailing", "{\"k\" 1}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad [0]); i++) {
        v = ufo_json_parse_str (bad [i], &err);
        CHECK (v == NULL);
    }
}

//  Frozen values are read-only and shared by counting references: every reference is
//  destroyed like an owned value and the tree goes with the last one (ASan and valgrind
//  check that nothing is freed early or twice, or leaked). Parsed and built trees both.
UFO_TEST (test_frozen_sharing)
{
    const char *text = "{\"k\": \"v\", \"n\": {\"deep\": [true, 2]}, \"f\": 1.5}";
    ufo_error_t err;
    ufo_value_t *expect = ufo_json_parse_str (text, &err);
    REQUIRE (expect);
    for (int round = 0; round < 2; round++) {
        ufo_value_t *v;
        if (round == 0)
            v = ufo_json_parse_str (text, &err);            //  from the parser
        else {
            v = ufo_value_new_map ();                        //  one malloc per node
            ufo_value_map_set_str (v, "k", "v");
            ufo_value_t *n = ufo_value_new_map ();
            ufo_value_t *deep = ufo_value_new_list ();
            ufo_value_t *t = ufo_value_new_bool (true);
            ufo_value_list_push (deep, &t);
            ufo_value_list_push_int (deep, 2);
            ufo_value_map_set (n, "deep", &deep);
            ufo_value_map_set (v, "n", &n);
            ufo_value_map_set_float (v, "f", 1.5);
        }
        REQUIRE (v);
        CHECK (ufo_value_equal (v, expect));
        CHECK (!ufo_value_frozen (v));
        ufo_value_freeze (v);
        ufo_value_freeze (v);                                //  again: nothing changes
        CHECK (ufo_value_frozen (v));
        CHECK (ufo_value_frozen (ufo_value_map_get (v, "n")));
        CHECK (ufo_value_frozen (ufo_value_path (v, "n.deep")));
        CHECK (ufo_value_frozen (ufo_value_path (v, "n.deep.0")));
        CHECK (ufo_value_frozen (ufo_value_map_get (v, "f")));

        ufo_value_t *s1 = ufo_value_share (v);
        ufo_value_t *s2 = ufo_value_share (v);
        CHECK (s1 == v && s2 == v);                          //  no copy
        ufo_value_t *list = ufo_value_new_list ();
        ufo_value_list_push (list, &s1);                     //  the list owns one reference
        CHECK (s1 == NULL);
        ufo_value_destroy (&v);                              //  the first owner lets go
        CHECK (v == NULL);
        CHECK (ufo_value_equal (s2, expect));
        CHECK (ufo_value_equal (ufo_value_list_at (list, 0), expect));
        ufo_value_destroy (&list);
        CHECK (ufo_value_equal (s2, expect));

        //  a copy is an ordinary tree, changeable throughout
        ufo_value_t *copy = ufo_value_dup (s2);
        CHECK (!ufo_value_frozen (copy));
        CHECK (!ufo_value_frozen (ufo_value_path (copy, "n.deep")));
        CHECK (!ufo_value_frozen (ufo_value_map_get (copy, "f")));
        ufo_value_map_set_int (copy, "k", 7);
        ufo_value_list_push_int (ufo_value_path (copy, "n.deep"), 3);
        CHECK_STR (ufo_value_map_str (s2, "k", NULL), "v");
        CHECK_INT ((int) ufo_value_size (ufo_value_path (s2, "n.deep")), 2);
        ufo_value_destroy (&copy);

        //  a shared element replaced in a list of one's own: the list's reference goes
        ufo_value_t *mine = ufo_value_new_list ();
        ufo_value_t *s3 = ufo_value_share (s2);
        ufo_value_list_push (mine, &s3);
        ufo_value_list_push_int (mine, 9);
        ufo_value_t *fresh = ufo_value_dup (s2);
        ufo_value_t *put = ufo_value_list_set (mine, 0, &fresh);
        CHECK (fresh == NULL && put == ufo_value_list_at (mine, 0));
        CHECK (put != s2 && !ufo_value_frozen (put));
        ufo_value_map_set_int (put, "k", 8);
        CHECK_STR (ufo_value_map_str (s2, "k", NULL), "v");
        CHECK_INT (ufo_value_int (ufo_value_list_at (mine, 1)), 9);
        ufo_value_destroy (&mine);
        CHECK (ufo_value_equal (s2, expect));
        ufo_value_destroy (&s2);                             //  the last reference
    }
    ufo_value_freeze (NULL);
    CHECK (!ufo_value_frozen (NULL));
    ufo_value_destroy (&expect);
}

//  Changing a frozen value is a programmer error and stops the process (assert), for every
//  way of changing one. Runs each in a child process; needs asserts (the sanitizer build).
UFO_TEST (test_frozen_change_asserts)
{
#ifdef NDEBUG
    printf ("  (skipped: built without asserts)\n");
#else
    for (int op = 0; op < 7; op++) {
        fflush (NULL);
        pid_t pid = fork ();
        REQUIRE (pid >= 0);
        if (pid == 0) {
            ufo_error_t err;
            ufo_value_t *v = ufo_json_parse_str ("{\"k\": \"v\", \"l\": [1, 2]}", &err);
            ufo_value_freeze (v);
            ufo_value_t *l = ufo_value_map_get (v, "l");
            switch (op) {
                case 0: ufo_value_map_set_int (v, "k", 1); break;
                case 1: ufo_value_map_set_int (v, "new", 1); break;
                case 2: ufo_value_map_remove (v, "k"); break;
                case 3: ufo_value_clear (v); break;
                case 4: ufo_value_list_push_int (l, 3); break;
                case 5: ufo_value_list_remove (l, 0); break;
                default: ufo_value_clear (l); break;
            }
            _exit (0);                                       //  not stopped: a failure
        }
        int status = 0;
        REQUIRE (waitpid (pid, &status, 0) == pid);
        if (!WIFSIGNALED (status) || WTERMSIG (status) != SIGABRT)
            UFO_FAIL_ ("change %d of a frozen value was not stopped (status %d)", op, status);
    }
#endif
}

int
main (void)
{
    UFO_RUN (test_scalars);
    UFO_RUN (test_map_order_and_replace);
    UFO_RUN (test_big_map_uses_index);
    UFO_RUN (test_lists);
    UFO_RUN (test_equal_and_dup);
    UFO_RUN (test_path);
    UFO_RUN (test_views);
    UFO_RUN (test_built_trees);
    UFO_RUN (test_frozen_sharing);
    UFO_RUN (test_frozen_change_asserts);
    return UFO_TEST_END ();
}
