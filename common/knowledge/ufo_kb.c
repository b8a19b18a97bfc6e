/*  ufo_kb.c - the knowledge index over SQLite FTS5 (see ufo_kb.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_kb.h"
#include "ufo_log.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include <sqlite3.h>
#include <libgen.h>

//  Bump when the schema changes: an index of another version is rebuilt from scratch
//  (everything in it can be indexed again from its sources).
#define S_SCHEMA_VERSION 1
//  BM25 candidates considered by a re-ranking search, and the weight of their BM25 rank.
#define S_RERANK_POOL 50
#define S_BM25_BONUS 0.1
#define S_MAX_TERMS 32

struct _ufo_kb_t {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *add, *add_vec, *src_get, *src_set;
};

static const char *s_schema =
    "CREATE TABLE IF NOT EXISTS kb_meta (key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS kb_sources (source TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    "  app TEXT NOT NULL, mtime INTEGER NOT NULL, size INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS kb_passages (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
    "  app TEXT NOT NULL, source TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,"
    "  ref TEXT NOT NULL, vec BLOB);"
    "CREATE INDEX IF NOT EXISTS kb_passages_source ON kb_passages (source);"
    "CREATE INDEX IF NOT EXISTS kb_passages_app ON kb_passages (kind, app);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS kb_fts USING fts5 (title, text,"
    "  content='kb_passages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');"
    "CREATE TRIGGER IF NOT EXISTS kb_ai AFTER INSERT ON kb_passages BEGIN"
    "  INSERT INTO kb_fts (rowid, title, text) VALUES (new.id, new.title, new.text); END;"
    "CREATE TRIGGER IF NOT EXISTS kb_ad AFTER DELETE ON kb_passages BEGIN"
    "  INSERT INTO kb_fts (kb_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text); END;";

static int
s_fail (ufo_kb_t *self, ufo_error_t *err, const char *what)
{
    return ufo_error_set (err, UFO_E_IO, "knowledge index %s: %s: %s", self->path, what,
                          sqlite3_errmsg (self->db));
}

static int
s_exec (ufo_kb_t *self, const char *sql, ufo_error_t *err)
{
    char *msg = NULL;
    if (sqlite3_exec (self->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        ufo_error_set (err, UFO_E_IO, "knowledge index %s: %s", self->path,
                       msg ? msg : sqlite3_errmsg (self->db));
        sqlite3_free (msg);
        return -1;
    }
    return 0;
}

static int
s_prepare (ufo_kb_t *self, const char *sql, sqlite3_stmt **stmt_p, ufo_error_t *err)
{
    if (sqlite3_prepare_v2 (self->db, sql, -1, stmt_p, NULL) != SQLITE_OK)
        return s_fail (self, err, "prepare");
    return 0;
}

static void
s_mkdir_parent (const char *path)
{
    char *copy = ufo_strdup (path);
    char *dir = dirname (copy);
    //  create each missing component, like mkdir -p
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir (dir, 0755);
            *p = '/';
        }
    mkdir (dir, 0755);
    free (copy);
}

//  The schema version stored in the file, 0 when it has none yet.
static int
s_version (ufo_kb_t *self)
{
    sqlite3_stmt *st = NULL;
    int version = 0;
    if (sqlite3_prepare_v2 (self->db, "SELECT value FROM kb_meta WHERE key = 'version'", -1,
                            &st, NULL) == SQLITE_OK
    &&  sqlite3_step (st) == SQLITE_ROW)
        version = atoi ((const char *) sqlite3_column_text (st, 0));
    sqlite3_finalize (st);
    return version;
}

ufo_kb_t *
ufo_kb_open (const char *path, ufo_error_t *err)
{
    assert (path);
    ufo_kb_t *self = ufo_calloc (1, sizeof *self);
    self->path = ufo_strdup (path);
    if (strcmp (path, ":memory:") != 0 && strchr (path, '/'))
        s_mkdir_parent (path);
    if (sqlite3_open_v2 (path, &self->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                         | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        s_fail (self, err, "open");
        ufo_kb_destroy (&self);
        return NULL;
    }
    sqlite3_busy_timeout (self->db, 2000);
    //  a file of another format fails here ("file is not a database") and is left alone
    if (s_exec (self, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", err) != 0) {
        ufo_kb_destroy (&self);
        return NULL;
    }
    int version = 0;
    sqlite3_stmt *probe = NULL;
    bool has_meta = sqlite3_prepare_v2 (self->db, "SELECT 1 FROM kb_meta", -1, &probe, NULL)
                    == SQLITE_OK;
    sqlite3_finalize (probe);
    if (has_meta)
        version = s_version (self);
    if (has_meta && version != S_SCHEMA_VERSION) {
        ufo_info ("knowledge index %s: version %d, rebuilding as version %d", path, version,
                  S_SCHEMA_VERSION);
        if (s_exec (self, "DROP TABLE IF EXISTS kb_fts; DROP TABLE IF EXISTS kb_passages;"
                          "DROP TABLE IF EXISTS kb_sources; DROP TABLE IF EXISTS kb_meta;", err)) {
            ufo_kb_destroy (&self);
            return NULL;
        }
    }
    char version_sql [128];
    snprintf (version_sql, sizeof version_sql,
              "INSERT OR REPLACE INTO kb_meta (key, value) VALUES ('version', '%d');",
              S_SCHEMA_VERSION);
    if (s_exec (self, s_schema, err) || s_exec (self, version_sql, err)
    ||  s_prepare (self, "INSERT INTO kb_passages (kind, app, source, title, text, ref)"
                         " VALUES (?, ?, ?, ?, ?, ?)", &self->add, err)
    ||  s_prepare (self, "UPDATE kb_passages SET vec = ? WHERE id = ?", &self->add_vec, err)
    ||  s_prepare (self, "SELECT mtime, size FROM kb_sources WHERE source = ?", &self->src_get, err)
    ||  s_prepare (self, "INSERT OR REPLACE INTO kb_sources (source, kind, app, mtime, size)"
                         " VALUES (?, ?, ?, ?, ?)", &self->src_set, err)) {
        ufo_kb_destroy (&self);
        return NULL;
    }
    return self;
}

void
ufo_kb_destroy (ufo_kb_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_kb_t *self = *self_p;
    sqlite3_finalize (self->add);
    sqlite3_finalize (self->add_vec);
    sqlite3_finalize (self->src_get);
    sqlite3_finalize (self->src_set);
    if (self->db)
        sqlite3_close (self->db);
    free (self->path);
    free (self);
    *self_p = NULL;
}

int
ufo_kb_begin (ufo_kb_t *self, ufo_error_t *err)
{
    return s_exec (self, "BEGIN IMMEDIATE", err);
}

int
ufo_kb_commit (ufo_kb_t *self, ufo_error_t *err)
{
    if (s_exec (self, "COMMIT", err) == 0)
        return 0;
    sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

bool
ufo_kb_source_get (ufo_kb_t *self, const char *source, int64_t *mtime_p, int64_t *size_p)
{
    sqlite3_stmt *st = self->src_get;
    sqlite3_reset (st);
    sqlite3_bind_text (st, 1, source, -1, SQLITE_TRANSIENT);
    bool found = sqlite3_step (st) == SQLITE_ROW;
    if (found) {
        if (mtime_p)
            *mtime_p = sqlite3_column_int64 (st, 0);
        if (size_p)
            *size_p = sqlite3_column_int64 (st, 1);
    }
    sqlite3_reset (st);
    return found;
}

int
ufo_kb_source_set (ufo_kb_t *self, const char *source, const char *kind, const char *app,
                   int64_t mtime, int64_t size, ufo_error_t *err)
{
    sqlite3_stmt *st = self->src_set;
    sqlite3_reset (st);
    sqlite3_bind_text (st, 1, source, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text (st, 2, kind ? kind : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text (st, 3, app ? app : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64 (st, 4, mtime);
    sqlite3_bind_int64 (st, 5, size);
    int rc = sqlite3_step (st);
    sqlite3_reset (st);
    return rc == SQLITE_DONE ? 0 : s_fail (self, err, "source");
}

int
ufo_kb_source_remove (ufo_kb_t *self, const char *source, ufo_error_t *err)
{
    sqlite3_stmt *st = NULL;
    if (s_prepare (self, "DELETE FROM kb_passages WHERE source = ?", &st, err))
        return -1;
    sqlite3_bind_text (st, 1, source, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step (st);
    sqlite3_finalize (st);
    if (rc != SQLITE_DONE)
        return s_fail (self, err, "remove");
    int removed = sqlite3_changes (self->db);
    if (s_prepare (self, "DELETE FROM kb_sources WHERE source = ?", &st, err))
        return -1;
    sqlite3_bind_text (st, 1, source, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step (st);
    sqlite3_finalize (st);
    return rc == SQLITE_DONE ? removed : s_fail (self, err, "remove");
}

ufo_value_t *
ufo_kb_sources (ufo_kb_t *self, const char *kind, const char *app)
{
    ufo_value_t *list = ufo_value_new_list ();
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (self->db, "SELECT source FROM kb_sources WHERE (?1 IS NULL OR kind = ?1)"
                            " AND (?2 IS NULL OR app = ?2) ORDER BY source", -1, &st, NULL)
        != SQLITE_OK)
        return list;
    if (kind)
        sqlite3_bind_text (st, 1, kind, -1, SQLITE_TRANSIENT);
    if (app)
        sqlite3_bind_text (st, 2, app, -1, SQLITE_TRANSIENT);
    while (sqlite3_step (st) == SQLITE_ROW)
        ufo_value_list_push_str (list, (const char *) sqlite3_column_text (st, 0));
    sqlite3_finalize (st);
    return list;
}

int64_t
ufo_kb_add (ufo_kb_t *self, const ufo_kb_passage_t *p, ufo_error_t *err)
{
    assert (p && p->kind && p->source);
    const char *fields [] = { p->kind, p->app ? p->app : "", p->source,
                              p->title ? p->title : "", p->text ? p->text : "",
                              p->ref ? p->ref : "" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++)
        if (!ufo_utf8_valid (fields [i], strlen (fields [i])))
            return ufo_error_set (err, UFO_E_UTF8, "passage of %s: not valid UTF-8", p->source);
    sqlite3_stmt *st = self->add;
    sqlite3_reset (st);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++)
        sqlite3_bind_text (st, (int) i + 1, fields [i], -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step (st);
    sqlite3_reset (st);
    if (rc != SQLITE_DONE)
        return s_fail (self, err, "add");
    return sqlite3_last_insert_rowid (self->db);
}

int
ufo_kb_set_vector (ufo_kb_t *self, int64_t id, const float *vec, size_t n, ufo_error_t *err)
{
    if (!vec || n == 0 || n > 65536)
        return ufo_error_set (err, UFO_E_INVALID, "embedding of passage %" PRId64 ": %zu floats",
                              id, n);
    sqlite3_stmt *st = self->add_vec;
    sqlite3_reset (st);
    sqlite3_bind_blob (st, 1, vec, (int) (n * sizeof (float)), SQLITE_TRANSIENT);
    sqlite3_bind_int64 (st, 2, id);
    int rc = sqlite3_step (st);
    sqlite3_reset (st);
    return rc == SQLITE_DONE ? 0 : s_fail (self, err, "vector");
}

ufo_value_t *
ufo_kb_without_vector (ufo_kb_t *self, size_t max)
{
    ufo_value_t *list = ufo_value_new_list ();
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (self->db, "SELECT id, title, text FROM kb_passages WHERE vec IS NULL"
                            " ORDER BY id LIMIT ?", -1, &st, NULL) != SQLITE_OK)
        return list;
    sqlite3_bind_int64 (st, 1, (int64_t) max);
    while (sqlite3_step (st) == SQLITE_ROW) {
        ufo_value_t *row = ufo_value_new_map ();
        ufo_value_map_set_int (row, "id", sqlite3_column_int64 (st, 0));
        ufo_value_t *text = ufo_value_new_stringf ("%s\n%s", sqlite3_column_text (st, 1),
                                                   sqlite3_column_text (st, 2));
        ufo_value_map_set (row, "text", &text);
        ufo_value_list_push (list, &row);
    }
    sqlite3_finalize (st);
    return list;
}

//  Words too common to help a search (English; the help is searched in its C locale).
static bool
s_stopword (const char *w, size_t len)
{
    static const char *const words [] = {
        "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
        "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "the", "this",
        "that", "to", "what", "when", "where", "which", "with", "you", "your", "use", "using",
        "want", "get", "there", "way", "should", "would", "will", "into", "about", NULL };
    for (size_t i = 0; words [i]; i++)
        if (strlen (words [i]) == len && memcmp (words [i], w, len) == 0)
            return true;
    return false;
}

//  Free text -> an FTS5 query: each word quoted (so FTS operators in the text do nothing),
//  joined with OR. Returns false when no word is left.
static bool
s_fts_query (const char *query, ufo_buf_t *out)
{
    size_t terms = 0;
    const unsigned char *s = (const unsigned char *) query;
    while (*s && terms < S_MAX_TERMS) {
        while (*s && !(isalnum (*s) || *s >= 0x80))
            s++;
        const unsigned char *start = s;
        while (*s && (isalnum (*s) || *s >= 0x80))
            s++;
        size_t len = (size_t) (s - start);
        if (len == 0)
            continue;
        char word [64];
        if (len >= sizeof word)
            len = ufo_utf8_prefix ((const char *) start, len, sizeof word - 1);
        for (size_t i = 0; i < len; i++)
            word [i] = (char) tolower (start [i]);
        word [len] = '\0';
        if (s_stopword (word, len) || (len == 1 && !isdigit ((unsigned char) word [0])))
            continue;
        if (!ufo_utf8_valid (word, len))
            continue;
        ufo_buf_printf (out, "%s\"%s\"", terms ? " OR " : "", word);
        terms++;
    }
    return terms > 0;
}

static double
s_cosine (const float *a, const float *b, size_t n)
{
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        dot += (double) a [i] * b [i];
        na += (double) a [i] * a [i];
        nb += (double) b [i] * b [i];
    }
    return na > 0 && nb > 0 ? dot / (sqrt (na) * sqrt (nb)) : 0;
}

static ufo_value_t *
s_row (sqlite3_stmt *st, double score)
{
    ufo_value_t *hit = ufo_value_new_map ();
    ufo_value_map_set_int (hit, "id", sqlite3_column_int64 (st, 0));
    static const char *const names [] = { "kind", "app", "source", "title", "text", "ref" };
    for (int i = 0; i < 6; i++)
        ufo_value_map_set_str (hit, names [i], (const char *) sqlite3_column_text (st, i + 1));
    ufo_value_map_set_float (hit, "score", score);
    return hit;
}

typedef struct {
    ufo_value_t *hit;
    double score;
} s_ranked_t;

static int
s_by_score (const void *a, const void *b)
{
    double x = ((const s_ranked_t *) a)->score, y = ((const s_ranked_t *) b)->score;
    return x < y ? 1 : x > y ? -1 : 0;
}

//  Exact cosine over every passage with a vector (kind/app filtered), plus a bonus for the
//  BM25 ranks in bm25 (a list of hits, best first). Returns the new top list.
static ufo_value_t *
s_rerank (ufo_kb_t *self, const ufo_value_t *bm25, const char *kind, const char *app,
          size_t topk, const float *qvec, size_t n)
{
    sqlite3_stmt *st = NULL;
    ufo_value_t *out = ufo_value_new_list ();
    if (sqlite3_prepare_v2 (self->db, "SELECT id, kind, app, source, title, text, ref, vec"
                            " FROM kb_passages WHERE vec IS NOT NULL AND (?1 IS NULL OR kind = ?1)"
                            " AND (?2 IS NULL OR app = ?2)", -1, &st, NULL) != SQLITE_OK)
        return out;
    if (kind)
        sqlite3_bind_text (st, 1, kind, -1, SQLITE_TRANSIENT);
    if (app)
        sqlite3_bind_text (st, 2, app, -1, SQLITE_TRANSIENT);
    size_t count = 0, cap = 64;
    s_ranked_t *ranked = ufo_malloc (cap * sizeof *ranked);
    while (sqlite3_step (st) == SQLITE_ROW) {
        size_t bytes = (size_t) sqlite3_column_bytes (st, 7);
        if (bytes != n * sizeof (float))
            continue;           //  a vector of another model: not comparable
        double score = s_cosine (qvec, sqlite3_column_blob (st, 7), n);
        int64_t id = sqlite3_column_int64 (st, 0);
        for (size_t r = 0; r < ufo_value_size (bm25); r++)
            if (ufo_value_map_int (ufo_value_list_at (bm25, r), "id", 0) == id)
                score += S_BM25_BONUS / (double) (r + 1);
        if (count == cap)
            ranked = ufo_realloc (ranked, (cap *= 2) * sizeof *ranked);
        ranked [count].hit = s_row (st, score);
        ranked [count].score = score;
        count++;
    }
    sqlite3_finalize (st);
    qsort (ranked, count, sizeof *ranked, s_by_score);
    for (size_t i = 0; i < count; i++) {
        if (i < topk)
            ufo_value_list_push (out, &ranked [i].hit);
        else
            ufo_value_destroy (&ranked [i].hit);
    }
    free (ranked);
    return out;
}

ufo_value_t *
ufo_kb_search (ufo_kb_t *self, const char *query, const char *kind, const char *app,
               size_t topk, const float *qvec, size_t n, ufo_error_t *err)
{
    ufo_value_t *hits = ufo_value_new_list ();
    if (topk == 0)
        return hits;
    ufo_buf_t fts;
    ufo_buf_init (&fts);
    bool any = query && s_fts_query (query, &fts);
    if (any) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2 (self->db,
                "SELECT p.id, p.kind, p.app, p.source, p.title, p.text, p.ref,"
                " bm25(kb_fts, 4.0, 1.0) AS rank FROM kb_fts JOIN kb_passages p"
                " ON p.id = kb_fts.rowid WHERE kb_fts MATCH ?1 AND (?2 IS NULL OR p.kind = ?2)"
                " AND (?3 IS NULL OR p.app = ?3) ORDER BY rank LIMIT ?4", -1, &st, NULL)
            != SQLITE_OK) {
            s_fail (self, err, "search");
            ufo_buf_free (&fts);
            ufo_value_destroy (&hits);
            return NULL;
        }
        sqlite3_bind_text (st, 1, fts.data, (int) fts.len, SQLITE_TRANSIENT);
        if (kind)
            sqlite3_bind_text (st, 2, kind, -1, SQLITE_TRANSIENT);
        if (app)
            sqlite3_bind_text (st, 3, app, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64 (st, 4, (int64_t) (qvec ? S_RERANK_POOL : topk));
        int rc;
        while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
            ufo_value_t *hit = s_row (st, -sqlite3_column_double (st, 7));
            ufo_value_list_push (hits, &hit);
        }
        sqlite3_finalize (st);
        if (rc != SQLITE_DONE) {
            s_fail (self, err, "search");
            ufo_buf_free (&fts);
            ufo_value_destroy (&hits);
            return NULL;
        }
    }
    ufo_buf_free (&fts);
    if (qvec && n > 0) {
        ufo_value_t *reranked = s_rerank (self, hits, kind, app, topk, qvec, n);
        if (ufo_value_size (reranked) > 0) {
            ufo_value_destroy (&hits);
            return reranked;
        }
        ufo_value_destroy (&reranked);      //  no vectors: BM25 alone
        while (ufo_value_size (hits) > topk)
            ufo_value_list_remove (hits, ufo_value_size (hits) - 1);
    }
    return hits;
}

int64_t
ufo_kb_count (ufo_kb_t *self, const char *kind)
{
    sqlite3_stmt *st = NULL;
    int64_t count = 0;
    if (sqlite3_prepare_v2 (self->db, "SELECT count(*) FROM kb_passages WHERE ?1 IS NULL OR kind = ?1",
                            -1, &st, NULL) != SQLITE_OK)
        return 0;
    if (kind)
        sqlite3_bind_text (st, 1, kind, -1, SQLITE_TRANSIENT);
    if (sqlite3_step (st) == SQLITE_ROW)
        count = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    return count;
}

const char *
ufo_kb_path (const ufo_kb_t *self)
{
    return self->path;
}
