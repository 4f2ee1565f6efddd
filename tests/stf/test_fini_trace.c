/* A trace that cannot be written at the end (the file weft writes,
 * PATH.part before it is renamed to PATH, is a link to /dev/full, which
 * opens but takes no byte) makes weft_fini return an
 * error naming the file. Skipped (77) without /dev/full. On several ranks
 * only the last rank's file is such a link: every rank's weft_fini fails,
 * the others naming that rank and its line (they returned 0 before).
 * Each rank prints "test_fini_trace rank R: ...". */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "elapsed.h"
#include "weft/weft.h"

static int nop(weft_task_t *t) { return t ? 0 : 1; }

static const weft_task_class_t cls = {.name = "nop", .body = {[WEFT_DEV_CPU] = nop}};

int main(int argc, char **argv)
{
    if (access("/dev/full", W_OK) != 0) return 77;
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    int me = elapsed_rank(), last = (n ? atoi(n) : 1) - 1;
    char dir[] = "/tmp/weft_fini_trace_XXXXXX", prefix[64], file[96], part[104];
    if (!mkdtemp(dir)) return 1;
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    snprintf(file, sizeof file, "%s.rank%d.json", prefix, me);
    snprintf(part, sizeof part, "%s.part", file);
    if (me == last && symlink("/dev/full", part) != 0) return 1;
    setenv("WEFT_TRACE", prefix, 1);
    weft_context_t *ctx = weft_init(&argc, &argv);
    int rc = ctx ? 0 : 1;
    double x = 0;
    weft_data_t *d = ctx ? weft_data_register(ctx, WEFT_DOUBLE, &x, 1, 1, 1, 0) : NULL;
    weft_taskpool_t *tp = ctx ? weft_taskpool_new(ctx, "traced") : NULL;
    if (tp) rc |= weft_insert_task(tp, &cls, WEFT_RW, d, 0);
    if (tp) rc |= weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    weft_data_release(d);
    int f = ctx ? weft_fini(ctx) : 0;
    unlink(file);
    unlink(part);
    rmdir(dir);
    int ok = rc == 0 && f != 0;
    printf("test_fini_trace rank %d: init and wait %d, weft_fini %d: %s\n", me, rc, f,
           ok ? "PASSED" : "FAILED");
    return !ok;
}
