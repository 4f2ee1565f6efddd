/* Distributed dependency inference: random tasks on random tiles of random
 * owner ranks, inserted identically on every rank, must leave on each
 * owner exactly what one sequential execution gives. Tiles are NEW data
 * (no memory until written), large ones travel by rendezvous and small
 * ones inline. Each rank checks its own tiles; the exit code says.
 *
 * Options after the weft ones (all off by default: the host-only graph):
 *   seed=S tasks=N waves=W  the graph, cut into W taskpools (each rank
 *                           checks its tiles after each wait, alternately
 *                           through weft_data_host_ptr and a read acquire)
 *   dev=1    classes with a host body and a device body (which check where
 *            they run), with only one of them, random home devices of the
 *            tiles (set between waves) and random WEFT_DEVICE_HINTs: with
 *            emu devices (device_emu_enabled) the same graph then runs
 *            over host and devices, evicting under a small memory limit
 *   redux=1  some tiles get a reduction (wrapping sums of words) and random
 *            WEFT_REDUX flows
 *   place=1  random WEFT_AFFINITY, WEFT_ON_RANK and WEFT_PRIORITY
 * The sequential reference applies the same words in insertion order; a
 * REDUX flow adds a word that depends only on the task's read flows, so
 * any order of the partials gives the same sums. ctest runs a few cases;
 * many seeds run outside it, varying ranks, devices, zone and transport:
 *   for s in $(seq 300); do mpiexec -n 3 test_dist_dag --weft-cores=1
 *     --weft-device_emu_enabled=2 --weft-device_memory_limit=300K
 *     --weft-comm_transport=ipc seed=$s waves=3 dev=1 redux=1 place=1 || break; done */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#define NDATA 24
#define MAXF 3
#define LONG_WORDS 16384

typedef struct {
    int nflows;
    int idx[MAXF];
    int mode[MAXF];
} spec_t;

typedef struct {
    unsigned seed;
    int ntasks, waves, dev, redux, place;
} dag_opts_t;

/* What the program set up: the tiles, the reference, the context. */
typedef struct {
    weft_context_t *ctx;
    dag_opts_t o;
    int len[NDATA];
    int reducible[NDATA];
    int owner[NDATA];
    weft_data_t *d[NDATA];
    uint64_t (*ref)[LONG_WORDS];
} dag_t;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

/* Word w of every tile long enough gets the same treatment, so a tile
 * written without being read is still defined everywhere. A REDUX flow
 * adds to its word (the partial or the reference alike). */
static void apply(uint64_t id, const spec_t *s, uint64_t **v, const int *len)
{
    int maxlen = 0;
    for (int i = 0; i < s->nflows; i++) maxlen = len[i] > maxlen ? len[i] : maxlen;
    for (int w = 0; w < maxlen; w++) {
        uint64_t h = id;
        for (int i = 0; i < s->nflows; i++)
            if ((s->mode[i] & WEFT_R) && w < len[i]) h = mix(h, v[i][w]);
        for (int i = 0; i < s->nflows; i++) {
            if (w >= len[i]) continue;
            if (s->mode[i] & WEFT_W)
                v[i][w] = mix(h, (uint64_t)(i + w));
            else if (s->mode[i] == WEFT_REDUX)
                v[i][w] += mix(h, (uint64_t)(i + w + 1));
        }
    }
}

static int run_mix(weft_task_t *t)
{
    uint64_t id;
    spec_t s;
    if (weft_task_value_get(t, 0, &id, sizeof id) || weft_task_value_get(t, 1, &s, sizeof s))
        return -1;
    uint64_t *v[MAXF];
    int len[MAXF];
    for (int i = 0; i < s.nflows; i++) {
        v[i] = weft_task_ptr(t, i);
        len[i] = weft_task_rows(t, i) / 8;
    }
    apply(id, &s, v, len);
    return 0;
}

/* The host body and the device body check that weft ran the one meant for
 * the place it chose: a wrong one fails the task (-7), named at the wait. */
static int mix_host(weft_task_t *t) { return weft_task_device(t) == 0 ? run_mix(t) : -7; }
static int mix_dev(weft_task_t *t) { return weft_task_device(t) > 0 ? run_mix(t) : -7; }

static int init_body(weft_task_t *t)
{
    uint64_t *v = weft_task_ptr(t, 0);
    uint64_t seed;
    if (weft_task_value_get(t, 0, &seed, sizeof seed)) return -1;
    for (int w = 0; w < weft_task_rows(t, 0) / 8; w++) v[w] = seed + (uint64_t)w;
    return 0;
}

static int zero_body(weft_task_t *t)
{
    memset(weft_task_ptr(t, 0), 0, (size_t)weft_task_rows(t, 0));
    return 0;
}

static int add_body(weft_task_t *t)
{
    uint64_t *dst = weft_task_ptr(t, 0);
    const uint64_t *src = weft_task_ptr(t, 1);
    for (int w = 0; w < weft_task_rows(t, 0) / 8; w++) dst[w] += src[w];
    return 0;
}

/* A CPU body alone runs on emu devices too. */
static const weft_task_class_t cls = {.name = "mix", .body = {[WEFT_DEV_CPU] = run_mix}};
static const weft_task_class_t both_cls = {
    .name = "mix_both", .body = {[WEFT_DEV_CPU] = mix_host, [WEFT_DEV_EMU] = mix_dev}};
static const weft_task_class_t dev_cls = {.name = "mix_dev", .body = {[WEFT_DEV_EMU] = mix_dev}};
static const weft_task_class_t init_cls = {.name = "init", .body = {[WEFT_DEV_CPU] = init_body}};
static const weft_task_class_t zero_cls = {
    .name = "zero", .body = {[WEFT_DEV_CPU] = zero_body, [WEFT_DEV_EMU] = zero_body}};
static const weft_task_class_t add_cls = {
    .name = "add", .body = {[WEFT_DEV_CPU] = add_body, [WEFT_DEV_EMU] = add_body}};

static unsigned next(unsigned *s) { return *s = *s * 1103515245u + 12345u, (*s >> 8); }

static void random_spec(const dag_t *g, spec_t *s, unsigned *seed)
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
        if (g->reducible[s->idx[i]] && next(seed) % 2) s->mode[i] = WEFT_REDUX;
    }
}

/* The class of a task: with dev=1 one of three (host and device bodies,
 * device only when its tiles are small, a CPU body alone). */
static const weft_task_class_t *pick_class(const dag_t *g, const spec_t *s, unsigned *seed)
{
    if (!g->o.dev) return &cls;
    int bytes = 0;
    for (int i = 0; i < s->nflows; i++) bytes += 8 * g->len[s->idx[i]];
    unsigned r = next(seed) % 4;
    if (r == 0 && bytes <= 4096) return &dev_cls;
    return r == 1 ? &cls : &both_cls;
}

/* Inserts task id of spec s, with the random options o asks for. */
static int insert_one(weft_taskpool_t *tp, const dag_t *g, uint64_t id, const spec_t *s,
                      unsigned *seed)
{
    const weft_task_class_t *c = pick_class(g, s, seed);
    weft_arg_t a[MAXF + 5];
    int n = 0;
    int aff = g->o.place && next(seed) % 3 == 0 ? (int)(next(seed) % (unsigned)s->nflows) : -1;
    for (int i = 0; i < s->nflows; i++)
        a[n++] = weft_arg_data(s->mode[i] | (i == aff ? WEFT_AFFINITY : 0), g->d[s->idx[i]]);
    a[n++] = weft_arg_value(&id, sizeof id);
    a[n++] = weft_arg_value(s, sizeof *s);
    if (g->o.place && next(seed) % 8 == 0)
        a[n++] = weft_arg_int(WEFT_ON_RANK, (int)(next(seed) % (unsigned)weft_nranks(g->ctx)));
    if (g->o.place) a[n++] = weft_arg_int(WEFT_PRIORITY, (int)(next(seed) % 5));
    if (g->o.dev && next(seed) % 4 == 0)
        a[n++] = weft_arg_int(WEFT_DEVICE_HINT,
                              (int)(next(seed) % (unsigned)(weft_ndevices(g->ctx) + 1)));
    return weft_insert_task_array(tp, c, a, n);
}

/* Inserts tasks [from, to) of the graph and applies each, in the same
 * order, to the reference (the sequential run). Non-zero when an
 * insertion fails. */
static int insert_random_tasks(weft_taskpool_t *tp, dag_t *g, int from, int to, unsigned *seed)
{
    for (int k = from; k < to; k++) {
        spec_t s;
        random_spec(g, &s, seed);
        uint64_t id = (uint64_t)k;
        if (insert_one(tp, g, id, &s, seed) != 0) return 1;
        uint64_t *v[MAXF];
        int l[MAXF];
        for (int i = 0; i < s.nflows; i++) {
            v[i] = g->ref[s.idx[i]];
            l[i] = g->len[s.idx[i]];
        }
        apply(id, &s, v, l);
    }
    return 0;
}

/* Each rank compares its own tiles with the reference, after wave `wave`:
 * through the read-write probe on even waves, a read acquire (device
 * copies stay valid) on odd ones. Returns the number that differ, or -1
 * when the probe or acquire failed. */
static int check_tiles(dag_t *g, int wave, int *checked)
{
    int bad = 0, rank = weft_rank(g->ctx);
    for (int i = 0; i < NDATA; i++) {
        void *p = NULL;
        if (wave % 2 == 0) {
            p = weft_data_host_ptr(g->d[i], NULL);
        } else if (g->owner[i] == rank) {
            if (weft_data_host_acquire(g->d[i], WEFT_R, &p, NULL) != 0) return -1;
        }
        if (!p) continue;
        ++*checked;
        if (memcmp(p, g->ref[i], sizeof(uint64_t) * (size_t)g->len[i]) != 0) {
            fprintf(stderr, "rank %d: tile %d differs from the sequential run after wave %d\n",
                    rank, i, wave);
            bad++;
        }
        if (wave % 2 && weft_data_host_release(g->d[i]) != 0) return -1;
    }
    return bad;
}

static int parse_opts(int argc, char **argv, dag_opts_t *o)
{
    *o = (dag_opts_t){.seed = 7, .ntasks = 3000, .waves = 1};
    for (int i = 1; i < argc; i++) {
        unsigned v;
        char key[16];
        if (sscanf(argv[i], "%15[a-z]=%u", key, &v) != 2) return -1;
        if (!strcmp(key, "seed"))
            o->seed = v;
        else if (!strcmp(key, "tasks"))
            o->ntasks = (int)v;
        else if (!strcmp(key, "waves") && v > 0)
            o->waves = (int)v;
        else if (!strcmp(key, "dev"))
            o->dev = v != 0;
        else if (!strcmp(key, "redux"))
            o->redux = v != 0;
        else if (!strcmp(key, "place"))
            o->place = v != 0;
        else
            return -1;
    }
    return 0;
}

/* Tiles: words per tile, some above the 64 KiB eager limit, most below;
 * random owners; with redux=1 every fourth tile reducible (one large). */
static int make_tiles(dag_t *g, weft_taskpool_t *tp, unsigned *seed)
{
    int nranks = weft_nranks(g->ctx);
    for (int i = 0; i < NDATA; i++) {
        g->len[i] = i % 5 == 0 ? LONG_WORDS : 1 + i;
        g->owner[i] = (int)(next(seed) % (unsigned)nranks);
        g->d[i] = weft_data_new(g->ctx, WEFT_BYTE, 8 * g->len[i], 1, g->owner[i]);
        if (!g->d[i]) return 1;
        g->reducible[i] = g->o.redux && i % 4 == 1;
        if (g->reducible[i] && weft_data_set_reduction(g->d[i], &zero_cls, &add_cls) != 0) return 1;
        uint64_t s0 = (uint64_t)i * 977;
        for (int w = 0; w < g->len[i]; w++) g->ref[i][w] = s0 + (uint64_t)w;
        if (weft_insert_task(tp, &init_cls, WEFT_W | WEFT_AFFINITY, g->d[i], WEFT_VALUE, &s0,
                             sizeof s0, 0))
            return 1;
    }
    return 0;
}

/* dev=1: between waves, half the tiles get a random home device (0, the
 * host, included). */
static int rehome(dag_t *g, unsigned *seed)
{
    if (!g->o.dev) return 0;
    for (int i = 0; i < NDATA; i++)
        if (next(seed) % 2 &&
            weft_data_set_device(g->d[i],
                                 (int)(next(seed) % (unsigned)(weft_ndevices(g->ctx) + 1))))
            return 1;
    return 0;
}

/* Runs the waves; non-zero when anything failed or differed. */
static int run_waves(dag_t *g, int *checked)
{
    unsigned seed = g->o.seed;
    int bad = 0;
    for (int w = 0; w < g->o.waves && !bad; w++) {
        weft_taskpool_t *tp = weft_taskpool_new(g->ctx, "dist-dag");
        if (!tp) return 1;
        if (w == 0 && make_tiles(g, tp, &seed)) bad = 1;
        int from = (int)((int64_t)g->o.ntasks * w / g->o.waves);
        int to = (int)((int64_t)g->o.ntasks * (w + 1) / g->o.waves);
        if (!bad && insert_random_tasks(tp, g, from, to, &seed)) bad = 1;
        if (weft_taskpool_wait(tp) != 0) bad = 1;
        weft_taskpool_free(tp);
        if (!bad && check_tiles(g, w, checked) != 0) bad = 1;
        if (!bad && rehome(g, &seed)) bad = 1;
    }
    return bad;
}

/* Tasks that ran on this rank's devices, and their evictions. */
static void device_totals(weft_context_t *ctx, long long *tasks, long long *evictions)
{
    *tasks = *evictions = 0;
    for (int k = 1; k <= weft_ndevices(ctx); k++) {
        weft_device_counters_t c;
        if (weft_device_counters_get(ctx, k, &c) != 0) continue;
        *tasks += c.tasks;
        *evictions += c.evictions;
    }
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    static dag_t g; /* the reference is 3 MiB: not on the stack */
    static uint64_t ref[NDATA][LONG_WORDS];
    g.ctx = ctx;
    g.ref = ref;
    int bad = 0, checked = 0;
    if (parse_opts(argc, argv, &g.o) != 0) {
        fprintf(stderr, "usage: %s [seed=S] [tasks=N] [waves=W] [dev=1] [redux=1] [place=1]\n",
                argv[0]);
        bad = 1;
    }
    if (!bad) bad = run_waves(&g, &checked);
    weft_stats_t st;
    if (weft_stats_get(ctx, &st) != 0) bad = 1;
    long long dev_tasks, evictions;
    device_totals(ctx, &dev_tasks, &evictions);
    for (int i = 0; i < NDATA; i++)
        if (g.d[i]) weft_data_release(g.d[i]);
    int rank = weft_rank(ctx), nranks = weft_nranks(ctx);
    if (weft_fini(ctx) != 0) bad = 1;
    printf("test_dist_dag rank %d/%d: %d own tiles checked, %lld tasks run here (%lld on "
           "devices, %lld evictions), %lld activations sent: %s\n",
           rank, nranks, checked, (long long)st.tasks_run, dev_tasks, evictions,
           (long long)st.activations_sent, bad ? "FAILED" : "PASSED");
    return bad;
}
