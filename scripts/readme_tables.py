#!/usr/bin/env python3
"""Writes the results tables of README.md and docs/*.md from docs/results.

A table lives between two markers in a Markdown file:

    <!-- table:NAME MACHINE -->
    ... generated, never edited by hand ...
    <!-- /table -->

NAME picks the generator (TABLES below), MACHINE the folder docs/results/MACHINE
it reads. Every table ends with one provenance line: the machine, the command
that made the results, the commit that stored them, and the file.

    python3 scripts/readme_tables.py          # rewrite every marked region
    python3 scripts/readme_tables.py --check  # exit 1 if any region would change

`--check` runs in the quick tier (`make check`), so a table cannot drift from
its results file. Only the standard library: it runs before any venv exists.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results")
FILES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")
)

# What each machine folder is; the JSON's "machine" field is only the CPU's brand string.
MACHINES = {
    "xeon": "2-core Intel Xeon VM (AVX-512, 2 MiB L2, 260 MiB L3)",
    "zen5": "2-core AMD Zen 5 VM (AVX-512, 32 MiB L3)",
    "epyc-zen4": "2-core AMD EPYC Zen 4 VM (AVX2 selected, 32 MiB L3)",
}
REPORT_COMMAND = ".venv/bin/python -m bench.torch report --out docs/results/{m}/torch_report"
BENCH_COMMAND = "make bench"

REGION = re.compile(r"(<!-- table:([\w-]+) ([\w-]+) -->\n)(.*?)(<!-- /table -->)", re.S)


def commit_of(path: str) -> str:
    """The commit the results were measured at: the file's own record ("commit" in a JSON file's
    meta, a "Commit: <hash>" line in a Markdown report) where it has one, else the commit that last
    changed the file's content (renames followed), so a results file regenerated and committed with
    its tables keeps them in step."""
    try:
        with open(path) as f:
            text = f.read()
        if path.endswith(".json"):
            recorded = json.loads(text).get("meta", {}).get("commit")
        else:
            m = re.search(r"^Commit: `?([0-9a-f]{7,40})`?", text, re.M)
            recorded = m.group(1) if m else None
        if recorded:
            return recorded[:7]
    except (OSError, ValueError, AttributeError):
        pass
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%h", "--diff-filter=AM", "--follow", "--", path],
            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or "uncommitted"


def provenance(doc: str, machine: str, command: str, files: list[str], extra: str = "",
               link_text: str = "") -> str:
    rel = os.path.relpath(RESULTS, os.path.dirname(os.path.join(ROOT, doc)))
    links = ", ".join(f"[{link_text or f}]({rel}/{machine}/{f})" for f in files)
    commit = commit_of(os.path.join(RESULTS, machine, files[0]))
    return f"*{MACHINES[machine]}{extra}; `{command}`; commit {commit}; {links}.*"


def load(machine: str, name: str) -> dict:
    with open(os.path.join(RESULTS, machine, name)) as f:
        return json.load(f)


def fmt_ci(r: dict, key: str = "ratio_ci95", ratio: str = "time_ratio") -> str:
    lo, hi = r[key]
    return f"{r[ratio]:.3f} [{lo:.3f}, {hi:.3f}]"


def fmt_control(r: dict) -> str:
    return f"{r['control_ratio']:.3f}" if r.get("control_ratio") is not None else "-"


# --- kernel: relugrad against the triads and the peers (make bench's report) ---

KERNEL_POINTS = [("f32", 1, "4K"), ("f32", 1, "1M"), ("f32", 1, "16M"), ("f32", 2, "64M"),
                 ("bf16", 1, "16M"), ("f16", 2, "64M")]


def bench_tables(machine: str) -> dict:
    """{(dtype, threads): {n: {column: value}}} from the report's GB/s tables."""
    tables: dict = {}
    key = None
    header: list[str] = []
    with open(os.path.join(RESULTS, machine, "bench_report.md")) as f:
        for line in f:
            m = re.match(r"### (\w+), (\d) threads? \(GB/s", line)
            if m:
                key, header = (m.group(1), int(m.group(2))), []
                tables[key] = {}
                continue
            if key is None or not line.startswith("|"):
                if line.startswith("## "):
                    key = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not header:
                header = cells
            elif not cells[0].startswith("---"):
                tables[key][cells[0]] = dict(zip(header, cells))
    return tables


def table_kernel(doc: str, machine: str) -> str:
    t = bench_tables(machine)
    out = ["| dtype | threads | n | triad (cached) | triad (streaming) | **relugrad** "
           "| oneDNN | PyTorch `out=` (C++) | relugrad / oneDNN | relugrad / PyTorch |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for dtype, threads, n in KERNEL_POINTS:
        r = t[(dtype, threads)][n]

        def ratio(peer: str) -> str:
            v = r.get(peer, "")
            return f"{float(r['relugrad']) / float(v):.2f}x" if v else "-"
        out.append(f"| {dtype} | {threads} | {n} | {r['triad']} | {r['triad_nt']} | "
                   f"**{r['relugrad']}** | {r.get('onednn') or '-'} | "
                   f"{r.get('torch_out_cpp') or '-'} | {ratio('onednn')} | "
                   f"{ratio('torch_out_cpp')} |")
    out.append("")
    out.append("GB/s (3 x n x element size per call, cold caches). "
               + provenance(doc, machine, BENCH_COMMAND, ["bench_report.md"]))
    return "\n".join(out) + "\n"


# --- torch: the point of use (torch_report's module rows and training steps) ---

def table_torch(doc: str, machine: str) -> str:
    module = load(machine, "torch_report-module.json")
    steps = load(machine, "torch_report-steps.json")
    out = ["| what | stock | relugrad | relugrad / stock [95%] | A/A control |",
           "|---|---|---|---|---|"]
    for dtype in ("f32", "bf16", "f16"):
        rows = [r for r in module["rows"] if r["dtype"] == dtype and r["n"] >= 65536]
        ratios = [r["ratio"] for r in rows]
        aa = [r["control_ratio"] for r in rows]
        at_most = sum(1 for x in ratios if x <= 1.0)
        out.append(f"| `ReLU` forward + backward, {dtype}, 64K-64M elements | nn.ReLU | "
                   f"{at_most} of {len(rows)} rows at most stock (1-2 threads, 2 layouts) | "
                   f"median {statistics.median(ratios):.3f}, {min(ratios):.3f}-{max(ratios):.3f} | "
                   f"{min(aa):.3f}-{max(aa):.3f} |")
    for label, data in (("eager", steps),):
        for r in data["rows"]:
            out.append(f"| {r['model']} training step, {r['layout']}, {label} | "
                       f"{r['stock_ms']:.1f} ms | {r['relugrad_ms']:.1f} ms | {fmt_ci(r)} | "
                       f"{fmt_control(r)} |")
    out.append("")
    out.append(provenance(doc, machine, REPORT_COMMAND.format(m=machine),
                          ["torch_report-steps.json", "torch_report.md"],
                          f", torch {module['meta']['torch'].split('+')[0]}"))
    return "\n".join(out) + "\n"


def table_torch_module(doc: str, machine: str) -> str:
    """Every module row over n >= 64K, summarised per dtype, threads and layout."""
    module = load(machine, "torch_report-module.json")
    out = ["| dtype | threads | layout | rows at most stock | ratio range | A/A range | n = 16 ratio |",
           "|---|---|---|---|---|---|---|"]
    keys = sorted({(r["dtype"], r["threads"], r["layout"]) for r in module["rows"]},
                  key=lambda k: (["f32", "bf16", "f16"].index(k[0]), k[1], k[2] != "nchw"))
    for dtype, threads, layout in keys:
        rows = [r for r in module["rows"]
                if (r["dtype"], r["threads"], r["layout"]) == (dtype, threads, layout)]
        big = [r for r in rows if r["n"] >= 65536]
        small = [r for r in rows if r["n"] == 16]
        rat = [r["ratio"] for r in big]
        aa = [r["control_ratio"] for r in big]
        tiny = f"{small[0]['ratio']:.3f}" if small else "-"
        out.append(f"| {dtype} | {threads} | {layout} | {sum(x <= 1.0 for x in rat)} of {len(rat)} "
                   f"| {min(rat):.3f}-{max(rat):.3f} | {min(aa):.3f}-{max(aa):.3f} | {tiny} |")
    out.append("")
    out.append(provenance(doc, machine, REPORT_COMMAND.format(m=machine),
                          ["torch_report-module.json"],
                          f", torch {module['meta']['torch'].split('+')[0]}"))
    return "\n".join(out) + "\n"


def table_compile(doc: str, machine: str) -> str:
    """Training steps under torch.compile (inductor), against compiled stock."""
    data = load(machine, "torch_report-compile.json")
    out = ["| model | layout | stock | relugrad | relugrad / stock [95%] | A/A control | same bits |",
           "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| {r['model']} | {r['layout']} | {r['stock_ms']:.1f} ms | "
                   f"{r['relugrad_ms']:.1f} ms | {fmt_ci(r)} | {fmt_control(r)} | "
                   f"{'yes' if r.get('same_bits') else 'no'} |")
    out.append("")
    out.append(provenance(doc, machine, REPORT_COMMAND.format(m=machine),
                          ["torch_report-compile.json"],
                          f", torch {data['meta']['torch'].split('+')[0]}"))
    return "\n".join(out) + "\n"


# --- memory: replace_relu(mask=True) against stock, one training step ---

def table_memory(doc: str, machine: str) -> str:
    mem = load(machine, "torch_report-memory.json")
    mib = 1 << 20
    out = ["| model | saved for backward, stock | relugrad `mask=True` | saved ratio "
           "| peak ratio | step time ratio [95%] | A/A control |",
           "|---|---|---|---|---|---|---|"]
    for r in mem["rows"]:
        peak = (f"{r['peak_relugrad'] / r['peak_stock']:.3f}" if r.get("peak_stock") else "-")
        out.append(f"| {r['model']} | {r['saved_stock'] / mib:.1f} MiB | "
                   f"{r['saved_relugrad'] / mib:.1f} MiB | "
                   f"{r['saved_relugrad'] / r['saved_stock']:.3f} | {peak} | {fmt_ci(r)} | "
                   f"{fmt_control(r)} |")
    out.append("")
    same = sum(1 for r in mem["rows"] if r.get("same_bits"))
    out.append(f"Gradients bit-identical to stock's: {same} of {len(mem['rows'])} models. "
               + provenance(doc, machine, REPORT_COMMAND.format(m=machine),
                            ["torch_report-memory.json"],
                            f", torch {mem['meta']['torch'].split('+')[0]}"))
    return "\n".join(out) + "\n"


# --- memory-compiled: compiled training, saved booleans as bits (bench.torch compile-memory) ---

COMPILED_FILE = "torch_report_compiled-compile_memory.json"
COMPILED_COMMAND = (".venv/bin/python -m bench.torch report --parts compile_memory "
                    "--out docs/results/{m}/torch_report_compiled")


def table_memory_compiled(doc: str, machine: str) -> str:
    data = load(machine, COMPILED_FILE)
    mib = 1 << 20
    out = ["| model | saved, eager stock | eager `mask=True` | compiled stock | compiled relugrad | saved ratio "
           "| peak ratio | step time ratio [95%] | A/A control | compile time ratio (A/A) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        s, c = r["saved"], r["compile_s"]
        # Medians of per-round ratios where the file has rounds of compiles, else one compile each.
        compile_ratio = r.get("compile_ratio", c["compiled_relugrad"] / c["compiled_stock"])
        compile_control = r.get("compile_control", c["compiled_copy"] / c["compiled_stock"])
        peak = (f"{r['peak']['compiled_relugrad'] / r['peak']['compiled_stock']:.3f}" if r.get("peak") else "-")
        out.append(f"| {r['model']} | {s['eager_stock'] / mib:.1f} MiB | {s['eager_relugrad'] / mib:.1f} MiB | "
                   f"{s['compiled_stock'] / mib:.1f} MiB | {s['compiled_relugrad'] / mib:.1f} MiB | "
                   f"{s['compiled_relugrad'] / s['compiled_stock']:.3f} | {peak} | {fmt_ci(r)} | "
                   f"{fmt_control(r)} | {compile_ratio:.2f} ({compile_control:.2f}) |")
    out.append("")
    same = sum(1 for r in data["rows"] if r.get("same_bits"))
    out.append(f"Outputs, gradients and RNG state bit-identical to compiled stock's: {same} of {len(data['rows'])} "
               "models.\n" + provenance(doc, machine, COMPILED_COMMAND.format(m=machine), [COMPILED_FILE],
                                       f", torch {data['meta']['torch'].split('+')[0]}", link_text="results"))
    return "\n".join(out) + "\n"


TABLES = {"kernel": table_kernel, "torch": table_torch, "torch-module": table_torch_module,
          "compile": table_compile, "memory": table_memory, "memory-compiled": table_memory_compiled}


def render(doc: str, text: str) -> str:
    def one(m: re.Match) -> str:
        name, machine = m.group(2), m.group(3)
        if name not in TABLES:
            raise SystemExit(f"{doc}: unknown table {name!r} (known: {', '.join(TABLES)})")
        if machine not in MACHINES:
            raise SystemExit(f"{doc}: unknown machine {machine!r} (known: {', '.join(MACHINES)})")
        return m.group(1) + TABLES[name](doc, machine) + m.group(5)
    return REGION.sub(one, text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a table is out of date")
    args = ap.parse_args()
    stale = []
    for doc in FILES:
        path = os.path.join(ROOT, doc)
        with open(path) as f:
            text = f.read()
        new = render(doc, text)
        if new != text:
            if args.check:
                stale.append(doc)
            else:
                with open(path, "w") as f:
                    f.write(new)
                print(f"readme_tables: rewrote {doc}")
    if stale:
        print("readme_tables: out of date (run python3 scripts/readme_tables.py): "
              + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
