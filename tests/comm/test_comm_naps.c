/* The length of the engine's naps (internal, comm/naps.c), fed the naps a
 * rank would see: on cores of its own they grow to comm_nap_max_us; a
 * single nap another process cut into (a daemon's blip) makes the next
 * short and then they grow again; a competing process (the rank runs half
 * the time over many naps) holds them short for a second; a nap in which
 * a body ended makes the next short and holds nothing. Before the window,
 * one blip held the naps short for a second, and a blip every half second
 * kept weft-gemm in short naps the whole run. */
#include <stdio.h>

#include "comm/comm_internal.h"

#define US 1000LL
#define MS 1000000LL

static int fails;
static int64_t now;

/* A nap of the length the state asks for, of which the rank ran `share`. */
static long nap(weft_comm_naps_t *n, double share, int body_ended)
{
    int64_t wall = n->next_ns;
    now += wall;
    weft_comm__nap_ran_out(n, now, wall, (int64_t)(share * (double)wall), body_ended);
    return n->next_ns;
}

static void expect(const char *what, long got, long want)
{
    if (got == want) return;
    printf("test_comm_naps: %s: next nap %ld us, expected %ld\n", what, got / 1000, want / 1000);
    fails++;
}

static weft_comm_naps_t fresh(void)
{
    return (weft_comm_naps_t){.base_ns = 500 * US, .max_ns = 4 * MS, .next_ns = 500 * US};
}

int main(void)
{
    weft_comm_naps_t n = fresh();
    expect("own cores, 1st", nap(&n, 0.99, 0), 1 * MS);
    expect("own cores, 2nd", nap(&n, 0.99, 0), 2 * MS);
    expect("own cores, 3rd", nap(&n, 0.99, 0), 4 * MS);
    expect("own cores, at max", nap(&n, 0.99, 0), 4 * MS);

    /* A blip: one nap stretched to 3 ms of which the rank ran 0.1. */
    now += 3 * MS;
    weft_comm__nap_ran_out(&n, now, 3 * MS, 100 * US, 0);
    expect("after a blip", n.next_ns, 500 * US);
    expect("grows again after a blip", nap(&n, 0.99, 0), 1 * MS);
    for (int i = 0; i < 300; i++) nap(&n, 0.99, 0); /* a blip each half second */
    now += 3 * MS;
    weft_comm__nap_ran_out(&n, now, 3 * MS, 100 * US, 0);
    for (int i = 0; i < 3; i++) nap(&n, 0.99, 0);
    expect("blips every half second hold nothing", n.next_ns, 4 * MS);

    /* A competing process: the rank runs half of every nap for 100 ms. */
    n = fresh();
    for (int64_t end = now + 100 * MS; now < end;) nap(&n, 0.5, 0);
    expect("competing process", n.next_ns, 500 * US);
    expect("held short", nap(&n, 0.99, 0), 500 * US);
    for (int64_t end = now + 900 * MS; now < end;) expect("held short", nap(&n, 0.99, 0), 500 * US);
    for (int64_t end = now + 200 * MS; now < end;) nap(&n, 0.99, 0);
    expect("grows again after the second", n.next_ns, 4 * MS);

    /* A body ended in the nap: the worker may have idled. */
    n = fresh();
    for (int i = 0; i < 4; i++) nap(&n, 0.99, 0);
    expect("body ended, rank ran little", nap(&n, 0.2, 1), 500 * US);
    expect("body ended holds nothing", nap(&n, 0.99, 0), 1 * MS);
    for (int64_t end = now + 200 * MS; now < end;) nap(&n, n.next_ns == 4 * MS ? 0.2 : 0.99, 1);
    nap(&n, 0.2, 1);
    expect("idle workers hold nothing", nap(&n, 0.99, 0), 1 * MS);

    /* comm_nap_max_us <= comm_nap_us: never longer. */
    n = (weft_comm_naps_t){.base_ns = 500 * US, .max_ns = 500 * US, .next_ns = 500 * US};
    expect("max <= base", nap(&n, 0.99, 0), 500 * US);

    printf("test_comm_naps: %s\n", fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
