/* Example: a task graph over records, not numbers: a build of n modules,
 * each module a struct tile holding its name, depth and a digest of what
 * it was built from (like a build system's content hashes).
 *
 * Module k (k >= 4) depends on modules k/2 and, unless k % 5 == 0, k/3;
 * modules 0-3 are sources. Each module is a NEW data of one element of
 * type weft_dtype_struct(sizeof(module_t)), owned by rank k % nranks; its task writes it from its
 * parents' records and a label passed by value, with a priority that favours the modules most
 * others wait for (low k). Checked against the same build run sequentially, field by field, on the
 * rank that owns each module.
 *
 * mpiexec -n 4 ./example_taskgraph -n 300 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <weft/weft.h>

#include "example_args.h"

typedef struct module {
    char name[24];
    int depth; /* longest chain of modules below it, 0 for a source */
    int nparents;
    uint64_t digest; /* FNV-1a of the label, then mixed with each parent's */
} module_t;

typedef struct label {
    int id;
    char text[20];
} label_t;

/* Builds module m from its label and parents (either may be NULL). */
static void build(module_t *m, const label_t *l, const module_t *p1, const module_t *p2)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = l->text; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "mod-%s", l->text);
    const module_t *p[2] = {p1, p2};
    for (int i = 0; i < 2 && p[i]; i++) {
        h = (h ^ p[i]->digest) * 1099511628211ull;
        m->depth = m->depth > p[i]->depth + 1 ? m->depth : p[i]->depth + 1;
        m->nparents++;
    }
    m->digest = h;
}

/* flows: 0 the module W, then its parents R; value 0: its label. */
static int build_task(weft_task_t *t)
{
    label_t l;
    if (weft_task_value_get(t, 0, &l, sizeof l) != 0) return -1;
    int n = weft_task_nflows(t);
    build(weft_task_ptr(t, 0), &l, n > 1 ? weft_task_ptr(t, 1) : NULL,
          n > 2 ? weft_task_ptr(t, 2) : NULL);
    return 0;
}

static const weft_task_class_t build_class = {.name = "build",
                                              .body = {[WEFT_DEV_CPU] = build_task}};

/* The parents of module k, -1 for none. */
static void parents(int k, int *p1, int *p2)
{
    *p1 = k >= 4 ? k / 2 : -1;
    *p2 = k >= 4 && k % 5 != 0 ? k / 3 : -1;
}

static label_t label_of(int k)
{
    label_t l = {.id = k};
    snprintf(l.text, sizeof l.text, "%c%d", 'a' + k % 26, k * 7919 % 1000);
    return l;
}

/* Inserts the build of module k; a parent that is absent ends the list. */
static int insert_module(weft_taskpool_t *tp, weft_data_t **mods, int k, int n)
{
    int p1, p2;
    parents(k, &p1, &p2);
    label_t l = label_of(k);
    return weft_insert_task(tp, &build_class, WEFT_W | WEFT_AFFINITY, mods[k], WEFT_VALUE, &l,
                            sizeof l, WEFT_PRIORITY, n - k, p1 >= 0 ? WEFT_R : 0,
                            p1 >= 0 ? mods[p1] : NULL, p2 >= 0 ? WEFT_R : 0,
                            p2 >= 0 ? mods[p2] : NULL, 0);
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx == NULL) return 1;
    int n = 300, rc = 0, mine = 0;
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    int bad = example_args("example_taskgraph", rank, argc, argv, 1, (const char *const[]){"-n"},
                           (const char *const[]){"tasks in the graph"}, (int *const[]){&n});
    if (bad == 1) return weft_fini(ctx) != 0;
    /* A refusal still ends weft on every rank (weft_fini), as a failure. */
    if (bad || n < 1) {
        if (!bad) fprintf(stderr, "example_taskgraph: -n must be >= 1\n");
        weft_fini(ctx);
        return 1;
    }
    weft_data_t **mods = calloc((size_t)n, sizeof *mods);
    module_t *ref = calloc((size_t)n, sizeof *ref);
    int made = 0;
    while (mods && ref && made < n &&
           (mods[made] = weft_data_new(ctx, weft_dtype_struct(sizeof(module_t)), 1, 1,
                                       made % nranks)) != NULL)
        made++;
    if (made < n) { /* out of memory, or weft said why */
        for (int k = 0; k < made; k++) weft_data_release(mods[k]);
        weft_fini(ctx);
        return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "build");
    for (int k = 0; k < n && rc == 0; k++) rc = insert_module(tp, mods, k, n);
    if (rc == 0) rc = weft_taskpool_wait(tp);
    int wrong = 0, maxdepth = 0;
    for (int k = 0; k < n; k++) { /* the sequential build, in module order */
        int p1, p2;
        parents(k, &p1, &p2);
        label_t l = label_of(k);
        build(&ref[k], &l, p1 >= 0 ? &ref[p1] : NULL, p2 >= 0 ? &ref[p2] : NULL);
        maxdepth = ref[k].depth > maxdepth ? ref[k].depth : maxdepth;
        if (k % nranks != rank || rc != 0) continue;
        mine++;
        const module_t *got = weft_data_host_ptr(mods[k], NULL);
        wrong += got == NULL || memcmp(got, &ref[k], sizeof *got) != 0;
    }
    long long ran = (long long)weft_taskpool_ntasks_run(tp);
    int ok = rc == 0 && wrong == 0 && ran == mine;
    printf("taskgraph rank %d: %lld tasks (expected %d), %d modules of depth up to %d, "
           "%d wrong: %s\n",
           rank, ran, mine, n, maxdepth, wrong, example_verdict(ctx, rc, &ok));
    weft_taskpool_free(tp);
    for (int k = 0; k < n; k++) weft_data_release(mods[k]);
    int fini = weft_fini(ctx);
    free(mods), free(ref);
    return !ok || fini != 0;
}
