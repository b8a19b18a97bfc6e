/*  bb_roles.c - the role table and the owners of client ids and task ids; see bb_roles.h. */
#include "ufo_prelude.h"
#include "ufo_msg.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_task_proto.h"
#include "bb_roles.h"

#define S_BUCKETS 16384             //  power of two
#define S_NAME_MAX (UFO_TASK_ID_MAX + 2)

typedef struct {
    char name [S_NAME_MAX + 1];     //  "T:<task id>" or "C:<client id>"; "" when free
    char key [41];
    int32_t next;                   //  bucket chain (-1: end)
} s_owner_t;

struct _bb_roles_t {
    s_owner_t *ring;                //  BB_ROLES_MAX_OWNERS entries, oldest overwritten first
    size_t ring_next;
    int32_t buckets [S_BUCKETS];
    FILE *file;
    char *path;                     //  the owners file (NULL: memory only)
    size_t lines;                   //  lines in the file; rewritten when it passes 2x the table
    size_t max_bytes;
};

static int s_rewrite (bb_roles_t *self, ufo_error_t *err);

static uint32_t
s_hash (const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *) name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h & (S_BUCKETS - 1);
}

static s_owner_t *
s_find (bb_roles_t *self, const char *name)
{
    for (int32_t i = self->buckets [s_hash (name)]; i >= 0; i = self->ring [i].next)
        if (strcmp (self->ring [i].name, name) == 0)
            return &self->ring [i];
    return NULL;
}

static void
s_unlink (bb_roles_t *self, int32_t index)
{
    int32_t *link = &self->buckets [s_hash (self->ring [index].name)];
    while (*link >= 0 && *link != index)
        link = &self->ring [*link].next;
    if (*link == index)
        *link = self->ring [index].next;
}

//  Records name -> key in memory (the oldest entry makes room). append: write it to the file.
static void
s_insert (bb_roles_t *self, const char *name, const char *key, bool append)
{
    int32_t index = (int32_t) self->ring_next;
    self->ring_next = (self->ring_next + 1) % BB_ROLES_MAX_OWNERS;
    if (self->ring [index].name [0])
        s_unlink (self, index);
    s_owner_t *o = &self->ring [index];
    snprintf (o->name, sizeof o->name, "%s", name);
    snprintf (o->key, sizeof o->key, "%s", key);
    uint32_t h = s_hash (name);
    o->next = self->buckets [h];
    self->buckets [h] = index;
    if (append && self->file) {
        fprintf (self->file, "%s %s\n", name, key);
        fflush (self->file);
        ufo_error_t err;
        if (++self->lines > 2 * BB_ROLES_MAX_OWNERS && s_rewrite (self, &err) != 0)
            ufo_warn ("owners: %s (ownership stays in memory)", err.message);
    }
}

//  Writes the table to the owners file (a new file renamed over the old one) and keeps it
//  open for appending.
static int
s_rewrite (bb_roles_t *self, ufo_error_t *err)
{
    if (self->file)
        fclose (self->file);
    self->file = NULL;
    self->lines = 0;
    char tmp [PATH_MAX];
    snprintf (tmp, sizeof tmp, "%s.tmp", self->path);
    FILE *out = fopen (tmp, "w");
    if (!out)
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", tmp, strerror (errno));
    for (size_t k = 0; k < BB_ROLES_MAX_OWNERS; k++) {
        const s_owner_t *o = &self->ring [(self->ring_next + k) % BB_ROLES_MAX_OWNERS];
        if (o->name [0]) {
            fprintf (out, "%s %s\n", o->name, o->key);
            self->lines++;
        }
    }
    if (fclose (out) != 0 || rename (tmp, self->path) != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", self->path, strerror (errno));
    self->file = fopen (self->path, "a");
    if (!self->file)
        return ufo_error_set (err, UFO_E_IO, "cannot append to %s: %s", self->path, strerror (errno));
    return 0;
}

//  Loads the owners file, then rewrites it compacted.
static int
s_load (bb_roles_t *self, const char *path, ufo_error_t *err)
{
    FILE *in = fopen (path, "r");
    if (!in && errno != ENOENT)
        return ufo_error_set (err, UFO_E_IO, "cannot read %s: %s", path, strerror (errno));
    if (in) {
        char line [256], name [S_NAME_MAX + 2], key [42];
        while (fgets (line, sizeof line, in))
            if (sscanf (line, "%66s %41s", name, key) == 2 && strlen (key) == 40
            &&  (name [0] == 'T' || name [0] == 'C') && name [1] == ':' && ufo_task_id_valid (name + 2)) {
                s_owner_t *o = s_find (self, name);
                if (!o)
                    s_insert (self, name, key, false);
            }
        fclose (in);
    }
    self->path = ufo_strdup (path);
    return s_rewrite (self, err);
}

bb_roles_t *
bb_roles_new (const char *owners_path, size_t max_bytes, ufo_error_t *err)
{
    bb_roles_t *self = ufo_calloc (1, sizeof *self);
    self->ring = ufo_calloc (BB_ROLES_MAX_OWNERS, sizeof *self->ring);
    self->max_bytes = max_bytes ? max_bytes : 16 << 20;
    for (size_t i = 0; i < S_BUCKETS; i++)
        self->buckets [i] = -1;
    if (owners_path && s_load (self, owners_path, err) != 0)
        bb_roles_destroy (&self);
    return self;
}

void
bb_roles_destroy (bb_roles_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_roles_t *self = *self_p;
    if (self->file)
        fclose (self->file);
    free (self->path);
    free (self->ring);
    free (self);
    *self_p = NULL;
}

//  --- Envelope head (docs/PROTOCOL.md 1.2): array of 7, version, type, id -----------

//  Reads the envelope's type and id with the envelope reader (ufo_msg_decode_head), so that
//  roles see a request exactly as routing does (any int form of the version, any str form).
static bool
s_peek_head (const void *frame, size_t len, char type [65], char id [65])
{
    ufo_msg_limits_t limits = { len ? len : 1, 0 };     //  size limits are the decoder's business
    ufo_msg_head_t head;
    size_t body_off;
    if (!frame || ufo_msg_decode_head (frame, len, &limits, &head, &body_off, NULL) != 0)
        return false;
    memcpy (type, head.type, strlen (head.type) + 1);      //  both at most 64 bytes + NUL
    memcpy (id, head.id, strlen (head.id) + 1);
    return true;
}

//  --- Decisions ---------------------------------------------------------------------

static bool
s_in (const char *type, const char *const *list)
{
    for (; *list; list++)
        if (strcmp (type, *list) == 0)
            return true;
    return false;
}

//  Requests every role may send: reads and status.
static const char *const s_reads [] = {
    "bb.snapshot", "bb.list", "blob.get", "stats", "ping", "dispatch.state", NULL
};

static bool
s_deny (char *why, size_t size, const char *fmt, const char *a, const char *b)
{
    snprintf (why, size, fmt, a, b);
    return false;
}

//  name = "T:" / "C:" + id. True if key owns it, or nobody does and claim is set (then key
//  owns it from now on).
static bool
s_owns (bb_roles_t *self, char kind, const char *id, const char *key, bool claim)
{
    char name [S_NAME_MAX + 1];
    snprintf (name, sizeof name, "%c:%s", kind, id);
    s_owner_t *o = s_find (self, name);
    if (o)
        return strcmp (o->key, key) == 0;
    if (claim)
        s_insert (self, name, key, true);
    return claim;
}

static bool
s_client_dispatch (bb_roles_t *self, const char *key, const void *frame, size_t len, char *why, size_t size)
{
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    bool ok = false;
    if (ufo_task_request_decode (&req, frame, len, self->max_bytes, &err) != 0)
        s_deny (why, size, "role client: undecodable %s request: %s", req.type_name, err.message);
    else
    switch (req.type) {
        case UFO_TASK_REQ_CLIENT_HELLO:
        case UFO_TASK_REQ_CLIENT_HEARTBEAT:
            ok = s_owns (self, 'C', req.client, key, true)
              || s_deny (why, size, "role client: client id %s belongs to another certificate%s", req.client, "");
            break;
        case UFO_TASK_REQ_SUBMIT:
            //  sessions, and the desktop queries of a device (window list, screenshot)
            if (strcmp (req.service, "host") != 0 && strcmp (req.service, "desktop") != 0)
                s_deny (why, size, "role client may submit only to services \"host\" and \"desktop\", not \"%s\"%s",
                        req.service, "");
            else
            if (!s_owns (self, 'C', req.client, key, true))
                s_deny (why, size, "role client: client id %s belongs to another certificate%s", req.client, "");
            else
            if (!s_owns (self, 'T', req.task, key, true))
                s_deny (why, size, "role client: task id %s belongs to another certificate%s", req.task, "");
            else
                ok = true;
            break;
        case UFO_TASK_REQ_INPUT:
        case UFO_TASK_REQ_CANCEL:
        case UFO_TASK_REQ_FETCH:
            if (!s_owns (self, 'T', req.task, key, false))
                s_deny (why, size, "role client: task %s was not submitted with this certificate%s", req.task, "");
            else
            if (req.client [0] && !s_owns (self, 'C', req.client, key, true))
                s_deny (why, size, "role client: client id %s belongs to another certificate%s", req.client, "");
            else
                ok = true;
            break;
        default:
            s_deny (why, size, "role client may not send %s%s", req.type_name, "");
    }
    ufo_task_request_reset (&req);
    return ok;
}

bool
bb_roles_allow (bb_roles_t *self, const char *role, const char *key, const void *frame, size_t len,
                char type_out [65], char id_out [65], char *why, size_t why_size)
{
    assert (self && why);
    type_out [0] = id_out [0] = 0;
    bool head = s_peek_head (frame, len, type_out, id_out);
    if (!role || !*role)
        return s_deny (why, why_size, "the peer's certificate carries no role%s%s", "", "");
    if (strcmp (role, "agent") == 0)
        return true;                        //  everything; malformed requests get their own error
    if (!head)
        return s_deny (why, why_size, "role %s: unreadable request envelope%s", role, "");
    if (strcmp (role, "monitor") == 0)
        return s_in (type_out, s_reads)
            || s_deny (why, why_size, "role monitor is read-only: %s is not allowed", type_out, "");
    if (strcmp (role, "client") == 0) {
        if (s_in (type_out, s_reads))
            return true;
        if (!key || strlen (key) != 40)
            return s_deny (why, why_size, "role client: the connection carries no public key%s%s", "", "");
        if (strncmp (type_out, "task.", 5) == 0 || strncmp (type_out, "client.", 7) == 0)
            return s_client_dispatch (self, key, frame, len, why, why_size);
        return s_deny (why, why_size, "role client may not send %s (boards are written by agents)", type_out, "");
    }
    return s_deny (why, why_size, "role %s may not send requests (%s)", role, type_out);
}
