/* weft_init_comm: weft on a communicator of the application's.
 *
 * The world's ranks split in two groups by the parity of their rank, so a
 * group's ranks are not the world's (world 1 is rank 0 of the odd group).
 * Each group runs a context of its own at the same time: a tile owned by
 * the group's rank 0 goes round the group's ranks, each hop adding the
 * group's step, and the odd group's last hop fails. Checked: the sizes and
 * ranks weft gives, the value at the owner, the tasks and tile moves each
 * group counts (its own only), the failure reported on the odd group's
 * ranks and on none of the even group's, and each process's trace file
 * named by its world rank (the two groups' rank 0 wrote one file before
 * the names took the world's rank). Then each process alone on
 * MPI_COMM_SELF, twice in a row with one trace prefix (files .json and
 * .ctx2.json: the second wrote over the first's), and the refusals: MPI not started yet,
 * MPI_COMM_NULL, an intercommunicator. Run on 4 ranks (2 per group) with --weft-trace=P. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../file_text.h"
#include "weft/weft_mpi.h"

enum { HOPS = 9 };

static int add_step(weft_task_t *t)
{
    double step = 0;
    if (weft_task_value_get(t, 0, &step, sizeof step) != 0) return 1;
    double *x = weft_task_ptr(t, 0);
    x[0] += step;
    return 0;
}

static int failing(weft_task_t *t)
{
    (void)t;
    return 7;
}

static const weft_task_class_t add_class = {.name = "add_step",
                                            .body = {[WEFT_DEV_CPU] = add_step}};
static const weft_task_class_t fail_class = {.name = "fails", .body = {[WEFT_DEV_CPU] = failing}};

/* The tile's round on ctx's ranks; the odd group's last hop fails. The
 * value at the owner (-1 elsewhere) and the first wait's status. */
static double round_trip(weft_context_t *ctx, double step, int fail_last, int *status)
{
    static double x;
    x = 0;
    int n = weft_nranks(ctx), me = weft_rank(ctx);
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "round");
    for (int h = 0; h < HOPS; h++) {
        const weft_task_class_t *cls = fail_last && h == HOPS - 1 ? &fail_class : &add_class;
        CHECK(weft_insert_task(tp, cls, WEFT_RW, d, WEFT_VALUE, &step, sizeof step, WEFT_ON_RANK,
                               h % n, 0) == 0);
    }
    *status = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    return me == 0 ? x : -1;
}

int main(int argc, char **argv)
{
    const char *prefix = NULL;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--weft-trace=", 13) == 0) prefix = argv[i] + 13;
    char prefix_copy[400] = "";
    if (prefix) snprintf(prefix_copy, sizeof prefix_copy, "%s", prefix);

    /* Before MPI: refused, nothing started. */
    capture_begin();
    weft_context_t *early = weft_init_comm(MPI_COMM_WORLD, &argc, &argv);
    capture_end();
    CHECK(early == NULL);
    CHECK(captured("weft_init_comm: MPI is not started"));

    int provided = 0;
    REQUIRE(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS);
    int wrank = 0, wsize = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    REQUIRE(wsize == 4);
    int color = wrank % 2;
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &group);

    weft_context_t *ctx = weft_init_comm(group, &argc, &argv);
    REQUIRE(ctx != NULL);
    CHECK(weft_nranks(ctx) == 2);
    CHECK(weft_rank(ctx) == wrank / 2);
    int status = -1;
    double step = color ? 10 : 1;
    double x = round_trip(ctx, step, color == 1, &status);
    if (color == 0) {
        CHECK(status == 0);
        if (weft_rank(ctx) == 0) CHECK(x == HOPS * step);
    } else {
        CHECK(status != 0); /* on both of the odd group's ranks */
    }
    weft_stats_t st;
    CHECK(weft_stats_get(ctx, &st) == 0);
    /* The group's own: 9 hops, 5 on rank 0 and 4 on rank 1 (the odd
     * group's last, on rank 0, failed and counts), 8 moves between them,
     * 4 sent by each rank (the last hop is the owner's: none home). */
    long long mine[2] = {st.tasks_run, st.activations_sent}, sum[2] = {0, 0};
    MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, group);
    CHECK(sum[0] == HOPS);
    CHECK(sum[1] == HOPS - 1 && st.activations_sent == (HOPS - 1) / 2);
    CHECK(st.tasks_run == (weft_rank(ctx) == 0 ? 5 : 4));
    int fini = weft_fini(ctx);
    CHECK(color == 0 ? fini == 0 : fini != 0);
    printf("world %d: group %d rank %d: value %g status %d, group tasks %lld, activations %lld "
           "(here %lld), fini %d\n",
           wrank, color, wrank / 2, x, status, sum[0], sum[1], (long long)st.activations_sent,
           fini);
    if (prefix_copy[0]) {
        char name[512];
        snprintf(name, sizeof name, "%s.rank%d.json", prefix_copy, wrank);
        char *text = test_file_text(name);
        CHECK(text != NULL);
        if (text) {
            char label[64];
            snprintf(label, sizeof label, "\"rank %d\"", wrank);
            CHECK(strstr(text, label) != NULL);
            free(text);
        }
    }

    /* Each process alone, twice in a row, each given the trace: the
     * second's file is .ctx2 (it wrote over the first's, unsaid). */
    for (int round = 0; round < 2; round++) {
        char word[460], *words[] = {"test_init_comm", word, NULL}, **wv = words;
        int wc = 2;
        snprintf(word, sizeof word, "--weft-trace=%s.self", prefix_copy[0] ? prefix_copy : "x");
        weft_context_t *self = weft_init_comm(MPI_COMM_SELF, &wc, prefix_copy[0] ? &wv : &argv);
        REQUIRE(self != NULL);
        CHECK(weft_nranks(self) == 1 && weft_rank(self) == 0);
        x = round_trip(self, 2, 0, &status);
        CHECK(status == 0 && x == 2 * HOPS);
        CHECK(weft_fini(self) == 0);
    }
    if (prefix_copy[0]) {
        char name[512];
        for (int k = 1; k <= 2; k++) {
            snprintf(name, sizeof name, "%s.self.rank%d%s.json", prefix_copy, wrank,
                     k == 2 ? ".ctx2" : "");
            char *text = test_file_text(name);
            CHECK(text != NULL && strstr(text, "add_step") != NULL);
            free(text);
        }
    }

    /* The refusals: on this rank alone, no collective. */
    capture_begin();
    weft_context_t *none = weft_init_comm(MPI_COMM_NULL, &argc, &argv);
    capture_end();
    CHECK(none == NULL);
    CHECK(captured("weft_init_comm: the communicator is MPI_COMM_NULL"));
    MPI_Comm inter;
    MPI_Intercomm_create(group, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
    capture_begin();
    weft_context_t *across = weft_init_comm(inter, &argc, &argv);
    capture_end();
    CHECK(across == NULL);
    CHECK(captured("is an intercommunicator"));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&group);
    int rc = check_report("stf_init_comm");
    MPI_Finalize();
    return rc;
}
