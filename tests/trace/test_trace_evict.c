/* One "evict" slice in the trace per eviction the device counts. A dirty
 * victim written back and then kept (a task took it meanwhile) was traced
 * as "evict" too, so a trace showed more evictions than the counters
 * (790 against 788 on a stranger's run); it is a "write-back" slice now.
 * Each write-back is a "copy d2h" slice too, whose bytes add up to the
 * device's bytes_d2h (the trace drew no device-to-host copy before).
 * An emu device with room for a few tiles, tasks that write many tiles in
 * turn (dirty victims), on every worker at once. Argument: the trace
 * prefix (also passed as --weft-trace=PREFIX). */
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "../check.h"
#include "../file_text.h"
#include "weft/weft.h"

#define NT 48
#define B 64

static int bump(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    for (int k = 0; k < B * B; k++) x[k] += 1;
    return 0;
}

static const weft_task_class_t bump_class = {.name = "bump", .body = {[WEFT_DEV_EMU] = bump}};

/* The slices named `name` over the file's events; *bytes (when not NULL)
 * the sum of their "bytes" arguments. */
static long named(const char *path, const char *name, long long *bytes)
{
    char *text = test_file_text(path);
    REQUIRE(text != NULL);
    long n = 0;
    char key[160];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name);
    if (bytes) *bytes = 0;
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += strlen(key)) {
        n++;
        const char *b = strstr(p, "\"bytes\":"), *end = strchr(p, '}');
        if (bytes && b && end && b < end) *bytes += strtoll(b + 8, NULL, 10);
    }
    free(text);
    return n;
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL && argc == 2 && weft_ndevices(ctx) == 1);
    weft_data_t *tile[NT];
    for (int i = 0; i < NT; i++) {
        tile[i] = weft_data_new(ctx, WEFT_DOUBLE, B, B, 0);
        REQUIRE(tile[i] != NULL && weft_data_set_init(tile[i], NULL, NULL) == WEFT_SUCCESS);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "evict");
    for (int round = 0; round < 6; round++)
        for (int i = 0; i < NT; i++)
            CHECK(weft_insert_task(tp, &bump_class, WEFT_RW, tile[(i * 7 + round) % NT], 0) == 0);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_device_counters_t c;
    CHECK(weft_device_counters_get(ctx, 1, &c) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    for (int i = 0; i < NT; i++) weft_data_release(tile[i]);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    char path[512];
    snprintf(path, sizeof path, "%s.rank0.json", argv[1]);
    long long d2h = 0;
    long ev = named(path, "evict", NULL), wb = named(path, "write-back", NULL);
    long copies = named(path, "copy d2h", &d2h);
    printf("test_trace_evict: %ld evict slices, %lld evictions counted, %ld write-back slices, "
           "%lld write-backs counted, %ld copy d2h slices of %lld bytes, %lld counted\n",
           ev, (long long)c.evictions, wb, (long long)c.writebacks, copies, d2h,
           (long long)c.bytes_d2h);
    CHECK(c.evictions > 0 && ev == c.evictions && ev + wb >= c.writebacks);
    /* Each write-back a device-to-host copy drawn with its bytes (none
     * was: the trace's copies did not add up to the counter). */
    CHECK(copies >= c.writebacks && c.bytes_d2h > 0 && d2h == c.bytes_d2h);
    return check_report("test_trace_evict");
}
