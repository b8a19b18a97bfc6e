/*  ufo_board.c - the blackboard: four memories, the original's dict/JSON shape, the prompt
    content parts, and the JSON-lines question loader. See ufo_board.h. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_item.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_memory.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "model_private.h"

#define S_MAX_FILE ((size_t) 256 << 20)     //  bigger question files / images are refused

struct _ufo_board_t {
    ufo_memory_t *mem [UFO_MEM_COUNT];
};

static const char *s_names [UFO_MEM_COUNT] = {
    "questions", "requests", "trajectories", "screenshots"
};

//  Prompt headers of the three text memories (the original's texts_to_prompt prefixes).
static const char *s_headers [3] = {
    "[Questions & Answers:]", "[Request History:]", "[Step Trajectories Completed Previously:]"
};

const char *
ufo_board_memory_name (int which)
{
    return which >= 0 && which < UFO_MEM_COUNT ? s_names [which] : NULL;
}

int
ufo_board_memory_parse (const char *name)
{
    if (name)
        for (int i = 0; i < UFO_MEM_COUNT; i++)
            if (strcmp (name, s_names [i]) == 0)
                return i;
    return -1;
}

ufo_board_t *
ufo_board_new (void)
{
    ufo_board_t *self = (ufo_board_t *) ufo_calloc (1, sizeof (ufo_board_t));
    for (int i = 0; i < UFO_MEM_COUNT; i++)
        self->mem [i] = ufo_memory_new ();
    return self;
}

void
ufo_board_destroy (ufo_board_t **self_p)
{
    assert (self_p);
    ufo_board_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < UFO_MEM_COUNT; i++)
        ufo_memory_destroy (&self->mem [i]);
    free (self);
    *self_p = NULL;
}

ufo_memory_t *
ufo_board_memory (ufo_board_t *self, int which)
{
    assert (self && which >= 0 && which < UFO_MEM_COUNT);
    return self->mem [which];
}

ufo_item_t *
ufo_board_add (ufo_board_t *self, int which, ufo_item_t **item_p)
{
    return ufo_memory_add (ufo_board_memory (self, which), item_p);
}

void
ufo_board_add_text (ufo_board_t *self, int which, const char *text)
{
    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_str (item, "text", text);
    ufo_board_add (self, which, &item);
}

int
ufo_board_add_data_take (ufo_board_t *self, int which, ufo_value_t **data_p, ufo_error_t *err)
{
    assert (self && data_p);
    ufo_memory_t *mem = ufo_board_memory (self, which);
    ufo_value_t *data = *data_p;
    *data_p = NULL;
    int type = data ? (int) ufo_value_type (data) : -1;
    if (type == UFO_TMAP) {
        ufo_item_t *item = ufo_item_from_map_take (&data, NULL);
        ufo_memory_add (mem, &item);
        return 0;
    }
    if (type == UFO_TSTRING) {
        ufo_item_t *item = ufo_item_new ();
        ufo_item_set (item, "text", &data);
        ufo_memory_add (mem, &item);
        return 0;
    }
    ufo_value_destroy (&data);
    return ufo_error_set (err, UFO_E_TYPE, "%s: data must be a map or a string, got %s",
                          s_names [which], type < 0 ? "nothing" : ufo_value_type_name (type));
}

int
ufo_board_add_data (ufo_board_t *self, int which, const ufo_value_t *data, ufo_error_t *err)
{
    assert (self);
    int type = data ? (int) ufo_value_type (data) : -1;
    if (type != UFO_TMAP && type != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "%s: data must be a map or a string, got %s",
                              ufo_board_memory_name (which),
                              type < 0 ? "nothing" : ufo_value_type_name (type));
    //  frozen from the start: ufo_board_to_map then shares it without a walk
    ufo_value_t *copy = ufo_value__dup_frozen (data);
    return ufo_board_add_data_take (self, which, &copy, err);
}

//  --- Images -------------------------------------------------------------------

//  Reads a whole file (at most S_MAX_FILE bytes). Returns 0, or -1 with errno set.
static int
s_read_file (const char *path, ufo_buf_t *out)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    if (fstat (fd, &st) != 0)
        e = errno;
    else
    if (!S_ISREG (st.st_mode))
        e = S_ISDIR (st.st_mode) ? EISDIR : EINVAL;
    if (e) {
        close (fd);
        errno = e;
        return -1;
    }
    if ((size_t) st.st_size > S_MAX_FILE) {
        close (fd);
        errno = EFBIG;
        return -1;
    }
    //  exactly the file's size (+1 to see EOF without growing): a buffer of a size the
    //  allocator has seen before is reused instead of faulting in fresh pages
    if (!out->data) {
        out->cap = (size_t) st.st_size + 2;
        out->data = (char *) ufo_malloc (out->cap);
        out->data [0] = 0;
    }
    for (;;) {
        if (out->cap - out->len < 2)
            ufo_buf_reserve (out, 65536);       //  the file grew while we read it
        ssize_t n = read (fd, out->data + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            e = errno;
            close (fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        out->len += (size_t) n;
        out->data [out->len] = 0;
        if (out->len > S_MAX_FILE) {
            close (fd);
            errno = EFBIG;
            return -1;
        }
    }
    close (fd);
    return 0;
}

const char *
ufo_board_image_mime (const char *path)
{
    if (!path)
        return "image/png";
    const char *slash = strrchr (path, '/');
    const char *dot = strrchr (slash ? slash : path, '.');
    if (!dot)
        return "image/png";
    dot++;
    if (strcasecmp (dot, "png") == 0)
        return "image/png";
    if (strcasecmp (dot, "jpg") == 0 || strcasecmp (dot, "jpeg") == 0)
        return "image/jpeg";
    if (strcasecmp (dot, "gif") == 0)
        return "image/gif";
    if (strcasecmp (dot, "bmp") == 0)
        return "image/bmp";
    if (strcasecmp (dot, "webp") == 0)
        return "image/webp";
    return "image/png";
}

void
ufo_board_add_image (ufo_board_t *self, const char *path, const ufo_value_t *metadata)
{
    assert (self);
    if (!path)
        path = "";
    ufo_buf_t file = {0};
    ufo_buf_t url = {0};
    if (*path && s_read_file (path, &file) == 0) {
        ufo_buf_printf (&url, "data:%s;base64,", ufo_board_image_mime (path));
        ufo_buf_base64 (&url, file.data, file.len);
    }
    else
    if (!*path || errno == ENOENT || errno == ENOTDIR)
        ufo_warn ("Screenshot path %s does not exist.", path);
    else
        ufo_warn ("Screenshot path %s cannot be read: %s", path, strerror (errno));
    ufo_buf_free (&file);

    ufo_item_t *item = ufo_item_new ();
    ufo_item_set_copy (item, "metadata", metadata);
    ufo_item_set_str (item, "image_path", path);
    ufo_value_t *str = ufo_value_new_stringn (url.data ? url.data : "", url.len);
    ufo_item_set (item, "image_str", &str);
    ufo_buf_free (&url);
    ufo_board_add (self, UFO_MEM_SCREENSHOTS, &item);
}

//  --- Dict and JSON shapes ------------------------------------------------------

ufo_value_t *
ufo_board_to_map (ufo_board_t *self)
{
    assert (self);
    ufo_value_t *map = ufo_value_new_map ();
    for (int i = 0; i < UFO_MEM_COUNT; i++) {
        ufo_value_t *list = ufo_memory_to_list (self->mem [i]);
        ufo_value_map_set (map, s_names [i], &list);
    }
    return map;
}

//  Checks the shape ufo_board_from_map accepts. Returns 0 or -1 with err.
static int
s_check_map (const ufo_value_t *map, ufo_error_t *err)
{
    if (!map || ufo_value_type (map) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "blackboard: expected a map, got %s",
                              map ? ufo_value_type_name (ufo_value_type (map)) : "nothing");
    for (int i = 0; i < UFO_MEM_COUNT; i++) {
        const ufo_value_t *list = ufo_value_map_get (map, s_names [i]);
        if (!list)
            continue;
        if (ufo_value_type (list) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_TYPE, "blackboard.%s: expected a list, got %s",
                                  s_names [i], ufo_value_type_name (ufo_value_type (list)));
        size_t n = ufo_value_size (list);
        for (size_t k = 0; k < n; k++) {
            const ufo_value_t *v = ufo_value_list_at (list, k);
            if (ufo_value_type (v) != UFO_TMAP)
                return ufo_error_set (err, UFO_E_TYPE,
                                      "blackboard.%s[%zu]: expected a map, got %s", s_names [i],
                                      k, ufo_value_type_name (ufo_value_type (v)));
        }
    }
    return 0;
}

int
ufo_board_from_map (ufo_board_t *self, const ufo_value_t *map, ufo_error_t *err)
{
    assert (self);
    //  check everything first, so that a bad shape leaves the board unchanged
    if (s_check_map (map, err))
        return -1;
    for (int i = 0; i < UFO_MEM_COUNT; i++) {
        const ufo_value_t *list = ufo_value_map_get (map, s_names [i]);
        if (list) {
            int rc = ufo_memory_from_list (self->mem [i], list, err);
            assert (rc == 0);
            UFO_UNUSED (rc);
        }
        else
            ufo_memory_clear (self->mem [i]);
    }
    return 0;
}

char *
ufo_board_to_json (ufo_board_t *self, size_t *len_p)
{
    assert (self);
    //  one block of the exact size: the same request every time for the same board, so
    //  the allocator can hand the previous result's block out again
    size_t total = 1;
    for (int i = 0; i < UFO_MEM_COUNT; i++)
        total += (i ? 6 : 5) + strlen (s_names [i]) + ufo_memory__json_len (self->mem [i]);
    char *text = (char *) ufo_malloc (total + 1);
    char *o = text;
    for (int i = 0; i < UFO_MEM_COUNT; i++) {
        size_t n = strlen (s_names [i]);
        memcpy (o, i ? ", \"" : "{\"", i ? 3 : 2);
        o += i ? 3 : 2;
        memcpy (o, s_names [i], n);
        o += n;
        memcpy (o, "\": ", 3);
        o = ufo_memory__write_json (self->mem [i], o + 3);
    }
    *o++ = '}';
    *o = 0;
    assert ((size_t) (o - text) == total);
    if (len_p)
        *len_p = total;
    return text;
}

int
ufo_board_from_json (ufo_board_t *self, const char *text, size_t len, ufo_error_t *err)
{
    assert (self);
    if (!text)
        return ufo_error_set (err, UFO_E_INVALID, "blackboard: no JSON text");
    ufo_value_t *map = ufo_json_parse (text, len, &ufo_model_limits, err);
    if (!map)
        return -1;
    if (s_check_map (map, err)) {
        ufo_value_destroy (&map);
        return -1;
    }
    //  the parsed maps become the items (no copy)
    for (int i = 0; i < UFO_MEM_COUNT; i++) {
        ufo_value_t *list = ufo_value_map_get (map, s_names [i]);
        if (list) {
            int rc = ufo_memory__from_list_take (self->mem [i], list, s_names [i], err);
            assert (rc == 0);
            UFO_UNUSED (rc);
        }
        else
            ufo_memory_clear (self->mem [i]);
    }
    ufo_value_destroy (&map);
    return 0;
}

//  --- Prompt --------------------------------------------------------------------

static void
s_push_text_part (ufo_value_t *list, const char *text, size_t len)
{
    ufo_value_t *part = ufo_value_new_map ();
    ufo_value_map_set_str (part, "type", "text");
    ufo_value_t *v = ufo_value_new_stringn (text, len);
    ufo_value_map_set (part, "text", &v);
    ufo_value_list_push (list, &part);
}

ufo_value_t *
ufo_board_to_prompt (ufo_board_t *self)
{
    assert (self);
    ufo_value_t *list = ufo_value_new_list ();
    s_push_text_part (list, "[Blackboard:]", 13);
    for (int i = 0; i < 3; i++) {
        //  header + "\n " + the memory's list text, written straight into the string value
        size_t hlen = strlen (s_headers [i]);
        char *o;
        ufo_value_t *text = ufo_value_new_string_fill (
            hlen + 2 + ufo_memory__json_len (self->mem [i]), &o);
        memcpy (o, s_headers [i], hlen);
        memcpy (o + hlen, "\n ", 2);
        ufo_memory__write_json (self->mem [i], o + hlen + 2);
        ufo_value_t *part = ufo_value_new_map ();
        ufo_value_map_set_str (part, "type", "text");
        ufo_value_map_set (part, "text", &text);
        ufo_value_list_push (list, &part);
    }
    ufo_memory_t *shots = self->mem [UFO_MEM_SCREENSHOTS];
    for (size_t i = 0; i < ufo_memory_length (shots); i++) {
        ufo_item_t *item = ufo_memory_at (shots, i);
        const ufo_value_t *metadata = ufo_item_get (item, "metadata");
        size_t len = 2;
        char *text = metadata ? ufo_json_dump (metadata, UFO_JSON_PY, &len) : ufo_strdup ("\"\"");
        s_push_text_part (list, text, len);
        free (text);
        const ufo_value_t *image = ufo_item_get (item, "image_str");
        ufo_value_t *url = image ? ufo_value_dup (image) : ufo_value_new_string ("");
        ufo_value_t *inner = ufo_value_new_map ();
        ufo_value_map_set (inner, "url", &url);
        ufo_value_t *part = ufo_value_new_map ();
        ufo_value_map_set_str (part, "type", "image_url");
        ufo_value_map_set (part, "image_url", &inner);
        ufo_value_list_push (list, &part);
    }
    return list;
}

//  --- Questions from JSON lines -------------------------------------------------

//  Length of the whitespace character (as Python's str.isspace) that starts at p, or 0.
static size_t
s_space_at (const unsigned char *p, const unsigned char *end)
{
    unsigned char c = *p;
    if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f))
        return 1;
    if (c == 0xC2 && end - p >= 2 && (p [1] == 0x85 || p [1] == 0xA0))
        return 2;
    if (end - p >= 3) {
        if (c == 0xE1 && p [1] == 0x9A && p [2] == 0x80)
            return 3;                                       //  U+1680
        if (c == 0xE2 && p [1] == 0x80 && (p [2] <= 0x8A || p [2] == 0xA8 || p [2] == 0xA9
                                           || p [2] == 0xAF) && p [2] >= 0x80)
            return 3;                                       //  U+2000..200A, 2028, 2029, 202F
        if (c == 0xE2 && p [1] == 0x81 && p [2] == 0x9F)
            return 3;                                       //  U+205F
        if (c == 0xE3 && p [1] == 0x80 && p [2] == 0x80)
            return 3;                                       //  U+3000
    }
    return 0;
}

//  Length of the whitespace character that ends just before end, or 0.
static size_t
s_space_before (const unsigned char *start, const unsigned char *end)
{
    for (size_t n = 1; n <= 3 && (size_t) (end - start) >= n; n++) {
        const unsigned char *p = end - n;
        if (n > 1 && (*p & 0xC0) == 0x80)
            continue;
        return s_space_at (p, end) == n ? n : 0;
    }
    return 0;
}

typedef struct {
    const char *p;
    size_t len;
} s_line_t;

//  One stripped line of a question file.
static bool
s_load_line (ufo_board_t *self, const char *line, size_t len)
{
    const unsigned char *p = (const unsigned char *) line;
    const unsigned char *end = p + len;
    size_t n;
    while (p < end && (n = s_space_at (p, end)) > 0)
        p += n;
    while (end > p && (n = s_space_before (p, end)) > 0)
        end -= n;
    line = (const char *) p;
    len = (size_t) (end - p);
    ufo_error_t err;
    ufo_value_t *value = ufo_json_parse (line, len, &ufo_model_limits, &err);
    if (!value) {
        //  show at most 200 bytes, control bytes and invalid UTF-8 as '?'
        char shown [201];
        size_t k = 0, i = 0;
        while (i < len && k < 200) {
            size_t seq = ufo_utf8_seq (line + i, len - i, NULL);
            if (seq == 0 || (unsigned char) line [i] < 0x20 || line [i] == 0x7f) {
                shown [k++] = '?';
                i++;
                continue;
            }
            if (k + seq > 200)
                break;
            memcpy (shown + k, line + i, seq);
            k += seq;
            i += seq;
        }
        shown [k] = 0;
        ufo_warn ("Unable to parse line as JSON: %s%s (%s)", shown, i < len ? "..." : "",
                  err.message);
        return false;
    }
    //  a map or a string is added; other JSON values are ignored, as add_data does
    return ufo_board_add_data_take (self, UFO_MEM_QUESTIONS, &value, NULL) == 0;
}

size_t
ufo_board_load_questions_text (ufo_board_t *self, const char *text, size_t len, int64_t last_k)
{
    assert (self);
    if (!text || !len)
        return 0;
    //  split at \n, \r\n and \r (Python's universal newlines); a text without any \r
    //  (the usual case) is split at \n alone, without looking for \r line by line
    s_line_t *lines = NULL;
    size_t nlines = 0, alloc = 0;
    const char *p = text, *end = text + len;
    const char *nl = NULL;
    bool any_cr = memchr (text, '\r', len) != NULL;
    while (p < end) {
        if (!nl || nl < p) {
            nl = (const char *) memchr (p, '\n', (size_t) (end - p));
            if (!nl)
                nl = end;
        }
        const char *cr = any_cr ? (const char *) memchr (p, '\r', (size_t) (nl - p)) : NULL;
        const char *stop = cr ? cr : nl;
        if (nlines == alloc) {
            alloc = alloc ? alloc * 2 : 256;
            lines = (s_line_t *) ufo_realloc (lines, alloc * sizeof (s_line_t));
        }
        lines [nlines].p = p;
        lines [nlines].len = (size_t) (stop - p);
        nlines++;
        p = stop + 1;
        if (cr && cr + 1 == nl)
            p = nl + 1;             //  \r\n
    }
    size_t first = last_k > 0 && (uint64_t) last_k < nlines ? nlines - (size_t) last_k : 0;
    size_t added = 0;
    for (size_t i = first; i < nlines; i++)
        if (s_load_line (self, lines [i].p, lines [i].len))
            added++;
    free (lines);
    return added;
}

int
ufo_board_load_questions (ufo_board_t *self, const char *path, int64_t last_k, ufo_error_t *err)
{
    assert (self);
    if (!path)
        return ufo_error_set (err, UFO_E_INVALID, "load_questions: no path");
    ufo_buf_t file = {0};
    if (s_read_file (path, &file) != 0) {
        int e = errno;
        ufo_buf_free (&file);
        if (e == ENOENT || e == ENOTDIR)
            return 0;               //  as the original: no file, no questions
        return ufo_error_set (err, e == EFBIG ? UFO_E_TOO_LARGE : UFO_E_IO,
                              "load_questions: cannot read %s: %s", path, strerror (e));
    }
    size_t added = ufo_board_load_questions_text (self, file.data, file.len, last_k);
    ufo_buf_free (&file);
    return (int) added;
}

void
ufo_board_clear (ufo_board_t *self)
{
    assert (self);
    for (int i = 0; i < UFO_MEM_COUNT; i++)
        ufo_memory_clear (self->mem [i]);
}

bool
ufo_board_is_empty (ufo_board_t *self)
{
    assert (self);
    for (int i = 0; i < UFO_MEM_COUNT; i++)
        if (!ufo_memory_is_empty (self->mem [i]))
            return false;
    return true;
}
