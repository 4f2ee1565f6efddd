/* Ranks of one node that use the same physical device split its memory:
 * one collective over the node's ranks tells each rank how many devices
 * of the node carry the identity of each of its own (a GPU's UUID, an emu
 * device's index) and the least free memory any of them measured, before
 * any of them reserves a zone. Without it, the first rank would take most
 * of a shared GPU and the others could not even create their library
 * handles. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devmgr/devmgr.h"
#include "params/params.h"
#include "util/ending.h"
#include "util/log.h"

/* What one rank contributes: its devices, or a failure marker (ok = 0)
 * when its own opening failed, so that the others never wait for it. */
typedef struct devshare_dev {
    char key[WEFT_DEVICE_KEY_MAX];
    uint64_t free_bytes;
    uint64_t asked_bytes; /* an emu device's device_emu_memory, 0 for the others */
} devshare_dev_t;

typedef struct devshare_rec {
    int32_t ok;
    int32_t n;
    devshare_dev_t dev[WEFT_MAX_DEVICES - 1];
} devshare_rec_t;

/* This rank's record; ok = 0 when it has no devices to show or one of
 * them cannot name itself. */
static int fill_record(weft_devices_t *ds, devshare_rec_t *rec)
{
    memset(rec, 0, sizeof *rec);
    if (!ds) return WEFT_SUCCESS;
    for (int i = 1; i <= ds->n; i++) {
        weft_device_t *dev = ds->dev[i];
        int rc = dev->ops->identity(dev, rec->dev[i - 1].key, WEFT_DEVICE_KEY_MAX);
        if (rc != WEFT_SUCCESS) {
            weft_error("%s: cannot tell which physical device it is: %s", dev->name,
                       weft_strerror(rc));
            return rc;
        }
        rec->dev[i - 1].key[WEFT_DEVICE_KEY_MAX - 1] = '\0';
        rec->dev[i - 1].free_bytes = dev->share.free_min;
        rec->dev[i - 1].asked_bytes =
            dev->ops->type == WEFT_DEV_EMU
                ? (uint64_t)weft_params_int(dev->params, "device_emu_memory")
                : 0;
    }
    rec->n = ds->n;
    rec->ok = 1;
    return WEFT_SUCCESS;
}

/* Counts, over the records of the node's ranks that opened their devices,
 * the devices named like dev, and the least free memory among them; 1 in
 * *first when no rank before `me` (this rank's record) names it. Ranks
 * that share an emu device given different device_emu_memory are refused,
 * named (the smallest silently won). Only the size asked is compared: the
 * one each rank measures also depends on /dev/shm's free space at its
 * opening and on its count of emu devices; and a GPU's total may differ
 * between its clients (MPS memory limits), where the least free one wins. */
static int count_sharers(weft_device_t *dev, const devshare_dev_t *mine, const devshare_rec_t *all,
                         int nrec, int me, int *first)
{
    int sharers = 0;
    uint64_t free_min = dev->share.free_min;
    *first = 1;
    for (int r = 0; r < nrec; r++) {
        if (!all[r].ok) continue;
        for (int j = 0; j < all[r].n; j++) {
            if (strncmp(all[r].dev[j].key, mine->key, WEFT_DEVICE_KEY_MAX) != 0) continue;
            sharers++;
            if (r < me) *first = 0;
            if (all[r].dev[j].free_bytes < free_min) free_min = all[r].dev[j].free_bytes;
            if (all[r].dev[j].asked_bytes != mine->asked_bytes) {
                weft_error("%s is shared with another rank of this node given "
                           "device_emu_memory=%llu, %llu here: give the ranks that share an emu "
                           "device the same device_emu_memory",
                           dev->name, (unsigned long long)all[r].dev[j].asked_bytes,
                           (unsigned long long)mine->asked_bytes);
                return WEFT_ERR_PARAM;
            }
        }
    }
    dev->share.sharers = sharers > 0 ? sharers : 1;
    dev->share.free_min = (size_t)free_min;
    return WEFT_SUCCESS;
}

/* Ranks that share a device which runs one process's kernels at a time
 * (a CUDA GPU without MPS) get part of its rate: said once a device, by
 * the first of them, with the way out. */
static void warn_time_sliced(const weft_device_t *dev, int first)
{
    if (!first || dev->share.sharers < 2 || !(dev->caps & WEFT_DEVCAP_TIME_SLICED)) return;
    weft_warn("%s is shared by %d ranks of this node and runs one process's kernels at a time "
              "(no MPS control daemon found): the ranks take turns on it. Starting "
              "'nvidia-cuda-mps-control -d' before the job lets their kernels run side by side "
              "(docs/RESULTS.md, \"Ranks sharing a GPU\")",
              dev->name, dev->share.sharers);
}

static int gather_node(MPI_Comm comm, const devshare_rec_t *mine, devshare_rec_t **all, int *nrec,
                       int *me)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return WEFT_ERR_MPI;
    int size = 0;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, me);
    *all = calloc((size_t)size, sizeof **all);
    if (!*all) {
        /* The other ranks are in the collective already and this rank has
         * nowhere to receive: ending the job is the only way not to leave
         * them waiting. */
        weft_error("out of memory for the device records of %d ranks: ending the job", size);
        weft_abort_job(comm, EXIT_FAILURE);
        return WEFT_ERR_NOMEM;
    }
    int rc = MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, *all, (int)sizeof *mine, MPI_BYTE,
                           node) == MPI_SUCCESS
                 ? WEFT_SUCCESS
                 : WEFT_ERR_MPI;
    MPI_Comm_free(&node);
    *nrec = size;
    return rc;
}

int weft_devshare_count(weft_context_t *ctx, weft_devices_t *ds)
{
    devshare_rec_t mine;
    int rc = fill_record(ds, &mine);
    if (rc != WEFT_SUCCESS) mine.ok = 0;
    devshare_rec_t *all = NULL;
    int nrec = 0, me = 0;
    int grc = gather_node(ctx->comm, &mine, &all, &nrec, &me);
    if (rc == WEFT_SUCCESS) rc = grc;
    if (rc == WEFT_SUCCESS && ds) {
        for (int i = 1; i <= ds->n && rc == WEFT_SUCCESS; i++) {
            int first = 0;
            rc = count_sharers(ds->dev[i], &mine.dev[i - 1], all, nrec, me, &first);
            if (rc == WEFT_SUCCESS) warn_time_sliced(ds->dev[i], first);
        }
    }
    free(all);
    return rc;
}
