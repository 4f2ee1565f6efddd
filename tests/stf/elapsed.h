/* The time a rank spends in its own process, printed at exit as
 * "expect_elapsed rank R: N ms" for expect_ranks.sh: the 10 s promise of
 * docs/SEMANTICS.md section 4 is weft's, so it is measured from the start
 * of main, not from mpiexec's launch (which a loaded machine can stretch by
 * seconds). */
#ifndef WEFT_TESTS_ELAPSED_H
#define WEFT_TESTS_ELAPSED_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct timespec elapsed_t0;

static int elapsed_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

static void elapsed_print(void)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - elapsed_t0.tv_sec) * 1000 + (t1.tv_nsec - elapsed_t0.tv_nsec) / 1000000;
    printf("expect_elapsed rank %d: %ld ms\n", elapsed_rank(), ms);
    fflush(stdout);
    fflush(stderr);
    /* mpiexec ends every rank once one exits non-zero: a second's pause
     * lets the others print their lines first (the time is measured). */
    sleep(1);
}

/* First thing in main: starts the clock and prints it at exit. */
static inline void elapsed_start(void)
{
    clock_gettime(CLOCK_MONOTONIC, &elapsed_t0);
    atexit(elapsed_print);
}

#endif
