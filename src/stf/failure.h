/* Failed tasks (docs/SEMANTICS.md section 3): a task that fails marks what
 * it would have written as lost; a task that reads a lost version is
 * cancelled (ends without running and marks its own outputs lost), a send
 * of one tells the receiver, whose receive ends cancelled; after the local
 * wait, one collective exchange tells every rank which task failed. */
#ifndef WEFT_STF_FAILURE_H
#define WEFT_STF_FAILURE_H

#include <stdatomic.h>

struct weft_data;

/* Per taskpool and rank, reset by each wait. */
typedef struct weft_failure_rec {
    atomic_int claimed; /* the first task failure here is (being) described */
    char what[512];     /* its description, written by the one that claimed */
    /* The first failed transfer (SEND/RECV), kept apart: named only when no
     * task body failed here, since a transfer often fails because of a body
     * that failed on its device at the same time (the version it was to
     * move lost), and the two threads' race chose which was named. */
    atomic_int claimed_xfer;
    char what_xfer[512];
    int status;         /* what the waits return for it: WEFT_ERR_TASK for a task */
    /* The first note of the wait (weft_failure_note, main thread), kept
     * apart: a task that fails later here still names the failure. */
    int noted, note_status;
    char note_what[512];
    atomic_long nfailed, ncancelled;
    atomic_long ncancelled_xfer; /* of ncancelled, weft's own sends and receives */
} weft_failure_rec_t;

struct weft_task;
struct weft_context;
struct weft_taskpool;

/* Before t is released to run: 1 when a version it reads was not produced
 * (t->cancelled is then set). Any thread. */
int weft_failure_check_inputs(struct weft_task *t);
/* Whether t reads a lost version in a data other than `except` (NULL:
 * none): a lost data, or a voided partial read, not added to. Takes each
 * data's lock. */
int weft_failure_inputs_lost(const struct weft_task *t, const struct weft_data *except);
/* t ended with rc (0, WEFT_ERR_CANCELLED or an error): its written data
 * become lost or produced, and the counters and the first failure's
 * description are updated. Called before t's successors are released. */
void weft_failure_task_end(struct weft_context *ctx, struct weft_task *t, int rc);
/* A failure of the wait's own work on this rank (the write-back of a final
 * version into user memory, say), described by what: every rank's wait
 * then returns status, as for a failed task. Main thread. */
void weft_failure_note(struct weft_taskpool *tp, int status, const char *what);
/* After the local wait of tp, collective over the context's ranks: the
 * lowest failing rank's description reaches every rank, which logs it and
 * returns WEFT_ERR_TASK; WEFT_SUCCESS when no task failed anywhere. Lost
 * marks of tp's data are cleared (they keep their last good version). */
int weft_failure_exchange(struct weft_taskpool *tp);

#endif
