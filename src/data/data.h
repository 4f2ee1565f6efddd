/* Data (one logical tile) and its copies, one optional copy per device of
 * this process (device 0 is host memory). The coherency rules are listed in
 * docs/COHERENCY.md; the functions here are the only code that changes a
 * copy's version, state or readers. Every function below takes the data's
 * lock itself unless its name ends in _locked. */
#ifndef WEFT_DATA_DATA_H
#define WEFT_DATA_DATA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "data/nextuse.h"
#include "util/handle.h"
#include "util/list.h"
#include "util/quarantine.h"
#include "util/spin.h"
#include "weft/weft.h"

#define WEFT_MAX_DEVICES 17 /* host + up to 16 accelerators a process */

typedef enum weft_coherency {
    WEFT_COPY_INVALID = 0, /* stale: older than the data's newest version */
    WEFT_COPY_SHARED = 1,  /* newest version, another copy holds it too */
    WEFT_COPY_OWNED = 2    /* the only copy of the newest version: never lost */
} weft_coherency_t;

typedef enum weft_mem_owner {
    WEFT_MEM_RUNTIME = 0, /* weft allocated it and may evict and free it */
    WEFT_MEM_MANAGED = 1  /* the user's memory: never freed, never evicted */
} weft_mem_owner_t;

typedef enum weft_xfer_status {
    WEFT_XFER_NONE = 0,
    WEFT_XFER_UNDER = 1, /* bytes are arriving: not readable yet */
    WEFT_XFER_COMPLETE = 2
} weft_xfer_status_t;

/* How a runtime-owned copy's memory goes back where it came from. */
typedef void (*weft_copy_free_fn)(void *allocator, void *ptr, size_t bytes);

typedef struct weft_data weft_data_t;

/* A thread waiting for a change of a data's copies, on its own stack
 * (weft_data_wait_change). */
typedef struct weft_data_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int woken;
    struct weft_data_waiter *next;
} weft_data_waiter_t;

typedef struct weft_data_copy {
    weft_data_t *data;
    int device;
    void *ptr;
    int64_t ld; /* leading dimension in elements */
    uint32_t version;
    weft_coherency_t state;
    int readers; /* tasks and transfers reading it now */
    weft_mem_owner_t owner;
    weft_copy_free_fn free_fn; /* NULL for MANAGED */
    void *allocator;           /* argument of free_fn: zone, device, ... */
    weft_xfer_status_t xfer;
    /* Its bytes are those of `version` in the data's history: a failed
     * body's writes, bytes arriving, a copy of a failed body's bytes, a
     * later rewrite of that version number (a version set back after a
     * failure, a host write) clear it. Only a stale host copy that is
     * intact is taken back when a failure destroyed the newer versions
     * (weft_data_older_host_locked). */
    int intact;
    void *zone_ptr;     /* per-tile device allocations: the block the zone counted */
    uint64_t last_task; /* sequence number of the task that last used it */
    /* A device manager copied it in ahead of this task (its insertion
     * number), and no task has used it since; 0: none (devmgr/devahead.c). */
    uint64_t ahead_for;
    weft_list_t lru; /* its place in its device manager's LRU list, unlinked when none */
} weft_data_copy_t;

enum {
    WEFT_DATA_NEW = 0x1,      /* scratch tile: no memory until first written */
    WEFT_DATA_RELEASED = 0x2, /* the user dropped the handle */
    WEFT_DATA_HOMED = 0x4,    /* home_device was chosen (0 then means the host) */
    /* The user keeps device copies of MANAGED host memory across waits and
     * promises weft_data_host_acquire before writing that memory. */
    WEFT_DATA_KEEP_DEVICE = 0x8,
    /* A NEW data read before its first write starts from init_fn's contents
     * (zero bytes when init_fn is NULL): weft_data_set_init. */
    WEFT_DATA_INIT = 0x10,
    /* weft_data_set_reduction was called on it: a walk reads the stf
     * record, off the first cache line, only for these (docs/SCALE.md). */
    WEFT_DATA_REDUX = 0x20,
    /* A write-back into the user's memory (MANAGED host copy) failed: the
     * newest version is on a device until a retry succeeds (main thread,
     * devmgr/devflush.c). */
    WEFT_DATA_WB_PENDING = 0x40,
    /* Made NEW (weft_data_new), on every rank: stays when a host write on
     * its owner clears NEW there, so that what every rank decides alike
     * (stf/redux.c) does not read NEW. */
    WEFT_DATA_MADE_NEW = 0x80,
    /* A NEW data whose first writer failed, so that no version of it
     * exists: a reader's refusal at insertion says why. */
    WEFT_DATA_FIRST_FAILED = 0x100,
    /* A NEW data whose only version a failed task overwrote, on a rank
     * that was not its owner: none is left (api/recover.c). */
    WEFT_DATA_NONE_LEFT = 0x200,
    /* A tile of a matrix: weft_matrix_free releases it, the user may not. */
    WEFT_DATA_TILE = 0x400
};

/* weft_data_t.partial_void's bits. */
enum { WEFT_PARTIAL_VOID = 1, WEFT_PARTIAL_NO_INIT = 2 };

struct weft_data {
    /* The first cache line (data.c aligns the structure to it) holds what
     * every rank reads of each data of every task it walks at insertion,
     * whether or not the task concerns it (docs/SCALE.md). */
    uint32_t tag; /* util/handle.h: WEFT_HANDLE_DATA, or released; first field */
    /* Atomic: the main thread sets RELEASED while tasks in flight read
     * HOMED and a failure sets FIRST_FAILED (under the data's lock, which
     * the main thread does not take): a plain int's two read-modify-writes
     * could lose a bit (ThreadSanitizer). Each |= and &= is one atomic
     * operation; reads are plain loads on the platforms weft runs on. */
    atomic_int flags;
    uint64_t key;
    int owner_rank;
    int rows, cols;
    weft_dtype_t type;
    struct weft_context *ctx;
    int16_t host_access; /* mode of a weft_data_host_acquire not yet released, 0 none */
    /* Remote inference's view of the whole run (stf/remote.c), kept in the
     * handle so that a rank walking past a task that uses it allocates
     * nothing. All zero: version 0, the owner's contents. */
    int16_t net_held;     /* this rank holds net_version, while current */
    uint32_t net_version; /* newest version across ranks */
    int net_writer;       /* the rank that wrote it, while the view is current */
    /* The low 32 bits of the wave of the taskpool that last inserted a task
     * naming it, on every rank (stf/insert.c): a data is used by one
     * taskpool at a time, until that taskpool's wait. 0: none yet. */
    uint32_t open_wave;
    uint64_t net_wave; /* the taskpool wave that last changed it: current until its wait */
    /* The rest is read by the tasks this rank keeps. */
    int home_device;  /* device index on the owner rank (0 = host) */
    size_t elem;      /* bytes of one element */
    size_t bytes;     /* rows * cols * elem: the contiguous size */
    uint32_t version; /* newest version known on this rank */
    weft_spin_t lock;
    atomic_int refs; /* the user's handle plus one per task that uses it */
    weft_data_copy_t *copies[WEFT_MAX_DEVICES];
    weft_stage_fn stage_in, stage_out; /* custom host <-> device transfers */
    void *stage_arg;
    weft_data_init_fn init_fn; /* WEFT_DATA_INIT: the initial contents, NULL zeros */
    void *init_arg;
    void *stf;                   /* the stf layer's record (stf/record.h) */
    void (*stf_free)(void *stf); /* frees it with the data */
    int lost;      /* under lock: its last writer failed or was cancelled (stf/failure.c) */
    int lost_bytes; /* under lock: and it failed here, not cancelled: a body that failed may
                       have changed the bytes of its copy here (api/recover.c) */
    int live_slot; /* its place in the context's live list, plus 1; 0: not in it */
    /* A reduction's partial (stf/redux.c): the key of the data it folds
     * into, plus 1, so that a failure names the user's data; 0 otherwise. */
    uint64_t partial_of;
    /* under lock: a partial that a failed body or a cancelled task left
     * without its share: the tasks that add to it later still run (their
     * other flows are theirs), what reads it (the combine, a SEND of it) is
     * cancelled, so the reduced data keeps its value (stf/failure.c).
     * WEFT_PARTIAL_VOID, with WEFT_PARTIAL_NO_INIT when its init task failed:
     * nothing to add into, the tasks that add to it are cancelled too. */
    int partial_void;
    struct weft_span *span;      /* the user memory it registered (data/span.h), until released */
    weft_nextuse_t uses;         /* under lock: this rank's unfinished tasks using it */
    weft_data_waiter_t *waiters; /* under lock: threads waiting for a change */
    weft_data_waiter_t *wake;    /* under lock: to wake when the lock is dropped */
    /* Where the structure goes at destroy (NULL: freed at once), so that a
     * handle used after its release reads a released tag, not freed memory. */
    struct weft_quarantine *quarantine;
    /* check_reads: a read acquire hashed the host copy (api/acquire.c). */
    int host_hashed;
    uint64_t host_hash;
};

/* weft_dtype_size (bytes of an element) is public: weft/weft.h. Whether
 * type is one (else "CALL: element type ..." logged, WEFT_ERR_INVALID). */
int weft_dtype_check(const char *call, weft_dtype_t type);

/* Whether a tile of rows x cols elements of elem bytes fits the bytes a
 * tile can hold (at most PTRDIFF_MAX: struct elements made rows x cols x
 * elem overflow size_t); its bytes into *bytes when it does. */
int weft_data__tile_fits(size_t elem, int rows, int cols, size_t *bytes);

/* A data with no copies. Returns NULL on bad sizes (logged). */
weft_data_t *weft_data__create(struct weft_context *ctx, uint64_t key, weft_dtype_t type, int rows,
                               int cols, int owner_rank);
/* The same in mem, the memory of a destroyed data that the quarantine
 * gave back (weft_quarantine_take with weft_data__free_mem), or NULL to
 * allocate; mem is the data's, or freed when NULL is returned. */
weft_data_t *weft_data__create_in(void *mem, struct weft_context *ctx, uint64_t key,
                                  weft_dtype_t type, int rows, int cols, int owner_rank);
/* Frees a destroyed data's memory: the free function its quarantine entry
 * carries, by which weft_quarantine_take tells a data's memory. */
void weft_data__free_mem(void *mem);
/* The bytes of a handle's memory (what the quarantine counts). */
size_t weft_data__mem_bytes(void);
/* Frees every copy, then the structure (into d->quarantine when set);
 * readers must be 0 (asserted). */
void weft_data__destroy(weft_data_t *d);
void weft_data__retain(weft_data_t *d);
/* Drops one reference; the last one destroys the data. */
void weft_data__unref(weft_data_t *d);

/* Creates copy `device` (must be absent), INVALID at version 0. */
weft_data_copy_t *weft_data_copy_attach(weft_data_t *d, int device, void *ptr, int64_t ld,
                                        weft_mem_owner_t owner, weft_copy_free_fn free_fn,
                                        void *allocator);
/* Removes copy `device` and returns its memory where it came from. Refused
 * (WEFT_ERR_INVALID) while it is busy (weft_data_copy_busy_locked), or
 * while it is the OWNED copy (the newest version would be lost). */
int weft_data_copy_detach(weft_data_t *d, int device) __attribute__((warn_unused_result));
/* Same without the OWNED check, freeing at once: only where no other
 * thread can reach d (its destruction, single-threaded tests). */
void weft_data_copy_detach_force_locked(weft_data_t *d, int device);
/* Takes copy `device` out of d (NULL when absent) without freeing it: the
 * caller frees it with weft_data_copy_free after dropping d's lock, since
 * returning device memory (cudaFree with device_alloc=tile) can block. */
weft_data_copy_t *weft_data_copy_unlink_locked(weft_data_t *d, int device);
/* Returns an unlinked copy's memory where it came from (runtime-owned
 * memory only) and frees the record; no data lock held. */
void weft_data_copy_free(weft_data_copy_t *c, size_t bytes);

/* A copy at the newest version, preferring `device`, then host, then the
 * lowest device index; NULL when no copy holds it. Locked variant. */
weft_data_copy_t *weft_data_newest_copy_locked(weft_data_t *d, int prefer_device);

/* The copy on `device` is the newest after a task wrote it: version+1,
 * OWNED, every other copy INVALID. */
void weft_data_written_locked(weft_data_t *d, int device);
/* Same with the version given (distributed runs: the version the whole
 * insertion sequence assigns to this write). */
void weft_data_written_at_locked(weft_data_t *d, int device, uint32_t version);
/* The copy on `device` received the newest version from another copy (or
 * from the network at version v >= d->version): both become SHARED. */
void weft_data_copied_locked(weft_data_t *d, int device, uint32_t version);

/* Copy `device` holds the data's current contents as they are (a freshly
 * allocated tile or the user's memory): newest version, OWNED. */
void weft_data_copy_set_initial_locked(weft_data_t *d, int device);

/* 1 when copy c holds the newest version and no bytes are arriving in it. */
int weft_data_copy_is_newest_locked(const weft_data_t *d, const weft_data_copy_t *c);
/* 1 when copy c holds, or is receiving, the newest version. */
int weft_data_copy_at_newest_locked(const weft_data_t *d, const weft_data_copy_t *c);
/* Bytes of another rank's version start arriving in c: not readable until
 * weft_data_copied_locked says they are in. */
void weft_data_copy_arriving_locked(weft_data_copy_t *c);

/* Transfers between copies of one process (device layer): begin marks copy
 * `device` as receiving the newest version (UNDER, returned); end marks it
 * done: with ok and the version still newest it becomes SHARED (or OWNED
 * alone, see weft_data_copied_locked), otherwise INVALID. An end for a
 * copy that was written meanwhile changes nothing. */
uint32_t weft_data_xfer_begin_locked(weft_data_t *d, int device);
void weft_data_xfer_end_locked(weft_data_t *d, int device, uint32_t version, int ok);

/* After a copy was dropped: a lone remaining newest copy becomes OWNED. */
void weft_data_fix_owner_locked(weft_data_t *d);

/* Copy `device` was filled outside weft (user memory registered with its
 * contents): it becomes the newest, OWNED, every other copy INVALID. The
 * version number stays (all ranks agree on it). */
void weft_data_copy_set_current_locked(weft_data_t *d, int device);

/* Between taskpools, when the host copy holds the newest version: it
 * becomes the only current copy (OWNED), every device copy INVALID, so
 * that what the user writes into host memory is what the next task reads
 * (docs/COHERENCY.md rule 9). Takes the lock. */
void weft_data_host_only(weft_data_t *d);
/* Whether d's host copy is the user's memory (weft_data_register): it
 * holds the data between taskpools, and the user may write it then. */
static inline int weft_data_in_user_memory(const weft_data_t *d)
{
    return d->copies[0] && d->copies[0]->owner == WEFT_MEM_MANAGED;
}

/* Gives a NEW data with WEFT_DATA_INIT and no copy at all its initial
 * contents in a host copy (runtime memory, OWNED at the data's version):
 * the zero bytes or what d->init_fn writes. Nothing to do when a copy
 * exists; the memory comes from pool (data/hostmem.h; NULL: plain). Main
 * thread, while no task uses d. WEFT_ERR_NOMEM. */
struct weft_hostmem;
int weft_data_init_contents(weft_data_t *d, struct weft_hostmem *pool)
    __attribute__((warn_unused_result));

/* Readers protect a copy from eviction, overwrite and free. */
void weft_data_copy_reader_acquire_locked(weft_data_copy_t *c);
void weft_data_copy_reader_release_locked(weft_data_copy_t *c);
/* 1 while c must not be freed: it has readers, or bytes are being written
 * into it (a transfer's destination holds no reader, only the UNDER mark:
 * an eviction's write-back into a host copy, a receive). */
int weft_data_copy_busy_locked(const weft_data_copy_t *c);

/* What a finished user of a copy leaves in it (weft_data_publish). */
typedef enum weft_publish {
    WEFT_PUBLISH_READ,     /* nothing: it only read, or it failed */
    WEFT_PUBLISH_WRITTEN,  /* a task's writes: the newest version (rule 2) */
    WEFT_PUBLISH_RECEIVED, /* a version that arrived from another rank */
    WEFT_PUBLISH_LOST,     /* a receive that failed: what c held is gone */
    WEFT_PUBLISH_SPOILED,  /* a body given c to write ran and failed: c's bytes are no
                              version's (as READ otherwise; stf/failure.c decides the rest) */
} weft_publish_t;

/* The end of a task's or a transfer's use of copy c of d, the one path by
 * which a written flow becomes visible (host tasks, device tasks, network
 * receives; docs/COHERENCY.md rules 2 and 4). Takes d's lock; under it:
 * WEFT_PUBLISH_WRITTEN makes c the newest version, `version` (the one the
 * distributed sequence assigned) or, when 0, the next one, and every other
 * copy INVALID; WEFT_PUBLISH_RECEIVED marks the bytes of `version` in c
 * (weft_data_copied_locked); WEFT_PUBLISH_LOST ends a failed receive into c:
 * c is no longer arriving (a later receive or write may use it) and holds
 * nothing readable (part of the bytes may have landed); a non-zero task_seq names the task that
 * last used c; then the reader the user held on c is released (c may be evicted or freed from then
 * on). */
void weft_data_publish(weft_data_t *d, weft_data_copy_t *c, weft_publish_t what, uint32_t version,
                       uint64_t task_seq);

/* The owner's host copy, when it is the user's memory, if a failure
 * destroyed d's newer versions (d->lost_bytes) but that copy, stale,
 * still holds an older version
 * intact (a body failed on a device after another task wrote the newest
 * version there): what the data goes back to (api/recover.c), and what
 * the wait's write-back leaves alone (devmgr/devflush.c). NULL when none
 * (a NEW data's version 0 is no contents). */
weft_data_copy_t *weft_data_older_host_locked(weft_data_t *d);
/* Makes c, which weft_data_older_host_locked returned, d's current
 * version again: OWNED, every other copy INVALID, its bytes good. */
void weft_data_restore_locked(weft_data_t *d, weft_data_copy_t *c);

/* Number of copies whose state is not INVALID. */
int weft_data_valid_copies_locked(const weft_data_t *d);

/* Host memory for runtime-owned host copies, one allocation per tile. */
void *weft_host_alloc(size_t bytes);
void weft_host_free(void *allocator, void *ptr, size_t bytes);

/* ---- waiting for another thread's change (datawait.c) ------------------ */

/* Called with d locked, returns with it locked, dropping it meanwhile:
 * sleeps until another thread ends a transfer, a write or a read of one of
 * d's copies (1), or, as a safety net, 50 ms passed (0). The caller checks
 * again either way. */
int weft_data_wait_change(weft_data_t *d);
/* Under d's lock: the threads waiting on d are woken at the next unlock. */
void weft_data_wake_mark_locked(weft_data_t *d);
/* Wakes the waiters of a list taken out of a data (no lock held). */
void weft_data_wake(weft_data_waiter_t *w);

static inline void weft_data_lock(weft_data_t *d) { weft_spin_lock(&d->lock); }
/* Drops d's lock, then wakes the waiters a change marked (they may not be
 * signalled under a spinlock). */
static inline void weft_data_unlock(weft_data_t *d)
{
    weft_data_waiter_t *w = d->wake;
    if (w) d->wake = NULL;
    weft_spin_unlock(&d->lock);
    if (w) weft_data_wake(w);
}

#endif
