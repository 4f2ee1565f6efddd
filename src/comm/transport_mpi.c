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

/* The tile by MPI operations on tags tag, tag + 1, ... (recv: receives,
 * else sends): one for most tiles, one a piece of at most
 * comm_mpi_piece bytes for larger ones (the two ends cut alike). */
static int mpi_post_tile(weft_comm_t *c, weft_comm_xfer_t *x, int recv, int tag)
{
    const weft_data_t *d = x->copy->data;
    int step = weft_comm__piece_cols(c, d), rc = WEFT_SUCCESS;
    for (int k = 0; (int64_t)k * step < d->cols && rc == WEFT_SUCCESS; k++) {
        int first = k * step, left = d->cols - first;
        rc = weft_comm__post_cols(c, x, first, left < step ? left : step, recv, tag + k);
    }
    return rc;
}

/* The receives are posted before the GET leaves, so the bytes always find
 * them. */
static int mpi_recv_start(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                          const weft_comm_msg_t *m)
{
    const weft_data_t *d = x->copy->data;
    int step = weft_comm__piece_cols(c, d);
    x->tag = weft_comm__xfer_take_tags(c, x, (d->cols + step - 1) / step);
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
