/* weft_remote_reclaim at a wait frees the copies of data this rank does
 * not own, unless something still uses them: a reader, or a transfer
 * writing into the copy (docs/COHERENCY.md rules 4 and 5). The write-back
 * of an eviction of another taskpool's device copy lands in the host copy
 * marked UNDER, with no reader: the reclaim freed it while the bytes were
 * being written. Built by hand (a context of rank 1, a data of rank 0): the
 * race itself needs two taskpools on two ranks and a slow copy. */
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"
#include "context/context.h"
#include "data/data.h"
#include "stf/remote.h"
#include "stf/taskpool.h"

static int frees;
static void count_free(void *allocator, void *ptr, size_t bytes)
{
    (void)allocator;
    (void)bytes;
    frees++;
    free(ptr);
}

static void attach(weft_data_t *d, int dev)
{
    weft_data_copy_attach(d, dev, malloc(d->bytes), d->rows, WEFT_MEM_RUNTIME, count_free, NULL);
}

int main(void)
{
    static weft_context_t ctx;
    ctx.rank = 1;
    weft_data_t *d = weft_data__create(NULL, 3, WEFT_DOUBLE, 2, 2, 0);
    REQUIRE(d != NULL);
    attach(d, 0);
    attach(d, 1);
    attach(d, 2);
    weft_data_written_locked(d, 1);                 /* device 1 holds the newest */
    uint32_t v = weft_data_xfer_begin_locked(d, 0); /* being written back */
    weft_taskpool_t tp = {.ctx = &ctx};
    weft_vec_init(&tp.touched, sizeof(weft_data_t *), 1);
    REQUIRE(weft_vec_push(&tp.touched, &d) == WEFT_SUCCESS);
    weft_data_copy_reader_acquire_locked(d->copies[1]); /* the eviction's reader */
    weft_remote_reclaim(&tp);
    CHECK(d->copies[0] != NULL); /* the write-back's target stays */
    CHECK(d->copies[1] != NULL); /* read */
    CHECK(d->copies[2] == NULL && frees == 1);
    weft_data_copy_reader_release_locked(d->copies[1]);
    weft_data_xfer_end_locked(d, 0, v, 1);
    weft_remote_reclaim(&tp);
    CHECK(d->copies[0] == NULL && d->copies[1] == NULL && frees == 3);
    weft_vec_fini(&tp.touched);
    weft_data__unref(d);
    return check_report("stf_remote_reclaim");
}
