/* What the wait does for a taskpool that received a graph (ptg/). */
#ifndef WEFT_PTG_PTGWAIT_H
#define WEFT_PTG_PTGWAIT_H

#include "stf/taskpool.h"

/* Every task of tp is done: the data it touched take back the version
 * numbers shared by all ranks (main thread, before the tracking reset). */
void weft_ptg_settle(weft_taskpool_t *tp);

#endif
