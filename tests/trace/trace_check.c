/* Checks the trace files of a real run (PREFIX.rank<N>.json), read with
 * trace_json.h:
 *   trace_check --check PREFIX NRANKS NTASKS
 *   trace_check --track-slices PREFIX NRANKS WORD MIN MAX
 * Prints one line ending PASSED or FAILED; exit 0 when PASSED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_json.h"

/* The trace file of rank r of a real run (PREFIX.rank<r>.json) into sum;
 * 0 after a message when it is not a valid trace of that rank. */
static int parse_rank_file(const char *prefix, int r, summary_t *sum)
{
    char file[512];
    snprintf(file, sizeof file, "%s.rank%d.json", prefix, r);
    int ok = parse_file(file, r, sum) && sum->pid_ok;
    if (!ok) fprintf(stderr, "%s: not a valid trace\n", file);
    return ok;
}

/* --check PREFIX NRANKS NTASKS: the trace files of a real run parse as
 * JSON and hold NTASKS task slices over all ranks (NTASKS -1: any), and no
 * track holds two slices that overlap without nesting (transfers in
 * flight at once on the comm track, kernels queued on one stream: weft
 * draws them on lanes). */
static int check_run(const char *prefix, int nranks, long ntasks)
{
    summary_t *sum = calloc(1, sizeof *sum);
    long tasks = 0, crossed = 0;
    int ok = sum != NULL;
    for (int r = 0; ok && r < nranks; r++) {
        ok = parse_rank_file(prefix, r, sum);
        tasks += sum->cat_task;
        crossed += sum->crossed;
    }
    free(sum);
    int pass = ok && (ntasks < 0 || tasks == ntasks) && crossed == 0;
    printf("trace_check --check: %d files, %ld task slices (expected %ld), %ld slices crossing "
           "another of their track: %s\n",
           nranks, tasks, ntasks, crossed, pass ? "PASSED" : "FAILED");
    return !pass;
}

/* --track-slices PREFIX NRANKS WORD MIN MAX: the slices on the tracks whose
 * name holds WORD, over all ranks, number from MIN to MAX (which device
 * stream the managers chose, as Perfetto shows it). */
static int check_tracks(const char *prefix, int nranks, const char *word, long min, long max)
{
    summary_t *sum = calloc(1, sizeof *sum);
    long n = 0;
    int ok = sum != NULL;
    for (int r = 0; ok && r < nranks; r++) {
        ok = parse_rank_file(prefix, r, sum);
        for (int t = 0; ok && t < MAX_TRACKS; t++)
            if (strstr(sum->track_name[t], word)) n += sum->x_count[t];
    }
    free(sum);
    int pass = ok && n >= min && n <= max;
    printf(
        "trace_check --track-slices: %ld slices on tracks named '*%s*' (expected %ld..%ld): %s\n",
        n, word, min, max, pass ? "PASSED" : "FAILED");
    return !pass;
}
int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--check") == 0)
        return check_run(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 7 && strcmp(argv[1], "--track-slices") == 0)
        return check_tracks(argv[2], atoi(argv[3]), argv[4], atol(argv[5]), atol(argv[6]));
    fprintf(stderr, "usage: trace_check --check PREFIX NRANKS NTASKS\n"
                    "       trace_check --track-slices PREFIX NRANKS WORD MIN MAX\n");
    return 2;
}
