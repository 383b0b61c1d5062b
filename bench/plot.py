#!/usr/bin/env python3
"""PNG plots of a `make bench` run: one figure per dtype, GB/s against n
(log axis), one panel per thread count, one line per implementation, the
two triads (the in-run roofline) dashed. GB/s of the best sample by default
(--stat median for medians).

  plot.py results.jsonl --out-prefix bench/results/machine-date
"""
import argparse
import collections
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--out-prefix", required=True)
    p.add_argument("--title", default="")
    p.add_argument("--stat", choices=["best", "median"], default="best",
                   help="best sample (default: on a shared machine the median flips between load modes) or median")
    p.add_argument("--all", action="store_true", help="also the A/B variants (relugrad_stream, _nostream, _alloc4k)")
    args = p.parse_args()
    field = "best_gbps" if args.stat == "best" else "gbps"
    hidden = () if args.all else ("relugrad_stream", "relugrad_nostream", "relugrad_alloc4k")
    rows = [json.loads(l) for l in open(args.results) if l.startswith("{")]
    rows = [r for r in rows if not (r["impl"].startswith("relugrad") and r.get("semantics") not in ("torch", ""))]
    written = []
    for dtype in ["f32", "f16", "bf16", "f64"]:
        sel = [r for r in rows if r["dtype"] == dtype]
        if not sel:
            continue
        threads = sorted({r["threads"] for r in sel})
        fig, axes = plt.subplots(1, len(threads), figsize=(6.5 * len(threads), 4.8), squeeze=False, sharey=True)
        for ax, t in zip(axes[0], threads):
            lines = collections.defaultdict(list)
            for r in sel:
                if r["threads"] == t and r["impl"] not in hidden:
                    lines[r["impl"]].append((r["n"], r.get(field, r["gbps"])))
            for impl in sorted(lines, key=lambda i: (not i.startswith("triad"), not i.startswith("relugrad"), i)):
                pts = sorted(lines[impl])
                style = "--" if impl.startswith("triad") else "-"
                width = 2.4 if impl == "relugrad" else 1.3
                ax.plot([x for x, _ in pts], [y for _, y in pts], style, marker="o", markersize=3,
                        linewidth=width, label=impl)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (elements)")
            ax.set_title(f"{dtype}, {t} thread{'s' if t != 1 else ''}")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].set_ylabel(f"GB/s ({args.stat} sample; 3 arrays x n x element size)")
        axes[0][-1].legend(fontsize=7, loc="best")
        if args.title:
            fig.suptitle(args.title, fontsize=10)
        fig.tight_layout()
        path = f"{args.out_prefix}-{dtype}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    print("\n".join(written))


if __name__ == "__main__":
    main()
