/*  ufo_tasklog.c - one session's log directory. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"

#define UFO_TASKLOG_MAX_SECRETS 16

struct _ufo_tasklog_t {
    char *dir;
    char *secrets [UFO_TASKLOG_MAX_SECRETS];
    size_t nsecrets;
};

static int
s_mkdir_p (const char *path, ufo_error_t *err)
{
    char *copy = ufo_strdup (path);
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir (copy, 0755) != 0 && errno != EEXIST) {
            ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", copy, strerror (errno));
            free (copy);
            return -1;
        }
        *p = '/';
    }
    int rc = 0;
    if (mkdir (copy, 0755) != 0 && errno != EEXIST)
        rc = ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", copy, strerror (errno));
    free (copy);
    return rc;
}

static bool
s_component_ok (const char *name)
{
    return name && *name && !strchr (name, '/') && strcmp (name, ".") != 0 && strcmp (name, "..") != 0;
}

ufo_tasklog_t *
ufo_tasklog_open (const char *root, const char *task, ufo_error_t *err)
{
    if (!root || !*root) {
        ufo_error_set (err, UFO_E_INVALID, "no log root directory given");
        return NULL;
    }
    if (!s_component_ok (task)) {
        ufo_error_set (err, UFO_E_INVALID, "task name \"%s\" is not a single path component",
                       task ? task : "");
        return NULL;
    }
    ufo_buf_t path = {0};
    ufo_buf_printf (&path, "%s/%s", root, task);
    if (s_mkdir_p (path.data, err)) {
        ufo_buf_free (&path);
        return NULL;
    }
    ufo_tasklog_t *self = (ufo_tasklog_t *) ufo_calloc (1, sizeof (ufo_tasklog_t));
    self->dir = ufo_buf_detach (&path, NULL);
    return self;
}

void
ufo_tasklog_destroy (ufo_tasklog_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_tasklog_t *self = *self_p;
    for (size_t i = 0; i < self->nsecrets; i++)
        free (self->secrets [i]);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

const char *
ufo_tasklog_dir (const ufo_tasklog_t *self)
{
    assert (self);
    return self->dir;
}

char *
ufo_tasklog_path (ufo_tasklog_t *self, const char *name, char *out, size_t size)
{
    assert (self && name && out && size);
    snprintf (out, size, "%s/%s", self->dir, name);
    const char *slash = strchr (name, '/');
    if (slash) {
        char sub [4096];
        snprintf (sub, sizeof (sub), "%s/%.*s", self->dir, (int) (slash - name), name);
        if (mkdir (sub, 0755) != 0 && errno != EEXIST)
            ufo_warn ("cannot create %s: %s", sub, strerror (errno));
    }
    return out;
}

void
ufo_tasklog_add_secret (ufo_tasklog_t *self, const char *secret)
{
    assert (self);
    if (!secret || strlen (secret) < 4 || self->nsecrets == UFO_TASKLOG_MAX_SECRETS)
        return;
    for (size_t i = 0; i < self->nsecrets; i++)
        if (strcmp (self->secrets [i], secret) == 0)
            return;
    self->secrets [self->nsecrets++] = ufo_strdup (secret);
}

static bool
s_credential_key (const char *key)
{
    static const char *names [] = { "api_key", "api-key", "apikey", "authorization", "password",
                                    "secret", "token", "secret_key", "private_key" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names); i++)
        if (strcasecmp (key, names [i]) == 0)
            return true;
    return false;
}

//  Replaces every registered secret inside s[0..len) by "***"; returns a new value.
static ufo_value_t *
s_redact_string (const ufo_tasklog_t *self, const char *s, size_t len)
{
    bool hit = false;
    for (size_t i = 0; i < self->nsecrets && !hit; i++)
        if (memmem (s, len, self->secrets [i], strlen (self->secrets [i])))
            hit = true;
    if (!hit)
        return ufo_value_new_stringn (s, len);
    ufo_buf_t out = {0};
    size_t pos = 0;
    while (pos < len) {
        size_t best = len, best_len = 0;
        for (size_t i = 0; i < self->nsecrets; i++) {
            size_t slen = strlen (self->secrets [i]);
            const char *found = (const char *) memmem (s + pos, len - pos, self->secrets [i], slen);
            if (found && (size_t) (found - s) < best) {
                best = (size_t) (found - s);
                best_len = slen;
            }
        }
        ufo_buf_append (&out, s + pos, best - pos);
        if (best == len)
            break;
        ufo_buf_append (&out, "***", 3);
        pos = best + best_len;
    }
    ufo_value_t *v = ufo_value_new_stringn (out.data ? out.data : "", out.len);
    ufo_buf_free (&out);
    return v;
}

ufo_value_t *
ufo_tasklog_redact (const ufo_tasklog_t *self, const ufo_value_t *value)
{
    assert (self);
    switch (ufo_value_type (value)) {
        case UFO_TSTRING:
            return s_redact_string (self, ufo_value_str (value), ufo_value_strlen (value));
        case UFO_TLIST: {
            ufo_value_t *list = ufo_value_new_list ();
            for (size_t i = 0; i < ufo_value_size (value); i++) {
                ufo_value_t *item = ufo_tasklog_redact (self, ufo_value_list_at (value, i));
                ufo_value_list_push (list, &item);
            }
            return list;
        }
        case UFO_TMAP: {
            ufo_value_t *map = ufo_value_new_map ();
            for (size_t i = 0; i < ufo_value_size (value); i++) {
                const char *key = ufo_value_map_key_at (value, i);
                ufo_value_t *item = s_credential_key (key)
                    ? ufo_value_new_string ("***")
                    : ufo_tasklog_redact (self, ufo_value_map_value_at (value, i));
                ufo_value_map_setn (map, key, ufo_value_map_keylen_at (value, i), &item);
            }
            return map;
        }
        default:
            return value ? ufo_value_dup (value) : ufo_value_new_null ();
    }
}

int
ufo_tasklog_append (ufo_tasklog_t *self, const char *name, const ufo_value_t *record,
                    ufo_error_t *err)
{
    assert (self && name);
    if (!s_component_ok (name))
        return ufo_error_set (err, UFO_E_INVALID, "log file name \"%s\" is not acceptable", name);
    ufo_value_t *clean = ufo_tasklog_redact (self, record);
    ufo_buf_t line = {0};
    ufo_json_append (&line, clean, UFO_JSON_COMPACT);
    ufo_buf_putc (&line, '\n');
    ufo_value_destroy (&clean);
    char path [4096];
    ufo_tasklog_path (self, name, path, sizeof (path));
    int rc = 0;
    int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        rc = ufo_error_set (err, UFO_E_IO, "cannot open %s: %s", path, strerror (errno));
    else {
        //  One write per record: O_APPEND keeps concurrent writers' lines whole.
        ssize_t n;
        do
            n = write (fd, line.data, line.len);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t) line.len)
            rc = ufo_error_set (err, UFO_E_IO, "cannot append to %s: %s", path,
                                n < 0 ? strerror (errno) : "short write");
        close (fd);
    }
    ufo_buf_free (&line);
    return rc;
}

int
ufo_tasklog_write_file (ufo_tasklog_t *self, const char *name, const void *bytes, size_t len,
                        ufo_error_t *err)
{
    assert (self && name);
    char path [4096], tmp [4200];
    ufo_tasklog_path (self, name, path, sizeof (path));
    snprintf (tmp, sizeof (tmp), "%s.tmp.%d", path, (int) getpid ());
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", tmp, strerror (errno));
    size_t done = 0;
    while (done < len) {
        ssize_t n = write (fd, (const char *) bytes + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int saved = errno;
            close (fd);
            unlink (tmp);
            return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", tmp, strerror (saved));
        }
        done += (size_t) n;
    }
    close (fd);
    if (rename (tmp, path) != 0) {
        int saved = errno;
        unlink (tmp);
        return ufo_error_set (err, UFO_E_IO, "cannot rename %s: %s", tmp, strerror (saved));
    }
    return 0;
}

int
ufo_tasklog_write_json (ufo_tasklog_t *self, const char *name, const ufo_value_t *value,
                        ufo_error_t *err)
{
    ufo_value_t *clean = ufo_tasklog_redact (self, value);
    ufo_buf_t text = {0};
    ufo_json_append (&text, clean, UFO_JSON_PRETTY);
    ufo_buf_putc (&text, '\n');
    ufo_value_destroy (&clean);
    int rc = ufo_tasklog_write_file (self, name, text.data, text.len, err);
    ufo_buf_free (&text);
    return rc;
}

ufo_value_t *
ufo_tasklog_read_lines (ufo_tasklog_t *self, const char *name)
{
    assert (self && name);
    ufo_value_t *list = ufo_value_new_list ();
    char path [4096];
    ufo_tasklog_path (self, name, path, sizeof (path));
    FILE *file = fopen (path, "re");
    if (!file)
        return list;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    size_t lineno = 0;
    while ((len = getline (&line, &cap, file)) >= 0) {
        lineno++;
        while (len > 0 && (line [len - 1] == '\n' || line [len - 1] == '\r'))
            len--;
        if (len == 0)
            continue;
        ufo_error_t err;
        ufo_value_t *v = ufo_json_parse (line, (size_t) len, NULL, &err);
        if (v)
            ufo_value_list_push (list, &v);
        else
            ufo_warn ("%s line %zu skipped: %s", path, lineno, err.message);
    }
    free (line);
    fclose (file);
    return list;
}

bool
ufo_tasklog_root_safe (const char *root)
{
    if (!root || !*root || strlen (root) > 1024)
        return false;
    for (const char *p = root; (p = strstr (p, "..")); p += 2)
        if ((p == root || p [-1] == '/') && (p [2] == 0 || p [2] == '/'))
            return false;
    return true;
}
