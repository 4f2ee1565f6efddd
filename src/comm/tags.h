/* The data tags of a rank's receives: which tags a transfer's messages
 * carry, and when a transfer may take some.
 *
 * MPI matches a message to a receive by (source, tag): two receives from
 * one peer posted with the same tag at once may each take the other's
 * bytes (a staged transfer's chunks are sent in the order their device
 * copies end, not the order the transfers began). The tags come from one
 * counter that wraps to the first data tag, and with an MPI whose tag_ub
 * is small (the standard's least is 32767) a transfer still in flight
 * could meet the next wrap. So tags are taken in a virtual, ever growing
 * count (a range never straddles a wrap: the tail is skipped), and a
 * transfer may start only while every range still held lies within one
 * tag space of the count's head, beyond which the tags would repeat.
 *
 * Which ranges are held is counted by the block of virtual tags their
 * start falls in (WEFT_COMM_TAG_BLOCKS blocks a tag space): constant
 * memory however long a slow transfer stays while many short ones pass. */
#ifndef WEFT_COMM_TAGS_H
#define WEFT_COMM_TAGS_H

#include <stdint.h>

#define WEFT_COMM_TAG_BLOCKS 8
/* The least data tags an MPI must offer (comm.c refuses fewer). */
#define WEFT_COMM_MIN_DATA_TAGS 64

typedef struct weft_comm_tags {
    int first;      /* the first data tag */
    int64_t span;   /* data tags: first .. tag_ub */
    int64_t block;  /* virtual tags a block: span / WEFT_COMM_TAG_BLOCKS, rounded up */
    int64_t next;   /* virtual: the head of the count */
    int64_t oldest; /* the block of the oldest range that may still be held */
    int held[WEFT_COMM_TAG_BLOCKS]; /* ranges held, by the block of their start (mod) */
} weft_comm_tags_t;

/* tag_ub - first + 1 >= WEFT_COMM_MIN_DATA_TAGS. */
void weft_comm__tags_init(weft_comm_tags_t *g, int first, int tag_ub);
/* The most tags one transfer takes: a quarter of the tag space, so that
 * a transfer admitted by weft_comm__tags_room (a wrap's skipped tail
 * included) stays within one tag space of every range still held. */
int64_t weft_comm__tags_most(const weft_comm_tags_t *g);
/* Whether a transfer may take tags now (1) or must wait for the oldest
 * ranges to be given back (0). */
int weft_comm__tags_room(weft_comm_tags_t *g);
/* Takes n tags (1 .. weft_comm__tags_most), after weft_comm__tags_room
 * said yes: returns the first, *v the range's virtual start, which
 * weft_comm__tags_give takes once no receive of the range is posted. */
int weft_comm__tags_take(weft_comm_tags_t *g, int n, int64_t *v);
void weft_comm__tags_give(weft_comm_tags_t *g, int64_t v);

#endif
