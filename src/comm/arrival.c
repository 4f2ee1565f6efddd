/* A version that a graph brings to this rank along several paths
 * (comm.h): one RECV lands it, the others wait for that and meet their
 * senders without bytes. Each reader of the graph waits for the RECV of
 * the path it names, so no reader waits for a path it did not name (the
 * graph's dependencies alone: choosing one RECV to wait for at build time
 * could pick one whose sender waits for a reader here, a hang across
 * ranks no local check sees). Engine thread, but for the joins and the
 * leave of a dropped graph, made before any member reaches the engine. */
#include <stdlib.h>

#include "comm/comm_internal.h"

enum { ARRIVAL_OPEN, ARRIVAL_LANDING, ARRIVAL_LANDED };

struct weft_comm_arrival {
    atomic_int refs;             /* member RECVs not ended */
    int state;                   /* ARRIVAL_* */
    const weft_task_t *lander;   /* the member landing the bytes */
    weft_comm_pending_t *parked; /* members (task and activation) waiting for the landing */
};

int weft_comm_arrival_join(weft_comm_action_t *act, weft_comm_action_t *other)
{
    if (!other->arrival) {
        weft_comm_arrival_t *a = calloc(1, sizeof *a);
        if (!a) return WEFT_ERR_NOMEM;
        atomic_init(&a->refs, 1);
        other->arrival = a;
    }
    act->arrival = other->arrival;
    atomic_fetch_add(&act->arrival->refs, 1);
    return WEFT_SUCCESS;
}

static void arrival_unref(weft_comm_arrival_t *a)
{
    if (atomic_fetch_sub(&a->refs, 1) == 1) free(a);
}

void weft_comm_arrival_leave(weft_comm_action_t *act)
{
    if (!act->arrival) return;
    arrival_unref(act->arrival);
    act->arrival = NULL;
}

int weft_comm__arrival_admit(weft_comm_t *c, weft_comm_pending_t *in)
{
    weft_comm_action_t *act = in->task->action;
    weft_comm_arrival_t *a = act->arrival;
    if (!a) return WEFT_ARRIVAL_LAND;
    if (a->state == ARRIVAL_LANDED) return WEFT_ARRIVAL_SKIP;
    if (a->state == ARRIVAL_LANDING && a->lander != in->task) {
        in->next = a->parked;
        a->parked = in;
        c->nparked++;
        return WEFT_ARRIVAL_PARKED;
    }
    a->state = ARRIVAL_LANDING; /* or lands again after a try put off */
    a->lander = in->task;
    return WEFT_ARRIVAL_LAND;
}

int weft_comm__arrival_landed(const weft_task_t *t)
{
    const weft_comm_action_t *act = t->action;
    return act->arrival && act->arrival->state == ARRIVAL_LANDED;
}

weft_comm_arrival_t *weft_comm__arrival_of(const weft_task_t *t, int *lander)
{
    const weft_comm_action_t *act = t->action;
    *lander = act->arrival && act->arrival->lander == t;
    return act->arrival;
}

void weft_comm__arrival_ended(weft_comm_t *c, weft_comm_arrival_t *a, int lander, int status)
{
    if (lander) {
        /* Landed, the waiting members skip; failed, the next one lands. */
        a->state = status == WEFT_SUCCESS ? ARRIVAL_LANDED : ARRIVAL_OPEN;
        a->lander = NULL;
        weft_comm_pending_t *p = a->parked;
        a->parked = NULL;
        while (p) {
            weft_comm_pending_t *next = p->next;
            c->nparked--;
            /* An engine being destroyed starts nothing more. */
            if (atomic_load(&c->stop))
                free(p);
            else
                weft_comm__start_recv(c, p);
            p = next;
        }
    }
    arrival_unref(a);
}
