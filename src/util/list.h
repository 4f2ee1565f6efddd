/* weft_list_t: the one intrusive doubly linked list of the runtime. An
 * element embeds a weft_list_t link; a list is a head link of the same
 * type, circular, so insertion and removal need no branch and no memory
 * (what an LRU or a queue of in-flight records wants). Not thread-safe:
 * the owner locks. */
#ifndef WEFT_UTIL_LIST_H
#define WEFT_UTIL_LIST_H

#include <stddef.h>

typedef struct weft_list {
    struct weft_list *prev, *next;
} weft_list_t;

/* The element of type `type` whose member `member` is the link at `link`. */
#define weft_list_entry(link, type, member) ((type *)((char *)(link)-offsetof(type, member)))

/* Makes `head` an empty list, or a link that is in no list. */
static inline void weft_list_init(weft_list_t *head) { head->prev = head->next = head; }

static inline int weft_list_empty(const weft_list_t *head) { return head->next == head; }

/* 1 when `link` is in a list (it was inserted and not removed since). */
static inline int weft_list_linked(const weft_list_t *link) { return link->next != link; }

/* Puts `link` between `prev` and `next`, which are adjacent. */
static inline void weft_list_insert_between(weft_list_t *link, weft_list_t *prev, weft_list_t *next)
{
    link->prev = prev;
    link->next = next;
    prev->next = link;
    next->prev = link;
}

/* Puts `link` first / last in the list at `head`. */
static inline void weft_list_push_front(weft_list_t *head, weft_list_t *link)
{
    weft_list_insert_between(link, head, head->next);
}

static inline void weft_list_push_back(weft_list_t *head, weft_list_t *link)
{
    weft_list_insert_between(link, head->prev, head);
}

/* Takes `link` out of its list; it is then unlinked (weft_list_linked is 0),
 * so removing it twice is harmless. */
static inline void weft_list_remove(weft_list_t *link)
{
    link->prev->next = link->next;
    link->next->prev = link->prev;
    weft_list_init(link);
}

/* Moves `link` (in this list or another) to the end of the list at `head`:
 * an LRU's "used now". */
static inline void weft_list_move_back(weft_list_t *head, weft_list_t *link)
{
    weft_list_remove(link);
    weft_list_push_back(head, link);
}

/* The first / last link, NULL when the list is empty. */
static inline weft_list_t *weft_list_first(const weft_list_t *head)
{
    return head->next == head ? NULL : head->next;
}

static inline weft_list_t *weft_list_last(const weft_list_t *head)
{
    return head->prev == head ? NULL : head->prev;
}

/* The link after `link` in the list at `head`, NULL at its end. Safe to
 * call after removing nothing but links other than `link`. */
static inline weft_list_t *weft_list_next(const weft_list_t *head, const weft_list_t *link)
{
    return link->next == head ? NULL : link->next;
}

#endif
