/* weft_init with argument vectors a program may hand it that are not
 * main's: argv NULL under a count of 4 (it crashed inside Open MPI's
 * MPI_Init, which joins the words), a count past the words' NULL, no argc
 * at all, and no argv or neither, as MPI allows (both crashed). Each is
 * one process (MPI starts once a process): argv[1] names the case; weft
 * starts MPI, runs a task and ends. */
#include <string.h>

#include "../check.h"
#include "weft/weft.h"

static int bump(weft_task_t *t)
{
    int *x = weft_task_ptr(t, 0);
    x[0]++;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_CPU] = bump}};

int main(int argc, char **argv)
{
    REQUIRE(argc >= 2);
    const char *how = argv[1];
    char *words[] = {argv[0], "--weft-cores=1", NULL};
    int n = 0;
    char **v = NULL;
    weft_context_t *ctx = NULL;
    if (strcmp(how, "argv_null") == 0) {
        n = 4;
        ctx = weft_init(&n, &v);
    } else if (strcmp(how, "count_past") == 0) {
        n = 1 << 20;
        v = words;
        ctx = weft_init(&n, &v);
        CHECK(n == 1); /* the words up to the NULL, less the weft option */
    } else if (strcmp(how, "argc_null") == 0) {
        v = words;
        ctx = weft_init(NULL, &v);
    } else if (strcmp(how, "both_null") == 0) {
        /* As MPI_Init(NULL, NULL): it crashed in the check of the words. */
        CHECK(weft_params_list(NULL, NULL, NULL) == 0);
        ctx = weft_init(NULL, NULL);
    } else if (strcmp(how, "argv_ptr_null") == 0) {
        n = 3;
        CHECK(weft_params_list(&n, NULL, NULL) == 0);
        ctx = weft_init(&n, NULL);
        CHECK(n == 3); /* no words: the count is left alone */
    }
    REQUIRE(ctx != NULL);
    int x = 1;
    weft_data_t *d = weft_data_register(ctx, WEFT_INT32, &x, 1, 1, 1, 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "one");
    CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, d, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    CHECK(x == 2);
    weft_taskpool_free(tp);
    weft_data_release(d);
    CHECK(weft_fini(ctx) == 0);
    return check_report(how);
}
