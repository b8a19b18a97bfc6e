/*  ufo_report.h - the session report: one self-contained HTML file made from a session's
    log directory (logs/<task>/, laid out as docs/LOGS.md says).

    The report shows the request of every round, the totals (steps, time, cost, tokens),
    a timeline of the steps, every step with its screenshots, the questions and
    confirmations with their answers, the blackboard at the end and the evaluations with
    their sub-scores. It needs no network at view time and reads without JavaScript;
    a small inline script adds filters, jump-to-step and keyboard navigation.
    Logs may be partial (a session that died): missing files and bad lines are named in
    the report and logged as warnings, and never stop the report from being written.
    docs/REPORT.md describes the page and how it is tested. */
#ifndef UFO_REPORT_H_INCLUDED
#define UFO_REPORT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_error.h"

typedef struct {
    bool link_images;           //  refer to the PNG files beside the report instead of
                                //  embedding them as data: URLs (for huge sessions)
    size_t max_image_bytes;     //  an image larger than this is linked, not embedded
                                //  (0 = 32 MiB)
    const char *title;          //  page title; NULL = "ufo report: <task>"
} ufo_report_options_t;

typedef struct {
    size_t steps;               //  steps shown (valid lines of response.log)
    size_t rounds;              //  rounds shown
    size_t evaluations;         //  valid lines of evaluation.log
    size_t images_embedded;     //  <img> written with a data: URL
    size_t images_linked;       //  <img> written with a file reference
    size_t images_missing;      //  screenshots the logs name but the directory lacks
    size_t notes;               //  problems found in the logs (each also shown in the page)
    size_t bytes;               //  size of the HTML text
} ufo_report_stats_t;

//  Writes the report of the session in logdir to out_path (NULL = logdir/report.html),
//  atomically (temp file + rename). opts may be NULL for the defaults; stats_p (may be
//  NULL) receives the figures above. Returns 0, or -1 with err when logdir is not a
//  readable directory or the file cannot be written. Problems in the logs themselves are
//  not errors: they are noted in the page and logged with ufo_warn.
int ufo_report_write (const char *logdir, const char *out_path,
                      const ufo_report_options_t *opts, ufo_error_t *err);

//  Same, also filling in *stats_p (may be NULL).
int ufo_report_write_stats (const char *logdir, const char *out_path,
                            const ufo_report_options_t *opts, ufo_report_stats_t *stats_p,
                            ufo_error_t *err);

//  Renders the report of logdir and returns the HTML text (caller frees); len_p and stats_p
//  may be NULL. Linked images (link_images, or too big to embed) are referred to by
//  image_prefix + file name (NULL = "", i.e. a page saved in logdir).
//  Returns NULL with err when logdir is not a readable directory.
char *ufo_report_render (const char *logdir, const char *image_prefix,
                         const ufo_report_options_t *opts, size_t *len_p,
                         ufo_report_stats_t *stats_p, ufo_error_t *err);

//  Whether dir holds a session's logs (request.json, response.log or session.json, as an
//  agent writes them). false with err naming dir and what is missing.
bool ufo_report_is_session_log (const char *dir, ufo_error_t *err);

#endif
