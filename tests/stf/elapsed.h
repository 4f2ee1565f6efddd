/* The time a rank spends in its own process, printed at exit as
 * "expect_elapsed rank R: N ms" for expect_ranks.sh: the 10 s promise of
 * docs/SEMANTICS.md section 4 is weft's, so it is measured from the start
 * of main, not from mpiexec's launch (which a loaded machine can stretch by
 * seconds). */
#ifndef WEFT_TESTS_ELAPSED_H
#define WEFT_TESTS_ELAPSED_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct timespec elapsed_t0;

static int elapsed_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

/* mpiexec ends every rank once one exits non-zero, and a rank still
 * printing loses its last lines. Under run_expect.sh (WEFT_TEST_EXIT_DIR
 * set, one folder per command) each rank leaves a mark there and waits
 * until every rank of the run left one, 10 s at most (a rank that
 * crashed never comes); elsewhere a second's pause. */
static void elapsed_meet(void)
{
    const char *dir = getenv("WEFT_TEST_EXIT_DIR");
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    int nranks = size ? atoi(size) : 1;
    if (nranks <= 1) return;
    char path[4096];
    FILE *mark = NULL;
    if (dir) {
        snprintf(path, sizeof path, "%s/rank%d", dir, elapsed_rank());
        mark = fopen(path, "w");
    }
    if (!mark) {
        sleep(1);
        return;
    }
    fclose(mark);
    for (int tries = 0; tries < 1000; tries++) {
        int seen = 0;
        DIR *d = opendir(dir);
        for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
            seen += strncmp(e->d_name, "rank", 4) == 0;
        if (d) closedir(d);
        if (seen >= nranks) return;
        usleep(10000);
    }
}

static void elapsed_print(void)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - elapsed_t0.tv_sec) * 1000 + (t1.tv_nsec - elapsed_t0.tv_nsec) / 1000000;
    printf("expect_elapsed rank %d: %ld ms\n", elapsed_rank(), ms);
    fflush(stdout);
    fflush(stderr);
    elapsed_meet(); /* after the time is taken: the wait is not weft's */
}

/* First thing in main: starts the clock and prints it at exit. */
static inline void elapsed_start(void)
{
    clock_gettime(CLOCK_MONOTONIC, &elapsed_t0);
    atexit(elapsed_print);
}

#endif
