/*  ufo_cli_term.c - terminal width, colour and the live line (see ufo_cli_term.h). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include <sys/ioctl.h>
#include "ufo_cli_term.h"

ufo_cli_term_t ufo_cli_term = { .tty = false, .color = false, .width = 80 };

void
ufo_cli_term_setup (FILE *out)
{
    int fd = fileno (out);
    ufo_cli_term.tty = fd >= 0 && isatty (fd);
    const char *no_color = getenv ("NO_COLOR");
    ufo_cli_term.color = ufo_cli_term.tty && !(no_color && *no_color);
    int width = 0;
    struct winsize ws;
    if (ufo_cli_term.tty && ioctl (fd, TIOCGWINSZ, &ws) == 0)
        width = ws.ws_col;
    const char *columns = getenv ("COLUMNS");
    if (width <= 0 && columns && atoi (columns) > 0)
        width = atoi (columns);
    ufo_cli_term.width = width < 80 ? 80 : width > 400 ? 400 : width;
}

const char *
ufo_cli_color (const char *name)
{
    if (!ufo_cli_term.color)
        return "";
    static const struct { const char *name, *code; } codes [] = {
        { "red", "\033[31m" }, { "green", "\033[32m" }, { "yellow", "\033[33m" }, { "cyan", "\033[36m" },
        { "bold", "\033[1m" }, { "dim", "\033[2m" }, { "off", "\033[0m" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (codes); i++)
        if (strcmp (codes [i].name, name) == 0)
            return codes [i].code;
    return "";
}

const char *
ufo_cli_status_color (const char *status)
{
    if (!status)
        return "off";
    if (strcmp (status, "FINISH") == 0)
        return "green";
    if (strcmp (status, "FAIL") == 0 || strcmp (status, "ERROR") == 0 || strcmp (status, "CANCELLED") == 0)
        return "red";
    if (strcmp (status, "ASSIGN") == 0)
        return "cyan";
    if (strcmp (status, "PENDING") == 0 || strcmp (status, "CONFIRM") == 0)
        return "yellow";
    return "off";
}

void
ufo_cli_cut (char *out, size_t size, const char *text, size_t max)
{
    size_t n = 0, chars = 0;
    assert (size >= 8);
    for (const char *p = text ? text : ""; *p && n + 4 < size; p++) {
        bool lead = ((unsigned char) *p & 0xC0) != 0x80;
        if (lead && chars == max) {
            //  one character too many: the last one becomes "…"
            while (n > 0 && ((unsigned char) out [n - 1] & 0xC0) == 0x80)
                n--;
            if (n > 0)
                n--;
            memcpy (out + n, "…", strlen ("…"));
            n += strlen ("…");
            break;
        }
        chars += lead;
        //  control characters (newlines, ESC: text from a model or an application could move
        //  the cursor or recolour the terminal) become spaces
        out [n++] = (unsigned char) *p < 0x20 || *p == 0x7F ? ' ' : *p;
    }
    //  never end inside a character
    while (n > 0 && ((unsigned char) out [n - 1] & 0x80) && !ufo_utf8_valid (out, n))
        n--;
    out [n] = 0;
}

void
ufo_cli_pad (FILE *out, const char *text, size_t width)
{
    size_t chars = 0;
    for (const char *p = text; *p; p++)
        chars += ((unsigned char) *p & 0xC0) != 0x80;
    fputs (text, out);
    for (; chars < width; chars++)
        fputc (' ', out);
}

//  --- The live line ----------------------------------------------------------------------

static struct {
    char agent [80];
    char doing [200];
    char retry [200];
    int64_t step;
    int retries;
    double since;               //  monotonic seconds when the activity began
    double drawn_at;
    bool active, shown;
} s_live;

static void
s_draw (void)
{
    if (!s_live.active)
        return;
    char line [600], cut [600], step [40] = "";
    if (s_live.step >= 0)
        snprintf (step, sizeof step, "step %" PRId64 " \xC2\xB7 ", s_live.step);
    int n = snprintf (line, sizeof line, "\xE2\x8F\xB3 %s%s \xC2\xB7 %s \xC2\xB7 %.0f s", step, s_live.agent,
                      s_live.doing, ufo_time_mono_s () - s_live.since);
    if (n > 0 && s_live.retries && (size_t) n < sizeof line)
        snprintf (line + n, sizeof line - (size_t) n, " \xC2\xB7 retry %d %s", s_live.retries, s_live.retry);
    ufo_cli_cut (cut, sizeof cut, line, (size_t) ufo_cli_term.width - 1);
    printf ("\r\033[K%s%s%s", ufo_cli_color ("yellow"), cut, ufo_cli_color ("off"));
    fflush (stdout);
    s_live.shown = true;
    s_live.drawn_at = ufo_time_mono_s ();
}

void
ufo_cli_live_clear (void)
{
    if (s_live.shown) {
        printf ("\r\033[K");
        fflush (stdout);
        s_live.shown = false;
    }
}

void
ufo_cli_live_tick (void)
{
    if (ufo_cli_term.tty && s_live.active && ufo_time_mono_s () - s_live.drawn_at >= 0.2)
        s_draw ();
}

void
ufo_cli_live_event (const ufo_value_t *a)
{
    const char *agent = ufo_value_map_str (a, "agent", "agent");
    const char *what = ufo_value_map_str (a, "what", "");
    const char *phase = ufo_value_map_str (a, "phase", "");
    const char *detail = ufo_value_map_str (a, "detail", "");
    int64_t step = ufo_value_map_int (a, "step", -1);      //  -1: not a step (session, evaluation)
    char at [48] = "";
    if (step >= 0)
        snprintf (at, sizeof at, "step %" PRId64 " ", step);
    char doing [200] = "";
    char plain [400] = "";
    bool failed = false;
    if (strcmp (what, "session") == 0) {
        snprintf (doing, sizeof doing, "has the session%s%s", *detail ? " on device " : "", detail);
        snprintf (plain, sizeof plain, "%s %s", agent, doing);
    }
    else
    if (strcmp (what, "model") == 0 && strcmp (phase, "start") == 0) {
        if (strcmp (detail, "judging") == 0)
            snprintf (doing, sizeof doing, "judging the session (asking the model)");
        else
            snprintf (doing, sizeof doing, "asking the model%s%s%s", *detail ? " (" : "", detail, *detail ? ")" : "");
        snprintf (plain, sizeof plain, "%s%s: %s", at, agent, doing);
    }
    else
    if (strcmp (what, "model") == 0 && strcmp (phase, "retry") == 0) {
        //  the failure without the request line before it ("POST <url>: HTTP 500 ...")
        const char *reason = ufo_value_map_str (a, "reason", "failed");
        const char *http = strstr (reason, "HTTP ");
        char retry [200];
        snprintf (retry, sizeof retry, "in %.1f s: %s", (double) ufo_value_map_int (a, "wait_ms", 0) / 1000.0,
                  http ? http : reason);
        snprintf (s_live.retry, sizeof s_live.retry, "%s", retry);
        s_live.retries++;
        snprintf (plain, sizeof plain, "%s%s: model call retry %d %s", at, agent, s_live.retries, retry);
    }
    else
    if (strcmp (what, "model") == 0 && strcmp (phase, "end") == 0) {
        failed = !ufo_value_map_bool (a, "ok", true);
        snprintf (doing, sizeof doing, failed ? "the model call failed" : "the model answered");
        if (failed)
            snprintf (plain, sizeof plain, "%s%s: the model call failed: %s", at, agent,
                      ufo_value_map_str (a, "error", ""));
    }
    else
    if (strcmp (what, "action") == 0 && strcmp (phase, "start") == 0) {
        snprintf (doing, sizeof doing, "running %s", *detail ? detail : "the action");
        snprintf (plain, sizeof plain, "%s%s: %s", at, agent, doing);
    }
    else
    if (strcmp (what, "action") == 0 && strcmp (phase, "end") == 0) {
        failed = !ufo_value_map_bool (a, "ok", true);
        snprintf (doing, sizeof doing, "%s %s", *detail ? detail : "the action", failed ? "failed" : "done");
        if (failed)
            snprintf (plain, sizeof plain, "%s%s: \xE2\x9C\x97 %s failed: %s", at, agent,
                      *detail ? detail : "the action", ufo_value_map_str (a, "error", ""));
    }
    else
        return;
    if (*doing) {
        bool same = s_live.active && s_live.step == step && strcmp (s_live.agent, agent) == 0;
        if (!same || strcmp (phase, "start") == 0) {
            s_live.since = ufo_time_mono_s ();
            if (strcmp (what, "model") == 0 || !same) {
                s_live.retries = 0;
                s_live.retry [0] = 0;
            }
        }
        snprintf (s_live.agent, sizeof s_live.agent, "%s", agent);
        snprintf (s_live.doing, sizeof s_live.doing, "%s", doing);
        s_live.step = step;
        s_live.active = true;
    }
    if (ufo_cli_term.tty)
        s_draw ();
    else
    if (*plain) {
        char clean [sizeof plain + 8];
        ufo_cli_cut (clean, sizeof clean, plain, sizeof plain);
        fprintf (stderr, "%s%s\n", failed ? "" : "\xE2\x80\xA6 ", clean);
        fflush (stderr);
    }
}
