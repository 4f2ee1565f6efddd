/* The nccl transport's state, shared by its set-up
 * (transport_nccl_setup.c: the communicators, made at connect) and its
 * operations (transport_nccl.c: the sends and receives in flight, their
 * progress). Internal to those two files. */
#ifndef WEFT_COMM_TRANSPORT_NCCL_H
#define WEFT_COMM_TRANSPORT_NCCL_H

#include <cuda_runtime.h>
#include <nccl.h>

#include "comm/comm_internal.h"

/* One operation in flight, ended by its event. */
typedef struct nccl_op {
    cudaEvent_t ev;
    cudaError_t err; /* its event's outcome, once it ended */
    weft_comm_xfer_t *x;
    struct nccl_link *link;
    struct nccl_op *next;
} nccl_op_t;

/* Sender: a GET that came before its turn. */
typedef struct nccl_held {
    weft_comm_xfer_t *x;
    uint32_t seq;
    struct nccl_held *next;
} nccl_held_t;

/* One direction with one peer. */
typedef struct nccl_link {
    ncclComm_t comm; /* NULL: this pair does not use nccl */
    cudaStream_t stream;
    int peer, send; /* send: this rank's sends to peer, else its receives from peer */
    uint32_t next;  /* receives: the number the next one gets; sends: the next to issue */
    int inflight;
    int broken; /* takes no new transfer */
    nccl_held_t *held;
} nccl_link_t;

typedef struct nccl_state {
    weft_device_t *dev; /* the CUDA device of the communicators; NULL: none */
    int ordinal;
    nccl_link_t *to, *from; /* by peer rank */
    nccl_op_t *ops;
} nccl_state_t;

/* Makes the communicators' device current; 1 on success. */
static inline int nccl_use_device(nccl_state_t *s)
{
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == s->ordinal) return 1;
    return cudaSetDevice(s->ordinal) == cudaSuccess;
}

/* Link l of this rank, for l in [0, 2 nranks): sends to l, then
 * receives from l - nranks. */
static inline nccl_link_t *nccl_link_at(weft_comm_t *c, nccl_state_t *s, int l)
{
    return l < c->nranks ? &s->to[l] : &s->from[l - c->nranks];
}

/* The transport's ops open, close and connect (transport_nccl_setup.c). */
int weft_comm__nccl_open(weft_comm_t *c, void **state);
void weft_comm__nccl_close(weft_comm_t *c, void *state);
int weft_comm__nccl_connect(weft_comm_t *c, void *state);

#endif
