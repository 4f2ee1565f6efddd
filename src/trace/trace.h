/*
 * Trace recorder: slices on named tracks, written per rank as Chrome trace
 * JSON (FILE.rank<N>.json) that opens in Perfetto and chrome://tracing.
 *
 * A track is a timeline written by one thread (a worker, a device manager's
 * stream, the comm thread). Because a track has a single writer, its buffer
 * needs no lock: the writer fills records in chunks that never move, then
 * publishes the new count with a release store, so weft_trace_write and
 * weft_trace_count see only finished records even while recording goes on.
 *
 * Tracing off is a NULL weft_trace_t: every recording entry point is inline
 * and tests the pointer first, so the runtime pays one branch per call site
 * and does not evaluate the slice's arguments.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (weft_trace_now); the file shows them
 * in microseconds relative to an origin, taken at creation and movable with
 * weft_trace_set_origin so that ranks share one after a barrier.
 */
#ifndef WEFT_TRACE_TRACE_H
#define WEFT_TRACE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

#if defined(__GNUC__)
#define WEFT_TRACE_WUR __attribute__((warn_unused_result))
#define WEFT_TRACE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WEFT_TRACE_WUR
#define WEFT_TRACE_PRINTF(f, a)
#endif

typedef struct weft_trace weft_trace_t;

/* Tracks a trace may hold; weft_trace_track fails past it. */
#define WEFT_TRACE_MAX_TRACKS 1024

/* Bytes kept of a slice's name, category and formatted args (each with its
 * terminating NUL); longer ones are cut. */
#define WEFT_TRACE_NAME_LEN 48
#define WEFT_TRACE_CAT_LEN 16
#define WEFT_TRACE_ARGS_LEN 96

/*
 * Start a trace that weft_trace_write will write to prefix.rank<N>.json.
 * prefix NULL or "" means tracing off: *out is set to NULL and 0 returned, so
 * the caller can pass the `trace` parameter through unchanged.
 * max_events caps the slices kept per track (the `trace_buffer_events`
 * parameter); later ones are counted as dropped, and weft_trace_write warns.
 * Memory grows with use, in chunks, up to that cap.
 * Returns 0 and sets *out; WEFT_ERR_INVALID for max_events < 1 or a NULL out;
 * WEFT_ERR_NOMEM. *out is untouched on error. Any one thread.
 */
WEFT_TRACE_WUR int weft_trace_create(const char *prefix, int64_t max_events, weft_trace_t **out);

/* Free the trace and its records; NULL is ignored. No thread may be
 * recording. */
void weft_trace_destroy(weft_trace_t *tr);

/*
 * Register a track named name ("worker 3", "emu1 exec0", "comm") and return
 * its id (>= 0, in registration order; the file's "tid"). With tr NULL it
 * returns 0, a dummy id the recording calls ignore, so callers need no
 * special case for tracing off. WEFT_ERR_INVALID for a NULL name or past
 * WEFT_TRACE_MAX_TRACKS tracks; WEFT_ERR_NOMEM. Any thread, usually at init.
 */
WEFT_TRACE_WUR int weft_trace_track(weft_trace_t *tr, const char *name);

/*
 * Slices of one writer that overlap in time (transfers in flight at once on
 * the comm thread, copies and kernels queued on one stream, each drawn from
 * its enqueue to its end seen) go on lanes: the base track, then tracks
 * "NAME (lane 2)", ... registered on first need, a slice on the first lane
 * free at its start, so that no track holds two slices that overlap without
 * nesting (Perfetto and chrome://tracing draw those stacked wrongly). With
 * every lane busy, the one that frees first. A writer that also records
 * slices of its own thread (an eviction on the comm thread) gives its
 * lanes a base of their own (base_track -1: registered on first use as
 * NAME). Owned by the writer's thread.
 */
#define WEFT_TRACE_LANES 32
typedef struct weft_trace_lanes {
    int track[WEFT_TRACE_LANES]; /* -1: not registered yet */
    uint64_t end[WEFT_TRACE_LANES];
    char name[WEFT_TRACE_NAME_LEN];
} weft_trace_lanes_t;

/* Lanes over base_track, itself named name (-1: a track NAME registered on
 * first use). Any thread, at init. */
void weft_trace_lanes_init(weft_trace_lanes_t *l, int base_track, const char *name);

/* The track of the slice [t0_ns, t1_ns] of l's writer; -1 (records
 * nothing) when tr is NULL or no track could be registered. */
int weft_trace_lane(weft_trace_t *tr, weft_trace_lanes_t *l, uint64_t t0_ns, uint64_t t1_ns);

/* CLOCK_MONOTONIC in nanoseconds. Any thread. */
static inline uint64_t weft_trace_now(void) { return (uint64_t)weft_clock_ns(); }

/* weft_trace_now when tracing is on, 0 when off: lets a call site take its
 * start time without paying for the clock when nothing will be recorded. */
static inline uint64_t weft_trace_stamp(const weft_trace_t *tr)
{
    return tr ? weft_trace_now() : 0;
}

/*
 * The out-of-line recorder behind weft_trace_slice; call the macro instead.
 * Records the complete slice [t0_ns, t1_ns] on track. name and cat are copied
 * (cut to their field sizes). args_fmt and the rest are formatted now, with
 * vsnprintf, into JSON object members without the braces, for instance
 * "\"key\":%d,\"bytes\":%zu,\"transport\":\"%s\""; NULL for no args
 * (compilers warn about an empty format string). Values must be scalars
 * (numbers, strings, true/false/null). When the text does not parse as such
 * members (a string that needed escaping, a cut at WEFT_TRACE_ARGS_LEN), the
 * file keeps the members before the fault and the whole text as an escaped
 * "args_raw" string, so it stays valid JSON. A track id not returned by
 * weft_trace_track, or a full track, drops the slice (weft_trace_dropped).
 * Only the thread that owns track may call it for that track: one thread at
 * a time, or the count it publishes could go backwards.
 */
void weft_trace_record(weft_trace_t *tr, int track, uint64_t t0_ns, uint64_t t1_ns,
                       const char *name, const char *cat, const char *args_fmt, ...)
    WEFT_TRACE_PRINTF(7, 8);

/*
 * weft_trace_slice(weft_trace_t *tr, int track, uint64_t t0_ns, uint64_t t1_ns,
 *                  const char *name, const char *cat, const char *args_fmt, ...)
 * Record a slice when tr is not NULL; see weft_trace_record for the contract.
 * A macro rather than a static inline function because compilers do not
 * inline variadic functions, and the one-branch cost when tracing is off is
 * the point; tr is evaluated once, the other arguments only when tracing.
 */
#define weft_trace_slice(tr, ...)                                                                  \
    do {                                                                                           \
        weft_trace_t *weft_trace_tr_ = (tr);                                                       \
        if (weft_trace_tr_) weft_trace_record(weft_trace_tr_, __VA_ARGS__);                        \
    } while (0)

/*
 * weft_trace_lane_slice(weft_trace_t *tr, weft_trace_lanes_t *lanes,
 *                       uint64_t t0_ns, const char *name, const char *cat,
 *                       const char *args_fmt, ...)
 * The slice from t0_ns to now on the first of lanes free at t0_ns, when
 * tr is not NULL (as weft_trace_slice: tr evaluated once, the rest only
 * when tracing).
 */
#define weft_trace_lane_slice(tr, lanes, t0_ns, ...)                                               \
    do {                                                                                           \
        weft_trace_t *weft_trace_tr_ = (tr);                                                       \
        if (weft_trace_tr_) {                                                                      \
            uint64_t weft_trace_t0_ = (t0_ns), weft_trace_t1_ = weft_trace_now();                  \
            weft_trace_record(                                                                     \
                weft_trace_tr_,                                                                    \
                weft_trace_lane(weft_trace_tr_, (lanes), weft_trace_t0_, weft_trace_t1_),          \
                weft_trace_t0_, weft_trace_t1_, __VA_ARGS__);                                      \
        }                                                                                          \
    } while (0)

/* Make ns (a weft_trace_now value) time zero in the file, for instance the
 * time every rank leaves a barrier, so that rank files line up. NULL is
 * ignored. Any time before weft_trace_write, from the thread that writes. */
void weft_trace_set_origin(weft_trace_t *tr, uint64_t ns);

/* The track of the calling thread (set once by each weft thread when it
 * starts; -1 on threads without one): code shared by several threads, such
 * as eviction, records there. */
extern _Thread_local int weft_trace_thread_track;

/*
 * Write prefix.rank<rank>.json: {"traceEvents":[...],"displayTimeUnit":"ns"}
 * with one "ph":"X" event per slice ("pid" rank, "tid" track id, "ts" and
 * "dur" in microseconds) and "M" events naming the process "rank <rank>" and
 * each track. Slices recorded while it runs may be left out. Logs a warning
 * for tracks that dropped slices. Returns 0 (also for tr NULL, writing
 * nothing); WEFT_ERR_INVALID after logging when the file cannot be written.
 * Writes to the file weft_trace_open opened (opening it itself otherwise)
 * and closes it. One thread at a time.
 */
WEFT_TRACE_WUR int weft_trace_write(weft_trace_t *tr, int rank);

/*
 * Open prefix.rank<rank>.json for writing now, so that a path that cannot
 * be written is found at the start of a run, not after it. 0 for tr NULL;
 * WEFT_ERR_INVALID after logging the path and errno text when it cannot be
 * opened (or is open already); WEFT_ERR_NOMEM. weft_trace_destroy of a
 * trace opened and never written removes the empty file.
 */
WEFT_TRACE_WUR int weft_trace_open(weft_trace_t *tr, int rank);

/* Slices recorded so far whose category is cat, over all tracks; cat NULL
 * counts every slice. 0 for tr NULL. Any thread; O(slices). */
int64_t weft_trace_count(const weft_trace_t *tr, const char *cat);

/* Slices dropped so far because a track was full or its memory ran out. */
int64_t weft_trace_dropped(const weft_trace_t *tr);

#endif /* WEFT_TRACE_TRACE_H */
