/*  report_fixture.h - builds a realistic session log directory (docs/LOGS.md) for the
    report tests: two rounds, HostAgent and AppAgent steps, a PENDING question with its
    answer, a refused CONFIRM, round and session evaluations with sub-scores, a blackboard,
    and screenshots drawn with cairo (a Mousepad-like window, its annotated and
    selected-control variants, the desktop). Some texts try to inject HTML and script. */
#ifndef REPORT_FIXTURE_H_INCLUDED
#define REPORT_FIXTURE_H_INCLUDED

//  What the fixture holds, for the tests' assertions.
typedef struct {
    int steps;              //  lines in response.log
    int rounds;
    int images;             //  <img> the report should show (screenshots + blackboard image)
    int score_yes;          //  sub-scores over all evaluations (round and session levels)
    int score_no;
    int score_unsure;
    const char *verdict;    //  session-level "complete"
} report_fixture_t;

//  The injected marker: if any log text ran as script, the page's body gets this attribute.
#define REPORT_FIXTURE_PWNED "data-pwned"

//  Writes the log directory into dir (which must exist). Returns 0, or -1 on an I/O error.
int report_fixture_make (const char *dir, report_fixture_t *info);

#endif
