/* The checks of every weft test program, in one place.
 *
 * CHECK(cond) counts a check and, when cond is false, a failure named by
 * its file and line; the test goes on and reports at the end through
 * check_report, whose exit status is non-zero when any check failed.
 * REQUIRE(cond) is the same check for a test that cannot go on once it
 * fails (a broken structure under threads, a device left in an unknown
 * state): it exits 1 at once. The counters are atomic, so checks may run
 * on any thread.
 *
 * capture_begin / capture_end collect what the library prints on stderr
 * in between, so that a test checks the wording of a message itself (and
 * fails when it is missing) while the lines still reach the test log. */
#ifndef WEFT_TESTS_CHECK_H
#define WEFT_TESTS_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int checks, failures;

static inline void check_at(int ok, const char *what, const char *file, int line, int fatal)
{
    atomic_fetch_add(&checks, 1);
    if (ok) return;
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    if (fatal) exit(1);
}

#define CHECK(cond) check_at((cond) != 0, #cond, __FILE__, __LINE__, 0)
#define REQUIRE(cond) check_at((cond) != 0, #cond, __FILE__, __LINE__, 1)

/* Prints "NAME: n checks, m failures: PASSED|FAILED"; the exit status. */
static inline int check_report(const char *name)
{
    int n = atomic_load(&checks), bad = atomic_load(&failures);
    printf("%s: %d checks, %d failures: %s\n", name, n, bad, bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}

/* ---- stderr capture ------------------------------------------------------ */

typedef struct capture {
    int saved_fd;
    FILE *file;
    char text[16384];
} capture_t;

static inline capture_t *capture_state(void)
{
    static capture_t state = {.saved_fd = -1};
    return &state;
}

static inline void capture_begin(void)
{
    capture_t *c = capture_state();
    fflush(stderr);
    c->file = tmpfile();
    if (!c->file) return;
    c->saved_fd = dup(2);
    dup2(fileno(c->file), 2);
}

/* The text captured (also echoed to the real stderr). */
static inline const char *capture_end(void)
{
    capture_t *c = capture_state();
    c->text[0] = '\0';
    if (!c->file) return c->text;
    fflush(stderr);
    dup2(c->saved_fd, 2);
    close(c->saved_fd);
    rewind(c->file);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
    c->text[n] = '\0';
    fclose(c->file);
    c->file = NULL;
    fputs(c->text, stderr);
    return c->text;
}

/* 1 when the text of the last capture holds `needle`. */
static inline int captured(const char *needle)
{
    return strstr(capture_state()->text, needle) != NULL;
}

/* How many times the text of the last capture holds `needle`. */
static inline int captured_count(const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);
    for (const char *p = capture_state()->text; len > 0 && (p = strstr(p, needle)) != NULL;
         p += len)
        n++;
    return n;
}

#endif
