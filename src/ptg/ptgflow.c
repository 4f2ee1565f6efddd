/* The versions of a graph as one rank sees them (docs/PTG.md): for each
 * flow of a local task, the version it reads or replaces (made here, brought
 * by a RECV, or the data's own from before the graph) and the version it
 * writes (sent once to each other rank with a consumer). Versions are
 * matched across ranks by their depth in the graph (label), which both
 * ends compute from the producer functions alone; a version's number is
 * the data's net_version plus its depth, alike on every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptg/ptg.h"
#include "stf/remote.h"

#define ver weft_ptg__ver

/* The version of d from before the graph: one key per data. */
static weft_ptg_ref_t initial_key(const weft_data_t *d)
{
    weft_ptg_ref_t k = {.cls = -1, .flow = -1};
    k.idx[0] = (int)(uint32_t)d->key;
    k.idx[1] = (int)(uint32_t)(d->key >> 32);
    return k;
}

/* The note that ends a consumer's refusal, naming p, whose consumers
 * function listed it: the mistake may be in that function (it named c
 * alone, a stranger's note). Formatted only for a refusal. */
#define LISTED_BY_LEN 200
static void listed_by(const weft_ptg_build_t *b, const weft_ptg_ref_t *p, char *buf, size_t n)
{
    char name[160];
    weft_ptg__ref_text(b, p, name, sizeof name);
    snprintf(buf, n, "the consumers of %s name it", name);
}

/* The flows of a task that name one data are one flow, the first of them
 * (its version, its producer and its consumers are asked and kept under
 * that flow): a reference to another of them is refused, naming it, and
 * the task whose function made the reference (`by`, NULL when none did):
 * for a consumer the task whose consumers function listed it, for a
 * producer or forwarder the consumer whose producer function named it
 * (the mistake is in that function; the line named r alone). */
static int check_repeated(const weft_ptg_build_t *b, const weft_ptg_ref_t *r, const weft_task_t *w,
                          const char *as, const weft_ptg_ref_t *by)
{
    int f = r->flow, first = f < w->nflows ? weft_task_first_flow_of(w, f) : f;
    if (first == f) return WEFT_SUCCESS;
    char note[LISTED_BY_LEN + 3] = "";
    if (by && !strcmp(as, "consumer")) {
        char text[LISTED_BY_LEN];
        listed_by(b, by, text, sizeof text);
        snprintf(note, sizeof note, " (%s)", text);
    } else if (by) {
        char name[160];
        weft_ptg__ref_text(b, by, name, sizeof name);
        snprintf(note, sizeof note, " (the producer function of %s names it)", name);
    }
    return weft_ptg__fail(b, r,
                          "is named as a %s by its flow %d, which holds the data of its flow "
                          "%d%s: a task that names a data in several flows is named by the first "
                          "of them (name flow %d)",
                          as, f, first, note, first);
}

/* Whether consumer c's producer function names p back, with the kind
 * p's part in version vi gives (1: p wrote it; 2: p passes it on); else
 * logged, on p and on c. */
static int names_back(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p,
                      const weft_ptg_ref_t *c)
{
    weft_ptg_ref_t back;
    int has = weft_ptg__producer_of(b, c, &back);
    if (has < 0) return WEFT_ERR_INVALID;
    int kind = ver(b, vi)->canon == vi ? 1 : 2;
    int same = has > 0 && weft_ptg__same_ref(&back, p);
    if (same && has == kind) return WEFT_SUCCESS;
    /* Another flow of p that holds the same data: named as such. */
    int same_task = has > 0 && !same && weft_ptg__same_task(&back, p);
    const weft_task_t *pt = same_task ? weft_ptg__local(b, p) : NULL;
    if (pt && check_repeated(b, &back, pt, has == 2 ? "forwarder" : "producer", c) != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    weft_ptg__fail(b, p,
                   "lists a consumer of its flow %d whose producer function does not name "
                   "it back",
                   p->flow);
    if (same)
        return weft_ptg__fail(b, c,
                              "(that consumer, flow %d) names it with %d, but it %s the version "
                              "(name it with %d)",
                              c->flow, has, kind == 1 ? "writes" : "passes on", kind);
    if (same_task)
        return weft_ptg__fail(b, c,
                              "(that consumer, flow %d) names that task's flow %d as its "
                              "producer, not its flow %d",
                              c->flow, back.flow, p->flow);
    if (!has) return weft_ptg__fail(b, c, "(that consumer, flow %d) names no producer", c->flow);
    if (weft_ptg__same_task(&back, c))
        return weft_ptg__fail(b, c, "(that consumer, flow %d) names itself as its producer",
                              c->flow);
    char other[160];
    weft_ptg__ref_text(b, &back, other, sizeof other);
    return weft_ptg__fail(b, c, "(that consumer, flow %d) names another task as its producer: %s",
                          c->flow, other);
}

/* Consumer c (listed by p) as a task: this rank's own, else its arguments
 * parsed into *w; NULL after logging when it has no flow c->flow, or that
 * flow repeats an earlier one's data. */
static const weft_task_t *consumer_task(weft_ptg_build_t *b, const weft_ptg_ref_t *p,
                                        const weft_ptg_ref_t *c, weft_task_t *w)
{
    const weft_task_t *t = weft_ptg__local(b, c);
    if (!t) {
        if (weft_ptg__parse(b, c, w, NULL) != WEFT_SUCCESS) return NULL;
        t = w;
    }
    if (c->flow >= t->nflows) {
        char by[LISTED_BY_LEN];
        listed_by(b, p, by, sizeof by);
        weft_ptg__fail(b, c, "is named as a consumer by its flow %d, which it does not have (%s)",
                       c->flow, by);
        return NULL;
    }
    return check_repeated(b, c, t, "consumer", p) == WEFT_SUCCESS ? t : NULL;
}

/* Consumer c, a task of this rank, has its flow, which holds d (NULL: not
 * known yet); else logged. */
static int check_consumer_flow(weft_ptg_build_t *b, const weft_ptg_ref_t *p,
                               const weft_ptg_ref_t *c, const weft_data_t *d)
{
    weft_task_t w;
    const weft_task_t *t = consumer_task(b, p, c, &w);
    if (!t) return WEFT_ERR_INVALID;
    if (d && t->flow[c->flow].data != d) {
        char by[LISTED_BY_LEN];
        listed_by(b, p, by, sizeof by);
        return weft_ptg__fail(b, c,
                              "is named as a consumer of data %llu by its flow %d, which holds "
                              "data %llu (%s)",
                              (unsigned long long)d->key, c->flow,
                              (unsigned long long)t->flow[c->flow].data->key, by);
    }
    return WEFT_SUCCESS;
}

/* A consumer on this rank of p's version vi, checked as one on another
 * rank is: its flow holds the version's data, and its producer function
 * names p back. Its edge comes from its own producer function, and only
 * the count of such consumers was checked: a list naming other tasks of
 * this rank passed, the check of final versions (ptgfinal.c), which reads
 * the listed consumers' modes, then let a version written away from its
 * owner stand (wrong data on the owner and rc 0, a stranger's graph), and
 * graphs that passed on one rank were refused on two. */
static int check_local_consumer(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p,
                                const weft_ptg_ref_t *c)
{
    if (check_consumer_flow(b, p, c, ver(b, vi)->data) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    return names_back(b, vi, p, c);
}

/* Consumer c (its flow included) is listed, on this rank, by the producer
 * on another rank of version vi: the task that names that producer must be
 * c, once. */
static int expect_consumer(weft_ptg_build_t *b, const weft_ptg_ref_t *c, size_t vi)
{
    size_t other = weft_ptgmap_get(&b->expect, c);
    if (other == SIZE_MAX) return weft_ptgmap_put(&b->expect, c, vi);
    char name[160];
    weft_ptg__ref_text(b, c, name, sizeof name);
    return weft_ptg__fail(b, &ver(b, vi)->key,
                          "its consumers function lists %s (flow %d), which %s lists already (a "
                          "version reaches a task's flow once)",
                          name, c->flow, other == vi ? "it" : "another producer");
}

static int add_user(weft_ptg_build_t *b, size_t vi, weft_task_t *t)
{
    weft_ptg_link_t l = {.task = t, .next = ver(b, vi)->users};
    if (weft_vec_push(&b->links, &l) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    ver(b, vi)->users = b->links.n - 1;
    return WEFT_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Consumer c's mode on the data of its flow (WEFT_R, WEFT_W or both); -1
 * after logging. */
static int consumer_mode(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_ptg_ref_t *c)
{
    weft_task_t w;
    const weft_task_t *t = consumer_task(b, p, c, &w);
    if (!t) return -1;
    int mode = 0;
    for (int j = 0; j < t->nflows; j++)
        if (t->flow[j].data == t->flow[c->flow].data) mode |= t->flow[j].mode;
    return mode & WEFT_RW;
}

/* The consumers of p's output: those here counted into vi's listed, those
 * on other ranks each checked to name p back; one SEND to each such rank
 * where one reads it, after `after` (pt for a writer; for a forwarder what
 * put the bytes here, fwd_after, or the version's maker if one is built
 * here later: that edge is set in weft_ptg__finish; NULL: they are here). */
static int make_sends(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, weft_task_t *pt,
                      weft_task_t *after, size_t n)
{
    weft_ptg_ver_t *v = ver(b, vi);
    int *ranks = malloc((n ? n : 1) * sizeof *ranks), nr = 0, listed = 0;
    if (!ranks) return WEFT_ERR_NOMEM;
    for (size_t c = 0; c < n; c++) {
        weft_ptg_ref_t cr = ((weft_ptg_ref_t *)b->refs.data)[c];
        int r = weft_ptg__rank(b, &cr);
        if (r < 0) goto bad;
        if (r == b->me) {
            if (check_local_consumer(b, vi, p, &cr) != WEFT_SUCCESS) goto bad;
            listed++;
            continue;
        }
        if (!weft_ptg__enumerated_by(b, &cr, r)) goto bad;
        int mode = consumer_mode(b, p, &cr);
        if (mode < 0) goto bad;
        int reads = (mode & WEFT_R) != 0;
        ver(b, vi)->remote_writers += (mode & WEFT_W) != 0;
        if (names_back(b, vi, p, &cr) != WEFT_SUCCESS) goto bad;
        if (weft_ptg__note_end(b, p, &cr, b->me, r, ver(b, vi)->data, 1) != WEFT_SUCCESS) {
            free(ranks);
            return WEFT_ERR_NOMEM;
        }
        /* A consumer that only replaces the version needs no bytes. */
        if (reads) ranks[nr++] = r;
    }
    ver(b, vi)->listed = listed;
    qsort(ranks, (size_t)nr, sizeof *ranks, cmp_int);
    for (int k = 0; k < nr; k++) {
        if (k > 0 && ranks[k] == ranks[k - 1]) continue;
        size_t canon = ver(b, vi)->canon;
        /* Another task of this rank sends the version there already
         * (ptgxfer.c): it reads that SEND's bytes too. */
        weft_task_t *s = weft_ptg__xfer_find(b, canon, ranks[k], 1);
        if (s) {
            if (add_user(b, vi, s) != WEFT_SUCCESS) goto nomem;
            v = ver(b, vi);
            continue;
        }
        s = weft_remote_action(b->tp, WEFT_TASK_SEND, v->data, ranks[k], v->label, pt->priority, 0);
        if (!s || weft_vec_push(&b->actions, &s) != WEFT_SUCCESS) {
            if (s) weft_task_unref(s);
            free(ranks);
            return WEFT_ERR_NOMEM;
        }
        if (weft_ptg__xfer_note(b, canon, ranks[k], 1) != WEFT_SUCCESS) goto nomem;
        /* A forwarder's SEND: its version may still turn out to be made
         * here by a task built later (weft_ptg__finish). */
        weft_ptg_fwd_send_t f = {.send = s, .after = after, .canon = canon};
        if (after && canon != vi && weft_vec_push(&b->fwd_sends, &f) != WEFT_SUCCESS) goto nomem;
        if ((after && canon == vi && weft_ptg__edge(after, s) != WEFT_SUCCESS) ||
            add_user(b, vi, s) != WEFT_SUCCESS ||
            (canon != vi && add_user(b, canon, s) != WEFT_SUCCESS)) {
            free(ranks);
            return WEFT_ERR_NOMEM;
        }
        v = ver(b, vi);
    }
    free(ranks);
    return WEFT_SUCCESS;
nomem:
    free(ranks);
    return WEFT_ERR_NOMEM;
bad:
    free(ranks);
    return WEFT_ERR_INVALID;
}

/* The canonical key of the version a forwarder's flow reads (its writer,
 * or d's version from before the graph), and that version's depth. */
static int fwd_version(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_data_t *d,
                       weft_ptg_ref_t *key, uint32_t *label)
{
    int has = weft_ptg__writer_of(b, p, key);
    if (has < 0) return WEFT_ERR_INVALID;
    if (has == 0) {
        *key = initial_key(d);
        *label = 0;
        return WEFT_SUCCESS;
    }
    return weft_ptg__label_of(b, key, label);
}

/* What task w's flow p->flow must be for `fwd` (1: it passes on what it
 * read; 0: it wrote) and hold d, as the producer function of `by` (NULL:
 * none) names it; else logged. */
static int check_named_flow(weft_ptg_build_t *b, const weft_ptg_ref_t *p, const weft_task_t *w,
                            const weft_data_t *d, int fwd, const weft_ptg_ref_t *by)
{
    if (check_repeated(b, p, w, fwd ? "forwarder" : "producer", by) != WEFT_SUCCESS)
        return WEFT_ERR_INVALID;
    int f = p->flow, mode = f < w->nflows ? w->flow[f].mode : 0;
    const char *why = f >= w->nflows                       ? "it does not have"
                      : fwd && (mode & WEFT_W)              ? "it writes (name it with 1)"
                      : fwd && !(mode & WEFT_R)             ? "it does not read"
                      : !fwd && !(mode & WEFT_W)            ? "it does not write (name it with 2 "
                                                              "to have it pass on what it read)"
                      : d && w->flow[f].data != d           ? "holds another data"
                                                            : NULL;
    if (!why) return WEFT_SUCCESS;
    return weft_ptg__fail(b, p, "is named as the %s of a version by its flow %d, which %s",
                          fwd ? "forwarder" : "producer", f, why);
}

/* Version vi of d, made (or passed on) by local task pt's flow p->flow at
 * depth label, ci the record of the version itself: the record, then the
 * SENDs to its n consumers (in b->refs). */
static int set_local(weft_ptg_build_t *b, size_t vi, size_t ci, const weft_ptg_ref_t *p,
                     weft_task_t *pt, weft_task_t *after, weft_data_t *d, uint32_t label, size_t n)
{
    /* The version came back from a forwarder on another rank, whose RECV
     * was made first: that RECV only meets its sender now, and its readers
     * wait for pt as well (weft_ptg__finish). */
    if (ci == vi && ver(b, vi)->recvs != SIZE_MAX) {
        weft_ptg__recvs_discard(b, vi);
        ver(b, vi)->remade = 1;
    }
    weft_ptg_ver_t *v = ver(b, vi);
    v->data = d;
    v->task = pt;
    v->label = label;
    v->canon = ci;
    v->full = 1;
    return make_sends(b, vi, p, pt, after, n);
}

/* The version written by flow p->flow of local task pt, named by the
 * producer function of `by` (NULL: its own output). */
static int make_local_out(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, weft_task_t *pt,
                          const weft_ptg_ref_t *by)
{
    if (check_named_flow(b, p, pt, NULL, 0, by) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    weft_data_t *d = pt->flow[p->flow].data;
    uint32_t label;
    int rc = weft_ptg__label_of(b, p, &label);
    if (rc == WEFT_SUCCESS)
        rc = weft_ptg__version_number(b, p, d, label, &pt->flow[p->flow].out_version);
    size_t n = 0;
    if (rc == WEFT_SUCCESS) rc = weft_ptg__consumers_of(b, p, &n);
    if (rc == WEFT_SUCCESS) rc = weft_ptg__check_final(b, p, d, n);
    return rc == WEFT_SUCCESS ? set_local(b, vi, vi, p, pt, pt, d, label, n) : rc;
}

/* The version of d that flow p->flow of a task of rank prank wrote (fwd 0)
 * or read and passes on (fwd 1), read or replaced here by t: a RECV brings
 * it. */
static int make_remote_out(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, int prank,
                           weft_task_t *t, weft_data_t *d, int fwd, int reads,
                           const weft_ptg_ref_t *by)
{
    weft_ptg_ver_t *v = ver(b, vi);
    if (!v->full) {
        weft_task_t w;
        if (!weft_ptg__enumerated_by(b, p, prank)) return WEFT_ERR_INVALID;
        if (weft_ptg__parse(b, p, &w, NULL) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
        if (check_named_flow(b, p, &w, d, fwd, by) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
        uint32_t label;
        weft_ptg_ref_t canon = *p;
        int rc = fwd ? fwd_version(b, p, d, &canon, &label) : weft_ptg__label_of(b, p, &label);
        size_t n = 0, ci = vi;
        if (rc == WEFT_SUCCESS) rc = weft_ptg__consumers_of(b, p, &n);
        if (rc == WEFT_SUCCESS && fwd) rc = weft_ptg__ver_get(b, &canon, &ci);
        if (rc != WEFT_SUCCESS) return rc;
        int listed = 0;
        for (size_t c = 0; c < n; c++) {
            const weft_ptg_ref_t *cr = &((weft_ptg_ref_t *)b->refs.data)[c];
            int r = weft_ptg__rank(b, cr);
            if (r < 0) return WEFT_ERR_INVALID;
            if (r != b->me) continue;
            /* Its naming p back is checked by the counts (b->expect). */
            if (check_consumer_flow(b, p, cr, d) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
            listed++;
            if (expect_consumer(b, cr, vi) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
        }
        v = ver(b, vi);
        v->data = d;
        v->label = label;
        v->listed = listed;
        v->canon = ci;
        v->full = 1;
        v->remote = 1;
        /* Only replaced here so far: no bytes come (the producer's rank
         * sends none), until a local reader of it shows up. */
        v->remote_noread = 1;
    }
    /* A version already here from another rank (or made here) still
     * needs a RECV that meets this sender (ptgxfer.c). */
    if (!reads) return WEFT_SUCCESS;
    return weft_ptg__recv_version(b, vi, p, prank, t, d);
}

/* The version of d that local task pt's flow p->flow reads and passes on
 * to its consumers (fwd): sent from here after pt ran. */
/* What the SEND of the version that local forwarder pt (flow p->flow)
 * passes on waits for: the bytes here, not pt. One SEND carries the
 * version to a rank for every forwarder of this rank that passes it there
 * (ptgxfer.c): after the first one built, it made the readers of the
 * others wait for that forwarder, a hang when it waits for one of them
 * (through another data). The writer when it wrote here, nothing for a
 * data as it was on its owner, the RECV of pt's path when it came from
 * another rank, else pt. */
static int fwd_after(weft_ptg_build_t *b, const weft_ptg_ref_t *p, weft_task_t *pt, size_t ci,
                     const weft_data_t *d, weft_task_t **after)
{
    const weft_ptg_ver_t *cv = ver(b, ci);
    *after = pt;
    if (cv->task && cv->task->kind == WEFT_TASK_BODY) {
        *after = cv->task;
        return WEFT_SUCCESS;
    }
    if (!cv->task && cv->key.cls < 0 && d->owner_rank == b->me) {
        *after = NULL;
        return WEFT_SUCCESS;
    }
    weft_ptg_ref_t from;
    int has = weft_ptg__producer_of(b, p, &from);
    if (has < 0) return WEFT_ERR_INVALID;
    int r = has ? weft_ptg__rank(b, &from) : b->me;
    if (r < 0) return WEFT_ERR_INVALID;
    weft_task_t *a = r != b->me ? weft_ptg__xfer_find(b, ci, r, 0) : NULL;
    if (a) *after = a;
    return WEFT_SUCCESS;
}

static int make_local_fwd(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *p, weft_task_t *pt,
                          weft_data_t *d, const weft_ptg_ref_t *by)
{
    if (check_named_flow(b, p, pt, d, 1, by) != WEFT_SUCCESS) return WEFT_ERR_INVALID;
    uint32_t label;
    weft_ptg_ref_t canon;
    size_t n = 0, ci;
    int rc = fwd_version(b, p, d, &canon, &label);
    if (rc == WEFT_SUCCESS) rc = weft_ptg__consumers_of(b, p, &n);
    if (rc == WEFT_SUCCESS) rc = weft_ptg__ver_get(b, &canon, &ci);
    if (rc != WEFT_SUCCESS) return rc;
    if (!ver(b, ci)->data) ver(b, ci)->data = d;
    weft_task_t *after;
    rc = fwd_after(b, p, pt, ci, d, &after);
    return rc == WEFT_SUCCESS ? set_local(b, vi, ci, p, pt, after, d, label, n) : rc;
}

/* d as it was before the graph, read or replaced by t: only its owner
 * holds it (the graph moves versions its tasks made, not these). */
static int make_initial(weft_ptg_build_t *b, size_t vi, const weft_ptg_ref_t *self,
                        weft_data_t *d, int reads)
{
    /* Replacing it needs no bytes: any rank may. */
    if (reads && d->owner_rank != b->me)
        return weft_ptg__fail(b, self,
                              "its flow %d names no producer, so it uses data %llu as it was "
                              "before the graph, which only the data's owner rank %d holds: "
                              "run that first use on rank %d (it may pass the tile on)",
                              self->flow, (unsigned long long)d->key, d->owner_rank,
                              d->owner_rank);
    weft_ptg_ver_t *v = ver(b, vi);
    v->data = d;
    v->full = 1;
    return WEFT_SUCCESS;
}

/* A NEW data read before anything wrote it: its initialiser makes it. */
static int initial_contents(weft_ptg_build_t *b, const weft_ptg_ref_t *self, weft_data_t *d)
{
    /* A simulation keeps no tile contents: versions stand for them. */
    if (!(d->flags & WEFT_DATA_NEW) || (b->ctx->sim && d->version > 0)) return WEFT_SUCCESS;
    weft_data_lock(d);
    int have = weft_data_valid_copies_locked(d) > 0;
    weft_data_unlock(d);
    if (have) return WEFT_SUCCESS;
    if (d->flags & WEFT_DATA_INIT) return weft_data_init_contents(d, b->ctx->hostmem);
    return weft_ptg__fail(b, self,
                          "its flow %d reads NEW data %llu, which no task wrote: name its "
                          "producer, or give it initial contents (weft_data_set_init)",
                          self->flow, (unsigned long long)d->key);
}

/* The record of the version flow self->flow of t reads or replaces. */
static int input_version(weft_ptg_build_t *b, const weft_ptg_ref_t *self, weft_task_t *t,
                         weft_data_t *d, int reads, size_t *vi, int *has)
{
    weft_ptg_ref_t p;
    *has = weft_ptg__producer_of(b, self, &p);
    if (*has < 0) return WEFT_ERR_INVALID;
    if (!*has) p = initial_key(d);
    int rc = weft_ptg__ver_get(b, &p, vi);
    int prank = *has ? weft_ptg__rank(b, &p) : b->me;
    if (rc != WEFT_SUCCESS || prank < 0) return rc != WEFT_SUCCESS ? rc : WEFT_ERR_INVALID;
    /* Every flow of a transfer, as this end sees it (ptgends.c). */
    if (prank != b->me && weft_ptg__note_end(b, &p, self, prank, b->me, d, 0) != WEFT_SUCCESS)
        return WEFT_ERR_NOMEM;
    /* Each use of d as it was: a task that only replaces it may have made
     * its record first, and the readers still need its contents (a NEW
     * data's initialiser had not run: "no contents"). */
    if (!*has) {
        rc = make_initial(b, *vi, self, d, reads);
        return rc == WEFT_SUCCESS && reads ? initial_contents(b, self, d) : rc;
    }
    const weft_ptg_ver_t *v = ver(b, *vi);
    if (v->full && !(v->remote_noread && reads)) return WEFT_SUCCESS;
    if (prank != b->me)
        return make_remote_out(b, *vi, &p, prank, t, d, *has == 2, reads != 0, self);
    weft_task_t *pt = weft_ptg__local(b, &p);
    if (!pt)
        return weft_ptg__fail(b, &p,
                              "is named as a producer and its rank function places it on this "
                              "rank, which did not make it: this rank's local_range leaves it "
                              "out, or the rank or args function answers differently on "
                              "different ranks (another rank's functions place it elsewhere)");
    return *has == 2 ? make_local_fwd(b, *vi, &p, pt, d, self)
                     : make_local_out(b, *vi, &p, pt, self);
}

/* A read flow with consumers passes its version on (a forwarder): its
 * record and SENDs are made here even when no local task names it. */
static int pass_on(weft_ptg_build_t *b, const weft_ptg_ref_t *self, weft_task_t *t,
                   weft_data_t *d)
{
    const weft_ptg_class_t *k = &b->g->classes[self->cls];
    if (weft_vec_reserve(&b->refs, 1) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    if (k->consumers(self->idx, self->flow, b->refs.data, 0, b->g->arg) == 0) return WEFT_SUCCESS;
    size_t vo;
    int rc = weft_ptg__ver_get(b, self, &vo);
    if (rc != WEFT_SUCCESS || ver(b, vo)->full) return rc;
    return make_local_fwd(b, vo, self, t, d, NULL);
}

int weft_ptg__flow(weft_ptg_build_t *b, const weft_ptg_ref_t *self_task, weft_task_t *t, int i)
{
    if (weft_task_first_flow_of(t, i) != i) return WEFT_SUCCESS;
    weft_data_t *d = t->flow[i].data;
    int mode = 0;
    for (int j = i; j < t->nflows; j++)
        if (t->flow[j].data == d) mode |= t->flow[j].mode;
    weft_ptg_ref_t self = *self_task;
    self.flow = i;
    size_t vi;
    int has, rc = input_version(b, &self, t, d, mode & WEFT_R, &vi, &has);
    if (rc != WEFT_SUCCESS) return rc;
    weft_ptg_ver_t *v = ver(b, vi);
    if (v->data != d)
        return weft_ptg__fail(b, &self,
                              "its flow %d holds data %llu, but the producer it names wrote data "
                              "%llu",
                              i, (unsigned long long)d->key, (unsigned long long)v->data->key);
    if (has) {
        v->named++;
        /* A version from another rank comes only if its producer lists
         * this flow: else a RECV would wait for nothing. */
        size_t e = v->remote ? weft_ptgmap_get(&b->expect, &self) : vi;
        if (e != vi) {
            char named[160] = "the version from before the graph";
            if (v->key.cls >= 0) weft_ptg__ref_text(b, &v->key, named, sizeof named);
            return weft_ptg__fail(b, &self,
                                  "its flow %d names %s (flow %d) as its producer, whose "
                                  "consumers function does not list it",
                                  i, named, v->key.flow);
        }
        v->matched++;
    }
    if (v->task && weft_ptg__edge(v->task, t) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    /* Readers and the next writer belong to the version itself, whoever
     * passed it on. */
    size_t ci = v->canon;
    if ((mode & WEFT_R) && add_user(b, ci, t) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    if (!(mode & WEFT_W)) return pass_on(b, &self, t, d);
    v = ver(b, ci);
    if (v->writer && v->writer != t)
        return weft_ptg__fail(b, &self,
                              "its flow %d replaces a version of data %llu that another task "
                              "here replaces too (a version has one next writer)",
                              i, (unsigned long long)d->key);
    v->writer = t;
    size_t vo;
    rc = weft_ptg__ver_get(b, &self, &vo);
    if (rc != WEFT_SUCCESS || ver(b, vo)->full) return rc;
    return make_local_out(b, vo, &self, t, NULL);
}

