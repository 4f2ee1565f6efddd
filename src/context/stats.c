/* Counters readable by programs (tests check transfer counts with them). */
#include <string.h>

#include "context/context.h"
#include "util/log.h"
#include "util/mib.h"

void weft_stats_print(weft_context_t *ctx)
{
    weft_stats_t s;
    if (weft_stats_get(ctx, &s) != WEFT_SUCCESS) return;
    weft_log_stats(-1, "rank %d: %lld tasks on %d cores + %d devices (%lld failed, %lld cancelled)",
                   ctx->rank, (long long)s.tasks_run, ctx->ncores, ctx->ndevices,
                   (long long)s.tasks_failed, (long long)s.tasks_cancelled);
    /* The tasks a rank holds and its dependency records: they grow with a
     * taskpool's tasks when something keeps ended ones (stf/record.c). */
    weft_log_stats(-1, "rank %d: runtime metadata: peak %s MiB (%lld bytes a task)", ctx->rank,
                   weft_mib_text(ctx->meta.peak).s, ctx->meta.task_bytes);
    if (ctx->holds)
        weft_log_stats(-1,
                       "rank %d: insertion held back %ld times, %.2f s in all (sched_pending_max), "
                       "%ld given up after a second with nothing moving here",
                       ctx->rank, ctx->holds, ctx->hold_s, ctx->hold_giveups);
    if (!ctx->comm_engine) return;
    weft_log_stats(-1, "rank %d: transfers: %lld sends, %lld recvs", ctx->rank,
                   (long long)atomic_load(&ctx->sends_done),
                   (long long)atomic_load(&ctx->recvs_done));
    weft_log_stats(-1,
                   "rank %d: network: %lld activations (%lld eager), sent %s MiB (%s from "
                   "device memory), received %s MiB (%s into device memory): host %s, mpi "
                   "%s, ipc %s, staged %s, nccl %s MiB; %s MiB through bounce buffers",
                   ctx->rank, (long long)s.activations_sent, (long long)s.eager_sent,
                   weft_mib_text(s.net_bytes_sent).s, weft_mib_text(s.net_bytes_from_device).s,
                   weft_mib_text(s.net_bytes_received).s, weft_mib_text(s.net_bytes_into_device).s,
                   weft_mib_text(s.net_bytes_host).s, weft_mib_text(s.net_bytes_mpi).s,
                   weft_mib_text(s.net_bytes_ipc).s, weft_mib_text(s.net_bytes_staged_transport).s,
                   weft_mib_text(s.net_bytes_nccl).s, weft_mib_text(s.net_bytes_staged).s);
    weft_log_stats(-1,
                   "rank %d: comm thread: %lld receive and %lld send tries put off (copy busy), "
                   "%lld sends pulled to host while it served the others, %lld receives met "
                   "without their bytes (the version was here), %lld waits for message tags",
                   ctx->rank, (long long)s.comm_recv_retries, (long long)s.comm_send_retries,
                   (long long)s.comm_send_pulls, (long long)s.recv_skipped,
                   (long long)s.comm_tag_waits);
}

void weft_context_keep_comm_counters(weft_context_t *ctx)
{
    if (!ctx->comm_engine) return;
    pthread_mutex_lock(&ctx->readers_lock);
    weft_comm_counters(ctx->comm_engine, &ctx->comm_final);
    ctx->comm_gone = 1;
    pthread_mutex_unlock(&ctx->readers_lock);
}

int weft_stats_get(weft_context_t *ctx, weft_stats_t *out)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_stats_get", 1)) return WEFT_ERR_INVALID;
    if (!out) {
        weft_error("argument 2 of weft_stats_get is NULL: pass a weft_stats_t to fill");
        return WEFT_ERR_INVALID;
    }
    memset(out, 0, sizeof *out);
    out->tasks_run = atomic_load(&ctx->tasks_run);
    out->tasks_failed = atomic_load(&ctx->tasks_failed);
    out->tasks_cancelled = atomic_load(&ctx->tasks_cancelled);
    /* The engine's own, or the last it had once weft_fini destroyed it. */
    weft_comm_counters_t c;
    pthread_mutex_lock(&ctx->readers_lock);
    int have = ctx->comm_gone || ctx->comm_engine;
    if (ctx->comm_gone)
        c = ctx->comm_final;
    else if (ctx->comm_engine)
        weft_comm_counters(ctx->comm_engine, &c);
    pthread_mutex_unlock(&ctx->readers_lock);
    if (have) {
        out->activations_sent = c.activations_sent;
        out->eager_sent = c.eager_sent;
        out->gets_sent = c.gets_sent;
        out->net_bytes_sent = c.bytes_sent;
        out->net_bytes_received = c.bytes_received;
        out->recv_rejected = c.rejected;
        out->comm_naps = c.naps;
        out->comm_recv_retries = c.recv_retries;
        out->comm_send_retries = c.send_retries;
        out->comm_send_pulls = c.send_pulls;
        out->recv_skipped = c.skipped;
        out->comm_tag_waits = c.tag_waits;
        out->net_bytes_from_device = c.bytes_sent_from_device;
        out->net_bytes_into_device = c.bytes_received_into_device;
        out->net_bytes_staged = c.bytes_staged;
        out->net_bytes_host = c.bytes_by_transport[WEFT_TRANSPORT_AUTO];
        out->net_bytes_mpi = c.bytes_by_transport[WEFT_TRANSPORT_MPI];
        out->net_bytes_ipc = c.bytes_by_transport[WEFT_TRANSPORT_IPC];
        out->net_bytes_staged_transport = c.bytes_by_transport[WEFT_TRANSPORT_STAGED];
        out->net_bytes_nccl = c.bytes_by_transport[WEFT_TRANSPORT_NCCL];
    }
    return WEFT_SUCCESS;
}
