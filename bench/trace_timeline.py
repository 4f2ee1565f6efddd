#!/usr/bin/env python3
"""Render weft traces (trace=FILE gives FILE.rank<N>.json) as a PNG timeline.

    python3 bench/trace_timeline.py out.png trace.rank0.json trace.rank1.json

One row per (rank, track), in rank order then in the order tracks were
registered; slices coloured by category: task classes each their own colour,
transfers (H2D, D2H, D2D) in blues, network in purples, evictions in red.
The point is to see at a glance whether transfers and network overlap the
kernels, so rows of one rank stay together and ranks are separated by a rule.

Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import json
import re
import sys

TASK_COLOURS = ["#ff7f0e", "#2ca02c", "#bcbd22", "#17becf", "#8c564b", "#e377c2",
                "#7f7f7f", "#ffbb78", "#98df8a", "#dbdb8d", "#9edae5", "#c49c94"]
FAMILY_COLOURS = {
    "xfer": ["#08306b", "#4292c6", "#9ecae1", "#2171b5", "#c6dbef"],
    "net": ["#54278f", "#9e9ac8", "#756bb1", "#cbc9e2"],
    "evict": ["#d62728", "#ff9896"],
}
OTHER_COLOURS = ["#000000", "#555555", "#aaaaaa"]
FAMILY_LABEL = {"task": "task", "xfer": "transfer", "net": "network", "evict": "eviction"}


def load(paths):
    """Slices and row names of every file: ({(pid, tid): name}, {pid: name},
    {(pid, tid): sort key}, [(pid, tid, ts_us, dur_us, name, cat)])."""
    tracks, procs, order, slices = {}, {}, {}, []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        for ev in events:
            key = (ev.get("pid", 0), ev.get("tid", 0))
            args = ev.get("args") or {}
            if ev.get("ph") == "M":
                if ev.get("name") == "thread_name":
                    tracks[key] = str(args.get("name", key[1]))
                elif ev.get("name") == "thread_sort_index":
                    order[key] = args.get("sort_index", key[1])
                elif ev.get("name") == "process_name":
                    procs[key[0]] = str(args.get("name", key[0]))
            elif ev.get("ph") == "X":
                slices.append((key[0], key[1], float(ev["ts"]), float(ev.get("dur", 0)),
                               str(ev.get("name", "")), str(ev.get("cat", ""))))
    return tracks, procs, order, slices


def colour_keys(slices):
    """A colour for each (family, label) met, families in a fixed order so
    the legend reads tasks, transfers, network, evictions."""
    seen = {}
    for _, _, _, _, name, cat in slices:
        fam = cat if cat in FAMILY_LABEL else "other"
        label = name if fam in ("task", "xfer", "net") else (cat or "?")
        seen.setdefault((fam, label), None)
    colours, used = {}, {}
    fam_rank = {f: i for i, f in enumerate(["task", "xfer", "net", "evict", "other"])}
    for fam, label in sorted(seen, key=lambda k: (fam_rank[k[0]], k[1])):
        palette = TASK_COLOURS if fam == "task" else FAMILY_COLOURS.get(fam, OTHER_COLOURS)
        i = used.get(fam, 0)
        used[fam] = i + 1
        colours[(fam, label)] = palette[i % len(palette)]
    return colours


def slice_key(name, cat):
    fam = cat if cat in FAMILY_LABEL else "other"
    return fam, (name if fam in ("task", "xfer", "net") else (cat or "?"))


def legend_label(fam, label):
    """"task gemm", "transfer H2D", but "net recv" and "evict" as they are."""
    if fam in ("task", "xfer"):
        return "%s %s" % (FAMILY_LABEL[fam], label)
    return label


def rows_of(tracks, procs, order, slices):
    """Row index for each (pid, tid), and the row labels, top to bottom."""
    keys = set(tracks) | {(s[0], s[1]) for s in slices}
    keys = sorted(keys, key=lambda k: (k[0], order.get(k, k[1]), k[1]))
    labels = ["%s  %s" % (procs.get(k[0], "rank %d" % k[0]), tracks.get(k, "track %d" % k[1]))
              for k in keys]
    return {k: i for i, k in enumerate(keys)}, labels


def draw(out, tracks, procs, order, slices, title, window):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows, labels = rows_of(tracks, procs, order, slices)
    colours = colour_keys(slices)
    fig_h = 1.2 + 0.32 * max(len(rows), 1)
    fig, ax = plt.subplots(figsize=(15, fig_h))
    # One broken_barh per (row, colour): a few collections, not one artist a
    # slice, so 10^5 slices draw in seconds.
    groups = {}
    for pid, tid, ts, dur, name, cat in slices:
        groups.setdefault((rows[(pid, tid)], colours[slice_key(name, cat)]), []).append(
            (ts / 1000.0, max(dur, 0.0) / 1000.0))
    finish_axes(ax, rows, labels, slices, window)
    # White edges separate back-to-back slices of one colour, but only when
    # slices are several pixels wide; thinner ones would turn white.
    lo, hi = ax.get_xlim()
    widths = sorted(s[3] / 1000.0 for s in slices) or [0.0]
    px = widths[len(widths) // 2] / max(hi - lo, 1e-9) * 15 * 130
    edge = 0.4 if px >= 4 else 0
    for (row, colour), bars in groups.items():
        ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colour, edgecolor="white",
                       linewidth=edge)
    legend = [Patch(color=c, label=legend_label(f, l)) for (f, l), c in colours.items()]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8,
              frameon=False)
    ax.set_title(title or "weft trace: %d slices on %d tracks" % (len(slices), len(rows)))
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def finish_axes(ax, rows, labels, slices, window):
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    pids = sorted({k[0] for k in rows})
    for pid in pids[1:]:
        first = min(i for k, i in rows.items() if k[0] == pid)
        ax.axhline(first - 0.5, color="black", linewidth=0.8)
    if window:
        ax.set_xlim(*window)
    elif slices:
        lo = min(s[2] for s in slices) / 1000.0
        hi = max(s[2] + s[3] for s in slices) / 1000.0
        pad = (hi - lo) * 0.01 or 0.001
        ax.set_xlim(lo - pad, hi + pad)
    ax.set_xlabel("time (ms)")
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)


def parse_window(text):
    lo, hi = text.split(":")
    return float(lo), float(hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("traces", nargs="+", help="FILE.rank<N>.json files (or a merged one)")
    ap.add_argument("--title", help="title above the plot")
    ap.add_argument("--window", type=parse_window, metavar="START:END",
                    help="show only this time range, in ms")
    ap.add_argument("--tracks", metavar="REGEX",
                    help="show only the tracks whose name matches (e.g. 'cuda')")
    opts = ap.parse_args()
    try:
        import matplotlib  # noqa: F401  (only checks it is there)
    except ImportError:
        sys.exit("trace_timeline.py needs matplotlib (Debian: apt-get install python3-matplotlib)")
    tracks, procs, order, slices = load(opts.traces)
    if opts.tracks:
        keep = re.compile(opts.tracks)
        tracks = {k: v for k, v in tracks.items() if keep.search(v)}
        slices = [s for s in slices if (s[0], s[1]) in tracks]
    draw(opts.out, tracks, procs, order, slices, opts.title, opts.window)
    print("%s: %d slices, %d tracks" % (opts.out, len(slices), len(rows_of(tracks, procs, order, slices)[0])))


if __name__ == "__main__":
    main()
