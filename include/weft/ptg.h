/* Parameterized task graphs (docs/PTG.md): a taskpool described by task
 * classes over index spaces instead of a sequence of insertions. Each
 * rank enumerates the index spaces, keeps the tasks it runs and learns
 * from the flow functions which versions come from which task: it never
 * builds the tasks of other ranks, and the transfers follow from the
 * producers and consumers named, not from a walk of the whole graph.
 *
 * Below insertion everything is shared with weft_insert_task: the task
 * classes and their bodies, data, devices, transports, traces, the wait. */
#ifndef WEFT_PTG_H
#define WEFT_PTG_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PTG_MAX_DIMS 4

/* One flow of one task: class `cls` (its index in weft_ptg_t.classes) at
 * indices idx[0..ndims-1] (the rest ignored), data argument `flow` (the
 * position among the data arguments that the class's args function
 * gives, from 0). */
typedef struct weft_ptg_ref {
    int cls;
    int flow;
    int idx[WEFT_PTG_MAX_DIMS];
} weft_ptg_ref_t;

/* Every function is pure: the same answer for the same indices on every
 * rank, at any time (weft calls them in any order, any number of times,
 * from the inserting thread). arg is weft_ptg_t.arg. */
typedef struct weft_ptg_class {
    const weft_task_class_t *task; /* name and bodies, as for weft_insert_task */
    int ndims;                     /* 1 .. WEFT_PTG_MAX_DIMS */
    /* Bounds of index `dim` given idx[0 .. dim-1]: *lo .. *hi inclusive,
     * empty when *hi < *lo. */
    void (*range)(const int *idx, int dim, int *lo, int *hi, const void *arg);
    /* The rank that runs the task; it must be the rank its arguments place
     * it on (as weft_insert_task would: WEFT_ON_RANK, else the owner of the
     * WEFT_AFFINITY data, else of the first written data). */
    int (*rank)(const int *idx, const void *arg);
    /* The task's arguments in weft_insert_task_array's form (modes and
     * data, values, WEFT_PRIORITY, WEFT_DEVICE_HINT, WEFT_ON_RANK); returns
     * how many it wrote (at most max). Called for this rank's tasks and for
     * the tasks of other ranks at the other end of their transfers, any
     * number of times. weft reads a value's bytes (weft_arg_value) after
     * args returns, before it calls args again: they must outlive the call
     * (a static or _Thread_local buffer, or memory behind arg), not be a
     * local variable of args, whose bytes are gone by then (the tasks got
     * whatever the stack held next, and the graph ran without a word). */
    int (*args)(const int *idx, weft_arg_t *args, int max, const void *arg);
    /* Where the version that data flow `flow` reads (or replaces, when it
     * only writes) comes from, in *from (class, indices, flow): returns 1
     * when that task wrote it; 2 when that task only read it and passes it
     * on from its rank (a forwarder: how a version from before the graph,
     * which only the data's owner holds, reaches other ranks, as PaRSEC's
     * READ tasks do); 0 for the version the data had when the graph began
     * (*from unused). */
    int (*producer)(const int *idx, int flow, weft_ptg_ref_t *from, const void *arg);
    /* For a written flow: every task that reads or replaces the version it
     * writes; for a read flow: the tasks it passes its version on to (none
     * for a plain read). Each is given with the flow by which it does, and
     * its producer function must name this task and flow back (with 1, or
     * 2 for a read flow). Writes at most max of them into to[] and returns
     * how many there are (weft calls again with room for all when that is
     * more than max). 0 for a written flow: a final version. */
    int (*consumers)(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg);
    /* Optional (NULL: each rank walks the whole space): the indices of
     * dimension `dim` (given idx[0 .. dim-1]) where tasks of `rank` can be,
     * as *lo, *lo + *step, ... up to *hi (*step >= 1; less is taken as 1),
     * inside range's bounds. It may give more than the rank's tasks (rank
     * decides) but never fewer: weft checks it for every task of another
     * rank that a local task names. With it a rank's build costs what its
     * own tasks cost, not the size of the graph. */
    void (*local_range)(const int *idx, int dim, int rank, int *lo, int *hi, int *step,
                        const void *arg);
} weft_ptg_class_t;

typedef struct weft_ptg {
    const weft_ptg_class_t *classes;
    int nclasses;
    const void *arg; /* handed to every function */
} weft_ptg_t;

/* Builds this rank's tasks of graph g in tp and releases them. Collective:
 * every rank calls it with the same graph at the same point of its
 * sequence of calls. It first compares tp's insertions since its last wait
 * and the data creations across ranks: one refused on some ranks only is
 * named on every rank with its reason (WEFT_ERR_MISMATCH). A graph takes
 * a wave of tp of its own: tp must have no task inserted since its last
 * wait (WEFT_ERR_INVALID otherwise), and insertion into tp is refused
 * after the graph until the next wait. The rules a graph must keep
 * (docs/PTG.md) are checked on the rank that can see each: a producer and
 * consumer that do not name each other, an index outside its class's
 * space, a rank function that disagrees with the arguments, tasks of a
 * class made by no rank (a local_range that leaves out its rank's task)
 * or by two (a rank function that differs between ranks; both checked by
 * counts for the classes within the graph's first 65536 index ranges,
 * docs/PTG.md), a version
 * read away from the data's owner before any task of the graph wrote it,
 * a final version left away from its owner, two tasks replacing the same
 * version, a transfer whose ends see it differently (a rank or args
 * function that answers differently on different ranks: the tasks' ranks
 * or the data, both views named on every rank), ranks whose classes differ (names, ndims, the
 * ranges of their index spaces: the first difference is named on every rank), a reference to a flow
 * of a task that repeats the data of an earlier flow (a task naming one data in several flows uses
 * one copy with the union of their modes, as insertion does; it is named by the first of those
 * flows). Any of
 * these on any rank makes every rank log it and return WEFT_ERR_INVALID with no task
 * of g released (the taskpool stays usable). WEFT_ERR_NOMEM alike when a
 * rank ran out of memory. The graph's data are busy until tp's wait:
 * another taskpool's insertion or a host acquire of one is refused (as for
 * a data of inserted tasks), and a graph over a data another taskpool not
 * waited for uses is refused. Ranks at different points (one in this call,
 * another in a wait) are told on every rank, and this call, the waits and
 * weft_fini return WEFT_ERR_MISMATCH. Wait for the tasks with
 * weft_taskpool_wait. */
WEFT_API WEFT_NODISCARD int weft_ptg_insert(weft_taskpool_t *tp, const weft_ptg_t *g);

#ifdef __cplusplus
}
#endif

#endif
