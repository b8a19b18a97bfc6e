/*  ufo_cmd_doctor.c - `ufo doctor [--quick] [--only LIST] [--config FILE] [--broker EP]
    [--api-type T] [--api-base URL] [--model NAME]`: checks what a session needs and says
    what to do about each failure.

    broker   reachable, its version (ping);
    model    per agent (HOST_AGENT, APP_AGENT, EVALUATION_AGENT, BACKUP_AGENT when used): the
             settings make an endpoint, a key where the API needs one, the endpoint reachable,
             then (not with --quick) a tiny real request: key accepted, model known, a JSON
             reply the agents can use, an image accepted when VISUAL_MODE is on, the latency;
             agents sharing one engine share one check;
    prices   a price for every model (else costs show $0);
    desktop  the display and the accessibility bus (or, without DISPLAY, what `ufo up`
             needs to start a virtual desktop), and every launcher resolvable.
    Exit 0 only when every check that ran passed. `ufo up` runs the quick model checks at
    start (ufo_cli_doctor_quick) and warns. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_paths.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_model.h"
#include "ufo_cli_session.h"
#include "ufo_llm_parse.h"
#include "ufo_http.h"
#include "ufo_desktop.h"

//  An 8x8 PNG, for the image check.
#define S_PNG "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9hAAAAAElFTkSuQmCC"

typedef struct {
    FILE *out;
    int passed, failed;
    bool color;
} s_report_t;

static void
s_line (s_report_t *r, bool ok, const char *what, const char *advice, const char *format, ...)
    __attribute__ ((format (printf, 5, 6)));

static void
s_line (s_report_t *r, bool ok, const char *what, const char *advice, const char *format, ...)
{
    char detail [2400];
    va_list ap;
    va_start (ap, format);
    vsnprintf (detail, sizeof detail, format, ap);
    va_end (ap);
    const char *mark = ok ? (r->color ? "\033[32m✔\033[0m" : "✔") : (r->color ? "\033[31m✘\033[0m" : "✘");
    fprintf (r->out, "%s %-17s %s\n", mark, what, detail);
    if (!ok && advice && *advice)
        fprintf (r->out, "  %-17s → %s\n", "", advice);
    if (ok)
        r->passed++;
    else
        r->failed++;
}

//  --- broker ------------------------------------------------------------------------------

static void
s_check_broker (s_report_t *r, const ufo_config_t *config, const char *flag)
{
    char endpoint [512], log_root [PATH_MAX];
    ufo_error_t err;
    const char *advice = "start everything with `ufo up` (or give the broker's endpoint with --broker EP)";
    if (ufo_cli_broker (flag, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0) {
        s_line (r, false, "broker", advice, "%s", err.message);
        return;
    }
    if (!strncmp (endpoint, "ipc://", 6) && access (endpoint + 6, F_OK) != 0) {
        s_line (r, false, "broker", advice, "no broker at %s (the socket does not exist)", endpoint);
        return;
    }
    if (ufo_security_init (config, "monitor", &err) < 0) {
        s_line (r, false, "broker", "check the security.* settings (docs/DEPLOYMENT.md)", "%s", err.message);
        return;
    }
    ufo_bb_client_t *client = ufo_bb_client_new (endpoint, NULL, &err);
    ufo_value_t *pong = NULL;
    int64_t t0 = ufo_time_mono_ms ();
    if (client) {
        ufo_bb_client_set_timeout (client, 2000);
        ufo_bb_client_set_sender (client, "ufo-doctor");
        pong = ufo_bb_client_call (client, "ping", NULL, NULL, 0, NULL, NULL, &err);
    }
    if (!pong)
        s_line (r, false, "broker", advice, "no answer from %s: %s", endpoint, err.message);
    else {
        const char *version = ufo_value_map_str (pong, "version", "?");
        bool same = !strcmp (version, UFO_VERSION);
        s_line (r, same, "broker", "run the broker and the agents of the same build as this `ufo` (restart `ufo up`)",
                "%s: ufobus %s%s, %" PRId64 " ms", endpoint, version, same ? "" : " (this ufo is " UFO_VERSION ")",
                ufo_time_mono_ms () - t0);
    }
    ufo_value_destroy (&pong);
    ufo_bb_client_destroy (&client);
}

//  --- models ------------------------------------------------------------------------------

static const char *
s_key_var (const ufo_llm_config_t *cfg)
{
    return !strcmp (cfg->api_type, "claude") ? "ANTHROPIC_API_KEY" : !strcmp (cfg->api_type, "gemini")
         ? "GEMINI_API_KEY" : !strcmp (cfg->api_type, "aoai") ? "AZURE_OPENAI_API_KEY" : "OPENAI_API_KEY";
}

//  The checks that spend no tokens: settings, key, endpoint reachable. Returns 0 when they
//  pass, else -1 with the problem and the advice.
static int
s_model_quick (const ufo_config_t *config, const char *block, ufo_llm_config_t *cfg, char *url, size_t usize,
               char *why, size_t wsize, char *advice, size_t asize)
{
    ufo_error_t err;
    if (ufo_llm_config_from (config, block, cfg, &err)) {
        snprintf (why, wsize, "%s", err.message);
        snprintf (advice, asize, "fix the configuration (docs/CONFIG.md)");
        return -1;
    }
    if (!ufo_llm_config_ok (cfg) || ufo_llm_config_url (cfg, url, usize)) {
        snprintf (why, wsize, "no endpoint (API_BASE%s)", !strcmp (cfg->api_type, "aoai") ? ", API_DEPLOYMENT_ID" : "");
        snprintf (advice, asize, "set UFO_API_BASE (every agent) or %s.API_BASE (docs/QUICKSTART.md)", block);
        return -1;
    }
    if (ufo_llm_config_needs_key (cfg) && !*cfg->api_key) {
        snprintf (why, wsize, "%s %s: no API key", cfg->api_type, url);
        snprintf (advice, asize, "export UFO_API_KEY=... (or %s), or set %s.API_KEY", s_key_var (cfg), block);
        return -1;
    }
    char probe [300];
    if (ufo_http_probe (url, 3000, probe, sizeof probe)) {
        snprintf (why, wsize, "%s: not reachable: %s", url, probe);
        snprintf (advice, asize, "start the model server (local) or check the network (hosted), or fix "
                  "UFO_API_BASE / %s.API_BASE", block);
        return -1;
    }
    return 0;
}

static ufo_value_t *
s_probe_messages (bool image)
{
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"role\": \"system\", \"content\": \"You are the health check of ufobus. Answer with the JSON object "
        "{\\\"ok\\\": true} and nothing else.\"}]", NULL);
    ufo_value_t *m = ufo_value_new_map ();
    ufo_value_map_set_str (m, "role", "user");
    ufo_value_t *parts = ufo_value_new_list ();
    ufo_value_t *p = ufo_value_new_map ();
    ufo_value_map_set_str (p, "type", "text");
    ufo_value_map_set_str (p, "text", image ? "Here is a tiny image. Answer {\"ok\": true}." : "Answer {\"ok\": true}.");
    ufo_value_list_push (parts, &p);
    if (image) {
        p = ufo_value_new_map ();
        ufo_value_map_set_str (p, "type", "image_url");
        ufo_value_t *u = ufo_value_new_map ();
        ufo_value_map_set_str (u, "url", S_PNG);
        ufo_value_map_set (p, "image_url", &u);
        ufo_value_list_push (parts, &p);
    }
    ufo_value_map_set (m, "content", &parts);
    ufo_value_list_push (list, &m);
    return list;
}

//  One real request. Returns 0 when the reply is a usable JSON object.
static int
s_ask (const ufo_llm_config_t *engine, bool image, double *latency, char *why, size_t wsize, char *advice,
       size_t asize)
{
    ufo_llm_config_t cfg = *engine;
    cfg.max_retry = 0;
    if (cfg.timeout_s > 30)
        cfg.timeout_s = 30;
    if (!cfg.reasoning_model && cfg.max_tokens > 300)
        cfg.max_tokens = 300;
    ufo_error_t err;
    ufo_llm_t *llm = ufo_llm_new (&cfg, NULL, &err);
    if (!llm) {
        snprintf (why, wsize, "%s", err.message);
        snprintf (advice, asize, "fix the configuration");
        return -1;
    }
    ufo_value_t *msgs = s_probe_messages (image);
    ufo_llm_opts_t opts = { "Doctor", 0, UFO_SCHEMA_OBJECT, 0 };
    ufo_llm_response_t *resp = ufo_llm_complete (llm, msgs, &opts, &err);
    ufo_value_destroy (&msgs);
    int rc = -1;
    if (!resp)
        snprintf (why, wsize, "%s", err.message);
    else {
        *latency = resp->latency_s;
        long status = resp->http_status;
        const char *b = engine->name;
        if (resp->code == UFO_OK) {
            rc = 0;
            if (!ufo_value_map_bool (resp->decision, "ok", false))
                snprintf (why, wsize, "JSON reply without \"ok\": true (usable, but the model did not follow the instruction)");
        }
        else {
            snprintf (why, wsize, "%s", resp->error ? resp->error : ufo_errcode_name (resp->code));
            if (image && (status == 400 || status == 422 || status == 415))
                snprintf (advice, asize, "the model takes no images: use a vision model, or set %s.VISUAL_MODE false "
                          "(then the agents work from the control list only)", b);
            else
            if (status == 401 || status == 403)
                snprintf (advice, asize, "the key was refused: export UFO_API_KEY=... (or %s), or set %s.API_KEY",
                          s_key_var (engine), b);
            else
            if (status == 404)
                snprintf (advice, asize, "model or path unknown to the server: check UFO_API_MODEL / %s.API_MODEL and "
                          "API_TYPE / API_BASE", b);
            else
            if (status == 400 || status == 422)
                snprintf (advice, asize, "the server refused the request: the text after \" - \" above names the setting "
                          "(REASONING_MODEL, VISUAL_MODE, llm.json_mode)");
            else
            if (resp->code == UFO_E_SYNTAX)
                snprintf (advice, asize, "the reply was not a JSON object: use a model that follows JSON instructions "
                          "(a larger or instruction-tuned one)");
            else
            if (status == 0)
                snprintf (advice, asize, "nothing answered: start the model server or fix UFO_API_BASE / %s.API_BASE; "
                          "a slow local model may need a larger %s.TIMEOUT", b, b);
            else
                snprintf (advice, asize, "the server failed (HTTP %ld): try again, or see its own log", status);
        }
    }
    ufo_llm_response_destroy (&resp);
    ufo_llm_destroy (&llm);
    return rc;
}

typedef struct {
    char key [2000];            //  url | model | key | flags: agents sharing an engine share a check
    char block [32];
    bool ok;
} s_seen_t;

static void
s_check_models (s_report_t *r, const ufo_config_t *config, bool quick)
{
    const char *blocks [] = UFO_CLI_MODEL_BLOCKS;
    bool backup = ufo_cli_model_backup_used (config);
    s_seen_t seen [4];
    size_t nseen = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        if (!strcmp (blocks [i], "BACKUP_AGENT") && !backup)
            continue;
        ufo_llm_config_t cfg;
        char url [1200] = "", why [2000] = "", advice [600] = "";
        if (s_model_quick (config, blocks [i], &cfg, url, sizeof url, why, sizeof why, advice, sizeof advice)) {
            s_line (r, false, blocks [i], advice, "%s", why);
            continue;
        }
        char key [2000];
        snprintf (key, sizeof key, "%s|%s|%s|%d|%d|%s", url, cfg.api_model, cfg.api_key, cfg.visual_mode,
                  cfg.reasoning_model, cfg.reasoning_effort);
        size_t k = 0;
        while (k < nseen && strcmp (seen [k].key, key))
            k++;
        if (k < nseen) {
            s_line (r, seen [k].ok, blocks [i], "see above", "same engine as %s", seen [k].block);
            continue;
        }
        snprintf (seen [nseen].key, sizeof seen [nseen].key, "%s", key);
        snprintf (seen [nseen].block, sizeof seen [nseen].block, "%s", blocks [i]);
        const char *model = *cfg.api_model ? cfg.api_model : cfg.api_deployment_id;
        bool ok = true;
        if (quick)
            s_line (r, true, blocks [i], NULL, "%s %s model %s: reachable (no request made: --quick)", cfg.api_type, url,
                    model);
        else {
            double t = 0;
            ok = s_ask (&cfg, false, &t, why, sizeof why, advice, sizeof advice) == 0;
            if (ok)
                s_line (r, true, blocks [i], NULL, "%s %s model %s: %s, JSON reply usable%s%s, %.0f ms",
                        cfg.api_type, url, model, *cfg.api_key ? "key accepted" : "answered", *why ? "; " : "", why,
                        t * 1000);
            else
                s_line (r, false, blocks [i], advice, "%s model %s: %s", cfg.api_type, model, why);
            if (ok && cfg.visual_mode) {
                *why = 0;
                ok = s_ask (&cfg, true, &t, why, sizeof why, advice, sizeof advice) == 0;
                char what [48];
                snprintf (what, sizeof what, "%s image", blocks [i]);
                if (ok)
                    s_line (r, true, what, NULL, "image input accepted (VISUAL_MODE on), %.0f ms", t * 1000);
                else
                    s_line (r, false, what, advice, "image input refused: %s", why);
            }
        }
        seen [nseen++].ok = ok;
    }
}

int
ufo_cli_doctor_quick (const ufo_config_t *config, FILE *out, const char *prog)
{
    const char *blocks [] = UFO_CLI_MODEL_BLOCKS;
    bool backup = ufo_cli_model_backup_used (config);
    char done [4][1200];
    size_t ndone = 0;
    int problems = 0;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        if (!strcmp (blocks [i], "BACKUP_AGENT") && !backup)
            continue;
        ufo_llm_config_t cfg;
        char url [1200] = "", why [2000] = "", advice [600] = "";
        ufo_error_t err;
        if (ufo_llm_config_from (config, blocks [i], &cfg, &err) == 0 && ufo_llm_config_ok (&cfg)
        &&  ufo_llm_config_url (&cfg, url, sizeof url) == 0) {
            char seen [1200];
            snprintf (seen, sizeof seen, "%.1100s|%d", url, *cfg.api_key != 0);
            size_t k = 0;
            while (k < ndone && strcmp (done [k], seen))
                k++;
            if (k < ndone)
                continue;       //  one probe per endpoint (and key or none)
            snprintf (done [ndone++], sizeof done [0], "%s", seen);
        }
        if (s_model_quick (config, blocks [i], &cfg, url, sizeof url, why, sizeof why, advice, sizeof advice)) {
            fprintf (out, "%s: warning: %s: %s\n  → %s\n", prog, blocks [i], why, advice);
            problems++;
        }
    }
    return problems;
}

//  --- prices ------------------------------------------------------------------------------

static void
s_check_prices (s_report_t *r, const ufo_config_t *config)
{
    ufo_error_t err;
    ufo_prices_t *prices = ufo_cli_model_prices (config, &err);
    const char *file = ufo_config_str (config, "llm.prices_file", "config/prices.json");
    if (!prices) {
        s_line (r, false, "prices", "set llm.prices_file to a price table (config/prices.json is shipped)", "%s",
                err.message);
        return;
    }
    const char *blocks [] = UFO_CLI_MODEL_BLOCKS;
    bool backup = ufo_cli_model_backup_used (config);
    char checked [1024] = "";
    for (size_t i = 0; i < UFO_ARRAY_SIZE (blocks); i++) {
        ufo_llm_config_t cfg;
        if ((!strcmp (blocks [i], "BACKUP_AGENT") && !backup) || ufo_llm_config_from (config, blocks [i], &cfg, &err))
            continue;
        char name [200];
        ufo_llm_config_model_name (&cfg, name, sizeof name);
        char tagged [210];
        snprintf (tagged, sizeof tagged, "|%s|", name);
        if (strstr (checked, tagged))
            continue;
        strncat (checked, tagged, sizeof checked - strlen (checked) - 1);
        const char *model = *cfg.api_model ? cfg.api_model : cfg.api_deployment_id;
        char advice [600];
        snprintf (advice, sizeof advice, "add \"%s\": {\"input\": <$ per 1k prompt tokens>, \"output\": <$ per 1k "
                  "completion tokens>} to %s (0 and 0 for a free local model)", name, file);
        bool known = ufo_prices_known (prices, ufo_prices_provider (cfg.api_type), model);
        s_line (r, known, "price", advice, "%s%s", name, known ? "" : ": no price; its cost would show as $0");
    }
    ufo_prices_destroy (&prices);
}

//  --- desktop -----------------------------------------------------------------------------

static bool
s_in_path (const char *name)
{
    if (strchr (name, '/'))
        return access (name, X_OK) == 0;
    const char *path = getenv ("PATH");
    while (path && *path) {
        const char *colon = strchr (path, ':');
        size_t len = colon ? (size_t) (colon - path) : strlen (path);
        char full [PATH_MAX];
        snprintf (full, sizeof full, "%.*s/%s", (int) len, path, name);
        if (len && access (full, X_OK) == 0)
            return true;
        path = colon ? colon + 1 : NULL;
    }
    return false;
}

static void
s_check_desktop (s_report_t *r, const ufo_config_t *config)
{
    const char *display = getenv ("DISPLAY");
    if (display && *display) {
        ufo_error_t err;
        ufo_desktop_t *desktop = ufo_desktop_new (NULL, &err);
        if (!desktop)
            s_line (r, false, "desktop", "start a desktop session (scripts/desktop-session start), or run `ufo up` "
                    "without DISPLAY and it starts one", "DISPLAY=%s: %s", display, err.message);
        else {
            ufo_value_t *windows = ufo_desktop_windows (desktop, &err);
            s_line (r, true, "desktop", NULL, "DISPLAY=%s and its accessibility bus: reachable, %zu window(s)", display,
                    ufo_value_size (windows));
            ufo_value_destroy (&windows);
            ufo_desktop_destroy (&desktop);
        }
    }
    else {
        char script [PATH_MAX];
        bool have = ufo_data_find ("scripts/desktop-session", script, sizeof script);
        bool xvfb = s_in_path ("Xvfb");
        s_line (r, have && xvfb, "desktop", "install Xvfb and the accessibility bus (scripts/bootstrap), or set DISPLAY",
                "no DISPLAY: `ufo up` starts a virtual desktop (%s, Xvfb %s)", have ? script : "desktop-session missing",
                xvfb ? "found" : "missing");
    }
    const ufo_value_t *launchers = ufo_config_get (config, "desktop.launchers");
    if (ufo_value_size (launchers) == 0) {
        //  What `ufo up` fills in when the configuration has none.
        const char *known [] = { "mousepad", "gnome-calculator", "gedit", "gnome-text-editor", "xterm" };
        char found [512] = "";
        for (size_t i = 0; i < UFO_ARRAY_SIZE (known); i++)
            if (s_in_path (known [i]))
                snprintf (found + strlen (found), sizeof found - strlen (found), "%s%s", *found ? ", " : "", known [i]);
        s_line (r, *found != 0, "launchers", "install a desktop application, or set desktop.launchers (docs/CONFIG.md)",
                "none configured; `ufo up` offers those installed: %s", *found ? found : "none");
        return;
    }
    for (size_t i = 0; i < ufo_value_size (launchers); i++) {
        const char *name = ufo_value_map_key_at (launchers, i);
        const char *argv0 = ufo_value_str (ufo_value_list_at (ufo_value_map_value_at (launchers, i), 0));
        bool ok = argv0 && s_in_path (argv0);
        char what [64], advice [300];
        snprintf (what, sizeof what, "launcher %.40s", name);
        snprintf (advice, sizeof advice, "install %s or fix desktop.launchers.%s", argv0 ? argv0 : "it", name);
        s_line (r, ok, what, advice, "%s%s", argv0 ? argv0 : "(empty command)", ok ? "" : ": not found in PATH");
    }
}

//  --- command -----------------------------------------------------------------------------

static bool
s_selected (const char *only, const char *group)
{
    if (!only)
        return true;
    char list [256];
    snprintf (list, sizeof list, "%s", only);
    char *save = NULL;
    for (char *t = strtok_r (list, ",", &save); t; t = strtok_r (NULL, ",", &save))
        if (!strcmp (t, group))
            return true;
    return false;
}

int
ufo_cmd_doctor (int argc, char **argv)
{
    const char *config_path = NULL, *broker = NULL, *only = NULL;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (!strcmp (arg, "--help") || !strcmp (arg, "-h")) {
            ufo_cli_usage (stdout, "doctor");
            printf ("\nOptions:\n"
                    "  --quick          no model request (settings, key, endpoint reachable only)\n"
                    "  --only LIST      some of broker,model,prices,desktop (comma-separated)\n"
                    "  --config FILE    configuration file\n"
                    "  --broker EP      broker command endpoint (default: the one `ufo up` started, else config)\n"
                    UFO_CLI_MODEL_HELP ("   ")
                    "Exit status: 0 when every check passed, 1 when one failed.\n");
            return UFO_CLI_OK;
        }
        if (!strcmp (arg, "--quick")) {
            quick = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf (stderr, "ufo doctor: unexpected %s\n", arg);
            ufo_cli_usage (stderr, "doctor");
            return UFO_CLI_USAGE;
        }
        const char *v = argv [++i];
        if (ufo_cli_model_option (arg, v)) {}
        else if (!strcmp (arg, "--config")) config_path = v;
        else if (!strcmp (arg, "--broker")) broker = v;
        else if (!strcmp (arg, "--only")) only = v;
        else {
            fprintf (stderr, "ufo doctor: unknown option %s\n", arg);
            ufo_cli_usage (stderr, "doctor");
            return UFO_CLI_USAGE;
        }
    }
    static const char *const groups [] = { "broker", "model", "prices", "desktop" };
    for (const char *p = only; p && *p; ) {
        size_t n = strcspn (p, ",");
        bool known = false;
        for (size_t g = 0; g < UFO_ARRAY_SIZE (groups); g++)
            if (strlen (groups [g]) == n && !strncmp (p, groups [g], n))
                known = true;
        if (!known) {
            fprintf (stderr, "ufo doctor: --only %.*s: not one of broker, model, prices, desktop\n", (int) n, p);
            return UFO_CLI_USAGE;
        }
        p += n + (p [n] == ',');
    }
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        printf ("✘ configuration     %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    s_report_t r = { stdout, 0, 0, isatty (STDOUT_FILENO) && !getenv ("NO_COLOR") };
    if (s_selected (only, "broker"))
        s_check_broker (&r, config, broker);
    if (s_selected (only, "model"))
        s_check_models (&r, config, quick);
    if (s_selected (only, "prices"))
        s_check_prices (&r, config);
    if (s_selected (only, "desktop"))
        s_check_desktop (&r, config);
    printf ("%d check(s) passed, %d failed\n", r.passed, r.failed);
    ufo_config_destroy (&config);
    return r.failed ? UFO_CLI_FAIL : UFO_CLI_OK;
}
