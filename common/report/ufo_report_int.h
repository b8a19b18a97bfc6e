/*  ufo_report_int.h - private: what the three report source files share.
    ufo_report.c loads the logs and writes the page frame, ufo_report_steps.c renders the
    rounds, steps, blackboard and evaluations, ufo_report_html.c holds the HTML helpers
    (escaping, images, the inline style sheet and script). */
#ifndef UFO_REPORT_INT_H_INCLUDED
#define UFO_REPORT_INT_H_INCLUDED

#include "ufo_buf.h"
#include "ufo_report.h"
#include "ufo_value.h"

typedef struct {
    char *logdir;                   //  the log directory, as given
    char *image_prefix;             //  prefix of linked image references
    ufo_report_options_t opts;
    ufo_buf_t *out;                 //  the HTML being written
    ufo_value_t *request;           //  request.json (map) or NULL
    ufo_value_t *session;           //  session.json (map) or NULL
    ufo_value_t *blackboard;        //  blackboard.json (map) or NULL
    ufo_value_t *steps;             //  list of response.log objects, in file order
    ufo_value_t *evals;             //  list of evaluation.log objects
    ufo_value_t *knowledge;         //  "AgentName|Round|Step" -> request.log knowledge fields
    ufo_value_t *notes;             //  list of strings: problems found in the logs
    ufo_value_t *rounds;            //  list of round numbers (ints), ascending
    char nonce [33];                //  CSP nonce of the inline script
    ufo_report_stats_t stats;
} s_report_t;

//  --- ufo_report.c ---
//  Records a problem found in the logs (shown in the page, logged as a warning).
void ufo_report_note (s_report_t *self, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

//  --- ufo_report_html.c ---
//  Appends text escaped for HTML content and attributes (& < > " '); invalid UTF-8,
//  NUL, DEL and other control characters (except tab, CR and LF) become U+FFFD.
void ufo_report_esc (ufo_buf_t *out, const char *text, size_t len);
void ufo_report_escs (ufo_buf_t *out, const char *text);
//  Appends a value as text: strings as they are, anything else as compact JSON;
//  cut to max bytes (0 = no limit) with an ellipsis. Escaped.
void ufo_report_esc_value (ufo_buf_t *out, const ufo_value_t *value, size_t max);
//  Resolves a screenshot named by the logs (a file name or a path: only its last
//  component counts) inside the log directory. Returns the file name (caller frees) when
//  the file exists as a regular file, else NULL.
char *ufo_report_image_find (s_report_t *self, const char *name);
//  Appends a <figure> with the image file `name` (in the log directory) and a caption.
//  Returns 0, or -1 (nothing written but a short note) if the file is not a readable image.
int ufo_report_image (s_report_t *self, const char *name, const char *caption);
//  Appends an <img> for a data URL from the logs, if it is a well-formed base64 image URL.
//  Returns 0, or -1 (nothing written) otherwise.
int ufo_report_image_data_url (s_report_t *self, const char *url, const char *caption);
//  The page's style sheet and script.
extern const char *ufo_report_css;
extern const char *ufo_report_js;

//  The knowledge fields request.log recorded for a step (offline_docs, ...), or NULL.
const ufo_value_t *ufo_report_step_knowledge (s_report_t *self, const ufo_value_t *step);

//  --- ufo_report_steps.c ---
//  Each appends one part of the page body to self->out: the timeline table; the rounds
//  with their steps, snapshots and round evaluations; the blackboard; the evaluations.
void ufo_report_timeline (s_report_t *self);
void ufo_report_rounds (s_report_t *self);
void ufo_report_blackboard (s_report_t *self);
void ufo_report_evaluations (s_report_t *self);
//  Appends a verdict badge for "yes" / "no" / "unsure" (anything else: unsure).
void ufo_report_verdict (ufo_buf_t *out, const char *verdict);
//  The last session-level evaluation (evaluation.log, else session.json), or NULL.
const ufo_value_t *ufo_report_session_eval (s_report_t *self);
//  The anchor number of step i (its Step field when usable, else its index).
int64_t ufo_report_step_id (const ufo_value_t *step, size_t index);

#endif
