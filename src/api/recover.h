/* The newest good version of each data whose final version a failure
 * lost, brought to its owner at the wait (recover.c). */
#ifndef WEFT_API_RECOVER_H
#define WEFT_API_RECOVER_H

#include "stf/taskpool.h"

/* After tp's tasks all ended and before the copies away from owners are
 * reclaimed; collective over the context's ranks (one MPI_Allreduce when
 * no task failed or was cancelled anywhere). On one rank it only says
 * which versions a failed body may have overwritten (a NEW data's then
 * has none left), and returns WEFT_SUCCESS. Main thread. */
int weft_recover_good_versions(weft_taskpool_t *tp);

#endif
