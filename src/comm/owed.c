/* Control messages owed to peers (comm_internal.h, weft_comm__isend_ctrl_
 * owed): a post that failed is tried again, later and later, and every
 * control message to the same peer waits behind it, so that MPI delivers
 * them in the order the protocol sent them (a DONE before the activation
 * of the version the consumer writes next). */
#include <stdio.h>

#include "comm/comm_internal.h"
#include "util/clock.h"
#include "util/ending.h"
#include "util/log.h"

#define OWED_FIRST_NS 100000LL        /* the first delay: 100 us */
#define OWED_MAX_NS 100000000LL       /* the delays stop doubling at 100 ms */

int weft_comm__owed_to(const weft_comm_t *c, int dest)
{
    for (size_t i = 0; i < c->owed.n; i++)
        if (((const weft_comm_owed_t *)weft_vec_at((weft_vec_t *)&c->owed, i))->dest == dest)
            return 1;
    return 0;
}

int weft_comm__owe(weft_comm_t *c, const void *buf, int bytes, int dest, const char *what,
                   weft_comm_req_cb_t on, int tried)
{
    int64_t now = weft_clock_ns();
    weft_comm_owed_t o = {.buf = buf,
                          .bytes = bytes,
                          .dest = dest,
                          .tries = tried,
                          .cb = on,
                          .first_ns = now, /* reset at the first try when queued */
                          .next_ns = tried ? now + OWED_FIRST_NS : now,
                          .wait_ns = OWED_FIRST_NS};
    snprintf(o.what, sizeof o.what, "%s", what);
    return weft_vec_push(&c->owed, &o);
}

int weft_comm__isend_ctrl_owed(weft_comm_t *c, const void *buf, int bytes, int dest,
                               const char *what, weft_comm_cb_fn cb, void *a, void *b)
{
    weft_comm_req_cb_t on = {.fn = cb, .a = a, .b = b};
    if (weft_comm__owed_to(c, dest)) return weft_comm__owe(c, buf, bytes, dest, what, on, 0);
    if (weft_comm__post_send(c, buf, bytes, MPI_BYTE, dest, WEFT_COMM_CTRL_TAG, on,
                             WEFT_LOG_WARN) == WEFT_SUCCESS)
        return WEFT_SUCCESS;
    return weft_comm__owe(c, buf, bytes, dest, what, on, 1);
}

/* The peer waits for o and MPI cannot take it: no rank could end. */
static void owed_give_up(weft_comm_t *c, const weft_comm_owed_t *o)
{
    weft_error("comm: could not send %s to rank %d in %d tries over %lld s: that rank waits "
               "for it and cannot be told otherwise: ending the run",
               o->what, o->dest, o->tries, (long long)(c->cfg.give_up_ns / 1000000000LL));
    fflush(stderr);
    weft_abort_job(c->cfg.comm, 1);
}

/* Whether an entry before i is owed to the same peer: i waits for it. */
static int behind_another(weft_comm_t *c, size_t i)
{
    int dest = ((weft_comm_owed_t *)weft_vec_at(&c->owed, i))->dest;
    for (size_t j = 0; j < i; j++)
        if (((weft_comm_owed_t *)weft_vec_at(&c->owed, j))->dest == dest) return 1;
    return 0;
}

int weft_comm__owed_progress(weft_comm_t *c)
{
    int went = 0;
    int64_t now = c->owed.n ? weft_clock_ns() : 0;
    for (size_t i = 0; i < c->owed.n;) {
        weft_comm_owed_t *o = weft_vec_at(&c->owed, i);
        if (now < o->next_ns || behind_another(c, i)) {
            i++;
            continue;
        }
        /* The first failure of each message is a warning, the tries after
         * it are told at info (one queued behind another tries first here,
         * and its comm_give_up_s counts from now: the one before it may
         * have taken most of its own, and this one then ended the job at
         * its first refusal, "in 1 tries over 10 s"). */
        if (o->tries == 0) o->first_ns = now;
        int level = o->tries++ == 0 ? WEFT_LOG_WARN : WEFT_LOG_INFO;
        if (weft_comm__post_send(c, o->buf, o->bytes, MPI_BYTE, o->dest, WEFT_COMM_CTRL_TAG, o->cb,
                                 level) == WEFT_SUCCESS) {
            if (o->tries > 1)
                weft_warn("comm: %s went to rank %d at its try %d", o->what, o->dest, o->tries);
            weft_vec_remove(&c->owed, i); /* in order: the next to the peer is now first */
            went = 1;
            continue;
        }
        if (now - o->first_ns >= c->cfg.give_up_ns) owed_give_up(c, o);
        o->wait_ns = 2 * o->wait_ns < OWED_MAX_NS ? 2 * o->wait_ns : OWED_MAX_NS;
        o->next_ns = now + o->wait_ns;
        i++;
    }
    return went;
}
