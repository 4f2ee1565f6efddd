/* The storage of a rank's sequence log: entries of 32 bits of running
 * hash and a name index, the table of names, records for the logs that
 * keep them, and the bytes they take (context/meta.h). */
#include "context/seqlog.h"

#include "util/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

const char weft_seqlog_words_lost[] =
    "its reason not kept: out of host memory, or more different words of refusals since the "
    "last agreement than a sequence keeps";

#define SEQ_NO_NAME 0xffff /* a name past the table's 65535 */

/* The bytes l's arrays take, as counted in its meta. */
static long long seqlog_bytes(const weft_seqlog_t *l)
{
    return (long long)(l->log.elem * l->log.cap + l->name_ix.elem * l->name_ix.cap +
                       l->names.elem * l->names.cap + l->rec.elem * l->rec.cap +
                       l->notes.elem * l->notes.cap + l->marks.elem * l->marks.cap);
}

void weft_seqlog_init(weft_seqlog_t *l, size_t rec_size, weft_meta_t *meta)
{
    *l = (weft_seqlog_t){.meta = meta};
    weft_vec_init(&l->log, sizeof(uint32_t), 256);
    weft_vec_init(&l->name_ix, sizeof(uint16_t), 256);
    weft_vec_init(&l->names, sizeof(const char *), 16);
    weft_vec_init(&l->rec, rec_size, 256);
    weft_vec_init(&l->notes, sizeof(weft_seqlog_note_t), 4);
    weft_vec_init(&l->marks, sizeof(weft_seqlog_mark_t), 4);
}

/* The index of a static name, added to the table when new. */
static int name_index(weft_seqlog_t *l, const char *name)
{
    if (name == l->last_name && l->last_name) return l->last_ix;
    int ix = SEQ_NO_NAME;
    const char *const *names = l->names.data;
    for (size_t i = 0; i < l->names.n && ix == SEQ_NO_NAME; i++)
        if (names[i] == name) ix = (int)i;
    if (ix == SEQ_NO_NAME && l->names.n < SEQ_NO_NAME) {
        if (weft_vec_push(&l->names, &name) != WEFT_SUCCESS) return SEQ_NO_NAME;
        ix = (int)l->names.n - 1;
    }
    l->last_name = name;
    l->last_ix = ix;
    return ix;
}

/* Entry n's record: rec, or zeros where the caller has none (a refusal in
 * a log of task records). */
static void seqlog_put_rec(weft_seqlog_t *l, size_t n, const void *rec)
{
    if (rec)
        memcpy(weft_vec_at(&l->rec, n), rec, l->rec.elem);
    else
        memset(weft_vec_at(&l->rec, n), 0, l->rec.elem);
}

int weft_seqlog_push(weft_seqlog_t *l, const char *name, const void *rec)
{
    size_t n = l->log.n;
    int keep_rec = l->rec.elem > 0;
    /* Room in every array and the last entry's name: stores only (every
     * rank logs every task of the run, docs/SCALE.md). */
    if (name && name == l->last_name && n < l->log.cap && n < l->name_ix.cap &&
        (!keep_rec || n < l->rec.cap)) {
        ((uint32_t *)l->log.data)[n] = (uint32_t)l->hash;
        ((uint16_t *)l->name_ix.data)[n] = (uint16_t)l->last_ix;
        if (keep_rec) seqlog_put_rec(l, n, rec);
        l->log.n = l->name_ix.n = n + 1;
        if (keep_rec) l->rec.n = n + 1;
        return WEFT_SUCCESS;
    }
    /* Counted by capacity, as the arrays grow (a failure keeps what grew). */
    long long before = seqlog_bytes(l);
    int rc = weft_vec_reserve(&l->log, n + 1);
    if (rc == WEFT_SUCCESS) rc = weft_vec_reserve(&l->name_ix, n + 1);
    if (rc == WEFT_SUCCESS && keep_rec) rc = weft_vec_reserve(&l->rec, n + 1);
    uint16_t ix = SEQ_NO_NAME;
    if (rc == WEFT_SUCCESS && name) ix = (uint16_t)name_index(l, name);
    long long after = seqlog_bytes(l);
    if (after != before) weft_meta_add(l->meta, WEFT_META_SEQ, after - before);
    if (rc != WEFT_SUCCESS) {
        l->lost++;
        return WEFT_ERR_NOMEM;
    }
    /* Room is reserved: these pushes cannot fail. */
    uint32_t h = (uint32_t)l->hash;
    rc = weft_vec_push(&l->log, &h);
    if (rc == WEFT_SUCCESS) rc = weft_vec_push(&l->name_ix, &ix);
    /* Entry n's record sits at index n (a log with records keeps one for
     * every entry). */
    if (rc == WEFT_SUCCESS && keep_rec) {
        l->rec.n = n + 1;
        seqlog_put_rec(l, n, rec);
    }
    return rc;
}

int64_t weft_seqlog_at(const weft_seqlog_t *l, long k)
{
    return k >= 0 && (size_t)k < l->log.n
               ? (int64_t) * (const uint32_t *)weft_vec_at(&l->log, (size_t)k)
               : -1;
}

const void *weft_seqlog_rec(const weft_seqlog_t *l, long k)
{
    return k >= 0 && (size_t)k < l->rec.n ? weft_vec_at(&l->rec, (size_t)k) : NULL;
}

const char *weft_seqlog_name(const weft_seqlog_t *l, long k)
{
    if (k < 0 || (size_t)k >= l->log.n) return NULL;
    size_t ix = *(const uint16_t *)weft_vec_at(&l->name_ix, (size_t)k);
    return ix < l->names.n ? *(const char *const *)weft_vec_at(&l->names, ix)
                           : "(a task class past the 65535 the check names)";
}

/* The index of the note holding text, added when new; -1 when the notes
 * are full or memory lacks. */
static int note_index(weft_seqlog_t *l, const char *text, weft_fault_t *fault)
{
    if (weft_fault_hit(fault, WEFT_FAULT_REFUSAL_NOTE, NULL)) return -1; /* as out of memory */
    weft_seqlog_note_t *notes = l->notes.data;
    for (size_t i = 0; i < l->notes.n; i++)
        if (strncmp(notes[i].text, text, WEFT_SEQLOG_NOTE - 1) == 0) return (int)i;
    if (l->notes.n >= WEFT_SEQLOG_NOTES) return -1;
    weft_seqlog_note_t note = {0};
    snprintf(note.text, sizeof note.text, "%s", text);
    if (weft_vec_push(&l->notes, &note) != WEFT_SUCCESS) return -1;
    return (int)l->notes.n - 1;
}

/* Entry k extends the last run when it has the run's words and name (the
 * entries between are then told apart by their names). */
static int mark_entry(weft_seqlog_t *l, long k, int note)
{
    uint16_t ix = *(const uint16_t *)weft_vec_at(&l->name_ix, (size_t)k);
    weft_seqlog_mark_t *last = l->marks.n ? weft_vec_at(&l->marks, l->marks.n - 1) : NULL;
    if (last && last->note == note && last->name_ix == ix && ix != SEQ_NO_NAME) {
        last->last = k;
        return WEFT_SUCCESS;
    }
    weft_seqlog_mark_t m = {.first = k, .last = k, .note = note, .name_ix = ix};
    return weft_vec_push(&l->marks, &m);
}

void weft_seqlog_note(weft_seqlog_t *l, const char *text, weft_fault_t *fault)
{
    if (l->log.n == 0) return;
    long long before = seqlog_bytes(l);
    int note = note_index(l, text, fault);
    if (note >= 0) ((weft_seqlog_note_t *)l->notes.data)[note].count++;
    (void)mark_entry(l, (long)l->log.n - 1, note); /* out of memory: the entry stays unmarked */
    long long after = seqlog_bytes(l);
    if (after != before) weft_meta_add(l->meta, WEFT_META_SEQ, after - before);
}

const char *weft_seqlog_note_at(const weft_seqlog_t *l, long k)
{
    /* The last run that begins at or before k. */
    const weft_seqlog_mark_t *marks = l->marks.data;
    size_t lo = 0, hi = l->marks.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (marks[mid].first <= k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || k < 0 || (size_t)k >= l->name_ix.n) return NULL;
    const weft_seqlog_mark_t *m = &marks[lo - 1];
    if (k > m->last || *(const uint16_t *)weft_vec_at(&l->name_ix, (size_t)k) != m->name_ix)
        return NULL;
    if (m->note < 0) return weft_seqlog_words_lost;
    return ((const weft_seqlog_note_t *)l->notes.data)[m->note].text;
}

void weft_seqlog_clear(weft_seqlog_t *l)
{
    weft_vec_clear(&l->notes);
    weft_vec_clear(&l->marks);
    weft_vec_clear(&l->log);
    weft_vec_clear(&l->name_ix);
    weft_vec_clear(&l->rec);
    /* The names too: a class made for one wave and freed after it must not
     * name an entry of the next (its name's memory may hold another by
     * then), nor its pointer stay in the table for the whole run. */
    weft_vec_clear(&l->names);
    l->last_name = NULL;
    l->hash = 0;
    l->lost = 0;
}

void weft_seqlog_free(weft_seqlog_t *l)
{
    weft_meta_add(l->meta, WEFT_META_SEQ, -seqlog_bytes(l));
    weft_vec_fini(&l->log);
    weft_vec_fini(&l->name_ix);
    weft_vec_fini(&l->names);
    weft_vec_fini(&l->rec);
    l->hash = 0;
    l->lost = 0;
    weft_vec_fini(&l->notes);
    weft_vec_fini(&l->marks);
    l->last_name = NULL;
    l->last_ix = 0;
    l->hashed_name = NULL;
}
