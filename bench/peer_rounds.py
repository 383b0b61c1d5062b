#!/usr/bin/env python3
"""Peer ratios from bench/interleave_peers.sh output: for each point
(dtype, n, threads) and round, ours' speed over the peer's (best samples
of that round: a neighbour's load only slows a sample down), then the
median over rounds. Rounds put each implementation next to the others in
time, so the ratio is a measurement of the code, not of the neighbours.

  bench/peer_rounds.py PEERS.jsonl... [--table]   (also imported by report.py)
"""
import argparse
import json
import statistics
import sys

# (peer impl, our impl, target speedup, smallest n, what it checks)
COMPARISONS = (
    ("onednn", "relugrad_onednnbuf", 1.5, 0,
     "oneDNN eltwise backward relu (C++), relugrad on the same buffers in oneDNN's process"),
    ("torch_out_cpp", "relugrad_torchbuf", 1.2, 0,
     "PyTorch threshold_backward out= (C++, ATen), relugrad on the same buffers in its process"),
    ("onednn", "relugrad", 1.5, 0, "oneDNN eltwise backward relu (C++), relugrad in its own process"),
    ("torch_out_cpp", "relugrad", 1.2, 0, "PyTorch threshold_backward out= (C++, ATen), relugrad in its own process"),
    ("torch_out", "relugrad", 1.2, 0, "PyTorch threshold_backward out= (Python)"),
    ("torch_alloc", "relugrad_py_alloc", 3.0, 16 << 20,
     "allocating: relugrad.relu_grad(dy, s) vs torch threshold_backward, both from Python"),
)


def size_label(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def best_by_round(rows):
    """(impl, dtype, n, threads, cache) -> {round: best_s}; relugrad rows of the torch preset."""
    out = {}
    for r in rows:
        if r["impl"] == "relugrad" and r.get("semantics") not in ("torch", ""):
            continue
        key = (r["impl"], r["dtype"], r["n"], r["threads"], r.get("cache", "cold"))
        rounds = out.setdefault(key, {})
        rnd = r.get("round", 1)
        rounds[rnd] = min(rounds.get(rnd, float("inf")), r["best_s"])
    return out


def comparisons(rows, dtypes=("f32", "f16", "bf16")):
    """One entry per comparison that has data: (peer, ours, need, label, cells),
    cells = [(dtype, n, threads, cache, median ratio, per-round ratios)]."""
    by = best_by_round(rows)
    result = []
    for peer, ours, need, n_min, label in COMPARISONS:
        cells = []
        for (impl, dtype, n, t, cache), peer_rounds in sorted(by.items(), key=lambda kv: (kv[0][4], kv[0][1], kv[0][2], kv[0][3])):
            if impl != peer or dtype not in dtypes or n < n_min:
                continue
            mine = by.get((ours, dtype, n, t, cache))
            if not mine:
                continue
            ratios = [peer_rounds[k] / mine[k] for k in sorted(peer_rounds) if k in mine]
            if ratios:
                cells.append((dtype, n, t, cache, statistics.median(ratios), ratios))
        if cells:
            result.append((peer, ours, need, label, cells))
    return result


def markdown(rows):
    out = []
    for peer, ours, need, label, cells in comparisons(rows):
        below = [c for c in cells if c[4] < need]
        worst = min(cells, key=lambda c: c[4])
        rounds = max(len(c[5]) for c in cells)
        out.append(f"- {ours} >= {need}x {label}: {len(cells)} points, median of {rounds} interleaved rounds; "
                   f"worst {worst[4]:.2f}x at {worst[0]}/{size_label(worst[1])}/{worst[2]}T ({worst[3]}), "
                   f"{len(below)} below -> {'met' if not below else 'NOT met'}  \n  ("
                   + ", ".join(f"{d}/{size_label(n)}/{t}T{' warm' if c == 'warm' else ''} {m:.2f}"
                               for d, n, t, c, m, _ in cells) + ")")
    return out


TABLE_IMPLS = ("triad", "triad_nt", "relugrad", "onednn", "relugrad_onednnbuf", "torch_out_cpp",
               "relugrad_torchbuf", "torch_out")
# (column, peer, ours): ratios within a round; same-buffer controls when present.
RATIO_COLUMNS = (("relugrad / oneDNN", "onednn", "relugrad_onednnbuf"),
                 ("relugrad / torch C++", "torch_out_cpp", "relugrad_torchbuf"),
                 ("relugrad / torch Python", "torch_out", "relugrad"))


def table(rows):
    """Markdown: per point, each implementation's best GB/s (median over
    rounds) and ours over each peer (median of per-round ratios; against
    the same-buffer control run in the peer's process when there is one)."""
    by = best_by_round(rows)
    order = ("f32", "bf16", "f16", "f64")
    points = sorted({(k[4], k[1], k[3], k[2]) for k in by if k[0] == "relugrad"},
                    key=lambda p: (p[0], order.index(p[1]) if p[1] in order else 9, p[2], p[3]))
    impls = [i for i in TABLE_IMPLS if any(k[0] == i for k in by)]
    columns = [c for c in RATIO_COLUMNS if c[1] in impls]
    es = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}
    head = ["cache", "dtype", "threads", "n"] + impls + [c[0] for c in columns] + ["relugrad / better triad"]
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]

    def ratio(peer_rounds, mine):
        r = [peer_rounds[k] / mine[k] for k in mine if peer_rounds and k in peer_rounds]
        return statistics.median(r) if r else None

    for cache, dtype, t, n in points:
        moved = 3.0 * n * es[dtype]
        cells = [cache, dtype, str(t), size_label(n)]
        for impl in impls:
            rounds = by.get((impl, dtype, n, t, cache))
            cell = f"{moved / statistics.median(rounds.values()) / 1e9:.1f}" if rounds else "-"
            cells.append(f"**{cell}**" if impl.startswith("relugrad") else cell)
        for _, peer, ours in columns:
            mine = by.get((ours, dtype, n, t, cache)) or by.get(("relugrad", dtype, n, t, cache))
            x = ratio(by.get((peer, dtype, n, t, cache)), mine)
            cells.append(f"{x:.2f}x" if x is not None else "-")
        mine = by[("relugrad", dtype, n, t, cache)]
        tr = [by.get((x, dtype, n, t, cache), {}) for x in ("triad", "triad_nt")]
        best_triad = {k: min(x[k] for x in tr if k in x) for k in mine if any(k in x for x in tr)}
        x = ratio(best_triad, mine)
        cells.append(f"{x:.2f}" if x is not None else "-")
        out.append("| " + " | ".join(cells) + " |")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("peers", nargs="+")
    p.add_argument("--table", action="store_true", help="also the per-point GB/s table")
    args = p.parse_args()
    rows = [r for path in args.peers for r in load(path)]
    lines = markdown(rows)
    print("\n".join(lines) if lines else "no comparable rows", file=sys.stdout)
    if args.table:
        print()
        print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
