/*  test_llm_parse.c - extracting and validating decisions from realistic model outputs. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_llm_parse.h"
#include "ufo_test.h"

#define APP_OK "{\"Observation\": \"The editor is open.\", \"Thought\": \"Type the text.\", " \
    "\"ControlLabel\": \"12\", \"ControlText\": \"Text Editor\", \"Function\": \"set_edit_text\", " \
    "\"Args\": {\"text\": \"hello\"}, \"Status\": \"CONTINUE\", \"Plan\": [\"save the file\"], " \
    "\"Comment\": \"typing\", \"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}}"

#define HOST_OK "{\"Observation\": \"Mousepad is listed as 3.\", \"Thought\": \"Use it.\", " \
    "\"CurrentSubtask\": \"Write the note\", \"Message\": [\"type slowly\"], \"ControlLabel\": \"3\", " \
    "\"ControlText\": \"Mousepad\", \"Status\": \"ASSIGN\", \"Plan\": [], \"Bash\": \"\", " \
    "\"Questions\": [], \"Comment\": \"\"}"

#define EVAL_OK "{\"reason\": \"The file was saved.\", \"sub_scores\": {\"typed\": \"yes\", \"saved\": \"yes\"}, " \
    "\"complete\": \"yes\"}"

typedef struct {
    const char *name;
    ufo_schema_t schema;
    const char *text;
    int code;                   //  UFO_OK or the expected error code
    const char *field;          //  a field to check in the decision (ok) / a word in the error
    const char *value;          //  its expected string value (ok cases)
} s_case_t;

static const s_case_t s_cases [] = {
    //  --- good, in every wrapping models use ---
    { "app bare", UFO_SCHEMA_APP, APP_OK, UFO_OK, "Function", "set_edit_text" },
    { "app fenced json", UFO_SCHEMA_APP, "```json\n" APP_OK "\n```", UFO_OK, "Status", "CONTINUE" },
    { "app fenced plain", UFO_SCHEMA_APP, "```\n" APP_OK "\n```\n", UFO_OK, "ControlLabel", "12" },
    { "app chatty before/after", UFO_SCHEMA_APP,
      "Sure! Here is my decision:\n" APP_OK "\nLet me know if anything else is needed.", UFO_OK, "ControlText", "Text Editor" },
    { "app fence on one line", UFO_SCHEMA_APP, "```json " APP_OK " ```", UFO_OK, "Function", "set_edit_text" },
    { "app unclosed fence", UFO_SCHEMA_APP, "```json\n" APP_OK "\n", UFO_OK, "Status", "CONTINUE" },
    { "app example then real", UFO_SCHEMA_APP,
      "The format is {\"Status\": \"...\"}. My answer:\n```json\n" APP_OK "\n```", UFO_OK, "Function", "set_edit_text" },
    { "app two fences, first invalid", UFO_SCHEMA_APP,
      "```json\n{\"Observation\": \"x\"}\n```\nOops, full version:\n```json\n" APP_OK "\n```", UFO_OK, "Status", "CONTINUE" },
    { "app braces inside strings", UFO_SCHEMA_APP,
      "{\"Observation\": \"a } brace and { another\", \"Thought\": \"type {curly}\", \"ControlLabel\": \"4\", "
      "\"ControlText\": \"Edit\", \"Function\": \"set_edit_text\", \"Args\": {\"text\": \"if (x) { y(); }\"}, "
      "\"Status\": \"CONTINUE\", \"Plan\": [], \"Comment\": \"\"}", UFO_OK, "Thought", "type {curly}" },
    { "app escaped quotes", UFO_SCHEMA_APP,
      "{\"Observation\": \"He said \\\"hi\\\" }\", \"Thought\": \"t\", \"ControlLabel\": \"\", \"ControlText\": \"\", "
      "\"Function\": \"\", \"Args\": {}, \"Status\": \"FINISH\", \"Plan\": [], \"Comment\": \"done\"}",
      UFO_OK, "Status", "FINISH" },
    { "app unicode", UFO_SCHEMA_APP,
      "{\"Observation\": \"Fenêtre « Éditeur » 日本語 ✓\", \"Thought\": \"écrire\", \"ControlLabel\": \"2\", "
      "\"ControlText\": \"Zone de texte\", \"Function\": \"set_edit_text\", \"Args\": {\"text\": \"Grüße 👋\"}, "
      "\"Status\": \"CONTINUE\", \"Plan\": [], \"Comment\": \"\"}", UFO_OK, "ControlText", "Zone de texte" },
    { "app unicode escapes", UFO_SCHEMA_APP,
      "{\"Observation\": \"\\u00e9\\ud83d\\ude00\", \"Thought\": \"t\", \"ControlLabel\": \"1\", \"ControlText\": \"OK\", "
      "\"Function\": \"click_input\", \"Args\": {\"button\": \"left\", \"double\": false}, \"Status\": \"CONTINUE\"}",
      UFO_OK, "Function", "click_input" },
    { "app integer label", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": 7, \"ControlText\": \"Save\", "
      "\"Function\": \"click_input\", \"Args\": {\"button\": \"left\", \"double\": false}, \"Status\": \"CONTINUE\", "
      "\"Plan\": \"then close\"}", UFO_OK, "ControlLabel", "7" },
    { "app null args, no function", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"\", \"ControlText\": \"\", \"Function\": \"\", "
      "\"Args\": null, \"Status\": \"FINISH\", \"Plan\": []}", UFO_OK, "Status", "FINISH" },
    { "app lower-case status", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Args\": {}, \"Status\": \"finish\"}",
      UFO_OK, "Status", "FINISH" },
    { "app trailing comma repaired", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"wait\", \"Args\": {\"seconds\": 2,}, "
      "\"Status\": \"CONTINUE\", \"Plan\": [\"a\", \"b\",],}", UFO_OK, "Function", "wait" },
    { "app coordinates", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"click_on_coordinates\", "
      "\"Args\": {\"x\": 0.5, \"y\": 0.25, \"button\": \"right\", \"double\": true}, \"Status\": \"CONTINUE\"}",
      UFO_OK, "Function", "click_on_coordinates" },
    { "app annotation screenshot", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"annotation\", "
      "\"Args\": {\"control_labels\": [\"3\", 4]}, \"Status\": \"SCREENSHOT\"}", UFO_OK, "Status", "SCREENSHOT" },
    { "app keyboard confirm", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"1\", \"Function\": \"keyboard_input\", "
      "\"Args\": {\"keys\": \"{CTRL}s\", \"control_focus\": true}, \"Status\": \"CONFIRM\"}", UFO_OK, "Status", "CONFIRM" },
    { "host assign", UFO_SCHEMA_HOST, "```json\n" HOST_OK "\n```", UFO_OK, "ControlText", "Mousepad" },
    { "host bash continue", UFO_SCHEMA_HOST,
      "{\"Observation\": \"No editor open.\", \"Thought\": \"Launch it.\", \"CurrentSubtask\": \"Open the editor\", "
      "\"Message\": \"wait for the window\", \"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"CONTINUE\", "
      "\"Plan\": [\"write\"], \"Bash\": \"mousepad\", \"Questions\": [], \"Comment\": \"\"}", UFO_OK, "Bash", "mousepad" },
    { "host finish minimal", UFO_SCHEMA_HOST,
      "I am done.\n{\"Observation\": \"All saved.\", \"Thought\": \"Nothing left.\", \"Status\": \"FINISH\"}",
      UFO_OK, "CurrentSubtask", "" },
    { "eval good", UFO_SCHEMA_EVAL, EVAL_OK, UFO_OK, "complete", "yes" },
    { "eval chatty upper", UFO_SCHEMA_EVAL,
      "Evaluation:\n```\n{\"reason\": \"Not saved.\", \"sub_scores\": {\"saved\": \"No\"}, \"complete\": \"NO\"}\n```",
      UFO_OK, "complete", "no" },
    //  --- unusable: each must fail with a reason the model can act on ---
    { "empty", UFO_SCHEMA_APP, "", UFO_E_SYNTAX, "no JSON object", NULL },
    { "prose only", UFO_SCHEMA_APP, "I cannot see the screen, sorry.", UFO_E_SYNTAX, "no JSON object", NULL },
    { "truncated", UFO_SCHEMA_APP,
      "```json\n{\"Observation\": \"The editor is open.\", \"Thought\": \"Type the text.\", \"Args\": {\"text\": \"hel",
      UFO_E_TRUNCATED, "cut off", NULL },
    { "single quotes", UFO_SCHEMA_APP, "{'Observation': 'o', 'Status': 'CONTINUE'}", UFO_E_SYNTAX, "no valid JSON", NULL },
    { "wrong status", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Args\": {}, \"Status\": \"DONE\"}",
      UFO_E_RANGE, "DONE", NULL },
    { "host status not for host", UFO_SCHEMA_HOST,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Status\": \"SCREENSHOT\"}", UFO_E_RANGE, "SCREENSHOT", NULL },
    { "status is a number", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": 1}", UFO_E_TYPE, "Status", NULL },
    { "missing thought", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Function\": \"\", \"Args\": {}, \"Status\": \"CONTINUE\"}", UFO_E_MISSING, "Thought", NULL },
    { "args is a string", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"1\", \"Function\": \"set_edit_text\", "
      "\"Args\": \"text=hello\", \"Status\": \"CONTINUE\"}", UFO_E_TYPE, "Args", NULL },
    { "unknown function", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"type_text\", \"Args\": {}, \"Status\": \"CONTINUE\"}",
      UFO_E_INVALID, "type_text", NULL },
    { "missing required arg", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"2\", \"Function\": \"set_edit_text\", "
      "\"Args\": {}, \"Status\": \"CONTINUE\"}", UFO_E_MISSING, "text", NULL },
    { "misspelt arg", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"2\", \"Function\": \"set_edit_text\", "
      "\"Args\": {\"txt\": \"a\"}, \"Status\": \"CONTINUE\"}", UFO_E_INVALID, "txt", NULL },
    { "double as string", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"2\", \"Function\": \"click_input\", "
      "\"Args\": {\"button\": \"left\", \"double\": \"false\"}, \"Status\": \"CONTINUE\"}", UFO_E_TYPE, "double", NULL },
    { "bad button", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"2\", \"Function\": \"click_input\", "
      "\"Args\": {\"button\": \"primary\"}, \"Status\": \"CONTINUE\"}", UFO_E_RANGE, "button", NULL },
    { "coordinates in pixels", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"click_on_coordinates\", "
      "\"Args\": {\"x\": 640, \"y\": 480}, \"Status\": \"CONTINUE\"}", UFO_E_RANGE, "0 to 1", NULL },
    { "wheel as float text", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"wheel_mouse_input\", "
      "\"Args\": {\"wheel_dist\": \"-3\"}, \"Status\": \"CONTINUE\"}", UFO_E_TYPE, "integer", NULL },
    { "wait too long", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"wait\", \"Args\": {\"seconds\": 1000}, "
      "\"Status\": \"CONTINUE\"}", UFO_E_RANGE, "300", NULL },
    { "click without control", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": \"\", \"Function\": \"click_input\", "
      "\"Args\": {}, \"Status\": \"CONTINUE\"}", UFO_E_MISSING, "ControlLabel", NULL },
    { "plan with numbers", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"CONTINUE\", \"Plan\": [1, 2]}",
      UFO_E_TYPE, "Plan", NULL },
    { "top-level list", UFO_SCHEMA_APP, "[" APP_OK "]", UFO_OK, "Function", "set_edit_text" },
    { "host assign without app", UFO_SCHEMA_HOST,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"CurrentSubtask\": \"x\", \"Status\": \"ASSIGN\"}",
      UFO_E_MISSING, "ControlLabel", NULL },
    { "host bash with finish", UFO_SCHEMA_HOST,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Status\": \"FINISH\", \"Bash\": \"rm -rf /\"}",
      UFO_E_INVALID, "Bash", NULL },
    { "eval bad judgement", UFO_SCHEMA_EVAL,
      "{\"reason\": \"r\", \"sub_scores\": {\"a\": \"maybe\"}, \"complete\": \"yes\"}", UFO_E_RANGE, "maybe", NULL },
    { "eval missing complete", UFO_SCHEMA_EVAL, "{\"reason\": \"r\", \"sub_scores\": {}}", UFO_E_MISSING, "complete", NULL },
    { "save screenshot wrong", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"SaveScreenshot\": true}",
      UFO_E_TYPE, "SaveScreenshot", NULL },
    { "app pending without questions", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"PENDING\", \"Questions\": []}",
      UFO_E_MISSING, "Questions", NULL },
    { "app pending with question", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"PENDING\", "
      "\"Questions\": \"Which file name should I use?\"}", UFO_OK, "Status", "PENDING" },
    { "app confirm without action", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"CONFIRM\"}",
      UFO_E_MISSING, "CONFIRM", NULL },
    { "host pending without questions", UFO_SCHEMA_HOST,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Status\": \"PENDING\"}", UFO_E_MISSING, "Questions", NULL },
    { "nested object only valid", UFO_SCHEMA_OBJECT, "noise {\"a\": {\"b\": \"}\"}} tail", UFO_OK, NULL, NULL },
    //  API tools of MCP servers ("<server>.<tool>"): the agent checks them against the tool's schema
    { "app mcp tool", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"files.write_file\", \"Args\": {\"path\": \"/x\"}, \"Status\": \"CONTINUE\"}",
      UFO_OK, "Function", "files.write_file" },
    { "app mcp tool args not object", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"files.write_file\", \"Args\": [1], \"Status\": \"CONTINUE\"}",
      UFO_E_TYPE, "Args", NULL },
    //  ActionList (ACTION_SEQUENCE)
    { "app action list", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"ActionList\": "
      "[{\"Function\": \"click_input\", \"ControlLabel\": 3, \"Args\": null}, {\"Function\": \"texts\", \"ControlLabel\": \"4\", \"Status\": \"finish\"}]}",
      UFO_OK, "Status", "FINISH" },
    { "app action list not a list", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"ActionList\": {}}",
      UFO_E_TYPE, "ActionList", NULL },
    { "app action list bad action", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"ActionList\": "
      "[{\"Function\": \"click_input\"}, {\"Function\": \"fly\"}]}",
      UFO_E_INVALID, "ActionList\"[1]", NULL },
    { "app action list bad status", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"ActionList\": "
      "[{\"Function\": \"texts\", \"Status\": \"DONE\"}]}",
      UFO_E_RANGE, "ActionList\"[0]", NULL },
    { "app action list without function", UFO_SCHEMA_APP,
      "{\"Observation\": \"o\", \"Thought\": \"t\", \"Function\": \"\", \"Status\": \"FINISH\", \"ActionList\": [{\"Function\": \"\"}]}",
      UFO_E_MISSING, "names no", NULL },
};

UFO_TEST (test_table)
{
    size_t ok = 0, bad = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_cases); i++) {
        const s_case_t *c = &s_cases [i];
        ufo_error_t err;
        ufo_error_clear (&err);
        ufo_value_t *v = ufo_llm_extract_json (c->text, strlen (c->text), c->schema, &err);
        if (c->code == UFO_OK) {
            ok++;
            if (!v) {
                UFO_FAIL_ ("case \"%s\": expected a decision, got error %s: %s", c->name,
                           ufo_errcode_name (err.code), err.message);
                continue;
            }
            if (c->field)
                if (!ufo_value_map_str (v, c->field, NULL) || strcmp (ufo_value_map_str (v, c->field, ""), c->value))
                    UFO_FAIL_ ("case \"%s\": %s = \"%s\", expected \"%s\"", c->name, c->field,
                               ufo_value_map_str (v, c->field, "(absent)"), c->value);
        }
        else {
            bad++;
            if (v) {
                UFO_FAIL_ ("case \"%s\": expected error %s, got a decision", c->name, ufo_errcode_name (c->code));
                ufo_value_destroy (&v);
                continue;
            }
            if (err.code != c->code)
                UFO_FAIL_ ("case \"%s\": error %s (%s), expected %s", c->name, ufo_errcode_name (err.code),
                           err.message, ufo_errcode_name (c->code));
            if (c->field && !strstr (err.message, c->field))
                UFO_FAIL_ ("case \"%s\": error \"%s\" does not mention \"%s\"", c->name, err.message, c->field);
        }
        ufo_value_destroy (&v);
    }
    CHECK (ok + bad >= 30);
    CHECK (bad >= 15);
}

UFO_TEST (test_normalisation)
{
    const char *text = "{\"Observation\": \"o\", \"Thought\": \"t\", \"ControlLabel\": 7, \"Function\": \"\", "
                       "\"Status\": \"continue\", \"Plan\": \"one step\"}";
    ufo_value_t *v = ufo_llm_extract_json (text, strlen (text), UFO_SCHEMA_APP, NULL);
    REQUIRE (v);
    CHECK_STR (ufo_value_map_str (v, "ControlLabel", ""), "7");
    CHECK_STR (ufo_value_map_str (v, "Status", ""), "CONTINUE");
    CHECK_INT (ufo_value_type (ufo_value_map_get (v, "Plan")), UFO_TLIST);
    CHECK_STR (ufo_value_str (ufo_value_path (v, "Plan.0")), "one step");
    CHECK_INT (ufo_value_type (ufo_value_map_get (v, "Args")), UFO_TMAP);
    CHECK (ufo_value_map_bool (ufo_value_map_get (v, "SaveScreenshot"), "save", true) == false);
    CHECK_STR (ufo_value_map_str (v, "Comment", "x"), "");
    ufo_value_destroy (&v);
}

UFO_TEST (test_corrective_message)
{
    char *m = ufo_llm_corrective_message (UFO_SCHEMA_APP, "\"Status\": \"DONE\" is not allowed");
    CHECK_CONTAINS (m, "could not be used");
    CHECK_CONTAINS (m, "DONE");
    CHECK_CONTAINS (m, "SCREENSHOT");
    free (m);
    m = ufo_llm_corrective_message (UFO_SCHEMA_EVAL, NULL);
    CHECK_CONTAINS (m, "complete");
    free (m);
}

//  Garbage of every shape must never crash and never yield an invalid decision.
UFO_TEST (test_garbage)
{
    uint32_t seed = 12345;
    const char alphabet [] = "{}[]\":,\\ ab01\n`tfn.-e";
    char buf [256];
    for (int round = 0; round < 3000; round++) {
        size_t len = (size_t) (round % 200);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf [i] = alphabet [(seed >> 16) % (sizeof alphabet - 1)];
        }
        ufo_error_t err;
        ufo_value_t *v = ufo_llm_extract_json (buf, len, UFO_SCHEMA_APP, &err);
        if (v) {
            CHECK (ufo_llm_validate (v, UFO_SCHEMA_APP, NULL) == 0);
            ufo_value_destroy (&v);
        }
        else
            CHECK (err.code != UFO_OK);
    }
}

int
main (void)
{
    UFO_RUN (test_table);
    UFO_RUN (test_normalisation);
    UFO_RUN (test_corrective_message);
    UFO_RUN (test_garbage);
    return UFO_TEST_END ();
}
