/*  test_desktop_keys.c - the pywinauto key syntax of keyboard_input (no display needed). */
#include "ufo_test.h"
#include "ufo.h"

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

int
main (void)
{
    UFO_RUN (test_plain_and_special);
    UFO_RUN (test_modifiers);
    UFO_RUN (test_errors);
    return UFO_TEST_END ();
}
