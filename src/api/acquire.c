/* The host's access to a data between taskpools (docs/SEMANTICS.md section
 * 1): an acquire brings the newest version into the host copy and holds
 * the data away from tasks; its release after a write leaves the host
 * copy as the only current one, so the next task on a device stages it in
 * again instead of reading an older device copy. */
#include "api/data_api.h"
#include "devmgr/devmgr.h"
#include "stf/flowcheck.h"
#include "stf/sim.h"
#include "util/log.h"

int weft_acquire_check_mode(int mode, const char *call)
{
    if (mode == WEFT_R || mode == WEFT_W || mode == WEFT_RW) return WEFT_SUCCESS;
    weft_error("%s: mode 0x%x is not WEFT_R, WEFT_W or WEFT_RW", call, mode);
    return WEFT_ERR_INVALID;
}

/* The data may be given to the host now: no taskpool still uses it, the
 * host does not hold it already. */
static int check_free(const weft_data_t *d, const char *call)
{
    if (weft_data_check_between(d, call) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    if (d->host_access) {
        weft_error("%s: data %llu is acquired by the host already: call weft_data_host_release "
                   "first",
                   call, (unsigned long long)d->key);
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

/* No copy of this rank holds contents the host could read. */
static int not_held(const weft_data_t *d, const char *call)
{
    int rank = d->ctx->rank;
    if (d->owner_rank != rank)
        weft_error("%s: data %llu is held by rank %d, not by this rank %d: acquire it on its "
                   "owner",
                   call, (unsigned long long)d->key, d->owner_rank, rank);
    else
        weft_error("%s: data %llu has no contents yet (a NEW data that no task wrote): acquire "
                   "it with WEFT_W, or write it with a task first",
                   call, (unsigned long long)d->key);
    return WEFT_ERR_INVALID;
}

/* Makes the host copy hold what the mode needs: the newest version to
 * read, or memory to write (a write-only access skips the transfer). */
static int bring_home(weft_data_t *d, int mode, const char *call)
{
    weft_data_lock(d);
    int held = weft_data_newest_copy_locked(d, -1) != NULL;
    int has_host = d->copies[0] != NULL;
    weft_data_unlock(d);
    int mine = d->owner_rank == d->ctx->rank;
    /* A NEW data with an initialiser that no task wrote: its contents are
     * the initial ones, made here as a first reading task would. */
    if (!held && mine && (mode & WEFT_R) && (d->flags & WEFT_DATA_NEW) &&
        (d->flags & WEFT_DATA_INIT) && d->version == 0) {
        int rc = weft_data_init_contents(d, d->ctx->hostmem);
        if (rc != WEFT_SUCCESS) return rc;
        held = 1;
    }
    if (!held && ((mode & WEFT_R) || !mine)) return not_held(d, call);
    int rc = WEFT_SUCCESS;
    if (mode & WEFT_R) {
        rc = weft_devexec_flush_data(d);
    } else if (!has_host) {
        weft_data_copy_t *h = NULL;
        rc = weft_devcopy_host_flow(d, WEFT_W, &h);
        if (rc == WEFT_SUCCESS) {
            weft_data_lock(d);
            weft_data_copy_reader_release_locked(h);
            weft_data_unlock(d);
        }
    }
    if (rc != WEFT_SUCCESS)
        weft_error("%s: data %llu: its newest version could not come to host memory: %s", call,
                   (unsigned long long)d->key, weft_strerror(rc));
    return rc;
}

/* A simulated rank's tiles have no memory: the host gets the scratch that
 * stands in for every tile (docs/SCALE.md), so that an application's
 * loops over its tiles run; what they write there is not kept. */
static int acquire_scratch(weft_data_t *d, int mode, const char *call, void **ptr, int64_t *ld)
{
    if (d->owner_rank != d->ctx->rank) return not_held(d, call);
    void *p = weft_sim_scratch(d->ctx, d->bytes);
    if (!p) {
        weft_error("%s: out of host memory for a simulated tile of %zu bytes", call, d->bytes);
        return WEFT_ERR_NOMEM;
    }
    *ptr = p;
    *ld = d->rows;
    d->host_access = mode;
    return WEFT_SUCCESS;
}

/* Whether a simulated rank's data has a host copy holding its newest
 * version: a data of the user's memory, or a NEW data no task wrote.
 * Versions its simulated tasks published are in no memory (a NEW data with
 * an initialiser, written by tasks, was refused as having "no contents
 * yet"): the scratch stands for them. */
static int sim_host_newest(weft_data_t *d)
{
    weft_data_lock(d);
    int newest =
        d->copies[0] && (d->version == 0 || weft_data_copy_is_newest_locked(d, d->copies[0]));
    weft_data_unlock(d);
    return newest;
}

int weft_acquire_host(weft_data_t *d, int mode, const char *call, void **ptr, int64_t *ld)
{
    int rc = weft_acquire_check_mode(mode, call);
    if (rc == WEFT_SUCCESS) rc = check_free(d, call);
    if (rc == WEFT_SUCCESS && (mode & WEFT_W)) rc = weft_data_check_outside_write(d, call);
    if (rc == WEFT_SUCCESS && d->ctx->sim && !sim_host_newest(d))
        return acquire_scratch(d, mode, call, ptr, ld);
    if (rc == WEFT_SUCCESS) rc = bring_home(d, mode, call);
    if (rc != WEFT_SUCCESS) return rc;
    weft_data_lock(d);
    weft_data_copy_t *h = d->copies[0];
    int ok = h && (!(mode & WEFT_R) || weft_data_copy_is_newest_locked(d, h));
    if (ok) {
        *ptr = h->ptr;
        *ld = h->ld;
    }
    weft_data_unlock(d);
    if (!ok) {
        weft_error("%s: data %llu: no host copy at its newest version v%u", call,
                   (unsigned long long)d->key, d->version);
        return WEFT_ERR_INTERNAL;
    }
    d->host_access = mode;
    if (!(mode & WEFT_R)) weft_devexec_flush_give_up(d);
    /* check_reads: a write through a read acquire's pointer reaches only
     * the host copy (device copies and other ranks keep the version), so
     * it is looked for at the release. */
    d->host_hashed = mode == WEFT_R && atomic_load(&d->ctx->check_reads);
    if (d->host_hashed) d->host_hash = weft_flowcheck_hash(d, *ptr, *ld);
    return WEFT_SUCCESS;
}

int weft_acquire_check_read(weft_data_t *d, const char *call)
{
    int hashed = d->host_hashed;
    d->host_hashed = 0;
    if (!hashed || d->host_access != WEFT_R) return WEFT_SUCCESS;
    weft_data_lock(d);
    const weft_data_copy_t *h = d->copies[0];
    uint64_t now = h ? weft_flowcheck_hash(d, h->ptr, h->ld) : d->host_hash;
    weft_data_unlock(d);
    if (now == d->host_hash) return WEFT_SUCCESS;
    weft_error("%s: data %llu was written through the pointer of a read acquire (WEFT_R; "
               "check_reads): the write is in the host copy only, not where devices or other "
               "ranks hold the version; acquire with WEFT_RW or WEFT_W to write",
               call, (unsigned long long)d->key);
    return WEFT_ERR_INVALID;
}

void weft_acquire_end(weft_data_t *d)
{
    if (d->host_access & WEFT_W) {
        /* A simulated tile has no copy to make current. */
        weft_data_lock(d);
        if (d->copies[0]) weft_data_copy_set_current_locked(d, 0);
        weft_data_unlock(d);
        d->flags &= ~WEFT_DATA_NEW;
    }
    d->host_access = 0;
}

int weft_data_host_acquire(weft_data_t *d, int mode, void **ptr, int64_t *ld)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_host_acquire", 1))
        return WEFT_ERR_INVALID;
    if (!ptr) {
        weft_error("weft_data_host_acquire: argument 3 is NULL: pass the address of a pointer "
                   "to receive the host memory");
        return WEFT_ERR_INVALID;
    }
    void *p = NULL;
    int64_t l = 0;
    int rc = weft_acquire_host(d, mode, "weft_data_host_acquire", &p, &l);
    if (rc != WEFT_SUCCESS) return rc;
    *ptr = p;
    if (ld) *ld = l;
    return WEFT_SUCCESS;
}

int weft_data_host_release(weft_data_t *d)
{
    if (!weft_handle_check_main(d, WEFT_HANDLE_DATA, "weft_data_host_release", 1))
        return WEFT_ERR_INVALID;
    if (!d->host_access) {
        weft_error("weft_data_host_release: data %llu is not acquired: call "
                   "weft_data_host_acquire first",
                   (unsigned long long)d->key);
        return WEFT_ERR_INVALID;
    }
    int rc = weft_acquire_check_read(d, "weft_data_host_release");
    weft_acquire_end(d);
    return rc;
}
