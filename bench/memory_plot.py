#!/usr/bin/env python3
"""An SVG of a `python -m bench.torch steps --mask --peak --json` run: per model, peak memory of one
training step (left panel) and step time (right panel), stock against relugrad, each relugrad bar
labelled with its ratio to stock (for time the median of the interleaved per-round ratios). Plain SVG written by hand: no plotting library needed.

    python3 bench/memory_plot.py docs/results/<machine>/torch_report-memory.json \
        --out docs/results/<machine>/torch_report-memory.svg
"""
import argparse
import json
from xml.sax.saxutils import escape

STOCK, OURS = "#9e9e9e", "#1f77b4"
BAR, GAP, GROUP_GAP = 16, 2, 22
LEFT, TOP, PANEL_W, PANEL_GAP = 110, 46, 300, 70


def panel(rows, x0, title, key_stock, key_ours, unit, scale, ratio=None):
    """SVG elements of one horizontal bar panel at x offset x0; each relugrad bar is labelled with
    r[ratio] (the median of interleaved per-round ratios, for time) or its ratio to stock's bar."""
    top = max(max(r[key_stock], r[key_ours]) * scale for r in rows)
    out = [f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 24}" text-anchor="middle" font-weight="bold">{escape(title)}</text>']
    y = TOP
    for r in rows:
        for key, color in ((key_stock, STOCK), (key_ours, OURS)):
            v = r[key] * scale
            w = PANEL_W * v / top
            out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{BAR}" fill="{color}"/>')
            label = f"{v:.1f} {unit}"
            if key == key_ours:
                label += f"  ({r[ratio] if ratio else r[key_ours] / r[key_stock]:.3f}x)"
            out.append(f'<text x="{x0 + w + 4:.1f}" y="{y + BAR - 4}" font-size="11">{escape(label)}</text>')
            y += BAR + GAP
        y += GROUP_GAP
    return out, y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.json) as f:
        run = json.load(f)
    rows = run["rows"]
    if not rows or "peak_stock" not in rows[0]:
        raise SystemExit(f"{args.json}: no peak figures (run python -m bench.torch steps with --peak)")
    mem, height = panel(rows, LEFT, "peak memory of a step (MiB)", "peak_stock", "peak_relugrad", "MiB", 2**-20)
    time, _ = panel(rows, LEFT + PANEL_W + PANEL_GAP + 90, "step time (ms, best round; x: median ratio)",
                    "stock_ms", "relugrad_ms", "ms", 1.0, ratio="time_ratio")
    width = LEFT + 2 * PANEL_W + PANEL_GAP + 90 + 150
    labels, y = [], TOP
    for r in rows:
        labels.append(f'<text x="{LEFT - 8}" y="{y + BAR + 4}" text-anchor="end">{escape(r["model"])}</text>')
        y += 2 * (BAR + GAP) + GROUP_GAP
    meta = run["meta"]
    legend_y = height + 8
    machine = escape(meta["machine"]) + ", " if meta.get("machine") else ""
    legend = [f'<rect x="{LEFT}" y="{legend_y}" width="12" height="12" fill="{STOCK}"/>',
              f'<text x="{LEFT + 16}" y="{legend_y + 11}">stock torch</text>',
              f'<rect x="{LEFT + 110}" y="{legend_y}" width="12" height="12" fill="{OURS}"/>',
              f'<text x="{LEFT + 126}" y="{legend_y + 11}">relugrad replace_relu(mask=True)</text>',
              f'<text x="{LEFT}" y="{legend_y + 32}" font-size="11">{machine}torch '
              f'{escape(meta["torch"])}, {meta["threads"]} threads; time ratios are medians of interleaved rounds '
              f'(docs/python.md)</text>']
    total_h = legend_y + 44
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_h}" font-family="sans-serif" '
           f'font-size="12">', f'<rect width="{width}" height="{total_h}" fill="white"/>']
    svg += labels + mem + time + legend + ["</svg>"]
    with open(args.out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
