/* The sequence check's log of data creations stays bounded: a loop that
 * creates a data, waits and releases it, 20000 times. On one rank no
 * agreement ever cleared the log (it grew 70 B a creation for ever, the
 * process's memory with it); on several each wait's agreement clears it.
 * Checked through the rank's metadata count of the log's bytes. */
#include <stdio.h>

#include "context/context.h"
#include "weft/weft.h"

#define ITERS 20000

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 1;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "loop");
    int rc = tp ? 0 : 1;
    long long first = -1, peak = 0;
    for (int it = 0; it < ITERS && rc == 0; it++) {
        weft_data_t *x = weft_data_new(ctx, WEFT_DOUBLE, 8, 8, 0);
        rc = x ? weft_taskpool_wait(tp) : 1;
        long long seq = atomic_load(&ctx->meta.bytes[WEFT_META_SEQ]);
        if (first < 0) first = seq;
        if (seq > peak) peak = seq;
        weft_data_release(x);
    }
    /* The log's arrays keep their first capacity between clears. */
    int ok = rc == 0 && peak <= first + 4096;
    printf("test_seq_bounded rank %d: log bytes after the first wait %lld, peak %lld: %s\n",
           weft_rank(ctx), first, peak, ok ? "PASSED" : "FAILED");
    weft_taskpool_free(tp);
    return (weft_fini(ctx) != 0) || !ok;
}
