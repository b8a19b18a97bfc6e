/*  eval_fixture.c - see eval_fixture.h. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "eval_fixture.h"
#include "llm_server_fixture.h"
#include <cairo.h>
#include <sys/wait.h>

static uint32_t s_seed = 12345;

static uint32_t
s_rand (void)
{
    s_seed = s_seed * 1103515245u + 12345u;
    return s_seed >> 8;
}

//  A window-like picture: a title bar, a text area, and noise (realistic PNG sizes).
static long
s_png (const char *dir, const char *name, int w, int h, const char *caption)
{
    cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
    cairo_surface_flush (s);
    unsigned char *px = cairo_image_surface_get_data (s);
    int stride = cairo_image_surface_get_stride (s);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t v = 0xE0E0E0 | (s_rand () & 0x1F1F1F);
            memcpy (px + y * stride + x * 4, &v, 4);
        }
    cairo_surface_mark_dirty (s);
    cairo_t *cr = cairo_create (s);
    cairo_set_source_rgb (cr, 0.2, 0.3, 0.5);
    cairo_rectangle (cr, 0, 0, w, 18);
    cairo_fill (cr);
    //  "Text" lines as bars (no fonts: fontconfig's caches would show as leaks under ASan),
    //  one per character group of the caption, so pictures differ.
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    size_t n = strlen (caption);
    for (size_t i = 0; i < n && i < 12; i++) {
        cairo_rectangle (cr, 6, 28 + 8 * (double) i, 10 + ((unsigned char) caption [i] % 60), 4);
        cairo_fill (cr);
    }
    cairo_destroy (cr);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    cairo_status_t st = cairo_surface_write_to_png (s, path);
    cairo_surface_destroy (s);
    if (st != CAIRO_STATUS_SUCCESS)
        return -1;
    struct stat sb;
    return stat (path, &sb) == 0 ? (long) sb.st_size : -1;
}

static ufo_value_t *
s_json (const char *text)
{
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str (text, &err);
    if (!v)
        fprintf (stderr, "fixture JSON: %s\n%s\n", err.message, text);
    assert (v);
    return v;
}

//  One response.log record from a JSON template plus the common fields.
static ufo_value_t *
s_record (const char *fields, int step, int round, int round_step, int subtask_index,
          const char *request, const char *shot)
{
    ufo_value_t *r = s_json (fields);
    ufo_value_map_set_int (r, "Step", step);
    ufo_value_map_set_int (r, "RoundStep", round_step);
    ufo_value_map_set_int (r, "Round", round);
    ufo_value_map_set_int (r, "SubtaskIndex", subtask_index);
    ufo_value_map_set_str (r, "Request", request);
    ufo_value_map_set_float (r, "Cost", 0.0021);
    ufo_value_map_set_str (r, "ScreenshotPath", shot);
    ufo_value_map_set_str (r, "Timestamp", "2026-11-21T06:00:00Z");
    ufo_value_t *tc = s_json ("{\"screenshot\": 0.05, \"control_info\": 0.2, \"prompt\": 0.01, "
                              "\"llm\": 2.4, \"parse\": 0.001, \"action\": 0.3, \"total\": 2.96}");
    ufo_value_map_set (r, "time_cost", &tc);
    return r;
}

static int
s_append (FILE *f, ufo_value_t **rec_p)
{
    char *line = ufo_json_dump (*rec_p, UFO_JSON_COMPACT, NULL);
    int rc = fprintf (f, "%s\n", line) < 0 ? -1 : 0;
    free (line);
    ufo_value_destroy (rec_p);
    return rc;
}

int
eval_fixture_make (const char *root, const char *task, const char *tag,
                   const eval_fixture_opts_t *opts, eval_fixture_t *info)
{
    memset (info, 0, sizeof *info);
    int w = opts->shot_width ? opts->shot_width : 160;
    int h = opts->shot_height ? opts->shot_height : 100;
    char dir [PATH_MAX], path [PATH_MAX + 32];
    snprintf (dir, sizeof dir, "%s/%s", root, task);
    mkdir (root, 0755);
    if (mkdir (dir, 0755) != 0 && errno != EEXIST)
        return -1;
    char requests [4][256];
    int rounds = opts->rounds < 1 ? 1 : opts->rounds > 4 ? 4 : opts->rounds;
    for (int r = 0; r < rounds; r++)
        snprintf (requests [r], sizeof requests [r], r == 0
                  ? "%s round %d: write 'meeting at 10' in a new Mousepad document and save it as notes.txt"
                  : "%s round %d: add a second line 'bring slides' and save again", tag, r);
    if (opts->host_only)
        snprintf (requests [0], sizeof requests [0], "%s round 0: which applications are open right now?", tag);
    if (!opts->no_request_json) {
        ufo_value_t *doc = s_json ("{\"session\": \"s-test\", \"device\": \"dev-1\", "
                                   "\"started\": \"2026-11-21T06:00:00Z\", \"mode\": \"normal\"}");
        ufo_value_map_set_str (doc, "task", task);
        ufo_value_t *list = ufo_value_new_list ();
        for (int r = 0; r < rounds; r++)
            ufo_value_list_push_str (list, requests [r]);
        ufo_value_map_set (doc, "requests", &list);
        char *text = ufo_json_dump (doc, UFO_JSON_PRETTY, NULL);
        ufo_value_destroy (&doc);
        snprintf (path, sizeof path, "%s/request.json", dir);
        FILE *f = fopen (path, "w");
        if (!f) {
            free (text);
            return -1;
        }
        fputs (text, f);
        fclose (f);
        free (text);
    }
    snprintf (path, sizeof path, "%s/response.log", dir);
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    int step = 0, rc = 0;
    char shot [64], caption [128];
    for (int r = 0; r < rounds && rc == 0; r++) {
        int rstep = 0;
        const char *req = requests [r];
        //  HostAgent: look at the desktop.
        snprintf (shot, sizeof shot, "desktop_step%d.png", step);
        if (opts->host_only) {
            ufo_value_t *rec = s_record (
                "{\"Agent\": \"HostAgent\", \"AgentName\": \"HostAgent\", \"AgentStep\": 0, "
                "\"Observation\": \"The desktop shows a terminal [host-only-marker] and a Mousepad window.\", "
                "\"Thought\": \"The user only asks which applications are open; I can answer from the window list.\", "
                "\"CurrentSubtask\": \"\", \"Message\": [], \"ControlLabel\": \"\", \"ControlText\": \"\", "
                "\"Status\": \"FINISH\", \"Plan\": [], \"Bash\": \"\", \"Questions\": [], "
                "\"Comment\": \"Open: xterm and Mousepad.\", \"Subtask\": \"\", \"FunctionCall\": \"\", "
                "\"Action\": {}, \"ActionSuccess\": [], \"ActionType\": \"Host\", \"Application\": \"\", "
                "\"Results\": \"Open: xterm and Mousepad.\", \"error\": \"\", \"UserConfirm\": \"\", "
                "\"ControlLog\": {}, \"Tokens\": {\"prompt\": 1200, \"completion\": 90}}",
                step, r, rstep, -1, req, shot);
            rc |= s_append (f, &rec);
            if (opts->screenshots) {
                long n = s_png (dir, shot, w, h, "desktop");
                info->shots++, info->shots_round [r]++, info->shot_bytes += n;
            }
            step++;
            info->steps++;
            continue;
        }
        ufo_value_t *rec = s_record (
            "{\"Agent\": \"HostAgent\", \"AgentName\": \"HostAgent\", \"AgentStep\": 0, "
            "\"Observation\": \"A Mousepad window is open.\", \"Thought\": \"Hand the typing to Mousepad.\", "
            "\"CurrentSubtask\": \"Type the text and save the file\", \"Message\": [\"Use Ctrl+S to save\"], "
            "\"ControlLabel\": \"2\", \"ControlText\": \"Untitled 1 - Mousepad\", \"Status\": \"ASSIGN\", "
            "\"Plan\": [], \"Bash\": \"\", \"Questions\": [], \"Comment\": \"\", \"Subtask\": \"\", "
            "\"FunctionCall\": \"\", \"Action\": {}, \"ActionSuccess\": [], \"ActionType\": \"Host\", "
            "\"Application\": \"mousepad\", \"Results\": \"\", \"error\": \"\", \"UserConfirm\": \"\", "
            "\"ControlLog\": {}, \"Tokens\": {\"prompt\": 1500, \"completion\": 120}}",
            step, r, rstep, -1, req, shot);
        rc |= s_append (f, &rec);
        if (opts->screenshots) {
            info->shot_bytes += s_png (dir, shot, w, h, "desktop");
            info->shots++, info->shots_round [r]++;
        }
        step++, rstep++, info->steps++;
        //  AppAgent: type, save, finish.
        const char *app [3] = {
            "{\"Agent\": \"AppAgent\", \"AgentName\": \"AppAgent/mousepad\", \"AgentStep\": 0, "
            "\"Observation\": \"An empty document [step-of-round-R].\", \"Thought\": \"Type the text.\", "
            "\"ControlLabel\": \"5\", \"ControlText\": \"Text\", \"Function\": \"set_edit_text\", "
            "\"Args\": {\"text\": \"TEXT\"}, \"Status\": \"CONTINUE\", \"Plan\": [\"save\"], \"Comment\": \"\", "
            "\"SaveScreenshot\": {\"save\": false, \"reason\": \"\"}, \"Subtask\": \"Type the text and save the file\", "
            "\"FunctionCall\": \"set_edit_text\", \"Action\": {\"function\": \"set_edit_text\", \"args\": "
            "{\"text\": \"TEXT\"}, \"control_label\": \"5\", \"control_text\": \"Text\", \"control_type\": \"Document\"}, "
            "\"ActionSuccess\": [{\"success\": true, \"result\": \"\", \"error\": \"\"}], \"ActionType\": \"UIControl\", "
            "\"Application\": \"mousepad\", \"Results\": \"\", \"error\": \"\", \"UserConfirm\": \"\", "
            "\"ControlLog\": {\"label\": \"5\", \"type\": \"Document\", \"name\": \"Text\", \"rect\": [0, 40, 160, 100]}}",
            "{\"Agent\": \"AppAgent\", \"AgentName\": \"AppAgent/mousepad\", \"AgentStep\": 1, "
            "\"Observation\": \"The text is typed.\", \"Thought\": \"Save with Ctrl+S.\", "
            "\"ControlLabel\": \"5\", \"ControlText\": \"Text\", \"Function\": \"keyboard_input\", "
            "\"Args\": {\"keys\": \"^s\"}, \"Status\": \"CONTINUE\", \"Plan\": [], \"Comment\": \"\", "
            "\"Subtask\": \"Type the text and save the file\", \"FunctionCall\": \"keyboard_input\", "
            "\"Action\": {\"function\": \"keyboard_input\", \"args\": {\"keys\": \"^s\"}, \"control_label\": \"5\", "
            "\"control_text\": \"Text\", \"control_type\": \"Document\"}, \"ActionSuccess\": [{\"success\": true, "
            "\"result\": \"\", \"error\": \"\"}], \"ActionType\": \"Input\", \"Application\": \"mousepad\", "
            "\"Results\": \"\", \"error\": \"\", \"UserConfirm\": \"\", \"ControlLog\": {}}",
            "{\"Agent\": \"AppAgent\", \"AgentName\": \"AppAgent/mousepad\", \"AgentStep\": 2, "
            "\"Observation\": \"The title now reads notes.txt.\", \"Thought\": \"Done.\", \"ControlLabel\": \"\", "
            "\"ControlText\": \"\", \"Function\": \"summary\", \"Args\": {\"text\": \"saved\"}, \"Status\": \"FINISH\", "
            "\"Plan\": [], \"Comment\": \"The file is saved.\", \"Subtask\": \"Type the text and save the file\", "
            "\"FunctionCall\": \"summary\", \"Action\": {\"function\": \"summary\", \"args\": {\"text\": \"saved\"}}, "
            "\"ActionSuccess\": [{\"success\": true, \"result\": \"saved\", \"error\": \"\"}], \"ActionType\": \"UIControl\", "
            "\"Application\": \"mousepad\", \"Results\": \"saved\", \"error\": \"\", \"UserConfirm\": \"\", \"ControlLog\": {}}",
        };
        for (int k = 0; k < 3; k++) {
            snprintf (shot, sizeof shot, "action_step%d.png", step);
            //  TEXT is what round r types; R is the round in the marker.
            ufo_buf_t fields = { 0 };
            for (const char *p = app [k]; *p; p++) {
                if (strncmp (p, "TEXT", 4) == 0) {
                    ufo_buf_puts (&fields, r == 0 ? "meeting at 10" : "\\nbring slides");
                    p += 3;
                }
                else
                if (strncmp (p, "round-R]", 8) == 0) {
                    ufo_buf_printf (&fields, "round-%d]", r);
                    p += 7;
                }
                else
                    ufo_buf_putc (&fields, *p);
            }
            ufo_buf_putc (&fields, '\0');
            rec = s_record (fields.data, step, r, rstep, 0, req, shot);
            ufo_buf_free (&fields);
            rc |= s_append (f, &rec);
            if (opts->screenshots) {
                snprintf (caption, sizeof caption, "mousepad step %d", step);
                info->shot_bytes += s_png (dir, shot, w, h, caption);
                info->shots++, info->shots_round [r]++;
            }
            step++, rstep++, info->steps++;
        }
        if (opts->screenshots) {
            snprintf (shot, sizeof shot, "action_round_%d_sub_round_0_final.png", r);
            info->shot_bytes += s_png (dir, shot, w, h, "subtask end");
            snprintf (shot, sizeof shot, "action_round_%d_final.png", r);
            info->shot_bytes += s_png (dir, shot, w, h, "round end");
            info->shots += 2, info->shots_round [r] += 2;
        }
        //  HostAgent finishes the round.
        snprintf (shot, sizeof shot, "desktop_step%d.png", step);
        rec = s_record (
            "{\"Agent\": \"HostAgent\", \"AgentName\": \"HostAgent\", \"AgentStep\": 1, "
            "\"Observation\": \"Mousepad shows notes.txt.\", \"Thought\": \"The request is done.\", "
            "\"CurrentSubtask\": \"\", \"Message\": [], \"ControlLabel\": \"\", \"ControlText\": \"\", "
            "\"Status\": \"FINISH\", \"Plan\": [], \"Bash\": \"\", \"Questions\": [], \"Comment\": \"\", "
            "\"Subtask\": \"\", \"FunctionCall\": \"\", \"Action\": {}, \"ActionSuccess\": [], \"ActionType\": \"Host\", "
            "\"Application\": \"\", \"Results\": \"\", \"error\": \"\", \"UserConfirm\": \"\", \"ControlLog\": {}}",
            step, r, rstep, 0, req, "");
        rc |= s_append (f, &rec);
        step++, rstep++, info->steps++;
    }
    if (fclose (f) != 0)
        rc = -1;
    return rc;
}

int
eval_fixture_server_start (const char *dir, const char *script, char *log_path, size_t size,
                           pid_t *pid_p)
{
    return llmfx_start_script (dir, script, 300, log_path, size, pid_p);
}

void
eval_fixture_server_stop (pid_t *pid_p)
{
    llmfx_stop (pid_p);
}
