#!/usr/bin/env python3
"""Traffic references for an out-of-core tiled Cholesky (bench/oversub.sh).

For weft-potrf's run on one device holding C tiles (its fill tasks, the
prefetch of every tile, then the task graph of apps/potrf_dag.h with
--trsm-inv 2 as with -g), prints the bytes host -> device and back of

  bound     a lower bound for any schedule: the fill taskpool ends before
            the factorization starts, and every tile is used again there, so
            the tiles beyond C that were born on the device went out once
            and come back once (device: the emu device runs the fill tasks);
            tiles born on the host come in once, and those beyond C twice
            (host: CUDA, where the fill tasks run on the host). The factor
            stays on the device (runtime-owned tiles are not flushed);
  analytic  Ballard, Demmel, Holtz and Schwartz (SIAM J. Sci. Comput. 2010)
            for Cholesky's N^3/6 multiply-adds with M words of device memory:
            #mults / (2 sqrt(2) sqrt(M)) - M words in (vacuous, 0, when M is
            large next to N^2, as here);
  belady    the tasks one at a time in the order weft's ready heap runs them
            alone (priority, then insertion), with the offline optimal
            eviction (farthest next use, clean first at equal distance,
            dirty victims written back): what a perfect cache moves for that
            order, the reference device_evict=next_use approaches (it also
            holds the tiles of tasks in flight, and reorders by residency);
  lru       the same order with least-recently-used eviction.

Usage: oversub_bound.py N NB LIMIT_BYTES [device|host]
"""
import heapq
import math
import sys


def tasks(nt):
    """(priority, reads, writes) in insertion order; tiles ('A', i, j) or ('D', k)."""
    out = []
    prio = lambda col, bonus: 4 * (nt - col) + bonus
    for k in range(nt):
        akk = ('A', k, k)
        out.append((prio(k, 3), [], [akk]))
        first_inv = k + 2
        if first_inv < nt:
            out.append((prio(k, 3), [akk], [('D', k)]))
        for m in range(k + 1, nt):
            src = akk if m < first_inv else ('D', k)
            out.append((prio(k, 2), [src], [('A', m, k)]))
        for m in range(k + 1, nt):
            amk = ('A', m, k)
            out.append((prio(m, 2), [amk], [('A', m, m)]))
            for n in range(k + 1, m):
                out.append((prio(n, 1), [amk, ('A', n, k)], [('A', m, n)]))
    return out


def serial_order(ts):
    """The order one worker runs them by (priority desc, insertion asc)."""
    preds = [set() for _ in ts]
    last_w, readers = {}, {}
    for i, (_, rd, wr) in enumerate(ts):
        for d in rd:
            if d in last_w:
                preds[i].add(last_w[d])
            readers.setdefault(d, []).append(i)
        for d in wr:
            preds[i].update(readers.get(d, []))
            if d in last_w:
                preds[i].add(last_w[d])
            readers[d] = []
            last_w[d] = i
    succ = [[] for _ in ts]
    for i, p in enumerate(preds):
        for j in p:
            succ[j].append(i)
    left = [len(p) for p in preds]
    heap = [(-ts[i][0], i) for i in range(len(ts)) if left[i] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, i = heapq.heappop(heap)
        order.append(i)
        for j in succ[i]:
            left[j] -= 1
            if left[j] == 0:
                heapq.heappush(heap, (-ts[j][0], j))
    return order


def simulate(accesses, on_host, cap, policy):
    """accesses: (tiles read, tiles written) per step; returns tiles (in, out)."""
    uses = {}
    for s, (rd, wr) in enumerate(accesses):
        for d in set(rd) | set(wr):
            uses.setdefault(d, []).append(s)
    pos = {d: 0 for d in uses}
    resident, dirty, on_host = {}, set(), set(on_host)
    tin = tout = 0
    for s, (rd, wr) in enumerate(accesses):
        need = set(rd) | set(wr)
        for d in need:
            pos[d] += 1  # uses[d][pos[d]] is now its next use after s
        for d in need:
            if d in resident:
                continue
            if len(resident) >= cap:
                def key(v):
                    if policy == 'lru':
                        return -resident[v]
                    nxt = uses[v][pos[v]] if pos[v] < len(uses[v]) else math.inf
                    return (nxt, v not in dirty)
                victim = max((v for v in resident if v not in need), key=key)
                if victim in dirty:
                    tout += 1
                    dirty.discard(victim)
                    on_host.add(victim)
                del resident[victim]
            # Every flow of these tasks reads, but the fill's and dinv's writes.
            reads = d in rd or (d[0] == 'A' and d in wr and s >= accesses_fill)
            if reads and d in on_host:
                tin += 1
            resident[d] = s
        for d in need:
            resident[d] = s
        for d in wr:
            dirty.add(d)
    return tin, tout


accesses_fill = 0


def main():
    global accesses_fill
    n, nb, limit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    born = sys.argv[4] if len(sys.argv) > 4 else 'device'
    nt = (n + nb - 1) // nb
    tile = nb * nb * 8
    cap = max(limit // tile, 4)
    tiles = [('A', m, k) for k in range(nt) for m in range(k, nt)]
    ts = tasks(nt)
    order = serial_order(ts)
    fill = [([], [t]) for t in tiles] if born == 'device' else []
    accesses_fill = len(fill)
    acc = fill + [([t], []) for t in tiles] + [(ts[i][1], ts[i][2]) for i in order]
    over = max(0, len(tiles) - cap)
    gib = 1 << 30
    words = limit / 8
    analytic = max(0.0, (n ** 3 / 6) / (2 * math.sqrt(2) * math.sqrt(words)) - words) * 8
    bound_in = (len(tiles) + over) if born == 'host' else over
    bound_out = over if born == 'device' else 0
    print(f"bound {bound_in * tile / gib:.3f} {bound_out * tile / gib:.3f}")
    print(f"analytic {analytic / gib:.3f} 0")
    on_host = tiles if born == 'host' else []
    for policy in ('belady', 'lru'):
        tin, tout = simulate(acc, on_host, cap, policy)
        print(f"{policy} {tin * tile / gib:.3f} {tout * tile / gib:.3f}")


if __name__ == '__main__':
    main()
