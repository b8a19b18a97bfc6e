/*  ufo_test.h - the minimal test harness every ufobus test program uses.

    A test program defines cases with UFO_TEST(name) and runs them from main() with
    UFO_RUN(name). Checks record failures and carry on; the program ends with
    "N passed, N failed" and exits non-zero if anything failed. */
#ifndef UFO_TEST_H_INCLUDED
#define UFO_TEST_H_INCLUDED

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ufo_test_failures_ = 0;      //  failed checks in the current case
static int ufo_test_passed_ = 0;        //  cases passed
static int ufo_test_failed_ = 0;        //  cases failed

#define UFO_TEST(name) static void name (void)

#define UFO_RUN(name) do { \
    ufo_test_failures_ = 0; \
    fprintf (stderr, "-- %s\n", #name); \
    name (); \
    if (ufo_test_failures_) { ufo_test_failed_++; fprintf (stderr, "FAIL %s\n", #name); } \
    else ufo_test_passed_++; \
} while (0)

#define UFO_TEST_END() ( \
    printf ("%d passed, %d failed\n", ufo_test_passed_, ufo_test_failed_), \
    ufo_test_failed_ ? 1 : 0)

#define UFO_FAIL_(...) do { \
    ufo_test_failures_++; \
    fprintf (stderr, "  %s:%d: ", __FILE__, __LINE__); \
    fprintf (stderr, __VA_ARGS__); \
    fprintf (stderr, "\n"); \
} while (0)

#define CHECK(cond) do { if (!(cond)) UFO_FAIL_ ("CHECK(%s) failed", #cond); } while (0)

#define CHECK_INT(a, b) do { \
    long long a_ = (long long) (a), b_ = (long long) (b); \
    if (a_ != b_) UFO_FAIL_ ("%s == %s: %lld != %lld", #a, #b, a_, b_); \
} while (0)

#define CHECK_STR(a, b) do { \
    const char *a_ = (a), *b_ = (b); \
    if (!a_ || !b_ || strcmp (a_, b_) != 0) \
        UFO_FAIL_ ("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
} while (0)

#define CHECK_CONTAINS(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!h_ || !n_ || !strstr (h_, n_)) \
        UFO_FAIL_ ("\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_ ? n_ : "(null)"); \
} while (0)

//  Stops the current case if a precondition fails (e.g. a NULL that later checks dereference).
#define REQUIRE(cond) do { if (!(cond)) { UFO_FAIL_ ("REQUIRE(%s) failed", #cond); return; } } while (0)


#endif
