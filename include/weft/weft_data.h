/* weft: data, what tasks read and write (a tile of rows x cols elements
 * in memory weft allocates or the user registers): its element types,
 * creation, initial contents, owner, release and the main thread's host
 * access between taskpools. Part of the
 * public API, included by weft/weft.h (include that one); the conventions
 * of weft/weft.h (handle checks, status values, the main thread) apply. */
#ifndef WEFT_WEFT_DATA_H
#define WEFT_WEFT_DATA_H

#ifndef WEFT_WEFT_H
#error "include weft/weft.h, which includes this header"
#endif

typedef struct weft_data weft_data_t;

/* The element type of a data: a tile holds rows x cols elements. */
typedef enum weft_dtype {
    WEFT_DOUBLE = 0,
    WEFT_FLOAT = 1,
    WEFT_BYTE = 2,
    WEFT_INT32 = 3,
    WEFT_INT64 = 4,
    /* WEFT_DTYPE_STRUCT + s: opaque elements of s bytes (1..65535), made
     * by weft_dtype_struct; weft copies them as bytes. */
    WEFT_DTYPE_STRUCT = 0x10000
} weft_dtype_t;

/* The type of elements of `bytes` bytes, e.g. weft_dtype_struct(sizeof
 * (struct particle)): rows then count structs, not bytes. A size past
 * 65535 gives a type every call refuses, 2^30 and more alike (it wrapped
 * through int: 2^32 + 8 bytes made a valid type of 8). */
static inline weft_dtype_t weft_dtype_struct(size_t bytes)
{
    return (weft_dtype_t)(WEFT_DTYPE_STRUCT + (bytes < (1u << 30) ? (int)bytes : (1 << 30)));
}
/* Bytes of one element of type t; 0 for a value that is no type. Any
 * thread. */
WEFT_API size_t weft_dtype_size(weft_dtype_t t);

/* A NEW (scratch) tile of rows x cols elements with no backing memory: the
 * first task that writes it creates it where that task runs. Every rank
 * must create the same data in the same order (the order names it across
 * ranks); owner_rank is the rank that holds it at the end. rows and cols
 * must be positive: a tile of no elements is refused (NULL, named), here
 * and by weft_data_register; a block-sparse program leaves such a block
 * out instead. On a device a tile takes whole units of 256 bytes. */
WEFT_API weft_data_t *weft_data_new(weft_context_t *ctx, weft_dtype_t type, int rows, int cols,
                                    int owner_rank);

/* The initial contents of a NEW data (weft_data_new) for a task that reads
 * it before any task wrote it, so that an accumulator (WEFT_RW) needs no
 * first-write special case. init writes rows x cols elements at ptr
 * (column-major, leading dimension ld in elements); it runs on the host,
 * on the main thread, when a task that reads the data first is inserted
 * on the rank that runs it (and by a read acquire on the owner); those
 * contents are then staged to a device like any input. */
typedef void (*weft_data_init_fn)(void *ptr, int64_t ld, int rows, int cols, void *arg);

/* Gives NEW data d the initial contents of init (called with arg), or
 * zero bytes when init is NULL: reading d before its first write is then
 * allowed (it is refused otherwise). Every rank makes the same call
 * (compared with the data creations at the next agreement: each rank that
 * reads d first makes the contents itself, no transfer: each calls its
 * own init, so pass the same on every rank; weft compares only whether it
 * is NULL). Before the first task that uses d; a later call before that
 * task replaces the earlier one's init. WEFT_ERR_INVALID after logging for a data that is not
 * NEW or was written already, or that a taskpool not waited for uses. On
 * several ranks, until a task writes d, a write outside tasks on its owner
 * (weft_data_host_ptr, a host acquire with WEFT_W, a device registration
 * with current contents) is refused: the other ranks would never see it;
 * unless d is reducible (weft_data_set_reduction), whose reductions start
 * from the owner's contents. */
WEFT_API WEFT_NODISCARD int weft_data_set_init(weft_data_t *d, weft_data_init_fn init, void *arg);

/* Host memory that the user owns (MANAGED), held by rank owner_rank:
 * every rank makes the same call (the order of data creations names the
 * data across ranks, as for weft_data_new), and a task that writes the
 * data runs on owner_rank only (unless placed otherwise). ptr and ld are
 * read on the owner only (other ranks may pass NULL and 0; their handle
 * has no memory, as a matrix's tiles of other ranks): weft reads and
 * writes the owner's memory in place, never frees it. ld is the leading
 * dimension in elements. Between taskpools the memory holds the data's
 * newest version (written back by weft_taskpool_wait) and the user may
 * read and write it without any call: each wait leaves device copies of
 * MANAGED data stale, so the next task on a device stages the data in
 * again (the cost of this default; see weft_data_set_keep_device_copies
 * to keep them). When that write-back fails, the wait returns its error
 * naming the data, the newest version stays on its device, and the
 * write-back is tried again at each later wait, acquire, release and at
 * weft_fini until one succeeds (docs/SEMANTICS.md section 3); meanwhile
 * the memory is stale and what the user writes there is overwritten. The
 * release (or the wait of a taskpool using the data when it was released)
 * is the last try: the memory is the user's after it, and a failure there
 * names the version lost (weft_fini returns the error).
 * The owner's memory (cols columns of rows elements, ld apart) must not
 * share a byte with that of a live registration or wrapped matrix of this
 * context on this rank (the columns' bytes count, not the span from first
 * to last: the tiles of one column-major array share none, and are
 * accepted; another context of the process is not looked at: keep two
 * contexts' memory apart): such a registration is refused (NULL) after an error naming both
 * data (docs/SEMANTICS.md 1). A registration on some ranks only is found at the
 * next weft_taskpool_wait or weft_fini, which log on every rank each
 * rank's creation at the first difference ("data K: ..., owner rank R")
 * and return WEFT_ERR_MISMATCH. NULL after logging for an owner_rank that
 * is not a rank, a NULL pointer or ld < rows on the owner, a bad type, or
 * rows or cols below 1; a refusal on the owner only (its pointer) is named on every
 * rank at that next wait or weft_fini, as a registration on some ranks.
 * The size is not checked against the memory behind ptr. A tile whose one
 * column (rows x element bytes) passes 2 GiB, an MPI count, is accepted
 * but cannot move between ranks: each such move fails its task, named
 * ("a column of it is N bytes"); tiles of several columns move in pieces
 * of whole columns at any size. */
WEFT_API weft_data_t *weft_data_register(weft_context_t *ctx, weft_dtype_t type, void *ptr,
                                         int rows, int cols, int64_t ld, int owner_rank);

/* Releases the handle once the tasks that use it are done (deferred).
 * Runtime-owned copies are freed; MANAGED memory is left to the user, who
 * keeps it alive until the wait of the last taskpool whose tasks use the
 * data (they still read and write it; memory freed before that wait is
 * used after its free, and the process may crash). The handle is dead at
 * once: a later call with it (a second release, an
 * insertion) is refused with an error naming it as released. Registered
 * memory (weft_data_register, weft_data_register_device) may be
 * registered again at once when no task of this rank uses the data, else
 * after the wait of the taskpool whose tasks do. A data still acquired by
 * the host (weft_data_host_acquire) is released too, with a warning: the
 * acquire's pointer is dead with it. A matrix's tile is
 * refused (weft_matrix_free releases the tiles). A refused call (NULL, a
 * released handle, a tile) has no status to return: it is logged and
 * weft_fini returns WEFT_ERR_INVALID, as for weft_taskpool_free and
 * weft_matrix_free. */
WEFT_API void weft_data_release(weft_data_t *data);

/* The rank that owns the data (its owner_rank, or for a matrix tile the
 * rank its distribution gives it: weft_matrix_tile_rank), the same on
 * every rank; a task that writes it runs there unless placed otherwise.
 * Any thread, bodies included. WEFT_ERR_INVALID (negative) after logging
 * for NULL or a handle that is no live weft_data_t. */
WEFT_API int weft_data_owner(const weft_data_t *data);

/* The number weft's messages name the data by ("data K"), the same on
 * every rank: given at creation in increasing order from 0, a matrix's
 * tiles consecutive numbers column by column (data weft makes for itself,
 * a reduction's partial results, take numbers too: ask rather than
 * count). Any thread. WEFT_ERR_INVALID (negative) after logging for NULL
 * or a handle that is no live weft_data_t. */
WEFT_API long long weft_data_key(const weft_data_t *data);

/* An acquire for read-write, released at once: brings the newest version
 * into host memory, makes every device copy stale (what the user writes
 * through the pointer before the next taskpool is what its tasks read),
 * and returns the host memory (its leading dimension in *ld when ld is
 * not NULL). NULL without a message for a data another rank owns (a probe
 * for this rank's tiles); NULL after logging when the data is used by a
 * taskpool not yet waited for (on every rank, owner or not: the message
 * names the data and the taskpool), when it is acquired (weft_data_host_acquire), or when a NEW
 * data was never written and has no initial contents. A NEW data with
 * initial contents (weft_data_set_init) that no task wrote yet: on one rank
 * the owner makes them and returns them; on several ranks NULL after
 * logging (this call may write the data, and the other ranks, which make
 * the contents themselves, would never see the write; read it with
 * weft_data_host_acquire and WEFT_R). To read without invalidating the
 * device copies, use weft_data_host_acquire with WEFT_R. The pointer
 * shows the data as it was at the call: once a task writes the data, read
 * it through a new call after that task's wait (the old pointer may show
 * the bytes before, the newest version living on a device). For a NEW
 * data it is weft's own memory, freed or given to another data after the
 * release: not to be registered (refused, docs/SEMANTICS.md section 1). */
WEFT_API void *weft_data_host_ptr(weft_data_t *data, int64_t *ld);

/* Acquire and release of a data's host memory between taskpools (as
 * StarPU's starpu_data_acquire/release), mode WEFT_R, WEFT_W or WEFT_RW:
 * the acquire brings the newest version into host memory (not for WEFT_W,
 * whose caller overwrites the whole tile; memory is allocated if the host
 * has none), sets *ptr (and *ld when not NULL) and holds the data for the
 * host: inserting a task that uses it fails until the release. The release
 * of a WEFT_W or WEFT_RW acquire makes the host copy the only current one
 * (device copies stale: the next task on a device stages it in again); of
 * a WEFT_R acquire it changes nothing, and the device copies stay in use.
 * The acquire returns WEFT_ERR_INVALID after logging for a bad mode or a
 * NULL ptr, a data used by a taskpool not waited for (naming it), a data
 * acquired already, a data this rank does not hold (a tile owned by
 * another rank: acquire it there) or, to read, a NEW data never written;
 * a transfer's status when the newest version could not come home. The
 * release returns WEFT_ERR_INVALID for a data that is not acquired. */
WEFT_API WEFT_NODISCARD int weft_data_host_acquire(weft_data_t *data, int mode, void **ptr,
                                                   int64_t *ld);
WEFT_API WEFT_NODISCARD int weft_data_host_release(weft_data_t *data);

#endif /* WEFT_WEFT_DATA_H */
