/*  ufo_desktop_image.c - screenshots (X11, Composite for covered windows), annotation
    with numbered boxes (cairo), and PNG encoding (libpng). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"
#include <cairo.h>
#include <png.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <X11/extensions/XShm.h>

#define S_MAX_SIDE 16384

struct _ufo_image_t {
    int width, height;
    int ox, oy;                 //  screen position of pixel (0, 0)
    int stride;                 //  bytes per row
    uint32_t *px;               //  0x00RRGGBB per pixel (cairo RGB24)
};

static ufo_image_t *
s_image_new (int width, int height, int ox, int oy)
{
    if (width <= 0 || height <= 0 || width > S_MAX_SIDE || height > S_MAX_SIDE)
        return NULL;
    ufo_image_t *self = ufo_calloc (1, sizeof (*self));
    self->width = width;
    self->height = height;
    self->ox = ox;
    self->oy = oy;
    self->stride = cairo_format_stride_for_width (CAIRO_FORMAT_RGB24, width);
    self->px = ufo_calloc ((size_t) self->stride / 4 * (size_t) height, 4);
    return self;
}

void
ufo_image_destroy (ufo_image_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->px);
    free (*self_p);
    *self_p = NULL;
}

int ufo_image_width (const ufo_image_t *self) { return self ? self->width : 0; }
int ufo_image_height (const ufo_image_t *self) { return self ? self->height : 0; }
int ufo_image_origin_x (const ufo_image_t *self) { return self ? self->ox : 0; }
int ufo_image_origin_y (const ufo_image_t *self) { return self ? self->oy : 0; }

uint32_t
ufo_image_pixel (const ufo_image_t *self, int x, int y)
{
    if (!self || x < 0 || y < 0 || x >= self->width || y >= self->height)
        return 0;
    return self->px [(size_t) y * (size_t) (self->stride / 4) + (size_t) x] & 0xFFFFFF;
}

static ufo_image_t *
s_image_dup (const ufo_image_t *src)
{
    ufo_image_t *copy = s_image_new (src->width, src->height, src->ox, src->oy);
    memcpy (copy->px, src->px, (size_t) src->stride * (size_t) src->height);
    return copy;
}

//  The captures' shared memory segment (MIT-SHM): the X server writes the pixels straight
//  into our memory instead of sending them through the socket. Made and attached once, grown
//  when a capture needs more, detached at destroy: a segment per capture cost a query, an
//  attach and a detach round trip and fresh pages on both sides, more than a small window's
//  pixels.
typedef struct {
    XShmSegmentInfo info;
    size_t size;
} s_shm_t;

void
ufo_desktop_shm_free_ (ufo_desktop_t *desk)
{
    s_shm_t *shm = desk->shm;
    if (!shm)
        return;
    if (!desk->x_dead) {
        XShmDetach (desk->dpy, &shm->info);
        XSync (desk->dpy, False);
    }
    shmdt (shm->info.shmaddr);
    free (shm);
    desk->shm = NULL;
}

//  A segment of at least size bytes attached to the server, or NULL (no MIT-SHM).
static s_shm_t *
s_shm_segment (ufo_desktop_t *desk, size_t size)
{
    if (desk->shm_off)
        return NULL;
    if (desk->shm && ((s_shm_t *) desk->shm)->size >= size)
        return desk->shm;
    int major, minor;
    Bool pixmaps;
    if (!desk->shm && !XShmQueryVersion (desk->dpy, &major, &minor, &pixmaps)) {
        desk->shm_off = true;
        return NULL;
    }
    ufo_desktop_shm_free_ (desk);
    size = (size + 0xFFFFF) & ~(size_t) 0xFFFFF;        //  whole MB: fewer regrowths
    s_shm_t *shm = ufo_calloc (1, sizeof (*shm));
    shm->size = size;
    shm->info.shmid = shmget (IPC_PRIVATE, size, IPC_CREAT | 0600);
    if (shm->info.shmid < 0) {
        free (shm);
        return NULL;
    }
    shm->info.shmaddr = shmat (shm->info.shmid, NULL, 0);
    shmctl (shm->info.shmid, IPC_RMID, NULL);       //  freed once both sides detach
    if (shm->info.shmaddr == (char *) -1) {
        free (shm);
        return NULL;
    }
    shm->info.readOnly = False;
    ufo_desktop_x_trap_begin_ (desk);
    Status attached = XShmAttach (desk->dpy, &shm->info);
    if (ufo_desktop_x_trap_end_ (desk) || !attached) {
        shmdt (shm->info.shmaddr);      //  a display on another machine: never again
        free (shm);
        desk->shm_off = true;
        return NULL;
    }
    desk->shm = shm;
    return shm;
}

//  Reads the pixels of d into the shared segment; NULL if that is not possible. The image's
//  data is the segment's: release it with s_shm_release.
static XImage *
s_shm_get (ufo_desktop_t *desk, Drawable d, int width, int height)
{
    if (desk->shm_off)
        return NULL;
    Visual *visual = DefaultVisual (desk->dpy, DefaultScreen (desk->dpy));
    int depth = DefaultDepth (desk->dpy, DefaultScreen (desk->dpy));
    const ufo_dxwin_info_t *known = d != desk->root_win ? ufo_desktop_xwin_peek_ (desk, (int64_t) d, 0)
                                                         : NULL;
    if (known) {                //  a top-level window: its visual is known
        visual = known->attr->visual;
        depth = known->attr->depth;
    }
    else if (d != desk->root_win) {
        XWindowAttributes attr;
        ufo_desktop_x_trap_begin_ (desk);
        Status ok = XGetWindowAttributes (desk->dpy, d, &attr);
        if (ufo_desktop_x_trap_end_ (desk) || !ok)
            return NULL;
        visual = attr.visual;
        depth = attr.depth;
    }
    XShmSegmentInfo probe = { 0 };
    XImage *xi = XShmCreateImage (desk->dpy, visual, (unsigned) depth, ZPixmap, NULL, &probe,
                                  (unsigned) width, (unsigned) height);
    if (!xi)
        return NULL;
    s_shm_t *shm = s_shm_segment (desk, (size_t) xi->bytes_per_line * (size_t) height);
    if (!shm) {
        XDestroyImage (xi);
        return NULL;
    }
    xi->obdata = (char *) &shm->info;       //  the image reads into the kept segment
    xi->data = shm->info.shmaddr;
    ufo_desktop_x_trap_begin_ (desk);
    Status got = XShmGetImage (desk->dpy, d, xi, 0, 0, AllPlanes);
    if (ufo_desktop_x_trap_end_ (desk) || !got) {
        xi->data = NULL;
        XDestroyImage (xi);
        return NULL;
    }
    return xi;
}

static void
s_shm_release (XImage *xi)
{
    xi->data = NULL;                        //  the segment stays attached
    XDestroyImage (xi);
}

static ufo_image_t *
s_capture (ufo_desktop_t *desk, Drawable d, int width, int height, int ox, int oy,
           ufo_error_t *err)
{
    XImage *xi = s_shm_get (desk, d, width, height);
    bool shm = xi != NULL;
    if (!xi) {
        ufo_desktop_x_trap_begin_ (desk);
        xi = XGetImage (desk->dpy, d, 0, 0, (unsigned) width, (unsigned) height, AllPlanes,
                        ZPixmap);
        if (ufo_desktop_x_trap_end_ (desk) || !xi) {
            if (xi)
                XDestroyImage (xi);
            ufo_error_set (err, UFO_E_IO, "cannot read the pixels of drawable 0x%lx",
                           (unsigned long) d);
            return NULL;
        }
    }
    ufo_image_t *self = s_image_new (width, height, ox, oy);
    if (!self) {
        if (shm)
            s_shm_release (xi);
        else
            XDestroyImage (xi);
        ufo_error_set (err, UFO_E_RANGE, "image size %dx%d out of range", width, height);
        return NULL;
    }
    bool direct = xi->bits_per_pixel == 32 && xi->red_mask == 0xFF0000
               && xi->green_mask == 0xFF00 && xi->blue_mask == 0xFF
               && xi->byte_order == LSBFirst;
    for (int y = 0; y < height; y++) {
        uint32_t *row = self->px + (size_t) y * (size_t) (self->stride / 4);
        if (direct)
            memcpy (row, xi->data + (size_t) y * (size_t) xi->bytes_per_line, (size_t) width * 4);
        else
            for (int x = 0; x < width; x++)
                row [x] = (uint32_t) XGetPixel (xi, x, y) & 0xFFFFFF;
    }
    if (shm)
        s_shm_release (xi);
    else
        XDestroyImage (xi);
    return self;
}

//  Popup menus, drop-downs and tooltips are override-redirect windows of their own: paste
//  those stacked above the window and overlapping it, so the capture shows what the user sees
//  of the application (but not the other applications' windows that may cover it).
static void
s_paste_popups (ufo_desktop_t *self, ufo_image_t *img, Window win)
{
    Window top = ufo_desktop_xwin_toplevel_ (self, win);
    unsigned int n = 0;
    //  the root's children as X events keep them (ufo_desktop_xwin.c), bottom to top
    Window *stack = NULL;
    n = (unsigned int) ufo_desktop_xwin_stack_ (self, &stack);
    bool above = false;
    for (unsigned int i = 0; i < n; i++) {          //  bottom to top
        if (stack [i] == top) {
            above = true;
            continue;
        }
        if (!above)
            continue;
        const ufo_dxwin_info_t *known = ufo_desktop_xwin_peek_ (self, (int64_t) stack [i], 0);
        if (!known)
            continue;           //  gone meanwhile
        XWindowAttributes attr = *known->attr;
        if (!known->viewable || !attr.override_redirect || attr.class != InputOutput)
            continue;
        int px = attr.x - img->ox, py = attr.y - img->oy;
        if (px >= img->width || py >= img->height || px + attr.width <= 0
        ||  py + attr.height <= 0)
            continue;
        ufo_image_t *pop = s_capture (self, stack [i], attr.width, attr.height, attr.x, attr.y,
                                      NULL);
        if (!pop)
            continue;
        for (int y = 0; y < pop->height; y++) {
            int ty = py + y;
            if (ty < 0 || ty >= img->height)
                continue;
            int x0 = px < 0 ? -px : 0;
            int x1 = px + pop->width > img->width ? img->width - px : pop->width;
            if (x1 > x0)
                memcpy (img->px + (size_t) ty * (size_t) (img->stride / 4) + (size_t) (px + x0),
                        pop->px + (size_t) y * (size_t) (pop->stride / 4) + (size_t) x0,
                        (size_t) (x1 - x0) * 4);
        }
        ufo_image_destroy (&pop);
    }
    free (stack);
}

ufo_image_t *
ufo_desktop_capture_window (ufo_desktop_t *self, int64_t xid, ufo_error_t *err)
{
    assert (self);
    int x, y, w, h;
    if (!ufo_desktop_x_window_info_ (self, xid, &x, &y, &w, &h, NULL, NULL)) {
        ufo_error_set (err, UFO_E_NOT_FOUND, "window %" PRId64 " does not exist", xid);
        return NULL;
    }
    if (self->composite) {          //  the window's own buffer, whatever covers it
        ufo_image_t *img = s_capture (self, (Drawable) xid, w, h, x, y, err);
        if (img)
            s_paste_popups (self, img, (Window) xid);
        return img;
    }
    //  without Composite: what is on screen at the window's place
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > self->screen_w ? self->screen_w : x + w;
    int y1 = y + h > self->screen_h ? self->screen_h : y + h;
    if (x1 <= x0 || y1 <= y0) {
        ufo_error_set (err, UFO_E_RANGE, "window %" PRId64 " is off screen", xid);
        return NULL;
    }
    ufo_image_t *img = s_capture (self, self->root_win, self->screen_w, self->screen_h, 0, 0, err);
    if (!img)
        return NULL;
    ufo_image_t *crop = s_image_new (x1 - x0, y1 - y0, x0, y0);
    for (int row = 0; row < y1 - y0; row++)
        memcpy (crop->px + (size_t) row * (size_t) (crop->stride / 4),
                img->px + (size_t) (row + y0) * (size_t) (img->stride / 4) + (size_t) x0,
                (size_t) (x1 - x0) * 4);
    ufo_image_destroy (&img);
    return crop;
}

ufo_image_t *
ufo_desktop_capture_screen (ufo_desktop_t *self, ufo_error_t *err)
{
    assert (self);
    if (self->x_dead) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "the X display is gone");
        return NULL;
    }
    return s_capture (self, self->root_win, self->screen_w, self->screen_h, 0, 0, err);
}

//  --- drawing -------------------------------------------------------------------------------

static const struct { const char *type; uint32_t rgb; } s_colors [] = {
    { "Button", 0xE6194B }, { "Edit", 0x3CB44B }, { "TabItem", 0x4363D8 },
    { "Document", 0xF58231 }, { "ListItem", 0x911EB4 }, { "MenuItem", 0x42D4F4 },
    { "ScrollBar", 0xF032E6 }, { "TreeItem", 0xBFEF45 }, { "Hyperlink", 0x469990 },
    { "ComboBox", 0x9A6324 }, { "RadioButton", 0x800000 }, { "Spinner", 0x808000 },
    { "CheckBox", 0x000075 }, { "Group", 0xA9A9A9 }, { "Text", 0xFFD700 },
    { "List", 0xAAFFC3 },
};

static uint32_t
s_color (const char *type)
{
    for (size_t i = 0; type && i < UFO_ARRAY_SIZE (s_colors); i++)
        if (streq (type, s_colors [i].type))
            return s_colors [i].rgb;
    return 0xFF00FF;
}

static cairo_surface_t *
s_surface (ufo_image_t *img)
{
    return cairo_image_surface_create_for_data ((unsigned char *) img->px, CAIRO_FORMAT_RGB24,
                                                img->width, img->height, img->stride);
}

static void
s_rgb (cairo_t *cr, uint32_t rgb)
{
    cairo_set_source_rgb (cr, ((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0,
                          (rgb & 0xFF) / 255.0);
}

//  A control's rectangle in image coordinates, clipped; false if outside the image.
static bool
s_box (const ufo_image_t *img, const ufo_value_t *control, int box [4])
{
    const ufo_value_t *r = ufo_value_map_get (control, "control_rect");
    if (ufo_value_type (r) != UFO_TLIST || ufo_value_size (r) != 4)
        return false;
    int64_t v [4];
    for (int i = 0; i < 4; i++) {
        v [i] = ufo_value_int (ufo_value_list_at (r, (size_t) i));
        if (v [i] < -S_MAX_SIDE * 4 || v [i] > S_MAX_SIDE * 4)
            return false;
    }
    int x0 = (int) v [0] - img->ox, y0 = (int) v [1] - img->oy;
    int x1 = (int) v [2] - img->ox, y1 = (int) v [3] - img->oy;
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > img->width) x1 = img->width;
    if (y1 > img->height) y1 = img->height;
    if (x1 - x0 < 2 || y1 - y0 < 2)
        return false;
    box [0] = x0;
    box [1] = y0;
    box [2] = x1 - x0;
    box [3] = y1 - y0;
    return true;
}

ufo_image_t *
ufo_image_annotate (const ufo_image_t *self, const ufo_value_t *controls, ufo_value_t **marks_p)
{
    assert (self);
    ufo_image_t *out = s_image_dup (self);
    ufo_value_t *marks = ufo_value_new_list ();
    cairo_surface_t *surface = s_surface (out);
    cairo_t *cr = cairo_create (surface);
    cairo_select_font_face (cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size (cr, 11);
    cairo_set_line_width (cr, 2);
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        int box [4];
        if (!s_box (out, c, box))
            continue;
        const char *type = ufo_value_map_str (c, "control_type", "");
        const char *label = ufo_value_map_str (c, "label", "?");
        uint32_t rgb = s_color (type);
        s_rgb (cr, rgb);
        cairo_rectangle (cr, box [0] + 1, box [1] + 1, box [2] - 2, box [3] - 2);
        cairo_stroke (cr);
        //  the number on a tag of the same colour at the top-left corner
        cairo_text_extents_t ext;
        cairo_text_extents (cr, label, &ext);
        double tw = ext.x_advance + 4, th = 13;
        cairo_rectangle (cr, box [0], box [1], tw, th);
        cairo_fill (cr);
        uint32_t lum = ((rgb >> 16) & 0xFF) * 3 + ((rgb >> 8) & 0xFF) * 6 + (rgb & 0xFF);
        s_rgb (cr, lum > 1200 ? 0x000000 : 0xFFFFFF);
        cairo_move_to (cr, box [0] + 2, box [1] + 10.5);
        cairo_show_text (cr, label);
        ufo_value_t *mark = ufo_value_new_map ();
        ufo_value_map_set_str (mark, "label", label);
        ufo_value_map_set_str (mark, "control_type", type);
        ufo_value_t *b = ufo_value_new_list ();
        for (int k = 0; k < 4; k++)
            ufo_value_list_push_int (b, box [k]);
        ufo_value_map_set (mark, "box", &b);
        ufo_value_map_set_int (mark, "color", rgb);
        ufo_value_list_push (marks, &mark);
    }
    cairo_destroy (cr);
    cairo_surface_flush (surface);
    cairo_surface_destroy (surface);
    if (marks_p)
        *marks_p = marks;
    else
        ufo_value_destroy (&marks);
    return out;
}

ufo_image_t *
ufo_image_highlight (const ufo_image_t *self, const ufo_value_t *control)
{
    assert (self);
    ufo_image_t *out = s_image_dup (self);
    int box [4];
    if (!s_box (out, control, box))
        return out;
    cairo_surface_t *surface = s_surface (out);
    cairo_t *cr = cairo_create (surface);
    cairo_set_line_width (cr, 3);
    s_rgb (cr, 0xFF0000);
    cairo_rectangle (cr, box [0] + 1.5, box [1] + 1.5, box [2] - 3, box [3] - 3);
    cairo_stroke (cr);
    cairo_destroy (cr);
    cairo_surface_flush (surface);
    cairo_surface_destroy (surface);
    return out;
}

ufo_image_t *
ufo_image_concat (const ufo_image_t *a, const ufo_image_t *b)
{
    assert (a && b);
    int h = a->height > b->height ? a->height : b->height;
    ufo_image_t *out = s_image_new (a->width + b->width, h, a->ox, a->oy);
    if (!out)
        return NULL;
    for (int y = 0; y < h; y++) {
        uint32_t *row = out->px + (size_t) y * (size_t) (out->stride / 4);
        if (y < a->height)
            memcpy (row, a->px + (size_t) y * (size_t) (a->stride / 4), (size_t) a->width * 4);
        if (y < b->height)
            memcpy (row + a->width, b->px + (size_t) y * (size_t) (b->stride / 4),
                    (size_t) b->width * 4);
    }
    return out;
}

//  --- PNG ---------------------------------------------------------------------------------

static void
s_png_write (png_structp png, png_bytep data, png_size_t len)
{
    ufo_buf_append (png_get_io_ptr (png), data, len);
}

static void
s_png_flush (png_structp png)
{
    UFO_UNUSED (png);
}

int
ufo_image_encode_png (const ufo_image_t *self, int level, void **data_p, size_t *size_p,
                      ufo_error_t *err)
{
    assert (self && data_p && size_p);
    if (level < 0 || level > 9)
        return ufo_error_set (err, UFO_E_RANGE, "PNG compression level %d is not 0..9", level);
    png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct (png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct (&png, NULL);
        return ufo_error_set (err, UFO_E_INTERNAL, "libpng: out of memory");
    }
    ufo_buf_t buf = { 0 };
    if (setjmp (png_jmpbuf (png))) {
        png_destroy_write_struct (&png, &info);
        ufo_buf_free (&buf);
        return ufo_error_set (err, UFO_E_INTERNAL, "libpng failed to encode");
    }
    png_set_write_fn (png, &buf, s_png_write, s_png_flush);
    png_set_IHDR (png, info, (png_uint_32) self->width, (png_uint_32) self->height, 8,
                  PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                  PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level (png, level);
    //  GUI screenshots (flat colours) need no filter: at fast levels, unfiltered rows encode
    //  ~25% faster than SUB and come out smaller (measured on 1280x1024 desktops)
    if (level <= 3)
        png_set_filter (png, 0, PNG_FILTER_NONE);
    png_write_info (png, info);
    png_set_bgr (png);                          //  memory order B G R X (little-endian)
    png_set_filler (png, 0, PNG_FILLER_AFTER);  //  drop X
    for (int y = 0; y < self->height; y++)
        png_write_row (png, (png_const_bytep) (self->px + (size_t) y * (size_t) (self->stride / 4)));
    png_write_end (png, NULL);
    png_destroy_write_struct (&png, &info);
    *data_p = ufo_buf_detach (&buf, size_p);
    return 0;
}

int
ufo_image_save_png (const ufo_image_t *self, const char *path, int level, ufo_error_t *err)
{
    assert (self && path);
    void *data = NULL;
    size_t size = 0;
    if (ufo_image_encode_png (self, level, &data, &size, err) != 0)
        return -1;
    char *tmp = g_strdup_printf ("%s.tmp.%d", path, (int) getpid ());
    FILE *f = fopen (tmp, "wb");
    bool ok = f && fwrite (data, 1, size, f) == size;
    if (f && fclose (f) != 0)
        ok = false;
    free (data);
    if (!ok || rename (tmp, path) != 0) {
        int e = errno;
        unlink (tmp);
        g_free (tmp);
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", path, strerror (e));
    }
    g_free (tmp);
    return 0;
}
