/*  test_desktop_images.c - screenshots, annotation, PNG, and capture of a covered window,
    with real applications on a private virtual display. */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "desktop_fixture.h"

#define WAIT_MS 60000

static int
s_distinct_colors (const ufo_image_t *img)
{
    uint32_t seen [64];
    int n = 0;
    for (int y = 0; y < ufo_image_height (img) && n < 64; y += 3)
        for (int x = 0; x < ufo_image_width (img) && n < 64; x += 3) {
            uint32_t p = ufo_image_pixel (img, x, y);
            int k = 0;
            while (k < n && seen [k] != p)
                k++;
            if (k == n)
                seen [n++] = p;
        }
    return n;
}

//  Fraction of pixels equal between a region of a window capture and the screen capture.
static double
s_same_fraction (const ufo_image_t *win, const ufo_image_t *screen, int w, int h)
{
    long same = 0, total = 0;
    for (int y = 0; y < h; y += 2)
        for (int x = 0; x < w; x += 2) {
            total++;
            same += ufo_image_pixel (win, x, y)
                 == ufo_image_pixel (screen, x + ufo_image_origin_x (win),
                                     y + ufo_image_origin_y (win));
        }
    return total ? (double) same / (double) total : 0;
}

static uint32_t
s_be32 (const unsigned char *p)
{
    return (uint32_t) p [0] << 24 | (uint32_t) p [1] << 16 | (uint32_t) p [2] << 8 | p [3];
}

UFO_TEST (test_screenshots_annotation_and_covered_window)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_value_t *opts = ufo_json_parse_str (
        "{\"launchers\": {\"mousepad\": [\"mousepad\"], \"calculator\": [\"gnome-calculator\"]}}",
        NULL);
    ufo_desktop_t *desk = ufo_desktop_new (opts, NULL);
    ufo_value_destroy (&opts);
    REQUIRE (desk);
    int mpid = ufo_desktop_launch (desk, "mousepad", NULL);
    int cpid = ufo_desktop_launch (desk, "calculator", NULL);
    REQUIRE (mpid > 0 && cpid > 0);
    int64_t mxid = dfx_wait_window (desk, mpid, "Mousepad", WAIT_MS);
    int64_t cxid = dfx_wait_window (desk, cpid, NULL, WAIT_MS);
    REQUIRE (mxid && cxid);
    ufo_value_t *msnap = dfx_wait_control (desk, mxid, "Edit", NULL, WAIT_MS);
    ufo_value_t *csnap = dfx_wait_control (desk, cxid, "Button", "=", WAIT_MS);
    REQUIRE (msnap && csnap);
    ufo_error_t err = { 0 };

    //  the screen, and a window at its own size with real content
    ufo_image_t *screen = ufo_desktop_capture_screen (desk, &err);
    REQUIRE (screen);
    CHECK_INT (ufo_image_width (screen), 1280);
    CHECK_INT (ufo_image_height (screen), 1024);
    //  The calculator may still resize itself after its first controls appear (seen once
    //  in CI: a window 25 pixels taller than its first snapshot). Capture until the image
    //  and a snapshot taken just after it agree on the size (bounded), then use both.
    ufo_image_t *calc = NULL;
    const ufo_value_t *crect = NULL;
    for (int attempt = 0; attempt < 20; attempt++) {
        ufo_image_destroy (&calc);
        calc = ufo_desktop_capture_window (desk, cxid, &err);
        REQUIRE (calc);
        ufo_value_t *now = dfx_wait_control (desk, cxid, "Button", "=", WAIT_MS);
        REQUIRE (now);
        ufo_value_destroy (&csnap);
        csnap = now;
        crect = ufo_value_map_get (ufo_value_map_get (csnap, "window"), "rect");
        if (ufo_image_width (calc) == ufo_value_int (ufo_value_list_at (crect, 2))
                                      - ufo_value_int (ufo_value_list_at (crect, 0))
        &&  ufo_image_height (calc) == ufo_value_int (ufo_value_list_at (crect, 3))
                                       - ufo_value_int (ufo_value_list_at (crect, 1)))
            break;
        usleep (100000);
    }
    CHECK_INT (ufo_image_width (calc), ufo_value_int (ufo_value_list_at (crect, 2))
                                     - ufo_value_int (ufo_value_list_at (crect, 0)));
    CHECK_INT (ufo_image_height (calc), ufo_value_int (ufo_value_list_at (crect, 3))
                                      - ufo_value_int (ufo_value_list_at (crect, 1)));
    CHECK (s_distinct_colors (calc) >= 4);
    CHECK (ufo_desktop_capture_window (desk, 12345678, &err) == NULL);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);

    //  one mark per offered control, each in its type's colour
    const ufo_value_t *controls = ufo_value_map_get (csnap, "controls");
    ufo_value_t *marks = NULL;
    ufo_image_t *annotated = ufo_image_annotate (calc, controls, &marks);
    REQUIRE (annotated && marks);
    CHECK (ufo_value_size (controls) >= 20);
    CHECK_INT (ufo_value_size (marks), ufo_value_size (controls));
    size_t colored = 0;
    for (size_t i = 0; i < ufo_value_size (marks); i++) {
        const ufo_value_t *m = ufo_value_list_at (marks, i);
        const ufo_value_t *box = ufo_value_map_get (m, "box");
        int x = (int) ufo_value_int (ufo_value_list_at (box, 0));
        int y = (int) ufo_value_int (ufo_value_list_at (box, 1));
        CHECK_STR (ufo_value_map_str (m, "label", ""),
                   ufo_value_map_str (ufo_value_list_at (controls, i), "label", "?"));
        colored += ufo_image_pixel (annotated, x, y + 6)
                == (uint32_t) ufo_value_map_int (m, "color", -1);
    }
    //  later marks may cover earlier tags where controls overlap; most stay visible
    CHECK (colored * 10 >= ufo_value_size (marks) * 8);
    CHECK (s_same_fraction (annotated, calc, ufo_image_width (calc), ufo_image_height (calc)) < 0.995);

    //  PNG: signature and size in the header; a file written atomically
    void *png = NULL;
    size_t png_size = 0;
    REQUIRE (ufo_image_encode_png (annotated, 1, &png, &png_size, &err) == 0);
    CHECK (png_size > 1000 && memcmp (png, "\x89PNG\r\n\x1a\n", 8) == 0);
    CHECK_INT (s_be32 ((unsigned char *) png + 16), ufo_image_width (annotated));
    CHECK_INT (s_be32 ((unsigned char *) png + 20), ufo_image_height (annotated));
    free (png);
    CHECK (ufo_image_encode_png (annotated, 12, &png, &png_size, &err) == -1);
    char path [600];
    snprintf (path, sizeof (path), "%s/annotated.png", getenv ("UFO_DESKTOP_SESSION"));
    CHECK (ufo_image_save_png (annotated, path, 6, &err) == 0);
    CHECK (access (path, R_OK) == 0);
    CHECK (ufo_image_save_png (annotated, "/nonexistent-dir/x.png", 1, &err) == -1);

    //  concat side by side, highlight of the selected control
    ufo_image_t *both = ufo_image_concat (calc, annotated);
    CHECK_INT (ufo_image_width (both), 2 * ufo_image_width (calc));
    CHECK_INT (ufo_image_pixel (both, ufo_image_width (calc) + 5, 7), ufo_image_pixel (annotated, 5, 7));
    const ufo_value_t *first = ufo_value_list_at (controls, 0);
    ufo_image_t *hl = ufo_image_highlight (calc, first);
    const ufo_value_t *fr = ufo_value_map_get (first, "control_rect");
    CHECK_INT (ufo_image_pixel (hl, (int) ufo_value_int (ufo_value_list_at (fr, 0))
                                    - ufo_image_origin_x (calc) + 1,
                               (int) (ufo_value_int (ufo_value_list_at (fr, 1))
                                    + ufo_value_int (ufo_value_list_at (fr, 3))) / 2
                                    - ufo_image_origin_y (calc)), 0xFF0000);

    //  covered window: put the calculator on top of mousepad, capture mousepad anyway
    REQUIRE (ufo_desktop_focus (desk, cxid, &err) == 0);
    ufo_value_t *wins = ufo_desktop_windows (desk, &err);
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        CHECK (ufo_value_map_bool (w, "active", false) == (ufo_value_map_int (w, "xid", 0) == cxid));
    }
    CHECK_INT (ufo_value_size (wins), 2);
    ufo_value_destroy (&wins);
    ufo_image_t *mp = ufo_desktop_capture_window (desk, mxid, &err);
    REQUIRE (mp);
    int ow = ufo_image_width (calc) < ufo_image_width (mp) ? ufo_image_width (calc) : ufo_image_width (mp);
    int oh = ufo_image_height (calc) < ufo_image_height (mp) ? ufo_image_height (calc) : ufo_image_height (mp);
    //  the screen shows the calculator there, the capture shows mousepad
    double same_calc_on_top = 1;
    int64_t end = ufo_time_mono_ms () + WAIT_MS / 2;
    while (ufo_time_mono_ms () < end) {
        ufo_image_destroy (&screen);
        screen = ufo_desktop_capture_screen (desk, &err);
        same_calc_on_top = s_same_fraction (mp, screen, ow, oh);
        if (s_same_fraction (calc, screen, ow, oh) > 0.9)
            break;
        ufo_desktop_iterate (desk, 50);
    }
    CHECK (s_same_fraction (calc, screen, ow, oh) > 0.9);
    CHECK (same_calc_on_top < 0.6);
    CHECK (s_distinct_colors (mp) >= 4);
    //  once mousepad is raised, the screen matches the earlier capture of the covered window
    REQUIRE (ufo_desktop_focus (desk, mxid, &err) == 0);
    double same = 0;
    end = ufo_time_mono_ms () + WAIT_MS / 2;
    while (ufo_time_mono_ms () < end && same < 0.97) {
        ufo_image_destroy (&screen);
        screen = ufo_desktop_capture_screen (desk, &err);
        same = s_same_fraction (mp, screen, ow, oh);
        if (same < 0.97)
            ufo_desktop_iterate (desk, 50);
    }
    CHECK (same >= 0.97);
    if (same < 0.97)
        fprintf (stderr, "covered capture matches the raised window in only %.3f\n", same);

    //  a popup menu: its items have screen rectangles below the menu bar, and the window
    //  capture shows the popup (a window of its own) over the window
    const char *file = NULL;
    for (size_t i = 0; i < ufo_value_size (ufo_value_map_get (msnap, "controls")); i++) {
        const ufo_value_t *c = ufo_value_list_at (ufo_value_map_get (msnap, "controls"), i);
        if (strcmp (ufo_value_map_str (c, "control_text", ""), "File") == 0)
            file = ufo_value_map_str (c, "label", NULL);
    }
    REQUIRE (file);
    ufo_image_t *before = ufo_desktop_capture_window (desk, mxid, &err);
    ufo_desktop_op_t *op = ufo_desktop_act_begin (desk, mxid, file, "click_input", NULL);
    ufo_value_t *r = ufo_desktop_op_run (desk, &op);
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    ufo_value_t *menu = dfx_wait_control (desk, mxid, "MenuItem", "Quit", WAIT_MS);
    CHECK (menu);
    const ufo_value_t *quit = NULL;
    for (size_t i = 0; menu && i < ufo_value_size (ufo_value_map_get (menu, "controls")); i++) {
        const ufo_value_t *c = ufo_value_list_at (ufo_value_map_get (menu, "controls"), i);
        if (strcmp (ufo_value_map_str (c, "control_text", ""), "Quit") == 0)
            quit = c;
    }
    CHECK (quit);
    if (quit && before) {
        const ufo_value_t *qr = ufo_value_map_get (quit, "control_rect");
        CHECK (ufo_value_int (ufo_value_list_at (qr, 1)) > 20);     //  below the menu bar
        //  the popup is drawn: the menu's rows differ from the bare window there
        ufo_image_t *open = NULL;
        long differ = 0;
        int64_t until = ufo_time_mono_ms () + WAIT_MS / 2;
        while (differ < 50 && ufo_time_mono_ms () < until) {
            ufo_image_destroy (&open);
            open = ufo_desktop_capture_window (desk, mxid, &err);
            differ = 0;         //  over the item's rectangle: its text and the menu frame
            for (int y = (int) ufo_value_int (ufo_value_list_at (qr, 1));
                 y < (int) ufo_value_int (ufo_value_list_at (qr, 3)); y++)
                for (int x = (int) ufo_value_int (ufo_value_list_at (qr, 0));
                     x < (int) ufo_value_int (ufo_value_list_at (qr, 2)); x++)
                    differ += ufo_image_pixel (open, x - ufo_image_origin_x (open),
                                               y - ufo_image_origin_y (open))
                           != ufo_image_pixel (before, x - ufo_image_origin_x (before),
                                               y - ufo_image_origin_y (before));
            if (differ < 50)
                ufo_desktop_iterate (desk, 20);
        }
        CHECK (differ >= 50);
        ufo_image_destroy (&open);
    }
    r = dfx_act (desk, mxid, NULL, "keyboard_input", "{\"keys\": \"{ESC}\"}");
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    ufo_value_destroy (&menu);
    ufo_image_destroy (&before);

    ufo_image_destroy (&mp);
    ufo_image_destroy (&hl);
    ufo_image_destroy (&both);
    ufo_image_destroy (&annotated);
    ufo_value_destroy (&marks);
    ufo_image_destroy (&calc);
    ufo_image_destroy (&screen);
    ufo_value_destroy (&msnap);
    ufo_value_destroy (&csnap);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

int
main (void)
{
    UFO_RUN (test_screenshots_annotation_and_covered_window);
    return UFO_TEST_END ();
}
