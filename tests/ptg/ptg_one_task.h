/* A graph of one task (index space {0}, on rank 0) whose one flow writes
 * ptg_one_data, with no producer and no consumer: what tests of the rules
 * around a graph (a graph after a refused insertion, a graph beside a
 * busy taskpool) insert. The test sets ptg_one_data before the graph and
 * names its task class in PTG_ONE_CLASS. Header-only, for tests. */
#ifndef WEFT_TESTS_PTG_ONE_TASK_H
#define WEFT_TESTS_PTG_ONE_TASK_H

#include <weft/ptg.h>
#include <weft/weft.h>

static weft_data_t *ptg_one_data;

static void ptg_one_range(const int *idx, int dim, int *lo, int *hi, const void *arg)
{
    (void)idx, (void)dim, (void)arg;
    *lo = *hi = 0;
}

static int ptg_one_rank(const int *idx, const void *arg)
{
    (void)idx, (void)arg;
    return 0;
}

static int ptg_one_args(const int *idx, weft_arg_t *a, int max, const void *arg)
{
    (void)idx, (void)max, (void)arg;
    a[0] = weft_arg_data(WEFT_W | WEFT_AFFINITY, ptg_one_data);
    return 1;
}

static int ptg_one_producer(const int *idx, int flow, weft_ptg_ref_t *p, const void *arg)
{
    (void)idx, (void)flow, (void)p, (void)arg;
    return 0;
}

static int ptg_one_consumers(const int *idx, int flow, weft_ptg_ref_t *to, int max, const void *arg)
{
    (void)idx, (void)flow, (void)to, (void)max, (void)arg;
    return 0;
}

/* The class of that graph, for task class tc (a weft_task_class_t). */
#define PTG_ONE_CLASS(tc)                                                                          \
    {                                                                                              \
        &(tc), 1, ptg_one_range, ptg_one_rank, ptg_one_args, ptg_one_producer, ptg_one_consumers,  \
            NULL                                                                                   \
    }

#endif
