/* A program that returns from main without weft_fini (nor a wait): every
 * rank must say so and exit non-zero (one process exited 0 without a
 * word, its tasks never run). The control ("fini") waits, forks a child
 * that must exit 0 (its exit said weft_fini was missing: it holds no
 * context), then calls weft_fini. With "exit3" the program calls exit(3)
 * instead of returning: the process leaves with 3. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/weft.h"

static int slow(weft_task_t *t)
{
    (void)t;
    usleep(20000);
    return 0;
}
static const weft_task_class_t cls = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow}};

/* A child that calls exit in a process with other threads may find a lock
 * held forever by a thread it does not have (POSIX leaves all but
 * async-signal-safe calls undefined there; GCC 12's ASan allocator is one
 * such lock, seen in CI). The child's exit runs weft's destructor, which
 * takes no lock; one stuck in someone else's is killed and forked again. */
enum { CHILD_STUCK = -2 };
static int fork_and_exit(void)
{
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) exit(0);
    if (child < 0) return -1;
    int status = -1;
    for (int ms = 0; ms < 10000; ms += 10) {
        pid_t got = waitpid(child, &status, WNOHANG);
        if (got == child) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (got < 0) return -1;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return CHILD_STUCK;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int fini = argc > 1 && strcmp(argv[1], "fini") == 0;
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 4, 4, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "forgotten");
    int rc = 0;
    for (int i = 0; i < 20; i++) rc |= weft_insert_task(tp, &cls, i ? WEFT_RW : WEFT_W, d, 0);
    printf("test_no_fini rank %d: inserted, rc %d, %s\n", weft_rank(ctx), rc,
           fini ? "waiting" : "leaving main");
    fflush(stdout);
    /* The program's own failure status is kept (it left with 1). */
    if (argc > 1 && strcmp(argv[1], "exit3") == 0) exit(3);
    if (!fini) return rc;
    /* Forked once the tasks are done, so that weft's threads are asleep. */
    rc |= weft_taskpool_wait(tp);
    int tries = 0, status = CHILD_STUCK;
    while (status == CHILD_STUCK && ++tries <= 3) status = fork_and_exit();
    if (status != 0) {
        printf("test_no_fini rank %d: the forked child %s %d\n", weft_rank(ctx),
               status == CHILD_STUCK ? "stuck in exit, tries" : "exited with status (128+: signal)",
               status == CHILD_STUCK ? tries - 1 : status);
        rc = 1;
    }
    weft_taskpool_free(tp);
    weft_data_release(d);
    return rc | weft_fini(ctx);
}
