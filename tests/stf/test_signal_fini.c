/* weft_fini and weft_taskpool_wait from a signal handler that interrupts
 * the main thread's wait: refused, named (they reentered weft mid-call:
 * a weft_fini from a SIGALRM handler during a wait hung in 2 of 2 runs on
 * 1 rank and on 2, a hangs stranger's). The body sends the signal once
 * the main thread is inside its wait; the wait then ends as usual, and
 * weft_fini after it returns 0. Prints "signal: fini rc R, wait rc W". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "../check.h"
#include "weft/weft.h"

static weft_context_t *ctx;
static weft_taskpool_t *tp;
static pthread_t main_thread;
static volatile sig_atomic_t waiting, handled;
static volatile int fini_rc = 99, wait_rc = 99;

static void on_signal(int sig)
{
    (void)sig;
    fini_rc = weft_fini(ctx);
    wait_rc = weft_taskpool_wait(tp);
    handled = 1;
}

static int poke_main(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    while (!waiting) usleep(1000);
    usleep(50000); /* the main thread is in the wait by now */
    pthread_kill(main_thread, SIGUSR1);
    while (!handled) usleep(1000);
    x[0] += 1;
    return 0;
}

static const weft_task_class_t poke_class = {.name = "poke", .body = {[WEFT_DEV_CPU] = poke_main}};

int main(int argc, char **argv)
{
    ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    main_thread = pthread_self();
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
    double x = 0;
    weft_data_t *d = weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0);
    tp = weft_taskpool_new(ctx, "signalled");
    CHECK(weft_insert_task(tp, &poke_class, WEFT_RW, d, WEFT_ON_RANK, 0, 0) == 0);
    waiting = 1;
    CHECK(weft_taskpool_wait(tp) == 0);
    printf("signal: fini rc %d, wait rc %d\n", fini_rc, wait_rc);
    if (weft_rank(ctx) == 0) {
        CHECK(fini_rc == WEFT_ERR_INVALID && wait_rc == WEFT_ERR_INVALID);
        CHECK(x == 1);
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == 0);
    return check_report("stf_signal_fini");
}
