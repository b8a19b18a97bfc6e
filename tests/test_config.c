/*  test_config.c - configuration: defaults, file merge, environment, errors, the schema
    against config/ufo.json and docs/CONFIG.md, and the per-agent fallback chain.

    Also a small tool: `test_config --defaults-json` prints the default configuration
    (the content of config/ufo.json); `test_config --markdown` prints the key table of
    docs/CONFIG.md. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <unistd.h>
#include <sys/stat.h>

//  --- log capture -----------------------------------------------------------

static char *s_log_data = NULL;
static size_t s_log_size = 0;
static FILE *s_log_stream = NULL;

static void
s_capture_start (void)
{
    s_log_stream = open_memstream (&s_log_data, &s_log_size);
    ufo_log_set_stream (s_log_stream);
}

//  Stops capturing; returns what was logged (caller frees).
static char *
s_capture_end (void)
{
    ufo_log_set_stream (NULL);
    fclose (s_log_stream);
    s_log_stream = NULL;
    char *data = s_log_data;
    s_log_data = NULL;
    return data;
}

//  --- helpers ---------------------------------------------------------------

static char s_dir [256];

static const char *
s_write (const char *name, const char *text)
{
    static char path [512];
    snprintf (path, sizeof (path), "%s/%s", s_dir, name);
    FILE *file = fopen (path, "wb");
    if (!file)
        return NULL;
    fputs (text, file);
    fclose (file);
    return path;
}

//  Loads text into a fresh default config and checks it fails with code, naming every
//  needle; also checks the config is unchanged.
static void
s_expect_error (const char *text, int code, const char *needle1, const char *needle2)
{
    ufo_config_t *cfg = ufo_config_new ();
    ufo_config_t *ref = ufo_config_new ();
    ufo_error_t err;
    int rc = ufo_config_load_text (cfg, text, strlen (text), &err);
    if (rc != -1 || err.code != code)
        UFO_FAIL_ ("%s: rc %d, code %s (%s), expected %s", text, rc, ufo_errcode_name (err.code),
                   err.message, ufo_errcode_name (code));
    if (needle1)
        CHECK_CONTAINS (err.message, needle1);
    if (needle2)
        CHECK_CONTAINS (err.message, needle2);
    CHECK (ufo_value_equal (ufo_config_root (cfg), ufo_config_root (ref)));
    ufo_config_destroy (&ref);
    ufo_config_destroy (&cfg);
}

//  --- tests -----------------------------------------------------------------

UFO_TEST (test_defaults)
{
    ufo_config_t *cfg = ufo_config_new ();
    REQUIRE (cfg);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", -1), 50);
    CHECK_INT (ufo_config_int (cfg, "MAX_ROUND", -1), 1);
    CHECK (ufo_config_float (cfg, "SLEEP_TIME", -1) == 1.0);
    CHECK_INT (ufo_config_int (cfg, "JSON_PARSING_RETRY", -1), 3);
    CHECK (ufo_config_bool (cfg, "SAFE_GUARD", false) == true);
    CHECK (ufo_config_bool (cfg, "ASK_QUESTION", true) == false);
    CHECK (ufo_config_bool (cfg, "USE_CUSTOMIZATION", true) == false);
    CHECK_STR (ufo_config_str (cfg, "QA_PAIR_FILE", NULL), "customization/global_memory.jsonl");
    CHECK_INT (ufo_config_int (cfg, "QA_PAIR_NUM", -1), 20);
    const ufo_value_t *keys = ufo_config_get (cfg, "HISTORY_KEYS");
    CHECK_INT (ufo_value_size (keys), 4);
    CHECK_STR (ufo_value_str (ufo_value_list_at (keys, 3)), "UserConfirm");
    CHECK (ufo_config_bool (cfg, "SCREENSHOT_TO_MEMORY", false));
    CHECK (ufo_config_bool (cfg, "EVA_SESSION", false));
    CHECK (!ufo_config_bool (cfg, "EVA_ROUND", true));
    CHECK (ufo_config_bool (cfg, "EVA_ALL_SCREENSHOTS", false));
    CHECK (ufo_config_bool (cfg, "INCLUDE_LAST_SCREENSHOT", false));
    CHECK (!ufo_config_bool (cfg, "CONCAT_SCREENSHOT", true));
    CHECK (!ufo_config_bool (cfg, "SAVE_UI_TREE", true));
    CHECK (!ufo_config_bool (cfg, "SAVE_FULL_SCREEN", true));
    CHECK (ufo_config_bool (cfg, "LOG_TO_MARKDOWN", false));
    CHECK_INT (ufo_value_size (ufo_config_get (cfg, "CONTROL_LIST")), 16);
    CHECK_STR (ufo_config_str (cfg, "CONTROL_LIST.14", NULL), "Text");
    CHECK_INT (ufo_config_int (cfg, "MAX_TOKENS", -1), 2000);
    CHECK (ufo_config_float (cfg, "TEMPERATURE", -1) == 0.0);
    CHECK (ufo_value_type (ufo_config_get (cfg, "TEMPERATURE")) == UFO_TFLOAT);
    CHECK (ufo_config_float (cfg, "TOP_P", -1) == 0.0);
    CHECK_INT (ufo_config_int (cfg, "TIMEOUT", -1), 60);
    CHECK_INT (ufo_config_int (cfg, "MAX_RETRY", -1), 3);
    const char *blocks [] = { "HOST_AGENT", "APP_AGENT", "BACKUP_AGENT" };
    for (size_t i = 0; i < 3; i++) {
        char path [64];
        snprintf (path, sizeof (path), "%s.VISUAL_MODE", blocks [i]);
        CHECK (ufo_config_bool (cfg, path, false));
        snprintf (path, sizeof (path), "%s.API_TYPE", blocks [i]);
        CHECK_STR (ufo_config_str (cfg, path, NULL), "openai");
        snprintf (path, sizeof (path), "%s.MAX_TOKENS", blocks [i]);
        CHECK (ufo_config_get (cfg, path) == NULL);         //  optional: top level applies
    }
    CHECK_INT (ufo_value_size (ufo_config_get (cfg, "EVALUATION_AGENT")), 0);
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "always");
    CHECK_INT (ufo_config_int (cfg, "broker.max_message_bytes", 0), 16 << 20);
    CHECK_INT (ufo_config_int (cfg, "broker.max_item_bytes", 0), 1 << 20);
    CHECK_INT (ufo_config_int (cfg, "broker.max_items_per_board", 0), 1000000);
    CHECK_INT (ufo_config_int (cfg, "broker.max_blob_bytes", 0), 16 << 20);
    CHECK_INT (ufo_config_int (cfg, "broker.stats_interval_ms", 0), 5000);
    CHECK_INT (ufo_config_int (cfg, "dispatch.heartbeat_ivl_ms", 0), 1000);
    CHECK_INT (ufo_config_int (cfg, "dispatch.heartbeat_liveness", 0), 3);
    CHECK_INT (ufo_config_int (cfg, "dispatch.default_max_attempts", 0), 3);
    CHECK_STR (ufo_config_str (cfg, "llm.mode", NULL), "live");
    CHECK_STR (ufo_config_str (cfg, "llm.prices_file", NULL), "config/prices.json");
    CHECK (!ufo_config_bool (cfg, "security.curve", true));
    CHECK_STR (ufo_config_str (cfg, "log.level", NULL), "info");

    //  Typed reads give the default for unknown or mistyped paths.
    CHECK_INT (ufo_config_int (cfg, "NO_SUCH_KEY", 77), 77);
    CHECK_INT (ufo_config_int (cfg, "QA_PAIR_FILE", 77), 77);
    CHECK (ufo_config_float (cfg, "SAFE_GUARD", 2.5) == 2.5);
    CHECK (ufo_config_bool (cfg, "MAX_STEP", true) == true);
    CHECK_STR (ufo_config_str (cfg, "MAX_STEP", "d"), "d");
    CHECK_INT (ufo_config_int (cfg, "SLEEP_TIME", 77), 1);     //  integral float reads as int
    CHECK (ufo_config_float (cfg, "MAX_STEP", 0) == 50.0);
    ufo_config_destroy (&cfg);
    ufo_config_destroy (&cfg);
    ufo_config_destroy (NULL);
}

UFO_TEST (test_schema_consistent)
{
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    CHECK (count > 60);
    ufo_config_t *cfg = ufo_config_new ();
    for (size_t i = 0; i < count; i++) {
        //  Every default is present, and setting it again is accepted.
        const ufo_value_t *value = ufo_config_get (cfg, schema [i].path);
        if (schema [i].dflt) {
            if (!value)
                UFO_FAIL_ ("%s: default missing", schema [i].path);
            ufo_error_t err;
            ufo_value_t *dflt = ufo_json_parse_str (schema [i].dflt, &err);
            if (!dflt)
                UFO_FAIL_ ("%s: default is not JSON: %s", schema [i].path, err.message);
            else
            if (ufo_config_set (cfg, schema [i].path, &dflt, &err))
                UFO_FAIL_ ("%s: default rejected: %s", schema [i].path, err.message);
        }
        else
            CHECK (value == NULL);
        CHECK (ufo_config_schema_find (schema [i].path) == &schema [i]);
        CHECK (schema [i].help && *schema [i].help);
        //  No duplicates.
        for (size_t j = i + 1; j < count; j++)
            if (strcmp (schema [i].path, schema [j].path) == 0)
                UFO_FAIL_ ("%s: listed twice", schema [i].path);
    }
    CHECK (ufo_config_schema_find ("NOPE") == NULL);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_file_merge)
{
    const char *path = s_write ("merge.json",
        "{\n"
        "  \"MAX_STEP\": 10,\n"
        "  \"TEMPERATURE\": 1,\n"
        "  \"HISTORY_KEYS\": [\"Step\", \"Action\"],\n"
        "  \"HOST_AGENT\": {\"API_MODEL\": \"llava\", \"TEMPERATURE\": 0.5},\n"
        "  \"EVALUATION_AGENT\": {\"API_TYPE\": \"ollama\"},\n"
        "  \"broker\": {\"fsync\": \"no\"},\n"
        "  \"desktop\": {\"launchers\": {\"gedit\": [\"gedit\", \"--new-window\"]}}\n"
        "}\n");
    REQUIRE (path);
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    CHECK_INT (ufo_config_load_file (cfg, path, &err), 0);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 10);
    CHECK (ufo_value_type (ufo_config_get (cfg, "TEMPERATURE")) == UFO_TFLOAT);
    CHECK (ufo_config_float (cfg, "TEMPERATURE", 0) == 1.0);
    CHECK_INT (ufo_value_size (ufo_config_get (cfg, "HISTORY_KEYS")), 2);
    CHECK_STR (ufo_config_str (cfg, "HOST_AGENT.API_MODEL", NULL), "llava");
    CHECK_STR (ufo_config_str (cfg, "HOST_AGENT.API_TYPE", NULL), "openai");     //  kept
    CHECK (ufo_config_bool (cfg, "HOST_AGENT.VISUAL_MODE", false));
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "no");
    CHECK_INT (ufo_config_int (cfg, "broker.max_item_bytes", 0), 1 << 20);       //  kept
    CHECK_STR (ufo_config_str (cfg, "desktop.launchers.gedit.1", NULL), "--new-window");
    CHECK_INT (ufo_config_int (cfg, "MAX_ROUND", 0), 1);

    //  A second file merges over the first; free maps merge key by key; null unsets an
    //  optional key.
    path = s_write ("second.json",
        "{\"desktop\": {\"launchers\": {\"calc\": [\"gnome-calculator\"]}},"
        " \"EVALUATION_AGENT\": {\"API_TYPE\": null}}");
    CHECK_INT (ufo_config_load_file (cfg, path, &err), 0);
    CHECK_STR (ufo_config_str (cfg, "desktop.launchers.gedit.0", NULL), "gedit");
    CHECK_STR (ufo_config_str (cfg, "desktop.launchers.calc.0", NULL), "gnome-calculator");
    CHECK (ufo_config_get (cfg, "EVALUATION_AGENT.API_TYPE") == NULL);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 10);

    //  An empty object changes nothing; text loads work the same way.
    CHECK_INT (ufo_config_load_text (cfg, "{}", 2, &err), 0);
    CHECK_INT (ufo_config_load_text (cfg, "{\"MAX_ROUND\": 4}", 16, &err), 0);
    CHECK_INT (ufo_config_int (cfg, "MAX_ROUND", 0), 4);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_errors)
{
    //  Wrong type: names the full key path, the expected type and what was found.
    s_expect_error ("{\"HOST_AGENT\": {\"VISUAL_MODE\": \"yes\"}}", UFO_E_TYPE,
                    "HOST_AGENT.VISUAL_MODE: expected bool", "found string \"yes\"");
    s_expect_error ("{\"MAX_STEP\": 5, \"SAFE_GUARD\": 1}", UFO_E_TYPE,
                    "SAFE_GUARD: expected bool", "found int 1");
    s_expect_error ("{\"MAX_STEP\": 1.5}", UFO_E_TYPE, "MAX_STEP: expected int", "float");
    s_expect_error ("{\"MAX_STEP\": null}", UFO_E_TYPE, "MAX_STEP", "null");
    s_expect_error ("{\"HOST_AGENT\": \"gpt-4o\"}", UFO_E_TYPE, "HOST_AGENT: expected map", NULL);
    s_expect_error ("{\"HISTORY_KEYS\": [\"Step\", 3]}", UFO_E_TYPE,
                    "HISTORY_KEYS[1]: expected string", "int 3");
    s_expect_error ("{\"HISTORY_KEYS\": \"Step\"}", UFO_E_TYPE, "expected list<string>", NULL);
    s_expect_error ("{\"desktop\": {\"launchers\": {\"gedit\": \"gedit\"}}}", UFO_E_TYPE,
                    "desktop.launchers.gedit: expected list<string>", NULL);
    s_expect_error ("{\"broker\": {\"max_item_bytes\": \"1MiB\"}}", UFO_E_TYPE,
                    "broker.max_item_bytes", "expected int");
    //  Out of range, names the range.
    s_expect_error ("{\"MAX_STEP\": 0}", UFO_E_RANGE, "MAX_STEP: int 0 is out of range 1..", NULL);
    s_expect_error ("{\"TOP_P\": 1.5}", UFO_E_RANGE, "TOP_P", "0..1");
    s_expect_error ("{\"APP_AGENT\": {\"TEMPERATURE\": -0.1}}", UFO_E_RANGE,
                    "APP_AGENT.TEMPERATURE", "0..2");
    s_expect_error ("{\"desktop\": {\"png_compression\": 10}}", UFO_E_RANGE,
                    "desktop.png_compression", "0..9");
    s_expect_error ("{\"broker\": {\"max_message_bytes\": 9223372036854775807}}", UFO_E_RANGE,
                    "broker.max_message_bytes", NULL);
    //  Not one of the allowed values.
    s_expect_error ("{\"broker\": {\"fsync\": \"sometimes\"}}", UFO_E_RANGE,
                    "broker.fsync: string \"sometimes\" is not one of always|everysec|no", NULL);
    s_expect_error ("{\"HOST_AGENT\": {\"API_TYPE\": \"bard\"}}", UFO_E_RANGE,
                    "HOST_AGENT.API_TYPE", "openai");
    s_expect_error ("{\"log\": {\"level\": \"loud\"}}", UFO_E_RANGE, "log.level", NULL);
    //  Not an object, not JSON, NUL bytes in strings.
    s_expect_error ("[1, 2]", UFO_E_TYPE, "must be a JSON object", "list");
    s_expect_error ("", UFO_E_TRUNCATED, "invalid JSON", NULL);
    s_expect_error ("{\"MAX_STEP\": 5,}", UFO_E_SYNTAX, "configuration text", "line 1");
    s_expect_error ("{\"QA_PAIR_FILE\": \"a\\u0000b\"}", UFO_E_RANGE,
                    "QA_PAIR_FILE", "NUL");
    //  A later valid key does not survive an earlier error, nor an earlier one a later error.
    s_expect_error ("{\"MAX_ROUND\": 7, \"broker\": {\"fsync\": \"no\", \"snapshot_every\": 0}}",
                    UFO_E_RANGE, "broker.snapshot_every", NULL);
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    CHECK_INT (ufo_config_load_text (cfg, NULL, 0, &err), -1);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_file_errors)
{
    //  Broken JSON: names the file, the line and the byte offset.
    const char *text = "{\n  \"MAX_STEP\": 5,\n  oops\n}\n";
    const char *path = s_write ("broken.json", text);
    REQUIRE (path);
    char saved [512];
    snprintf (saved, sizeof (saved), "%s", path);
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    CHECK_INT (ufo_config_load_file (cfg, saved, &err), -1);
    CHECK_INT (err.code, UFO_E_SYNTAX);
    CHECK_CONTAINS (err.message, saved);
    CHECK_CONTAINS (err.message, "line 3");
    CHECK_INT (err.offset, strstr (text, "oops") - text);
    char offset [32];
    snprintf (offset, sizeof (offset), "offset %zu", err.offset);
    CHECK_CONTAINS (err.message, offset);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 50);

    //  A wrong type in a file names the file and the key.
    path = s_write ("badtype.json", "{\"APP_AGENT\": {\"API_MODEL\": 4}}");
    snprintf (saved, sizeof (saved), "%s", path);
    CHECK_INT (ufo_config_load_file (cfg, saved, &err), -1);
    CHECK_INT (err.code, UFO_E_TYPE);
    CHECK_CONTAINS (err.message, saved);
    CHECK_CONTAINS (err.message, "APP_AGENT.API_MODEL");

    //  A missing file.
    snprintf (saved, sizeof (saved), "%s/does-not-exist.json", s_dir);
    CHECK_INT (ufo_config_load_file (cfg, saved, &err), -1);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    CHECK_CONTAINS (err.message, "does-not-exist.json");
    //  A directory is not a file.
    CHECK_INT (ufo_config_load_file (cfg, s_dir, &err), -1);
    CHECK (err.code == UFO_E_IO || err.code == UFO_E_NOT_FOUND);
    CHECK_INT (ufo_config_load_file (cfg, NULL, &err), -1);
    //  ufo_config_load with a missing explicit file fails.
    CHECK (ufo_config_load (saved, &err) == NULL);
    CHECK_INT (err.code, UFO_E_NOT_FOUND);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_unknown_key_warns)
{
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    s_capture_start ();
    const char *text = "{\"MAX_STEPS\": 3, \"broker\": {\"fsyncc\": \"no\"}, \"MAX_STEP\": 9}";
    int rc = ufo_config_load_text (cfg, text, strlen (text), &err);
    char *log = s_capture_end ();
    CHECK_INT (rc, 0);
    CHECK_CONTAINS (log, "unknown configuration key 'MAX_STEPS'");
    CHECK_CONTAINS (log, "'broker.fsyncc'");
    CHECK_CONTAINS (log, "configuration text");
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 9);
    free (log);

    //  A dotted key at the top level is not a path: unknown, and nothing changes.
    s_capture_start ();
    text = "{\"broker.fsync\": \"no\"}";
    rc = ufo_config_load_text (cfg, text, strlen (text), &err);
    log = s_capture_end ();
    CHECK_INT (rc, 0);
    CHECK_CONTAINS (log, "unknown configuration key 'broker.fsync'");
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "always");
    free (log);

    //  Thousands of unknown keys: a bounded number of lines.
    ufo_buf_t many = {0};
    ufo_buf_puts (&many, "{");
    for (int i = 0; i < 5000; i++)
        ufo_buf_printf (&many, "%s\"K%d\": %d", i ? "," : "", i, i);
    ufo_buf_puts (&many, "}");
    s_capture_start ();
    rc = ufo_config_load_text (cfg, many.data, many.len, &err);
    log = s_capture_end ();
    CHECK_INT (rc, 0);
    size_t lines = 0;
    for (const char *p = log; p && *p; p++)
        lines += *p == '\n';
    CHECK_INT (lines, 21);
    CHECK_CONTAINS (log, "4980 more unknown configuration keys");
    free (log);
    ufo_buf_free (&many);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_env)
{
    char *envp [] = {
        "PATH=/usr/bin",
        "UFO_MAX_STEP=10",
        "UFO_HOST_AGENT__API_MODEL=gpt-4o-mini",
        "ufo_ignored_lowercase_prefix=1",
        "UFO_broker__Fsync=everysec",
        "UFO_HISTORY_KEYS=[\"Step\", \"Action\"]",
        "UFO_SAFE_GUARD=false",
        "UFO_TEMPERATURE=0.5",
        "UFO_APP_AGENT__API_KEY=null",
        "UFO_EVALUATION_AGENT__MAX_TOKENS=123",
        "UFO_DESKTOP__LAUNCHERS={\"gedit\": [\"gedit\"]}",
        "UFO_CONFIG=/nonexistent/ufo.json",
        "UFO_LOG_LEVEL=debug",
        NULL
    };
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    s_capture_start ();
    int rc = ufo_config_apply_env (cfg, envp, &err);
    char *log = s_capture_end ();
    CHECK_INT (rc, 0);
    CHECK_STR (log, "");            //  nothing unknown here: no warnings
    free (log);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 10);
    CHECK_STR (ufo_config_str (cfg, "HOST_AGENT.API_MODEL", NULL), "gpt-4o-mini");
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "everysec");
    CHECK_INT (ufo_value_size (ufo_config_get (cfg, "HISTORY_KEYS")), 2);
    CHECK_STR (ufo_config_str (cfg, "HISTORY_KEYS.1", NULL), "Action");
    CHECK (ufo_config_bool (cfg, "SAFE_GUARD", true) == false);
    CHECK (ufo_config_float (cfg, "TEMPERATURE", 0) == 0.5);
    CHECK_STR (ufo_config_str (cfg, "APP_AGENT.API_KEY", NULL), "null");    //  strings are raw
    CHECK_INT (ufo_config_int (cfg, "EVALUATION_AGENT.MAX_TOKENS", 0), 123);
    CHECK_STR (ufo_config_str (cfg, "desktop.launchers.gedit.0", NULL), "gedit");

    //  Unknown UFO_ variables warn and name the variable.
    char *unknown [] = { "UFO_NOPE=1", "UFO_HOST_AGENT__API_MODELL=x", NULL };
    s_capture_start ();
    rc = ufo_config_apply_env (cfg, unknown, &err);
    log = s_capture_end ();
    CHECK_INT (rc, 0);
    CHECK_CONTAINS (log, "UFO_NOPE");
    CHECK_CONTAINS (log, "UFO_HOST_AGENT__API_MODELL");
    free (log);

    //  Errors name the variable and the key; nothing from the same call is applied.
    struct { const char *var; int code; const char *needle; } bad [] = {
        { "UFO_MAX_STEP=abc", UFO_E_TYPE, "expected int" },
        { "UFO_MAX_STEP=\"10\"", UFO_E_TYPE, "found string" },
        { "UFO_MAX_STEP=0", UFO_E_RANGE, "out of range" },
        { "UFO_BROKER__FSYNC=sometimes", UFO_E_RANGE, "broker.fsync" },
        { "UFO_SAFE_GUARD=yes", UFO_E_TYPE, "SAFE_GUARD" },
        { "UFO_HISTORY_KEYS=Step,Action", UFO_E_TYPE, "list<string>" },
        { "UFO_HOST_AGENT={\"VISUAL_MODE\": 1}", UFO_E_TYPE, "HOST_AGENT.VISUAL_MODE" },
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad [0]); i++) {
        char *one [] = { "UFO_MAX_ROUND=9", (char *) bad [i].var, NULL };
        rc = ufo_config_apply_env (cfg, one, &err);
        CHECK_INT (rc, -1);
        CHECK_INT (err.code, bad [i].code);
        char name [64];
        snprintf (name, sizeof (name), "%.*s", (int) (strchr (bad [i].var, '=') - bad [i].var),
                  bad [i].var);
        CHECK_CONTAINS (err.message, name);
        CHECK_CONTAINS (err.message, bad [i].needle);
        CHECK_INT (ufo_config_int (cfg, "MAX_ROUND", 0), 1);
    }
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_load_startup)
{
    //  UFO_CONFIG names the file; the process environment applies on top.
    const char *path = s_write ("startup.json", "{\"MAX_STEP\": 12, \"MAX_ROUND\": 2}");
    REQUIRE (path);
    setenv ("UFO_CONFIG", path, 1);
    setenv ("UFO_MAX_ROUND", "3", 1);
    ufo_error_t err;
    ufo_config_t *cfg = ufo_config_load (NULL, &err);
    REQUIRE (cfg);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 12);
    CHECK_INT (ufo_config_int (cfg, "MAX_ROUND", 0), 3);
    ufo_config_destroy (&cfg);
    setenv ("UFO_MAX_ROUND", "zero", 1);
    cfg = ufo_config_load (NULL, &err);
    CHECK (cfg == NULL);
    CHECK_CONTAINS (err.message, "UFO_MAX_ROUND");
    unsetenv ("UFO_MAX_ROUND");
    unsetenv ("UFO_CONFIG");

    //  Without a path or UFO_CONFIG: ./config/ufo.json when it exists.
    char cwd [1024];
    REQUIRE (getcwd (cwd, sizeof (cwd)));
    char dir [600];
    snprintf (dir, sizeof (dir), "%s/cwd", s_dir);
    char sub [700];
    snprintf (sub, sizeof (sub), "%s/config", dir);
    REQUIRE (mkdir (dir, 0700) == 0 && mkdir (sub, 0700) == 0);
    REQUIRE (chdir (dir) == 0);
    cfg = ufo_config_load (NULL, &err);         //  no file here yet: defaults (or installed)
    CHECK (cfg);
    if (cfg)
        CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 50);
    ufo_config_destroy (&cfg);
    FILE *file = fopen ("config/ufo.json", "w");
    REQUIRE (file);
    fputs ("{\"MAX_STEP\": 33}", file);
    fclose (file);
    cfg = ufo_config_load (NULL, &err);
    CHECK (cfg);
    if (cfg)
        CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 33);
    ufo_config_destroy (&cfg);
    CHECK (chdir (cwd) == 0);
}

UFO_TEST (test_set)
{
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    ufo_value_t *value = ufo_value_new_int (20);
    CHECK_INT (ufo_config_set (cfg, "MAX_STEP", &value, &err), 0);
    CHECK (value == NULL);
    CHECK_INT (ufo_config_int (cfg, "MAX_STEP", 0), 20);
    value = ufo_value_new_string ("no");
    CHECK_INT (ufo_config_set (cfg, "broker.fsync", &value, &err), 0);
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "no");
    value = ufo_value_new_string ("maybe");
    CHECK_INT (ufo_config_set (cfg, "broker.fsync", &value, &err), -1);
    CHECK (value == NULL);
    CHECK_CONTAINS (err.message, "broker.fsync");
    CHECK_STR (ufo_config_str (cfg, "broker.fsync", NULL), "no");
    value = ufo_value_new_int (1);
    CHECK_INT (ufo_config_set (cfg, "a..b", &value, &err), -1);
    CHECK_INT (err.code, UFO_E_INVALID);
    CHECK (value == NULL);
    value = ufo_value_new_int (1);
    CHECK_INT (ufo_config_set (cfg, "", &value, &err), -1);
    CHECK (value == NULL);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_apply_log)
{
    unsetenv ("UFO_LOG_LEVEL");
    unsetenv ("UFO_LOG_JSON");
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    const char *text = "{\"log\": {\"level\": \"error\"}}";
    CHECK_INT (ufo_config_load_text (cfg, text, strlen (text), &err), 0);
    ufo_log_level_t saved = ufo_log_level ();
    ufo_config_apply_log (cfg);
    CHECK_INT (ufo_log_level (), UFO_LOG_ERROR);
    //  The logger's own variable wins.
    setenv ("UFO_LOG_LEVEL", "debug", 1);
    ufo_log_set_level (UFO_LOG_DEBUG);
    ufo_config_apply_log (cfg);
    CHECK_INT (ufo_log_level (), UFO_LOG_DEBUG);
    unsetenv ("UFO_LOG_LEVEL");
    ufo_log_set_level (saved);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_agent_fallback)
{
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    //  EVALUATION_AGENT sets nothing: APP_AGENT's values.
    CHECK (ufo_config_agent (cfg, "EVALUATION_AGENT", "API_MODEL")
           == ufo_config_get (cfg, "APP_AGENT.API_MODEL"));
    const char *text = "{\"APP_AGENT\": {\"API_MODEL\": \"m-app\", \"MAX_TOKENS\": 700},"
                       " \"HOST_AGENT\": {\"TIMEOUT\": 5}, \"MAX_TOKENS\": 1500}";
    CHECK_INT (ufo_config_load_text (cfg, text, strlen (text), &err), 0);
    CHECK_STR (ufo_value_str (ufo_config_agent (cfg, "EVALUATION_AGENT", "API_MODEL")), "m-app");
    //  Block value first.
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "HOST_AGENT", "TIMEOUT")), 5);
    //  Then the top level (not APP_AGENT, which only EVALUATION_AGENT falls back to).
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "HOST_AGENT", "MAX_TOKENS")), 1500);
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "BACKUP_AGENT", "MAX_TOKENS")), 1500);
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "APP_AGENT", "TIMEOUT")), 60);
    //  EVALUATION_AGENT: its own, then APP_AGENT, then the top level.
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "EVALUATION_AGENT", "MAX_TOKENS")), 700);
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "EVALUATION_AGENT", "TIMEOUT")), 60);
    text = "{\"EVALUATION_AGENT\": {\"API_MODEL\": \"m-eval\", \"MAX_TOKENS\": 900}}";
    CHECK_INT (ufo_config_load_text (cfg, text, strlen (text), &err), 0);
    CHECK_STR (ufo_value_str (ufo_config_agent (cfg, "EVALUATION_AGENT", "API_MODEL")), "m-eval");
    CHECK_INT (ufo_value_int (ufo_config_agent (cfg, "EVALUATION_AGENT", "MAX_TOKENS")), 900);
    CHECK_STR (ufo_value_str (ufo_config_agent (cfg, "HOST_AGENT", "API_MODEL")), "gpt-4o");
    //  Unset again with null: back to the fallback.
    text = "{\"EVALUATION_AGENT\": {\"API_MODEL\": null}}";
    CHECK_INT (ufo_config_load_text (cfg, text, strlen (text), &err), 0);
    CHECK_STR (ufo_value_str (ufo_config_agent (cfg, "EVALUATION_AGENT", "API_MODEL")), "m-app");
    //  Set nowhere.
    CHECK (ufo_config_agent (cfg, "HOST_AGENT", "NOPE") == NULL);
    CHECK (ufo_config_agent (cfg, NULL, "API_MODEL") == NULL);
    ufo_config_destroy (&cfg);
}

static char *
s_read_source (const char *relative)
{
    const char *root = getenv ("UFO_SOURCE_DIR");
    char path [1024];
    snprintf (path, sizeof (path), "%s/%s", root ? root : "..", relative);
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    ufo_buf_t buf = {0};
    char chunk [4096];
    size_t got;
    while ((got = fread (chunk, 1, sizeof (chunk), file)) > 0)
        ufo_buf_append (&buf, chunk, got);
    fclose (file);
    return ufo_buf_detach (&buf, NULL);
}

UFO_TEST (test_shipped_defaults)
{
    //  config/ufo.json is exactly the schema's defaults, and loads without a warning.
    const char *root = getenv ("UFO_SOURCE_DIR");
    char path [1024];
    snprintf (path, sizeof (path), "%s/config/ufo.json", root ? root : "..");
    ufo_config_t *cfg = ufo_config_new ();
    ufo_config_t *dflt = ufo_config_new ();
    ufo_error_t err;
    s_capture_start ();
    int rc = ufo_config_load_file (cfg, path, &err);
    char *log = s_capture_end ();
    CHECK_INT (rc, 0);
    if (rc)
        UFO_FAIL_ ("%s", err.message);
    CHECK_STR (log, "");
    free (log);
    CHECK (ufo_value_equal (ufo_config_root (cfg), ufo_config_root (dflt)));
    //  And the file holds every default itself (not just nothing at all).
    ufo_value_t *tree = ufo_json_parse_file (path, NULL, &err);
    REQUIRE (tree);
    CHECK (ufo_value_equal (tree, ufo_config_root (dflt)));
    ufo_value_destroy (&tree);
    ufo_config_destroy (&dflt);
    ufo_config_destroy (&cfg);
}

UFO_TEST (test_docs_mention_every_key)
{
    char *docs = s_read_source ("docs/CONFIG.md");
    REQUIRE (docs);
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    for (size_t i = 0; i < count; i++) {
        char quoted [256];
        snprintf (quoted, sizeof (quoted), "`%s`", schema [i].path);
        if (!strstr (docs, quoted))
            UFO_FAIL_ ("docs/CONFIG.md does not mention %s", quoted);
    }
    free (docs);
}

//  --- the tool side ---------------------------------------------------------

static void
s_print_markdown (void)
{
    size_t count;
    const ufo_config_key_t *schema = ufo_config_schema (&count);
    printf ("| key | type | default | range / values | meaning |\n");
    printf ("|---|---|---|---|---|\n");
    for (size_t i = 0; i < count; i++) {
        const ufo_config_key_t *row = &schema [i];
        char range [128] = "";
        if (row->range)
            snprintf (range, sizeof (range), "%s", row->range);
        else
        if (row->choices) {
            size_t o = 0;
            for (const char *p = row->choices; *p && o + 8 < sizeof (range); p++) {
                if (*p == '|') {
                    range [o++] = ',';
                    range [o++] = ' ';
                }
                else
                    range [o++] = *p;
            }
            range [o] = 0;
        }
        char type [64];
        snprintf (type, sizeof (type), "%s", row->type);
        printf ("| `%s` | `%s` | %s%s%s | %s | %s |\n", row->path, type,
                row->dflt ? "`" : "", row->dflt ? row->dflt : "(unset)", row->dflt ? "`" : "",
                range, row->help);
    }
}

int
main (int argc, char *argv [])
{
    if (argc > 1 && strcmp (argv [1], "--defaults-json") == 0) {
        ufo_config_t *cfg = ufo_config_new ();
        char *text = ufo_json_dump (ufo_config_root (cfg), UFO_JSON_PRETTY, NULL);
        printf ("%s\n", text);
        free (text);
        ufo_config_destroy (&cfg);
        return 0;
    }
    if (argc > 1 && strcmp (argv [1], "--markdown") == 0) {
        s_print_markdown ();
        return 0;
    }
    snprintf (s_dir, sizeof (s_dir), "/tmp/ufo-test-config-XXXXXX");
    if (!mkdtemp (s_dir)) {
        perror ("mkdtemp");
        return 1;
    }
    UFO_RUN (test_defaults);
    UFO_RUN (test_schema_consistent);
    UFO_RUN (test_file_merge);
    UFO_RUN (test_errors);
    UFO_RUN (test_file_errors);
    UFO_RUN (test_unknown_key_warns);
    UFO_RUN (test_env);
    UFO_RUN (test_load_startup);
    UFO_RUN (test_set);
    UFO_RUN (test_apply_log);
    UFO_RUN (test_agent_fallback);
    UFO_RUN (test_shipped_defaults);
    UFO_RUN (test_docs_mention_every_key);
    char command [512];
    snprintf (command, sizeof (command), "rm -rf '%s'", s_dir);
    if (system (command) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
