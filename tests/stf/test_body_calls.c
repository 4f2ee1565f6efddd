/* A task body may only call the weft_task_* accessors (weft.h). A body
 * that calls what belongs to the thread of weft_init (a wait, an
 * insertion, a creation, a release, host access, weft_fini, weft_init) is refused:
 * the call returns its error after a message naming it and the task, and
 * the task fails, so every rank's wait returns WEFT_ERR_TASK. Before, a
 * wait inside a body hung for ever (the body held the worker the wait
 * needs), weft_taskpool_free hung the same way, and an insertion, a
 * release or a host pointer went through unchecked, racing with the main
 * thread. Each call runs in its own taskpool; the task runs on rank 0, on
 * emu device 1 when the rank has one (the device thread's path). */
#include <stdatomic.h>
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

typedef struct env {
    weft_context_t *ctx;
    weft_taskpool_t *tp, *spare;
    weft_data_t *d;
    const char *call;
    atomic_int refused; /* the call returned its error */
} env_t;

static env_t env;

static int leaf(weft_task_t *t)
{
    (void)t;
    return 0;
}

static const weft_task_class_t leaf_class = {.name = "leaf", .body = {[WEFT_DEV_CPU] = leaf}};

/* The call env.call names, made from a body; 1 when it was refused. */
static int forbidden_call(void)
{
    const char *c = env.call;
    if (strcmp(c, "weft_insert_task") == 0)
        return weft_insert_task(env.tp, &leaf_class, WEFT_R, env.d, 0) == WEFT_ERR_INVALID;
    if (strcmp(c, "weft_taskpool_wait") == 0) return weft_taskpool_wait(env.tp) == WEFT_ERR_INVALID;
    if (strcmp(c, "weft_taskpool_free") == 0) {
        weft_taskpool_free(env.spare); /* refused: main frees it afterwards */
        return 1;
    }
    if (strcmp(c, "weft_data_release") == 0) {
        weft_data_release(env.d); /* refused: main releases it at the end */
        return 1;
    }
    if (strcmp(c, "weft_data_host_ptr") == 0) return weft_data_host_ptr(env.d, NULL) == NULL;
    if (strcmp(c, "weft_data_new") == 0)
        return weft_data_new(env.ctx, WEFT_DOUBLE, 1, 1, 0) == NULL;
    if (strcmp(c, "weft_matrix_new") == 0)
        return weft_matrix_new(env.ctx, WEFT_DOUBLE, 4, 4, 2, 2, weft_nranks(env.ctx), 1) == NULL;
    if (strcmp(c, "weft_param_set") == 0)
        return weft_param_set(env.ctx, "debug_verbose", "1") == WEFT_ERR_INVALID;
    if (strcmp(c, "weft_fini") == 0) return weft_fini(env.ctx) == WEFT_ERR_INVALID;
    if (strcmp(c, "weft_init") == 0) {
        /* Before, it made a context from the worker (on one rank only). */
        int argc = 0;
        char **argv = NULL;
        return weft_init(&argc, &argv) == NULL;
    }
    return 0;
}

static int nest(weft_task_t *t)
{
    (void)t;
    atomic_fetch_add(&env.refused, forbidden_call());
    return 0; /* the refusal fails the task even so */
}

static const weft_task_class_t nest_class = {.name = "nest", .body = {[WEFT_DEV_CPU] = nest}};

static void one_call(const char *call)
{
    int rank = weft_rank(env.ctx), dev = weft_ndevices(env.ctx) > 0 ? 1 : 0;
    env.call = call;
    atomic_store(&env.refused, 0);
    env.tp = weft_taskpool_new(env.ctx, call);
    env.spare = weft_taskpool_new(env.ctx, "spare");
    capture_begin();
    CHECK(weft_insert_task(env.tp, &nest_class, WEFT_RW, env.d, WEFT_DEVICE_HINT, dev, 0) == 0);
    int rc = weft_taskpool_wait(env.tp);
    capture_end();
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(captured("taskpool ") && captured("failed: rank 0: task nest #"));
    if (rank == 0) {
        CHECK(atomic_load(&env.refused) == 1);
        char line[160];
        snprintf(line, sizeof line, "%s called from the body of task nest #", call);
        CHECK(captured(line));
        CHECK(captured("a task body may only call the weft_task_* accessors"));
    }
    weft_taskpool_free(env.spare);
    weft_taskpool_free(env.tp);
}

/* Accessors a body misuses in ways that cannot name the task they were
 * given: weft_task_error with a NULL format (it logged, and the task
 * succeeded when its body returned 0) and weft_task_ptr of a NULL task.
 * The task running fails. */
static int says_null(weft_task_t *t)
{
    weft_task_error(t, NULL);
    return 0;
}

static int ptr_of_null(weft_task_t *t)
{
    (void)t;
    return weft_task_ptr(NULL, 0) != NULL; /* NULL: the body returns 0 */
}

static const weft_task_class_t says_null_class = {.name = "says_null",
                                                  .body = {[WEFT_DEV_CPU] = says_null}};
static const weft_task_class_t ptr_of_null_class = {.name = "ptr_of_null",
                                                    .body = {[WEFT_DEV_CPU] = ptr_of_null}};

static void null_accessor(const weft_task_class_t *cls, const char *line)
{
    weft_taskpool_t *tp = weft_taskpool_new(env.ctx, cls->name);
    capture_begin();
    CHECK(weft_insert_task(tp, cls, WEFT_RW, env.d, 0) == 0);
    int rc = weft_taskpool_wait(tp);
    capture_end();
    CHECK(rc == WEFT_ERR_TASK);
    CHECK(captured("failed: rank 0: task "));
    if (weft_rank(env.ctx) == 0) CHECK(captured(line));
    weft_taskpool_free(tp);
}

int main(int argc, char **argv)
{
    static const char *calls[] = {"weft_insert_task",  "weft_taskpool_wait", "weft_taskpool_free",
                                  "weft_data_release", "weft_data_host_ptr", "weft_data_new",
                                  "weft_matrix_new",   "weft_param_set",     "weft_fini",
                                  "weft_init"};
    env.ctx = weft_init(&argc, &argv);
    REQUIRE(env.ctx != NULL);
    static double x;
    env.d = weft_data_register(env.ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    REQUIRE(env.d != NULL);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) one_call(calls[i]);
    null_accessor(&says_null_class, "weft_task_error called with a NULL format");
    null_accessor(&ptr_of_null_class,
                  "weft_task_ptr: NULL task: the task whose body called it fails");
    /* The context is usable afterwards: a task runs, the data is live. */
    weft_taskpool_t *tp = weft_taskpool_new(env.ctx, "after");
    CHECK(weft_insert_task(tp, &leaf_class, WEFT_RW, env.d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    weft_data_release(env.d);
    CHECK(weft_fini(env.ctx) == WEFT_ERR_TASK);
    return check_report("stf_body_calls");
}
