/* Failure injection for tests: the parameter fault_inject names places
 * where the n-th occurrence on a rank must fail, so that CI exercises the
 * failure paths. Off (an empty spec) it costs one NULL test a site.
 *
 * Spec: comma-separated rules SITE[:CLASS]:N[+][@RANK]
 *   task:N          the N-th task body this rank starts returns
 *                   WEFT_FAULT_RC instead of running
 *   task:CLASS:N    the N-th body of task class CLASS
 *   comm_alloc:N    the N-th allocation of the comm engine fails
 *   comm_post:N     the N-th MPI post of a tile transfer fails as if MPI
 *                   had returned an error
 *   device_open:N   the N-th accelerator weft_init opens fails to open
 *   device_copy:N   the N-th tile copy weft enqueues to, from or between
 *                   accelerators (stage-in, write-back, peer, and the comm
 *                   engine's ipc pulls, staged chunks, eager landings) fails
 *   task_skip:N     the N-th task body this rank starts does not run but
 *   task_skip:CLASS:N  reports success: a wrong result, which an
 *                   application's own check must catch
 *   host_pin:N      the N-th page-locking of host memory (a slab of the
 *                   runtime's host copies, or weft_host_pin) fails
 *   device_fail:N   the N-th task that completes on an accelerator of
 *   device_fail:CLASS:N  this rank (of class CLASS) has its completion
 *                   event report an error, and the device is broken from
 *                   then on (a GPU's sticky error): every later operation
 *                   on it fails
 *   span_alloc:N    the N-th registration of user memory this rank notes
 *                   (weft_data_register on the owner, weft_matrix_wrap,
 *                   weft_vector_wrap, weft_data_register_device) finds no
 *                   memory for its entry: the call is refused
 *   refusal_note:N  the N-th refusal this rank keeps the words of (for the
 *                   report across ranks) finds no memory for them: they
 *                   are dropped, the refusal itself still counts
 *   device_land:N   the N-th device copy the comm engine waits for (an ipc
 *                   pull, a staged chunk) reports an error at its end, and
 *                   the device is broken from then on, as with device_fail
 *   redux_alloc:N   the N-th weft_data_set_reduction that builds a
 *                   reduction finds no memory for its last table
 *   mpi_coll:N      the N-th collective this rank makes after an agreement
 *                   (context/coll.c: a wait's question whether a task
 *                   failed, its recovery of good versions, a graph's
 *                   wait telling the ranks which NEW data it wrote
 *                   (ptg/ptgsettle.c), its failure exchange, weft_fini's
 *                   last exchange) returns an error
 *                   as if MPI had; the collective itself is made, so the
 *                   ranks stay matched. Without @RANK every rank fails
 *                   the same one, as when the communicator breaks; a
 *                   rule with @RANK is refused (the other ranks would go
 *                   into the next collective alone and hang), and weft_init
 *                   refuses ranks whose mpi_coll rules differ (runtime/
 *                   initagree.c)
 *   ptg_walk:N      the N-th graph's walk for cycles across ranks cannot
 *                   start on this rank as if it had more transfers than
 *                   the walk counts (not a lack of memory)
 * With @RANK the rule applies on that rank only. N counts from 1; "N+"
 * fails the N-th occurrence and every later one (a fault that stays). */
#ifndef WEFT_UTIL_FAULT_H
#define WEFT_UTIL_FAULT_H

#include <stdatomic.h>
#include <stddef.h>

/* Places that can be made to fail; a new site is a new value here and a
 * name in fault.c's table. */
typedef enum weft_fault_site {
    WEFT_FAULT_TASK = 0,          /* a task body starts */
    WEFT_FAULT_COMM_ALLOC = 1,    /* the comm engine allocates host memory */
    WEFT_FAULT_COMM_POST = 2,     /* the comm engine posts a send or receive */
    WEFT_FAULT_DEVICE_OPEN = 3,   /* weft_init opens an accelerator */
    WEFT_FAULT_DEVICE_COPY = 4,   /* a tile copy to, from or between accelerators */
    WEFT_FAULT_TASK_SKIP = 5,     /* a task body starts: skipped, success reported */
    WEFT_FAULT_HOST_PIN = 6,      /* host memory is page-locked for the devices */
    WEFT_FAULT_DEVICE_FAIL = 7,   /* a task completes on an accelerator: the device dies */
    WEFT_FAULT_SPAN_ALLOC = 8,    /* a registration's memory is noted (data/span.c) */
    WEFT_FAULT_REFUSAL_NOTE = 9,  /* a refusal's words are kept (context/seqlog.c) */
    WEFT_FAULT_DEVICE_LAND = 10,  /* the comm engine sees a device copy end: the device dies */
    WEFT_FAULT_RECOVER = 11,      /* a rank reads the good version it gives after a failure */
    WEFT_FAULT_REDUX_ALLOC = 12,  /* weft_data_set_reduction allocates its tables */
    WEFT_FAULT_MPI_COLL = 13,     /* a collective after an agreement ends (context/coll.c) */
    WEFT_FAULT_EVENT_RECORD = 14, /* an event is recorded on a device stream after work */
    WEFT_FAULT_EMU_SHM = 15,      /* an emu zone's file is made: cut to nothing (SIGBUS) */
    WEFT_FAULT_TASK_KEEP = 16,    /* a rank keeps a task it inserted: out of memory */
    WEFT_FAULT_DEVICE_ALLOC = 17, /* a tile's own device allocation (device_alloc=tile) */
    WEFT_FAULT_PTG_WALK = 18,     /* a graph's cycle walk across ranks starts (ptg/ptgdry.c) */
    WEFT_FAULT_NSITES
} weft_fault_site_t;

/* What an injected task failure returns: recognisable in messages. */
#define WEFT_FAULT_RC (-42)

#define WEFT_FAULT_MAX_RULES 8

typedef struct weft_fault_rule {
    weft_fault_site_t site;
    char cls[64]; /* task class name; empty: any */
    long nth;
    int stays;        /* "N+": every occurrence from the N-th on fails */
    atomic_long seen; /* occurrences counted so far */
    char text[160];   /* the rule as given, for the warning of one that never fired */
} weft_fault_rule_t;

typedef struct weft_fault {
    int nrules;
    int armed[WEFT_FAULT_NSITES]; /* a rule of this rank names the site */
    weft_fault_rule_t rule[WEFT_FAULT_MAX_RULES];
} weft_fault_t;

/* Parses spec for this rank of nranks. *out is NULL when no rule applies
 * here (the zero-cost case). WEFT_ERR_PARAM after logging the malformed
 * part, or a rule for a rank >= nranks (it would never fire). */
int weft_fault_create(const char *spec, int rank, int nranks, weft_fault_t **out)
    __attribute__((warn_unused_result));
void weft_fault_destroy(weft_fault_t *f);
/* At the end of the run: a warning for each rule of this rank that never
 * fired (a class no task has, a count past the occurrences): a test that
 * set it would otherwise pass without exercising anything. */
void weft_fault_report_unfired(const weft_fault_t *f);

/* 1 when this occurrence of site (for task class cls, may be NULL) must
 * fail. Any thread. */
int weft_fault_hit_slow(weft_fault_t *f, weft_fault_site_t site, const char *cls);

static inline int weft_fault_hit(weft_fault_t *f, weft_fault_site_t site, const char *cls)
{
    return f && f->armed[site] && weft_fault_hit_slow(f, site, cls);
}

const char *weft_fault_site_name(weft_fault_site_t site);

/* This rank's rules of site, as given, comma-separated, into out (n
 * bytes); "" when it has none (f NULL included). */
void weft_fault_site_rules(const weft_fault_t *f, weft_fault_site_t site, char *out, size_t n);

/* The site device_copy for a copy of data `key` from device src (of rank
 * src_rank; -1: this rank, else src is the local device that maps the
 * peer's memory) to dst, enqueued by device `by` (its index): 1
 * when it must fail, logged there at level (WEFT_LOG_WARN where the caller
 * recovers from the failure). One line for the device path's copies and
 * the comm engine's alike. */
int weft_fault_copy_hit(weft_fault_t *f, int level, int by, unsigned long long key, int src,
                        int src_rank, int dst);

#endif
