/* Dependency inference: random task graphs over a few tiles, run by weft
 * with several workers, must give exactly what one sequential execution of
 * the same insertion order gives. Each tile holds one 64-bit value; a task
 * mixes the values it reads into the values it writes, so any reordering
 * of a RAW, WAR or WAW pair changes the result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#define NDATA 12
#define MAXF 4

typedef struct {
    int nflows;
    int idx[MAXF];
    int mode[MAXF];
} spec_t;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

/* Reads are folded first, then each written tile gets its own result. */
static void apply(uint64_t id, int n, const int *mode, uint64_t **v)
{
    uint64_t h = id;
    for (int i = 0; i < n; i++)
        if (mode[i] & WEFT_R) h = mix(h, *v[i]);
    for (int i = 0; i < n; i++)
        if (mode[i] & WEFT_W) *v[i] = mix(h, (uint64_t)i);
}

static int body(weft_task_t *t)
{
    uint64_t id;
    spec_t s;
    weft_task_value(t, 0, &id);
    weft_task_value(t, 1, &s);
    uint64_t *v[MAXF];
    for (int i = 0; i < s.nflows; i++) v[i] = weft_task_ptr(t, i);
    apply(id, s.nflows, s.mode, v);
    return 0;
}

static const weft_task_class_t cls = {.name = "mix", .body = {[WEFT_DEV_CPU] = body}};

static void random_spec(spec_t *s, unsigned *seed)
{
    static const int modes[] = {WEFT_R, WEFT_W, WEFT_RW};
    s->nflows = 1 + rand_r(seed) % MAXF;
    for (int i = 0; i < s->nflows; i++) {
        int dup;
        do { /* distinct tiles in one task */
            s->idx[i] = rand_r(seed) % NDATA;
            dup = 0;
            for (int j = 0; j < i; j++) dup |= s->idx[j] == s->idx[i];
        } while (dup);
        s->mode[i] = modes[rand_r(seed) % 3];
    }
}

static int insert(weft_taskpool_t *tp, weft_data_t **d, uint64_t id, const spec_t *s)
{
    weft_data_t *x[MAXF] = {0};
    for (int i = 0; i < s->nflows; i++) x[i] = d[s->idx[i]];
    /* Unused trailing pairs are cut off by the 0 after the last flow. */
    int m[MAXF + 1] = {0};
    for (int i = 0; i < s->nflows; i++) m[i] = s->mode[i];
    return weft_insert_task(tp, &cls, WEFT_VALUE, &id, sizeof id, WEFT_VALUE, s, sizeof *s,
                            WEFT_PRIORITY, (int)(id % 7), m[0], x[0], m[1], x[1], m[2], x[2], m[3],
                            x[3], 0);
}

static int run_case(weft_context_t *ctx, unsigned seed, int ntasks)
{
    uint64_t ref[NDATA], val[NDATA];
    weft_data_t *d[NDATA];
    for (int i = 0; i < NDATA; i++) {
        ref[i] = val[i] = (uint64_t)i * 1000003u + seed;
        d[i] = weft_data_register(ctx, WEFT_BYTE, &val[i], sizeof val[i], 1, sizeof val[i], 0);
        if (!d[i]) return 1;
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "random-dag");
    unsigned s1 = seed;
    for (int k = 0; k < ntasks; k++) {
        spec_t s;
        random_spec(&s, &s1);
        if (insert(tp, d, (uint64_t)k, &s) != 0) return 1;
        uint64_t *v[MAXF];
        for (int i = 0; i < s.nflows; i++) v[i] = &ref[s.idx[i]];
        apply((uint64_t)k, s.nflows, s.mode, v);
    }
    if (weft_taskpool_wait(tp) != 0) return 1;
    int64_t run = weft_taskpool_ntasks_run(tp);
    weft_taskpool_free(tp);
    for (int i = 0; i < NDATA; i++) weft_data_release(d[i]);
    if (run != ntasks) {
        fprintf(stderr, "seed %u: %lld tasks ran, %d inserted\n", seed, (long long)run, ntasks);
        return 1;
    }
    for (int i = 0; i < NDATA; i++) {
        if (val[i] != ref[i]) {
            fprintf(stderr, "seed %u: tile %d differs from the sequential run\n", seed, i);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int failed = 0, cases = 0;
    for (unsigned seed = 1; seed <= 40; seed++, cases++) failed |= run_case(ctx, seed, 2000);
    if (weft_fini(ctx) != 0) failed = 1;
    printf("test_deps: %d random DAGs of 2000 tasks: %s\n", cases, failed ? "FAILED" : "PASSED");
    return failed;
}
