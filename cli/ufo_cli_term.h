/*  ufo_cli_term.h - private to the `ufo` tool: how output looks on the user's screen.
    Width (the terminal's, 80 when the output is not a terminal, $COLUMNS when set), colour
    (only on a terminal, never with $NO_COLOR set), text cut and padded by characters, and the
    live line of `ufo run`: the step in progress (agent, what it does, elapsed seconds,
    retries) on one line redrawn in place on a terminal, plain lines otherwise. */
#ifndef UFO_CLI_TERM_H_INCLUDED
#define UFO_CLI_TERM_H_INCLUDED

#include "ufo_value.h"

typedef struct {
    bool tty;                   //  the output is a terminal: the live line is redrawn in place
    bool color;                 //  ANSI colours (a terminal, and NO_COLOR not set)
    int width;                  //  columns, at least 80
} ufo_cli_term_t;

//  The settings every printer uses (ufo_cli_term_setup fills them; by default: no terminal,
//  no colour, 80 columns).
extern ufo_cli_term_t ufo_cli_term;

//  Detects the settings for stream out (isatty, TIOCGWINSZ, COLUMNS, NO_COLOR).
void ufo_cli_term_setup (FILE *out);

//  An ANSI code when colour is on, else "". name: "red", "green", "yellow", "cyan", "bold",
//  "dim", "off".
const char *ufo_cli_color (const char *name);

//  The colour name of a status word (FINISH green, FAIL / ERROR / CANCELLED red, ASSIGN cyan,
//  PENDING / CONFIRM yellow, else "off").
const char *ufo_cli_status_color (const char *status);

//  text cut to at most max characters (UTF-8; "…" marks a cut), control characters (newlines,
//  tabs, ESC) as spaces, into out (size at least 8).
void ufo_cli_cut (char *out, size_t size, const char *text, size_t max);

//  Prints text (already cut) and pads it with spaces to width characters.
void ufo_cli_pad (FILE *out, const char *text, size_t width);

//  --- The live line ----------------------------------------------------------------------

//  Takes an "activity" progress body ({"kind": "activity", "agent", "step", "what":
//  "session" | "model" | "action", "phase": "start" | "retry" | "end", "detail", "attempt",
//  "wait_ms", "reason", "ok", "error"}). On a terminal it redraws the live line; otherwise it
//  prints a plain line to stderr for starts, retries and failures.
void ufo_cli_live_event (const ufo_value_t *activity);

//  Redraws the live line with the elapsed time (a terminal only; at most every 200 ms).
void ufo_cli_live_tick (void);

//  Erases the live line before other output is printed (a terminal only; no-op otherwise).
void ufo_cli_live_clear (void);

#endif
