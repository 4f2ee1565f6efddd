/* The calls that belong to the thread of weft_init (weft.h), made from
 * another thread of the application, are refused with a message naming
 * the call, and change nothing. Before, they went through unchecked: two
 * threads each inserting into their own taskpool raced on the context's
 * sequences, and on 2 ranks the waits returned WEFT_ERR_MISMATCH after
 * garbled reports ("rank 0-1: in weft_taskpool_wait ..." as out of step,
 * a creation "#0 which this rank never made (it made 0 ...)"). Each call
 * is made on its own thread while the main thread waits for it; the same
 * calls then succeed on the main thread, and the wait returns 0 on every
 * rank (nothing refused was folded into the sequences); weft_fini returns
 * WEFT_ERR_INVALID, the only status left to the refused weft_data_release
 * (a call that returns nothing).
 *
 * Two contexts made on two threads: each thread may only use and finish
 * its own. Before, the check was per thread, not per context: a thread
 * that had made a context passed for the maker of any other, so the main
 * thread's weft_fini of the second thread's context returned 0 and ended
 * it, and the count of the main thread's contexts fell to 0. Now a call on
 * the other thread's context (weft_fini, weft_taskpool_new) is refused and
 * named on both threads, and each then runs a task on its own context and
 * finishes it with 0. */
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

/* Steps of the second thread, in turn with the main thread's. */
static pthread_barrier_t turn;
static weft_context_t *second;

/* 1 when a call on the context other (not the caller's) was refused,
 * named as such. */
static int refused_on_other(weft_context_t *other)
{
    capture_begin();
    int fini = weft_fini(other);
    int created = weft_taskpool_new(other, "x") != NULL;
    const char *text = capture_end();
    return fini == WEFT_ERR_INVALID && !created &&
           strstr(text, "weft_fini called on a context that another thread made") &&
           strstr(text, "weft_taskpool_new called on a context that another thread made");
}

/* One task bumping a value on ctx's last rank; the value there (42 on
 * the others). */
static double bump_once(weft_context_t *ctx)
{
    static _Thread_local double y;
    int last = weft_nranks(ctx) - 1;
    y = 41;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &y, 1, 1, 1, last);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "own");
    CHECK(d != NULL && tp != NULL);
    if (!d || !tp) return 0;
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    return weft_rank(ctx) == last ? y : 42;
}

static void *second_thread(void *arg)
{
    char **argv = arg;
    int argc = 2;
    second = weft_init(&argc, &argv);
    pthread_barrier_wait(&turn); /* the main thread tries the second context */
    pthread_barrier_wait(&turn);
    if (!second) return NULL;
    CHECK(refused_on_other(env.ctx));
    CHECK(bump_once(second) == 42);
    CHECK(weft_fini(second) == 0);
    return NULL;
}

static void two_contexts(char *cores)
{
    char *args[] = {"test_other_thread", cores, NULL};
    pthread_t th;
    REQUIRE(pthread_barrier_init(&turn, NULL, 2) == 0);
    REQUIRE(pthread_create(&th, NULL, second_thread, args) == 0);
    pthread_barrier_wait(&turn);
    CHECK(second != NULL);
    if (second) CHECK(refused_on_other(second));
    pthread_barrier_wait(&turn);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&turn);
    CHECK(bump_once(env.ctx) == 42);
}

int main(int argc, char **argv)
{
    static const char *calls[] = {"weft_insert_task", "weft_taskpool_new", "weft_taskpool_wait",
                                  "weft_data_new",    "weft_matrix_new",   "weft_data_host_ptr",
                                  "weft_param_set",   "weft_data_release", "weft_fini"};
    char *cores = argc > 1 ? argv[1] : "--weft-cores=1";
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
    two_contexts(cores);
    weft_taskpool_free(env.tp);
    weft_data_release(env.d);
    CHECK(weft_fini(env.ctx) == WEFT_ERR_INVALID);
    return check_report("stf_other_thread");
}
