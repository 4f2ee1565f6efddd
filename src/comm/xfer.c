/* The life of a tile transfer, whatever transport moves its bytes: the
 * GET that starts a rendezvous, the landing of eager bytes, the counting
 * of its parts, its failure (the peer told) and its two ends, which
 * publish the received version and complete the SEND or RECV task. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_internal.h"
#include "trace/trace.h"
#include "util/cols.h"
#include "util/fault.h"
#include "util/log.h"

int weft_comm__col_fits(const weft_data_t *d)
{
    size_t col = (size_t)d->rows * d->elem;
    if (col <= INT_MAX) return WEFT_SUCCESS;
    weft_error("data %llu cannot move between ranks: a column of it is %zu bytes, and MPI counts "
               "at most %d bytes a column",
               (unsigned long long)d->key, col, INT_MAX);
    return WEFT_ERR_UNSUPPORTED;
}

int weft_comm__cols_type(const weft_data_t *d, int64_t ld, int n, MPI_Datatype *out)
{
    /* The stride is an MPI_Aint: as an int, a leading dimension of 2 GiB
     * or more wrapped negative and MPI read or wrote before the tile. */
    int rc = weft_comm__col_fits(d);
    if (rc != WEFT_SUCCESS) return rc;
    MPI_Datatype t;
    if (MPI_Type_create_hvector(n, (int)((size_t)d->rows * d->elem),
                                (MPI_Aint)((size_t)ld * d->elem), MPI_BYTE, &t) != MPI_SUCCESS)
        return WEFT_ERR_MPI;
    if (MPI_Type_commit(&t) != MPI_SUCCESS) {
        MPI_Type_free(&t);
        return WEFT_ERR_MPI;
    }
    *out = t;
    return WEFT_SUCCESS;
}

int weft_comm__piece_cols(const weft_comm_t *c, const weft_data_t *d)
{
    size_t piece = c->cfg.mpi_piece ? c->cfg.mpi_piece : (size_t)1 << 30;
    size_t col = (size_t)d->rows * d->elem, cols = col > 0 ? piece / col : 0;
    if (cols < 1) cols = 1;
    if (cols >= (size_t)d->cols) return d->cols > 0 ? d->cols : 1;
    return weft_comm__cols_within_tags(c, d->cols, (int)cols);
}

static void cols_over(weft_comm_t *c, void *a, void *b)
{
    MPI_Type_free((MPI_Datatype *)b);
    free(b);
    weft_comm__xfer_part_done(c, a);
}

int weft_comm__post_cols(weft_comm_t *c, weft_comm_xfer_t *x, int first, int n, int recv, int tag)
{
    const weft_data_t *d = x->copy->data;
    MPI_Datatype *t = weft_comm__alloc(c, sizeof *t);
    if (!t) return WEFT_ERR_NOMEM;
    int rc = weft_comm__cols_type(d, x->copy->ld, n, t);
    if (rc != WEFT_SUCCESS) {
        free(t);
        return rc;
    }
    void *p = weft_comm__col_ptr(d, x->copy->ptr, x->copy->ld, first);
    rc = recv ? weft_comm__irecv(c, p, 1, *t, x->peer, tag, cols_over, x, t)
              : weft_comm__isend(c, p, 1, *t, x->peer, tag, cols_over, x, t);
    if (rc != WEFT_SUCCESS) {
        MPI_Type_free(t);
        free(t);
        return rc;
    }
    x->left++;
    return WEFT_SUCCESS;
}

void weft_comm__xfer_send_get(weft_comm_t *c, weft_comm_xfer_t *x, int mode, int tag,
                              int chunk_cols)
{
    const weft_data_t *d = x->t->flow[0].data;
    weft_comm_msg_t *g = weft_comm__alloc(c, sizeof *g);
    if (!g) {
        weft_comm__xfer_fail(c, x, WEFT_ERR_NOMEM, "no memory for the GET");
        return;
    }
    *g = (weft_comm_msg_t){.type = WEFT_COMM_MSG_GET,
                           .src = c->rank,
                           .key = d->key,
                           .version = ((weft_comm_action_t *)x->t->action)->version,
                           .on_device = x->copy->device > 0,
                           .mode = mode,
                           .tag = tag,
                           .chunk_cols = chunk_cols};
    weft_comm__fetch_listed(c, x, 1);
    int rc = weft_comm__send_ctrl(c, g, x->peer);
    if (rc != WEFT_SUCCESS) {
        weft_comm__fetch_listed(c, x, 0);
        weft_comm__xfer_fail(c, x, rc, "posting the GET failed");
        return;
    }
    x->get_sent = 1;
    atomic_fetch_add(&c->n_get, 1);
}

int weft_comm__device_copy(weft_comm_t *c, int level, weft_device_t *by, int stream,
                           weft_region_t dst, int dst_dev, weft_region_t src, int src_dev,
                           int src_rank, weft_comm_xfer_t *x, int cols)
{
    const weft_data_t *d = x->copy->data;
    weft_log_cause_t *outer = level == WEFT_LOG_ERROR ? weft_log_cause_enter(&x->t->cause) : NULL;
    int rc = weft_fault_copy_hit(c->cfg.fault, level, by->index, (unsigned long long)d->key,
                                 src_dev, src_rank, dst_dev)
                 ? WEFT_ERR_INTERNAL
                 : weft_device_copy(by, stream, dst, dst_dev, src, src_dev, d->rows, cols, d->elem);
    if (level == WEFT_LOG_ERROR) weft_log_cause_leave(outer);
    return rc;
}

/* The eager bytes of x are on its device (or failed there): the
 * activation they were copied from goes, and the receive ends. */
static void eager_landed(weft_comm_t *c, void *a, void *b)
{
    weft_comm_xfer_t *x = a;
    free(b);
    x->status = x->dev_status;
    weft_comm__xfer_recv_finished(c, x);
}

int weft_comm__xfer_land_eager(weft_comm_t *c, weft_comm_xfer_t *x, weft_comm_pending_t *in)
{
    weft_data_copy_t *cp = x->copy;
    const weft_data_t *d = cp->data;
    const void *payload = in->act + 1;
    weft_device_t *dev = weft_comm__device(c, cp->device);
    if (!dev) {
        weft_copy_cols(cp->ptr, cp->ld, payload, d->rows, d->rows, d->cols, d->elem);
        return WEFT_SUCCESS;
    }
    /* A small tile for a device consumer goes to the device now, so the
     * task finds it there instead of re-staging a host copy. The engine
     * polls the copy's end instead of waiting: the stage-in stream may
     * hold other copies ahead of it. */
    weft_region_t dst = {cp->ptr, cp->ld}, src = {(void *)payload, d->rows};
    weft_event_t ev;
    int rc = weft_comm__device_copy(c, WEFT_LOG_ERROR, dev, WEFT_STREAM_IN, dst, cp->device, src, 0,
                                    -1, x, d->cols);
    if (rc == WEFT_SUCCESS) rc = weft_device_event_record(dev, WEFT_STREAM_IN, &ev);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_comm__wait_device(c, dev, ev, eager_landed, x, in, &x->dev_status);
    if (rc == WEFT_SUCCESS) return WEFT_AGAIN;
    /* No room to poll it: the copy reads `in`, which the caller frees, so
     * it must be over first (bounded by what that stream holds). */
    rc = dev->ops->event_sync(dev, &ev);
    dev->ops->event_destroy(dev, &ev);
    return rc;
}

void weft_comm__xfer_recv_finished(weft_comm_t *c, weft_comm_xfer_t *x)
{
    weft_task_t *t = x->t;
    weft_comm_action_t *act = t->action;
    weft_data_t *d = t->flow[0].data;
    weft_trace_lane_slice(
        c->cfg.trace, &c->lanes, x->t0, "net recv", "net",
        "\"key\":%llu,\"bytes\":%zu,\"transport\":\"%s\",\"peer\":%d,\"device\":%d",
        (unsigned long long)d->key, d->bytes,
        x->rendezvous ? weft_comm__transport_name(c, x->counter) : "eager", x->peer,
        x->copy->device);
    weft_comm__fetch_listed(c, x, 0);
    if (x->rendezvous) c->ndata_inflight--;
    /* Every receive posted with them is over (x->left reached 0). */
    if (x->tags_held) weft_comm__tags_give(&c->tags, x->tags_v);
    x->tags_held = 0;
    if (x->rendezvous && x->status == WEFT_SUCCESS) {
        atomic_fetch_add(&c->n_bytes_in, (long long)d->bytes);
        atomic_fetch_add(&c->n_by_transport[x->counter], (long long)d->bytes);
    }
    if (x->copy->device > 0 && x->status == WEFT_SUCCESS)
        atomic_fetch_add(&c->n_into_dev, (long long)d->bytes);
    weft_data_publish(d, x->copy,
                      x->status == WEFT_SUCCESS ? WEFT_PUBLISH_RECEIVED : WEFT_PUBLISH_LOST,
                      t->flow[0].out_version, 0);
    weft_comm__transport_release(c, x);
    int status = x->status;
    act->xfer = NULL;
    weft_comm__task_done(c, t, status);
}

void weft_comm__xfer_send_finished(weft_comm_t *c, weft_comm_xfer_t *x)
{
    weft_task_t *t = x->t;
    weft_data_t *d = t->flow[0].data;
    const char *how = x->skipped      ? "skipped"
                      : x->rendezvous ? weft_comm__transport_name(c, x->counter)
                                      : "eager";
    weft_trace_lane_slice(
        c->cfg.trace, &c->lanes, x->t0, "net send", "net",
        "\"key\":%llu,\"bytes\":%zu,\"transport\":\"%s\",\"peer\":%d,\"device\":%d",
        (unsigned long long)d->key, x->skipped ? (size_t)0 : d->bytes, how, x->peer,
        x->copy->device);
    /* Counted at the end, as moved: a transfer that failed, or whose pull
     * failed at the receiver, sent nothing. Eager bytes left inside their
     * activation, from a host copy. */
    if (!x->skipped && !x->pull_failed && x->status == WEFT_SUCCESS) {
        atomic_fetch_add(&c->n_bytes_out, (long long)d->bytes);
        if (x->rendezvous && x->copy->device > 0)
            atomic_fetch_add(&c->n_from_dev, (long long)d->bytes);
    }
    weft_data_publish(d, x->copy, WEFT_PUBLISH_READ, 0, 0);
    weft_comm__transport_release(c, x);
    int status = x->status;
    ((weft_comm_action_t *)t->action)->xfer = NULL;
    weft_comm__task_done(c, t, status);
}

void weft_comm__xfer_part_done(weft_comm_t *c, weft_comm_xfer_t *x)
{
    if (--x->left > 0) return;
    if (x->t->kind == WEFT_TASK_RECV)
        weft_comm__xfer_recv_finished(c, x);
    else
        weft_comm__xfer_send_finished(c, x);
}

void weft_comm__part_over(weft_comm_t *c, void *a, void *b) { weft_comm__xfer_part_done(c, a); }

int weft_comm__cols_within_tags(const weft_comm_t *c, int cols, int step)
{
    int64_t tags = weft_comm__tags_most(&c->tags);
    return ((int64_t)cols + step - 1) / step > tags ? (int)(((int64_t)cols + tags - 1) / tags)
                                                    : step;
}

void weft_comm__xfer_fail(weft_comm_t *c, weft_comm_xfer_t *x, int status, const char *what)
{
    int recv = x->t->kind == WEFT_TASK_RECV;
    const weft_data_t *d = x->t->flow[0].data;
    /* The task's cause: every rank's failure line then says what failed
     * (stf/failure.c), not the status alone ("internal error"). */
    weft_log_cause_t *outer = weft_log_cause_enter(&x->t->cause);
    weft_error("%s of data %llu v%u %s rank %d: %s (%s)", recv ? "receive" : "send",
               (unsigned long long)d->key, ((weft_comm_action_t *)x->t->action)->version,
               recv ? "from" : "to", x->peer, what, weft_strerror(status));
    weft_log_cause_leave(outer);
    if (x->status != WEFT_SUCCESS) return; /* the peer was told at the first failure */
    x->status = status;
    int type = WEFT_COMM_MSG_ABORT;
    if (recv) {
        /* After the GET the sender's bytes are on their way: they land
         * and are dropped. Before it, nothing will come: the receives
         * posted are cancelled and the sender told not to wait. */
        if (x->get_sent) return;
        weft_comm__cancel_recvs(c, x);
        type = WEFT_COMM_MSG_CANCEL;
    }
    x->left++;
    weft_comm__send_notice(c, x->t, type, 0, x->tag, weft_comm__part_over, x, NULL);
}
