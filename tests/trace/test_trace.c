/*
 * Unit test of the trace recorder (src/trace/trace.c).
 * Usage: test_trace [PREFIX]; files go to PREFIX*.rank<N>.json
 * (default /tmp/weft_trace_unit). Exit 0 when every check passes; on the
 * first failed check, print it and exit 1.
 *
 * The written files are read back by a JSON parser in this file rather than
 * by python, which CI machines may lack; the parser checks the whole syntax
 * (strings down to escapes and UTF-8) and collects each event's fields, so
 * the checks are on what Perfetto would see, not on the recorder's memory.
 * The run also leaves PREFIX_demo.rank0/1.json, a small two-rank trace shaped
 * like a potrf run, for bench/trace_timeline.py.
 */
#include "trace/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

#include "../check.h"

#define NTHREADS 4
#define NSLICES 100000

/* ---- a JSON parser that keeps what the checks need -------------------- */

#define MAX_TRACKS 64

typedef struct event {
    char ph[8], name[128], cat[32], argname[128], arg_raw[256];
    double pid, tid, ts, dur, arg_key;
    int has_ts, has_dur, has_raw;
} event_t;

/* What a file holds, by track (tid). */
typedef struct summary {
    int nevents, meta_process, meta_sort;
    char process_name[128], unit[16];
    int64_t x_count[MAX_TRACKS], cat_task, cat_evict, negative_ts;
    char track_name[MAX_TRACKS][128];
    double last_ts[MAX_TRACKS];
    int ts_order_ok, pid_ok, rank;
    event_t last; /* the last "X" event, for the edge-case checks */
} summary_t;

typedef enum { OBJ_ROOT, OBJ_EVENT, OBJ_ARGS, OBJ_OTHER } obj_kind_t;

typedef struct jp {
    const char *s;
    size_t i;
    int depth;
    summary_t *sum;
} jp_t;

/* Where a scalar value is kept, if anywhere. */
typedef struct target {
    char *str;
    size_t strsz;
    double *num;
} target_t;

static int jp_value(jp_t *p, obj_kind_t kind, event_t *ev, const target_t *t);

static void jp_ws(jp_t *p)
{
    while (p->s[p->i] && strchr(" \t\r\n", p->s[p->i])) p->i++;
}

static int is_cont(unsigned char c) { return c >= 0x80 && c <= 0xBF; }

/* A well-formed UTF-8 sequence (RFC 3629) starting at s: its length, or 0. */
static int utf8_seq(const unsigned char *s)
{
    if (s[0] >= 0xC2 && s[0] <= 0xDF) return is_cont(s[1]) ? 2 : 0;
    if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F)) return 0;
        return is_cont(s[1]) && is_cont(s[2]) ? 3 : 0;
    }
    if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        if ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F)) return 0;
        return is_cont(s[1]) && is_cont(s[2]) && is_cont(s[3]) ? 4 : 0;
    }
    return 0;
}

/* A string; its text (escapes kept as written, cut to outsz) into out. */
static int jp_string(jp_t *p, char *out, size_t outsz)
{
    size_t n = 0;
    if (p->s[p->i++] != '"') return 0;
    for (;;) {
        unsigned char c = (unsigned char)p->s[p->i];
        int len = 1;
        if (c == '"') break;
        if (c < 0x20) return 0;
        if (c == '\\') {
            char e = p->s[p->i + 1];
            if (!e || !strchr("\"\\/bfnrtu", e)) return 0;
            len = 2;
            for (int k = 0; e == 'u' && k < 4; k++, len++)
                if (!p->s[p->i + 2 + k] || !strchr("0123456789abcdefABCDEF", p->s[p->i + 2 + k]))
                    return 0;
        } else if (c >= 0x80 && !(len = utf8_seq((const unsigned char *)p->s + p->i))) {
            return 0;
        }
        for (int k = 0; k < len; k++, p->i++)
            if (out && n + 1 < outsz) out[n++] = p->s[p->i];
    }
    p->i++;
    if (out) out[n] = '\0';
    return 1;
}

static const char *digits(const char *s)
{
    while (*s >= '0' && *s <= '9') s++;
    return s;
}

static int jp_number(jp_t *p, double *out)
{
    const char *s = p->s + p->i, *start = s;
    if (*s == '-') s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        s = digits(s);
    else
        return 0;
    if (*s == '.') {
        if (digits(s + 1) == s + 1) return 0;
        s = digits(s + 1);
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (digits(s) == s) return 0;
        s = digits(s);
    }
    if (out) *out = strtod(start, NULL);
    p->i += (size_t)(s - start);
    return 1;
}

#define KEEP_STR(t, field) ((t)->str = (field), (t)->strsz = sizeof(field))

/* Where the value of member key of a kind-object goes, and the kind of
 * object (or array element) that value is. */
static obj_kind_t route(obj_kind_t kind, const char *key, event_t *ev, summary_t *sum, target_t *t)
{
    memset(t, 0, sizeof *t);
    if (kind == OBJ_ROOT) {
        if (strcmp(key, "displayTimeUnit") == 0) KEEP_STR(t, sum->unit);
        return strcmp(key, "traceEvents") == 0 ? OBJ_EVENT : OBJ_OTHER;
    }
    if (kind == OBJ_ARGS) {
        if (strcmp(key, "name") == 0) KEEP_STR(t, ev->argname);
        if (strcmp(key, "key") == 0) t->num = &ev->arg_key;
        if (strcmp(key, "args_raw") == 0) KEEP_STR(t, ev->arg_raw), ev->has_raw = 1;
        return OBJ_OTHER;
    }
    if (kind != OBJ_EVENT) return OBJ_OTHER;
    if (strcmp(key, "args") == 0) return OBJ_ARGS;
    if (strcmp(key, "ph") == 0) KEEP_STR(t, ev->ph);
    if (strcmp(key, "name") == 0) KEEP_STR(t, ev->name);
    if (strcmp(key, "cat") == 0) KEEP_STR(t, ev->cat);
    if (strcmp(key, "pid") == 0) t->num = &ev->pid;
    if (strcmp(key, "tid") == 0) t->num = &ev->tid;
    if (strcmp(key, "ts") == 0) t->num = &ev->ts, ev->has_ts = 1;
    if (strcmp(key, "dur") == 0) t->num = &ev->dur, ev->has_dur = 1;
    return OBJ_OTHER;
}

static void record_event(summary_t *sum, const event_t *ev);

/* An object; an event object collects its fields and is counted at its end. */
static int jp_object(jp_t *p, obj_kind_t kind, event_t *ev)
{
    event_t mine = {.tid = -1};
    if (kind == OBJ_EVENT) ev = &mine;
    p->i++;
    jp_ws(p);
    if (p->s[p->i] == '}') return p->i++, 1;
    for (;;) {
        char key[64];
        target_t t;
        jp_ws(p);
        if (!jp_string(p, key, sizeof key)) return 0;
        jp_ws(p);
        if (p->s[p->i++] != ':') return 0;
        jp_ws(p);
        if (!jp_value(p, route(kind, key, ev, p->sum, &t), ev, &t)) return 0;
        jp_ws(p);
        char c = p->s[p->i++];
        if (c == '}') break;
        if (c != ',') return 0;
    }
    if (kind == OBJ_EVENT) record_event(p->sum, ev);
    return 1;
}

/* Arrays pass their element kind down: the traceEvents array holds events. */
static int jp_array(jp_t *p, obj_kind_t elem)
{
    static const target_t none;
    p->i++;
    jp_ws(p);
    if (p->s[p->i] == ']') return p->i++, 1;
    for (;;) {
        jp_ws(p);
        if (!jp_value(p, elem, NULL, &none)) return 0;
        jp_ws(p);
        char c = p->s[p->i++];
        if (c == ']') return 1;
        if (c != ',') return 0;
    }
}

static int jp_value(jp_t *p, obj_kind_t kind, event_t *ev, const target_t *t)
{
    static const char *const words[] = {"true", "false", "null"};
    char c = p->s[p->i];
    int ok = 0;
    if (++p->depth > 32) return 0;
    if (c == '{')
        ok = jp_object(p, kind, ev);
    else if (c == '[')
        ok = jp_array(p, kind == OBJ_EVENT ? OBJ_EVENT : OBJ_OTHER);
    else if (c == '"')
        ok = jp_string(p, t->str, t->strsz);
    else if (c == '-' || (c >= '0' && c <= '9'))
        ok = jp_number(p, t->num);
    for (int w = 0; w < 3 && !ok && c >= 'a' && c <= 'z'; w++)
        if (strncmp(p->s + p->i, words[w], strlen(words[w])) == 0) ok = 1, p->i += strlen(words[w]);
    p->depth--;
    return ok;
}

static void record_event(summary_t *sum, const event_t *ev)
{
    int tid = (int)ev->tid;
    sum->nevents++;
    if ((int)ev->pid != sum->rank) sum->pid_ok = 0;
    if (tid < 0 || tid >= MAX_TRACKS) return;
    if (strcmp(ev->ph, "M") == 0) {
        if (strcmp(ev->name, "process_name") == 0)
            sum->meta_process++,
                snprintf(sum->process_name, sizeof sum->process_name, "%s", ev->argname);
        else if (strcmp(ev->name, "thread_name") == 0)
            snprintf(sum->track_name[tid], sizeof sum->track_name[tid], "%s", ev->argname);
        else if (strcmp(ev->name, "thread_sort_index") == 0)
            sum->meta_sort++;
        return;
    }
    if (strcmp(ev->ph, "X") != 0 || !ev->has_ts || !ev->has_dur || ev->dur < 0) return;
    if (sum->x_count[tid] > 0 && ev->ts < sum->last_ts[tid]) sum->ts_order_ok = 0;
    sum->last_ts[tid] = ev->ts;
    sum->x_count[tid]++;
    sum->cat_task += strcmp(ev->cat, "task") == 0;
    sum->cat_evict += strcmp(ev->cat, "evict") == 0;
    sum->negative_ts += ev->ts < 0;
    sum->last = *ev;
}

/* Parse the whole file at path; 0 when it is not exactly one JSON value. */
static int parse_file(const char *path, int rank, summary_t *sum)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    REQUIRE(buf && fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = '\0';
    fclose(f);
    memset(sum, 0, sizeof *sum);
    sum->ts_order_ok = sum->pid_ok = 1;
    sum->rank = rank;
    jp_t p = {.s = buf, .sum = sum};
    static const target_t none;
    jp_ws(&p);
    int ok = p.s[p.i] == '{' && jp_value(&p, OBJ_ROOT, NULL, &none);
    jp_ws(&p);
    ok = ok && p.i == (size_t)len;
    free(buf);
    return ok;
}

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

/* The trace file of rank r of a real run (PREFIX.rank<r>.json) into sum;
 * 0 after a message when it is not a valid trace of that rank. */
static int parse_rank_file(const char *prefix, int r, summary_t *sum)
{
    char file[512];
    snprintf(file, sizeof file, "%s.rank%d.json", prefix, r);
    int ok = parse_file(file, r, sum) && sum->pid_ok;
    if (!ok) fprintf(stderr, "%s: not a valid trace\n", file);
    return ok;
}

/* --check PREFIX NRANKS NTASKS: the trace files of a real run parse as
 * JSON and hold NTASKS task slices over all ranks. */
static int check_run(const char *prefix, int nranks, long ntasks)
{
    summary_t *sum = calloc(1, sizeof *sum);
    long tasks = 0;
    int ok = sum != NULL;
    for (int r = 0; ok && r < nranks; r++) {
        ok = parse_rank_file(prefix, r, sum);
        tasks += sum->cat_task;
    }
    free(sum);
    printf("test_trace --check: %d files, %ld task slices (expected %ld): %s\n", nranks, tasks,
           ntasks, ok && tasks == ntasks ? "PASSED" : "FAILED");
    return !(ok && tasks == ntasks);
}

/* --track-slices PREFIX NRANKS WORD MIN MAX: the slices on the tracks whose
 * name holds WORD, over all ranks, number from MIN to MAX (which device
 * stream the managers chose, as Perfetto shows it). */
static int check_tracks(const char *prefix, int nranks, const char *word, long min, long max)
{
    summary_t *sum = calloc(1, sizeof *sum);
    long n = 0;
    int ok = sum != NULL;
    for (int r = 0; ok && r < nranks; r++) {
        ok = parse_rank_file(prefix, r, sum);
        for (int t = 0; ok && t < MAX_TRACKS; t++)
            if (strstr(sum->track_name[t], word)) n += sum->x_count[t];
    }
    free(sum);
    int pass = ok && n >= min && n <= max;
    printf("test_trace --track-slices: %ld slices on tracks named '*%s*' (expected %ld..%ld): %s\n",
           n, word, min, max, pass ? "PASSED" : "FAILED");
    return !pass;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--check") == 0)
        return check_run(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 7 && strcmp(argv[1], "--track-slices") == 0)
        return check_tracks(argv[2], atoi(argv[3]), argv[4], atol(argv[5]), atol(argv[6]));
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
