/* State of the comm engine, shared by its files; engine thread only unless
 * noted. */
#ifndef WEFT_COMM_COMM_INTERNAL_H
#define WEFT_COMM_COMM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "comm/comm.h"

#define WEFT_COMM_CTRL_TAG 1
#define WEFT_COMM_FIRST_DATA_TAG 16
#define WEFT_COMM_NCTRL 16 /* control receives kept posted */
#define WEFT_COMM_BUCKETS 4096

enum { MSG_ACTIVATE = 1, MSG_GET = 2 };

/* A control message; an eager activation's payload follows it. */
typedef struct msg_hdr {
    int32_t type;
    int32_t src;
    uint64_t key;
    uint32_t version;
    int32_t rows, cols, elem;
    int32_t tag;   /* GET: the tag the bytes must carry */
    int32_t eager; /* ACTIVATE: payload follows */
    int64_t bytes;
} msg_hdr_t;

typedef void (*weft_comm_cb_fn)(weft_comm_t *c, void *a, void *b);
typedef struct req_cb {
    weft_comm_cb_fn fn;
    void *a, *b;
} req_cb_t;

/* A rendezvous half waiting for its other half, keyed by (peer, key,
 * version, kind): a RECV task waiting for its activation, an activation
 * waiting for its RECV task, or a SEND task waiting for the GET. */
enum { PEND_RECV_TASK = 0, PEND_ACTIVATION = 1, PEND_SEND = 2 };
typedef struct pending {
    int kind, peer;
    uint64_t key;
    uint32_t version;
    weft_task_t *task;
    msg_hdr_t *act; /* owned copy of an early activation (+ payload) */
    struct pending *next;
} pending_t;

typedef struct ctrl_slot {
    msg_hdr_t *buf;
    size_t bytes;
} ctrl_slot_t;

struct weft_comm {
    weft_comm_config_t cfg;
    int rank, nranks, tag_ub, next_tag;
    pthread_t thread;
    atomic_int stop;
    atomic_int dump; /* log the open rendezvous on the next turn */
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    weft_task_t *qhead, *qtail;
    MPI_Request *reqs;
    req_cb_t *cbs;
    int *idx;
    int nreq, req_cap;
    ctrl_slot_t ctrl[WEFT_COMM_NCTRL];
    pending_t *table[WEFT_COMM_BUCKETS];
    int ndata_inflight;
    /* RECVs ready to fetch but over max_requests: started by priority. */
    pending_t **throttled;
    int nthrottled, throttled_cap;
    atomic_llong n_act, n_eager, n_get, n_bytes_out, n_bytes_in, n_rejected;
};

int weft_comm_post(weft_comm_t *c, MPI_Request r, weft_comm_cb_fn cb, void *a, void *b);
int weft_comm_ctrl_start(weft_comm_t *c);
void weft_comm_ctrl_stop(weft_comm_t *c);
void weft_comm_handle_task(weft_comm_t *c, weft_task_t *t);
int weft_comm_start_throttled(weft_comm_t *c);
void weft_comm_table_clear(weft_comm_t *c);
void weft_comm_table_dump(weft_comm_t *c);

#endif
