/* Which copy goes when a device is full (device_evict): one emu device whose
 * zone holds four tiles runs a chain of tasks, each reading one tile X[i]
 * (in a cycle one tile longer than the zone holds: LRU misses every time) and accumulating into a
 * token tile T that orders them. The whole chain is inserted behind a gate
 * task before anything runs, so each rank knows every next use. The bytes
 * moved host to device must be exactly what the policy named by
 * WEFT_DEVICE_EVICT predicts (simulated here: least recently used, or the
 * farthest next use), and T must hold the sum of what was read. A second
 * scenario checks the rules at equal distance and for copies without use,
 * and a third the room the comm thread makes for a receive. */
#include <stdatomic.h>
#include <string.h>

#define NB 64    /* tiles of 64 x 64 doubles: 32 KiB, 4 in the zone */
#define NX 4     /* tiles read */
#define SLOTS 3  /* zone slots left for them beside T */
#define NUSES 32 /* reads in the chain */

#include "devgate.h" /* needs NB */
#include "context/context.h"
#include "devmgr/devmgr.h"

/* flow 0: X (RW), flow 1: T (RW): X += 1, which leaves X dirty on the device */
static int dirty_body(weft_task_t *t)
{
    double *x = weft_task_ptr(t, 0);
    int64_t lx = weft_task_ld(t, 0);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i < NB; i++) x[i + j * lx] += 1;
    return 0;
}

static const weft_task_class_t dirty = {.name = "dirty", .body = {[WEFT_DEV_EMU] = dirty_body}};

/* The tile read by use k: 0 1 2 3 0 1 2 3 ..., the pattern where LRU with
 * three slots always evicts the tile needed next. */
static int pattern(int k) { return k % NX; }

/* Index of the resident tile to evict before use k. */
static int victim(const int *slot, int n, int k, int next_use)
{
    int best = 0;
    long best_key = -1;
    for (int s = 0; s < n; s++) {
        long key = 0; /* lru: slot 0 is the least recently used */
        if (next_use) {
            key = 1L << 30; /* no use left: farthest */
            for (int j = k + 1; j < NUSES; j++)
                if (pattern(j) == slot[s]) {
                    key = j;
                    break;
                }
        } else {
            key = n - s;
        }
        if (key > best_key) {
            best = s;
            best_key = key;
        }
    }
    return best;
}

/* Stage-ins of X tiles the policy makes: an LRU list in slot[] (least
 * recent first). */
static int expected_misses(int next_use)
{
    int slot[SLOTS], n = 0, misses = 0;
    for (int k = 0; k < NUSES; k++) {
        int x = pattern(k), at = -1;
        for (int s = 0; s < n; s++)
            if (slot[s] == x) at = s;
        if (at < 0) {
            misses++;
            if (n == SLOTS)
                at = victim(slot, n, k, next_use);
            else
                at = n++;
        }
        memmove(&slot[at], &slot[at + 1], sizeof *slot * (size_t)(n - 1 - at));
        slot[n - 1] = x; /* most recently used */
    }
    return misses;
}

/* Scenario 1: the cycle; H2D bytes and evictions as simulated. */
static void cycle(weft_context_t *ctx, int next_use)
{
    static double xmem[NX][NB * NB], tmem[NB * NB];
    weft_data_t *x[NX], *tok = weft_data_register(ctx, WEFT_DOUBLE, tmem, NB, NB, NB, 0);
    for (int i = 0; i < NX; i++) {
        for (int e = 0; e < NB * NB; e++) xmem[i][e] = i + 1;
        x[i] = weft_data_register(ctx, WEFT_DOUBLE, xmem[i], NB, NB, NB, 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "evict");
    REQUIRE(weft_insert_task(tp, &devgate_gate, WEFT_RW, tok, 0) == 0);
    double sum = 0;
    for (int k = 0; k < NUSES; k++) {
        REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, x[pattern(k)], WEFT_RW, tok, 0) == 0);
        sum += pattern(k) + 1;
    }
    atomic_store(&devgate_open, 1);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);

    weft_device_counters_t c = devgate_counters(ctx, 1);
    int misses = expected_misses(next_use);
    int64_t tile = NB * NB * (int64_t)sizeof(double);
    printf("%s: %d stage-ins of X expected, H2D %lld bytes, %lld evictions\n",
           next_use ? "next_use" : "lru", misses, (long long)c.bytes_h2d, (long long)c.evictions);
    CHECK(c.mem_capacity == (SLOTS + 1) * tile);
    CHECK(c.bytes_h2d == (misses + 1) * tile); /* and T once */
    CHECK(c.evictions == misses + 1 - (SLOTS + 1));
    CHECK(c.writebacks == 0); /* T is never the victim; X is only read */
    CHECK(next_use ? misses < expected_misses(0) : misses == NUSES);
    int right = 1;
    for (int e = 0; e < NB * NB; e++) right &= tmem[e] == sum;
    CHECK(right);
    for (int i = 0; i < NX; i++) weft_data_release(x[i]);
    weft_data_release(tok);
}

/* Scenario 2 (DEVTEST_EVICT_RULES=1), the rules of next_use in a zone of T
 * and three tiles: B written first (dirty, least recently used), then A and
 * C read, then D read: A, B and C are all next used by the last task (equal
 * distance), so a clean one goes, A, the less recent, and not B (no
 * write-back). That last task reads A, B and C: D, with no use left, goes
 * for A. lru evicts A, then C (the least recent clean one, although needed
 * at once), then D for C: one stage-in more. */
static void rules(weft_context_t *ctx, int next_use)
{
    enum { A, B, C, D, NT };
    static double mem[NT][NB * NB], tmem[NB * NB];
    weft_data_t *x[NT], *tok = weft_data_register(ctx, WEFT_DOUBLE, tmem, NB, NB, NB, 0);
    for (int i = 0; i < NT; i++) {
        for (int e = 0; e < NB * NB; e++) mem[i][e] = i + 1;
        x[i] = weft_data_register(ctx, WEFT_DOUBLE, mem[i], NB, NB, NB, 0);
    }
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "rules");
    REQUIRE(weft_insert_task(tp, &devgate_gate, WEFT_RW, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &dirty, WEFT_RW, x[B], WEFT_RW, tok, 0) == 0);
    for (int i = A; i <= D; i += 2) /* A, C */
        REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, x[i], WEFT_RW, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, x[D], WEFT_RW, tok, 0) == 0);
    REQUIRE(weft_insert_task(tp, &devgate_use, WEFT_R, x[A], WEFT_R, x[B], WEFT_R, x[C], WEFT_RW,
                             tok, 0) == 0);
    atomic_store(&devgate_open, 1);
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);

    weft_device_counters_t c = devgate_counters(ctx, 1);
    int64_t tile = NB * NB * (int64_t)sizeof(double);
    printf("%s rules: H2D %lld tiles, %lld evictions, %lld write-backs\n",
           next_use ? "next_use" : "lru", (long long)(c.bytes_h2d / tile), (long long)c.evictions,
           (long long)c.writebacks);
    CHECK(c.bytes_h2d == (next_use ? 6 : 7) * tile); /* T B A C D, then A (and C) */
    CHECK(c.evictions == (next_use ? 2 : 3));
    CHECK(c.writebacks == 0);
    /* T: A + C + D, then A + (B + 1) + C; B: 2 + 1 */
    double want = (A + 1) + (C + 1) + (D + 1) + (A + 1) + (B + 2) + (C + 1);
    int right = 1;
    for (int e = 0; e < NB * NB; e++) right &= tmem[e] == want && mem[B][e] == B + 2;
    CHECK(right);
    for (int i = 0; i < NT; i++) weft_data_release(x[i]);
    weft_data_release(tok);
}

/* Scenario 3 (after scenario 2): the room the comm thread makes on a device
 * for a receive (weft_devcopy_get_nowait). Four NEW tiles written on the
 * device fill its zone, dirty (the device holds their only copy): no room
 * now, and nothing written back or evicted. The comm thread wrote a dirty
 * victim back to host itself, a synchronous device-to-host copy during
 * which no transfer of the rank moved. Once one tile was read on the host
 * (its device copy clean) that one goes, without a write-back. Every tile
 * keeps its contents. */
static void comm_room(weft_context_t *ctx)
{
    enum { NT = SLOTS + 1 };
    weft_data_t *x[NT];
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "dirty");
    for (int i = 0; i < NT; i++) {
        double seed = i + 1.0;
        x[i] = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
        REQUIRE(weft_insert_task(tp, &devtest_fill_dev, WEFT_VALUE, &seed, sizeof seed, WEFT_W,
                                 x[i], 0) == 0);
    }
    CHECK(weft_taskpool_wait(tp) == WEFT_SUCCESS);
    weft_taskpool_free(tp);
    weft_devmgr_t *m = ctx->devmgr[1];
    weft_data_t *in = weft_data_new(ctx, WEFT_DOUBLE, NB, NB, 0);
    weft_data_copy_t *c = NULL;
    weft_device_counters_t c0 = devgate_counters(ctx, 1);
    int full = weft_devcopy_get_nowait(m, in, &c);
    weft_device_counters_t c1 = devgate_counters(ctx, 1);
    void *p = NULL;
    REQUIRE(weft_data_host_acquire(x[1], WEFT_R, &p, NULL) == 0);
    REQUIRE(weft_data_host_release(x[1]) == 0);
    weft_device_counters_t c2 = devgate_counters(ctx, 1);
    int room = c ? WEFT_ERR_INTERNAL : weft_devcopy_get_nowait(m, in, &c);
    weft_device_counters_t c3 = devgate_counters(ctx, 1);
    printf("comm room: full %d (%lld evictions, %lld write-backs, D2H %lld), then %d (%lld "
           "evictions, %lld write-backs, D2H %lld)\n",
           full, (long long)(c1.evictions - c0.evictions),
           (long long)(c1.writebacks - c0.writebacks), (long long)(c1.bytes_d2h - c0.bytes_d2h),
           room, (long long)(c3.evictions - c2.evictions),
           (long long)(c3.writebacks - c2.writebacks), (long long)(c3.bytes_d2h - c2.bytes_d2h));
    CHECK(full == WEFT_AGAIN && c1.evictions == c0.evictions && c1.writebacks == c0.writebacks &&
          c1.bytes_d2h == c0.bytes_d2h);
    CHECK(room == WEFT_SUCCESS && c3.evictions == c2.evictions + 1 &&
          c3.writebacks == c2.writebacks && c3.bytes_d2h == c2.bytes_d2h);
    CHECK(!x[1]->copies[1] && x[0]->copies[1] && x[2]->copies[1] && x[3]->copies[1]);
    if (c) {
        weft_data_lock(in);
        weft_data_copy_reader_release_locked(c);
        weft_data_unlock(in);
    }
    weft_data_release(in);
    double ref[NB * NB];
    for (int i = 0; i < NT; i++) {
        double *h = weft_data_host_ptr(x[i], NULL);
        devtest_fill_array(ref, NB, NB, NB, i + 1.0);
        CHECK(h && devtest_maxdiff(h, NB, ref, NB, NB, NB) == 0.0);
        weft_data_release(x[i]);
    }
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = devtest_init(&argc, &argv, 1);
    const char *policy = getenv("WEFT_DEVICE_EVICT");
    int next_use = !policy || strcmp(policy, "lru") != 0;
    if (getenv("DEVTEST_EVICT_RULES")) {
        rules(ctx, next_use);
        comm_room(ctx);
    } else
        cycle(ctx, next_use);
    CHECK(weft_fini(ctx) == WEFT_SUCCESS);
    return check_report("device_evict");
}
