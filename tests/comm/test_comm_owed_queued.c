/* A control message queued behind another owed to the same peer gets its
 * own comm_give_up_s, counted from its own first try (internal, owed.c).
 *
 * One process, its messages to itself over MPI_COMM_SELF, comm_give_up_s
 * 1 s. fault_inject fails the first post of A, which becomes owed; B,
 * sent next to the same peer, queues behind A without a post. The engine
 * then gets no turn for longer than the bound (in the field, A's own
 * refusals spread over most of it), and at its next turn A goes and B's
 * first post is refused (comm_post:3). B was queued more than 1 s ago but
 * tried once: it must be tried again, not end the job. It ended the job
 * there, saying "could not send message B to rank 0 in 1 tries over 1 s",
 * while its bound counted from its queueing. Both then arrive, in order. */
#include <mpi.h>
#include <time.h>

#include "../check.h"
#include "comm/comm_internal.h"
#include "util/clock.h"
#include "util/fault.h"

#define GIVE_UP_NS 1000000000LL

static void nap_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0) continue;
}

/* Never called: the test completes the engine's requests itself. */
static void sent(weft_comm_t *c, void *a, void *b) { (void)c, (void)a, (void)b; }

/* The engine's turns on the owed list until it is empty (bounded). */
static void drain(weft_comm_t *c)
{
    for (int turn = 0; turn < 1000 && c->owed.n > 0; turn++) {
        weft_comm__owed_progress(c);
        if (c->owed.n > 0) nap_ns(1000000);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    weft_comm_t c = {0};
    c.cfg.comm = MPI_COMM_SELF;
    c.cfg.give_up_ns = GIVE_UP_NS;
    weft_vec_init(&c.reqs, sizeof(MPI_Request), 8);
    weft_vec_init(&c.cbs, sizeof(weft_comm_req_cb_t), 8);
    weft_vec_init(&c.idx, sizeof(int), 8);
    weft_vec_init(&c.owed, sizeof(weft_comm_owed_t), 8);
    /* Post 1 is A's first, 2 A's second (it goes), 3 B's first. */
    REQUIRE(weft_fault_create("comm_post:1,comm_post:3", 0, 1, &c.cfg.fault) == 0);

    int a = 11, b = 22, got[2] = {0, 0};
    MPI_Request recv[2];
    for (int i = 0; i < 2; i++)
        MPI_Irecv(&got[i], 1, MPI_INT, 0, WEFT_COMM_CTRL_TAG, MPI_COMM_SELF, &recv[i]);
    CHECK(weft_comm__isend_ctrl_owed(&c, &a, sizeof a, 0, "message A", sent, NULL, NULL) == 0);
    CHECK(weft_comm__isend_ctrl_owed(&c, &b, sizeof b, 0, "message B", sent, NULL, NULL) == 0);
    REQUIRE(c.owed.n == 2); /* A owed after its refusal, B queued behind it */

    nap_ns(GIVE_UP_NS + GIVE_UP_NS / 10);
    drain(&c);
    CHECK(c.owed.n == 0);
    CHECK(c.reqs.n == 2);
    MPI_Waitall((int)c.reqs.n, c.reqs.data, MPI_STATUSES_IGNORE);
    MPI_Waitall(2, recv, MPI_STATUSES_IGNORE);
    CHECK(got[0] == a && got[1] == b); /* the protocol's order kept */

    weft_fault_destroy(c.cfg.fault);
    weft_vec_t *vecs[] = {&c.reqs, &c.cbs, &c.idx, &c.owed};
    for (int i = 0; i < 4; i++) weft_vec_fini(vecs[i]);
    MPI_Finalize();
    return check_report("test_comm_owed_queued");
}
