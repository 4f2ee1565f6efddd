/* Registered data has one owner rank (issue 15 item 1): on R ranks, ND
 * registered doubles, data k owned by rank k % R, take 255 tasks in all;
 * each task runs once, on the owner of the data it writes, so the ranks
 * run 255 tasks between them (not 255 each). Checked against independent
 * references: the values against a sequential loop, each rank's task count
 * against the owners, each rank's activations against a replay of the
 * transfer rule of docs/ARCHITECTURE.md (a read on a rank that does not
 * hold the newest version is one activation from the rank that wrote it).
 * Non-owners pass NULL memory. Bad input: an owner that is not a rank
 * (every rank), NULL memory on the owner (1 rank), and with --partial a
 * registration made on rank 0 only, which every rank must name. */
#include <string.h>

#include "../check.h"
#include "elapsed.h"
#include "weft/weft.h"

#define ND 4
#define NTASKS 255

/* flow 0: x (R), flow 1: y (RW): y = y / 2 + x + 1, an update whose
 * result depends on the order, so a task run twice or out of order shows. */
static int step(weft_task_t *t)
{
    const double *x = weft_task_ptr(t, 0);
    double *y = weft_task_ptr(t, 1);
    *y = *y / 2 + *x + 1;
    return 0;
}

static const weft_task_class_t step_class = {.name = "step", .body = {[WEFT_DEV_CPU] = step}};

typedef struct {
    double value[ND];
    int64_t tasks[64], sends[64]; /* per rank */
} reference_t;

/* Replays the tasks sequentially, and the transfer rule on holder sets. */
static void reference(int nranks, reference_t *ref)
{
    memset(ref, 0, sizeof *ref);
    unsigned holders[ND];
    int writer[ND];
    for (int k = 0; k < ND; k++) {
        ref->value[k] = k;
        holders[k] = 1u << (k % nranks);
        writer[k] = -1;
    }
    for (int i = 0; i < NTASKS; i++) {
        int x = (i + 1) % ND, y = i % ND, exec = y % nranks;
        int reads[2] = {x, y};
        for (int r = 0; r < 2; r++) {
            int d = reads[r];
            if (holders[d] & (1u << exec)) continue;
            ref->sends[writer[d] >= 0 ? writer[d] : d % nranks]++;
            holders[d] |= 1u << exec;
        }
        holders[y] = 1u << exec;
        writer[y] = exec;
        ref->tasks[exec]++;
        ref->value[y] = ref->value[y] / 2 + ref->value[x] + 1;
    }
}

/* Owner ranks out of range are refused on every rank, naming the call. */
static void bad_owner(weft_context_t *ctx, double *mem)
{
    int n = weft_nranks(ctx);
    capture_begin();
    CHECK(weft_data_register(ctx, WEFT_DOUBLE, mem, 1, 1, 1, n) == NULL);
    CHECK(weft_data_register(ctx, WEFT_DOUBLE, mem, 1, 1, 1, -1) == NULL);
    if (n == 1) CHECK(weft_data_register(ctx, WEFT_DOUBLE, NULL, 1, 1, 1, 0) == NULL);
    capture_end();
    CHECK(captured("weft_data_register: owner rank -1 is not in [0, "));
    if (n == 1)
        CHECK(captured("weft_data_register: NULL pointer") && captured("on the owner rank 0"));
}

static int run(weft_context_t *ctx, weft_data_t **d)
{
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "owners");
    int rc = 0;
    for (int i = 0; i < NTASKS && rc == 0; i++)
        rc = weft_insert_task(tp, &step_class, WEFT_R, d[(i + 1) % ND], WEFT_RW, d[i % ND], 0);
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc ? rc : w;
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    int partial = argc > 1 && !strcmp(argv[1], "--partial");
    REQUIRE(nranks <= 64);
    double mem[ND], spare = 0;
    weft_data_t *d[ND];
    for (int k = 0; k < ND; k++) {
        mem[k] = k;
        int owner = k % nranks;
        d[k] = weft_data_register(ctx, WEFT_DOUBLE, owner == rank ? &mem[k] : NULL, 1, 1,
                                  owner == rank ? 1 : 0, owner);
        REQUIRE(d[k] != NULL);
    }
    weft_data_t *extra =
        partial && rank == 0 ? weft_data_register(ctx, WEFT_DOUBLE, &spare, 1, 1, 1, 0) : NULL;
    if (!partial) bad_owner(ctx, &spare);
    weft_stats_t before, after;
    CHECK(weft_stats_get(ctx, &before) == 0);
    int w = run(ctx, d);
    CHECK(weft_stats_get(ctx, &after) == 0);
    reference_t ref;
    reference(nranks, &ref);
    int64_t tasks = after.tasks_run - before.tasks_run;
    int64_t sends = after.activations_sent - before.activations_sent;
    if (!partial) {
        CHECK(w == 0);
        CHECK(tasks == ref.tasks[rank]);
        CHECK(sends == ref.sends[rank]);
        for (int k = 0; k < ND; k++)
            if (k % nranks == rank) CHECK(mem[k] == ref.value[k]);
    }
    for (int k = 0; k < ND; k++) weft_data_release(d[k]);
    if (extra) weft_data_release(extra);
    int f = weft_fini(ctx);
    printf("test_register_owner rank %d: wait=%d fini=%d tasks_run=%lld (expected %lld) "
           "activations_sent=%lld (expected %lld)\n",
           rank, w, f, (long long)tasks, (long long)ref.tasks[rank], (long long)sends,
           (long long)ref.sends[rank]);
    if (partial) return w != 0 && f != 0 ? 1 : 0; /* the failure is what is wanted */
    CHECK(f == 0);
    return check_report("test_register_owner");
}
