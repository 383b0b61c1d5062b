"""bench/torch/verdicts.py, the report's verdicts (pure functions; the benchmarks themselves are not run here):
each rule on both sides of its limit, so a report cannot call a miss met."""
import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "torch" / "verdicts.py"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("bench_torch_verdicts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_row(n, ratio):
    return {"threads": 1, "dtype": "f32", "layout": "nchw", "n": n, "stock_us": 10.0, "relugrad_us": 10.0 * ratio,
            "ratio": ratio, "control_ratio": 1.0}


def test_module_rows_are_held_to_stock_and_n16_to_its_own_limit(report):
    assert report.verdict_module(module_row(65536, 1.0)) == "met"
    assert report.verdict_module(module_row(65536, 1.0001)) == "over"
    assert report.verdict_module(module_row(16, 1.29)) == "met"
    assert report.verdict_module(module_row(16, 1.31)) == "over"


def test_a_step_ratio_is_shown_only_by_its_whole_interval(report):
    assert report.verdict_ratio(0.98, (0.97, 0.999)) == "shown"
    assert report.verdict_ratio(0.98, (0.97, 1.01)) == "point at most 1.00"
    assert report.verdict_ratio(1.001, (0.99, 1.01)) == "over"


def memory_row(model, saved, peak, ratio=0.99, hi=0.999):
    return {"model": model, "same_bits": True, "saved_stock": 100 * 2**20, "saved_relugrad": int(saved * 100 * 2**20),
            "peak_stock": 100 * 2**20, "peak_relugrad": int(peak * 100 * 2**20), "time_ratio": ratio,
            "ratio_ci95": [0.9, hi]}


def test_memory_targets(report):
    verdicts = {what: v for what, _, v in report.verdict_memory(memory_row("transformer", 0.77, 0.76))}
    assert verdicts == {"saved bytes at most stock's": "met", "saved bytes at most 0.88x": "met",
                        "peak at most stock's": "met", "step time at most stock's": "shown"}
    verdicts = {what: v for what, _, v in report.verdict_memory(memory_row("mlp_dropout", 0.75, 1.01, 1.01, 1.02))}
    assert verdicts == {"saved bytes at most stock's": "met", "saved bytes at most 0.70x": "over",
                        "peak at most stock's": "over", "step time at most stock's": "over"}
    verdicts = {what: v for what, _, v in report.verdict_memory(memory_row("resnet50", 1.01, 1.0))}
    assert verdicts["saved bytes at most stock's"] == "over" and len(verdicts) == 3  # no target of its own


def test_all_verdicts_reads_each_part(report):
    module = {"meta": {}, "rows": [module_row(16, 1.0), module_row(65536, 1.01)]}
    assert report.all_verdicts("module", module) == ["met", "over"]
    steps = {"meta": {"mask": False}, "rows": [{"time_ratio": 0.99, "ratio_ci95": [0.98, 1.0]}]}
    assert report.all_verdicts("steps", steps) == ["shown"]
    memory = {"meta": {"mask": True}, "rows": [memory_row("mlp", 1.0, 0.9)]}
    assert report.all_verdicts("memory", memory) == ["met", "met", "shown"]


def test_a_peak_over_stocks_median_is_over_unless_a_stock_child_read_as_much(report):
    row = memory_row("resnet50", 1.0, 1.001)
    assert report.verdict_peak(row)[1] == "over"  # no child figures: the medians decide
    row["peak_stock_runs"] = [99 * 2**20, 100 * 2**20, int(100.2 * 2**20)]
    row["peak_relugrad_runs"] = [row["peak_relugrad"]] * 3
    assert report.verdict_peak(row)[1] == "within the children's spread"
    row["peak_stock_runs"][-1] = 100 * 2**20
    assert report.verdict_peak(row)[1] == "over"
    assert report.verdict_peak(memory_row("resnet50", 1.0, 0.999))[1] == "met"


def test_a_tie_is_an_interval_around_1_within_the_a_a_controls_distance(report):
    # steps: the A/A control's median 1.004 sets the distance from 1.00 the bench cannot resolve
    assert report.verdict_ratio(1.003, (0.995, 1.010), 1.004) == "tie"
    assert report.verdict_ratio(1.004, (0.995, 1.010), 1.004) == "tie"  # at the distance: a tie
    assert report.verdict_ratio(0.997, (0.990, 1.005), 0.996) == "tie"  # the control's side does not matter
    assert report.verdict_ratio(1.005, (0.995, 1.010), 1.004) == "over"  # farther than the control
    assert report.verdict_ratio(1.003, (1.001, 1.010), 1.004) == "over"  # the interval misses 1.00
    assert report.verdict_ratio(0.990, (0.980, 1.005), 1.004) == "point at most 1.00"  # farther, below
    assert report.verdict_ratio(0.990, (0.980, 1.000), 1.004) == "shown"  # the whole interval at most 1.00
    assert report.verdict_ratio(1.003, (0.995, 1.010)) == "over"  # no control: no tie
    row = {"time_ratio": 1.003, "ratio_ci95": [0.995, 1.010], "control_ratio": 0.996, "control_ci95": [0.99, 1.0]}
    assert report.verdict_step(row) == "tie"
    assert report.all_verdicts("compile", {"rows": [row]}) == ["tie"]


def test_a_module_row_ties_against_1_00_but_n16_keeps_its_own_limit(report):
    def row(n, ratio, ci, control):
        r = module_row(n, ratio)
        r["ratio_ci95"], r["control_ratio"] = list(ci), control
        return r
    assert report.verdict_module(row(65536, 1.002, (0.998, 1.006), 0.997)) == "tie"
    assert report.verdict_module(row(65536, 0.998, (0.995, 1.001), 1.003)) == "tie"
    assert report.verdict_module(row(65536, 1.004, (0.998, 1.006), 0.997)) == "over"
    assert report.verdict_module(row(65536, 1.002, (1.001, 1.006), 0.997)) == "over"
    assert report.verdict_module(row(65536, 0.990, (0.985, 1.001), 1.003)) == "met"
    assert report.verdict_module(row(16, 1.002, (0.998, 1.006), 0.997)) == "met"
    assert report.verdict_module(row(16, 1.35, (0.9, 1.4), 1.4)) == "over"
    assert "tie" in report.MEETS and "over" not in report.MEETS
    memory = {"model": "mlp", "same_bits": True, "saved_stock": 100, "saved_relugrad": 90, "time_ratio": 1.002,
              "ratio_ci95": [0.99, 1.01], "control_ratio": 1.003, "control_ci95": [0.99, 1.01]}
    assert report.verdict_memory(memory)[-1] == (
        "step time at most stock's", "1.002 [0.990, 1.010], A/A 1.003 [0.990, 1.010]", "tie")


def compiled_row(saved_ours=80.0, eager_ours=90.0, peak_ours=95.0, compile_ours=10.5, graphs_ours=1, same=True,
                 model="mlp_dropout-b2048"):
    c = {"graphs": 1, "breaks": 0, "recompiles": 0}
    return {"model": model, "same_bits": same,
            "saved": {"eager_stock": 150.0, "eager_relugrad": eager_ours, "compiled_stock": 100.0,
                      "compiled_relugrad": saved_ours},
            "peak": {"compiled_stock": 100.0, "compiled_relugrad": peak_ours},
            "peak_runs": {"compiled_stock": [99.0, 100.0, 101.0], "compiled_relugrad": [peak_ours] * 3},
            "time_ratio": 0.98, "ratio_ci95": [0.96, 0.99], "control_ratio": 1.0, "control_ci95": [0.98, 1.02],
            "compile_s": {"compiled_stock": 10.0, "compiled_relugrad": compile_ours, "compiled_copy": 10.2},
            "dynamo": {"compiled_stock": c, "compiled_relugrad": dict(c, graphs=graphs_ours)},
            "recompiled_while_timed": {"graphs": 0, "breaks": 0, "recompiles": 0}}


def test_compiled_rows_hold_bits_bytes_peak_time_and_compile_to_their_limits(report):
    def verdicts(row):
        return {what: v for what, _, v in report.verdict_compiled(row)}
    good = verdicts(compiled_row())
    assert set(good.values()) == {"met", "shown"}, good
    assert verdicts(compiled_row(saved_ours=81.0))["saved bytes at most 0.81x compiled stock"] == "met"
    assert verdicts(compiled_row(saved_ours=81.1))["saved bytes at most 0.81x compiled stock"] == "over"
    assert verdicts(compiled_row(saved_ours=100.1))["saved bytes at most compiled stock's"] == "over"
    assert verdicts(compiled_row(eager_ours=79.0))["saved bytes at most eager relugrad's"] == "over"
    assert verdicts(compiled_row(same=False))["same bits as compiled stock"] == "over"
    assert verdicts(compiled_row(compile_ours=11.1))["compile time at most 1.10x"] == "over"
    assert verdicts(compiled_row(graphs_ours=2))["no added graphs, breaks or recompilations"] == "over"
    # Rounds of compiles: the median of the per-round ratios decides, shown with both intervals.
    rounds = dict(compiled_row(compile_ours=12.0), compile_ratio=1.08, compile_ci95=[1.02, 1.15],
                  compile_control=1.01, compile_control_ci95=[0.97, 1.04])
    got = {what: (m, v) for what, m, v in report.verdict_compiled(rounds)}["compile time at most 1.10x"]
    assert got == ("1.08 [1.02, 1.15] (A/A 1.01 [0.97, 1.04])", "met")
    rounds["compile_ratio"] = 1.11
    assert {what: v for what, _, v in report.verdict_compiled(rounds)}["compile time at most 1.10x"] == "over"
    peak = "peak at most compiled stock's (lower where saved is)"
    assert verdicts(compiled_row(peak_ours=100.0))[peak] == "within the children's spread"  # saved lower, peak not
    assert verdicts(compiled_row(peak_ours=102.0))[peak] == "over"
    assert verdicts(compiled_row(saved_ours=100.0, peak_ours=100.0, model="resnet50-64"))[peak] == "met"
    assert report.all_verdicts("compile_memory", {"rows": [compiled_row()]}).count("over") == 0
