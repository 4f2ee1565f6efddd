/* The examples' command line: "-X value" flags, each an integer, each at
 * most once. An unknown word, a flag without its value or a value that is
 * not a whole integer is refused with a line naming it (the examples read
 * flags with atoi and skipped anything else: "-N 100x" ran N=100, "-n 64"
 * the default size, both saying PASSED). -h or --help prints the flags,
 * what each sets and its default, on rank 0. */
#ifndef WEFT_EXAMPLE_ARGS_H
#define WEFT_EXAMPLE_ARGS_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <weft/weft.h>

/* The flags, what[k] saying what flag[k] sets, and their defaults. */
static void example_usage(const char *prog, int n, const char *const flag[],
                          const char *const what[], int *const value[])
{
    printf("usage: mpiexec -n R %s", prog);
    for (int k = 0; k < n; k++) printf(" [%s <int>]", flag[k]);
    printf("\n");
    for (int k = 0; k < n; k++) printf("  %-4s %s (default %d)\n", flag[k], what[k], *value[k]);
    printf("  and weft's parameters as --weft-NAME=VALUE (README: Parameters)\n");
}

/* Reads argv[1..argc-1] into *value[k] for flag[k] (n of them; what[k]:
 * what it sets, for the help); values not given keep their defaults. 0,
 * 1 after the help (-h, --help: printed by rank `rank` 0 only), or -1
 * after a line on stderr. */
static int example_args(const char *prog, int rank, int argc, char **argv, int n,
                        const char *const flag[], const char *const what[], int *const value[])
{
    int given[16] = {0};
    if (n > 16) return -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            if (rank == 0) example_usage(prog, n, flag, what, value);
            return 1;
        }
    }
    for (int i = 1; i < argc; i++) {
        int k = 0;
        while (k < n && strcmp(argv[i], flag[k]) != 0) k++;
        if (k == n) {
            fprintf(stderr, "%s: unknown argument '%s'\n", prog, argv[i]);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value\n", prog, flag[k]);
            return -1;
        }
        const char *text = argv[++i];
        char *end = NULL;
        errno = 0;
        long v = strtol(text, &end, 10);
        if (end == text || *end != '\0' || errno != 0 || v < INT_MIN || v > INT_MAX) {
            fprintf(stderr, "%s: %s '%s' is not an integer\n", prog, flag[k], text);
            return -1;
        }
        if (given[k]++) {
            fprintf(stderr, "%s: %s given twice\n", prog, flag[k]);
            return -1;
        }
        *value[k] = (int)v;
    }
    return 0;
}

/* The verdict word of a run whose checks gave ok on this rank (*ok: the
 * exit's), the same on every rank: after a wait that succeeded (rc 0, an
 * outcome weft gives every rank alike, so every rank comes here) one
 * MPI_Allreduce takes the worst check, and a rank whose own numbers were
 * right says that another's were not (each rank printed its own verdict,
 * PASSED beside another rank's FAILED). After a failed wait no rank
 * passes and none calls MPI: a rank that stopped early may have left it.
 * A simulation (--weft-sim_nranks, docs/SCALE.md) runs no body, so nothing
 * made the results the checks would judge: it says so, and the run passes
 * when weft did (every example printed FAILED there). */
static const char *example_verdict(const weft_context_t *ctx, int rc, int *ok)
{
    int64_t sim = 0;
    if (weft_param_get_int(ctx, "sim_nranks", &sim) == 0 && sim > 0) {
        *ok = rc == 0;
        return *ok ? "simulated, no body ran: results not checked" : "FAILED";
    }
    if (rc != 0) return *ok = 0, "FAILED";
    int mine = *ok;
    if (MPI_Allreduce(&mine, ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        *ok = 0;
        return "FAILED (the ranks' verdicts could not be gathered)";
    }
    return *ok ? "PASSED" : mine ? "FAILED (another rank's check failed)" : "FAILED";
}

#endif
