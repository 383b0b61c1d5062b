#!/usr/bin/env python3
"""Joins the GPU benchmark CSV (relugrad_gpu_bench + torch_bench.py rows:
impl,dtype,n,mode,bytes,us,gbps,status) into one table per timing mode and
checks the issue's targets:
  - relugrad (torch preset) at n >= 256M elements: >= 90% of the copy GB/s;
  - relugrad no slower than PyTorch's threshold_backward at every size;
  - the tensorflow preset (the general kernel) at least 0.97x the torch preset;
  - the mask backward at least 1.35x threshold_backward (by time) at n >= 64M.
A/B rows (relugrad rows with a tag such as _gs, _gsu1 or _pipe: another launch geometry) are
compared with the untagged default.
Ratios are relugrad GB/s divided by the peer's GB/s (> 1: relugrad faster).
Prints Markdown; exit status 0 whatever the targets say (they are reported).
"""
import argparse
import sys
from collections import defaultdict


def load(path):
    rows = {}
    notes = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                notes.append(line[1:].strip())
                continue
            parts = line.split(",", 7)
            if len(parts) != 8:
                continue
            impl, dtype, n, mode, nbytes, us, gbps, status = parts
            rows[(impl, dtype, int(n), mode)] = (float(gbps), float(us), status)
    return rows, notes


def human(n):
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    args = ap.parse_args()
    rows, notes = load(args.csv)
    out = []
    for note in notes:
        out.append(f"- {note}")
    dtypes = sorted({k[1] for k in rows}, key=["f32", "f16", "bf16", "f64"].index)
    sizes = sorted({k[2] for k in rows})
    verdicts = defaultdict(list)

    def cell(impl, d, n, mode):
        r = rows.get((impl, d, n, mode))
        if r is None:
            return None, "-"
        gbps, _, status = r
        if status != "ok":
            return None, "n/a"
        return gbps, f"{gbps:.0f}"

    for mode in ("graph", "eager"):
        if not any(k[3] == mode for k in rows):
            continue
        out.append("")
        out.append(f"### {mode} ({'CUDA graph replay: device time' if mode == 'graph' else 'back-to-back calls on a stream: what an application sees'})")
        out.append("")
        out.append("| dtype | n | copy GB/s | relugrad GB/s | of copy | torch GB/s | vs torch | cuDNN GB/s | vs cuDNN | relugrad tf preset GB/s |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for d in dtypes:
            for n in sizes:
                copy, copy_s = cell("copy", d, n, mode)
                rg, rg_s = cell("relugrad_torch", d, n, mode)
                th, th_s = cell("torch", d, n, mode)
                cd, cd_s = cell("cudnn", d, n, mode)
                _, tf_s = cell("relugrad_tensorflow", d, n, mode)
                if rg is None and copy is None and th is None:
                    continue
                frac = f"{rg / copy:.1%}" if rg and copy else "-"
                vs_t = f"{rg / th:.2f}x" if rg and th else "-"
                vs_c = f"{rg / cd:.2f}x" if rg and cd else "-"
                out.append(f"| {d} | {human(n)} | {copy_s} | {rg_s} | {frac} | {th_s} | {vs_t} | {cd_s} | {vs_c} | {tf_s} |")
                if rg and copy and n >= (256 << 20):
                    verdicts[mode].append((rg / copy >= 0.90, f"{d} n={human(n)}: {rg / copy:.1%} of copy (target >= 90%)"))
                if rg and th:
                    verdicts[mode].append((rg >= th, f"{d} n={human(n)}: {rg / th:.2f}x torch (target >= 1.00x)"))
                tf, _ = cell("relugrad_tensorflow", d, n, mode)
                if rg and tf:
                    verdicts[mode].append((tf >= 0.97 * rg, f"{d} n={human(n)}: tensorflow preset {tf / rg:.2f}x the torch preset (target >= 0.97x)"))
    # The 1-bit mask path (torch preset): the backward against threshold_backward by time (it
    # moves 2n elements + n/8 bytes where threshold_backward moves 3n elements).
    if any(k[0] == "relugrad_mask_grad" for k in rows):
        for mode in ("graph", "eager"):
            if not any(k[0] == "relugrad_mask_grad" and k[3] == mode for k in rows):
                continue
            out.append("")
            out.append(f"### mask path, {mode} (time ratios: > 1 is faster than threshold_backward)")
            out.append("")
            out.append("| dtype | n | mask backward us | threshold_backward us | speedup | mask backward GB/s | mask forward GB/s |")
            out.append("|---|---|---|---|---|---|---|")
            for d in dtypes:
                for n in sizes:
                    mg = rows.get(("relugrad_mask_grad", d, n, mode))
                    th = rows.get(("torch", d, n, mode))
                    mf = rows.get(("relugrad_mask_forward", d, n, mode))
                    if mg is None or mg[2] != "ok":
                        continue
                    th_ok = th is not None and th[2] == "ok" and mg[1] > 0
                    speed = f"{th[1] / mg[1]:.2f}x" if th_ok else "-"
                    th_us = f"{th[1]:.2f}" if th_ok else "-"
                    mf_gbps = f"{mf[0]:.0f}" if mf is not None and mf[2] == "ok" else "-"
                    out.append(f"| {d} | {human(n)} | {mg[1]:.2f} | {th_us} | {speed} | {mg[0]:.0f} | {mf_gbps} |")
                    if th_ok and n >= (64 << 20):
                        verdicts[mode].append((th[1] / mg[1] >= 1.35,
                                               f"{d} n={human(n)}: mask backward {th[1] / mg[1]:.2f}x threshold_backward (target >= 1.35x)"))
    # A/B rows: relugrad_* with a tag (e.g. relugrad_torch_gs from
    # RELUGRAD_CUDA_GEOMETRY=gridstride) against the untagged default build.
    bases = ("relugrad_torch", "relugrad_tensorflow", "relugrad_mask_grad", "relugrad_mask_forward")
    tagged = sorted({k[0] for k in rows if k[0] not in bases and any(k[0].startswith(b + "_") for b in bases)})
    if tagged:
        out.append("")
        out.append("### A/B (default kernel vs tagged variant, GB/s)")
        out.append("")
        out.append("| variant | mode | dtype | n | default GB/s | variant GB/s | variant/default |")
        out.append("|---|---|---|---|---|---|---|")
        for impl in tagged:
            base = max((b for b in bases if impl.startswith(b + "_")), key=len)
            for (i, d, n, mode), (gbps, _, status) in sorted(rows.items(), key=lambda kv: (kv[0][3], kv[0][1], kv[0][2])):
                if i != impl or status != "ok":
                    continue
                ref = rows.get((base, d, n, mode))
                if ref is None or ref[2] != "ok" or ref[0] == 0:
                    continue
                out.append(f"| {impl} | {mode} | {d} | {human(n)} | {ref[0]:.0f} | {gbps:.0f} | {gbps / ref[0]:.3f} |")
    out.append("")
    out.append("### targets")
    out.append("")
    for mode, items in verdicts.items():
        failed = [t for ok, t in items if not ok]
        out.append(f"- {mode}: {len(items) - len(failed)}/{len(items)} met"
                   + ("" if not failed else "; missed: " + "; ".join(failed)))
    if not verdicts:
        out.append("- no comparable rows (did the benchmark run?)")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
