/* How long the engine naps while a worker computes on its core.
 *
 * Every wakeup preempts the worker in the middle of its kernel: on this
 * project's 2-core VMs a wakeup cost the worker tens of us, and weft-gemm
 * on 2 ranks x 1 core ran 10% faster with 4 ms naps than with 0.5 ms. So
 * a nap that ran out while the rank's threads kept its cores (they ran
 * >= 90% of it) doubles the next, up to max_ns, and one in which they ran
 * less makes the next one base_ns again (a body that ended may have left
 * the worker idle, waiting for a message a long nap would hold up).
 *
 * When other processes take the cores, long naps lost the rank its share
 * of them (weft-gemm 58 GFLOPS with 0.5 ms naps beside two busy loops, 25
 * with 2 or 4 ms): if over a window of naps in which no body ended (the
 * worker computed throughout, so the time it did not run was taken from
 * it) the rank ran less than 90% of the time, naps stay at base_ns for a
 * second, after which they grow again if the cores are free by then. One
 * short nap alone does not hold them there: a daemon's blip of a few ms
 * every half second did, and kept weft-gemm on 2 ranks x 1 core in
 * 0.5 ms naps the whole run (82 GFLOPS against 91 without naps). */
#include "comm/comm_internal.h"

/* What a nap's two context switches may cost the rank's threads without
 * another process on the core (up to ~200 us a nap on this project's
 * VMs): not taken for a sign of one. On average it is far less (under
 * 50 us in 99% of the naps of weft-gemm), so a window allows an eighth. */
#define NAP_SWITCH_NS 300000

/* The span of naps over which the rank's share of its cores is judged: a
 * daemon's blip is a few percent of it, a competing process tens. */
#define NAP_WINDOW_NS 50000000LL

#define HOLD_SHORT_NS 1000000000LL

void weft_comm__nap_ran_out(weft_comm_naps_t *n, int64_t now, int64_t wall, int64_t ran,
                            int body_ended)
{
    if (!body_ended) {
        n->win_wall += wall;
        n->win_ran += ran;
        n->win_n++;
    }
    if (n->win_wall >= NAP_WINDOW_NS) {
        int64_t lost = n->win_wall - n->win_ran;
        if (lost > n->win_wall / 10 + n->win_n * (NAP_SWITCH_NS / 8))
            n->short_until = now + HOLD_SHORT_NS;
        n->win_wall = n->win_ran = 0;
        n->win_n = 0;
    }
    long nap = n->next_ns;
    if (wall - ran > wall / 10 + NAP_SWITCH_NS || now < n->short_until) {
        n->next_ns = n->base_ns;
        return;
    }
    n->next_ns = 2 * nap < n->max_ns ? 2 * nap : n->max_ns;
}
