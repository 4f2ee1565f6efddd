/* weft: a distributed task-based runtime for CPU cores and GPUs.
 *
 * The public API (with the headers it includes: weft/weft_data.h, the
 * data tasks read and write; weft/weft_device.h, data on accelerators; weft/weft_matrix.h, the
 * matrices, vectors and distributions; weft/weft_stats.h; weft/weft_body.h; graphs described by
 * functions are weft/ptg.h, included on its own). Handles are opaque; every function that can fail
 * returns a weft status (0 success, negative error, see weft_strerror).
 * Unless said otherwise a function is called from the thread that called
 * the weft_init of the handle's context (the "main" thread; each context
 * has its own); task bodies run on worker or device threads
 * and may only call the weft_task_* accessors (a wait, an insertion, a
 * creation or a release made from a body is refused, and the task fails;
 * made from another thread of the application, it is refused with "CALL
 * called from a thread that did not call weft_init" or, from a thread that
 * made another context, "CALL called on a context that another thread
 * made", and its error value: docs/SEMANTICS.md section 2). The contract (user memory,
 * handles, failures) is docs/SEMANTICS.md.
 *
 * No call is async-signal-safe: a signal handler should set a flag that
 * the main thread acts on. A handler's call made while its thread is inside
 * weft_insert_task(_array), weft_taskpool_wait or weft_fini (a call that
 * would reenter weft mid-call) is refused with "CALL called while this
 * thread is inside CALL2 (from a signal handler?)".
 *
 * Handles (weft_context_t, weft_data_t, weft_matrix_t, weft_taskpool_t)
 * carry a type tag that every call taking one checks first: a handle of
 * another kind, NULL, or a released handle (one of the last 16384 given
 * back per context, 4 MiB of them at most) is refused with "argument N of
 * CALL is a weft_matrix_t, not a weft_data_t: ..." on stderr; the call
 * then returns WEFT_ERR_INVALID (int status), NULL (pointer), -1 (count or
 * index) or nothing (void: weft_fini then returns WEFT_ERR_INVALID). */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#define WEFT_NODISCARD __attribute__((warn_unused_result))
#define WEFT_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define WEFT_API
#define WEFT_NODISCARD
#define WEFT_PRINTF_LIKE(fmt, args)
#endif

/* ---- version ----------------------------------------------------------- */

/* The version of these headers; the build reads it from here (the one
 * place it is written). While the major version is 0, a minor version is
 * a new interface: the library's soname and the CMake package's version
 * check both carry it (libweft.so.0.1, find_package(weft 0.1) refuses a
 * 0.2). */
#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/* The library's own version (any pointer may be NULL), to compare with the
 * macros above when a program may meet a libweft other than the one it was
 * compiled with, and a line naming it and the modules it was built with,
 * e.g. "weft 0.1.0 (cuda, nccl, hip, emu; gpu-aware comm)". Any thread,
 * before weft_init too. */
WEFT_API const char *weft_version(int *major, int *minor, int *patch);

/* ---- status ---------------------------------------------------------- */

typedef enum weft_status {
    WEFT_SUCCESS = 0,
    WEFT_AGAIN = 1,            /* not finished yet, call again */
    WEFT_ERR_INVALID = -1,     /* a bad argument; the log names it */
    WEFT_ERR_NOMEM = -2,       /* host memory exhausted */
    WEFT_ERR_PARAM = -3,       /* unknown parameter or malformed value */
    WEFT_ERR_NODEV = -4,       /* a device was asked for and is absent */
    WEFT_ERR_DEVMEM = -5,      /* device memory exhausted, nothing evictable */
    WEFT_ERR_MPI = -6,         /* the MPI library reported an error */
    WEFT_ERR_UNSUPPORTED = -7, /* the operation does not exist on this module */
    WEFT_ERR_MISMATCH = -8,    /* ranks diverged: other tasks, creations or program points */
    WEFT_ERR_TASK = -9,        /* a task failed: its body, its device or a transfer of its data */
    WEFT_ERR_INTERNAL = -10,   /* a broken invariant inside weft, or an accelerator
                                * call (a copy, a launch) that failed without breaking
                                * its device, for a reason with no status of its own:
                                * the log names the call */
    WEFT_ERR_CANCELLED = -11,  /* a task did not run: a task it depends on failed */
    WEFT_ERR_DEVICE = -12,     /* an accelerator failed (a sticky error): its later
                                  operations fail, the versions only it held are lost;
                                  the log names it */
} weft_status_t;

/* A static, human readable description of a status. Any thread. */
WEFT_API const char *weft_strerror(int status);

/* ---- context --------------------------------------------------------- */

typedef struct weft_context weft_context_t;

/* Starts MPI if the application did not (an application that starts it
 * calls MPI_Init_thread with MPI_THREAD_MULTIPLE: weft's threads call MPI;
 * with less, weft_init fails on every rank and says so, one rank
 * included). Every rank of MPI_COMM_WORLD calls it (weft_init_comm of
 * weft/weft_mpi.h runs weft on a communicator of the application's
 * instead): its first step
 * duplicates MPI_COMM_WORLD (a collective on it: no other thread of the
 * application may be in a collective on MPI_COMM_WORLD meanwhile), the
 * next ones are collectives on the duplicate; a rank that never calls it
 * leaves the others waiting (no watchdog covers them). Reads parameters (defaults, then
 * env WEFT_<NAME>, then --weft-<name>=value or --weft-<name> value (a
 * boolean alone: on) on the command line, which are
 * removed from argv), binds and starts the workers, opens the trace file
 * and the devices. Collective: after each step the ranks agree, so when a
 * step fails on any rank (unknown parameter, malformed value, device asked
 * for and absent, trace path not writable, ...) every rank prints
 * "weft_init failed on rank R: <that rank's message>", undoes what it
 * started (MPI included, when weft started it) and returns NULL; none
 * hangs (docs/SEMANTICS.md section 4). The context belongs to the calling
 * thread: only it may make the calls on the context and its handles that
 * belong to the main thread, weft_fini included. Threads may each make
 * their own context at once; contexts pair across ranks in the order
 * their weft_init calls come (SEMANTICS "Several contexts"). Refused
 * (NULL) from a task body. */
WEFT_API weft_context_t *weft_init(int *argc, char ***argv);

/* Collective. A taskpool with tasks inserted or refused since its last
 * wait (a refusal counts: every rank then decides alike) is named in an
 * error and waited for (in creation order, on every rank; a refused
 * insertion returned its error to the program then and is not reported
 * again: waits and weft_fini return what the inserted tasks did);
 * taskpools not freed are freed (their handles become invalid). The ranks then agree that all
 * reached weft_fini: a rank still in a taskpool wait, or with different
 * data creations, is reported on every rank. Stops workers and devices,
 * writes the trace, prints the statistics and the leak report when asked,
 * finalizes MPI when weft started it and no other context of the process
 * is live (a weft_init once MPI is finalized returns NULL after an error:
 * MPI cannot start twice in a process). Returns the first error of the run
 * (a failed task, WEFT_ERR_MISMATCH when ranks disagreed, here or
 * earlier), else WEFT_ERR_INVALID for a taskpool not waited for, a
 * trace file that could not be written on some rank, or a data never
 * released that still holds runtime memory on some rank (the leak report
 * names it on that rank; leak_report=0 turns report and status off), else
 * 0. What only one rank sees at its end (its leaks, its trace file, a
 * write-back that failed again, a taskpool it alone did not wait for)
 * fails every rank's weft_fini, the others
 * logging that rank and its line. After a disagreement no
 * collective is made: fini still returns. WEFT_ERR_INVALID for ctx NULL,
 * or ended by an earlier weft_fini: the context and its handles stay
 * readable afterwards, so a later call with one is refused with an error
 * instead of reading freed memory. Refused too while the calling thread
 * is inside a weft_taskpool_wait or weft_fini (a signal handler's call).
 * docs/SEMANTICS.md sections 4 and 6. */
WEFT_API int weft_fini(weft_context_t *ctx);

WEFT_API int weft_rank(const weft_context_t *ctx);
WEFT_API int weft_nranks(const weft_context_t *ctx);
WEFT_API int weft_ncores(const weft_context_t *ctx);
/* Number of accelerators (CUDA, HIP or emu) this rank drives; 0 on CPU
 * only. They are opened by weft_init from the parameters
 * device_cuda_enabled, device_hip_enabled and device_emu_enabled (set
 * WEFT_DEVICE_EMU_ENABLED=N in the environment, or pass
 * --weft-device_emu_enabled=N, before weft_init) and numbered 1..n, CUDA
 * devices first, then HIP, then emu; 0 is the host. The log prefix
 * (weft[rank.index]), show_stats and the trace name a device by the same
 * number: cuda1, emu2. */
WEFT_API int weft_ndevices(const weft_context_t *ctx);
/* The weft_device_type_t of device `index` (0, the host: WEFT_DEV_CPU);
 * -1 for an index that is not 0..weft_ndevices(ctx). */
WEFT_API int weft_device_type(const weft_context_t *ctx, int index);
/* Parameter access by name (the names weft-info lists). Returns
 * WEFT_ERR_PARAM for an unknown name, a malformed value or a number
 * outside the parameter's range (weft-info shows it; docs/SEMANTICS.md
 * 5.4), after an error naming the parameter, the value and the range, and
 * for a NULL name, value or output. weft_param_set changes only what a
 * context reads after weft_init: debug_verbose (the process's: it sets
 * the verbosity of every context, as each weft_init does), leak_report, show_stats,
 * sched_window, sched_pending_max, progress, watchdog_s, watchdog_abort,
 * redux_lanes, check_reads, halt_wait_s; any
 * other parameter shaped what weft_init built and is refused (set it in
 * the environment or on the command line, before weft_init). */
WEFT_API WEFT_NODISCARD int weft_param_set(weft_context_t *ctx, const char *name,
                                           const char *value);
/* weft_param_get_int gives an integer, size or boolean parameter's value,
 * and an enumerated one's index in the list weft-info shows (comm_transport
 * staged is 3); a string parameter (trace, fault_inject) is refused with
 * WEFT_ERR_PARAM, named. */
WEFT_API WEFT_NODISCARD int weft_param_get_int(const weft_context_t *ctx, const char *name,
                                               int64_t *out);

/* Lists every parameter (name, value, default, help) to out after applying
 * the defaults, env WEFT_<NAME> and the --weft- options of argv (removed
 * from argv), without starting a context; out NULL only checks the input.
 * Returns WEFT_ERR_PARAM after logging on an unknown parameter or a
 * malformed value. Needs no context; any thread. */
WEFT_API int weft_params_list(int *argc, char ***argv, FILE *out);

/* ---- data: weft/weft_data.h ------------------------------------------ */

#include "weft/weft_data.h"

/* ---- data on accelerators, page-locked host memory: weft/weft_device.h */

#include "weft/weft_device.h"

/* ---- tiled matrices, vectors, distributions: weft/weft_matrix.h ------ */

#include "weft/weft_matrix.h"

/* ---- tasks ----------------------------------------------------------- */

typedef struct weft_task weft_task_t;
typedef struct weft_taskpool weft_taskpool_t;

/* Where a body runs. Values index weft_task_class_t.body. */
typedef enum weft_device_type {
    WEFT_DEV_CPU = 0,
    WEFT_DEV_CUDA = 1,
    WEFT_DEV_EMU = 2,
    WEFT_DEV_HIP = 3,
    WEFT_DEV_TYPES = 4
} weft_device_type_t;

/* A body returns 0, or a non-zero value that fails the task: the tasks that
 * depend on it are cancelled and the taskpool's wait returns WEFT_ERR_TASK
 * on every rank (docs/SEMANTICS.md section 3). */
typedef int (*weft_body_fn)(weft_task_t *task);
/* Estimated floating point operations of a task (for GFLOPS and device
 * selection); may be NULL. An estimate that is not finite, or negative
 * past a rounding (below -0.5), fails the task, logged, as a misused
 * accessor does (0: no estimate). Called once a task, on whichever
 * thread first needs it: where the task is placed on a device (at
 * insertion or release: the main thread, a worker, weft's comm thread) or
 * where it ends (a worker, or the main thread inside an insertion or a
 * wait). It may read the task's accessors only, as a body; a wait,
 * insertion, creation, host access or weft_fini from it is refused, named,
 * and fails the task (its body runs all the same when asked before). */
typedef double (*weft_flops_fn)(const weft_task_t *task);

/* A batch body enqueues the work of n tasks of one class in one go (e.g.
 * one cublasDgemmBatched for n small GEMMs): the tasks' flows have the same
 * shapes and leading dimensions (their values and priorities may differ),
 * and all share the stream, library handles and workspace of tasks[0].
 * Returns 0, or a negative value that fails every task of the batch. */
typedef int (*weft_batch_fn)(weft_task_t *const *tasks, int n);

/* weft keeps a pointer to the class (and its name) with each task: they
 * must stay alive and unchanged until the tasks inserted with them are
 * done (the taskpool's wait returned). The tag is not the function
 * weft_task_class's name: in C++ a function of a struct's name hides it
 * (-Wshadow in a consumer's build). */
typedef struct weft_task_class_s {
    const char *name;
    weft_body_fn body[WEFT_DEV_TYPES]; /* NULL: cannot run on that type */
    weft_flops_fn flops;
    /* Optional, per accelerator type: a device manager holding several
     * ready tasks of this class with the same shapes, each flow of at most
     * device_batch_elems elements, launches up to device_batch of them by
     * one call of this instead of one body each. */
    weft_batch_fn batch[WEFT_DEV_TYPES];
} weft_task_class_t;

/* Access modes and argument tags of weft_insert_task. */
enum {
    WEFT_R = 0x1,
    /* Write only: the flow's contents are unspecified when the body starts
     * (an older version on the host, anything on a device): write every
     * element, or use WEFT_RW. */
    WEFT_W = 0x2,
    WEFT_RW = 0x3,
    /* Commutative accumulation into a data with a reduction
     * (weft_data_set_reduction): the task gets a partial result of its
     * rank's to update in place (read-write), initialised by the reduction's
     * init class; tasks of different partials run at once. The partials
     * are combined into the data, on its owner, before the next task that
     * uses it otherwise and at weft_taskpool_wait. Such a task names the
     * data once, in no other mode. */
    WEFT_REDUX = 0x4,
    /* OR-ed with a mode: the task runs where this data lives. WEFT_AFFINITY,
     * WEFT_ON_RANK and WEFT_DEVICE_HINT are each given at most once a task
     * (a second one is refused: it would be ignored). */
    WEFT_AFFINITY = 0x10,
    /* Followed by (const void *ptr, size_t bytes): copied. (ptr, 0) is an
     * empty value (it keeps the values' indices), NULL with bytes refused. */
    WEFT_VALUE = 0x100,
    WEFT_PRIORITY = 0x200, /* followed by an int; higher runs first (given twice: the last) */
    /* Followed by an int: the rank that runs the task, whatever its data's
     * owners (StarPU's EXECUTE_ON_NODE); the data it reads are sent there
     * and what it writes goes home at the wait. In [0, weft_nranks). */
    WEFT_ON_RANK = 0x400,
    /* Followed by an int: the device (0 = host, 1..weft_ndevices) the task
     * runs on, on the rank that runs it, when its class has a body for that
     * device's type (emu: an emu body, else a CPU one); otherwise the usual
     * choice (home device of its WEFT_AFFINITY data, else where it should
     * finish first). A hint: it overrides the affinity data's home. */
    WEFT_DEVICE_HINT = 0x800
};

/* One argument of weft_insert_task_array: what one (mode, data) pair,
 * (WEFT_VALUE, ptr, bytes) triple or (tag, int) pair of the variadic form
 * says. Build them with the helpers below. */
typedef struct weft_arg {
    int tag;           /* a mode (| WEFT_AFFINITY), WEFT_VALUE, or a tag followed by an int */
    int i;             /* WEFT_PRIORITY, WEFT_ON_RANK, WEFT_DEVICE_HINT: the number */
    weft_data_t *data; /* a mode: the data */
    const void *ptr;   /* WEFT_VALUE: the bytes, copied at insertion */
    size_t bytes;
} weft_arg_t;

static inline weft_arg_t weft_arg_data(int mode, weft_data_t *data)
{
    weft_arg_t a = {mode, 0, data, NULL, 0};
    return a;
}
static inline weft_arg_t weft_arg_value(const void *ptr, size_t bytes)
{
    weft_arg_t a = {WEFT_VALUE, 0, NULL, ptr, bytes};
    return a;
}
/* tag: WEFT_PRIORITY, WEFT_ON_RANK or WEFT_DEVICE_HINT. */
static inline weft_arg_t weft_arg_int(int tag, int value)
{
    weft_arg_t a = {tag, value, NULL, NULL, 0};
    return a;
}

/* A task has at most WEFT_MAX_FLOWS data arguments (the same data twice
 * counts twice) and WEFT_MAX_VALUES values of WEFT_MAX_VALUE_BYTES bytes
 * at most each; more is refused at insertion, naming the limit. A task
 * that reads more tiles takes them in steps (a tree of tasks). */
#define WEFT_MAX_FLOWS 16
#define WEFT_MAX_VALUES 8
#define WEFT_MAX_VALUE_BYTES 64

/* Makes d reducible (mode WEFT_REDUX of weft_insert_task). init's body
 * sets its flow 0 (W) to the identity of the operation; combine's body
 * folds its flow 1 (R, a partial result) into its flow 0 (RW): the
 * operation must be commutative and associative (the order of the
 * partials is not fixed). Each may have CPU, emu and CUDA bodies. Each
 * rank keeps up to redux_lanes partials of d (its tasks are dealt over
 * them in turn), combines them into one, then into d on d's owner: into
 * d's contents (weft_data_set_init's, a task's, its owner's host write);
 * a NEW d with none is first set by init. Call on every rank before the
 * first WEFT_REDUX task of d; it may follow other tasks on d in a taskpool
 * not yet waited for, but not its WEFT_REDUX tasks: WEFT_ERR_INVALID (named)
 * while d has partial results pending, for a bad handle or a class without
 * a CPU body. A later call replaces init and combine. d's number of
 * lanes is redux_lanes as this call reads it (set differently on some
 * ranks: named at the next wait); a later change of the parameter applies
 * to the reductions set after it. */
WEFT_API WEFT_NODISCARD int weft_data_set_reduction(weft_data_t *d, const weft_task_class_t *init,
                                                    const weft_task_class_t *combine);

/* A taskpool: the tasks inserted into it until weft_taskpool_wait, then
 * the next ones (a taskpool is reused across waits). Every rank creates
 * the same taskpools in the same order. name (NULL: "taskpool"; 63
 * characters kept) names it in messages and traces. NULL after logging
 * for a bad context, a call off the main thread, or no host memory. */
WEFT_API weft_taskpool_t *weft_taskpool_new(weft_context_t *ctx, const char *name);

/* Inserts one task: a list of (mode, weft_data_t *) pairs, (WEFT_VALUE, ptr,
 * bytes) triples and (WEFT_PRIORITY, int), (WEFT_ON_RANK, int) and
 * (WEFT_DEVICE_HINT, int) pairs, ended by 0. Every rank
 * inserts the same sequence. Dependencies (read after write, write after
 * read, write after write) are inferred from the modes in insertion order.
 * WEFT_ERR_INVALID after logging a line that names the class ("insert
 * CLASS: ...", and for a bad argument its position N, counting the pairs
 * and triples after the class from 1: "insert CLASS: argument N: ..." or
 * "argument N of insert CLASS is ..."; a bad class is "argument 2 of
 * weft_insert_task") for a data argument that
 * is not a live weft_data_t (e.g. a weft_matrix_t: pass weft_tile(A, i,
 * j)), a data acquired by the host, a data in another taskpool not waited
 * for (docs/SEMANTICS.md 1), a NEW data read before any write (without
 * weft_data_set_init), a class with no body, an unknown tag, too many
 * flows or values, a WEFT_ON_RANK that is not a rank, a placement given
 * twice, or a WEFT_DEVICE_HINT outside 0..weft_ndevices (every rank checks
 * the same arguments, so every rank refuses the same call, except for what
 * one rank alone sees: a data its host acquired, a hint that some ranks'
 * device counts allow: those ranks insert the task, the others refuse it,
 * and the wait names the refusal on every rank and returns
 * WEFT_ERR_MISMATCH); nothing is inserted then. The rank a task runs on is compared across
 * ranks at the wait (section 4 of docs/SEMANTICS.md), so ranks given different WEFT_ON_RANK values
 * for one task are told, not left waiting. WEFT_ERR_MISMATCH once the
 * ranks were found apart, WEFT_ERR_MPI once MPI was finalized or failed a
 * collective (said once a taskpool; nothing is inserted). A
 * data given twice to one task is one copy: a WEFT_R flow of a data the
 * task also writes reads what the body wrote through the other flow. */
WEFT_API WEFT_NODISCARD int weft_insert_task(weft_taskpool_t *tp, const weft_task_class_t *cls,
                                             ...);

/* The same task given as an array of nargs arguments (no 0 at the end), for
 * generated code and a number of flows known at run time: args[k] is
 * argument k + 1 of the variadic form, and the two forms share the parsing
 * of each argument and the insertion, so they check and insert alike (the
 * variadic form reads 64 arguments at most, each pair or triple counting
 * as one).
 * Also WEFT_ERR_INVALID after logging for nargs < 0, or args NULL with
 * nargs > 0. */
WEFT_API WEFT_NODISCARD int weft_insert_task_array(weft_taskpool_t *tp,
                                                   const weft_task_class_t *cls,
                                                   const weft_arg_t *args, int nargs);

/* Blocks until every task inserted in tp has run (or was cancelled) and
 * every final version is back on its owner. Collective: it starts with the
 * agreement of the ranks (docs/SEMANTICS.md section 4); when they are at
 * different points (another taskpool's wait, weft_fini) or inserted
 * different tasks or created different data (class, data, modes, shapes,
 * owners, grid), every rank logs where each rank is or the first divergent
 * entry, and returns WEFT_ERR_MISMATCH without waiting for the tasks (they
 * may never run): no body starts on the rank from then on, and those
 * running have returned when the wait does (10 s at most, said; kernels a
 * device body queued may still run); every later wait and insertion
 * then returns WEFT_ERR_MISMATCH at once (call weft_fini).
 * A task that failed cancels the tasks that depend on it, on every rank;
 * every rank's wait then logs one line naming the failed task and returns
 * WEFT_ERR_TASK (section 3). A write-back of a final version into user
 * memory that fails (this taskpool's, or one pending from an earlier wait)
 * returns its status on every rank, the line naming the data (section 3).
 * A copy still read at the end (the taskpool-end leak report, on with
 * leak_report) is a broken invariant of weft: every rank's wait logs the
 * rank that found it and returns WEFT_ERR_INTERNAL. With watchdog_s set, a stalled wait says what
 * it waits for (section 6). WEFT_ERR_INVALID for tp NULL. The taskpool (and
 * others of the context) can take new tasks afterwards, unless the ranks
 * were found apart: each wait returns its own taskpool's outcome. */
WEFT_API WEFT_NODISCARD int weft_taskpool_wait(weft_taskpool_t *tp);
/* Frees tp. Tasks inserted (or refused) since its last wait are first
 * waited for, after an error that names the taskpool (weft_fini then returns
 * WEFT_ERR_INVALID). Collective in that case. A taskpool whose wait
 * returned WEFT_ERR_MISMATCH is released by weft_fini instead (its tasks
 * may still be held). */
WEFT_API void weft_taskpool_free(weft_taskpool_t *tp);

/* Tasks run by this rank in tp so far. */
WEFT_API int64_t weft_taskpool_ntasks_run(const weft_taskpool_t *tp);
/* GFLOPS of this rank over the last wait of tp: the flops estimates
 * (task class flops functions) of its tasks divided by the time from the
 * first insertion after the previous wait to the end of the last one. */
WEFT_API double weft_taskpool_gflops(const weft_taskpool_t *tp);

/* ---- statistics: weft/weft_stats.h ------------------------------------ */

#include "weft/weft_stats.h"

/* ---- inside a task body: weft/weft_body.h ---------------------------- */

#include "weft/weft_body.h"

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_H */
