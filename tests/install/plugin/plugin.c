/* A plugin that uses weft, loaded and unloaded by test_plugin_host with
 * dlopen and dlclose: each call makes a context (weft_init, or
 * weft_init_comm on the host's MPI_COMM_WORLD), runs one task a rank on a
 * value of its own and ends it. */
#include <mpi.h>
#include <stdio.h>
#include <weft/weft.h>
#include <weft/weft_mpi.h>

static int put(weft_task_t *t)
{
    int v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != WEFT_SUCCESS) return -1;
    *(double *)weft_task_ptr(t, 0) = v;
    return 0;
}

static const weft_task_class_t put_class = {.name = "put", .body = {[WEFT_DEV_CPU] = put}};

/* 0 when every rank's value came right and weft_fini returned 0. */
__attribute__((visibility("default"))) int plugin_run(int on_comm, int *argc, char ***argv)
{
    weft_context_t *ctx =
        on_comm ? weft_init_comm(MPI_COMM_WORLD, argc, argv) : weft_init(argc, argv);
    if (ctx == NULL) return 1;
    int rank = weft_rank(ctx), n = weft_nranks(ctx), rc = 0;
    double mine = -1;
    weft_data_t *d[16];
    if (n > 16) n = 16;
    for (int r = 0; r < n; r++)
        d[r] = weft_data_register(ctx, WEFT_DOUBLE, r == rank ? &mine : NULL, 1, 1, 1, r);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "plugin");
    for (int r = 0; r < n && rc == 0; r++)
        rc = weft_insert_task(tp, &put_class, WEFT_W, d[r], WEFT_VALUE, &r, sizeof r, 0);
    if (rc == 0) rc = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    for (int r = 0; r < n; r++) weft_data_release(d[r]);
    int frc = weft_fini(ctx);
    return rc != 0 || frc != 0 || mine != rank;
}
