/* A reduction (WEFT_REDUX) into a NEW data that has contents before its
 * first task: initial contents from weft_data_set_init, or a host write on
 * its owner (weft_data_host_acquire, weft_data_host_ptr). The partial
 * results fold into those contents. Before, the wait's init task replaced
 * set_init's contents by the reduction's identity (100 + sum came out as
 * the sum), and on several ranks the owner's host access made it skip the
 * init task that the other ranks inserted: every rank's wait returned
 * WEFT_ERR_MISMATCH ("zero" against "combine"). Each case is checked
 * against the sum computed here, on the owner, over two taskpools (the
 * second folds into the first's result). Argument read_first: a plain
 * reader of the owner's host write before any reduction (below). */
#include "../check.h"
#include "redux_classes.h"
#include "weft/weft.h"

enum { K = 9 };

static void init_arg(void *p, int64_t ld, int rows, int cols, void *arg)
{
    (void)ld, (void)rows, (void)cols;
    *(double *)p = *(const double *)arg;
}

/* How the data gets its contents before the first taskpool. */
enum { PLAIN, SET_INIT, ACQUIRE_W, INIT_PTR, INIT_ACQUIRE_R, NCASES };
static const char *const case_name[NCASES] = {"plain", "set_init", "acquire_w", "init_ptr",
                                              "init_acquire_r"};

/* The owner's host access of case c before the first taskpool; returns
 * the value the reduction starts from. */
static double before(weft_data_t *d, int c)
{
    void *p = NULL;
    double *h;
    switch (c) {
    case SET_INIT:
        return 100;
    case ACQUIRE_W:
        CHECK(weft_data_host_acquire(d, WEFT_W, &p, NULL) == 0);
        if (p) *(double *)p = 7;
        CHECK(weft_data_host_release(d) == 0);
        return 7;
    case INIT_PTR: /* the initial contents, changed through the pointer */
        h = weft_data_host_ptr(d, NULL);
        CHECK(h && *h == 100);
        if (h) *h += 1;
        return 101;
    case INIT_ACQUIRE_R:
        CHECK(weft_data_host_acquire(d, WEFT_R, &p, NULL) == 0);
        CHECK(p && *(double *)p == 100);
        CHECK(weft_data_host_release(d) == 0);
        return 100;
    default:
        return 0;
    }
}

/* K tasks over the ranks (and devices) reduce into d: k adds k + 1. */
static int reduce(weft_context_t *ctx, weft_data_t *d)
{
    int n = weft_nranks(ctx), nd = weft_ndevices(ctx);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "reduce");
    for (int k = 0; k < K; k++) {
        double v = k + 1;
        CHECK(weft_insert_task(tp, &redux_add_class, WEFT_REDUX, d, WEFT_VALUE, &v, sizeof v,
                               WEFT_ON_RANK, k % n, WEFT_DEVICE_HINT, nd ? 1 + k % nd : 0, 0) == 0);
    }
    int rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    return rc;
}

/* 0 when every wait succeeded: after a failed one (ranks that inserted
 * different tasks) the context is not worth going on with. */
static int run_case(weft_context_t *ctx, int c)
{
    int owner_rank = weft_nranks(ctx) - 1, owner = weft_rank(ctx) == owner_rank, rc = 0;
    double start = 100, sum = 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, owner_rank);
    REQUIRE(d != NULL);
    if (c == SET_INIT || c == INIT_PTR || c == INIT_ACQUIRE_R)
        CHECK(weft_data_set_init(d, init_arg, &start) == 0);
    CHECK(weft_data_set_reduction(d, &redux_zero_class, &redux_combine_class) == 0);
    double want = owner ? before(d, c) : 0;
    for (int k = 0; k < K; k++) sum += k + 1;
    for (int pass = 1; pass <= 2 && rc == 0; pass++) {
        rc = reduce(ctx, d);
        CHECK(rc == 0);
        want += sum;
        double *h = owner ? weft_data_host_ptr(d, NULL) : NULL;
        CHECK(!owner || (h && *h == want));
        if (rc != 0 || (owner && (!h || *h != want)))
            fprintf(stderr, "case %s pass %d: wait %d, value %g, want %g\n", case_name[c], pass, rc,
                    h ? *h : -1.0, want);
    }
    weft_data_release(d);
    return rc;
}

/* A task that reads the data before any task wrote it, after the owner's
 * host wrote it: the other ranks would make the initial contents
 * themselves (they read 100 where the owner wrote 101, or waited for ever
 * for a tile the owner sent), so the owner refuses it, naming why, and
 * every rank's wait fails (the ranks' sequences parted). On one rank the
 * task reads the host's write. */
static void read_first(weft_context_t *ctx)
{
    int n = weft_nranks(ctx), owner = weft_rank(ctx) == n - 1;
    double start = 100;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, n - 1);
    weft_data_t *out = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(d && out && weft_data_set_init(d, init_arg, &start) == 0);
    REQUIRE(weft_data_set_init(out, NULL, NULL) == 0);
    CHECK(weft_data_set_reduction(d, &redux_zero_class, &redux_combine_class) == 0);
    double *h = owner ? weft_data_host_ptr(d, NULL) : NULL;
    CHECK(!owner || h != NULL);
    if (h) *h = 101;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "read first");
    capture_begin();
    int rc = weft_insert_task(tp, &redux_combine_class, WEFT_RW | WEFT_AFFINITY, out, WEFT_R, d, 0);
    capture_end();
    CHECK(rc == (owner && n > 1 ? WEFT_ERR_INVALID : 0));
    CHECK(!owner || n == 1 ||
          captured("reads NEW data 0, which only this rank wrote outside tasks (a host write or a "
                   "device registration) before any task did: the other ranks make its initial "
                   "contents (weft_data_set_init) themselves"));
    CHECK(weft_taskpool_wait(tp) == (n > 1 ? WEFT_ERR_MISMATCH : 0));
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(out);
    int fini = weft_fini(ctx);
    CHECK(fini == (n > 1 ? WEFT_ERR_MISMATCH : 0));
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    if (argc > 1 && strcmp(argv[1], "read_first") == 0) {
        read_first(ctx);
        return check_report("stf_redux_init read_first");
    }
    /* A case's name as argument runs that case alone. */
    int rc = 0;
    for (int c = 0; c < NCASES && rc == 0; c++)
        if (argc < 2 || strcmp(argv[1], case_name[c]) == 0) rc = run_case(ctx, c);
    int fini = weft_fini(ctx);
    CHECK(rc != 0 || fini == 0);
    return check_report("stf_redux_init");
}
