/*  ufo_wal.c - segmented append-only log with CRC-32C records; see ufo_wal.h. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_hash.h"
#include "ufo_wal.h"
#include <dirent.h>
#include <sys/mman.h>

struct _ufo_wal_t {
    char *dir;
    int dir_fd;
    int fd;                     //  current segment, open for writing
    uint64_t segment;           //  its number
    uint64_t size;              //  its size in bytes
    uint64_t records;           //  records appended since open
    ufo_buf_t pending;          //  encoded records not yet written
    uint64_t reserved_to;       //  blocks are allocated up to this offset (ufo_wal_reserve)
    bool no_reserve;            //  the file system cannot reserve (fallocate unsupported)
};

static const char s_magic [4] = { 'U', 'F', 'O', 'W' };

static void
s_put_u32 (uint8_t *p, uint32_t v)
{
    p [0] = (uint8_t) v; p [1] = (uint8_t) (v >> 8); p [2] = (uint8_t) (v >> 16); p [3] = (uint8_t) (v >> 24);
}

static uint32_t
s_get_u32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16 | (uint32_t) p [3] << 24;
}

void
ufo_wal_encode_record (ufo_buf_t *buf, const void *payload, size_t len)
{
    assert (len <= UFO_WAL_MAX_RECORD);
    uint8_t header [UFO_WAL_HEADER_BYTES];
    memcpy (header, s_magic, 4);
    s_put_u32 (header + 4, (uint32_t) len);
    uint32_t crc = ufo_crc32c (0, header + 4, 4);
    crc = ufo_crc32c (crc, payload, len);
    s_put_u32 (header + 8, crc);
    ufo_buf_append (buf, header, sizeof header);
    ufo_buf_append (buf, payload, len);
}

//  True if a complete, checksummed record starts at data[off]; *len_p gets its payload size.
static bool
s_record_at (const uint8_t *data, size_t size, size_t off, size_t *len_p)
{
    if (size - off < UFO_WAL_HEADER_BYTES || memcmp (data + off, s_magic, 4) != 0)
        return false;
    uint32_t len = s_get_u32 (data + off + 4);
    if (len > UFO_WAL_MAX_RECORD || len > size - off - UFO_WAL_HEADER_BYTES)
        return false;
    uint32_t crc = ufo_crc32c (0, data + off + 4, 4);
    crc = ufo_crc32c (crc, data + off + UFO_WAL_HEADER_BYTES, len);
    if (crc != s_get_u32 (data + off + 8))
        return false;
    *len_p = len;
    return true;
}

//  True if any valid record starts after off (scans for the magic).
static bool
s_valid_record_follows (const uint8_t *data, size_t size, size_t off)
{
    for (size_t i = off; i + UFO_WAL_HEADER_BYTES <= size; i++) {
        const uint8_t *hit = memchr (data + i, 'U', size - i);
        if (!hit)
            return false;
        i = (size_t) (hit - data);
        size_t len;
        if (s_record_at (data, size, i, &len))
            return true;
    }
    return false;
}

static int
s_cmp_u64 (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

static void
s_segment_path (const ufo_wal_t *self, uint64_t segment, char *out, size_t size)
{
    snprintf (out, size, "%s/wal-%016" PRIx64 ".log", self->dir, segment);
}

//  Lists segment numbers in the directory, sorted. Returns count; *list_p is malloc'd.
static size_t
s_list_segments (ufo_wal_t *self, uint64_t **list_p)
{
    size_t n = 0, cap = 16;
    uint64_t *list = ufo_malloc (cap * sizeof *list);
    DIR *dir = opendir (self->dir);
    struct dirent *entry;
    while (dir && (entry = readdir (dir))) {
        const char *name = entry->d_name;
        if (strncmp (name, "wal-", 4) != 0 || strlen (name) != 4 + 16 + 4
        ||  strcmp (name + 20, ".log") != 0)
            continue;
        char *end;
        uint64_t number = strtoull (name + 4, &end, 16);
        if (end != name + 20)
            continue;
        if (n == cap)
            list = ufo_realloc (list, (cap *= 2) * sizeof *list);
        list [n++] = number;
    }
    if (dir)
        closedir (dir);
    qsort (list, n, sizeof *list, s_cmp_u64);
    *list_p = list;
    return n;
}

static int
s_truncate (ufo_wal_t *self, uint64_t segment, size_t size, ufo_error_t *err)
{
    char path [PATH_MAX];
    s_segment_path (self, segment, path, sizeof path);
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate (fd, (off_t) size) != 0 || fsync (fd) != 0) {
        int saved = errno;
        if (fd >= 0)
            close (fd);
        return ufo_error_set (err, UFO_E_IO, "cannot truncate %s: %s", path, strerror (saved));
    }
    close (fd);
    return 0;
}

//  Replays one segment. Returns 0 when the whole file was good, 1 when a bad record was
//  found at *bad_off (middle_p says whether valid data follows in this file), -1 on I/O error.
static int
s_replay_segment (ufo_wal_t *self, uint64_t segment, ufo_wal_replay_fn *fn, void *arg,
                  ufo_wal_open_info_t *info, size_t *bad_off, bool *middle_p, ufo_error_t *err,
                  ufo_error_t *why)
{
    char path [PATH_MAX];
    s_segment_path (self, segment, path, sizeof path);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) != 0) {
        int saved = errno;
        if (fd >= 0)
            close (fd);
        return ufo_error_set (err, UFO_E_IO, "cannot read %s: %s", path, strerror (saved));
    }
    size_t size = (size_t) st.st_size;
    if (size == 0) {
        close (fd);
        return 0;
    }
    const uint8_t *data = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close (fd);
    if (data == MAP_FAILED)
        return ufo_error_set (err, UFO_E_IO, "cannot map %s: %s", path, strerror (errno));
    madvise ((void *) data, size, MADV_SEQUENTIAL);
    int rc = 0;
    size_t off = 0;
    while (off < size) {
        size_t len;
        if (!s_record_at (data, size, off, &len)) {
            ufo_error_set (why, UFO_E_SYNTAX, "bad record header or checksum");
            *bad_off = off;
            *middle_p = s_valid_record_follows (data, size, off + 1);
            rc = 1;
            break;
        }
        if (fn && fn (arg, segment, data + off + UFO_WAL_HEADER_BYTES, len, why) != 0) {
            *bad_off = off;
            *middle_p = true;       //  a checksummed record we cannot apply is never a torn write
            rc = 1;
            break;
        }
        if (info)
            info->records++;
        off += UFO_WAL_HEADER_BYTES + len;
    }
    munmap ((void *) data, size);
    return rc;
}

static int
s_open_for_append (ufo_wal_t *self, uint64_t segment, bool create, ufo_error_t *err)
{
    char path [PATH_MAX];
    s_segment_path (self, segment, path, sizeof path);
    int flags = O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
    int fd = open (path, flags, 0644);
    if (fd < 0)
        return ufo_error_set (err, UFO_E_IO, "cannot open %s: %s", path, strerror (errno));
    off_t end = lseek (fd, 0, SEEK_END);
    if (end < 0 || (create && fsync (self->dir_fd) != 0)) {
        int saved = errno;
        close (fd);
        return ufo_error_set (err, UFO_E_IO, "cannot prepare %s: %s", path, strerror (saved));
    }
    self->fd = fd;
    self->segment = segment;
    self->size = (uint64_t) end;
    self->reserved_to = (uint64_t) end;
    return 0;
}

ufo_wal_t *
ufo_wal_open (const char *dir, uint64_t first_segment, bool repair, ufo_wal_replay_fn *fn,
              void *arg, ufo_wal_open_info_t *info, ufo_error_t *err)
{
    assert (dir);
    ufo_wal_open_info_t local = { 0 };
    if (!info)
        info = &local;
    memset (info, 0, sizeof *info);
    if (mkdir (dir, 0755) != 0 && errno != EEXIST) {
        ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", dir, strerror (errno));
        return NULL;
    }
    ufo_wal_t *self = ufo_calloc (1, sizeof *self);
    self->dir = ufo_strdup (dir);
    self->fd = -1;
    self->dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (self->dir_fd < 0) {
        ufo_error_set (err, UFO_E_IO, "cannot open %s: %s", dir, strerror (errno));
        ufo_wal_destroy (&self);
        return NULL;
    }
    uint64_t *list;
    size_t n = s_list_segments (self, &list);
    size_t first = 0;
    while (first < n && list [first] < first_segment) {
        char path [PATH_MAX];
        s_segment_path (self, list [first], path, sizeof path);
        ufo_info ("wal: removing %s (covered by the snapshot)", path);
        unlink (path);
        first++;
    }
    info->segments = n - first;
    size_t last = n;            //  index of the segment to append to (n: create one)
    for (size_t i = first; i < n; i++) {
        size_t bad_off = 0;
        bool middle = false;
        ufo_error_t why;
        ufo_error_clear (&why);
        int rc = s_replay_segment (self, list [i], fn, arg, info, &bad_off, &middle, err, &why);
        if (rc < 0) {
            free (list);
            ufo_wal_destroy (&self);
            return NULL;
        }
        last = i;
        if (rc == 0)
            continue;
        //  A bad record: is it the torn tail, or corruption with good data after it?
        char path [PATH_MAX];
        s_segment_path (self, list [i], path, sizeof path);
        struct stat st;
        uint64_t seg_size = stat (path, &st) == 0 ? (uint64_t) st.st_size : 0;
        uint64_t later_bytes = 0;
        for (size_t j = i + 1; j < n; j++) {
            char later [PATH_MAX];
            s_segment_path (self, list [j], later, sizeof later);
            if (stat (later, &st) == 0)
                later_bytes += (uint64_t) st.st_size;
        }
        if ((middle || later_bytes > 0) && !repair) {
            ufo_error_set (err, UFO_E_SYNTAX,
                "log corrupt in the middle: %s at offset %zu (%s), and valid records follow; "
                "refusing to start. Run with --repair to truncate the log there "
                "(losing %" PRIu64 " bytes after it)", path, bad_off, why.message,
                seg_size - bad_off + later_bytes);
            free (list);
            ufo_wal_destroy (&self);
            return NULL;
        }
        if (middle || later_bytes > 0) {
            ufo_warn ("wal: REPAIR: truncating %s at offset %zu (%s); dropping %" PRIu64
                      " bytes after it", path, bad_off, why.message, seg_size - bad_off + later_bytes);
            info->repaired = true;
        }
        else
            ufo_warn ("wal: cutting torn tail of %s at offset %zu (%" PRIu64 " bytes: %s)",
                      path, bad_off, seg_size - bad_off, why.message);
        info->cut_bytes += seg_size - bad_off + later_bytes;
        if (s_truncate (self, list [i], bad_off, err) != 0) {
            free (list);
            ufo_wal_destroy (&self);
            return NULL;
        }
        for (size_t j = i + 1; j < n; j++) {
            char later [PATH_MAX];
            s_segment_path (self, list [j], later, sizeof later);
            unlink (later);
        }
        fsync (self->dir_fd);
        break;
    }
    int rc;
    if (last < n)
        rc = s_open_for_append (self, list [last], false, err);
    else
        rc = s_open_for_append (self, first_segment > 0 ? first_segment : 1, true, err);
    free (list);
    if (rc != 0) {
        ufo_wal_destroy (&self);
        return NULL;
    }
    return self;
}

void
ufo_wal_destroy (ufo_wal_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_wal_t *self = *self_p;
    if (self->fd >= 0) {
        ufo_error_t err;
        if (ufo_wal_write (self, &err) != 0)
            ufo_error ("wal: %s", err.message);
        close (self->fd);
    }
    if (self->dir_fd >= 0)
        close (self->dir_fd);
    ufo_buf_free (&self->pending);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

void
ufo_wal_append (ufo_wal_t *self, const void *payload, size_t len)
{
    ufo_wal_encode_record (&self->pending, payload, len);
    self->records++;
}

size_t
ufo_wal_pending (const ufo_wal_t *self)
{
    return self->pending.len;
}

int
ufo_wal_write (ufo_wal_t *self, ufo_error_t *err)
{
    size_t done = 0;
    while (done < self->pending.len) {
        ssize_t rc = write (self->fd, self->pending.data + done, self->pending.len - done);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            return ufo_error_set (err, UFO_E_IO, "write to log segment %" PRIu64 " failed: %s",
                                  self->segment, strerror (errno));
        }
        done += (size_t) rc;
    }
    self->size += done;
    ufo_buf_reset (&self->pending);
    return 0;
}

int
ufo_wal_reserve (ufo_wal_t *self, uint64_t bytes, uint64_t chunk, ufo_error_t *err)
{
    uint64_t want = self->size + self->pending.len + bytes;
    if (self->no_reserve || want <= self->reserved_to)
        return 0;
    //  a chunk at a time (fewer calls), or just what is needed when a chunk does not fit
    uint64_t from = self->reserved_to > self->size ? self->reserved_to : self->size;
    uint64_t big = want + chunk;
    int rc = fallocate (self->fd, FALLOC_FL_KEEP_SIZE, (off_t) from, (off_t) (big - from));
    if (rc != 0 && (errno == ENOSPC || errno == EDQUOT)) {
        big = want;
        rc = fallocate (self->fd, FALLOC_FL_KEEP_SIZE, (off_t) from, (off_t) (big - from));
    }
    if (rc == 0) {
        self->reserved_to = big;
        return 0;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
        self->no_reserve = true;
        ufo_warn ("wal: the file system of %s cannot reserve space (fallocate: %s); a full disk will "
                  "stop the broker instead of refusing writes", self->dir, strerror (errno));
        return 0;
    }
    int saved = errno;
    ufo_error_set (err, UFO_E_UNAVAILABLE, "cannot reserve %" PRIu64 " bytes for log segment %" PRIu64 ": %s",
                   bytes, self->segment, strerror (saved));
    errno = saved;
    return -1;
}

int
ufo_wal_fd (const ufo_wal_t *self)
{
    return self->fd;
}

uint64_t
ufo_wal_size (const ufo_wal_t *self)
{
    return self->size + self->pending.len;
}

uint64_t
ufo_wal_records (const ufo_wal_t *self)
{
    return self->records;
}

uint64_t
ufo_wal_segment (const ufo_wal_t *self)
{
    return self->segment;
}

uint64_t
ufo_wal_rotate (ufo_wal_t *self, int *old_fd_p, ufo_error_t *err)
{
    if (ufo_wal_write (self, err) != 0)
        return 0;
    int old_fd = self->fd;
    uint64_t old_segment = self->segment, old_size = self->size, old_reserved = self->reserved_to;
    if (s_open_for_append (self, old_segment + 1, true, err) != 0) {
        self->fd = old_fd;
        self->segment = old_segment;
        self->size = old_size;
        self->reserved_to = old_reserved;
        return 0;
    }
    *old_fd_p = old_fd;
    return self->segment;
}

int
ufo_wal_remove_before (ufo_wal_t *self, uint64_t segment)
{
    uint64_t *list;
    size_t n = s_list_segments (self, &list);
    int removed = 0;
    for (size_t i = 0; i < n && list [i] < segment; i++) {
        char path [PATH_MAX];
        s_segment_path (self, list [i], path, sizeof path);
        if (unlink (path) == 0)
            removed++;
    }
    free (list);
    if (removed)
        fsync (self->dir_fd);
    return removed;
}
