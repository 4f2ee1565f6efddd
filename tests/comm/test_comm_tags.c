/* The engine's data tags (internal): a transfer takes n consecutive tags
 * below the MPI's tag_ub, from the first data tag again once they run out.
 * With Open MPI's tag_ub = INT_MAX the test next_tag + n > tag_ub
 * overflowed: the tags went negative and every data receive failed. */
#include <limits.h>
#include <stdio.h>

#include "comm/comm_internal.h"

static int fails;

static void expect(const char *what, int got, int want)
{
    if (got == want) return;
    printf("test_comm_tags: %s: tag %d, expected %d\n", what, got, want);
    fails++;
}

int main(void)
{
    weft_comm_t c = {.tag_ub = INT_MAX, .next_tag = WEFT_COMM_FIRST_DATA_TAG};
    expect("first", weft_comm__next_tags(&c, 3), WEFT_COMM_FIRST_DATA_TAG);
    expect("second", weft_comm__next_tags(&c, 1), WEFT_COMM_FIRST_DATA_TAG + 3);
    /* The last tags below tag_ub (next_tag stays <= tag_ub), then a wrap. */
    c.next_tag = INT_MAX - 5;
    expect("fits below tag_ub", weft_comm__next_tags(&c, 5), INT_MAX - 5);
    expect("wraps at tag_ub", weft_comm__next_tags(&c, 2), WEFT_COMM_FIRST_DATA_TAG);
    c.next_tag = INT_MAX - 1;
    expect("wraps near INT_MAX", weft_comm__next_tags(&c, 40), WEFT_COMM_FIRST_DATA_TAG);
    expect("after the wrap", c.next_tag, WEFT_COMM_FIRST_DATA_TAG + 40);
    /* The standard's least tag_ub. */
    c = (weft_comm_t){.tag_ub = 32767, .next_tag = 32760};
    expect("small tag_ub wraps", weft_comm__next_tags(&c, 9), WEFT_COMM_FIRST_DATA_TAG);
    printf("test_comm_tags: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
