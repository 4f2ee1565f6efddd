/* The registry of transports, and the one place that picks a transport for
 * a transfer and hands the transfer to it. Adding a transport is one line
 * in `registry` (see docs/ARCHITECTURE.md, "Adding a transport"). */
#include <string.h>

#include "comm/comm_internal.h"
#include "util/log.h"

/* In order of preference for comm_transport=auto: on one node ipc; across
 * nodes MPI when it reads device memory, else nccl between CUDA devices.
 * The last one must reach every pair of copies: it takes what no other
 * can, and the receives whose first transport could not start. With the
 * device paths compiled out every copy is in host memory and mpi alone
 * carries it. */
static const weft_comm_transport_ops_t *const registry[] = {
#ifdef WEFT_GPU_AWARE_COMM
    &weft_comm__ipc_ops,
#endif
    &weft_comm__mpi_ops,
#if defined(WEFT_GPU_AWARE_COMM) && defined(WEFT_HAVE_NCCL)
    &weft_comm__nccl_ops,
#endif
#ifdef WEFT_GPU_AWARE_COMM
    &weft_comm__staged_ops,
#endif
};
#define NREGISTRY (sizeof registry / sizeof registry[0])

static const weft_comm_transport_t *registered(const weft_comm_t *c, int id)
{
    if (id <= WEFT_TRANSPORT_AUTO || id >= WEFT_TRANSPORT_COUNT) return NULL;
    return c->tp[id].ops ? &c->tp[id] : NULL;
}

static const weft_comm_transport_t *last_resort(const weft_comm_t *c)
{
    return &c->tp[registry[NREGISTRY - 1]->id];
}

int weft_comm__transports_open(weft_comm_t *c)
{
    for (size_t i = 0; i < NREGISTRY; i++) {
        weft_comm_transport_t *tp = &c->tp[registry[i]->id];
        int rc = registry[i]->open(c, &tp->state);
        if (rc != WEFT_SUCCESS) {
            weft_error("comm: opening the %s transport failed (%s)", registry[i]->name,
                       weft_strerror(rc));
            weft_comm__transports_close(c);
            return rc;
        }
        tp->ops = registry[i];
    }
    /* Asked for by name and not built in (nccl without NCCL or CUDA): said
     * once, since every transfer then goes by another transport. */
    if (c->cfg.transport != WEFT_TRANSPORT_AUTO && !registered(c, c->cfg.transport))
        weft_warn("comm_transport: the transport asked for is not in this build of weft (nccl "
                  "needs CUDA and NCCL at configure time: -DWEFT_NCCL=ON): transfers go by the "
                  "others, as with comm_transport=auto");
    return WEFT_SUCCESS;
}

void weft_comm__transports_close(weft_comm_t *c)
{
    for (int id = 0; id < WEFT_TRANSPORT_COUNT; id++) {
        weft_comm_transport_t *tp = &c->tp[id];
        if (tp->ops) tp->ops->close(c, tp->state);
        *tp = (weft_comm_transport_t){0};
    }
}

int weft_comm__transports_connect(weft_comm_t *c)
{
    int status = WEFT_SUCCESS;
    /* Every transport connects even after one failed: the others' ranks
     * are in the same collective calls. */
    for (size_t i = 0; i < NREGISTRY; i++) {
        weft_comm_transport_t *tp = &c->tp[registry[i]->id];
        int rc = tp->ops->connect(c, tp->state);
        if (rc != WEFT_SUCCESS && status == WEFT_SUCCESS) status = rc;
    }
    return status;
}

int weft_comm__transports_progress(weft_comm_t *c)
{
    int n = 0;
    for (size_t i = 0; i < NREGISTRY; i++) {
        weft_comm_transport_t *tp = &c->tp[registry[i]->id];
        n += tp->ops->progress(c, tp->state);
    }
    return n;
}

const char *weft_comm__transport_name(const weft_comm_t *c, int id)
{
    if (id == WEFT_TRANSPORT_AUTO) return "host";
    const weft_comm_transport_t *tp = registered(c, id);
    return tp ? tp->ops->name : "?";
}

/* Where a copy is, as a transport's reach depends on it. */
static const char *copy_place(const weft_comm_msg_t *m)
{
    return !m->on_device                  ? "host memory"
           : m->dev_type == WEFT_DEV_CUDA ? "a CUDA device"
           : m->dev_type == WEFT_DEV_HIP  ? "a HIP device"
                                          : "an emulated device";
}

/* Why the transport asked for did not take a transfer, as far as the two
 * ends tell: one bit a reason, so that each is said once. */
static int replaced_reason(const weft_comm_t *c, const weft_comm_transport_t *want,
                           const weft_comm_msg_t *m, int target, const char **why)
{
    if (!m->on_device || target == 0) {
        *why = "an end in host memory";
        return 1;
    }
    /* Only ipc stops at the node (nccl crosses nodes: its emu ends were
     * blamed on the node split). */
    if (want->ops->id == WEFT_TRANSPORT_IPC && m->node != c->node_of[c->rank]) {
        *why = "the ranks on different nodes (comm_node_split)";
        return 2;
    }
    *why = "a pair of devices it does not reach";
    return 4;
}

/* The first transfer that cannot take the transport asked for, for each
 * reason, is named with the two ends, the reason and the transport it
 * takes instead; later ones for the same reason go that way silently (a
 * stranger's device-to-device moves between 'nodes' went by mpi unsaid,
 * after one line about a host copy). */
static void tell_replaced(weft_comm_t *c, const weft_comm_transport_t *want,
                          const weft_comm_msg_t *m, int target, int id)
{
    const char *why;
    int reason = replaced_reason(c, want, m, target, &why);
    if (c->warned_transport & reason) return;
    c->warned_transport |= reason;
    weft_warn("comm_transport=%s cannot carry data %llu v%u from rank %d (its copy on %s) to "
              "rank %d (%s), %s: it goes by %s (said once for that reason: later such transfers "
              "go by another transport unnamed)",
              want->ops->name, (unsigned long long)m->key, m->version, m->src, copy_place(m),
              c->rank, target > 0 ? "a device" : "host memory", why,
              weft_comm__transport_name(c, id));
}

int weft_comm__transport_choose(weft_comm_t *c, const weft_comm_msg_t *m, int target)
{
    const weft_comm_transport_t *want = registered(c, c->cfg.transport);
    if (want && want->ops->reaches(c, want->state, m, target)) return want->ops->id;
    /* A transport not compiled in is replaced silently, as auto would. */
    int id = last_resort(c)->ops->id;
    for (size_t i = 0; i + 1 < NREGISTRY; i++) {
        const weft_comm_transport_t *tp = &c->tp[registry[i]->id];
        if (tp->ops->reaches(c, tp->state, m, target)) {
            id = tp->ops->id;
            break;
        }
    }
    if (want) tell_replaced(c, want, m, target, id);
    return id;
}

void weft_comm__transport_describe(weft_comm_t *c, const weft_data_copy_t *cp, weft_comm_msg_t *m)
{
    m->node = c->node_of[c->rank];
    m->ld = cp->ld;
    weft_device_t *dev = weft_comm__device(c, cp->device);
    if (!dev) return;
    m->on_device = 1;
    m->dev_type = (int32_t)dev->ops->type;
    m->dev_caps = dev->caps;
    /* A transport that cannot describe the copy leaves its fields zero, so
     * that no receiver picks it: its status says nothing more. */
    for (size_t i = 0; i < NREGISTRY; i++) {
        const weft_comm_transport_t *tp = &c->tp[registry[i]->id];
        tp->ops->describe(c, tp->state, cp, m);
    }
}

void weft_comm__transport_recv_start(weft_comm_t *c, weft_comm_xfer_t *x, const weft_comm_msg_t *m)
{
    x->rendezvous = 1;
    const weft_comm_transport_t *tp = registered(c, x->mode);
    int rc = tp ? tp->ops->recv_start(c, tp->state, x, m) : WEFT_ERR_UNSUPPORTED;
    if (rc == WEFT_SUCCESS) return;
    const weft_comm_transport_t *fallback = last_resort(c);
    if (tp == fallback) {
        weft_comm__xfer_fail(c, x, rc, "starting the receive failed");
        return;
    }
    weft_warn("%s pull of data %llu from rank %d failed (%s): staging it instead",
              weft_comm__transport_name(c, x->mode), (unsigned long long)m->key, m->src,
              weft_strerror(rc));
    x->mode = x->counter = fallback->ops->id;
    rc = fallback->ops->recv_start(c, fallback->state, x, m);
    if (rc != WEFT_SUCCESS) weft_comm__xfer_fail(c, x, rc, "starting the receive failed");
}

void weft_comm__transport_send_start(weft_comm_t *c, weft_comm_xfer_t *x,
                                     const weft_comm_msg_t *get)
{
    x->mode = get->mode;
    /* Named as the receiver counts it (protocol.c): host to host is
     * "host" whatever transport moves it (the trace's two ends said "mpi"
     * and "host" of one transfer). */
    x->counter = x->copy->device == 0 && !get->on_device ? WEFT_TRANSPORT_AUTO : x->mode;
    const weft_comm_transport_t *tp = registered(c, x->mode);
    int rc = tp ? tp->ops->send_start(c, tp->state, x, get) : WEFT_ERR_UNSUPPORTED;
    if (rc != WEFT_SUCCESS)
        weft_comm__xfer_fail(c, x, rc, "the GET names a transport that cannot send");
}

void weft_comm__transport_release(weft_comm_t *c, weft_comm_xfer_t *x)
{
    const weft_comm_transport_t *tp = registered(c, x->mode);
    if (tp) tp->ops->release(c, tp->state, x);
}

/* ---- for what a transport lacks ----------------------------------------------- */

int weft_comm__tp_open_stateless(weft_comm_t *c, void **state)
{
    *state = NULL;
    return WEFT_SUCCESS;
}

void weft_comm__tp_close_stateless(weft_comm_t *c, void *state) {}

int weft_comm__tp_connect_nothing(weft_comm_t *c, void *state) { return WEFT_SUCCESS; }

int weft_comm__tp_progress_nothing(weft_comm_t *c, void *state) { return 0; }

int weft_comm__tp_describe_unsupported(weft_comm_t *c, void *state, const weft_data_copy_t *cp,
                                       weft_comm_msg_t *m)
{
    return WEFT_ERR_UNSUPPORTED;
}

int weft_comm__tp_send_unsupported(weft_comm_t *c, void *state, weft_comm_xfer_t *x,
                                   const weft_comm_msg_t *get)
{
    return WEFT_ERR_UNSUPPORTED;
}

int weft_comm__transport_peer_down(weft_comm_t *c, int id, int peer, int their_sends)
{
    const weft_comm_transport_t *tp = registered(c, id);
    if (!tp) return WEFT_ERR_UNSUPPORTED;
    tp->ops->peer_down(c, tp->state, peer, their_sends);
    return WEFT_SUCCESS;
}

void weft_comm__tp_release_nothing(weft_comm_t *c, void *state, weft_comm_xfer_t *x) {}

void weft_comm__tp_peer_down_nothing(weft_comm_t *c, void *state, int peer, int their_sends) {}
