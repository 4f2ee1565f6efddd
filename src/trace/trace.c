/* Trace recorder: per-track single-writer buffers and the Chrome trace JSON
 * writer. See trace.h for the contract and the memory-ordering argument. */
#include "trace/trace.h"

_Thread_local int weft_trace_thread_track = -1;

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/jsontext.h"
#include "util/ending.h"
#include "util/log.h"
#include "weft/weft.h"

/* Records per chunk: a chunk is allocated on the recording thread once per
 * this many slices, so the malloc cost is spread thin, and a chunk never
 * moves once other threads may read it. */
#define TRACE_CHUNK 1024
#define TRACE_PATH_SHOWN 256 /* characters of a path an error line shows */

typedef struct trace_rec {
    uint64_t t0, t1;
    char cat[WEFT_TRACE_CAT_LEN];
    char name[WEFT_TRACE_NAME_LEN];
    char args[WEFT_TRACE_ARGS_LEN];
} trace_rec_t;

typedef struct trace_track {
    /* A cache line of its own: n is stored on every slice by the owner, and
     * neighbouring tracks belong to other threads. */
    _Alignas(64) _Atomic int64_t n; /* records published; owner writes */
    _Atomic int64_t dropped;        /* owner writes, anyone reads */
    int64_t cap;                    /* records kept at most */
    char *name;
    trace_rec_t **chunks; /* cap / TRACE_CHUNK rounded up, NULL until used */
} trace_track_t;

struct weft_trace {
    char *prefix;
    char *path; /* prefix.rank<N>.json once opened */
    char *part; /* path.part: the file written, renamed to path once whole */
    FILE *file; /* opened by weft_trace_open, written and closed by weft_trace_write */
    int64_t max_events;
    uint64_t origin;
    pthread_mutex_t lock; /* serializes track registration only */
    _Atomic int ntracks;  /* released after tracks[ntracks - 1] is set */
    trace_track_t *tracks[WEFT_TRACE_MAX_TRACKS];
};

/* Every path a trace of this process took, for the rest of it: two
 * contexts given the same trace parameter wrote one file, the second's
 * over the first's, and the first to end renamed the other's part away;
 * contexts made one after another each wrote over the one before, without
 * a word (strangers': 300 contexts left two files). */
static pthread_mutex_t taken_lock = PTHREAD_MUTEX_INITIALIZER;
static char **taken;
static size_t ntaken, taken_room;

static int path_taken_locked(const char *path)
{
    for (size_t i = 0; i < ntaken; i++)
        if (strcmp(taken[i], path) == 0) return 1;
    return 0;
}

/* WEFT_ERR_NOMEM when the path cannot be kept (its name would go to the
 * next trace too). */
static int take_path_locked(const char *path)
{
    if (ntaken == taken_room) {
        size_t room = taken_room ? 2 * taken_room : 8;
        char **more = realloc(taken, room * sizeof *more);
        if (!more) return WEFT_ERR_NOMEM;
        taken = more;
        taken_room = room;
    }
    char *copy = strdup(path);
    if (!copy) return WEFT_ERR_NOMEM;
    taken[ntaken++] = copy;
    return WEFT_SUCCESS;
}

/* ---- creation and tracks -------------------------------------------- */

int weft_trace_create(const char *prefix, int64_t max_events, weft_trace_t **out)
{
    if (!out || max_events < 1) return WEFT_ERR_INVALID;
    if (!prefix || !*prefix) {
        *out = NULL;
        return WEFT_SUCCESS;
    }
    weft_trace_t *tr = calloc(1, sizeof *tr);
    if (!tr) return WEFT_ERR_NOMEM;
    tr->prefix = strdup(prefix);
    if (!tr->prefix) goto undo_alloc;
    if (pthread_mutex_init(&tr->lock, NULL) != 0) goto undo_prefix;
    tr->max_events = max_events;
    tr->origin = weft_trace_now();
    atomic_init(&tr->ntracks, 0);
    *out = tr;
    return WEFT_SUCCESS;
undo_prefix:
    free(tr->prefix);
undo_alloc:
    free(tr);
    return WEFT_ERR_NOMEM;
}

static void track_free(trace_track_t *t)
{
    int64_t nchunks = (t->cap + TRACE_CHUNK - 1) / TRACE_CHUNK;
    if (t->chunks)
        for (int64_t c = 0; c < nchunks; c++) free(t->chunks[c]);
    free(t->chunks);
    free(t->name);
    free(t);
}

static trace_track_t *track_new(const char *name, int64_t cap)
{
    /* aligned_alloc keeps the _Alignas(64) promise that malloc would not. */
    trace_track_t *t = aligned_alloc(64, sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    atomic_init(&t->n, 0);
    atomic_init(&t->dropped, 0);
    t->cap = cap;
    t->name = strdup(name);
    /* calloc of the directory: untouched pages of a large cap cost nothing. */
    t->chunks = calloc((size_t)((cap + TRACE_CHUNK - 1) / TRACE_CHUNK), sizeof *t->chunks);
    if (!t->name || !t->chunks) {
        track_free(t);
        return NULL;
    }
    return t;
}

int weft_trace_track(weft_trace_t *tr, const char *name)
{
    if (!tr) return 0;
    if (!name) return WEFT_ERR_INVALID;
    trace_track_t *t = track_new(name, tr->max_events);
    if (!t) return WEFT_ERR_NOMEM;
    pthread_mutex_lock(&tr->lock);
    int id = atomic_load_explicit(&tr->ntracks, memory_order_relaxed);
    if (id < WEFT_TRACE_MAX_TRACKS) {
        tr->tracks[id] = t;
        atomic_store_explicit(&tr->ntracks, id + 1, memory_order_release);
    }
    pthread_mutex_unlock(&tr->lock);
    if (id >= WEFT_TRACE_MAX_TRACKS) {
        weft_warn("trace: more than %d tracks; '%s' is not traced", WEFT_TRACE_MAX_TRACKS, name);
        track_free(t);
        return WEFT_ERR_INVALID;
    }
    return id;
}

void weft_trace_lanes_init(weft_trace_lanes_t *l, int base_track, const char *name)
{
    for (int i = 0; i < WEFT_TRACE_LANES; i++) {
        l->track[i] = i == 0 ? base_track : -1;
        l->end[i] = 0;
    }
    snprintf(l->name, sizeof l->name, "%s", name);
}

int weft_trace_lane(weft_trace_t *tr, weft_trace_lanes_t *l, uint64_t t0_ns, uint64_t t1_ns)
{
    if (!tr) return -1; /* nothing is recorded */
    int pick = 0;
    for (int i = 0; i < WEFT_TRACE_LANES; i++) {
        if (l->end[i] <= t0_ns) {
            pick = i;
            break;
        }
        if (l->end[i] < l->end[pick]) pick = i;
    }
    if (l->track[pick] < 0) {
        char name[WEFT_TRACE_NAME_LEN + 32];
        if (pick == 0)
            snprintf(name, sizeof name, "%s", l->name);
        else
            snprintf(name, sizeof name, "%s (lane %d)", l->name, pick + 1);
        int id = weft_trace_track(tr, name);
        /* No room for another track (weft_trace_track warned): drawn on
         * the base when it has one, else not at all (-1 records nothing). */
        if (id < 0) return l->track[0];
        l->track[pick] = id;
    }
    if (t1_ns > l->end[pick]) l->end[pick] = t1_ns;
    return l->track[pick];
}

/* ---- the file: written as PATH.part, renamed to PATH once whole ------------
 * Two jobs given one trace path wrote over each other from offset 0 (a
 * shorter trace left the tail of the longer: not JSON), and a run that
 * ended without weft_fini (an abort, the launcher's SIGTERM, a kill) left
 * an empty PATH that passed for a trace. A rename is atomic: PATH is one
 * job's whole trace or absent. The .part files a process has open are
 * removed by an end without weft_fini (util/ending.h); a SIGKILL leaves
 * one, named as what it is. */

/* The .part file removed (the run wrote no trace). */
static void part_drop(const char *part)
{
    weft_ending_forget(part);
    unlink(part);
}

void weft_trace_destroy(weft_trace_t *tr)
{
    if (!tr) return;
    int n = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    for (int i = 0; i < n; i++) track_free(tr->tracks[i]);
    pthread_mutex_destroy(&tr->lock);
    /* Opened and never written: the run did not get that far, and an
     * empty file would pass for a trace. */
    if (tr->file) {
        fclose(tr->file);
        part_drop(tr->part);
    }
    free(tr->part);
    free(tr->path);
    free(tr->prefix);
    free(tr);
}

int weft_trace_open(weft_trace_t *tr, int rank)
{
    if (!tr) return WEFT_SUCCESS;
    if (tr->file) return WEFT_ERR_INVALID;
    size_t plen0 = strlen(tr->prefix);
    if (tr->prefix[plen0 - 1] == '/') {
        /* The files are PREFIX.rankN.json: a directory's files were hidden
         * ones, ".rank0.json" inside it. */
        weft_error("trace: '%.*s' names a directory (parameter trace is the files' prefix, "
                   "PREFIX.rankN.json): give a name in it, e.g. '%.*srun'",
                   TRACE_PATH_SHOWN, tr->prefix, TRACE_PATH_SHOWN, tr->prefix);
        return WEFT_ERR_INVALID;
    }
    size_t len = plen0 + 40;
    char *path = malloc(len), *part = malloc(len);
    if (!path || !part) {
        free(path);
        free(part);
        return WEFT_ERR_NOMEM;
    }
    /* Another context of this process with the same prefix, now or
     * before: this one's file is PREFIX.rankN.ctxK.json, K from 2, said. */
    pthread_mutex_lock(&taken_lock);
    snprintf(path, len, "%s.rank%d.json", tr->prefix, rank);
    int shared = 0;
    for (int k = 2; path_taken_locked(path); k++, shared = 1)
        snprintf(path, len, "%s.rank%d.ctx%d.json", tr->prefix, rank, k);
    snprintf(part, len, "%s.part", path);
    FILE *f = fopen(part, "w");
    int err = errno;
    if (f && take_path_locked(path) != WEFT_SUCCESS) {
        fclose(f);
        unlink(part);
        pthread_mutex_unlock(&taken_lock);
        free(path);
        free(part);
        return WEFT_ERR_NOMEM;
    }
    if (f) {
        free(tr->path);
        tr->path = path;
    }
    pthread_mutex_unlock(&taken_lock);
    if (f && shared)
        weft_warn("trace: another context of this process writes or wrote %s.rank%d.json: this "
                  "one's trace goes to '%.*s'",
                  tr->prefix, rank, TRACE_PATH_SHOWN, path);
    if (!f) {
        /* A path past a log line would push the reason off its end. */
        size_t plen = strlen(part);
        int cut = plen > TRACE_PATH_SHOWN;
        weft_error("trace: cannot open '%.*s'%s for writing: %s (parameter trace: give a path "
                   "in a writable directory)",
                   cut ? TRACE_PATH_SHOWN : (int)plen, part, cut ? " (the path's start)" : "",
                   strerror(err));
        free(path);
        free(part);
        return WEFT_ERR_INVALID;
    }
    free(tr->part);
    tr->part = part;
    tr->file = f;
    weft_ending_unlink(part);
    return WEFT_SUCCESS;
}

void weft_trace_set_origin(weft_trace_t *tr, uint64_t ns)
{
    if (tr) tr->origin = ns;
}

/* ---- recording (hot path) -------------------------------------------- */

/* The slot for record n of t, allocating its chunk on first use; NULL when
 * the track is full or out of memory. Only the owner calls it. */
static trace_rec_t *track_slot(trace_track_t *t, int64_t n)
{
    if (n >= t->cap) return NULL;
    trace_rec_t **chunk = &t->chunks[n / TRACE_CHUNK];
    if (!*chunk) {
        *chunk = malloc(TRACE_CHUNK * sizeof **chunk);
        if (!*chunk) return NULL;
    }
    return &(*chunk)[n % TRACE_CHUNK];
}

/* strncpy that always terminates and does not pad: names are short and the
 * field is rewritten for every slice. */
static void copy_cut(char *dst, const char *src, size_t size)
{
    size_t i = 0;
    if (src)
        for (; i + 1 < size && src[i]; i++) dst[i] = src[i];
    dst[i] = '\0';
}

void weft_trace_record(weft_trace_t *tr, int track, uint64_t t0_ns, uint64_t t1_ns,
                       const char *name, const char *cat, const char *args_fmt, ...)
{
    int ntracks = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    if (track < 0 || track >= ntracks) return;
    trace_track_t *t = tr->tracks[track];
    int64_t n = atomic_load_explicit(&t->n, memory_order_relaxed);
    trace_rec_t *r = track_slot(t, n);
    if (!r) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    r->t0 = t0_ns;
    r->t1 = t1_ns;
    copy_cut(r->name, name, sizeof r->name);
    copy_cut(r->cat, cat, sizeof r->cat);
    r->args[0] = '\0';
    if (args_fmt) {
        va_list ap;
        va_start(ap, args_fmt);
        vsnprintf(r->args, sizeof r->args, args_fmt, ap);
        va_end(ap);
    }
    /* Publishes the record (and a new chunk pointer) to readers. */
    atomic_store_explicit(&t->n, n + 1, memory_order_release);
}

/* ---- reading ---------------------------------------------------------- */

static const trace_rec_t *track_rec(const trace_track_t *t, int64_t i)
{
    return &t->chunks[i / TRACE_CHUNK][i % TRACE_CHUNK];
}

int64_t weft_trace_count(const weft_trace_t *tr, const char *cat)
{
    if (!tr) return 0;
    int64_t total = 0;
    int ntracks = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    for (int k = 0; k < ntracks; k++) {
        const trace_track_t *t = tr->tracks[k];
        int64_t n = atomic_load_explicit(&t->n, memory_order_acquire);
        if (!cat) {
            total += n;
            continue;
        }
        for (int64_t i = 0; i < n; i++) total += strcmp(track_rec(t, i)->cat, cat) == 0;
    }
    return total;
}

int64_t weft_trace_dropped(const weft_trace_t *tr)
{
    if (!tr) return 0;
    int64_t total = 0;
    int ntracks = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    for (int k = 0; k < ntracks; k++)
        total += atomic_load_explicit(&tr->tracks[k]->dropped, memory_order_relaxed);
    return total;
}

/* ---- JSON output -------------------------------------------------------- */

/* ns as microseconds with three decimals, exact (no double rounding). */
static void put_us(FILE *f, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000, (unsigned)(mag % 1000));
}

static void put_slice(FILE *f, const weft_trace_t *tr, int rank, int tid, const trace_rec_t *r)
{
    fputs(",\n{\"name\":", f);
    weft_trace__put_string(f, r->name);
    fputs(",\"cat\":", f);
    weft_trace__put_string(f, r->cat);
    fprintf(f, ",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", rank, tid);
    put_us(f, (int64_t)(r->t0 - tr->origin));
    fputs(",\"dur\":", f);
    put_us(f, r->t1 > r->t0 ? (int64_t)(r->t1 - r->t0) : 0);
    weft_trace__put_args(f, r->args);
    putc_unlocked('}', f);
}

/* "M" events: Perfetto shows "rank N" and the track names in place of bare
 * pid/tid numbers, sorted by rank and registration order. */
static void put_metadata(FILE *f, const weft_trace_t *tr, int rank, int ntracks)
{
    fprintf(f,
            "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"name\":\"rank %d\"}},\n",
            rank, rank);
    fprintf(f,
            "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
            "\"args\":{\"sort_index\":%d}}",
            rank, rank);
    for (int k = 0; k < ntracks; k++) {
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":",
                rank, k);
        weft_trace__put_string(f, tr->tracks[k]->name);
        fprintf(f,
                "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                rank, k, k);
    }
}

/* By start, the longer first: a slice is recorded when it ends, so one
 * nested in another (an eviction's write-back copy) came before it, and
 * readers that take a track's slices in order saw the two cross. */
static int by_start(const void *a, const void *b)
{
    const trace_rec_t *x = *(const trace_rec_t *const *)a, *y = *(const trace_rec_t *const *)b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->t1 > y->t1 ? -1 : x->t1 < y->t1;
}

static void put_track(FILE *f, const weft_trace_t *tr, int rank, int k)
{
    const trace_track_t *t = tr->tracks[k];
    int64_t n = atomic_load_explicit(&t->n, memory_order_acquire);
    const trace_rec_t **order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    for (int64_t i = 0; i < n; i++)
        if (order) order[i] = track_rec(t, i);
    if (order) qsort(order, (size_t)n, sizeof *order, by_start); /* else as recorded */
    for (int64_t i = 0; i < n; i++) put_slice(f, tr, rank, k, order ? order[i] : track_rec(t, i));
    free(order);
}

static void put_trace(FILE *f, const weft_trace_t *tr, int rank)
{
    int ntracks = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    fputs("{\"traceEvents\":[\n", f);
    put_metadata(f, tr, rank, ntracks);
    for (int k = 0; k < ntracks; k++) put_track(f, tr, rank, k);
    fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
}

static void warn_dropped(const weft_trace_t *tr)
{
    int ntracks = atomic_load_explicit(&tr->ntracks, memory_order_acquire);
    for (int k = 0; k < ntracks; k++) {
        int64_t d = atomic_load_explicit(&tr->tracks[k]->dropped, memory_order_relaxed);
        if (d > 0)
            weft_warn("trace: track '%s' dropped %" PRId64 " slices past %" PRId64
                      " (raise trace_buffer_events)",
                      tr->tracks[k]->name, d, tr->max_events);
    }
}

int weft_trace_write(weft_trace_t *tr, int rank)
{
    if (!tr) return WEFT_SUCCESS;
    if (!tr->file) {
        int rc = weft_trace_open(tr, rank);
        if (rc != WEFT_SUCCESS) return rc;
    }
    FILE *f = tr->file;
    tr->file = NULL;
    int rc = WEFT_SUCCESS;
    /* Large buffer: the file is written in one go, often 100 MB or more. */
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    flockfile(f);
    put_trace(f, tr, rank);
    funlockfile(f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        weft_error("trace: writing '%s' failed: %s", tr->path, strerror(errno));
        rc = WEFT_ERR_INVALID;
        part_drop(tr->part);
    } else if (rename(tr->part, tr->path) != 0) {
        weft_error("trace: renaming '%s' to '%s' failed: %s", tr->part, tr->path, strerror(errno));
        rc = WEFT_ERR_INVALID;
        part_drop(tr->part);
    } else {
        weft_ending_forget(tr->part);
    }
    warn_dropped(tr);
    return rc;
}
