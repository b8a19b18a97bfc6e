/*  ufo_blob.c - content-addressed blob store; see ufo_blob.h. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_hash.h"
#include "ufo_blob.h"
#include <dirent.h>

struct _ufo_blob_store_t {
    char *dir;
    size_t max_bytes;
    uint64_t counter;           //  for unique temporary names
};

static int
s_mkdir (const char *path, ufo_error_t *err)
{
    if (mkdir (path, 0755) != 0 && errno != EEXIST)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", path, strerror (errno));
    return 0;
}

ufo_blob_store_t *
ufo_blob_store_new (const char *dir, size_t max_bytes, ufo_error_t *err)
{
    char tmp [PATH_MAX];
    snprintf (tmp, sizeof tmp, "%s/tmp", dir);
    if (s_mkdir (dir, err) != 0 || s_mkdir (tmp, err) != 0)
        return NULL;
    DIR *d = opendir (tmp);
    struct dirent *entry;
    while (d && (entry = readdir (d))) {
        if (entry->d_name [0] == '.')
            continue;
        char path [PATH_MAX + 256];
        snprintf (path, sizeof path, "%s/%s", tmp, entry->d_name);
        unlink (path);
    }
    if (d)
        closedir (d);
    ufo_blob_store_t *self = ufo_calloc (1, sizeof *self);
    self->dir = ufo_strdup (dir);
    self->max_bytes = max_bytes;
    return self;
}

void
ufo_blob_store_destroy (ufo_blob_store_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->dir);
    free (*self_p);
    *self_p = NULL;
}

size_t
ufo_blob_max_bytes (const ufo_blob_store_t *self)
{
    return self->max_bytes;
}

static void
s_final_path (const ufo_blob_store_t *self, const char *hex, char *out, size_t size)
{
    snprintf (out, size, "%s/%.2s/%s", self->dir, hex, hex + 2);
}

bool
ufo_blob_exists (ufo_blob_store_t *self, const char *hex)
{
    if (!ufo_sha256_hex_valid (hex))
        return false;
    char path [PATH_MAX];
    s_final_path (self, hex, path, sizeof path);
    return access (path, F_OK) == 0;
}

int
ufo_blob_stage (ufo_blob_store_t *self, const void *data, size_t len, ufo_blob_stage_t *stage,
                ufo_error_t *err)
{
    memset (stage, 0, sizeof *stage);
    stage->fd = -1;
    stage->dir_fd = -1;
    if (len > self->max_bytes)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "blob of %zu bytes exceeds max_blob_bytes %zu",
                              len, self->max_bytes);
    ufo_sha256_hex (data, len, stage->hex);
    stage->size = len;
    s_final_path (self, stage->hex, stage->final_path, sizeof stage->final_path);
    struct stat st;
    if (stat (stage->final_path, &st) == 0 && (size_t) st.st_size == len) {
        stage->existed = true;
        return 0;
    }
    char subdir [PATH_MAX];
    snprintf (subdir, sizeof subdir, "%s/%.2s", self->dir, stage->hex);
    if (s_mkdir (subdir, err) != 0)
        return -1;
    snprintf (stage->tmp_path, sizeof stage->tmp_path, "%s/tmp/%s.%d.%" PRIu64, self->dir,
              stage->hex, (int) getpid (), ++self->counter);
    int fd = open (stage->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ufo_error_set (err, errno == ENOSPC || errno == EDQUOT ? UFO_E_UNAVAILABLE : UFO_E_IO,
                              "cannot create %s: %s", stage->tmp_path, strerror (errno));
    size_t done = 0;
    while (done < len) {
        ssize_t rc = write (fd, (const char *) data + done, len - done);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0) {
            int saved = errno;
            close (fd);
            unlink (stage->tmp_path);
            return ufo_error_set (err, saved == ENOSPC || saved == EDQUOT ? UFO_E_UNAVAILABLE : UFO_E_IO,
                                  "cannot write %s: %s", stage->tmp_path, strerror (saved));
        }
        done += (size_t) rc;
    }
    stage->fd = fd;
    stage->dir_fd = open (subdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return 0;
}

//  Writes the expiry file of stage (tmp file, fsync when durable, rename). 0 or -1 with err.
static int
s_write_expiry (ufo_blob_stage_t *stage, bool durable, ufo_error_t *err)
{
    char tmp [4200], text [32];
    snprintf (tmp, sizeof tmp, "%s.tmp", stage->expiry_path);
    int len = snprintf (text, sizeof text, "%" PRId64 "\n", stage->expires_ms);
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", tmp, strerror (errno));
    bool ok = write (fd, text, (size_t) len) == len && (!durable || fsync (fd) == 0);
    int saved = errno;
    close (fd);
    if (!ok || rename (tmp, stage->expiry_path) != 0) {
        saved = ok ? errno : saved;
        unlink (tmp);
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", stage->expiry_path, strerror (saved));
    }
    return 0;
}

//  The directory of stage's blob, synced (durable) through dir_fd or opened for it.
static int
s_sync_dir (ufo_blob_stage_t *stage, ufo_error_t *err)
{
    int fd = stage->dir_fd;
    if (fd < 0) {
        char dir [4096];
        snprintf (dir, sizeof dir, "%s", stage->final_path);
        char *slash = strrchr (dir, '/');
        if (slash)
            *slash = 0;
        fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    int rc = fd >= 0 && fsync (fd) == 0 ? 0
           : ufo_error_set (err, UFO_E_IO, "fsync of blob directory: %s", strerror (errno));
    if (fd >= 0 && fd != stage->dir_fd)
        close (fd);
    return rc;
}

void
ufo_blob_stage_expiry (ufo_blob_stage_t *stage, int op, int64_t expires_ms)
{
    stage->expiry_op = op;
    stage->expires_ms = expires_ms;
    snprintf (stage->expiry_path, sizeof stage->expiry_path, "%s.ttl", stage->final_path);
}

//  Commit of a blob that was already in place (or removed): only its expiry file changes.
static int
s_commit_expiry (ufo_blob_stage_t *stage, bool durable, ufo_error_t *err)
{
    int rc = 0;
    switch (stage->expiry_op) {
        case UFO_BLOB_EXPIRY_SET:
            rc = s_write_expiry (stage, durable, err);
            if (rc == 0 && durable)
                rc = s_sync_dir (stage, err);
            break;
        case UFO_BLOB_EXPIRY_REMOVED:
            //  the blob's unlink must be durable before its expiry goes: never a blob
            //  without the expiry it was put with
            if (durable)
                rc = s_sync_dir (stage, err);
            if (rc == 0 && unlink (stage->expiry_path) != 0 && errno != ENOENT)
                rc = ufo_error_set (err, UFO_E_IO, "cannot remove %s: %s", stage->expiry_path, strerror (errno));
            break;
        case UFO_BLOB_EXPIRY_CLEAR:
            if (unlink (stage->expiry_path) != 0 && errno != ENOENT)
                rc = ufo_error_set (err, UFO_E_IO, "cannot remove %s: %s", stage->expiry_path, strerror (errno));
            else
            if (durable)
                rc = s_sync_dir (stage, err);
            break;
        default:
            break;
    }
    return rc;
}

void
ufo_blob_stage_of (ufo_blob_store_t *self, const char *hex, ufo_blob_stage_t *stage)
{
    memset (stage, 0, sizeof *stage);
    stage->fd = stage->dir_fd = -1;
    stage->existed = true;
    snprintf (stage->hex, sizeof stage->hex, "%s", hex);
    s_final_path (self, hex, stage->final_path, sizeof stage->final_path);
}

int
ufo_blob_remove (ufo_blob_store_t *self, const char *hex, ufo_blob_stage_t *stage, ufo_error_t *err)
{
    if (!ufo_sha256_hex_valid (hex))
        return ufo_error_set (err, UFO_E_INVALID, "blob reference must be 64 lowercase hex digits");
    ufo_blob_stage_of (self, hex, stage);
    ufo_blob_stage_expiry (stage, UFO_BLOB_EXPIRY_REMOVED, 0);
    if (unlink (stage->final_path) != 0)
        return ufo_error_set (err, errno == ENOENT ? UFO_E_NOT_FOUND : UFO_E_IO, "blob %s: %s", hex, strerror (errno));
    return 0;
}

size_t
ufo_blob_expiries (ufo_blob_store_t *self, void (*fn) (const char *hex, int64_t expires_ms, void *arg), void *arg)
{
    size_t count = 0;
    static const char digits [] = "0123456789abcdef";
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) {
            char sub [PATH_MAX];
            snprintf (sub, sizeof sub, "%s/%c%c", self->dir, digits [a], digits [b]);
            DIR *d = opendir (sub);
            struct dirent *entry;
            while (d && (entry = readdir (d))) {
                const char *name = entry->d_name;
                size_t len = strlen (name);
                char path [PATH_MAX + 300];
                snprintf (path, sizeof path, "%s/%s", sub, name);
                if (len == 62 + 8 && !strcmp (name + 62, ".ttl.tmp")) {
                    unlink (path);                      //  a partial expiry file
                    continue;
                }
                if (len != 62 + 4 || strcmp (name + 62, ".ttl"))
                    continue;
                char hex [65];
                snprintf (hex, sizeof hex, "%c%c%.62s", digits [a], digits [b], name);
                char text [32] = "";
                FILE *f = fopen (path, "re");
                bool read_ok = f && fgets (text, sizeof text, f);
                if (f)
                    fclose (f);
                char *end = NULL;
                long long ms = read_ok ? strtoll (text, &end, 10) : 0;
                if (!ufo_blob_exists (self, hex)) {
                    unlink (path);                      //  the blob's removal was durable
                    continue;
                }
                if (!read_ok || end == text || ms <= 0)
                    ms = 1;                             //  damaged: expire it (it was put to expire)
                fn (hex, (int64_t) ms, arg);
                count++;
            }
            if (d)
                closedir (d);
        }
    return count;
}

int
ufo_blob_commit (ufo_blob_stage_t *stage, bool durable, ufo_error_t *err)
{
    if (stage->existed)
        return s_commit_expiry (stage, durable, err);
    if (stage->expiry_op == UFO_BLOB_EXPIRY_SET && s_write_expiry (stage, durable, err) != 0) {
        ufo_blob_abort (stage);
        return -1;
    }
    int rc = 0;
    if (durable && fsync (stage->fd) != 0)
        rc = ufo_error_set (err, UFO_E_IO, "fsync %s: %s", stage->tmp_path, strerror (errno));
    close (stage->fd);
    stage->fd = -1;
    if (rc == 0 && rename (stage->tmp_path, stage->final_path) != 0)
        rc = ufo_error_set (err, UFO_E_IO, "rename to %s: %s", stage->final_path, strerror (errno));
    if (rc == 0 && stage->expiry_op == UFO_BLOB_EXPIRY_CLEAR && unlink (stage->expiry_path) != 0 && errno != ENOENT)
        rc = ufo_error_set (err, UFO_E_IO, "cannot remove %s: %s", stage->expiry_path, strerror (errno));
    if (rc == 0 && durable && stage->dir_fd >= 0 && fsync (stage->dir_fd) != 0)
        rc = ufo_error_set (err, UFO_E_IO, "fsync of blob directory: %s", strerror (errno));
    if (rc != 0)
        unlink (stage->tmp_path);
    if (stage->dir_fd >= 0)
        close (stage->dir_fd);
    stage->dir_fd = -1;
    return rc;
}

void
ufo_blob_abort (ufo_blob_stage_t *stage)
{
    if (stage->existed)
        return;
    if (stage->fd >= 0)
        close (stage->fd);
    if (stage->dir_fd >= 0)
        close (stage->dir_fd);
    stage->fd = stage->dir_fd = -1;
    unlink (stage->tmp_path);
}

int
ufo_blob_get (ufo_blob_store_t *self, const char *hex, char **data_p, size_t *len_p,
              ufo_error_t *err)
{
    if (!ufo_sha256_hex_valid (hex))
        return ufo_error_set (err, UFO_E_INVALID, "blob reference must be 64 lowercase hex digits");
    char path [PATH_MAX];
    s_final_path (self, hex, path, sizeof path);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ufo_error_set (err, errno == ENOENT ? UFO_E_NOT_FOUND : UFO_E_IO,
                              "blob %s: %s", hex, strerror (errno));
    struct stat st;
    if (fstat (fd, &st) != 0 || (size_t) st.st_size > self->max_bytes) {
        close (fd);
        return ufo_error_set (err, UFO_E_IO, "blob %s: unreadable or larger than the limit", hex);
    }
    size_t len = (size_t) st.st_size;
    char *data = ufo_malloc (len + 1);
    size_t done = 0;
    while (done < len) {
        ssize_t rc = read (fd, data + done, len - done);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            break;
        done += (size_t) rc;
    }
    close (fd);
    char check [65];
    ufo_sha256_hex (data, done, check);
    if (done != len || strcmp (check, hex) != 0) {
        free (data);
        unlink (path);
        return ufo_error_set (err, UFO_E_SYNTAX, "blob %s is damaged (digest mismatch); removed", hex);
    }
    data [len] = 0;
    *data_p = data;
    *len_p = len;
    return 0;
}
