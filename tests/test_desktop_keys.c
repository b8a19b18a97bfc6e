/*  test_desktop_keys.c - the pywinauto key syntax of keyboard_input (no display needed). */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_desktop_int.h"
#include <dirent.h>

//  Renders parsed events as "+Control_L +a -a -Control_L" using X keysym numbers.
static char *
s_render (const char *keys, int *code)
{
    ufo_error_t err = { 0 };
    ufo_value_t *list = ufo_desktop_keys_parse (keys, &err);
    *code = err.code;
    if (!list)
        return NULL;
    static char buf [4096];
    buf [0] = '\0';
    for (size_t i = 0; i < ufo_value_size (list); i++) {
        const ufo_value_t *ev = ufo_value_list_at (list, i);
        char one [32];
        snprintf (one, sizeof (one), "%s%s%" PRIx64, i ? " " : "",
                  ufo_value_map_bool (ev, "down", false) ? "+" : "-",
                  ufo_value_map_int (ev, "keysym", 0));
        strncat (buf, one, sizeof (buf) - strlen (buf) - 1);
    }
    ufo_value_destroy (&list);
    return buf;
}

UFO_TEST (test_plain_and_special)
{
    int code;
    CHECK_STR (s_render ("ab", &code), "+61 -61 +62 -62");
    CHECK_STR (s_render ("A", &code), "+41 -41");                  //  shift added when sending
    CHECK_STR (s_render ("{ENTER}", &code), "+ff0d -ff0d");
    CHECK_STR (s_render ("~", &code), "+ff0d -ff0d");
    CHECK_STR (s_render ("{TAB 3}", &code), "+ff09 -ff09 +ff09 -ff09 +ff09 -ff09");
    CHECK_STR (s_render ("{VK_F5}{F12}", &code), "+ffc2 -ffc2 +ffc9 -ffc9");
    CHECK_STR (s_render ("{+}{%}{^}{{}{}}{~}", &code), "+2b -2b +25 -25 +5e -5e +7b -7b +7d -7d +7e -7e");
    CHECK_STR (s_render ("{VK_SHIFT down}x{VK_SHIFT up}", &code), "+ffe1 +78 -78 -ffe1");
    CHECK_STR (s_render ("é", &code), "+e9 -e9");
    CHECK_STR (s_render ("€", &code), "+10020ac -10020ac");
    CHECK_STR (s_render ("a b", &code), "+61 -61 +20 -20 +62 -62");    //  spaces are typed
    CHECK_STR (s_render ("", &code), "");
}

UFO_TEST (test_modifiers)
{
    int code;
    CHECK_STR (s_render ("^a", &code), "+ffe3 +61 -61 -ffe3");
    CHECK_STR (s_render ("%f", &code), "+ffe9 +66 -66 -ffe9");
    CHECK_STR (s_render ("+{TAB}", &code), "+ffe1 +ff09 -ff09 -ffe1");
    CHECK_STR (s_render ("^+s", &code), "+ffe3 +ffe1 +73 -73 -ffe1 -ffe3");
    CHECK_STR (s_render ("#r", &code), "+ffeb +72 -72 -ffeb");
    //  a group holds the modifier over several keys
    CHECK_STR (s_render ("+(ab)c", &code), "+ffe1 +61 -61 +62 -62 -ffe1 +63 -63");
    CHECK_STR (s_render ("^", &code), "+ffe3 -ffe3");
}

UFO_TEST (test_errors)
{
    int code;
    CHECK (s_render ("{NOPE}", &code) == NULL);
    CHECK_INT (code, UFO_E_SYNTAX);
    CHECK (s_render ("{ENTER", &code) == NULL);
    CHECK (s_render ("{}", &code) == NULL);
    CHECK (s_render ("{TAB 99999}", &code) == NULL);
    CHECK (s_render ("{TAB x}", &code) == NULL);
    CHECK (s_render ("(a(b))", &code) == NULL);
    CHECK (s_render ("a)", &code) == NULL);
    CHECK (s_render ("+(ab", &code) == NULL);
    CHECK (s_render ("\xff", &code) == NULL);
    CHECK_INT (code, UFO_E_UTF8);
    CHECK (s_render ("{TAB 1000}{TAB 1000}{TAB 1000}{TAB 1000}{TAB 1000}{TAB 1000}{TAB 1000}"
                     "{TAB 1000}{TAB 1000}{TAB 1000}{TAB 1000}", &code) == NULL);
    CHECK_INT (code, UFO_E_TOO_LARGE);
}

//  Appends to found every key string a prompt file shows: `...` spans on lines about keys
//  and the values of "keys": "..." in JSON examples.
static void
s_prompt_keys (const char *path, ufo_value_t *found)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    char line [8192];
    while (fgets (line, sizeof line, f)) {
        bool about_keys = strstr (line, "keyboard_input") || strstr (line, "\"keys\"");
        for (char *p = line; about_keys && (p = strchr (p, '`')); ) {
            char *end = strchr (p + 1, '`');
            if (!end)
                break;
            ufo_value_t *s = ufo_value_new_stringn (p + 1, (size_t) (end - p - 1));
            ufo_value_list_push (found, &s);
            p = end + 1;
        }
        for (char *p = line; (p = strstr (p, "\"keys\": \"")); ) {
            p += 8;
            ufo_error_t err = { 0 };
            char *end = p + 1;
            while (*end && *end != '"')
                end += *end == '\\' && end [1] ? 2 : 1;
            ufo_value_t *s = ufo_json_parse (p, (size_t) (end + 1 - p), NULL, &err);
            if (ufo_value_type (s) == UFO_TSTRING)
                ufo_value_list_push (found, &s);
            else
                ufo_value_destroy (&s);
            p = end;
        }
    }
    fclose (f);
}

//  Every key string in prompts/ is one the parser reads; the prompts teach the escaping.
UFO_TEST (test_prompt_keys)
{
    const char *src = getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : "..";
    ufo_value_t *found = ufo_value_new_list ();
    //  every template of every agent (prompts/<agent>/<name>.tmpl)
    char root [1024];
    snprintf (root, sizeof root, "%s/prompts", src);
    DIR *top = opendir (root);
    REQUIRE (top);
    int files = 0;
    for (struct dirent *d; (d = readdir (top)); ) {
        if (d->d_name [0] == '.')
            continue;
        char sub [2048];
        snprintf (sub, sizeof sub, "%s/%s", root, d->d_name);
        DIR *dir = opendir (sub);
        for (struct dirent *e; dir && (e = readdir (dir)); ) {
            size_t len = strlen (e->d_name);
            if (len < 6 || strcmp (e->d_name + len - 5, ".tmpl"))
                continue;
            char path [4096];
            snprintf (path, sizeof path, "%s/%s", sub, e->d_name);
            files++;
            s_prompt_keys (path, found);
            FILE *f = fopen (path, "r");
            static char text [262144];
            size_t n = f ? fread (text, 1, sizeof text - 1, f) : 0;
            text [n] = 0;
            if (f)
                fclose (f);
            CHECK (!strstr (text, "{CTRL}"));       //  not our syntax: "^s"
        }
        if (dir)
            closedir (dir);
    }
    closedir (top);
    CHECK (files >= 10);
    CHECK (ufo_value_size (found) >= 20);          //  the prompt shows the syntax
    for (size_t i = 0; i < ufo_value_size (found); i++) {
        const char *keys = ufo_value_str (ufo_value_list_at (found, i));
        ufo_error_t err = { 0 };
        ufo_value_t *events = ufo_desktop_keys_parse (keys, &err);
        if (!events)
            fprintf (stderr, "prompt keys '%s': %s\n", keys, err.message);
        CHECK (events != NULL);
        ufo_value_destroy (&events);
    }
    ufo_value_destroy (&found);
    //  the escaping the prompt teaches types the characters themselves
    int code;
    const char *sum = s_render ("=SUM{(}A1:A3{)}", &code);
    CHECK (sum && strstr (sum, "+28 -28") && strstr (sum, "+29 -29"));
    CHECK (s_render ("^s", &code) && strstr (s_render ("^s", &code), "+ffe3 +73 -73 -ffe3"));
}

//  A syntax error quotes the part it could not read and states the escaping rule.
UFO_TEST (test_error_messages)
{
    ufo_error_t err = { 0 };
    CHECK (ufo_desktop_keys_parse ("{CTRL}s", &err) == NULL);
    CHECK_CONTAINS (err.message, "\"{CTRL}\"");
    CHECK_CONTAINS (err.message, "^s");
    CHECK_CONTAINS (err.message, "{(}");
    CHECK (ufo_desktop_keys_parse ("=SUM(A1:A3", &err) == NULL);
    CHECK_CONTAINS (err.message, "=SUM(A1:A3");
    CHECK (ufo_desktop_keys_parse ("x{ENTER", &err) == NULL);
    CHECK_CONTAINS (err.message, "\"{ENTER\"");
    CHECK (ufo_desktop_keys_parse ("ab)c", &err) == NULL);
    CHECK_CONTAINS (err.message, "\")c\"");
    CHECK (ufo_desktop_keys_parse ("{TAB x}", &err) == NULL);
    CHECK_CONTAINS (err.message, "{TAB x}");
}

//  The text a key sequence types last (awaited in text-changed events after keyboard_input).
static char *
s_tail (const char *keys)
{
    ufo_error_t err = { 0 };
    ufo_value_t *list = ufo_desktop_keys_parse (keys, &err);
    char *tail = list ? ufo_desktop_keys_tail_ (list) : NULL;
    ufo_value_destroy (&list);
    return tail;
}

static void
s_insert (ufo_desktop_t *desk, const char *text)
{
    GVariant *params = g_variant_ref_sink (g_variant_new ("(siiv@a{sv})", "insert", 0,
        (gint32) strlen (text), g_variant_new_string (text), g_variant_new ("a{sv}", NULL)));
    ufo_desktop_inserted_ (desk, params);
    g_variant_unref (params);
}

UFO_TEST (test_typed_tail)
{
    struct { const char *keys, *tail; } cases [] = {
        { "Quarterly report{ENTER}Sales grew by ten percent.", "Sales grew by ten percent." },
        { " strongly", " strongly" },
        { "^{HOME}+^{RIGHT}", "" },             //  no characters typed
        { "hello~", "" },                       //  Enter last: nothing after it
        { "ab^cd", "d" },                       //  Ctrl+C is not a character
        { "+ab", "Ab" },                        //  Shift+a types A
        { "x+1y", "y" },                        //  Shift+1: depends on the keyboard map
        { "%fo", "o" },                         //  Alt+F
        { "=SUM{(}A1:A3{)}", "=SUM(A1:A3)" },
        { "0123456789abcdefghijklmnopqrstuvwxyzXYZ", "789abcdefghijklmnopqrstuvwxyzXYZ" },
        { "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
          "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *tail = s_tail (cases [i].keys);
        if (cases [i].tail)
            CHECK_STR (tail ? tail : "(null)", cases [i].tail);
        else                            //  34 bytes of 2-byte characters: 16 whole ones kept
            CHECK (tail && strlen (tail) == 32 && g_utf8_validate (tail, -1, NULL));
        free (tail);
    }
    //  the typed text arriving in pieces, among other applications' text
    ufo_desktop_t desk;
    memset (&desk, 0, sizeof desk);
    s_insert (&desk, "earlier");
    uint64_t mark = desk.inserted_total;
    CHECK (!ufo_desktop_inserted_since_ (&desk, mark, " strongly"));
    s_insert (&desk, " stro");
    CHECK (!ufo_desktop_inserted_since_ (&desk, mark, " strongly"));
    s_insert (&desk, "ngly");
    CHECK (ufo_desktop_inserted_since_ (&desk, mark, " strongly"));
    //  text inserted before the mark does not count
    mark = desk.inserted_total;
    CHECK (!ufo_desktop_inserted_since_ (&desk, mark, "ngly"));
    //  more than is kept: the latest text still counts, the oldest is dropped
    char big [2000];
    memset (big, 'q', sizeof big - 1);
    big [sizeof big - 1] = '\0';
    s_insert (&desk, big);
    s_insert (&desk, "tail end");
    CHECK (ufo_desktop_inserted_since_ (&desk, mark, "tail end"));
    CHECK (desk.inserted_len < sizeof desk.inserted);
    CHECK (!ufo_desktop_inserted_since_ (&desk, 0, "stro"));
}

int
main (void)
{
    UFO_RUN (test_plain_and_special);
    UFO_RUN (test_modifiers);
    UFO_RUN (test_errors);
    UFO_RUN (test_prompt_keys);
    UFO_RUN (test_error_messages);
    UFO_RUN (test_typed_tail);
    return UFO_TEST_END ();
}
