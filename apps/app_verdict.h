/* The verdict of an app's check on every rank: whether every rank's
 * check passed (one collective), and the line of a rank other than 0 whose
 * run fails, so that no rank exits 1 without a line of its own.
 * Header-only (apps/CMakeLists.txt builds every .c file of apps/ as its
 * own program). */
#ifndef WEFT_APPS_APP_VERDICT_H
#define WEFT_APPS_APP_VERDICT_H

#include <stdio.h>

#include <mpi.h>
#include <weft/weft.h>

/* A failed check on a rank other than 0, which prints the verdict: a
 * line on its stderr, so that no rank exits 1 without one of its own;
 * mine: whether this rank's own totals passed. */
static inline void app_failed_here(weft_context_t *ctx, const char *prog, int mine)
{
    if (weft_rank(ctx) != 0)
        fprintf(stderr, "%s: rank %d: the check FAILED %s\n", prog, weft_rank(ctx),
                mine ? "on another rank" : "here (rank 0 prints the verdict)");
}

/* Whether every rank's check passed: rank 0's line and every rank's exit
 * say the same (rank 0 printed PASSED while a rank whose totals never came
 * out failed). Collective. */
static inline int app_all_passed(int passed)
{
    int all = passed;
    /* A verdict MPI could not gather is no pass (each rank kept its own). */
    if (MPI_Allreduce(&passed, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "the ranks' verdicts could not be gathered (MPI error): FAILED\n");
        return 0;
    }
    return all;
}

/* The check's verdict on every rank from this rank's own (mine): whether
 * every rank passed, with the line of a rank other than 0 that failed.
 * Collective. */
static inline int app_agree_verdict(weft_context_t *ctx, const char *prog, int mine)
{
    int passed = app_all_passed(mine);
    if (!passed) app_failed_here(ctx, prog, mine);
    return passed;
}

/* The end of rank 0's verdict line. */
static inline const char *app_verdict_word(int mine, int passed)
{
    return passed ? "PASSED" : mine ? "FAILED (another rank's check failed)" : "FAILED";
}

#endif
