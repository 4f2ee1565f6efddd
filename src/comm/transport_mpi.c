/* The mpi transport: the copies' addresses go straight to MPI_Isend and
 * MPI_Irecv, the tile described as a vector of columns so that a strided
 * tile needs no packing. It reaches host memory, device memory the host can
 * address (emu), and any device memory when MPI reads it itself (detected
 * with MPIX_Query_cuda_support, or forced by comm_mpi_device). */
#include "comm/comm_internal.h"

/* Whether MPI can read or write a copy there. */
static int mpi_reads(const weft_comm_t *c, int on_device, unsigned caps)
{
    return !on_device || (caps & WEFT_DEVCAP_HOST_ADDRESSABLE) || c->cfg.mpi_device_ok;
}

static int mpi_reaches(weft_comm_t *c, void *state, const weft_comm_msg_t *m, int target)
{
    const weft_device_t *t = weft_comm__device(c, target);
    return mpi_reads(c, m->on_device, m->dev_caps) && mpi_reads(c, t != NULL, t ? t->caps : 0);
}

static void mpi_part_done(weft_comm_t *c, void *a, void *b)
{
    weft_comm_xfer_t *x = a;
    MPI_Type_free(&((weft_comm_action_t *)x->t->action)->dtype);
    weft_comm__xfer_part_done(c, x);
}

/* The whole tile by one MPI operation (recv: receive, else send). */
static int mpi_post_tile(weft_comm_t *c, weft_comm_xfer_t *x, int recv, int tag)
{
    weft_comm_action_t *act = x->t->action;
    const weft_data_t *d = x->copy->data;
    int rc = weft_comm__cols_type(d, x->copy->ld, d->cols, &act->dtype);
    if (rc != WEFT_SUCCESS) return rc;
    rc = recv ? weft_comm__irecv(c, x->copy->ptr, 1, act->dtype, x->peer, tag, mpi_part_done, x,
                                 NULL)
              : weft_comm__isend(c, x->copy->ptr, 1, act->dtype, x->peer, tag, mpi_part_done, x,
                                 NULL);
    if (rc != WEFT_SUCCESS) {
        MPI_Type_free(&act->dtype);
        return rc;
    }
    x->left++;
    return WEFT_SUCCESS;
}

/* The receive is posted before the GET leaves, so the bytes always find
 * it. */
static int mpi_recv_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                          const weft_comm_msg_t *m)
{
    x->tag = weft_comm__next_tags(c, 1);
    int rc = mpi_post_tile(c, x, 1, x->tag);
    if (rc != WEFT_SUCCESS) {
        weft_comm__xfer_fail(c, x, rc, "posting the receive failed");
        return WEFT_SUCCESS;
    }
    weft_comm__xfer_send_get(c, x, WEFT_TRANSPORT_MPI, x->tag, 0);
    return WEFT_SUCCESS;
}

static int mpi_send_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                          const weft_comm_msg_t *get)
{
    x->tag = get->tag;
    int rc = mpi_post_tile(c, x, 0, x->tag);
    if (rc != WEFT_SUCCESS) weft_comm__xfer_fail(c, x, rc, "posting the send of the bytes failed");
    return WEFT_SUCCESS;
}

const weft_comm_transport_ops_t weft_comm__mpi_ops = {
    .name = "mpi",
    .id = WEFT_TRANSPORT_MPI,
    .open = weft_comm__tp_open_stateless,
    .close = weft_comm__tp_close_stateless,
    .connect = weft_comm__tp_connect_nothing,
    .describe = weft_comm__tp_describe_unsupported,
    .reaches = mpi_reaches,
    .recv_start = mpi_recv_start,
    .send_start = mpi_send_start,
    .release = weft_comm__tp_release_nothing,
    .progress = weft_comm__tp_progress_nothing,
    .peer_down = weft_comm__tp_peer_down_nothing,
};
