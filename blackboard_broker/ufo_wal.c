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
    //  Bytes handed to the kernel but not known durable (ufo_wal_keep_unsynced): after a
    //  failed write or fdatasync the kernel may have dropped them, so ufo_wal_repair
    //  rewrites them from here. unsynced holds the current segment from offset synced_off;
    //  old_* the same for the previous segment until its last fdatasync is confirmed.
    bool keep_unsynced;
    uint64_t synced_off;
    ufo_buf_t unsynced;
    uint64_t old_segment, old_synced_off;
    ufo_buf_t old_unsynced;
    bool broken;                //  a write failed: nothing is written until ufo_wal_repair
    char *fault_file;           //  UFOBUS_TEST_WAL_FAULT (tests only), or NULL
};

static const char s_magic [4] = { 'U', 'F', 'O', 'W' };

//  Test-only fault injection (UFOBUS_TEST_WAL_FAULT=FILE): while FILE exists and holds the
//  word `op` ("write" or "fsync"), that operation of the log fails with EIO. A failed write
//  first writes half of its bytes, as a real one can. Read at each call; never set in
//  production (docs/DEPLOYMENT.md).
static bool
s_fault (const char *file, const char *op)
{
    if (!file)
        return false;
    char text [64] = "";
    int fd = open (file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read (fd, text, sizeof text - 1);
    close (fd);
    text [n > 0 ? n : 0] = 0;
    return strstr (text, op) != NULL;
}

//  The injected fsync failure also does what the kernel may do after a failed writeback:
//  the bytes written since the file's last good fdatasync are gone (the file is cut back
//  to its size at that time), so a caller that goes on as if they were there loses them.
static struct {
    ino_t ino;
    off_t good;
} s_fault_files [16];

//  Remembers fd's size now as what is durable (a segment just opened: what a start found on
//  disk, or nothing for a new one). Tests only (UFOBUS_TEST_WAL_FAULT).
static void
s_fault_register (int fd)
{
    struct stat st;
    if (!getenv ("UFOBUS_TEST_WAL_FAULT") || fstat (fd, &st) != 0)
        return;
    size_t slot = (size_t) st.st_ino % UFO_ARRAY_SIZE (s_fault_files);
    s_fault_files [slot].ino = st.st_ino;
    s_fault_files [slot].good = st.st_size;
}

int
ufo_wal_datasync (int fd)
{
    if (!getenv ("UFOBUS_TEST_WAL_FAULT"))
        return fdatasync (fd);
    struct stat st;
    if (fstat (fd, &st) != 0)
        return -1;
    size_t slot = (size_t) st.st_ino % UFO_ARRAY_SIZE (s_fault_files);
    bool known = s_fault_files [slot].ino == st.st_ino;
    if (s_fault (getenv ("UFOBUS_TEST_WAL_FAULT"), "fsync")) {
        if (known)
            UFO_UNUSED (ftruncate (fd, s_fault_files [slot].good));
        errno = EIO;
        return -1;
    }
    int rc = fdatasync (fd);
    if (rc == 0) {
        s_fault_files [slot].ino = st.st_ino;
        s_fault_files [slot].good = st.st_size;
    }
    return rc;
}

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
    self->synced_off = (uint64_t) end;
    if (self->fault_file)
        s_fault_register (fd);
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
    const char *fault = getenv ("UFOBUS_TEST_WAL_FAULT");
    self->fault_file = fault && *fault ? ufo_strdup (fault) : NULL;
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
    ufo_buf_free (&self->unsynced);
    ufo_buf_free (&self->old_unsynced);
    free (self->fault_file);
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
    if (self->broken)
        return ufo_error_set (err, UFO_E_IO, "log segment %" PRIu64 " awaits repair after a failed write",
                              self->segment);
    size_t done = 0;
    size_t limit = self->pending.len;
    bool fault = self->pending.len > 0 && s_fault (self->fault_file, "write");
    if (fault)
        limit = self->pending.len / 2;
    while (done < self->pending.len) {
        ssize_t rc = done < limit ? write (self->fd, self->pending.data + done, limit - done) : -1;
        if (done >= limit)
            errno = EIO;
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            //  Some bytes may be in the file after `size`: the file's end is unknown until
            //  ufo_wal_repair cuts it back and writes pending again.
            int saved = errno;
            self->broken = true;
            ufo_error_set (err, UFO_E_IO, "write to log segment %" PRIu64 " failed: %s",
                           self->segment, strerror (saved));
            errno = saved;
            return -1;
        }
        done += (size_t) rc;
    }
    self->size += done;
    if (!self->keep_unsynced)
        self->synced_off = self->size;
    else if (self->unsynced.len == 0) {
        ufo_buf_t swap = self->unsynced;        //  no copy: the written bytes become the tail
        self->unsynced = self->pending;
        self->pending = swap;
    }
    else
        ufo_buf_append (&self->unsynced, self->pending.data, self->pending.len);
    ufo_buf_reset (&self->pending);
    return 0;
}

void
ufo_wal_keep_unsynced (ufo_wal_t *self, bool keep)
{
    self->keep_unsynced = keep;
    if (!keep) {
        ufo_buf_reset (&self->unsynced);
        self->synced_off = self->size;
    }
}

//  Drops the first n bytes of buf.
static void
s_buf_drop (ufo_buf_t *buf, size_t n)
{
    if (n >= buf->len) {
        ufo_buf_reset (buf);
        return;
    }
    memmove (buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
}

void
ufo_wal_synced (ufo_wal_t *self, uint64_t segment, uint64_t end)
{
    if (segment == self->segment && !self->broken && end > self->synced_off && end <= self->size) {
        s_buf_drop (&self->unsynced, (size_t) (end - self->synced_off));
        self->synced_off = end;
    }
    else
    if (segment == self->old_segment && self->old_segment != 0
    &&  end >= self->old_synced_off + self->old_unsynced.len) {
        ufo_buf_reset (&self->old_unsynced);
        self->old_segment = 0;
    }
}

void
ufo_wal_prepare_repair (ufo_wal_t *self)
{
    if (self->pending.len > 0) {
        if (self->unsynced.len > 0)
            ufo_buf_append (&self->unsynced, self->pending.data, self->pending.len);
        else {
            ufo_buf_t swap = self->unsynced;
            self->unsynced = self->pending;
            self->pending = swap;
        }
        ufo_buf_reset (&self->pending);
    }
    //  The file will end at synced_off + unsynced.len once repaired.
    self->size = self->synced_off + self->unsynced.len;
    self->broken = true;
}

//  Cuts segment's file back to off, writes bytes there and flushes them (a new descriptor:
//  an error reported on the old one says nothing about these new writes).
static int
s_rewrite (ufo_wal_t *self, uint64_t segment, uint64_t off, const ufo_buf_t *bytes)
{
    char path [PATH_MAX];
    s_segment_path (self, segment, path, sizeof path);
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno ? errno : EIO;
    int status = 0;
    if (ftruncate (fd, (off_t) off) != 0)
        status = errno;
    size_t done = 0;
    while (status == 0 && done < bytes->len) {
        if (s_fault (self->fault_file, "write")) {
            status = EIO;
            break;
        }
        ssize_t rc = pwrite (fd, bytes->data + done, bytes->len - done, (off_t) (off + done));
        if (rc < 0 && errno != EINTR)
            status = errno;
        else if (rc > 0)
            done += (size_t) rc;
    }
    if (status == 0 && ufo_wal_datasync (fd) != 0)
        status = errno ? errno : EIO;
    close (fd);
    return status;
}

int
ufo_wal_repair (void *arg)
{
    ufo_wal_t *self = (ufo_wal_t *) arg;
    int status = 0;
    if (self->old_segment != 0)
        status = s_rewrite (self, self->old_segment, self->old_synced_off, &self->old_unsynced);
    if (status == 0)
        status = s_rewrite (self, self->segment, self->synced_off, &self->unsynced);
    return status;
}

void
ufo_wal_repaired (ufo_wal_t *self, bool ok)
{
    if (!ok)
        return;                 //  still broken: ufo_wal_prepare_repair and ufo_wal_repair again
    ufo_buf_reset (&self->old_unsynced);
    self->old_segment = 0;
    ufo_buf_reset (&self->unsynced);
    self->synced_off = self->size;
    self->reserved_to = self->size;             //  ftruncate freed what was reserved past the end
    lseek (self->fd, (off_t) self->size, SEEK_SET);
    self->broken = false;
}

bool
ufo_wal_broken (const ufo_wal_t *self)
{
    return self->broken;
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
    if (self->old_segment != 0) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "log segment %" PRIu64 " is not confirmed durable yet",
                       self->old_segment);
        return 0;
    }
    if (ufo_wal_write (self, err) != 0)
        return 0;
    int old_fd = self->fd;
    uint64_t old_segment = self->segment, old_size = self->size, old_reserved = self->reserved_to;
    uint64_t old_synced = self->synced_off;
    if (s_open_for_append (self, old_segment + 1, true, err) != 0) {
        self->fd = old_fd;
        self->segment = old_segment;
        self->size = old_size;
        self->reserved_to = old_reserved;
        self->synced_off = old_synced;
        return 0;
    }
    if (self->unsynced.len > 0) {
        ufo_buf_t swap = self->old_unsynced;        //  empty
        self->old_unsynced = self->unsynced;
        self->unsynced = swap;
        self->old_segment = old_segment;
        self->old_synced_off = old_synced;
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
