/* Clean-ups for an end without weft_fini (ending.h). */
#include "util/ending.h"

#include <stdatomic.h>

#define ENDING_MAX 8

static _Atomic(void (*)(void)) hooks[ENDING_MAX];

void weft_ending_add(void (*fn)(void))
{
    for (int i = 0; i < ENDING_MAX; i++) {
        void (*none)(void) = NULL;
        if (atomic_load(&hooks[i]) == fn) return;
        if (atomic_compare_exchange_strong(&hooks[i], &none, fn)) return;
        if (none == fn) return; /* another thread added it meanwhile */
    }
}

void weft_ending_run(void)
{
    for (int i = 0; i < ENDING_MAX; i++) {
        void (*fn)(void) = atomic_load(&hooks[i]);
        if (fn) fn();
    }
}

void weft_abort_job(MPI_Comm comm, int code)
{
    weft_ending_run();
    MPI_Abort(comm, code);
}
