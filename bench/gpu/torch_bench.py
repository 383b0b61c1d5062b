#!/usr/bin/env python3
"""PyTorch side of bench/gpu/check.sh.

1. Bit-exactness: relugrad's CUDA backend (torch preset, through the C ABI via
   ctypes, on torch's current stream) against PyTorch CUDA's
   aten::threshold_backward(grad, self, 0) and against relu's autograd, on
   special-value cross products, random bit patterns (NaN payloads,
   subnormals, infinities) and random values, aligned and misaligned views,
   for f32/f16/bf16/f64. Exit status 1 if anything differs.
2. Throughput of threshold_backward (the out= overload, like relugrad writing
   into a preallocated dx), eager and replayed from a CUDA graph, appended to
   the same CSV as relugrad_gpu_bench: impl,dtype,n,mode,bytes,us,gbps,status.

--device cpu runs the same code against relugrad's CPU backend and torch on
the CPU: a dry run of this script where there is no GPU.
"""
import argparse
import ctypes
import os
import statistics
import sys

import torch

# relugrad_options, field for field (include/relugrad/relugrad.h). The size
# is checked against the struct_size relugrad_options_init writes.
class Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("gate", ctypes.c_int),
        ("combine", ctypes.c_int),
        ("denormals", ctypes.c_int),
        ("threshold_rounding", ctypes.c_int),
        ("threshold", ctypes.c_double),
        ("alpha", ctypes.c_double),
        ("clip", ctypes.c_int32),
        ("clip_lo", ctypes.c_double),
        ("clip_hi", ctypes.c_double),
        ("threads", ctypes.c_int32),
        ("backend", ctypes.c_int),
        ("stream", ctypes.c_void_p),
        ("stores", ctypes.c_int),
        ("gate_max", ctypes.c_double),
        ("keep_negative_zero", ctypes.c_int32),
    ]


PRESET_TORCH = 0
BACKEND_CPU, BACKEND_CUDA = 0, 1
THRESHOLD_COMPUTE, THRESHOLD_DTYPE = 0, 1
RG_DTYPE = {torch.float32: 1, torch.float16: 2, torch.bfloat16: 3, torch.float64: 4}
INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float64: torch.int64}
NAME = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64"}
# (sign, inf, quiet, min_normal, one) bit patterns per dtype.
LAYOUT = {
    torch.float16: (0x8000, 0x7C00, 0x0200, 0x0400, 0x3C00),
    torch.bfloat16: (0x8000, 0x7F80, 0x0040, 0x0080, 0x3F80),
    torch.float32: (0x80000000, 0x7F800000, 0x00400000, 0x00800000, 0x3F800000),
    torch.float64: (1 << 63, 0x7FF0000000000000, 1 << 51, 1 << 52, 0x3FF0000000000000),
}


class Relugrad:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.relugrad_relu_grad.restype = ctypes.c_int
        self.lib.relugrad_relu_grad.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                                ctypes.c_void_p, ctypes.POINTER(Options)]
        self.lib.relugrad_last_error.restype = ctypes.c_char_p
        self.lib.relugrad_options_init.argtypes = [ctypes.POINTER(Options), ctypes.c_int]
        self.lib.relugrad_version.restype = ctypes.c_char_p
        probe = Options()
        self.lib.relugrad_options_init(ctypes.byref(probe), PRESET_TORCH)
        if probe.struct_size != ctypes.sizeof(Options):
            raise SystemExit(f"relugrad_options is {probe.struct_size} bytes in the library but "
                             f"{ctypes.sizeof(Options)} here: update Options in {__file__}")

    def options(self, device, threshold=0.0, rounding=THRESHOLD_COMPUTE):
        o = Options()
        self.lib.relugrad_options_init(ctypes.byref(o), PRESET_TORCH)
        o.threshold = threshold
        o.threshold_rounding = rounding
        if device == "cuda":
            o.backend = BACKEND_CUDA
            o.stream = torch.cuda.current_stream().cuda_stream
        return o

    def relu_grad(self, dy, s, out, opts):
        st = self.lib.relugrad_relu_grad(RG_DTYPE[dy.dtype], dy.numel(), dy.data_ptr(), s.data_ptr(),
                                         out.data_ptr(), ctypes.byref(opts))
        if st != 0:
            raise RuntimeError(f"relugrad_relu_grad: status {st}: {self.lib.relugrad_last_error().decode()}")


def from_bits(bits, dtype, device):
    """A tensor of dtype from Python ints holding its bit patterns."""
    width = torch.finfo(dtype).bits
    signed = [b - (1 << width) if b >= 1 << (width - 1) else b for b in bits]
    return torch.tensor(signed, dtype=INT_VIEW[dtype], device=device).view(dtype)


def specials(dtype):
    sign, inf, quiet, mn, one = LAYOUT[dtype]
    return [0, sign, inf, sign | inf, inf | quiet, sign | inf | quiet, inf | quiet | 5, sign | inf | quiet | 3,
            inf | 1, sign | inf | 2, inf - 1, sign | (inf - 1), mn, sign | mn, 1, sign | 1, mn - 1,
            sign | (mn - 1), one, sign | one, one + 1, sign | (one + 1)]


def random_bits(dtype, n, device, gen):
    """Any bit pattern (NaNs with payloads, subnormals, infinities included)."""
    info = torch.iinfo(INT_VIEW[dtype])
    return torch.randint(info.min, info.max, (n,), dtype=INT_VIEW[dtype], device=device,
                         generator=gen).view(dtype)


def mismatch_report(a, b, dy, s):
    ia, ib = a.view(INT_VIEW[a.dtype]), b.view(INT_VIEW[b.dtype])
    diff = (ia != ib).nonzero()
    if diff.numel() == 0:
        return 0, ""
    i = int(diff[0])
    mask = (1 << torch.finfo(a.dtype).bits) - 1
    hx = lambda t: hex(int(t.view(INT_VIEW[t.dtype])[i]) & mask)
    # Differences where both sides are NaN: payload/sign canonicalisation
    # (PyTorch's CPU 16-bit vector paths do that), not a gate or value error.
    nan_only = int((torch.isnan(a.float()) & torch.isnan(b.float()) & (ia != ib)).sum())
    return diff.numel(), (f"{nan_only} of them NaN vs NaN with other bits; first at {i}: dy={hx(dy)} s={hx(s)} "
                          f"torch={hx(a)} relugrad={hx(b)}")


def exactness(rg, device, log):
    """Returns the number of failed required checks."""
    failures = 0
    gen = torch.Generator(device=device)
    gen.manual_seed(1234)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        sp = specials(dtype)
        cross_dy = from_bits([v for _ in sp for v in sp], dtype, device)
        cross_s = from_bits([g for g in sp for _ in sp], dtype, device)
        n = (1 << 20) + 3
        cases = {
            "special-value cross product": (cross_dy, cross_s),
            "random bit patterns": (random_bits(dtype, n, device, gen), random_bits(dtype, n, device, gen)),
            "random values": (torch.randn(n, generator=gen, device=device).to(dtype),
                              torch.randn(n, generator=gen, device=device).to(dtype)),
        }
        dy_r, s_r = cases["random bit patterns"]
        cases["misaligned views (offset 1 element)"] = (dy_r[1:], s_r[1:])
        cases["mixed phases (dy offset 1, s offset 2)"] = (dy_r[1:-1], s_r[2:])
        for what, (dy, s) in cases.items():
            expected = torch.ops.aten.threshold_backward(dy, s, 0.0)
            got = torch.empty_like(dy)
            rg.relu_grad(dy, s, got, rg.options(device))
            if device == "cuda":
                torch.cuda.synchronize()
            count, first = mismatch_report(expected, got, dy, s)
            status = "bit-exact" if count == 0 else f"{count} DIFFER ({first})"
            log(f"exact {NAME[dtype]:4} torch preset vs threshold_backward(t=0), {what}, n={dy.numel()}: {status}")
            failures += count != 0
        # relu's autograd: grad of relu(x) is threshold_backward(grad, relu(x), 0).
        x = cases["random values"][0].clone().requires_grad_(True)
        g = cases["random bit patterns"][0]
        y = torch.relu(x)
        y.backward(g)
        got = torch.empty_like(g)
        rg.relu_grad(g, y.detach(), got, rg.options(device))
        if device == "cuda":
            torch.cuda.synchronize()
        count, first = mismatch_report(x.grad, got, g, y.detach())
        log(f"exact {NAME[dtype]:4} torch preset vs autograd of torch.relu: "
            f"{'bit-exact' if count == 0 else f'{count} DIFFER ({first})'}")
        failures += count != 0
        # Informational: which threshold rounding threshold_backward uses at t = 0.1.
        dy, s = cases["random values"]
        expected = torch.ops.aten.threshold_backward(dy, s, 0.1)
        notes = []
        for name, rounding in (("compute", THRESHOLD_COMPUTE), ("dtype", THRESHOLD_DTYPE)):
            got = torch.empty_like(dy)
            rg.relu_grad(dy, s, got, rg.options(device, threshold=0.1, rounding=rounding))
            if device == "cuda":
                torch.cuda.synchronize()
            count, _ = mismatch_report(expected, got, dy, s)
            notes.append(f"threshold_rounding={name}: {'bit-exact' if count == 0 else f'{count} differ'}")
        log(f"info  {NAME[dtype]:4} threshold_backward(t=0.1): " + ", ".join(notes))
    return failures


def parse_size(t):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1].upper(), 1)
    return int(float(t[:-1] if mult > 1 else t) * mult)


def bench(device, sizes, dtypes, csv, min_ms, batches, log):
    if device != "cuda":
        log("bench: skipped (timing is for CUDA only)")
        return
    stream = torch.cuda.Stream()
    free = torch.cuda.mem_get_info()[0]
    for dtype in dtypes:
        es = torch.finfo(dtype).bits // 8
        for n in sizes:
            row = f"torch,{NAME[dtype]},{n}"
            if 3 * n * es > free - (2 << 30):
                csv.write(f"{row},eager,{3 * n * es},0,0,skipped: not enough device memory\n")
                continue
            with torch.cuda.stream(stream):
                dy = torch.rand(n, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dtype)
                s = torch.rand(n, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dtype)
                out = torch.empty_like(dy)
                call = lambda: torch.ops.aten.threshold_backward.grad_input(dy, s, 0.0, grad_input=out)
                for _ in range(3):
                    call()
                stream.synchronize()
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

                def batch(k):
                    start.record(stream)
                    for _ in range(k):
                        call()
                    stop.record(stream)
                    stop.synchronize()
                    return start.elapsed_time(stop)

                k = 1
                while batch(k) < min_ms and k < (1 << 14):
                    k *= 2
                per_call = statistics.median(batch(k) / k for _ in range(batches)) * 1e-3
                bytes3 = 3 * n * es
                csv.write(f"{row},eager,{bytes3},{per_call * 1e6:.4f},{bytes3 / per_call * 1e-9:.2f},ok\n")
                log(f"torch threshold_backward {NAME[dtype]:4} n={n:<11} eager {per_call * 1e6:10.2f} us "
                    f"{bytes3 / per_call * 1e-9:9.1f} GB/s")
                # The same calls replayed from a CUDA graph: device time only.
                kg = min(k, 512)
                try:
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph, stream=stream):
                        for _ in range(kg):
                            call()
                    graph.replay()
                    stream.synchronize()
                    times = []
                    for _ in range(batches):
                        start.record(stream)
                        graph.replay()
                        stop.record(stream)
                        stop.synchronize()
                        times.append(start.elapsed_time(stop) / kg)
                    per_call = statistics.median(times) * 1e-3
                    csv.write(f"{row},graph,{bytes3},{per_call * 1e6:.4f},{bytes3 / per_call * 1e-9:.2f},ok\n")
                    log(f"torch threshold_backward {NAME[dtype]:4} n={n:<11} graph {per_call * 1e6:10.2f} us "
                        f"{bytes3 / per_call * 1e-9:9.1f} GB/s")
                    del graph
                except Exception as e:  # report, keep going
                    msg = str(e).replace(",", ";").replace("\n", " ")[:200]
                    csv.write(f"{row},graph,{bytes3},0,0,{msg}\n")
                del dy, s, out
                torch.cuda.empty_cache()
            csv.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="path to librelugrad.so (built with the CUDA backend)")
    ap.add_argument("--csv", help="append benchmark rows here")
    ap.add_argument("--log", help="append the exactness report here")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--sizes", default="64K,256K,1M,4M,16M,64M,256M,1G")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--min-ms", type=float, default=10.0)
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--skip-bench", action="store_true")
    args = ap.parse_args()

    lines = []

    def log(line):
        print(line, flush=True)
        lines.append(line)

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("torch.cuda.is_available() is False: no GPU for the PyTorch comparison")
    rg = Relugrad(args.lib)
    log(f"torch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
        f"{torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else 'n/a'}), "
        f"relugrad {rg.lib.relugrad_version().decode()}, device {args.device}"
        + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else ""))
    failures = exactness(rg, args.device, log)
    log(f"exactness: {'all bit-exact' if failures == 0 else f'{failures} check(s) differ'}")
    if not args.skip_bench:
        by_name = {v: k for k, v in NAME.items()}
        sizes = [parse_size(t) for t in args.sizes.split(",") if t]
        dtypes = [by_name[t] for t in args.dtypes.split(",") if t]
        csv = open(args.csv, "a") if args.csv else open(os.devnull, "w")
        with csv:
            csv.write(f"# torch {torch.__version__} CUDA {torch.version.cuda}\n")
            bench(args.device, sizes, dtypes, csv, args.min_ms, args.batches, log)
    if args.log:
        with open(args.log, "a") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
