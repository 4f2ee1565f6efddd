/* The data tags of a rank's receives (tags.h). */
#include "comm/tags.h"

void weft_comm__tags_init(weft_comm_tags_t *g, int first, int tag_ub)
{
    *g = (weft_comm_tags_t){.first = first, .span = (int64_t)tag_ub - first + 1};
    g->block = (g->span + WEFT_COMM_TAG_BLOCKS - 1) / WEFT_COMM_TAG_BLOCKS;
}

int64_t weft_comm__tags_most(const weft_comm_tags_t *g)
{
    return g->span / 4 > 0 ? g->span / 4 : 1;
}

static int *held_at(weft_comm_tags_t *g, int64_t v)
{
    return &g->held[(v / g->block) % WEFT_COMM_TAG_BLOCKS];
}

int weft_comm__tags_room(weft_comm_tags_t *g)
{
    /* The oldest block with a range held (or the head's): every range
     * held starts at or after its first tag. */
    while (g->oldest < g->next / g->block && *held_at(g, g->oldest * g->block) == 0) g->oldest++;
    /* A new range ends before next + 2 * most (a skipped tail is shorter
     * than the range), so it stays within span of the oldest start; the
     * blocks held then number at most WEFT_COMM_TAG_BLOCKS, each its own
     * counter. */
    return g->next - g->oldest * g->block <= g->span - 2 * weft_comm__tags_most(g);
}

int weft_comm__tags_take(weft_comm_tags_t *g, int n, int64_t *v)
{
    int64_t at = g->next % g->span;
    if (at + n > g->span) g->next += g->span - at; /* never across the wrap */
    *v = g->next;
    g->next += n;
    ++*held_at(g, *v);
    return g->first + (int)(*v % g->span);
}

void weft_comm__tags_give(weft_comm_tags_t *g, int64_t v) { --*held_at(g, v); }
