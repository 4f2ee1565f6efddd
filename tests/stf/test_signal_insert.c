/* A signal handler's weft_insert_task and weft_taskpool_wait while the
 * main thread is inside weft_insert_task: refused, named. A stranger's
 * SIGALRM handler inserted tasks while the main thread inserted: the
 * handler reentered weft inside malloc and hung on its lock. Here the main
 * thread's insertion waits in the bound of pending tasks
 * (sched_pending_max=2) behind a running body, which then sends the
 * signal; the insertions and the wait after it go on. Prints "signal:
 * insert rc I, wait rc W". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft.h"

enum { CHAIN = 6 };

static weft_taskpool_t *tp;
static weft_data_t *other;
static pthread_t main_thread;
static volatile sig_atomic_t inserting, handled;
static volatile int insert_rc = 99, wait_rc = 99;

static int add_one(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t add_class = {.name = "add", .body = {[WEFT_DEV_CPU] = add_one}};

static void on_signal(int sig)
{
    (void)sig;
    insert_rc = weft_insert_task(tp, &add_class, WEFT_RW, other, 0);
    wait_rc = weft_taskpool_wait(tp);
    handled = 1;
}

/* On the worker: once the main thread inserts the chain behind it (and
 * waits in the bound, since this body still runs), the signal. */
static int poke_main(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    while (!inserting) usleep(1000);
    usleep(50000);
    pthread_kill(main_thread, SIGUSR1);
    while (!handled) usleep(1000);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t poke_class = {.name = "poke", .body = {[WEFT_DEV_CPU] = poke_main}};

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    main_thread = pthread_self();
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
    double x = 0, y = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    other = weft_data_register(ctx, WEFT_DOUBLE, &y, 1, 1, 1, 0);
    tp = weft_taskpool_new(ctx, "signalled");
    CHECK(weft_insert_task(tp, &poke_class, WEFT_RW, d, 0) == 0);
    usleep(200000); /* the worker runs it, not this thread's help in the bound */
    inserting = 1;
    for (int k = 0; k < CHAIN; k++) CHECK(weft_insert_task(tp, &add_class, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    printf("signal: insert rc %d, wait rc %d\n", insert_rc, wait_rc);
    CHECK(handled && insert_rc == WEFT_ERR_INVALID && wait_rc == WEFT_ERR_INVALID);
    CHECK(x == 1 + CHAIN && y == 0);
    weft_taskpool_free(tp);
    weft_data_release(d);
    weft_data_release(other);
    CHECK(weft_fini(ctx) == 0);
    return check_report("stf_signal_insert");
}
