/*  test_llm_prompt.c - the template engine and the assembly of agent prompts from prompts/. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_template.h"
#include "ufo_prompt.h"
#include "ufo_llm_parse.h"
#include "ufo_test.h"

static ufo_value_t *
s_json (const char *text)
{
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str (text, &err);
    if (!v)
        fprintf (stderr, "bad test JSON: %s\n", err.message);
    return v;
}

static char *
s_loader (const char *name, void *arg)
{
    UFO_UNUSED (arg);
    if (!strcmp (name, "greet"))
        return ufo_strdup ("Hello {{name}}!");
    if (!strcmp (name, "loop"))
        return ufo_strdup ("{{> loop}}");
    return NULL;
}

typedef struct {
    const char *tmpl;
    const char *vars;
    const char *expect;         //  NULL: an error containing `error`
    const char *error;
} s_case_t;

static const s_case_t s_cases [] = {
    { "plain text", "{}", "plain text", NULL },
    { "Hi {{name}}.", "{\"name\": \"Ann\"}", "Hi Ann.", NULL },
    { "{{ a.b.1 }}", "{\"a\": {\"b\": [10, 20]}}", "20", NULL },
    { "{{n}} {{f}} {{t}} {{z}}|", "{\"n\": -3, \"f\": 0.5, \"t\": true, \"z\": null}", "-3 0.5 true |", NULL },
    { "{{l}} {{m}}", "{\"l\": [1, \"é\"], \"m\": {\"k\": false}}", "[1, \"\\u00e9\"] {\"k\": false}", NULL },
    { "{{#if x}}yes{{else}}no{{/if}}", "{\"x\": 1}", "yes", NULL },
    { "{{#if x}}yes{{else}}no{{/if}}", "{\"x\": \"\"}", "no", NULL },
    { "{{#if x}}yes{{else}}no{{/if}}", "{}", "no", NULL },
    { "{{#if x}}yes{{/if}}", "{\"x\": []}", "", NULL },
    { "{{#unless x}}none{{/unless}}", "{\"x\": {}}", "none", NULL },
    { "{{#each xs}}[{{@index}}:{{this}}]{{/each}}", "{\"xs\": [\"a\", \"b\"]}", "[0:a][1:b]", NULL },
    { "{{#each xs}}{{@number}}. {{this.n}} of {{total}}\n{{/each}}", "{\"total\": 2, \"xs\": [{\"n\": \"x\"}, {\"n\": \"y\"}]}",
      "1. x of 2\n2. y of 2\n", NULL },
    { "{{#each m}}{{@key}}={{this}};{{/each}}", "{\"m\": {\"a\": 1, \"b\": 2}}", "a=1;b=2;", NULL },
    { "{{#each xs}}x{{else}}empty{{/each}}", "{\"xs\": []}", "empty", NULL },
    { "{{#each xs}}{{#each this}}{{this}}{{/each}},{{/each}}", "{\"xs\": [[1, 2], [3]]}", "12,3,", NULL },
    { "{{#each xs}}{{#if @index}}, {{/if}}{{this}}{{/each}}", "{\"xs\": [\"a\", \"b\", \"c\"]}", "a, b, c", NULL },
    { "{{#if a}}{{#if b}}ab{{else}}a{{/if}}{{/if}}", "{\"a\": true, \"b\": false}", "a", NULL },
    { "A\n{{#if x}}\nB\n{{/if}}\nC\n", "{\"x\": true}", "A\nB\nC\n", NULL },
    { "A\n  {{#each xs}}\n- {{this}}\n  {{/each}}\nC", "{\"xs\": [1, 2]}", "A\n- 1\n- 2\nC", NULL },
    { "A {{! a comment }}B", "{}", "A B", NULL },
    { "A\n{{! standalone comment }}\nB", "{}", "A\nB", NULL },
    { "{{> greet}}", "{\"name\": \"Bo\"}", "Hello Bo!", NULL },
    { "JSON: {\"a\": {\"b\": 1}}", "{}", "JSON: {\"a\": {\"b\": 1}}", NULL },
    { "{{missing}}", "{}", NULL, "unknown name" },
    { "line1\n{{#if x}}never closed", "{}", NULL, "line 2" },
    { "{{#if x}}a{{/each}}", "{}", NULL, "mismatched" },
    { "{{/if}}", "{}", NULL, "unexpected" },
    { "{{#while x}}{{/while}}", "{}", NULL, "unknown block" },
    { "{{> nothere}}", "{}", NULL, "no partial" },
    { "{{> loop}}", "{}", NULL, "too deeply" },
    { "{{#each s}}x{{/each}}", "{\"s\": \"str\"}", NULL, "needs a list" },
    { "open {{ never", "{}", NULL, "unclosed" },
};

UFO_TEST (test_template_table)
{
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_cases); i++) {
        const s_case_t *c = &s_cases [i];
        ufo_value_t *vars = s_json (c->vars);
        ufo_error_t err;
        ufo_error_clear (&err);
        char *out = ufo_template_render (c->tmpl, strlen (c->tmpl), vars, s_loader, NULL, &err);
        if (c->expect) {
            if (!out)
                UFO_FAIL_ ("case %zu \"%s\": error %s", i, c->tmpl, err.message);
            else
            if (strcmp (out, c->expect))
                UFO_FAIL_ ("case %zu \"%s\": got \"%s\", expected \"%s\"", i, c->tmpl, out, c->expect);
        }
        else {
            if (out)
                UFO_FAIL_ ("case %zu \"%s\": expected an error, got \"%s\"", i, c->tmpl, out);
            else
            if (!strstr (err.message, c->error))
                UFO_FAIL_ ("case %zu \"%s\": error \"%s\" lacks \"%s\"", i, c->tmpl, err.message, c->error);
        }
        free (out);
        ufo_value_destroy (&vars);
    }
}

static ufo_prompts_t *
s_prompts (void)
{
    char dir [1024];
    snprintf (dir, sizeof dir, "%s/prompts", getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : "..");
    ufo_error_t err;
    ufo_prompts_t *p = ufo_prompts_new (dir, &err);
    if (!p)
        fprintf (stderr, "%s\n", err.message);
    return p;
}

static const char *
s_text_of (const ufo_value_t *messages, size_t msg, size_t part)
{
    const ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (messages, msg), "content");
    if (ufo_value_type (content) == UFO_TSTRING)
        return ufo_value_str (content);
    return ufo_value_map_str (ufo_value_list_at (content, part), "text", NULL);
}

UFO_TEST (test_app_prompt)
{
    ufo_prompts_t *p = s_prompts ();
    REQUIRE (p);
    ufo_value_t *vars = s_json ("{\"request\": \"Write a note\", \"subtask\": \"Type 'hi' into the document\","
                                " \"application\": \"Untitled 1 - Mousepad\", \"host_message\": [\"type slowly\"],"
                                " \"controls\": [{\"label\": \"5\", \"type\": \"Document\", \"name\": \"Text View\"},"
                                "                {\"label\": \"6\", \"type\": \"MenuItem\", \"name\": \"File\"}],"
                                " \"plan\": [\"check the text\"]}");
    ufo_value_t *images = s_json ("[{\"label\": \"Current Screenshot:\", \"url\": \"data:image/png;base64,AAAA\"},"
                                  " {\"label\": \"Annotated Screenshot:\", \"url\": \"data:image/png;base64,BBBB\"}]");
    ufo_value_t *board = s_json ("[{\"type\": \"text\", \"text\": \"[Blackboard:]\"},"
                                 " {\"type\": \"text\", \"text\": \"[Questions & Answers:]\\n[]\"},"
                                 " {\"type\": \"image_url\", \"image_url\": {\"url\": \"data:image/png;base64,CCCC\"}}]");
    ufo_value_t *memory = s_json ("[{\"Step\": 1, \"Subtask\": \"Type 'hi'\", \"Action\": \"click_input\"}]");
    ufo_prompt_input_t in = { UFO_SCHEMA_APP, true, vars, images, board, memory };
    ufo_error_t err;
    ufo_value_t *m = ufo_prompt_messages (p, &in, &err);
    if (!m)
        fprintf (stderr, "%s\n", err.message);
    REQUIRE (m);
    CHECK_INT (ufo_value_size (m), 2);
    const char *system = s_text_of (m, 0, 0);
    CHECK_CONTAINS (system, "You are the AppAgent");
    CHECK_CONTAINS (system, "Untitled 1 - Mousepad");
    CHECK_CONTAINS (system, "numbered boxes");
    //  Every action the validator accepts is described, and examples are included.
    const char *actions [] = { "click_input", "click_on_coordinates", "drag_on_coordinates", "set_edit_text",
                               "keyboard_input", "wheel_mouse_input", "\"texts\"", "\"summary\"", "\"annotation\"", "\"wait\"" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (actions); i++)
        CHECK_CONTAINS (system, actions [i]);
    CHECK_CONTAINS (system, "\"SaveScreenshot\": {\"save\": true");
    const ufo_value_t *parts = ufo_value_map_get (ufo_value_list_at (m, 1), "content");
    //  blackboard (3 parts) + 2 images with labels (4 parts) + the text
    CHECK_INT (ufo_value_size (parts), 8);
    CHECK_STR (s_text_of (m, 1, 0), "[Blackboard:]");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (parts, 2), "type", ""), "image_url");
    CHECK_STR (s_text_of (m, 1, 3), "Current Screenshot:");
    CHECK_STR (ufo_value_str (ufo_value_path (parts, "4.image_url.url")), "data:image/png;base64,AAAA");
    const char *user = s_text_of (m, 1, 7);
    CHECK_CONTAINS (user, "[User Request:]\nWrite a note");
    CHECK_CONTAINS (user, "- label \"5\", type Document, name \"Text View\"");
    CHECK_CONTAINS (user, "- type slowly");
    CHECK_CONTAINS (user, "[Step History:]");
    CHECK_CONTAINS (user, "{\"Step\": 1, \"Subtask\": \"Type 'hi'\", \"Action\": \"click_input\"}");
    CHECK (!strstr (user, "{{"));
    //  Every example in the system prompt is a valid AppAgent reply.
    int examples = 0;
    for (const char *line = system; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL) {
        if (strncmp (line, "{\"Observation\"", 14))
            continue;
        const char *end = strchr (line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen (line);
        ufo_error_t verr;
        ufo_value_t *v = ufo_llm_extract_json (line, len, UFO_SCHEMA_APP, &verr);
        if (!v)
            UFO_FAIL_ ("example %d is not a valid AppAgent reply: %s", examples + 1, verr.message);
        ufo_value_destroy (&v);
        examples++;
    }
    CHECK (examples >= 3);
    ufo_value_destroy (&m);

    //  Non-visual: no image parts at all (also none from the blackboard), text-only examples.
    in.visual = false;
    m = ufo_prompt_messages (p, &in, &err);
    REQUIRE (m);
    system = s_text_of (m, 0, 0);
    CHECK_CONTAINS (system, "You do not see the screen");
    CHECK (!strstr (system, "numbered boxes"));
    CHECK_CONTAINS (system, "\"Function\": \"texts\"");
    parts = ufo_value_map_get (ufo_value_list_at (m, 1), "content");
    CHECK_INT (ufo_value_size (parts), 3);
    char *dump = ufo_json_dump (m, UFO_JSON_COMPACT, NULL);
    CHECK (!strstr (dump, "image_url"));
    free (dump);
    ufo_value_destroy (&m);

    //  A required variable missing is a clear error.
    ufo_value_map_remove (vars, "subtask");
    in.visual = true;
    m = ufo_prompt_messages (p, &in, &err);
    CHECK (m == NULL);
    CHECK_CONTAINS (err.message, "app_agent/user.tmpl");
    CHECK_CONTAINS (err.message, "subtask");
    ufo_value_destroy (&vars);
    ufo_value_destroy (&images);
    ufo_value_destroy (&board);
    ufo_value_destroy (&memory);
    ufo_prompts_destroy (&p);
}

static void
s_check_examples (const char *system, ufo_schema_t schema, const char *prefix, int at_least)
{
    int examples = 0;
    for (const char *line = system; line && *line; line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL) {
        if (strncmp (line, prefix, strlen (prefix)))
            continue;
        const char *end = strchr (line, '\n');
        ufo_error_t verr;
        ufo_value_t *v = ufo_llm_extract_json (line, end ? (size_t) (end - line) : strlen (line), schema, &verr);
        if (!v)
            UFO_FAIL_ ("%s example %d invalid: %s", ufo_schema_name (schema), examples + 1, verr.message);
        ufo_value_destroy (&v);
        examples++;
    }
    CHECK (examples >= at_least);
}

UFO_TEST (test_host_and_eval_prompts)
{
    ufo_prompts_t *p = s_prompts ();
    REQUIRE (p);
    ufo_value_t *vars = s_json ("{\"request\": \"Write a note\", \"launchers\": [\"mousepad\", \"gnome-calculator\"],"
                                " \"windows\": [{\"label\": \"1\", \"title\": \"Terminal\", \"application\": \"xterm\"}],"
                                " \"previous_subtasks\": [{\"subtask\": \"open editor\", \"status\": \"FINISH\"}]}");
    ufo_prompt_input_t in = { UFO_SCHEMA_HOST, false, vars, NULL, NULL, NULL };
    ufo_error_t err;
    ufo_value_t *m = ufo_prompt_messages (p, &in, &err);
    if (!m)
        fprintf (stderr, "%s\n", err.message);
    REQUIRE (m);
    const char *system = s_text_of (m, 0, 0);
    CHECK_CONTAINS (system, "You are the HostAgent");
    CHECK_CONTAINS (system, "(\"mousepad\", \"gnome-calculator\")");
    s_check_examples (system, UFO_SCHEMA_HOST, "{\"Observation\"", 3);
    const char *user = s_text_of (m, 1, 0);
    CHECK_CONTAINS (user, "- label \"1\": Terminal (xterm)");
    CHECK_CONTAINS (user, "1. open editor -> FINISH");
    CHECK_CONTAINS (user, "No steps taken yet.");
    ufo_value_destroy (&m);
    ufo_value_destroy (&vars);

    vars = s_json ("{\"request\": \"Write a note\", \"trajectory\": []}");
    in.schema = UFO_SCHEMA_EVAL;
    in.vars = vars;
    m = ufo_prompt_messages (p, &in, &err);
    REQUIRE (m);
    system = s_text_of (m, 0, 0);
    CHECK_CONTAINS (system, "You are the EvaluationAgent");
    s_check_examples (system, UFO_SCHEMA_EVAL, "{\"reason\"", 1);
    CHECK_CONTAINS (s_text_of (m, 1, 0), "No agent step was taken");
    ufo_value_destroy (&m);
    ufo_value_destroy (&vars);
    ufo_prompts_destroy (&p);

    CHECK (ufo_prompts_new ("/nonexistent", &err) == NULL);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
}

//  The blackboard's own prompt parts go first in the user message, as in the original.
UFO_TEST (test_with_board)
{
    ufo_prompts_t *p = s_prompts ();
    REQUIRE (p);
    ufo_board_t *board = ufo_board_new ();
    ufo_board_add_text (board, UFO_MEM_QUESTIONS, "Which file name? -> notes.txt");
    ufo_board_add_text (board, UFO_MEM_REQUESTS, "open the editor");
    ufo_value_t *meta = s_json ("{\"step\": 3}");
    ufo_board_add_image (board, "/nonexistent/shot.png", meta);
    ufo_value_t *parts = ufo_board_to_prompt (board);
    ufo_value_t *vars = s_json ("{\"request\": \"Write a note\", \"subtask\": \"type\", \"application\": \"Mousepad\"}");
    ufo_prompt_input_t in = { UFO_SCHEMA_APP, true, vars, NULL, parts, NULL };
    ufo_error_t err;
    ufo_value_t *m = ufo_prompt_messages (p, &in, &err);
    REQUIRE (m);
    const ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (m, 1), "content");
    //  4 board text parts + the screenshot's metadata text (its image had no file: dropped) + ours
    CHECK_INT (ufo_value_size (content), 6);
    CHECK_STR (s_text_of (m, 1, 0), "[Blackboard:]");
    CHECK_CONTAINS (s_text_of (m, 1, 1), "notes.txt");
    CHECK_CONTAINS (s_text_of (m, 1, 2), "open the editor");
    CHECK_CONTAINS (s_text_of (m, 1, 5), "[Current Subtask:]");
    char *dump = ufo_json_dump (m, UFO_JSON_COMPACT, NULL);
    CHECK (!strstr (dump, "image_url"));
    free (dump);
    ufo_value_destroy (&m);
    ufo_value_destroy (&vars);
    ufo_value_destroy (&parts);
    ufo_value_destroy (&meta);
    ufo_board_destroy (&board);
    ufo_prompts_destroy (&p);
}

int
main (void)
{
    UFO_RUN (test_template_table);
    UFO_RUN (test_app_prompt);
    UFO_RUN (test_host_and_eval_prompts);
    ufo_log_set_level (UFO_LOG_ERROR);
    UFO_RUN (test_with_board);
    return UFO_TEST_END ();
}
