/* Distributed dependency inference: random tasks on random tiles of random
 * owner ranks, inserted identically on every rank, must leave on each
 * owner exactly what one sequential execution gives. Tiles are NEW data
 * (no memory until written), large ones travel by rendezvous and small
 * ones inline. Each rank checks its own tiles; the exit code says. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

#define NDATA 24
#define MAXF 3

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

/* Word w of every tile long enough gets the same treatment, so a tile
 * written without being read is still defined everywhere. */
static void apply(uint64_t id, const spec_t *s, uint64_t **v, const int *len)
{
    int maxlen = 0;
    for (int i = 0; i < s->nflows; i++) maxlen = len[i] > maxlen ? len[i] : maxlen;
    for (int w = 0; w < maxlen; w++) {
        uint64_t h = id;
        for (int i = 0; i < s->nflows; i++)
            if ((s->mode[i] & WEFT_R) && w < len[i]) h = mix(h, v[i][w]);
        for (int i = 0; i < s->nflows; i++)
            if ((s->mode[i] & WEFT_W) && w < len[i]) v[i][w] = mix(h, (uint64_t)(i + w));
    }
}

static int body(weft_task_t *t)
{
    uint64_t id;
    spec_t s;
    weft_task_value(t, 0, &id);
    weft_task_value(t, 1, &s);
    uint64_t *v[MAXF];
    int len[MAXF];
    for (int i = 0; i < s.nflows; i++) {
        v[i] = weft_task_ptr(t, i);
        len[i] = weft_task_rows(t, i) / 8;
    }
    apply(id, &s, v, len);
    return 0;
}

static int init_body(weft_task_t *t)
{
    uint64_t *v = weft_task_ptr(t, 0);
    uint64_t seed;
    weft_task_value(t, 0, &seed);
    for (int w = 0; w < weft_task_rows(t, 0) / 8; w++) v[w] = seed + (uint64_t)w;
    return 0;
}

static const weft_task_class_t cls = {.name = "mix", .body = {[WEFT_DEV_CPU] = body}};
static const weft_task_class_t init_cls = {.name = "init", .body = {[WEFT_DEV_CPU] = init_body}};

static unsigned next(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 8); }

static void random_spec(spec_t *s, unsigned *seed)
{
    static const int modes[] = {WEFT_R, WEFT_W, WEFT_RW};
    s->nflows = 1 + (int)(next(seed) % MAXF);
    for (int i = 0; i < s->nflows; i++) {
        int dup;
        do {
            s->idx[i] = (int)(next(seed) % NDATA);
            dup = 0;
            for (int j = 0; j < i; j++) dup |= s->idx[j] == s->idx[i];
        } while (dup);
        s->mode[i] = modes[next(seed) % 3];
    }
}

/* Inserts ntasks random tasks over the tiles d and applies each, in the
 * same order, to the reference ref (the sequential run). Non-zero when an
 * insertion fails. */
static int insert_random_tasks(weft_taskpool_t *tp, weft_data_t **d, uint64_t (*ref)[16384],
                               const int *len, unsigned *seed)
{
    int ntasks = 3000;
    for (int k = 0; k < ntasks; k++) {
        spec_t s;
        random_spec(&s, seed);
        uint64_t id = (uint64_t)k;
        weft_data_t *x[MAXF] = {0};
        int m[MAXF] = {0};
        for (int i = 0; i < s.nflows; i++) {
            x[i] = d[s.idx[i]];
            m[i] = s.mode[i];
        }
        if (weft_insert_task(tp, &cls, WEFT_VALUE, &id, sizeof id, WEFT_VALUE, &s, sizeof s, m[0],
                             x[0], m[1], x[1], m[2], x[2], 0))
            return 1;
        uint64_t *v[MAXF];
        int l[MAXF];
        for (int i = 0; i < s.nflows; i++) {
            v[i] = ref[s.idx[i]];
            l[i] = len[s.idx[i]];
        }
        apply(id, &s, v, l);
    }
    return 0;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    unsigned seed = 7;
    /* Words per tile: some above the 64 KiB eager limit, most below. */
    int len[NDATA];
    uint64_t ref[NDATA][16384];
    weft_data_t *d[NDATA];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "dist-dag");
    for (int i = 0; i < NDATA; i++) {
        len[i] = i % 5 == 0 ? 16384 : 1 + i;
        d[i] = weft_data_new(ctx, WEFT_BYTE, 8 * len[i], 1, (int)(next(&seed) % (unsigned)nranks));
        uint64_t s0 = (uint64_t)i * 977;
        for (int w = 0; w < len[i]; w++) ref[i][w] = s0 + (uint64_t)w;
        if (!d[i] || weft_insert_task(tp, &init_cls, WEFT_W | WEFT_AFFINITY, d[i], WEFT_VALUE, &s0,
                                      sizeof s0, 0))
            return 1;
    }
    if (insert_random_tasks(tp, d, ref, len, &seed) != 0) return 1;
    int bad = weft_taskpool_wait(tp) != 0;
    int checked = 0;
    for (int i = 0; i < NDATA && !bad; i++) {
        uint64_t *v = weft_data_host_ptr(d[i], NULL);
        int mine = v != NULL;
        if (!mine) continue;
        checked++;
        if (memcmp(v, ref[i], sizeof(uint64_t) * (size_t)len[i]) != 0) {
            fprintf(stderr, "rank %d: tile %d differs from the sequential run\n", rank, i);
            bad = 1;
        }
    }
    weft_stats_t st;
    if (weft_stats_get(ctx, &st) != 0) bad = 1;
    weft_taskpool_free(tp);
    for (int i = 0; i < NDATA; i++) weft_data_release(d[i]);
    if (weft_fini(ctx) != 0) bad = 1;
    printf("test_dist_dag rank %d/%d: %d own tiles checked, %lld tasks run here, %lld "
           "activations sent: %s\n",
           rank, nranks, checked, (long long)st.tasks_run, (long long)st.activations_sent,
           bad ? "FAILED" : "PASSED");
    return bad;
}
