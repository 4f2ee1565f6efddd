/* The calls that belong to the thread of weft_init (weft.h), made from
 * another thread of the application, are refused with a message naming
 * the call, and change nothing. Before, they went through unchecked: two
 * threads each inserting into their own taskpool raced on the context's
 * sequences, and on 2 ranks the waits returned WEFT_ERR_MISMATCH after
 * garbled reports ("rank 0-1: in weft_taskpool_wait ..." as out of step,
 * a creation "#0 which this rank never made (it made 0 ...)"). Each call
 * is made on its own thread while the main thread waits for it; the same
 * calls then succeed on the main thread, and wait and fini return 0 on
 * every rank (nothing refused was folded into the sequences). */
#include <pthread.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

typedef struct env {
    weft_context_t *ctx;
    weft_taskpool_t *tp;
    weft_data_t *d;
} env_t;

static env_t env;

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

/* The call `name` with the error value it returns when refused: 1 when it
 * was refused. */
static int call_refused(const char *name)
{
    if (strcmp(name, "weft_insert_task") == 0)
        return weft_insert_task(env.tp, &bump_class, WEFT_RW, env.d, 0) == WEFT_ERR_INVALID;
    if (strcmp(name, "weft_taskpool_new") == 0) return weft_taskpool_new(env.ctx, "x") == NULL;
    if (strcmp(name, "weft_taskpool_wait") == 0)
        return weft_taskpool_wait(env.tp) == WEFT_ERR_INVALID;
    if (strcmp(name, "weft_data_new") == 0)
        return weft_data_new(env.ctx, WEFT_DOUBLE, 1, 1, 0) == NULL;
    if (strcmp(name, "weft_matrix_new") == 0)
        return weft_matrix_new(env.ctx, WEFT_DOUBLE, 4, 4, 2, 2, weft_nranks(env.ctx), 1) == NULL;
    if (strcmp(name, "weft_data_host_ptr") == 0) return weft_data_host_ptr(env.d, NULL) == NULL;
    if (strcmp(name, "weft_param_set") == 0)
        return weft_param_set(env.ctx, "debug_verbose", "1") == WEFT_ERR_INVALID;
    if (strcmp(name, "weft_data_release") == 0) {
        weft_data_release(env.d); /* refused: the main thread uses d afterwards */
        return 1;
    }
    if (strcmp(name, "weft_fini") == 0) return weft_fini(env.ctx) == WEFT_ERR_INVALID;
    return 0;
}

static void *on_thread(void *arg)
{
    const char *name = arg;
    CHECK(call_refused(name));
    return NULL;
}

static void one_call(const char *name)
{
    pthread_t th;
    capture_begin();
    REQUIRE(pthread_create(&th, NULL, on_thread, (void *)name) == 0);
    pthread_join(th, NULL);
    const char *text = capture_end();
    char line[160];
    snprintf(line, sizeof line, "%s called from a thread that did not call weft_init", name);
    CHECK(strstr(text, line) != NULL);
}

int main(int argc, char **argv)
{
    static const char *calls[] = {"weft_insert_task", "weft_taskpool_new", "weft_taskpool_wait",
                                  "weft_data_new",    "weft_matrix_new",   "weft_data_host_ptr",
                                  "weft_param_set",   "weft_data_release", "weft_fini"};
    env.ctx = weft_init(&argc, &argv);
    REQUIRE(env.ctx != NULL);
    static double x;
    env.d = weft_data_register(env.ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    env.tp = weft_taskpool_new(env.ctx, "main");
    REQUIRE(env.d != NULL && env.tp != NULL);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) one_call(calls[i]);
    /* Nothing was inserted or created: the main thread's run is whole. */
    for (int k = 0; k < 3; k++)
        CHECK(weft_insert_task(env.tp, &bump_class, WEFT_RW, env.d, 0) == 0);
    CHECK(weft_taskpool_wait(env.tp) == 0);
    if (weft_rank(env.ctx) == 0) CHECK(x == 3);
    weft_taskpool_free(env.tp);
    weft_data_release(env.d);
    CHECK(weft_fini(env.ctx) == 0);
    return check_report("stf_other_thread");
}
