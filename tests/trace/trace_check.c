/* Checks the trace files of a real run (PREFIX.rank<N>.json), read with
 * trace_json.h:
 *   trace_check --check PREFIX NRANKS NTASKS
 *   trace_check --track-slices PREFIX NRANKS WORD MIN MAX
 *   trace_check --net-ends PREFIX NRANKS
 *   trace_check --waits PREFIX NRANKS NWAITS
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
/* --net-ends PREFIX NRANKS: every "net send" (but a skipped one) meets a
 * "net recv" on its peer of the same data and bytes that names the same
 * transport (the sender said "mpi" where the receiver said "host" of one
 * host-to-host transfer), and every "net recv" a send. */
static int check_net_ends(const char *prefix, int nranks)
{
    summary_t *sum = calloc((size_t)nranks, sizeof *sum);
    int ok = sum != NULL;
    long sends = 0, unmatched = 0, differ = 0;
    for (int r = 0; ok && r < nranks; r++)
        ok = parse_rank_file(prefix, r, &sum[r]) && !sum[r].net_overflow;
    for (int r = 0; ok && r < nranks; r++)
        for (int i = 0; i < sum[r].nnet; i++) {
            net_end_t *s = &sum[r].net[i];
            if (!s->send || strcmp(s->transport, "skipped") == 0) continue;
            sends++;
            net_end_t *match = NULL;
            for (int j = 0; s->peer >= 0 && s->peer < nranks && j < sum[s->peer].nnet; j++) {
                net_end_t *e = &sum[s->peer].net[j];
                if (e->send || e->taken || e->peer != r || e->key != s->key || e->bytes != s->bytes)
                    continue;
                match = e;
                if (strcmp(e->transport, s->transport) == 0) break;
            }
            if (match == NULL) {
                unmatched++;
                continue;
            }
            if (strcmp(match->transport, s->transport) != 0) {
                if (differ++ == 0)
                    printf("trace_check: data %.0f, rank %d sent by '%s', rank %d received by "
                           "'%s'\n",
                           s->key, r, s->transport, s->peer, match->transport);
            }
            match->taken = 1;
        }
    for (int r = 0; ok && r < nranks; r++)
        for (int i = 0; i < sum[r].nnet; i++)
            unmatched += !sum[r].net[i].send && !sum[r].net[i].taken;
    free(sum);
    int pass = ok && sends > 0 && unmatched == 0 && differ == 0;
    printf("trace_check --net-ends: %ld sends, %ld ends unmatched, %ld naming different "
           "transports: %s\n",
           sends, unmatched, differ, pass ? "PASSED" : "FAILED");
    return !pass;
}

/* --waits PREFIX NRANKS NWAITS: the slices of category "api" (a
 * weft_taskpool_wait of the thread that made the context, on its "main
 * thread" track) number NWAITS over all ranks. */
static int check_waits(const char *prefix, int nranks, long nwaits)
{
    summary_t *sum = calloc(1, sizeof *sum);
    long n = 0;
    int ok = sum != NULL;
    for (int r = 0; ok && r < nranks; r++) {
        ok = parse_rank_file(prefix, r, sum);
        n += sum->cat_api;
    }
    free(sum);
    int pass = ok && n == nwaits;
    printf("trace_check --waits: %ld wait slices (expected %ld): %s\n", n, nwaits,
           pass ? "PASSED" : "FAILED");
    return !pass;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--waits") == 0)
        return check_waits(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 4 && strcmp(argv[1], "--net-ends") == 0)
        return check_net_ends(argv[2], atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "--check") == 0)
        return check_run(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 7 && strcmp(argv[1], "--track-slices") == 0)
        return check_tracks(argv[2], atoi(argv[3]), argv[4], atol(argv[5]), atol(argv[6]));
    fprintf(stderr, "usage: trace_check --check PREFIX NRANKS NTASKS\n"
                    "       trace_check --track-slices PREFIX NRANKS WORD MIN MAX\n"
                    "       trace_check --net-ends PREFIX NRANKS\n"
                    "       trace_check --waits PREFIX NRANKS NWAITS\n");
    return 2;
}
