/* The reads of NEW data an insertion takes or refuses (newread.h). */
#include "stf/newread.h"

#include "stf/insert.h"
#include "stf/record.h"
#include "stf/remote.h"
#include "util/log.h"

int weft_insert_never_written(const weft_data_t *d)
{
    const weft_stf_rec_t *rec = weft_stf_rec(d);
    return (d->flags & WEFT_DATA_NEW) && (!rec || !rec->written) && d->version == 0 &&
           weft_remote_version(d) == 0;
}

/* A NEW data that only its owner's host wrote (an acquire for write, a
 * device registration with current contents), no initialiser, no task:
 * the other ranks cannot see that local write and refuse a task that
 * reads it, so the owner refuses it too (it accepted: the ranks' sequences
 * parted, and every later wait failed with WEFT_ERR_MISMATCH). */
static int written_by_owner_host_only(const weft_data_t *d)
{
    /* The flags first: they sit in the data's first cache line, which
     * every rank reads at every insertion (docs/SCALE.md); most data are
     * no NEW data, and the context is not read for them. */
    return (d->flags & (WEFT_DATA_NEW | WEFT_DATA_MADE_NEW | WEFT_DATA_INIT)) ==
               WEFT_DATA_MADE_NEW &&
           weft_remote_version(d) == 0 && d->ctx->nranks > 1;
}

/* The same for a reducible data with an initialiser (the one kind whose
 * owner may write it outside tasks, api/data_api.c): the other ranks make
 * its initial contents themselves and accept a task that reads it, so the
 * owner's refusal parts the ranks' sequences (every rank's wait then
 * fails, WEFT_ERR_MISMATCH, the owner's line naming why), where accepting
 * it had the other ranks read the initial contents, or wait for ever for
 * a tile the owner sent. */
static int init_overwritten_by_owner_host(const weft_data_t *d)
{
    return (d->flags & (WEFT_DATA_NEW | WEFT_DATA_MADE_NEW | WEFT_DATA_INIT)) ==
               (WEFT_DATA_MADE_NEW | WEFT_DATA_INIT) &&
           d->version == 0 && weft_remote_version(d) == 0 && d->ctx->nranks > 1;
}

/* A simulated rank sees the writes of its own part of a graph only
 * (ptgsettle.c): a NEW data made before a graph and never written here
 * may have been written by the graph on another simulated rank, which a
 * real run tells every rank. Read as never written, its initial contents
 * were made here and no receive counted, silently (a stranger's
 * comparison with a real run: one receive fewer on every reader rank). */
int weft_newread_sim_unseen(const weft_data_t *d, const char *what)
{
    weft_context_t *ctx = d->ctx;
    if (!ctx->sim || d->key >= ctx->sim_graph_keys) return 0;
    if (!ctx->sim_unseen_said)
        weft_warn("sim: %s NEW data %llu, never written here: a graph since it was made may "
                  "have written it on another simulated rank, which this rank does not see (a "
                  "real run would receive that version: one more receive, no initial contents "
                  "made, and weft_data_set_init refused; docs/SCALE.md); said once",
                  what, (unsigned long long)d->key);
    ctx->sim_unseen_said = 1;
    return 1;
}

int weft_newread_check(const weft_task_t *t, int i, int by_weft)
{
    const weft_data_t *d = t->flow[i].data;
    if (!(t->flow[i].mode & WEFT_R)) return 0;
    int never_written = weft_insert_never_written(d);
    if (never_written && (d->flags & WEFT_DATA_INIT)) {
        weft_newread_sim_unseen(d, "an insertion reads");
        return 1;
    }
    if (never_written && (d->flags & WEFT_DATA_FIRST_FAILED))
        weft_error("insert %s: reads NEW data %llu, whose first writer failed: no version of it "
                   "exists; write it (WEFT_W) or give it initial contents (weft_data_set_init) "
                   "first",
                   t->cls->name, (unsigned long long)d->key);
    else if (never_written && (d->flags & WEFT_DATA_NONE_LEFT))
        weft_error("insert %s: reads NEW data %llu, whose only version a task that failed "
                   "overwrote: no version of it is left; write it (WEFT_W) or give it initial "
                   "contents (weft_data_set_init) first",
                   t->cls->name, (unsigned long long)d->key);
    else if (never_written && weft_newread_sim_unseen(d, "an insertion refused here reads"))
        weft_error("insert %s: reads NEW data %llu, which no task wrote on this simulated rank "
                   "(a simulated rank does not see another's writes: docs/SCALE.md)",
                   t->cls->name, (unsigned long long)d->key);
    else if (never_written)
        weft_error("insert %s: reads NEW data %llu before any task wrote it (give it initial "
                   "contents with weft_data_set_init)",
                   t->cls->name, (unsigned long long)d->key);
    else if (written_by_owner_host_only(d))
        weft_error("insert %s: reads NEW data %llu, whose contents only this rank wrote outside "
                   "tasks (a host write, or a device registration with current contents): the "
                   "other ranks cannot see that write and refuse the task; on several ranks "
                   "give it contents with weft_data_set_init or a task",
                   t->cls->name, (unsigned long long)d->key);
    else if (!by_weft && init_overwritten_by_owner_host(d))
        weft_error("insert %s: reads NEW data %llu, which only this rank wrote outside tasks (a "
                   "host write or a device registration) before any task did: the other ranks make "
                   "its initial contents (weft_data_set_init) "
                   "themselves and cannot see that write; reduce into it or write it in a task "
                   "first",
                   t->cls->name, (unsigned long long)d->key);
    else
        return 0;
    return WEFT_ERR_INVALID;
}
