/*  test_board.c - the blackboard: add data / text / image, dict and JSON shapes, the prompt
    (golden file written by tests/golden/make_board_golden.py with Python's json module),
    the JSON-lines question loader, and cache invalidation seen through the prompt. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_memory.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "test_files.h"
#include <unistd.h>

static char s_tmpdir [256];

static char *
s_path (const char *dir, const char *name)
{
    size_t n = strlen (dir) + strlen (name) + 2;
    char *p = (char *) malloc (n);
    snprintf (p, n, "%s/%s", dir, name);
    return p;
}

static void
s_write (const char *path, const char *data, size_t len)
{
    FILE *f = fopen (path, "wb");
    if (f) {
        fwrite (data, 1, len, f);
        fclose (f);
    }
}

static const char *
s_data_dir (void)
{
    const char *dir = getenv ("UFO_TEST_DATA");
    return dir ? dir : "tests";
}

//  Builds the golden board from tests/golden/board_input.json.
static ufo_board_t *
s_golden_board (void)
{
    char *golden = s_path (s_data_dir (), "golden");
    char *input = s_path (golden, "board_input.json");
    ufo_error_t err;
    ufo_value_t *spec = ufo_json_parse_file (input, NULL, &err);
    free (input);
    if (!spec) {
        fprintf (stderr, "  %s\n", err.message);
        free (golden);
        return NULL;
    }
    ufo_board_t *board = ufo_board_new ();
    for (int which = 0; which < 3; which++) {
        const ufo_value_t *list = ufo_value_map_get (spec, ufo_board_memory_name (which));
        for (size_t i = 0; i < ufo_value_size (list); i++)
            CHECK_INT (ufo_board_add_data (board, which, ufo_value_list_at (list, i), &err), 0);
    }
    const ufo_value_t *shots = ufo_value_map_get (spec, "screenshots");
    for (size_t i = 0; i < ufo_value_size (shots); i++) {
        const ufo_value_t *shot = ufo_value_list_at (shots, i);
        char *path = s_path (golden, ufo_value_map_str (shot, "path", ""));
        ufo_board_add_image (board, path, ufo_value_map_get (shot, "metadata"));
        free (path);
    }
    ufo_value_destroy (&spec);
    free (golden);
    return board;
}

static bool
s_prompt_is_golden (ufo_board_t *board)
{
    char *golden = s_path (s_data_dir (), "golden/board_prompt.json");
    size_t glen;
    char *expected = tf_read (golden, &glen);
    free (golden);
    if (!expected)
        return false;
    while (glen && expected [glen - 1] == '\n')
        glen--;
    ufo_value_t *prompt = ufo_board_to_prompt (board);
    size_t len;
    char *text = ufo_json_dump (prompt, UFO_JSON_PY, &len);
    bool same = len == glen && memcmp (text, expected, len) == 0;
    if (!same) {
        size_t i = 0;
        while (i < len && i < glen && text [i] == expected [i])
            i++;
        fprintf (stderr, "  prompt differs from golden at byte %zu:\n  got:  %.120s\n  want: %.120s\n",
                 i, text + (i > 20 ? i - 20 : 0), expected + (i > 20 ? i - 20 : 0));
    }
    free (text);
    free (expected);
    ufo_value_destroy (&prompt);
    return same;
}

UFO_TEST (test_names)
{
    CHECK_STR (ufo_board_memory_name (UFO_MEM_QUESTIONS), "questions");
    CHECK_STR (ufo_board_memory_name (UFO_MEM_SCREENSHOTS), "screenshots");
    CHECK (ufo_board_memory_name (4) == NULL);
    CHECK (ufo_board_memory_name (-1) == NULL);
    CHECK_INT (ufo_board_memory_parse ("trajectories"), UFO_MEM_TRAJECTORIES);
    CHECK_INT (ufo_board_memory_parse ("requests"), UFO_MEM_REQUESTS);
    CHECK_INT (ufo_board_memory_parse ("nope"), -1);
    CHECK_INT (ufo_board_memory_parse (NULL), -1);
}

UFO_TEST (test_add_data)
{
    ufo_error_t err;
    ufo_board_t *board = ufo_board_new ();
    CHECK (ufo_board_is_empty (board));
    ufo_value_t *map = ufo_json_parse_str ("{\"q\": \"why\", \"a\": 42}", &err);
    CHECK_INT (ufo_board_add_data (board, UFO_MEM_QUESTIONS, map, &err), 0);
    ufo_value_t *str = ufo_value_new_string ("just text");
    CHECK_INT (ufo_board_add_data (board, UFO_MEM_QUESTIONS, str, &err), 0);
    ufo_board_add_text (board, UFO_MEM_REQUESTS, "request one");
    CHECK_INT (ufo_board_add_data_take (board, UFO_MEM_TRAJECTORIES, &map, &err), 0);
    CHECK (map == NULL);
    CHECK_INT (ufo_board_add_data_take (board, UFO_MEM_TRAJECTORIES, &str, &err), 0);
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_int (item, "Step", 1);
    CHECK (ufo_board_add (board, UFO_MEM_TRAJECTORIES, &item) != NULL);
    CHECK (item == NULL);
    //  other values: error, nothing added
    ufo_value_t *num = ufo_value_new_int (5);
    CHECK_INT (ufo_board_add_data (board, UFO_MEM_QUESTIONS, num, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK_CONTAINS (err.message, "map or a string");
    CHECK_INT (ufo_board_add_data (board, UFO_MEM_QUESTIONS, NULL, &err), -1);
    CHECK_INT (ufo_board_add_data_take (board, UFO_MEM_QUESTIONS, &num, &err), -1);
    CHECK (num == NULL);
    CHECK (!ufo_board_is_empty (board));
    char *text = ufo_board_to_json (board, NULL);
    CHECK_STR (text, "{\"questions\": [{\"q\": \"why\", \"a\": 42}, {\"text\": \"just text\"}], "
                     "\"requests\": [{\"text\": \"request one\"}], "
                     "\"trajectories\": [{\"q\": \"why\", \"a\": 42}, {\"text\": \"just text\"}, {\"Step\": 1}], "
                     "\"screenshots\": []}");
    free (text);
    ufo_board_clear (board);
    CHECK (ufo_board_is_empty (board));
    text = ufo_board_to_json (board, NULL);
    CHECK_STR (text, "{\"questions\": [], \"requests\": [], \"trajectories\": [], \"screenshots\": []}");
    free (text);
    ufo_board_destroy (&board);
    CHECK (board == NULL);
    ufo_board_destroy (&board);
}

//  Decodes standard base64 (test helper). Returns bytes written or -1.
static long
s_unbase64 (const char *s, unsigned char *out)
{
    static const char abc [] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    long n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        const char *at = strchr (abc, *s);
        if (!at)
            return -1;
        acc = acc << 6 | (uint32_t) (at - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out [n++] = (unsigned char) (acc >> bits);
        }
    }
    return n;
}

UFO_TEST (test_add_image)
{
    char *png = s_path (s_data_dir (), "golden/board_shot.png");
    size_t plen;
    char *bytes = tf_read (png, &plen);
    REQUIRE (bytes);
    ufo_board_t *board = ufo_board_new ();
    ufo_value_t *meta = ufo_value_new_map ();
    ufo_value_map_set_int (meta, "step", 3);
    ufo_board_add_image (board, png, meta);
    ufo_item_t *shot = ufo_memory_latest (ufo_board_memory (board, UFO_MEM_SCREENSHOTS));
    REQUIRE (shot);
    CHECK_STR (ufo_item_key_at (shot, 0), "metadata");
    CHECK_STR (ufo_item_key_at (shot, 1), "image_path");
    CHECK_STR (ufo_item_key_at (shot, 2), "image_str");
    CHECK (ufo_value_equal (ufo_item_get (shot, "metadata"), meta));
    CHECK_STR (ufo_item_get_str (shot, "image_path", NULL), png);
    const char *url = ufo_item_get_str (shot, "image_str", "");
    const char *prefix = "data:image/png;base64,";
    REQUIRE (strncmp (url, prefix, strlen (prefix)) == 0);
    unsigned char decoded [4096];
    CHECK_INT (s_unbase64 (url + strlen (prefix), decoded), (long) plen);
    CHECK (memcmp (decoded, bytes, plen) == 0);

    //  mime type from the extension
    struct { const char *name, *mime; } cases [] = {
        { "a.JPG", "image/jpeg" }, { "b.jpeg", "image/jpeg" }, { "c.gif", "image/gif" },
        { "d.bmp", "image/bmp" }, { "e.webp", "image/webp" }, { "f.xyz", "image/png" },
        { "noext", "image/png" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases [0]); i++) {
        char *p = s_path (s_tmpdir, cases [i].name);
        s_write (p, bytes, plen);
        ufo_board_add_image (board, p, NULL);
        shot = ufo_memory_latest (ufo_board_memory (board, UFO_MEM_SCREENSHOTS));
        char want [64];
        snprintf (want, sizeof (want), "data:%s;base64,", cases [i].mime);
        CHECK (strncmp (ufo_item_get_str (shot, "image_str", ""), want, strlen (want)) == 0);
        CHECK (ufo_value_type (ufo_item_get (shot, "metadata")) == UFO_TNULL);
        unlink (p);
        free (p);
    }
    //  a missing file: warning, empty image_str
    ufo_board_add_image (board, "/nonexistent/shot.png", meta);
    shot = ufo_memory_latest (ufo_board_memory (board, UFO_MEM_SCREENSHOTS));
    CHECK_STR (ufo_item_get_str (shot, "image_str", "x"), "");
    CHECK_STR (ufo_item_get_str (shot, "image_path", NULL), "/nonexistent/shot.png");
    ufo_board_add_image (board, s_tmpdir, NULL);        //  a directory: warning too
    shot = ufo_memory_latest (ufo_board_memory (board, UFO_MEM_SCREENSHOTS));
    CHECK_STR (ufo_item_get_str (shot, "image_str", "x"), "");
    ufo_board_add_image (board, NULL, NULL);
    CHECK_INT (ufo_memory_length (ufo_board_memory (board, UFO_MEM_SCREENSHOTS)), 11);
    ufo_value_destroy (&meta);
    ufo_board_destroy (&board);
    free (bytes);
    free (png);
}

UFO_TEST (test_prompt_golden)
{
    ufo_board_t *board = s_golden_board ();
    REQUIRE (board);
    CHECK (s_prompt_is_golden (board));
    CHECK (s_prompt_is_golden (board));         //  warm cache: same bytes

    //  through the JSON snapshot and through the map shape
    char *json = ufo_board_to_json (board, NULL);
    ufo_board_t *copy = ufo_board_new ();
    ufo_error_t err;
    CHECK_INT (ufo_board_from_json (copy, json, strlen (json), &err), 0);
    CHECK (s_prompt_is_golden (copy));
    char *json2 = ufo_board_to_json (copy, NULL);
    CHECK_STR (json2, json);
    free (json2);
    ufo_value_t *map = ufo_board_to_map (board);
    ufo_board_t *copy2 = ufo_board_new ();
    CHECK_INT (ufo_board_from_map (copy2, map, &err), 0);
    CHECK (s_prompt_is_golden (copy2));
    //  the snapshot written compactly (slow path) loads to the same board
    char *compact = ufo_json_dump (map, UFO_JSON_COMPACT, NULL);
    ufo_board_t *copy3 = ufo_board_new ();
    CHECK_INT (ufo_board_from_json (copy3, compact, strlen (compact), &err), 0);
    CHECK (s_prompt_is_golden (copy3));
    free (compact);
    ufo_value_destroy (&map);
    free (json);
    ufo_board_destroy (&copy);
    ufo_board_destroy (&copy2);
    ufo_board_destroy (&copy3);
    ufo_board_destroy (&board);
}

UFO_TEST (test_prompt_shape_and_cache)
{
    ufo_board_t *board = ufo_board_new ();
    ufo_value_t *prompt = ufo_board_to_prompt (board);
    char *text = ufo_json_dump (prompt, UFO_JSON_PY, NULL);
    CHECK_STR (text, "[{\"type\": \"text\", \"text\": \"[Blackboard:]\"}, "
                     "{\"type\": \"text\", \"text\": \"[Questions & Answers:]\\n []\"}, "
                     "{\"type\": \"text\", \"text\": \"[Request History:]\\n []\"}, "
                     "{\"type\": \"text\", \"text\": \"[Step Trajectories Completed Previously:]\\n []\"}]");
    free (text);
    ufo_value_destroy (&prompt);

    for (int i = 1; i <= 3; i++) {
        ufo_item_t *item = ufo_item_new ();
        ufo_item_set_int (item, "Step", i);
        ufo_board_add (board, UFO_MEM_TRAJECTORIES, &item);
    }
    //  a screenshot item without metadata / image_str: "" and ""
    ufo_item_t *bare = ufo_item_new ();
    ufo_item_set_str (bare, "other", "x");
    ufo_board_add (board, UFO_MEM_SCREENSHOTS, &bare);
    prompt = ufo_board_to_prompt (board);
    CHECK_INT (ufo_value_size (prompt), 6);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (prompt, 3), "text", NULL),
               "[Step Trajectories Completed Previously:]\n [{\"Step\": 1}, {\"Step\": 2}, {\"Step\": 3}]");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (prompt, 4), "text", NULL), "\"\"");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (prompt, 5), "image_url.url")), "");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (prompt, 5), "type", NULL), "image_url");
    ufo_value_destroy (&prompt);

    //  mutate after the prompt was built: the next prompt shows it
    ufo_memory_t *traj = ufo_board_memory (board, UFO_MEM_TRAJECTORIES);
    ufo_item_set_str (ufo_memory_at (traj, 1), "Action", "typed \"x\"");
    ufo_memory_delete_step (traj, 1);
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_int (item, "Step", 4);
    ufo_board_add (board, UFO_MEM_TRAJECTORIES, &item);
    prompt = ufo_board_to_prompt (board);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (prompt, 3), "text", NULL),
               "[Step Trajectories Completed Previously:]\n [{\"Step\": 2, \"Action\": \"typed \\\"x\\\"\"}, "
               "{\"Step\": 3}, {\"Step\": 4}]");
    ufo_value_destroy (&prompt);
    ufo_memory_set_cap (traj, 1);
    prompt = ufo_board_to_prompt (board);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (prompt, 3), "text", NULL),
               "[Step Trajectories Completed Previously:]\n [{\"Step\": 4}]");
    ufo_value_destroy (&prompt);
    ufo_board_clear (board);
    prompt = ufo_board_to_prompt (board);
    CHECK_INT (ufo_value_size (prompt), 4);
    ufo_value_destroy (&prompt);
    ufo_board_destroy (&board);
}

UFO_TEST (test_map_and_json_shapes)
{
    ufo_error_t err;
    ufo_board_t *board = ufo_board_new ();
    ufo_board_add_text (board, UFO_MEM_REQUESTS, "keep me");
    //  missing keys empty their memory; other keys are ignored
    const char *src = "{\"questions\": [{\"q\": 1}], \"extra\": 5, \"trajectories\": []}";
    CHECK_INT (ufo_board_from_json (board, src, strlen (src), &err), 0);
    char *text = ufo_board_to_json (board, NULL);
    CHECK_STR (text, "{\"questions\": [{\"q\": 1}], \"requests\": [], \"trajectories\": [], \"screenshots\": []}");
    free (text);
    //  duplicate top-level keys: the last wins
    src = "{\"questions\": [{\"q\": 1}], \"questions\": [{\"q\": 2}]}";
    CHECK_INT (ufo_board_from_json (board, src, strlen (src), &err), 0);
    CHECK_INT (ufo_item_get_int (ufo_memory_at (ufo_board_memory (board, 0), 0), "q", 0), 2);
    src = "  {}  ";
    CHECK_INT (ufo_board_from_json (board, src, strlen (src), &err), 0);
    CHECK (ufo_board_is_empty (board));

    //  wrong shapes: clear errors, board unchanged
    ufo_board_add_text (board, UFO_MEM_QUESTIONS, "still here");
    struct { const char *json; const char *msg; } bads [] = {
        { "[]", "expected a map" },
        { "{\"questions\": {}}", "blackboard.questions: expected a list" },
        { "{\"requests\": [{}, \"s\"]}", "blackboard.requests[1]: expected a map" },
        { "{\"screenshots\": [[]]}", "blackboard.screenshots[0]" },
        { "{\"questions\": [}", NULL },
        { "{\"questions\": []", NULL },
        { "{\"questions\": []} {}", NULL },
        { "", NULL },
    };
    for (size_t i = 0; i < sizeof (bads) / sizeof (bads [0]); i++) {
        ufo_error_clear (&err);
        CHECK_INT (ufo_board_from_json (board, bads [i].json, strlen (bads [i].json), &err), -1);
        CHECK (err.code != UFO_OK);
        if (bads [i].msg)
            CHECK_CONTAINS (err.message, bads [i].msg);
    }
    CHECK_INT (ufo_board_from_json (board, NULL, 0, &err), -1);
    CHECK_INT (ufo_board_from_map (board, NULL, &err), -1);
    ufo_value_t *num = ufo_value_new_int (1);
    CHECK_INT (ufo_board_from_map (board, num, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    ufo_value_destroy (&num);
    CHECK_INT (ufo_memory_length (ufo_board_memory (board, UFO_MEM_QUESTIONS)), 1);

    //  to_map / from_map round trip
    ufo_board_add_text (board, UFO_MEM_TRAJECTORIES, "t");
    ufo_value_t *map = ufo_board_to_map (board);
    CHECK_INT (ufo_value_size (map), 4);
    CHECK_STR (ufo_value_map_key_at (map, 0), "questions");
    CHECK_STR (ufo_value_map_key_at (map, 3), "screenshots");
    ufo_board_t *other = ufo_board_new ();
    CHECK_INT (ufo_board_from_map (other, map, &err), 0);
    char *a = ufo_board_to_json (board, NULL), *b = ufo_board_to_json (other, NULL);
    CHECK_STR (a, b);
    free (a);
    free (b);
    ufo_value_destroy (&map);
    ufo_board_destroy (&other);
    ufo_board_destroy (&board);
}

UFO_TEST (test_load_questions)
{
    ufo_board_t *board = ufo_board_new ();
    const char *lines =
        "{\"question\": \"q1\", \"answer\": \"a1\"}\n"          //  canonical
        "{\"question\":\"q2\",\"answer\":\"\xC3\xA9\"}\r\n"     //  compact, raw UTF-8, CRLF
        "not json at all\n"                                     //  warning, skipped
        "\n"                                                    //  empty: warning, skipped
        "\"just a string\"\r"                                   //  string -> {"text": ...}
        "42\n"                                                  //  valid JSON, ignored
        "  \xC2\xA0{\"question\": \"q3\"}\t \n"                 //  stripped (NBSP too)
        "{\"question\": \"q4\"}";                               //  no final newline
    CHECK_INT (ufo_board_load_questions_text (board, lines, strlen (lines), -1), 5);
    char *text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"question\": \"q1\", \"answer\": \"a1\"}, {\"question\": \"q2\", \"answer\": \"\\u00e9\"}, "
                     "{\"text\": \"just a string\"}, {\"question\": \"q3\"}, {\"question\": \"q4\"}]");
    free (text);
    CHECK_STR (ufo_item_get_str (ufo_memory_at (ufo_board_memory (board, 0), 2), "text", NULL),
               "just a string");

    //  last k lines, from a file
    ufo_board_clear (board);
    char *path = s_path (s_tmpdir, "qa.jsonl");
    s_write (path, lines, strlen (lines));
    ufo_error_t err;
    CHECK_INT (ufo_board_load_questions (board, path, 2, &err), 2);
    text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"question\": \"q3\"}, {\"question\": \"q4\"}]");
    free (text);
    ufo_board_clear (board);
    CHECK_INT (ufo_board_load_questions (board, path, 0, &err), 5);     //  0: all (lines[-0:])
    CHECK_INT (ufo_board_load_questions (board, path, 100, &err), 5);
    CHECK_INT (ufo_memory_length (ufo_board_memory (board, 0)), 10);
    unlink (path);
    free (path);
    //  missing file: nothing; a directory: an error
    CHECK_INT (ufo_board_load_questions (board, "/nonexistent/qa.jsonl", -1, &err), 0);
    CHECK_INT (ufo_board_load_questions (board, s_tmpdir, -1, &err), -1);
    CHECK_INT (err.code, UFO_E_IO);
    CHECK_INT (ufo_board_load_questions (board, NULL, -1, &err), -1);
    CHECK_INT (ufo_board_load_questions_text (board, NULL, 0, -1), 0);
    CHECK_INT (ufo_board_load_questions_text (board, "\n\n", 2, -1), 0);
    CHECK_INT (ufo_board_load_questions_text (board, "\r\r\n\xff{}", 6, -1), 0);

    //  loaded questions behave like any item: text, then mutation
    ufo_board_clear (board);
    ufo_board_load_questions_text (board, "{\"a\": 1}\n{\"b\": 2}\n", 18, -1);
    ufo_item_set_int (ufo_memory_at (ufo_board_memory (board, 0), 0), "a", 5);
    text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"a\": 5}, {\"b\": 2}]");
    free (text);
    //  appending lines after the memory changed
    ufo_board_load_questions_text (board, "{\"c\": 3}", 8, -1);
    text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"a\": 5}, {\"b\": 2}, {\"c\": 3}]");
    free (text);
    ufo_board_destroy (&board);
}

UFO_TEST (test_load_questions_with_cap)
{
    //  a cap drops items while the loader is still adding
    ufo_board_t *board = ufo_board_new ();
    ufo_memory_set_cap (ufo_board_memory (board, UFO_MEM_QUESTIONS), 1);
    const char *lines = "{\"a\": 1}\n{\"b\":2}\n{\"c\": 3}\n{\"d\":4}\n{\"e\": 5}\n";
    CHECK_INT (ufo_board_load_questions_text (board, lines, strlen (lines), -1), 5);
    char *text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"e\": 5}]");
    free (text);
    ufo_memory_set_cap (ufo_board_memory (board, UFO_MEM_QUESTIONS), 2);
    CHECK_INT (ufo_board_load_questions_text (board, lines, strlen (lines), 3), 3);
    text = ufo_memory_to_json (ufo_board_memory (board, UFO_MEM_QUESTIONS), NULL);
    CHECK_STR (text, "[{\"d\": 4}, {\"e\": 5}]");
    free (text);
    ufo_board_destroy (&board);
}

//  blackboard_to_dict: the map and its lists are new and belong to the caller; the item
//  maps are the items' own, shared read-only, and keep what they held when the board
//  changes or goes afterwards.
UFO_TEST (test_to_map_shares_items)
{
    ufo_board_t *board = ufo_board_new ();
    ufo_board_add_text (board, UFO_MEM_QUESTIONS, "q1");
    ufo_board_add_text (board, UFO_MEM_REQUESTS, "r1");
    char *before = ufo_board_to_json (board, NULL);
    ufo_value_t *map = ufo_board_to_map (board);
    ufo_value_t *again = ufo_board_to_map (board);
    ufo_value_t *q = ufo_value_map_get (map, "questions");
    REQUIRE (ufo_value_size (q) == 1);
    CHECK (ufo_value_list_at (q, 0) == ufo_value_list_at (ufo_value_map_get (again, "questions"), 0));
    CHECK (ufo_value_frozen (ufo_value_list_at (q, 0)));
    CHECK (!ufo_value_frozen (map) && !ufo_value_frozen (q));
    char *dumped = ufo_json_dump (map, UFO_JSON_PY, NULL);
    CHECK_STR (dumped, before);
    free (dumped);

    //  the caller's own parts change freely
    ufo_value_list_push_str (q, "mine");
    ufo_value_map_set_int (map, "extra", 1);
    ufo_value_destroy (&again);

    //  the board changes and goes; the map keeps the items it was given
    ufo_board_add_text (board, UFO_MEM_QUESTIONS, "q2");
    ufo_item_set_str (ufo_memory_at (ufo_board_memory (board, UFO_MEM_QUESTIONS), 0), "text", "changed");
    ufo_memory_delete_step (ufo_board_memory (board, UFO_MEM_REQUESTS), 0);
    ufo_board_clear (board);
    ufo_board_destroy (&board);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (q, 0), "text", NULL), "q1");
    CHECK_STR (ufo_value_str (ufo_value_list_at (q, 1)), "mine");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (map, "requests"), 0),
                                  "text", NULL), "r1");
    ufo_value_destroy (&map);
    free (before);
}

int
main (void)
{
    snprintf (s_tmpdir, sizeof (s_tmpdir), "/tmp/ufo_test_board_XXXXXX");
    if (!mkdtemp (s_tmpdir))
        return 2;
    UFO_RUN (test_names);
    UFO_RUN (test_add_data);
    UFO_RUN (test_add_image);
    UFO_RUN (test_prompt_golden);
    UFO_RUN (test_prompt_shape_and_cache);
    UFO_RUN (test_map_and_json_shapes);
    UFO_RUN (test_to_map_shares_items);
    UFO_RUN (test_load_questions);
    UFO_RUN (test_load_questions_with_cap);
    rmdir (s_tmpdir);
    return UFO_TEST_END ();
}
