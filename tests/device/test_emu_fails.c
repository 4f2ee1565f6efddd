/* The failed ops an emu stream keeps (internal, device/emu/emu_fails.h):
 * bounded however many fail (every one was kept for the device's life, 8
 * bytes a failed task), exact for the ranges of recent events, and an
 * event reaching back past the failures dropped is answered failed. */
#include <stdio.h>

#include "device/emu/emu_fails.h"

static int fails;

static void expect(const char *what, long long got, long long want)
{
    if (got == want) return;
    printf("test_emu_fails: %s: %lld, expected %lld\n", what, got, want);
    fails++;
}

int main(void)
{
    emu_fails_t f = {0};
    /* Ops 2, 4, ..., 200000 fail (every other one). */
    for (uint64_t op = 2; op <= 200000; op += 2) weft_emu__fails_add(&f, op);
    expect("kept at most 4096", f.n <= 4096 && f.cap <= 4096, 1);
    expect("the newest kept", f.op[f.n - 1], 200000);
    expect("a recent failure", weft_emu__fails_between(&f, 199990, 199992), 1);
    expect("a recent success", weft_emu__fails_between(&f, 199990, 199991), 0);
    expect("none in an empty range", weft_emu__fails_between(&f, 199992, 199992), 0);
    expect("past the last", weft_emu__fails_between(&f, 200000, 200010), 0);
    expect("reaching back past those dropped", weft_emu__fails_between(&f, 10, 11), 1);
    weft_emu__fails_free(&f);
    /* Few failures: all kept, every answer exact. */
    weft_emu__fails_add(&f, 5);
    weft_emu__fails_add(&f, 9);
    expect("before the first", weft_emu__fails_between(&f, 0, 4), 0);
    expect("the first", weft_emu__fails_between(&f, 4, 5), 1);
    expect("between", weft_emu__fails_between(&f, 5, 8), 0);
    expect("the second", weft_emu__fails_between(&f, 0, 9), 1);
    weft_emu__fails_free(&f);
    printf("test_emu_fails: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
