/*  ufo_cmd_knowledge.c - `ufo knowledge index|search ...`: the knowledge index of the agents
    (docs/KNOWLEDGE.md).
      ufo knowledge index [--app NAME] [--config FILE] [--index FILE]
          indexes the installed help, the launchers' man pages and the configured note
          folders, incrementally; progress on a terminal, a summary at the end.
      ufo knowledge search "QUERY" [--app NAME] [--top N] [--kind KIND] [--json]
          prints what an agent would retrieve for QUERY.
      ufo knowledge list | show ID | delete ID [--broker EP] [--json]
          the experience records on the broker. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_embed.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_json.h"
#include "ufo_kb.h"
#include "ufo_knowledge.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"

static void
s_help (void)
{
    ufo_cli_usage (stdout, "knowledge");
    printf ("\nSubcommands:\n"
            "  index [--app NAME]            index help documents (changed files only)\n"
            "  search \"QUERY\" [--app NAME]   the best passages for QUERY\n"
            "  list                          the experience records on the broker\n"
            "  show ID                       one experience record\n"
            "  delete ID                     deletes an experience record\n"
            "  import-plan FILE --app NAME   a UFO plan file (task, steps) as a demonstration\n"
            "  (list, show, delete: --kind demonstration for demonstrations)\n"
            "Options:\n"
            "  --app NAME      only this application\n"
            "  --config FILE   configuration (knowledge.* keys)\n"
            "  --index FILE    the index file (default: knowledge.index)\n"
            "  --top N         search: passages shown (default 5)\n"
            "  --kind KIND     search: help (default), or any kind stored in the index\n"
            "  --json          search, list, show: print JSON\n"
            "  --broker EP     list, show, delete: broker command endpoint (default: the one\n"
            "                  `ufo up` started, else the configuration)\n"
            "Exit status: 0 done, 1 failed, 2 bad usage.\n");
}

typedef struct {
    const char *sub, *query, *app, *config_path, *index_path, *kind, *broker;
    int64_t top;
    bool json, kind_given;
} s_args_t;

static int
s_parse (int argc, char **argv, s_args_t *a)
{
    memset (a, 0, sizeof *a);
    a->top = 5;
    a->kind = "help";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_help ();
            return 1;
        }
        if (strcmp (arg, "--json") == 0) {
            a->json = true;
            continue;
        }
        const char **slot = strcmp (arg, "--app") == 0 ? &a->app
                          : strcmp (arg, "--config") == 0 ? &a->config_path
                          : strcmp (arg, "--index") == 0 ? &a->index_path
                          : strcmp (arg, "--kind") == 0 ? &a->kind
                          : strcmp (arg, "--broker") == 0 ? &a->broker : NULL;
        if (strcmp (arg, "--top") == 0) {
            char *end = NULL;
            if (i + 1 >= argc || (a->top = strtoll (argv [i + 1], &end, 10)) < 1 || a->top > 1000
            ||  *end) {
                fprintf (stderr, "ufo knowledge: --top needs a number 1..1000\n");
                return -1;
            }
            i++;
            continue;
        }
        if (slot) {
            if (i + 1 >= argc) {
                fprintf (stderr, "ufo knowledge: %s needs a value\n", arg);
                return -1;
            }
            *slot = argv [++i];
            a->kind_given |= slot == &a->kind;
        }
        else
        if (arg [0] == '-') {
            fprintf (stderr, "ufo knowledge: unknown option %s\n", arg);
            return -1;
        }
        else
        if (!a->sub)
            a->sub = arg;
        else
        if (!a->query)
            a->query = arg;
        else {
            fprintf (stderr, "ufo knowledge: unexpected argument %s\n", arg);
            return -1;
        }
    }
    if (!a->sub) {
        ufo_cli_usage (stderr, "knowledge");
        return -1;
    }
    return 0;
}

static void
s_progress (size_t done, size_t total, const char *path, void *arg)
{
    UFO_UNUSED (arg);
    if (path)
        fprintf (stderr, "\r\033[K[%zu/%zu] %.100s", done + 1, total, path);
    else
        fprintf (stderr, "\r\033[K");
}

//  Embeddings (knowledge.embeddings_url): vectors for the passages that have none, in
//  batches. Returns the number stored; on a failure it says so and stops (BM25 still works).
static size_t
s_embed_passages (ufo_kb_t *kb, const ufo_embed_opts_t *eopts)
{
    size_t stored = 0;
    float *vec = ufo_malloc (65536 * sizeof (float));
    for (;;) {
        ufo_value_t *todo = ufo_kb_without_vector (kb, 64);
        if (ufo_value_size (todo) == 0) {
            ufo_value_destroy (&todo);
            break;
        }
        ufo_value_t *texts = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (todo); i++)
            ufo_value_list_push_str (texts, ufo_value_map_str (ufo_value_list_at (todo, i), "text", ""));
        ufo_error_t err = {0};
        ufo_value_t *vectors = ufo_embed_texts (eopts, texts, &err);
        bool ok = vectors != NULL && ufo_kb_begin (kb, &err) == 0;
        for (size_t i = 0; ok && i < ufo_value_size (todo); i++) {
            size_t n = ufo_embed_floats (ufo_value_list_at (vectors, i), vec, 65536);
            ok = n > 0 && ufo_kb_set_vector (kb, ufo_value_map_int (ufo_value_list_at (todo, i), "id", 0),
                                             vec, n, &err) == 0;
            stored += ok;
        }
        if (vectors)
            ok = ufo_kb_commit (kb, &err) == 0 && ok;
        ufo_value_destroy (&vectors);
        ufo_value_destroy (&texts);
        ufo_value_destroy (&todo);
        if (!ok) {
            fprintf (stderr, "ufo knowledge: embeddings stopped (search uses BM25 alone for the rest): %s\n",
                     err.message);
            break;
        }
    }
    free (vec);
    return stored;
}

static int
s_index (ufo_kb_t *kb, const ufo_config_t *config, const s_args_t *a)
{
    ufo_knowledge_opts_t opts;
    ufo_knowledge_opts_from_config (&opts, config);
    opts.app = a->app;
    ufo_knowledge_stats_t stats;
    ufo_error_t err = {0};
    int64_t start = ufo_time_mono_ms ();
    if (ufo_knowledge_index (kb, &opts, isatty (2) ? s_progress : NULL, NULL, &stats, &err) != 0) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    printf ("%zu documents: %zu indexed (%zu passages), %zu unchanged, %zu skipped, %zu removed"
            " in %.2f s; %" PRId64 " help passages in %s\n", stats.files, stats.indexed,
            stats.passages, stats.unchanged, stats.skipped, stats.removed,
            (double) (ufo_time_mono_ms () - start) / 1000.0, ufo_kb_count (kb, "help"),
            ufo_kb_path (kb));
    ufo_embed_opts_t eopts;
    if (ufo_embed_opts_from_config (&eopts, config))
        printf ("%zu passages embedded (%s)\n", s_embed_passages (kb, &eopts), eopts.model);
    return UFO_CLI_OK;
}

static int
s_search (ufo_kb_t *kb, const ufo_config_t *config, const s_args_t *a)
{
    if (!a->query || !*a->query) {
        fprintf (stderr, "ufo knowledge: search needs a QUERY\n");
        return UFO_CLI_USAGE;
    }
    ufo_error_t err = {0};
    //  with embeddings: the query's vector re-ranks by cosine; without (or when the
    //  endpoint fails): BM25 alone
    float *qvec = NULL;
    size_t qlen = 0;
    ufo_embed_opts_t eopts;
    if (ufo_embed_opts_from_config (&eopts, config)) {
        ufo_value_t *texts = ufo_value_new_list ();
        ufo_value_list_push_str (texts, a->query);
        ufo_value_t *vectors = ufo_embed_texts (&eopts, texts, &err);
        if (vectors) {
            qvec = ufo_malloc (65536 * sizeof (float));
            qlen = ufo_embed_floats (ufo_value_list_at (vectors, 0), qvec, 65536);
        }
        else
            fprintf (stderr, "ufo knowledge: no query embedding, BM25 alone: %s\n", err.message);
        ufo_value_destroy (&vectors);
        ufo_value_destroy (&texts);
    }
    ufo_value_t *hits = ufo_kb_search (kb, a->query, a->kind, a->app, (size_t) a->top,
                                       qlen ? qvec : NULL, qlen, &err);
    free (qvec);
    if (!hits) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    if (a->json) {
        char *text = ufo_json_dump (hits, UFO_JSON_COMPACT, NULL);
        printf ("%s\n", text);
        free (text);
    }
    else {
        if (ufo_value_size (hits) == 0)
            printf ("no passage matches\n");
        for (size_t i = 0; i < ufo_value_size (hits); i++) {
            const ufo_value_t *hit = ufo_value_list_at (hits, i);
            printf ("%zu. %s  [%s, %.2f]\n   %s\n", i + 1, ufo_value_map_str (hit, "title", ""),
                    ufo_value_map_str (hit, "app", ""), ufo_value_map_float (hit, "score", 0),
                    ufo_value_map_str (hit, "source", ""));
            const char *text = ufo_value_map_str (hit, "text", "");
            size_t cut = ufo_utf8_prefix (text, strlen (text), 240);
            printf ("   %.*s%s\n", (int) cut, text, text [cut] ? "..." : "");
        }
    }
    ufo_value_destroy (&hits);
    return UFO_CLI_OK;
}

static void
s_print_record (const ufo_value_t *record)
{
    printf ("%s\n  request: %s\n  saved %s on %s (session %s, evaluation: %s)\n",
            ufo_value_map_str (record, "id", ""), ufo_value_map_str (record, "request", ""),
            ufo_value_map_str (record, "saved_at", "?"), ufo_value_map_str (record, "device", "?"),
            ufo_value_map_str (record, "session", "?"), ufo_value_map_str (record, "evaluation", "?"));
}

//  A UFO plan file ({"task": str, "steps": [str], "object": ...}, the original's follower
//  mode) as a demonstration record: one subtask per plan step. NULL with err.
static ufo_value_t *
s_plan_record (const char *path, const char *app, ufo_error_t *err)
{
    ufo_value_t *plan = ufo_json_parse_file (path, NULL, err);
    if (!plan)
        return NULL;
    const char *task = ufo_value_map_str (plan, "task", NULL);
    const ufo_value_t *steps = ufo_value_map_get (plan, "steps");
    ufo_value_t *record = NULL;
    if (!task || !*task || ufo_value_type (steps) != UFO_TLIST || ufo_value_size (steps) == 0)
        ufo_error_set (err, UFO_E_MISSING, "%s: a plan needs \"task\" (text) and \"steps\" (a list of texts)", path);
    else {
        record = ufo_value_new_map ();
        ufo_value_map_set_str (record, "request", task);
        ufo_value_t *apps = ufo_value_new_list ();
        ufo_value_list_push_str (apps, app);
        ufo_value_map_set (record, "applications", &apps);
        ufo_value_t *subtasks = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (steps); i++) {
            const char *text = ufo_value_str (ufo_value_list_at (steps, i));
            if (!text || !*text)
                continue;
            ufo_value_t *s = ufo_value_new_map ();
            ufo_value_map_set_str (s, "subtask", text);
            ufo_value_map_set_str (s, "application", app);
            ufo_value_map_set (s, "steps", &(ufo_value_t *) { ufo_value_new_list () });
            ufo_value_list_push (subtasks, &s);
        }
        ufo_value_map_set (record, "subtasks", &subtasks);
        ufo_value_map_set (record, "source", &(ufo_value_t *) { ufo_value_new_stringf ("plan %s", path) });
    }
    ufo_value_destroy (&plan);
    return record;
}

//  list / show / delete: the experience records on the broker; import-plan.
static int
s_experience (const ufo_config_t *config, const s_args_t *a)
{
    bool list = strcmp (a->sub, "list") == 0;
    if (strcmp (a->sub, "import-plan") == 0 && (!a->app || !*a->app)) {
        fprintf (stderr, "ufo knowledge: import-plan needs --app NAME\n");
        return UFO_CLI_USAGE;
    }
    //  --kind names the records: experience (default) or demonstration
    const char *kind = a->kind_given ? a->kind : "experience";
    if (!list && (!a->query || !*a->query)) {
        fprintf (stderr, "ufo knowledge: %s needs an ID (see ufo knowledge list)\n", a->sub);
        return UFO_CLI_USAGE;
    }
    ufo_error_t err = {0};
    char endpoint [512], log_root [PATH_MAX];
    if (ufo_cli_broker (a->broker, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0
    ||  ufo_security_init (config, "client", &err) < 0) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_bb_client_t *bb = ufo_bb_client_new (endpoint, NULL, &err);
    if (!bb) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_bb_client_set_timeout (bb, 5000);
    ufo_bb_client_set_sender (bb, "ufo-knowledge");
    int rc = UFO_CLI_OK;
    if (list) {
        ufo_value_t *records = ufo_experience_list (bb, kind, &err);
        if (!records) {
            fprintf (stderr, "ufo knowledge: no answer from the broker at %s: %s\n", endpoint, err.message);
            rc = UFO_CLI_FAIL;
        }
        else
        if (a->json) {
            char *text = ufo_json_dump (records, UFO_JSON_COMPACT, NULL);
            printf ("%s\n", text);
            free (text);
        }
        else {
            for (size_t i = 0; i < ufo_value_size (records); i++) {
                const ufo_value_t *e = ufo_value_list_at (records, i);
                ufo_value_t *record = ufo_value_dup (ufo_value_map_get (e, "record"));
                ufo_value_map_set_str (record, "id", ufo_value_map_str (e, "id", ""));
                s_print_record (record);
                ufo_value_destroy (&record);
            }
            printf ("%zu %s record%s\n", ufo_value_size (records), kind,
                    ufo_value_size (records) == 1 ? "" : "s");
        }
        ufo_value_destroy (&records);
    }
    else
    if (strcmp (a->sub, "show") == 0) {
        ufo_value_t *record = ufo_experience_get (bb, kind, a->query, &err);
        if (!record) {
            fprintf (stderr, "ufo knowledge: %s\n", err.message);
            rc = UFO_CLI_FAIL;
        }
        else
        if (a->json) {
            char *text = ufo_json_dump (record, UFO_JSON_COMPACT, NULL);
            printf ("%s\n", text);
            free (text);
        }
        else {
            s_print_record (record);
            char *text = ufo_experience_text (record);
            printf ("%s", text);
            free (text);
        }
        ufo_value_destroy (&record);
    }
    else
    if (strcmp (a->sub, "import-plan") == 0) {
        ufo_value_t *record = s_plan_record (a->query, a->app, &err);
        char id [64] = "";
        if (!record || ufo_experience_save (bb, "demonstration", &record, id, &err) < 0) {
            fprintf (stderr, "ufo knowledge: %s\n", err.message);
            rc = UFO_CLI_FAIL;
        }
        else
            printf ("demonstration %s imported from %s\n", id, a->query);
    }
    else
    if (ufo_experience_delete (bb, kind, a->query, &err) < 0) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        rc = UFO_CLI_FAIL;
    }
    else
        printf ("deleted %s\n", a->query);
    ufo_bb_client_destroy (&bb);
    return rc;
}

int
ufo_cmd_knowledge (int argc, char **argv)
{
    s_args_t a;
    int parsed = s_parse (argc, argv, &a);
    if (parsed != 0)
        return parsed > 0 ? UFO_CLI_OK : UFO_CLI_USAGE;
    static const char *const subs [] = { "index", "search", "list", "show", "delete", "import-plan" };
    bool known = false;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (subs); i++)
        known |= strcmp (a.sub, subs [i]) == 0;
    if (!known) {
        fprintf (stderr, "ufo knowledge: unknown subcommand %s (index, search, list, show, delete, import-plan)\n", a.sub);
        return UFO_CLI_USAGE;
    }
    ufo_error_t err = {0};
    ufo_config_t *config = ufo_config_load (a.config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_config_apply_log (config);
    if (strcmp (a.sub, "index") != 0 && strcmp (a.sub, "search") != 0) {
        int rc = s_experience (config, &a);
        ufo_config_destroy (&config);
        return rc;
    }
    char path [PATH_MAX];
    if (a.index_path)
        snprintf (path, sizeof path, "%s", a.index_path);
    else
    if (!ufo_knowledge_index_path (config, path, sizeof path)) {
        fprintf (stderr, "ufo knowledge: knowledge.index is too long\n");
        ufo_config_destroy (&config);
        return UFO_CLI_FAIL;
    }
    ufo_kb_t *kb = ufo_kb_open (path, &err);
    int rc;
    if (!kb) {
        fprintf (stderr, "ufo knowledge: %s\n", err.message);
        rc = UFO_CLI_FAIL;
    }
    else
        rc = strcmp (a.sub, "index") == 0 ? s_index (kb, config, &a) : s_search (kb, config, &a);
    ufo_kb_destroy (&kb);
    ufo_config_destroy (&config);
    return rc;
}
