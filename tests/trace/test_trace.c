/*
 * Unit test of the trace recorder (src/trace/trace.c).
 * Usage: test_trace [PREFIX]; files go to PREFIX*.rank<N>.json
 * (default /tmp/weft_trace_unit). Exit 0 when every check passes; on the
 * first failed check, print it and exit 1.
 *
 * The written files are read back by the JSON reader of trace_json.h, whose
 * own rejection of what is not JSON is checked first. The run also leaves
 * PREFIX_demo.rank0/1.json, a small two-rank trace shaped like a potrf run,
 * for bench/trace_timeline.py. The files of real runs are checked by
 * trace_check.c.
 */
#include "trace/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#include "trace_json.h"

#define NTHREADS 4
#define NSLICES 100000

/* The parser itself must reject what is not JSON, or its "valid" means
 * nothing. */
static void test_parser_rejects(void)
{
    static const char *const bad[] = {
        "{\"a\":1,}",  "{\"a\" 1}",    "[1 2]",           "{\"a\":\"x\ny\"}",
        "{\"a\":01}",  "{\"a\":1.}",   "{\"a\":\"\\x\"}", "{\"a\":\"\xC3\"}",
        "{\"a\":tru}", "{\"a\":[1,2}", "{\"a\":1}}",
    };
    static const target_t none;
    summary_t *sum = malloc(sizeof *sum);
    REQUIRE(sum);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        jp_t p = {.s = bad[k], .sum = sum};
        memset(sum, 0, sizeof *sum);
        int ok = jp_value(&p, OBJ_ROOT, NULL, &none);
        jp_ws(&p);
        REQUIRE(!ok || p.i != strlen(bad[k]));
    }
    jp_t p = {.s = "{\"a\":[1,-2.5e3,\"\\u00e9\xC3\xA9\",true,null,{}]}", .sum = sum};
    REQUIRE(jp_value(&p, OBJ_ROOT, NULL, &none) && p.s[p.i] == '\0');
    free(sum);
}
/* ---- tests of the recorder -------------------------------------------- */

static int side_effects;

static int bump(void) { return ++side_effects; }

static void test_off(void)
{
    weft_trace_t *tr = (weft_trace_t *)1;
    REQUIRE(weft_trace_create("", 16, &tr) == 0 && tr == NULL);
    tr = (weft_trace_t *)1;
    REQUIRE(weft_trace_create(NULL, 16, &tr) == 0 && tr == NULL);
    REQUIRE(weft_trace_track(tr, "worker 0") == 0);
    weft_trace_slice(tr, 0, 1, 2, "gemm", "task", "\"key\":%d", bump());
    REQUIRE(side_effects == 0); /* arguments are not even evaluated */
    REQUIRE(weft_trace_stamp(tr) == 0);
    REQUIRE(weft_trace_count(tr, NULL) == 0 && weft_trace_dropped(tr) == 0);
    REQUIRE(weft_trace_write(tr, 0) == 0);
    weft_trace_set_origin(tr, 5);
    weft_trace_destroy(tr);
    REQUIRE(weft_trace_create("x", 0, &tr) == WEFT_ERR_INVALID);
    REQUIRE(weft_trace_create("x", 16, NULL) == WEFT_ERR_INVALID);
}

typedef struct worker_arg {
    weft_trace_t *tr;
    int track;
    pthread_barrier_t *start;
} worker_arg_t;

static const char *const cats[4] = {"task", "xfer", "net", "evict"};
static const char *const names[4] = {"gemm", "H2D", "net recv", "evict"};

static void *worker(void *argp)
{
    worker_arg_t *a = argp;
    pthread_barrier_wait(a->start);
    for (int i = 0; i < NSLICES; i++) {
        uint64_t t0 = weft_trace_now();
        weft_trace_slice(a->tr, a->track, t0, t0 + 100 + (uint64_t)i % 7, names[i % 4], cats[i % 4],
                         "\"key\":%d,\"device\":%d,\"bytes\":%zu,\"transport\":\"ipc\"", i,
                         a->track, (size_t)1 << 20);
    }
    return NULL;
}

static double seconds(uint64_t ns) { return (double)ns * 1e-9; }

/* Four threads on their own tracks; the main thread counts meanwhile, which
 * must only ever see a growing number of finished slices. */
static void record_concurrently(weft_trace_t *tr)
{
    pthread_t th[NTHREADS];
    worker_arg_t args[NTHREADS];
    pthread_barrier_t start;
    REQUIRE(pthread_barrier_init(&start, NULL, NTHREADS + 1) == 0);
    for (int k = 0; k < NTHREADS; k++) {
        char name[32];
        snprintf(name, sizeof name, "worker %d", k);
        args[k] = (worker_arg_t){.tr = tr, .track = weft_trace_track(tr, name), .start = &start};
        REQUIRE(args[k].track == k);
        REQUIRE(pthread_create(&th[k], NULL, worker, &args[k]) == 0);
    }
    pthread_barrier_wait(&start);
    uint64_t t0 = weft_trace_now();
    int64_t seen = 0;
    for (int k = 0; k < 50; k++) {
        int64_t now = weft_trace_count(tr, NULL);
        REQUIRE(now >= seen && now <= (int64_t)NTHREADS * NSLICES);
        seen = now;
    }
    for (int k = 0; k < NTHREADS; k++) REQUIRE(pthread_join(th[k], NULL) == 0);
    uint64_t t1 = weft_trace_now();
    printf("recorded %d slices on %d threads in %.3f s, the main thread counting meanwhile\n",
           NTHREADS * NSLICES, NTHREADS, seconds(t1 - t0));
    pthread_barrier_destroy(&start);
}

/* The cost of one slice on one thread, on and off; printed, not checked,
 * since CI machines vary. */
static void test_cost(const char *prefix)
{
    weft_trace_t *tr = NULL, *off = NULL;
    REQUIRE(weft_trace_create(prefix, 2 * NSLICES, &tr) == 0);
    int t = weft_trace_track(tr, "cost");
    uint64_t t0 = weft_trace_now();
    for (int i = 0; i < NSLICES; i++)
        weft_trace_slice(tr, t, t0, t0 + 1, "gemm", "task",
                         "\"key\":%d,\"device\":%d,\"bytes\":%zu,\"transport\":\"ipc\"", i, 1,
                         (size_t)1 << 20);
    uint64_t t1 = weft_trace_now();
    for (int i = 0; i < NSLICES; i++) weft_trace_slice(tr, t, t0, t0 + 1, "gemm", "task", NULL);
    uint64_t t2 = weft_trace_now();
    for (int i = 0; i < NSLICES; i++)
        weft_trace_slice(off, t, weft_trace_stamp(off), weft_trace_stamp(off), "gemm", "task",
                         "\"key\":%d", i);
    uint64_t t3 = weft_trace_now();
    REQUIRE(weft_trace_count(tr, "task") == 2 * NSLICES && weft_trace_dropped(tr) == 0);
    printf("one thread: %.0f ns a slice with 4 args, %.0f ns without args, "
           "%.1f ns with tracing off\n",
           (double)(t1 - t0) / NSLICES, (double)(t2 - t1) / NSLICES, (double)(t3 - t2) / NSLICES);
    weft_trace_destroy(tr);
}

static void test_threads(const char *prefix)
{
    weft_trace_t *tr = NULL;
    char path[512];
    REQUIRE(weft_trace_create(prefix, 1 << 20, &tr) == 0 && tr);
    record_concurrently(tr);
    REQUIRE(weft_trace_count(tr, NULL) == (int64_t)NTHREADS * NSLICES);
    for (int c = 0; c < 4; c++)
        REQUIRE(weft_trace_count(tr, cats[c]) == (int64_t)NTHREADS * NSLICES / 4);
    REQUIRE(weft_trace_count(tr, "nothing") == 0 && weft_trace_dropped(tr) == 0);
    uint64_t t0 = weft_trace_now();
    REQUIRE(weft_trace_write(tr, 3) == 0);
    printf("wrote them in %.3f s\n", seconds(weft_trace_now() - t0));
    weft_trace_destroy(tr);

    summary_t *sum = calloc(1, sizeof *sum);
    REQUIRE(sum);
    snprintf(path, sizeof path, "%s.rank3.json", prefix);
    t0 = weft_trace_now();
    REQUIRE(parse_file(path, 3, sum));
    printf("parsed %s (%d events) in %.3f s\n", path, sum->nevents, seconds(weft_trace_now() - t0));
    REQUIRE(strcmp(sum->unit, "ns") == 0 && sum->pid_ok && sum->ts_order_ok);
    REQUIRE(sum->meta_process == 1 && strcmp(sum->process_name, "rank 3") == 0);
    REQUIRE(sum->meta_sort == NTHREADS);
    for (int k = 0; k < NTHREADS; k++) {
        char name[32];
        snprintf(name, sizeof name, "worker %d", k);
        REQUIRE(sum->x_count[k] == NSLICES && strcmp(sum->track_name[k], name) == 0);
    }
    REQUIRE(sum->x_count[NTHREADS] == 0 && sum->cat_task == NTHREADS * NSLICES / 4);
    REQUIRE(sum->negative_ts == 0);
    free(sum);
}

/* A full track drops and counts; names and args that are not clean JSON
 * still give a valid file; times before the origin come out negative. */
static void test_edges(const char *prefix)
{
    weft_trace_t *tr = NULL;
    char path[512];
    REQUIRE(weft_trace_create(prefix, 10, &tr) == 0);
    int t = weft_trace_track(tr, "odd \"track\"\t\xC3\xA9");
    REQUIRE(t == 0 && weft_trace_track(tr, NULL) == WEFT_ERR_INVALID);
    uint64_t base = weft_trace_now();
    for (int i = 0; i < 15; i++)
        weft_trace_slice(tr, t, base + 10u * i, base + 10u * i + 5, "gemm", "task", "\"key\":%d",
                         i);
    weft_trace_slice(tr, 7, base, base + 1, "no such track", "task", NULL);
    REQUIRE(weft_trace_count(tr, "task") == 10 && weft_trace_dropped(tr) == 5);
    weft_trace_destroy(tr);

    REQUIRE(weft_trace_create(prefix, 10, &tr) == 0);
    REQUIRE(weft_trace_track(tr, "edges") == 0);
    weft_trace_slice(tr, 0, base, base + 2000, "evict", "evict", NULL);
    weft_trace_set_origin(tr, base + 1500); /* this slice starts 1.5 us early */
    /* A name cut inside a two-byte character, an unescaped quote and a
     * control character in args, args cut at the field size. */
    weft_trace_slice(
        tr, 0, base + 3000, base + 4000,
        "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"
        "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"
        "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9",
        "evict", "\"key\":%d,\"who\":\"%s\",\"pad\":\"%080d\"", 42, "a\"b\n", 0);
    REQUIRE(weft_trace_write(tr, 0) == 0);
    weft_trace_destroy(tr);
    summary_t *sum = calloc(1, sizeof *sum);
    REQUIRE(sum);
    snprintf(path, sizeof path, "%s.rank0.json", prefix);
    REQUIRE(parse_file(path, 0, sum));
    REQUIRE(sum->x_count[0] == 2 && sum->cat_evict == 2 && sum->negative_ts == 1);
    REQUIRE(sum->last.arg_key == 42 && sum->last.has_raw); /* the whole member kept */
    REQUIRE(sum->last.ts == 1.5 && sum->last.dur == 1.0);
    free(sum);
}

/* Deterministic PRNG so the demo trace is the same every run. */
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One track of the demo: back-to-back slices with gaps, names drawn from
 * names[], lasting lo..hi us, over about 20 ms. */
static void demo_track(weft_trace_t *tr, int track, uint64_t base, uint64_t *seed,
                       const char *const *nm, int nnames, const char *cat, int lo, int hi)
{
    uint64_t t = base + rng(seed) % 200000;
    for (int i = 0; t < base + 20000000; i++) {
        uint64_t dur = 1000u * (uint64_t)(lo + (int)(rng(seed) % (uint64_t)(hi - lo + 1)));
        const char *name = nm[rng(seed) % (uint64_t)nnames];
        weft_trace_slice(tr, track, t, t + dur, name, strcmp(name, "evict") ? cat : "evict",
                         "\"key\":%d,\"bytes\":%d", i, 1 << 20);
        t += dur + 1000u * (rng(seed) % (uint64_t)(hi / 2 + 1));
    }
}

/* Two ranks shaped like a potrf run with an emulated device, for the PNG
 * timeline script; both take the same origin, as after a barrier. */
static void write_demo(const char *prefix)
{
    static const char *const kernels[] = {"potrf", "trsm", "syrk", "gemm", "gemm", "gemm"};
    static const char *const in[] = {"H2D", "H2D", "H2D", "evict"}, *const out[] = {"D2H"};
    static const char *const net[] = {"net send", "net recv"};
    uint64_t base = weft_trace_now(), seed = 88172645463325252ull;
    for (int rank = 0; rank < 2; rank++) {
        weft_trace_t *tr = NULL;
        REQUIRE(weft_trace_create(prefix, 1 << 16, &tr) == 0);
        weft_trace_set_origin(tr, base);
        for (int w = 0; w < 4; w++) {
            char name[32];
            snprintf(name, sizeof name, "worker %d", w);
            REQUIRE(weft_trace_track(tr, name) == w);
            demo_track(tr, w, base, &seed, kernels, 6, "task", 100, 600);
        }
        REQUIRE(weft_trace_track(tr, "emu0 in") == 4 && weft_trace_track(tr, "emu0 exec0") == 5);
        REQUIRE(weft_trace_track(tr, "emu0 out") == 6 && weft_trace_track(tr, "comm") == 7);
        demo_track(tr, 4, base, &seed, in, 4, "xfer", 50, 200);
        demo_track(tr, 5, base, &seed, kernels + 3, 3, "task", 80, 300);
        demo_track(tr, 6, base, &seed, out, 1, "xfer", 50, 200);
        demo_track(tr, 7, base, &seed, net, 2, "net", 100, 900);
        REQUIRE(weft_trace_write(tr, rank) == 0);
        weft_trace_destroy(tr);
    }
}

int main(int argc, char **argv)
{
    const char *prefix = argc > 1 ? argv[1] : "/tmp/weft_trace_unit";
    char path[480];
    test_parser_rejects();
    test_off();
    test_cost(prefix);
    test_threads(prefix);
    snprintf(path, sizeof path, "%s_edges", prefix);
    test_edges(path);
    snprintf(path, sizeof path, "%s_demo", prefix);
    write_demo(path);
    summary_t *sum = calloc(1, sizeof *sum);
    REQUIRE(sum);
    for (int rank = 0; rank < 2; rank++) {
        char file[512];
        snprintf(file, sizeof file, "%s.rank%d.json", path, rank);
        REQUIRE(parse_file(file, rank, sum) && sum->x_count[7] > 0 && sum->cat_evict > 0);
    }
    free(sum);
    printf("test_trace: all checks passed; demo trace %s.rank0.json and .rank1.json\n", path);
    return 0;
}
