/*  test_item.c - blackboard items: ordered fields, filter, maps, JSON and msgpack forms,
    the canonical text cache and its invalidation. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_test.h"

static char *
s_json (ufo_item_t *item)
{
    return ufo_item_to_json (item, UFO_JSON_PY, NULL);
}

UFO_TEST (test_fields_keep_order)
{
    ufo_item_t *item = ufo_item_new ();
    CHECK_INT (ufo_item_size (item), 0);
    ufo_item_set_int (item, "Step", 3);
    ufo_item_set_str (item, "Subtask", "open notepad");
    ufo_item_set_bool (item, "UserConfirm", false);
    ufo_item_set_null (item, "Action");
    ufo_item_set_float (item, "Score", 0.5);
    CHECK_INT (ufo_item_size (item), 5);
    CHECK_STR (ufo_item_key_at (item, 0), "Step");
    CHECK_STR (ufo_item_key_at (item, 4), "Score");
    CHECK (ufo_item_key_at (item, 5) == NULL);
    //  setting an existing key keeps its position
    ufo_item_set_str (item, "Step", "three");
    CHECK_STR (ufo_item_key_at (item, 0), "Step");
    CHECK_STR (ufo_item_get_str (item, "Step", NULL), "three");
    CHECK (ufo_item_has (item, "Action"));
    CHECK (!ufo_item_has (item, "Nope"));
    CHECK (ufo_item_get (item, "Nope") == NULL);
    CHECK (ufo_item_get (item, NULL) == NULL);
    CHECK_INT (ufo_item_get_int (item, "Subtask", -7), -7);
    CHECK_STR (ufo_item_get_str (item, "Nope", "dflt"), "dflt");
    char *text = s_json (item);
    CHECK_STR (text, "{\"Step\": \"three\", \"Subtask\": \"open notepad\", \"UserConfirm\": false, "
                     "\"Action\": null, \"Score\": 0.5}");
    free (text);
    CHECK (ufo_item_remove (item, "Action"));
    CHECK (!ufo_item_remove (item, "Action"));
    CHECK (!ufo_item_remove (item, NULL));
    CHECK_INT (ufo_item_size (item), 4);
    ufo_item_destroy (&item);
    CHECK (item == NULL);
    ufo_item_destroy (&item);      //  safe twice
}

UFO_TEST (test_step)
{
    ufo_item_t *item = ufo_item_new ();
    int64_t step = -1;
    CHECK (!ufo_item_step (item, &step));
    ufo_item_set_int (item, "step", 4);
    CHECK (ufo_item_step (item, &step));
    CHECK_INT (step, 4);
    ufo_item_set_int (item, "Step", 9);         //  "Step" (HISTORY_KEYS) wins
    CHECK (ufo_item_step (item, &step));
    CHECK_INT (step, 9);
    ufo_item_set_str (item, "Step", "9");       //  not an integer: falls back to "step"
    CHECK (ufo_item_step (item, &step));
    CHECK_INT (step, 4);
    ufo_item_set_float (item, "step", 4.0);
    CHECK (!ufo_item_step (item, NULL));
    ufo_item_destroy (&item);
}

UFO_TEST (test_add_from_map_and_filter)
{
    ufo_error_t err;
    ufo_value_t *map = ufo_json_parse_str ("{\"b\": 1, \"a\": [1, {\"x\": 2}], \"c\": \"s\"}", &err);
    REQUIRE (map);
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_int (item, "a", 0);
    CHECK_INT (ufo_item_add_from_map (item, map, &err), 0);
    CHECK_STR (ufo_item_key_at (item, 0), "a");     //  existing key keeps its place
    CHECK_STR (ufo_item_key_at (item, 1), "b");
    CHECK_STR (ufo_item_key_at (item, 2), "c");
    //  the item holds copies
    ufo_value_destroy (&map);
    CHECK_INT (ufo_value_int (ufo_value_path (ufo_item_fields (item), "a.1.x")), 2);

    //  filter keeps the item's order, not the keys' order, and ignores absent keys
    const char *keys [] = { "c", "zzz", "a" };
    ufo_value_t *f = ufo_item_filter (item, keys, 3);
    char *text = ufo_json_dump (f, UFO_JSON_PY, NULL);
    CHECK_STR (text, "{\"a\": [1, {\"x\": 2}], \"c\": \"s\"}");
    free (text);
    ufo_value_destroy (&f);
    f = ufo_item_filter (item, NULL, 0);
    CHECK_INT (ufo_value_size (f), 0);
    ufo_value_destroy (&f);

    //  error path: not a map, item unchanged
    ufo_value_t *list = ufo_value_new_list ();
    ufo_error_clear (&err);
    CHECK_INT (ufo_item_add_from_map (item, list, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "expected a map");
    CHECK_INT (ufo_item_add_from_map (item, NULL, &err), -1);
    CHECK_INT (ufo_item_size (item), 3);
    ufo_value_destroy (&list);
    ufo_item_destroy (&item);
}

UFO_TEST (test_maps)
{
    ufo_error_t err;
    ufo_value_t *map = ufo_json_parse_str ("{\"k\": \"v\", \"n\": {\"deep\": [true]}}", &err);
    REQUIRE (map);
    ufo_item_t *item = ufo_item_from_map (map, &err);
    REQUIRE (item);
    ufo_value_t *back = ufo_item_to_map (item);
    CHECK (ufo_value_equal (back, map));
    ufo_value_destroy (&back);
    ufo_item_t *copy = ufo_item_dup (item);
    ufo_item_set_int (copy, "k", 1);
    CHECK_STR (ufo_item_get_str (item, "k", NULL), "v");      //  independent
    ufo_item_destroy (&copy);
    ufo_item_destroy (&item);

    item = ufo_item_from_map_take (&map, &err);
    CHECK (map == NULL);
    REQUIRE (item);
    CHECK_INT (ufo_item_size (item), 2);
    ufo_item_destroy (&item);

    ufo_value_t *num = ufo_value_new_int (3);
    CHECK (ufo_item_from_map (num, &err) == NULL);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK (ufo_item_from_map (NULL, &err) == NULL);
    CHECK (ufo_item_from_map_take (&num, &err) == NULL);
    CHECK (num == NULL);                    //  taken and destroyed
}

UFO_TEST (test_json_forms)
{
    ufo_error_t err;
    const char *src = "{\"name\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\",\"n\":-9223372036854775808,"
                      "\"f\":[0.1,1e16,-0.0,1.5e-7],\"m\":{\"q\":\"\\\"/\\\\\\n\x7f\"}}";
    ufo_item_t *item = ufo_item_from_json (src, strlen (src), &err);
    REQUIRE (item);
    char *py = s_json (item);
    CHECK_STR (py, "{\"name\": \"caf\\u00e9 \\ud83d\\ude00\", \"n\": -9223372036854775808, "
                   "\"f\": [0.1, 1e+16, -0.0, 1.5e-07], \"m\": {\"q\": \"\\\"/\\\\\\n\\u007f\"}}");
    size_t len;
    const char *cached = ufo_item_json (item, &len);
    CHECK_INT (len, strlen (py));
    CHECK (memcmp (cached, py, len) == 0);
    char *compact = ufo_item_to_json (item, UFO_JSON_COMPACT, NULL);
    CHECK_STR (compact, "{\"name\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\",\"n\":-9223372036854775808,"
                        "\"f\":[0.1,1e+16,-0.0,1.5e-07],\"m\":{\"q\":\"\\\"/\\\\\\n\x7f\"}}");
    free (compact);
    //  the PY text parses back to the same item
    ufo_item_t *again = ufo_item_from_json (py, strlen (py), &err);
    REQUIRE (again);
    CHECK (ufo_value_equal (ufo_item_fields (again), ufo_item_fields (item)));
    ufo_item_destroy (&again);
    free (py);
    ufo_item_destroy (&item);

    //  NaN and Infinity are accepted, as Python's json.loads does
    item = ufo_item_from_json ("{\"x\": NaN, \"y\": -Infinity}", 26, &err);
    REQUIRE (item);
    py = s_json (item);
    CHECK_STR (py, "{\"x\": NaN, \"y\": -Infinity}");
    free (py);
    ufo_item_destroy (&item);

    //  errors
    CHECK (ufo_item_from_json ("{\"a\": ", 6, &err) == NULL);
    CHECK (err.code == UFO_E_TRUNCATED || err.code == UFO_E_SYNTAX);
    CHECK (ufo_item_from_json ("[1, 2]", 6, &err) == NULL);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK (ufo_item_from_json ("{\"a\": \"\xff\"}", 10, &err) == NULL);
    CHECK (ufo_item_from_json (NULL, 0, &err) == NULL);
    CHECK (ufo_item_from_json ("", 0, &err) == NULL);
}

UFO_TEST (test_msgpack_round_trip)
{
    ufo_error_t err;
    const char *src = "{\"u\": \"\\u00e9\\u4e2d\\ud83d\\ude00\", \"big\": 9223372036854775807, "
                      "\"neg\": -9223372036854775808, \"f\": [0.1, -2.5e-300, 1e+308], "
                      "\"nest\": {\"a\": [[], {}, [null, true, false]]}, \"s\": \"\"}";
    ufo_item_t *item = ufo_item_from_json (src, strlen (src), &err);
    REQUIRE (item);
    ufo_buf_t buf = {0};
    ufo_item_to_msgpack (item, &buf);
    ufo_item_t *back = ufo_item_from_msgpack (buf.data, buf.len, &err);
    REQUIRE (back);
    CHECK (ufo_value_equal (ufo_item_fields (back), ufo_item_fields (item)));
    char *a = s_json (item), *b = s_json (back);
    CHECK_STR (a, src);             //  src is already in canonical form
    CHECK_STR (b, src);
    free (a);
    free (b);
    ufo_item_destroy (&back);

    //  truncated msgpack and a non-map
    CHECK (ufo_item_from_msgpack (buf.data, buf.len - 1, &err) == NULL);
    CHECK (err.code != UFO_OK);
    ufo_buf_reset (&buf);
    ufo_value_t *list = ufo_value_new_list ();
    ufo_msgpack_append (&buf, list);
    CHECK (ufo_item_from_msgpack (buf.data, buf.len, &err) == NULL);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK (ufo_item_from_msgpack (NULL, 0, &err) == NULL);
    ufo_value_destroy (&list);
    ufo_buf_free (&buf);
    ufo_item_destroy (&item);
}

UFO_TEST (test_cache_invalidation)
{
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_int (item, "a", 1);
    size_t len;
    CHECK_STR (ufo_item_json (item, &len), "{\"a\": 1}");
    CHECK_INT (len, 8);
    ufo_item_set_int (item, "b", 2);
    CHECK_STR (ufo_item_json (item, NULL), "{\"a\": 1, \"b\": 2}");
    ufo_value_t *v = ufo_value_new_list ();
    ufo_value_list_push_str (v, "x");
    ufo_item_set (item, "a", &v);
    CHECK (v == NULL);
    CHECK_STR (ufo_item_json (item, NULL), "{\"a\": [\"x\"], \"b\": 2}");
    ufo_item_remove (item, "a");
    CHECK_STR (ufo_item_json (item, NULL), "{\"b\": 2}");
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_int (m, "c", 3);
    ufo_item_add_from_map (item, m, NULL);
    CHECK_STR (ufo_item_json (item, NULL), "{\"b\": 2, \"c\": 3}");
    ufo_item_set_copy (item, "d", m);
    ufo_item_set_copy (item, "e", NULL);
    CHECK_STR (ufo_item_json (item, NULL), "{\"b\": 2, \"c\": 3, \"d\": {\"c\": 3}, \"e\": null}");
    ufo_value_destroy (&m);
    ufo_item_destroy (&item);
}

//  ufo_item_to_map hands out the item's own map, frozen and shared: no copy, and the map
//  stays as it was when the item changes later (the item then works on a copy of its own)
//  or goes.
UFO_TEST (test_to_map_shares)
{
    ufo_error_t err;
    const char *text = "{\"k\": \"v\", \"n\": {\"deep\": [true]}}";
    ufo_item_t *item = ufo_item_from_json (text, strlen (text), &err);
    REQUIRE (item);
    const ufo_value_t *own = ufo_item_fields (item);
    ufo_value_t *m1 = ufo_item_to_map (item);
    ufo_value_t *m2 = ufo_item_to_map (item);
    CHECK (m1 == own && m2 == own);
    CHECK (ufo_value_frozen (m1));
    CHECK (ufo_value_frozen (ufo_value_path (m1, "n.deep")));

    //  changed while shared: the item copies, the maps handed out stay as they were
    ufo_item_set_int (item, "k", 1);
    CHECK (ufo_item_fields (item) != own);
    CHECK (!ufo_value_frozen (ufo_item_fields (item)));
    CHECK_INT (ufo_item_get_int (item, "k", 0), 1);
    CHECK_STR (ufo_value_map_str (m1, "k", NULL), "v");
    CHECK_STR (ufo_item_json (item, NULL), "{\"k\": 1, \"n\": {\"deep\": [true]}}");
    ufo_value_destroy (&m2);

    //  handed out, then given back: the next change needs no copy
    ufo_value_t *m3 = ufo_item_to_map (item);
    own = ufo_item_fields (item);
    CHECK (m3 == own);
    ufo_value_destroy (&m3);
    ufo_item_set_str (item, "k", "w");
    CHECK (ufo_item_fields (item) == own);
    CHECK (!ufo_value_frozen (own));
    CHECK (ufo_item_remove (item, "n"));
    CHECK_STR (ufo_item_json (item, NULL), "{\"k\": \"w\"}");

    //  a map outlives its item
    ufo_value_t *m4 = ufo_item_to_map (item);
    ufo_item_destroy (&item);
    CHECK_STR (ufo_value_map_str (m4, "k", NULL), "w");
    CHECK_STR (ufo_value_map_str (m1, "k", NULL), "v");
    CHECK (ufo_value_path (m1, "n.deep.0") != NULL);
    ufo_value_destroy (&m4);
    ufo_value_destroy (&m1);

    //  a copy of the item made while its map is shared is independent
    item = ufo_item_from_json ("{\"a\": [1]}", 10, &err);
    REQUIRE (item);
    ufo_value_t *m5 = ufo_item_to_map (item);
    ufo_item_t *copy = ufo_item_dup (item);
    ufo_item_set_int (copy, "a", 2);
    CHECK_STR (ufo_item_json (item, NULL), "{\"a\": [1]}");
    CHECK_STR (ufo_item_json (copy, NULL), "{\"a\": 2}");
    ufo_item_destroy (&copy);
    ufo_item_destroy (&item);
    ufo_value_destroy (&m5);
}

int
main (void)
{
    UFO_RUN (test_fields_keep_order);
    UFO_RUN (test_step);
    UFO_RUN (test_add_from_map_and_filter);
    UFO_RUN (test_maps);
    UFO_RUN (test_json_forms);
    UFO_RUN (test_msgpack_round_trip);
    UFO_RUN (test_cache_invalidation);
    UFO_RUN (test_to_map_shares);
    return UFO_TEST_END ();
}
