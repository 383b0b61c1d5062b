"""The report's verdicts: pure functions of a result row (standard library only, so a test loads
this file alone; python/tests/test_torch_report.py).

A ratio is relugrad / stock, the median of per-round ratios; a row may carry its ~95% interval
(`ratio_ci95`) and the A/A control's ratio (`control_ratio`: a copy of stock timed like relugrad).

Verdicts against "at most stock's time":
  shown               the whole interval at most 1.00;
  tie                 the interval contains 1.00 and the median is no farther from 1.00 than the
                      A/A control's median: the bench cannot tell relugrad from stock, as it cannot
                      tell stock from its copy. A tie meets an "at most stock" target;
  met                 (module rows) the median at most the row's limit;
  point at most 1.00  (step rows) only the median at most 1.00;
  over                the median above the limit, and not a tie.
A row without an interval or an A/A control is never a tie: nothing says what the noise is.
"""
N16_LIMIT = 1.3
SAVED_TARGETS = {"transformer": 0.88, "mlp_dropout": 0.70}
# Compiled training with saved_bits against compiled stock (issue 51): saved bytes, and compile time.
COMPILED_SAVED_TARGETS = {"transformer": 0.90, "mlp_dropout-b2048": 0.81}
COMPILE_TIME_LIMIT = 1.10

# The verdicts that meet an "at most stock" (or "at most its limit") target.
MEETS = ("shown", "tie", "met")


def is_tie(ratio: float, interval, control_ratio) -> bool:
    """The interval contains 1.00 and |ratio - 1| <= |control_ratio - 1| (see the module doc)."""
    if interval is None or control_ratio is None:
        return False
    lo, hi = interval
    return lo <= 1.0 <= hi and abs(ratio - 1.0) <= abs(control_ratio - 1.0)


def verdict_module(row: dict) -> str:
    """'met', 'tie' or 'over' for one module row: n = 16 against N16_LIMIT (a fixed-cost limit,
    not stock's time: no tie), else against 1.00."""
    if row["n"] <= 16:
        return "met" if row["ratio"] <= N16_LIMIT else "over"
    if is_tie(row["ratio"], row.get("ratio_ci95"), row.get("control_ratio")):
        return "tie"
    return "met" if row["ratio"] <= 1.0 else "over"


def verdict_ratio(ratio: float, interval, control_ratio=None) -> str:
    """'shown' (the whole ~95% interval at most 1.00), 'tie', 'point at most 1.00' or 'over'."""
    if interval[1] <= 1.0:
        return "shown"
    if is_tie(ratio, interval, control_ratio):
        return "tie"
    return "point at most 1.00" if ratio <= 1.0 else "over"


def verdict_step(row: dict) -> str:
    """verdict_ratio of a step row, with its A/A control where the run timed one."""
    return verdict_ratio(row["time_ratio"], row["ratio_ci95"], row.get("control_ratio"))


def verdict_memory(row: dict) -> list:
    """[(what, measured, verdict)] for one memory row: saved bytes and peak at most stock's, the
    saved-bytes target where the issue sets one, and the step time."""
    saved = row["saved_relugrad"] / row["saved_stock"]
    out = [("saved bytes at most stock's", f"{saved:.3f}", "met" if saved <= 1.0 else "over")]
    target = SAVED_TARGETS.get(row["model"])
    if target is not None:
        out.append((f"saved bytes at most {target:.2f}x", f"{saved:.3f}", "met" if saved <= target else "over"))
    if "peak_stock" in row:
        out.append(("peak at most stock's",) + verdict_peak(row))
    out.append(("step time at most stock's", ratio_text(row), verdict_step(row)))
    return out


def verdict_peak(row: dict) -> tuple:
    """(measured, verdict) of the peak: medians of child processes; above stock's median but not
    above stock's highest child is 'within the children's spread' (VmHWM moves by pages from one
    child to the next), above that 'over'."""
    peak = row["peak_relugrad"] / row["peak_stock"]
    extra = (row["peak_relugrad"] - row["peak_stock"]) / 2**20
    measured = f"{peak:.3f} ({extra:+.1f} MiB)"
    stock_runs, ours_runs = row.get("peak_stock_runs"), row.get("peak_relugrad_runs")
    if stock_runs and ours_runs:
        measured += (f"; children stock {min(stock_runs) / 2**20:.1f}-{max(stock_runs) / 2**20:.1f}, relugrad "
                     f"{min(ours_runs) / 2**20:.1f}-{max(ours_runs) / 2**20:.1f} MiB")
    if peak <= 1.0:
        return measured, "met"
    if stock_runs and row["peak_relugrad"] <= max(stock_runs):
        return measured, "within the children's spread"
    return measured, "over"


def ratio_text(row: dict) -> str:
    lo, hi = row["ratio_ci95"]
    text = f"{row['time_ratio']:.3f} [{lo:.3f}, {hi:.3f}]"
    if "control_ratio" in row:
        clo, chi = row["control_ci95"]
        text += f", A/A {row['control_ratio']:.3f} [{clo:.3f}, {chi:.3f}]"
    return text


def compile_text(r: dict) -> str:
    """The compile time ratio with its interval and the A/A's (rows of one compile each: the ratios)."""
    if "compile_ratio" not in r:
        c = r["compile_s"]
        ours, copy = c["compiled_relugrad"] / c["compiled_stock"], c["compiled_copy"] / c["compiled_stock"]
        return f"{ours:.2f} (A/A {copy:.2f})"
    lo, hi = r["compile_ci95"]
    alo, ahi = r["compile_control_ci95"]
    return (f"{r['compile_ratio']:.2f} [{lo:.2f}, {hi:.2f}] "
            f"(A/A {r['compile_control']:.2f} [{alo:.2f}, {ahi:.2f}])")


def verdict_compiled(row: dict) -> list:
    """[(what, measured, verdict)] for one compile-memory row (bench/torch/compile_memory.py):
    the same bits; saved bytes at most compiled stock's and eager relugrad's, and the target where
    one is set; peak at most compiled stock's, and below it where the saved bytes are; step time
    at most compiled stock's (tie rule); compile time within COMPILE_TIME_LIMIT (the median of the
    per-round ratios, beside it the A/A ratio of a second compiled stock, its noise); no added
    graph, graph break or recompilation."""
    saved, s = row["saved"], row["saved"]["compiled_relugrad"] / row["saved"]["compiled_stock"]
    out = [("same bits as compiled stock", "yes" if row["same_bits"] else "NO", "met" if row["same_bits"] else "over"),
           ("saved bytes at most compiled stock's", f"{s:.3f}", "met" if s <= 1.0 else "over")]
    e = saved["compiled_relugrad"] / saved["eager_relugrad"]
    out.append(("saved bytes at most eager relugrad's", f"{e:.3f}", "met" if e <= 1.0 else "over"))
    target = COMPILED_SAVED_TARGETS.get(row["model"])
    if target is not None:
        out.append((f"saved bytes at most {target:.2f}x compiled stock", f"{s:.3f}", "met" if s <= target else "over"))
    if "peak" in row:
        p = row["peak"]["compiled_relugrad"] / row["peak"]["compiled_stock"]
        runs = row["peak_runs"]
        spread = max(runs["compiled_stock"]) >= row["peak"]["compiled_relugrad"]
        lower = s >= 1.0 or p < 1.0
        verdict = "met" if (p <= 1.0 and lower) else ("within the children's spread" if spread else "over")
        out.append(("peak at most compiled stock's (lower where saved is)", f"{p:.3f}", verdict))
    out.append(("step time at most compiled stock's", ratio_text(row), verdict_step(row)))
    c = row["compile_s"]
    ratio = row.get("compile_ratio", c["compiled_relugrad"] / c["compiled_stock"])
    out.append((f"compile time at most {COMPILE_TIME_LIMIT:.2f}x", compile_text(row),
                "met" if ratio <= COMPILE_TIME_LIMIT else "over"))
    d = row["dynamo"]
    added = {k: d["compiled_relugrad"][k] - d["compiled_stock"][k] for k in ("graphs", "breaks", "recompiles")}
    again = row["recompiled_while_timed"]["graphs"]
    out.append(("no added graphs, breaks or recompilations", f"{added}, {again} while timed",
                "met" if not any(added.values()) and not again else "over"))
    return out


def all_verdicts(part: str, data: dict) -> list:
    """Every verdict of one part of the report (module, steps, memory, compile, compile_memory)."""
    rows = data["rows"]
    if part == "compile_memory":
        return [v for r in rows for _, _, v in verdict_compiled(r)]
    if part == "module":
        return [verdict_module(r) for r in rows]
    if part == "memory":
        return [v for r in rows for _, _, v in verdict_memory(r)]
    return [verdict_step(r) for r in rows]
