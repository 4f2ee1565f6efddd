/* After a failure in a distributed run: the owner of each data whose final
 * version was lost gets the newest good version another rank still holds
 * (docs/SEMANTICS.md section 3). Without it the next taskpool started from
 * the owner's own last version: a good version made on a third rank (a
 * writer between the owner's last one and the task that failed) was
 * dropped with the copies away from owners at the end of the wait. */
#include "api/recover.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/coll.h"
#include "context/keyset.h"
#include "devmgr/devmgr.h"
#include "stf/agree.h"
#include "stf/remote.h"
#include "util/cols.h"
#include "util/fault.h"
#include "util/log.h"

/* Whether a task of tp failed or was cancelled on any rank: the one
 * collective every wait of a distributed run pays for this. */
static int any_failure(weft_taskpool_t *tp)
{
    const weft_failure_rec_t *rec = &tp->fail;
    int any = atomic_load(&rec->nfailed) + atomic_load(&rec->ncancelled) > 0;
    char where[96];
    snprintf(where, sizeof where, "weft_taskpool_wait of taskpool '%.40s' (its tasks done here)",
             tp->name);
    if (weft_agree_allreduce(tp->ctx, &any, 1, MPI_INT, MPI_MAX, where) != WEFT_SUCCESS) {
        /* The other ranks' answers are unknown: no collective follows (the
         * recovery's, the failure exchange's), this rank's failures are
         * named on it alone. */
        weft_context_diverge(tp->ctx, WEFT_ERR_MPI);
        return 0;
    }
    return any;
}

/* What the error line of a failed collective of the recovery starts with. */
#define RECOVER_WHERE "weft_taskpool_wait: bringing the good versions home after a failure"

/* Under d's lock: whether every copy here at d's newest version is on a
 * device that failed (a version its task made there and only there, that
 * another rank may still hold: it was said lost, and the next taskpool
 * failed on it for good). */
static int newest_on_dead_device_locked(const weft_data_t *d)
{
    const weft_devices_t *devs = d->ctx->devices;
    int dead = 0;
    for (int i = 0; i < WEFT_MAX_DEVICES; i++) {
        const weft_data_copy_t *c = d->copies[i];
        if (!c || !weft_data_copy_is_newest_locked((weft_data_t *)d, c)) continue;
        if (i == 0 || !devs || i > devs->n || !weft_device_is_broken(devs->dev[i])) return 0;
        dead = 1;
    }
    return dead;
}

/* The keys of the data whose final version this rank, their owner, lost
 * (a failed task's write, or a device that failed); every rank's, in rank
 * order, into *out (malloc'ed), their count *n. */
static int lost_keys(weft_taskpool_t *tp, uint64_t **out, int *n)
{
    weft_context_t *ctx = tp->ctx;
    int k = 0;
    uint64_t *mine = malloc((tp->touched.n + 1) * sizeof *mine);
    for (size_t i = 0; mine && i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        weft_data_lock(d);
        if (d->owner_rank == ctx->rank && (d->lost || newest_on_dead_device_locked(d)))
            mine[k++] = d->key;
        weft_data_unlock(d);
    }
    int rc = weft_keyset_allgather(ctx, mine, mine ? k : -1, out, n, RECOVER_WHERE);
    free(mine);
    return rc;
}

/* Versions travel in the collectives below as the version plus 1, 0
 * meaning none: version 0 is a registered data's first contents, which a
 * body failing on its owner can overwrite as well as any other. */

/* The version of d this rank can give (plus 1): the newest it holds when
 * no write of d failed here (a failed body may have changed the bytes),
 * none (0) otherwise and on the owner, whose version is the lost one. A
 * write that was only cancelled here left the version before it
 * untouched: that one is good (it was not offered, and a version made
 * away from the owner, then followed by a cancelled write on the same
 * rank, was lost silently). */
static int offer(const weft_data_t *d, int me)
{
    if (!d || d->owner_rank == me) return 0;
    weft_data_lock((weft_data_t *)d);
    int v = !d->lost_bytes && weft_data_newest_copy_locked((weft_data_t *)d, -1)
                ? (int)d->version + 1
                : 0;
    weft_data_unlock((weft_data_t *)d);
    return v;
}

/* The owner's host copy, stale but intact at an older version than the
 * one a failed body destroyed, is d's version again (the wait's
 * write-back left it alone: devmgr/devflush.c). Its number plus 1; 0 when
 * there is none. */
static int restore_older(weft_data_t *d)
{
    weft_data_lock(d);
    weft_data_copy_t *c = weft_data_older_host_locked(d);
    int v = c ? (int)c->version + 1 : 0;
    if (c) weft_data_restore_locked(d, c);
    weft_data_unlock(d);
    return v;
}

/* The most bytes one broadcast of move_home carries. */
#define RECOVER_PIECE ((size_t)1 << 30)

/* Version v of d from rank `from` to d's owner, by a broadcast (no
 * message the comm engine could take for its own); every rank calls it.
 * WEFT_ERR_MPI: a collective failed, none may follow. */
/* The rank `from`'s read of d's good version v into buf. */
static int read_good(weft_context_t *ctx, weft_data_t *d, uint32_t v, char *buf)
{
    if (weft_fault_hit(ctx->fault, WEFT_FAULT_RECOVER, NULL)) {
        weft_error("fault_inject: no host memory to read data %llu's good version v%u into "
                   "(injected)",
                   (unsigned long long)d->key, v);
        return WEFT_ERR_NOMEM;
    }
    weft_data_copy_t *c = NULL;
    int rc = weft_devcopy_to_host(WEFT_LOG_ERROR, d, &c);
    if (c) {
        weft_copy_cols(buf, d->rows, c->ptr, c->ld, d->rows, d->cols, d->elem);
        weft_data_lock(d);
        weft_data_copy_reader_release_locked(c);
        weft_data_unlock(d);
    }
    return rc;
}

/* Every rank learns whether all can take part (rc: this rank's state), and
 * then buf goes from `from` to every rank. *bad: the lowest rank that could
 * not (INT_MAX when none), why its words (size n); the collectives' status. */
static int share_good(weft_context_t *ctx, weft_data_t *d, int from, int rc, char *buf, int *bad,
                      char *why, size_t n)
{
    /* A rank that cannot take part would leave the others in the broadcast.
     * The lowest such rank's words go to every rank (the others said only
     * "another rank failed to take part"), in a collective made only when
     * one failed, which every rank then knows. */
    *bad = rc == WEFT_SUCCESS ? INT_MAX : ctx->rank;
    int crc = weft_coll_check(ctx, MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INT, MPI_MIN, ctx->comm),
                              RECOVER_WHERE);
    int why_rc = rc;
    if (ctx->rank == *bad) snprintf(why, n, "%s", weft_strerror(rc));
    if (crc == WEFT_SUCCESS && *bad != INT_MAX)
        return weft_coll_share_failure(ctx, *bad, &why_rc, why, n, RECOVER_WHERE);
    /* In pieces: MPI counts are int, a tile may pass 2 GiB. */
    for (size_t at = 0; crc == WEFT_SUCCESS && *bad == INT_MAX && at < d->bytes;
         at += RECOVER_PIECE) {
        size_t len = d->bytes - at < RECOVER_PIECE ? d->bytes - at : RECOVER_PIECE;
        crc = weft_coll_check(ctx, MPI_Bcast(buf + at, (int)len, MPI_BYTE, from, ctx->comm),
                              RECOVER_WHERE);
    }
    return crc;
}

/* On the owner: whether its own copies of its version died with a device. */
static int owner_lost_to_device(weft_data_t *d)
{
    weft_data_lock(d);
    int dead = newest_on_dead_device_locked(d);
    weft_data_unlock(d);
    return dead;
}

/* On the owner: v, broadcast into buf, installed as its version when it is
 * newer than the owner's, or any when a body that failed on the owner may
 * have changed the owner's bytes (they were kept silently), or when the
 * owner's copies of its version died with a device (dead). */
static int install_good(weft_data_t *d, int from, uint32_t v, const char *buf, int dead)
{
    if (dead && v >= d->version)
        weft_warn("data %llu: its version v%u, lost here with the device that failed, comes home "
                  "from rank %d",
                  (unsigned long long)d->key, v, from);
    else if (dead) /* a later one was made here only: the newest good one is v */
        weft_warn("data %llu: its newest version v%u was lost here with the device that failed; "
                  "v%u, the newest another rank holds (rank %d), comes home: the next taskpool "
                  "starts from it",
                  (unsigned long long)d->key, d->version, v, from);
    if (!(v > d->version || d->lost_bytes || dead)) return WEFT_SUCCESS;
    weft_data_copy_t *c = NULL;
    int rc = weft_devcopy_host_flow(d, WEFT_W, &c);
    if (rc != WEFT_SUCCESS) return rc;
    weft_copy_cols(c->ptr, c->ld, buf, d->rows, d->rows, d->cols, d->elem);
    /* As a write: every other copy here (one the failed body may have
     * changed, on a device) is stale. At v itself (publish reads a version
     * 0 as "the next one"). */
    weft_data_lock(d);
    weft_data_written_at_locked(d, c->device, v);
    weft_data_copy_reader_release_locked(c);
    weft_data_unlock(d);
    weft_log(WEFT_LOG_INFO, -1,
             "data %llu: its newest good version v%u came home from rank %d after the failure",
             (unsigned long long)d->key, v, from);
    return WEFT_SUCCESS;
}

static int move_home(weft_context_t *ctx, weft_data_t *d, int from, uint32_t v)
{
    int me = ctx->rank, rc = WEFT_SUCCESS, bad;
    char *buf = malloc(d->bytes ? d->bytes : 1);
    if (!buf) rc = WEFT_ERR_NOMEM;
    if (me == from && rc == WEFT_SUCCESS) rc = read_good(ctx, d, v, buf);
    char why[160] = "";
    int crc = share_good(ctx, d, from, rc, buf, &bad, why, sizeof why);
    int ok = bad == INT_MAX;
    if (crc != WEFT_SUCCESS) { /* buf holds nothing this rank may install */
        free(buf);
        return crc;
    }
    if (!ok) {
        /* The owner's older version, when a body failed there, is the one
         * its host copy holds intact, if any (the failed bytes were kept,
         * the line below notwithstanding: a reviewer's finding). */
        if (me == d->owner_rank) (void)restore_older(d);
        /* on every rank: the next taskpool starts from an older version */
        weft_error("data %llu: its newest good version v%u, on rank %d, could not come home "
                   "after the failure (rank %d: %s): its owner, rank %d, keeps the older version "
                   "it holds",
                   (unsigned long long)d->key, v, from, bad, why, d->owner_rank);
        free(buf);
        return rc != WEFT_SUCCESS ? rc : WEFT_ERR_INTERNAL;
    }
    if (me == d->owner_rank) rc = install_good(d, from, v, buf, owner_lost_to_device(d));
    free(buf);
    return rc;
}

/* Per lost key: the newest version offered and its rank (MAXLOC). */
typedef struct {
    int version, rank;
} offer_t;

/* Per lost key, reduced with MAX over the ranks: whether a rank has no
 * handle of the data (it is then left alone), the version a failed body
 * overwrote where it was held (its bytes are gone), the owner's when its
 * bytes are good, the owner's when a body that failed there may have
 * changed them, and whether a rank has it as no NEW data (a registration,
 * a host write). Versions plus 1. */
enum {
    FACT_MISSING,
    FACT_DESTROYED,
    FACT_OWNER,
    FACT_OWNER_GONE,
    FACT_NOT_NEW,
    FACT_USER_MEM, /* the owner's host copy is the user's memory */
    /* The owner lost its bytes, but its stale host copy holds an older
     * version intact (weft_data_older_host_locked), also in FACT_OWNER. */
    FACT_OWNER_OLDER,
    /* The owner's copies at its version were all on devices that failed. */
    FACT_OWNER_DEAD,
    NFACTS
};

static void facts_of(const weft_data_t *d, int me, int *f)
{
    f[FACT_MISSING] = d == NULL;
    f[FACT_DESTROYED] = f[FACT_OWNER] = f[FACT_OWNER_GONE] = f[FACT_NOT_NEW] = 0;
    f[FACT_USER_MEM] = f[FACT_OWNER_OLDER] = f[FACT_OWNER_DEAD] = 0;
    if (!d) return;
    f[FACT_NOT_NEW] = !(d->flags & WEFT_DATA_NEW);
    weft_data_lock((weft_data_t *)d);
    if (d->owner_rank == me) {
        f[FACT_USER_MEM] = weft_data_in_user_memory(d);
        f[FACT_OWNER_DEAD] = newest_on_dead_device_locked(d);
    }
    if (d->lost_bytes) f[FACT_DESTROYED] = (int)d->version + 1;
    const weft_data_copy_t *older =
        d->owner_rank == me ? weft_data_older_host_locked((weft_data_t *)d) : NULL;
    if (older)
        f[FACT_OWNER] = f[FACT_OWNER_OLDER] = (int)older->version + 1;
    else if (d->owner_rank == me)
        f[d->lost_bytes ? FACT_OWNER_GONE : FACT_OWNER] = (int)d->version + 1;
    weft_data_unlock((weft_data_t *)d);
}

/* Says that d's version `gone` (plus 1) was overwritten where a body that
 * wrote it next failed, and what the next taskpool starts from: `keep`
 * (plus 1), or when no good version is left anywhere, the owner's copy as
 * the failed bodies there left it: an earlier one's bytes when the owner's
 * were lost at version `owner_gone` plus 1, older than `gone` (the line
 * named the later body, whose bytes were on another rank), else the last
 * one's there (not always the body that wrote `gone` next: a later write
 * that failed on the owner left its own; fuzzers' findings). user_mem:
 * that copy is the user's memory, said alike on every rank; dead: it was
 * on a device that failed (it was said to be the next start, and every
 * reader then failed on it as lost). */
static void say_gone(const weft_data_t *d, int gone, int keep, int owner_gone, int user_mem,
                     int dead)
{
    char mem[96] = "";
    if (user_mem)
        snprintf(mem, sizeof mem, " (the user's memory given to weft for it on rank %d)",
                 d->owner_rank);
    if (keep > 0)
        weft_warn("data %llu: its version v%d was held only where the task that wrote it next "
                  "failed, which may have changed its bytes: the next taskpool starts from v%d",
                  (unsigned long long)d->key, gone - 1, keep - 1);
    else if (owner_gone > 0 && owner_gone < gone)
        weft_warn("data %llu: its version v%d was held only where the task that wrote it next "
                  "failed, which may have changed its bytes, and the owner's copy (rank %d) holds "
                  "what an earlier failed task left in place of v%d: no good version is left, the "
                  "next taskpool starts from that copy%s",
                  (unsigned long long)d->key, gone - 1, d->owner_rank, owner_gone - 1, mem);
    else if (dead) /* that copy is gone too: readers fail, naming the device */
        weft_warn("data %llu: its version v%d was held only where the task that wrote it next "
                  "failed, on a device that failed with it: no version is left, the data has no "
                  "contents until a task or a host acquire writes it with WEFT_W",
                  (unsigned long long)d->key, gone - 1);
    else
        weft_warn("data %llu: its version v%d%s was held only where the task that wrote it next "
                  "failed, which may have changed its bytes: no good version is left, the next "
                  "taskpool starts from the owner's copy as the failed tasks there left it%s",
                  (unsigned long long)d->key, gone - 1,
                  gone == 1 && user_mem ? " (its contents as given to weft)" : "", mem);
}

/* No rank offers what a failed body overwrote, newer than the owner's
 * good version: that version is gone, said on every rank (the next
 * taskpool started from the owner's, which used to happen without a word;
 * from the failed body's bytes when it had failed on the owner). */
static void say_destroyed(const weft_data_t *d, const int *f, int offered)
{
    int keep = f[FACT_OWNER] > offered ? f[FACT_OWNER] : offered;
    if (f[FACT_DESTROYED] > keep)
        say_gone(d, f[FACT_DESTROYED], keep, f[FACT_OWNER_GONE], f[FACT_USER_MEM],
                 f[FACT_OWNER_DEAD]);
}

/* A NEW data of which no version is left on any rank: its first writer
 * failed, or the only version it had was on the rank where the task that
 * wrote it next failed (`destroyed`, that version). The ranks' inference
 * had counted those writes, and the rank that held the version kept its
 * number: a reader inserted next was accepted (on one rank alone,
 * refused) and failed at run time, by an "internal error" on the owner
 * that was to send a version it never had. Every rank now forgets them
 * alike, so that a reader is refused at insertion everywhere, saying why,
 * and weft_data_set_init is accepted. */
static void none_left(weft_data_t *d, int destroyed)
{
    destroyed = destroyed > 0 ? destroyed - 1 : 0; /* the version; 0: the first write failed */
    /* With an initialiser, a reader starts from the initial contents, as
     * before any write. */
    if (destroyed > 0)
        weft_warn("data %llu: its only version v%d was held where the task that wrote it next "
                  "failed, which may have changed its bytes: %s",
                  (unsigned long long)d->key, destroyed,
                  d->flags & WEFT_DATA_INIT
                      ? "the next taskpool starts from its initial contents (weft_data_set_init)"
                      : "no version of this NEW data is left");
    weft_remote_forget(d);
    weft_data_lock(d);
    /* A copy here holds what the failed body left (it failed on this
     * rank): none may pass for contents, or the initial ones are never
     * made ("data K has no contents" at the reader). */
    for (int i = 0; i < WEFT_MAX_DEVICES; i++)
        if (d->copies[i]) d->copies[i]->state = WEFT_COPY_INVALID;
    d->version = 0;
    d->flags &= ~(WEFT_DATA_NONE_LEFT | WEFT_DATA_FIRST_FAILED);
    d->flags |= destroyed > 0 ? WEFT_DATA_NONE_LEFT : WEFT_DATA_FIRST_FAILED;
    weft_data_unlock(d);
}

/* Per lost key, every rank's offer and facts reduced (best: MAXLOC,
 * facts: MAX); WEFT_ERR_NOMEM on every rank when one had no memory,
 * WEFT_ERR_MPI when a collective failed. */
static int gather_offers(weft_context_t *ctx, const uint64_t *keys, int n, weft_data_t **live,
                         size_t nlive, offer_t *best, int *facts)
{
    int ok = best && facts && live;
    for (int k = 0; ok && k < n; k++) {
        weft_data_t *d = weft_keyset_find(live, nlive, keys[k]);
        best[k] = (offer_t){offer(d, ctx->rank), ctx->rank};
        facts_of(d, ctx->rank, facts + (size_t)k * NFACTS);
    }
    int rc = weft_coll_all(ctx, &ok, RECOVER_WHERE);
    if (rc == WEFT_SUCCESS && !ok) return WEFT_ERR_NOMEM;
    if (rc == WEFT_SUCCESS)
        rc = weft_coll_check(ctx,
                             MPI_Allreduce(MPI_IN_PLACE, best, n, MPI_2INT, MPI_MAXLOC, ctx->comm),
                             RECOVER_WHERE);
    if (rc == WEFT_SUCCESS)
        rc = weft_coll_check(
            ctx, MPI_Allreduce(MPI_IN_PLACE, facts, n * NFACTS, MPI_INT, MPI_MAX, ctx->comm),
            RECOVER_WHERE);
    return rc;
}

static int bring_home(weft_context_t *ctx, const uint64_t *keys, int n, weft_data_t **live,
                      size_t nlive)
{
    offer_t *best = malloc(((size_t)n + 1) * sizeof *best);
    int *facts = malloc(((size_t)n * NFACTS + 1) * sizeof *facts);
    int grc = gather_offers(ctx, keys, n, live, nlive, best, facts), rc = grc;
    for (int k = 0; grc == WEFT_SUCCESS && k < n; k++) {
        const int *f = facts + (size_t)k * NFACTS;
        weft_data_t *d = weft_keyset_find(live, nlive, keys[k]);
        if (f[FACT_MISSING]) continue;
        /* Nothing offered and the owner holds no contents (version 0 of a
         * NEW data is none, or initial contents a failed first writer
         * wrote into). A later version a body failed on at the owner stays
         * there, said: the data holds what the failed bodies left. */
        /* So is a version 0 of a data with an initialiser offered by a
         * rank that made the initial contents itself for a task that was
         * cancelled there: the owner never held them, yet the ranks'
         * inference counted that task's write, and the next reader, taken
         * for one of a written data, found no contents (a fuzzer's
         * finding). Any rank makes them again. */
        int initial = (d->flags & WEFT_DATA_INIT) && best[k].version <= 1;
        if ((best[k].version <= 0 || initial) && f[FACT_OWNER] <= 1 && f[FACT_OWNER_GONE] <= 1 &&
            !f[FACT_NOT_NEW]) {
            none_left(d, f[FACT_DESTROYED]);
            continue;
        }
        say_destroyed(d, f, best[k].version);
        /* No rank offers a newer one than the owner's older intact copy:
         * the owner goes back to it, and every rank skips the move alike. */
        if (f[FACT_OWNER_OLDER] > 0 && best[k].version <= f[FACT_OWNER_OLDER]) {
            if (d->owner_rank == ctx->rank) (void)restore_older(d);
            continue;
        }
        if (best[k].version <= 0) continue;
        int mrc = move_home(ctx, d, best[k].rank, (uint32_t)best[k].version - 1);
        if (rc == WEFT_SUCCESS || mrc == WEFT_ERR_MPI) rc = mrc;
        if (mrc == WEFT_ERR_MPI) break; /* the context diverged: no collective follows */
    }
    free(best);
    free(facts);
    return rc;
}

/* Whether the user released d, of the user's own memory, while tp's
 * tasks used it: that memory is still the user's, given back at this wait
 * with what it holds then (docs/SEMANTICS.md section 3), so the good
 * version comes home to it as for a live data. Before, a release made
 * before the wait let the failed body's bytes into it without a word. A
 * NEW data released is nobody's concern: no one can read it. */
static int released_user_data(const weft_data_t *d)
{
    return (d->flags & WEFT_DATA_RELEASED) && !(d->flags & WEFT_DATA_NEW);
}

/* tp's data released_user_data, malloc'ed (NULL when none or out of
 * memory: then they are left out, as before), their count *n. */
static weft_data_t **released_in_user_memory(weft_taskpool_t *tp, size_t *n)
{
    weft_data_t **v = malloc((tp->touched.n + 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if (released_user_data(d)) v[(*n)++] = d;
    }
    return v;
}

/* One rank: nothing can come home, but a version a failed body may have
 * overwritten is gone all the same, said as on several ranks (the next
 * taskpool started from the body's bytes without a word). */
static void recover_alone(weft_taskpool_t *tp)
{
    for (size_t i = 0; i < tp->touched.n; i++) {
        weft_data_t *d = weft_taskpool_touched(tp, i);
        if ((d->flags & WEFT_DATA_RELEASED) && !released_user_data(d)) continue;
        weft_data_lock(d);
        int gone = d->lost_bytes ? (int)d->version + 1 : 0, is_new = d->flags & WEFT_DATA_NEW;
        int dead = newest_on_dead_device_locked(d);
        weft_data_unlock(d);
        /* A NEW data's version 0 is no contents (its first writer failed),
         * or initial contents the failed body wrote into: made again, as
         * on several ranks. A later version stays as the body left it. */
        if (gone == 1 && is_new)
            none_left(d, gone);
        else if (gone > 0) /* the one rank owns it */
            say_gone(d, gone, restore_older(d), gone, weft_data_in_user_memory(d), dead);
    }
}

int weft_recover_good_versions(weft_taskpool_t *tp)
{
    weft_context_t *ctx = tp->ctx;
    if (ctx->sim) return WEFT_SUCCESS;
    if (ctx->nranks == 1) {
        if (atomic_load(&tp->fail.nfailed) > 0) recover_alone(tp);
        return WEFT_SUCCESS;
    }
    if (!any_failure(tp)) return WEFT_SUCCESS;
    uint64_t *keys = NULL;
    int n = 0, rc = lost_keys(tp, &keys, &n);
    if (rc != WEFT_SUCCESS || n == 0) {
        free(keys);
        return rc;
    }
    size_t nlive = 0, nfreed = 0;
    weft_data_t **freed = released_in_user_memory(tp, &nfreed);
    weft_data_t **live = weft_keyset_live(ctx, freed, nfreed, &nlive);
    rc = bring_home(ctx, keys, n, live, nlive);
    free(live);
    free(freed);
    free(keys);
    return rc;
}
