/*  ufo_knowledge.c - finding and indexing offline help (see ufo_knowledge.h). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_kb.h"
#include "ufo_helpdoc.h"
#include "ufo_knowledge.h"
#include <dirent.h>

#define S_MAX_DEPTH 4           //  directory levels walked below an application's help
#define S_KIND "help"

void
ufo_knowledge_opts_from_config (ufo_knowledge_opts_t *opts, const ufo_config_t *config)
{
    memset (opts, 0, sizeof *opts);
    opts->help_dirs = ufo_config_get (config, "knowledge.help_dirs");
    opts->lang = ufo_config_str (config, "knowledge.help_lang", "C");
    opts->man_dirs = ufo_config_get (config, "knowledge.man_dirs");
    opts->launchers = ufo_config_get (config, "desktop.launchers");
    opts->folders = ufo_config_get (config, "knowledge.folders");
    opts->max_file_bytes = (size_t) ufo_config_int (config, "knowledge.max_file_bytes", 1048576);
}

bool
ufo_knowledge_index_path (const ufo_config_t *config, char *out, size_t size)
{
    const char *path = ufo_config_str (config, "knowledge.index", "run/knowledge.db");
    return (size_t) snprintf (out, size, "%s", path) < size;
}

//  --- finding the documents --------------------------------------------------------------------

typedef struct {
    ufo_value_t *files;         //  list of {"path", "app"}
    ufo_value_t *seen;          //  map path -> true, against duplicates
} s_found_t;

static void
s_add (s_found_t *found, const char *path, const char *app)
{
    if (ufo_value_map_has (found->seen, path))
        return;
    ufo_value_map_set_bool (found->seen, path, true);
    ufo_value_t *f = ufo_value_new_map ();
    ufo_value_map_set_str (f, "path", path);
    ufo_value_map_set_str (f, "app", app);
    ufo_value_list_push (found->files, &f);
}

static int
s_name_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

//  Sorted entry names of a directory (without . and ..); NULL when it cannot be read.
static char **
s_list_dir (const char *dir, size_t *count_p)
{
    DIR *d = opendir (dir);
    if (!d)
        return NULL;
    size_t count = 0, cap = 16;
    char **names = ufo_malloc (cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name [0] == '.')
            continue;
        if (count == cap)
            names = ufo_realloc (names, (cap *= 2) * sizeof *names);
        names [count++] = ufo_strdup (e->d_name);
    }
    closedir (d);
    qsort (names, count, sizeof *names, s_name_cmp);
    *count_p = count;
    return names;
}

static void
s_free_names (char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free (names [i]);
    free (names);
}

//  Walks dir for documents whose format is one of formats ("mallard docbook" ...).
static void
s_walk (s_found_t *found, const char *dir, const char *app, const char *formats, int depth)
{
    size_t count = 0;
    char **names = s_list_dir (dir, &count);
    if (!names)
        return;
    for (size_t i = 0; i < count; i++) {
        char path [PATH_MAX];
        if ((size_t) snprintf (path, sizeof path, "%s/%s", dir, names [i]) >= sizeof path)
            continue;
        struct stat st;
        if (stat (path, &st) != 0)
            continue;
        if (S_ISDIR (st.st_mode)) {
            if (depth < S_MAX_DEPTH)
                s_walk (found, path, app, formats, depth + 1);
        }
        else {
            const char *format = ufo_helpdoc_format (path);
            if (S_ISREG (st.st_mode) && format && strstr (formats, format))
                s_add (found, path, app);
        }
    }
    s_free_names (names, count);
}

static bool
s_wanted (const ufo_knowledge_opts_t *opts, const char *app)
{
    return !opts->app || strcmp (opts->app, app) == 0;
}

static void
s_find_help (s_found_t *found, const ufo_knowledge_opts_t *opts)
{
    for (size_t h = 0; h < ufo_value_size (opts->help_dirs); h++) {
        const char *root = ufo_value_str (ufo_value_list_at (opts->help_dirs, h));
        char dir [PATH_MAX];
        if (!root || (size_t) snprintf (dir, sizeof dir, "%s/%s", root,
                                        opts->lang ? opts->lang : "C") >= sizeof dir)
            continue;
        size_t count = 0;
        char **apps = s_list_dir (dir, &count);
        for (size_t i = 0; apps && i < count; i++) {
            char app_dir [PATH_MAX];
            if (!s_wanted (opts, apps [i])
            ||  (size_t) snprintf (app_dir, sizeof app_dir, "%s/%s", dir, apps [i]) >= sizeof app_dir)
                continue;
            s_walk (found, app_dir, apps [i], "mallard docbook", 1);
        }
        if (apps)
            s_free_names (apps, count);
    }
}

//  The man page of program prog in the man directories (sections 1, 6, 8).
static void
s_find_man (s_found_t *found, const ufo_knowledge_opts_t *opts, const char *prog, const char *app)
{
    static const char *const sections [] = { "1", "6", "8" };
    for (size_t m = 0; m < ufo_value_size (opts->man_dirs); m++) {
        const char *root = ufo_value_str (ufo_value_list_at (opts->man_dirs, m));
        for (size_t s = 0; root && s < UFO_ARRAY_SIZE (sections); s++)
            for (int gz = 1; gz >= 0; gz--) {
                char path [PATH_MAX];
                snprintf (path, sizeof path, "%s/man%s/%s.%s%s", root, sections [s], prog,
                          sections [s], gz ? ".gz" : "");
                if (access (path, R_OK) == 0) {
                    s_add (found, path, app);
                    return;
                }
            }
    }
}

static void
s_find_launchers (s_found_t *found, const ufo_knowledge_opts_t *opts)
{
    const ufo_value_t *launchers = opts->launchers;
    for (size_t i = 0; i < ufo_value_size (launchers) && ufo_value_type (launchers) == UFO_TMAP; i++) {
        const char *name = ufo_value_map_key_at (launchers, i);
        const ufo_value_t *argv = ufo_value_map_value_at (launchers, i);
        const char *prog = ufo_value_str (ufo_value_list_at (argv, 0));
        if (!s_wanted (opts, name) || !prog || !*prog)
            continue;
        const char *slash = strrchr (prog, '/');
        s_find_man (found, opts, slash ? slash + 1 : prog, name);
    }
}

static void
s_find_folders (s_found_t *found, const ufo_knowledge_opts_t *opts)
{
    const ufo_value_t *folders = opts->folders;
    for (size_t i = 0; i < ufo_value_size (folders) && ufo_value_type (folders) == UFO_TMAP; i++) {
        const char *app = ufo_value_map_key_at (folders, i);
        const ufo_value_t *dirs = ufo_value_map_value_at (folders, i);
        if (!s_wanted (opts, app))
            continue;
        for (size_t d = 0; d < ufo_value_size (dirs); d++) {
            const char *dir = ufo_value_str (ufo_value_list_at (dirs, d));
            if (dir)
                s_walk (found, dir, app, "markdown text", 1);
        }
    }
}

//  --- indexing -----------------------------------------------------------------------------

typedef struct {
    ufo_kb_t *kb;
    const char *app;
    const char *source;
    size_t added;
    bool failed;
    ufo_error_t err;
} s_adder_t;

static void
s_add_passage (const char *title, const char *text, const char *ref, void *arg)
{
    s_adder_t *adder = arg;
    if (adder->failed)
        return;
    ufo_kb_passage_t p = { S_KIND, adder->app, adder->source, title, text, ref };
    if (ufo_kb_add (adder->kb, &p, &adder->err) < 0)
        adder->failed = true;
    else
        adder->added++;
}

int
ufo_knowledge_index (ufo_kb_t *kb, const ufo_knowledge_opts_t *opts,
                     ufo_knowledge_progress_fn *progress, void *arg,
                     ufo_knowledge_stats_t *stats, ufo_error_t *err)
{
    assert (kb && opts && stats);
    memset (stats, 0, sizeof *stats);
    s_found_t found = { ufo_value_new_list (), ufo_value_new_map () };
    s_find_help (&found, opts);
    s_find_launchers (&found, opts);
    s_find_folders (&found, opts);
    size_t total = ufo_value_size (found.files);
    stats->files = total;
    int rc = ufo_kb_begin (kb, err);
    for (size_t i = 0; rc == 0 && i < total; i++) {
        const ufo_value_t *f = ufo_value_list_at (found.files, i);
        const char *path = ufo_value_map_str (f, "path", "");
        const char *app = ufo_value_map_str (f, "app", "");
        if (progress)
            progress (i, total, path, arg);
        struct stat st;
        if (stat (path, &st) != 0)
            continue;
        int64_t mtime = 0, size = 0;
        if (ufo_kb_source_get (kb, path, &mtime, &size) && mtime == (int64_t) st.st_mtime
        &&  size == (int64_t) st.st_size) {
            stats->unchanged++;
            continue;
        }
        if (ufo_kb_source_remove (kb, path, err) < 0) {
            rc = -1;
            break;
        }
        s_adder_t adder = { kb, app, path, 0, false, {0} };
        ufo_error_t perr = {0};
        if (ufo_helpdoc_parse (path, opts->max_file_bytes ? opts->max_file_bytes : 1048576,
                               s_add_passage, &adder, &perr) < 0) {
            ufo_warn ("knowledge: skipped %s", perr.message);
            stats->skipped++;
        }
        else
        if (adder.failed) {
            //  a passage the index refused (the file's fault, e.g. a title cut mid-character)
            ufo_warn ("knowledge: skipped %s: %s", path, adder.err.message);
            ufo_kb_source_remove (kb, path, NULL);
            stats->skipped++;
        }
        else {
            stats->indexed++;
            stats->passages += adder.added;
        }
        //  remembered even when skipped, so an unchanged bad file is not read again
        if (ufo_kb_source_set (kb, path, S_KIND, app, (int64_t) st.st_mtime,
                               (int64_t) st.st_size, err) != 0)
            rc = -1;
    }
    if (rc == 0) {
        //  sources that disappeared (of the applications looked at)
        ufo_value_t *known = ufo_kb_sources (kb, S_KIND, opts->app);
        for (size_t i = 0; i < ufo_value_size (known); i++) {
            const char *source = ufo_value_str (ufo_value_list_at (known, i));
            if (!ufo_value_map_has (found.seen, source) && ufo_kb_source_remove (kb, source, NULL) >= 0)
                stats->removed++;
        }
        ufo_value_destroy (&known);
        rc = ufo_kb_commit (kb, err);
    }
    else
        ufo_kb_commit (kb, NULL);       //  keep what was done before the failure
    if (progress)
        progress (total, total, NULL, arg);
    ufo_value_destroy (&found.files);
    ufo_value_destroy (&found.seen);
    return rc;
}

ufo_value_t *
ufo_knowledge_retrieve (ufo_kb_t *kb, const char *kind, const char *query, const char *app,
                        size_t topk, size_t max_text)
{
    return ufo_knowledge_retrieve_ranked (kb, kind, query, app, topk, max_text, NULL, 0);
}

ufo_value_t *
ufo_knowledge_retrieve_ranked (ufo_kb_t *kb, const char *kind, const char *query, const char *app,
                               size_t topk, size_t max_text, const float *qvec, size_t n)
{
    ufo_value_t *out = ufo_value_new_list ();
    if (!kb || !query || topk == 0)
        return out;
    ufo_error_t err = {0};
    ufo_value_t *hits = ufo_kb_search (kb, query, kind, app, topk, qvec, n, &err);
    if (!hits) {
        ufo_warn ("knowledge: search failed: %s", err.message);
        return out;
    }
    for (size_t i = 0; i < ufo_value_size (hits); i++) {
        const ufo_value_t *hit = ufo_value_list_at (hits, i);
        ufo_value_t *row = ufo_value_new_map ();
        ufo_value_map_set_str (row, "title", ufo_value_map_str (hit, "title", ""));
        const char *text = ufo_value_map_str (hit, "text", "");
        size_t len = strlen (text);
        if (max_text && len > max_text) {
            size_t cut = ufo_utf8_prefix (text, len, max_text);
            ufo_value_t *cut_text = ufo_value_new_stringf ("%.*s...", (int) cut, text);
            ufo_value_map_set (row, "text", &cut_text);
        }
        else
            ufo_value_map_set_str (row, "text", text);
        ufo_value_map_set_str (row, "source", ufo_value_map_str (hit, "source", ""));
        ufo_value_map_set_str (row, "ref", ufo_value_map_str (hit, "ref", ""));
        ufo_value_map_set_float (row, "score", ufo_value_map_float (hit, "score", 0));
        ufo_value_list_push (out, &row);
    }
    ufo_value_destroy (&hits);
    return out;
}
