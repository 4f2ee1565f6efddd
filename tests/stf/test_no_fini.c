/* A program that returns from main without weft_fini (nor a wait): every
 * rank must say so and exit non-zero (one process exited 0 without a
 * word, its tasks never run). The control ("fini") calls both, after a
 * child it forked exits 0 (the child's exit said weft_fini was missing:
 * it holds no context). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft/weft.h"

static int slow(weft_task_t *t)
{
    (void)t;
    usleep(20000);
    return 0;
}
static const weft_task_class_t cls = {.name = "slow", .body = {[WEFT_DEV_CPU] = slow}};

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
    if (!fini) return rc;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) exit(0);
    int status = -1;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        printf("test_no_fini rank %d: the forked child exited with status %d\n", weft_rank(ctx),
               status);
        rc = 1;
    }
    rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    return rc | weft_fini(ctx);
}
