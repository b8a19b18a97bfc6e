/*  test_app_knowledge.c - the AppAgent's knowledge (issue 23) end to end: ufo-app on real
    mousepad with RAG_OFFLINE_DOCS, an index built by ufo_knowledge_index from a folder of
    notes, and the scripted LLM server (tests/data/app_agent/offline_docs.json) that types
    the text it reads in the help passage of its prompt. request.log must carry the passage
    as offline_docs. Without an index the step still runs, with no help. */
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_kb.h"
#include "ufo_knowledge.h"
#include "ufo_report.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

static const char *
s_build_index (void)
{
    static char index [600];
    char notes [600], path [700];
    snprintf (notes, sizeof notes, "%s/notes", afx_.broker.dir);
    mkdir (notes, 0755);
    snprintf (path, sizeof path, "%s/editor.md", notes);
    afx_write (path, "# Editor notes\n\n## Writing a greeting\n\n"
                     "To write the standard greeting in the editor, type 'Greetings from the help page' "
                     "into the text area.\n\n## Saving\n\nPress Ctrl+S to save the document to disk.\n");
    snprintf (index, sizeof index, "%s/kb/knowledge.db", afx_.broker.dir);
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (index, &err);
    if (!kb)
        return NULL;
    ufo_value_t *folders = ufo_value_new_map ();
    ufo_value_t *dirs = ufo_value_new_list ();
    ufo_value_list_push_str (dirs, notes);
    ufo_value_map_set (folders, "mousepad", &dirs);
    ufo_knowledge_opts_t opts = { .folders = folders, .max_file_bytes = 65536 };
    ufo_knowledge_stats_t stats;
    int rc = ufo_knowledge_index (kb, &opts, NULL, NULL, &stats, &err);
    ufo_value_destroy (&folders);
    ufo_kb_destroy (&kb);
    return rc == 0 && stats.passages == 2 ? index : NULL;
}

static ufo_value_t *
s_request_log (const char *task)
{
    char path [600];
    return afx_lines (afx_log_path (task, "request.log", path, sizeof path));
}

UFO_TEST (test_offline_docs_in_prompt)
{
    const char *index = s_build_index ();
    REQUIRE (index);
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("offline_docs.json", &pid, NULL);
    REQUIRE (xid);
    char extra [900];
    snprintf (extra, sizeof extra, "\"RAG_OFFLINE_DOCS\": true, \"RAG_OFFLINE_DOCS_RETRIEVED_TOPK\": 1,"
              " \"knowledge\": {\"index\": \"%s\", \"prompt_bytes\": 400}", index);
    const char *config = afx_config (extra);
    const char *file = afx_subtask ("s-docs", "Write the standard greeting into the document", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "Greeting written.");
    //  the text came from the help passage, through the prompt
    char *text = afx_text (xid);
    CHECK_STR (text, "Greetings from the help page");
    free (text);
    ufo_value_t *req = s_request_log ("s-docs");
    REQUIRE (ufo_value_size (req) == 2);
    for (size_t i = 0; i < 2; i++) {
        const ufo_value_t *docs = ufo_value_map_get (ufo_value_list_at (req, i), "offline_docs");
        REQUIRE (ufo_value_size (docs) == 1);       //  RAG_OFFLINE_DOCS_RETRIEVED_TOPK
        const ufo_value_t *d = ufo_value_list_at (docs, 0);
        CHECK_STR (ufo_value_map_str (d, "title", ""), "Editor notes \xe2\x80\xba Writing a greeting");
        CHECK_CONTAINS (ufo_value_map_str (d, "text", ""), "'Greetings from the help page'");
        CHECK_CONTAINS (ufo_value_map_str (d, "source", ""), "editor.md");
    }
    char *prompt = ufo_json_dump (ufo_value_map_get (ufo_value_list_at (req, 0), "prompt"), 0, NULL);
    CHECK_CONTAINS (prompt, "[Help Documents of the Application:]\\n- Editor notes");
    CHECK (!strstr (prompt, "Ctrl+S"));            //  only the top passage
    free (prompt);
    //  the report shows what was retrieved, per step
    char logdir [600];
    snprintf (logdir, sizeof logdir, "%s/logs/s-docs", afx_.broker.dir);
    ufo_error_t err = {0};
    char *html = ufo_report_render (logdir, NULL, NULL, NULL, NULL, &err);
    REQUIRE (html);
    CHECK_CONTAINS (html, "<h4>Knowledge</h4>");
    CHECK_CONTAINS (html, "<dt>Help documents</dt><dd><div><b>Editor notes \xe2\x80\xba Writing a greeting</b>");
    CHECK_CONTAINS (html, "&#39;Greetings from the help page&#39;");
    free (html);
    ufo_value_destroy (&req);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_offline_docs_without_index)
{
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("offline_docs.json", &pid, NULL);
    REQUIRE (xid);
    char extra [900];
    snprintf (extra, sizeof extra, "\"RAG_OFFLINE_DOCS\": true,"
              " \"knowledge\": {\"index\": \"%s/absent/knowledge.db\"}", afx_.broker.dir);
    const char *config = afx_config (extra);
    const char *file = afx_subtask ("s-nodocs", "Write the standard greeting into the document", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "No help.");
    ufo_value_t *req = s_request_log ("s-nodocs");
    REQUIRE (ufo_value_size (req) == 1);
    const ufo_value_t *docs = ufo_value_map_get (ufo_value_list_at (req, 0), "offline_docs");
    CHECK (docs && ufo_value_size (docs) == 0);
    char errlog [600];
    snprintf (errlog, sizeof errlog, "%s/app-err-%d.log", afx_.broker.dir, afx_.runs);
    char *err_text = afx_read (errlog);
    CHECK_CONTAINS (err_text, "knowledge: no index at");
    free (err_text);
    char absent [600];
    snprintf (absent, sizeof absent, "%s/absent", afx_.broker.dir);
    CHECK (access (absent, F_OK) != 0);             //  an agent never creates the index
    ufo_value_destroy (&req);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

int
main (void)
{
    if (afx_setup ("appkn") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_offline_docs_in_prompt);
    AFX_RUN (test_offline_docs_without_index);
    afx_teardown ();
    return UFO_TEST_END ();
}
