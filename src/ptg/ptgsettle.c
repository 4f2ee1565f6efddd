/* After the wait of a taskpool with a graph: the data it touched go back
 * to the version numbers every rank agrees on (docs/PTG.md). A graph
 * numbers versions per rank (a received one is the receiver's next), and
 * only the ranks that touched a data saw them; sequential insertion after
 * it numbers versions alike on every rank from net_version, which a graph
 * leaves alone. So the copy that holds the newest version here takes
 * net_version's number, and so does the data. */
#include "ptg/ptgwait.h"

#include "data/data.h"

void weft_ptg_settle(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_data_lock(d);
        for (int dev = 0; dev < WEFT_MAX_DEVICES; dev++) {
            weft_data_copy_t *c = d->copies[dev];
            if (c && c->state != WEFT_COPY_INVALID && c->version == d->version)
                c->version = d->net_version;
        }
        d->version = d->net_version;
        weft_data_unlock(d);
    }
}
