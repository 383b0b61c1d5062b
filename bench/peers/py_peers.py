#!/usr/bin/env python3
"""Peer drivers for `make bench`: PyTorch, NumPy, TensorFlow and JAX ReLU
backward (and relugrad's own Python entry point, framework "relugrad"),
timed like `relugrad bench` (warm-up, batches >= 50 us, samples
until --min-time and at least 5, median; cold mode rotates operand sets
whose footprint exceeds the caches) and printed as JSON lines in its schema.

Each (framework, thread count) runs in its own child process pinned to that
many cores before the framework is imported, because TensorFlow and XLA fix
their thread pools at start-up. Frameworks that are not installed are
skipped with a note on stderr.

  py_peers.py --frameworks torch,numpy,tensorflow,jax --dtype f32,f16,bf16 \
              --sizes 4K,1M,16M --threads 1,2 --min-time 0.2
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

ES = {"f32": 4, "f16": 2, "bf16": 2}


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * mult[text[-1]] if text[-1] in mult else int(text)


def sets_for(n, es, warm, rotate_mib):
    if warm:
        return 1
    footprint = 3 * ((n * es + 63) // 64 * 64)
    sets = max(1, min(1 << 16, math.ceil(rotate_mib * (1 << 20) / footprint)))
    return 2 if sets == 1 and footprint < (256 << 20) else sets  # as relugrad bench (bench_operands.cc)


def median_seconds(call, sets, min_time):
    """Per-call median, same loop as relugrad/timer.hpp."""
    for k in range(sets):  # warm-up: touch every set
        call(k)
    batch, k = 1, 0
    while True:
        t0 = time.perf_counter()
        for _ in range(batch):
            call(k)
            k = (k + 1) % sets
        if time.perf_counter() - t0 >= 50e-6 or batch >= (1 << 22):
            break
        batch *= 4
    batch = max(batch, min(sets, 1 << 16))
    samples, start = [], time.perf_counter()
    while len(samples) < 5 or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        for _ in range(batch):
            call(k)
            k = (k + 1) % sets
        samples.append((time.perf_counter() - t0) / batch)
    samples.sort()
    return samples[len(samples) // 2], samples[0], len(samples)


# ---- per-framework implementations: make(dtype, n, sets, threads) returns
# {impl: call(k)} or raises NotImplementedError for an unsupported dtype.

def torch_impls(dtype, n, sets, threads):
    import torch
    torch.set_num_threads(threads)
    td = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator().manual_seed(1)
    base_dy = (torch.rand(min(n, 1 << 16), generator=g) * 4 - 2).to(td)
    base_s = (torch.rand(min(n, 1 << 16), generator=g) * 4 - 2).to(td)
    reps = (n + base_dy.numel() - 1) // base_dy.numel()
    dy = [base_dy.repeat(reps)[:n].clone() for _ in range(sets)]
    s = [base_s.repeat(reps)[:n].clone() for _ in range(sets)]
    dx = [torch.empty(n, dtype=td) for _ in range(sets)]
    tb = torch.ops.aten.threshold_backward
    return {
        "torch_out": lambda k: tb.grad_input(dy[k], s[k], 0.0, grad_input=dx[k]),
        "torch_alloc": lambda k: tb(dy[k], s[k], 0.0),
    }, f"torch-{torch.__version__}"


def numpy_impls(dtype, n, sets, threads):
    import numpy as np
    if dtype == "bf16":
        raise NotImplementedError("numpy has no bfloat16")
    nd = {"f32": np.float32, "f16": np.float16}[dtype]
    rng = np.random.default_rng(1)
    base_dy = (rng.random(min(n, 1 << 16)) * 4 - 2).astype(nd)
    base_s = (rng.random(min(n, 1 << 16)) * 4 - 2).astype(nd)
    reps = (n + base_dy.size - 1) // base_dy.size
    dy = [np.tile(base_dy, reps)[:n].copy() for _ in range(sets)]
    s = [np.tile(base_s, reps)[:n].copy() for _ in range(sets)]
    dx = [np.empty(n, nd) for _ in range(sets)]
    zero = nd(0)
    return {
        "numpy_where": lambda k: np.where(s[k] > zero, dy[k], zero),
        "numpy_mul": lambda k: np.multiply(dy[k], s[k] > zero, out=dx[k]),
    }, f"numpy-{np.__version__}"


def tensorflow_impls(dtype, n, sets, threads):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass  # already initialised in this child: keep its setting
    td = {"f32": tf.float32, "f16": tf.float16, "bf16": tf.bfloat16}[dtype]
    g = tf.random.Generator.from_seed(1)
    base_dy = tf.cast(g.uniform([min(n, 1 << 16)], -2, 2), td)
    base_s = tf.cast(g.uniform([min(n, 1 << 16)], -2, 2), td)
    reps = (n + int(base_dy.shape[0]) - 1) // int(base_dy.shape[0])
    dy = [tf.identity(tf.tile(base_dy, [reps])[:n]) for _ in range(sets)]
    s = [tf.identity(tf.tile(base_s, [reps])[:n]) for _ in range(sets)]
    relu_grad = tf.raw_ops.ReluGrad
    # Eager ops return once the kernel is done on CPU; .numpy() would add a copy.
    return {"tf_relugrad": lambda k: relu_grad(gradients=dy[k], features=s[k])}, f"tensorflow-{tf.__version__}"


def jax_impls(dtype, n, sets, threads):
    import jax
    import jax.numpy as jnp
    jd = {"f32": jnp.float32, "f16": jnp.float16, "bf16": jnp.bfloat16}[dtype]
    key = jax.random.PRNGKey(1)
    k1, k2 = jax.random.split(key)
    base_dy = (jax.random.uniform(k1, (min(n, 1 << 16),)) * 4 - 2).astype(jd)
    base_s = (jax.random.uniform(k2, (min(n, 1 << 16),)) * 4 - 2).astype(jd)
    reps = (n + base_dy.shape[0] - 1) // base_dy.shape[0]
    dy = [jnp.tile(base_dy, reps)[:n] + 0 for _ in range(sets)]
    s = [jnp.tile(base_s, reps)[:n] + 0 for _ in range(sets)]
    bwd = jax.jit(lambda x, g: jax.vjp(jax.nn.relu, x)[1](g)[0])
    bwd(s[0], dy[0]).block_until_ready()  # compile outside the timing
    return {"jax_vjp_jit": lambda k: bwd(s[k], dy[k]).block_until_ready()}, f"jax-{jax.__version__}"


def relugrad_impls(dtype, n, sets, threads):
    """relugrad's own Python entry point on NumPy arrays, timed like the
    peers: with out= and allocating (large results come from its buffer
    cache)."""
    import numpy as np
    import relugrad
    if dtype == "bf16":
        import ml_dtypes
        nd = np.dtype(ml_dtypes.bfloat16)
    else:
        nd = np.dtype({"f32": np.float32, "f16": np.float16}[dtype])
    rng = np.random.default_rng(1)
    base_dy = (rng.random(min(n, 1 << 16)) * 4 - 2).astype(np.float32).astype(nd)
    base_s = (rng.random(min(n, 1 << 16)) * 4 - 2).astype(np.float32).astype(nd)
    reps = (n + base_dy.size - 1) // base_dy.size
    dy = [np.tile(base_dy, reps)[:n].copy() for _ in range(sets)]
    s = [np.tile(base_s, reps)[:n].copy() for _ in range(sets)]
    dx = [np.empty(n, nd) for _ in range(sets)]
    rg = relugrad.relu_grad
    return {
        "relugrad_py_out": lambda k: rg(dy[k], s[k], out=dx[k], threads=threads),
        "relugrad_py_alloc": lambda k: rg(dy[k], s[k], threads=threads),
    }, f"relugrad-{relugrad.__version__}"


FRAMEWORKS = {"torch": torch_impls, "numpy": numpy_impls, "tensorflow": tensorflow_impls, "jax": jax_impls,
              "relugrad": relugrad_impls}
MODULES = {"torch": "torch", "numpy": "numpy", "tensorflow": "tensorflow", "jax": "jax", "relugrad": "relugrad"}


def child(args):
    threads = args.threads_child
    make = FRAMEWORKS[args.child]
    for dtype in args.dtype.split(","):
        for size in args.sizes.split(","):
            n = parse_size(size)
            if n > args.max_n:
                continue
            sets = sets_for(n, ES[dtype], args.warm, args.rotate_mib)
            try:
                impls, version = make(dtype, n, sets, threads)
            except NotImplementedError as e:
                print(f"py_peers: {args.child} {dtype}: skipped ({e})", file=sys.stderr)
                break
            except Exception as e:  # an unsupported dtype/size in this framework build
                print(f"py_peers: {args.child} {dtype} n={n}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
                break
            for impl, call in impls.items():
                try:
                    med, best, count = median_seconds(call, sets, args.min_time)
                except Exception as e:
                    print(f"py_peers: {impl} {dtype} n={n}: failed ({type(e).__name__}: {e})", file=sys.stderr)
                    continue
                moved = 3.0 * n * ES[dtype]
                print(json.dumps({
                    "impl": impl, "dtype": dtype, "semantics": args.child, "n": n, "threads": threads,
                    "median_s": med, "gbps": moved / med / 1e9, "ns_per_element": med * 1e9 / n,
                    "elements_per_s": n / med, "roofline_gbps": 0, "ratio": 0, "best_s": best,
                    "best_gbps": moved / best / 1e9, "isa": version,
                    "inplace": False, "cache": "warm" if args.warm else "cold", "sets": sets,
                    "samples": count, "bytes_moved": moved,
                    "repro": f"bench/peers/py_peers.py --frameworks {args.child} --dtype {dtype} --sizes {n} "
                             f"--threads {threads} --min-time {args.min_time}" + (" --warm" if args.warm else ""),
                }), flush=True)
            del impls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frameworks", default="torch,numpy,tensorflow,jax")
    p.add_argument("--dtype", default="f32,f16,bf16")
    p.add_argument("--sizes", default="4K,16K,64K,256K,1M,4M,16M,64M")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--rotate-mib", type=float, default=64)
    p.add_argument("--warm", action="store_true")
    p.add_argument("--max-n", type=lambda s: parse_size(s), default=1 << 62,
                   help="skip sizes above this (slow allocating peers)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--threads-child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    import importlib.util
    failed = False
    for fw in args.frameworks.split(","):
        if fw not in FRAMEWORKS:
            sys.exit(f"py_peers: unknown framework {fw} (known: {', '.join(FRAMEWORKS)})")
        if importlib.util.find_spec(MODULES[fw]) is None:
            print(f"py_peers: {fw} is not installed in {sys.executable}: skipped", file=sys.stderr)
            continue
        for t in (int(x) for x in args.threads.split(",")):
            if fw == "numpy" and t != 1:
                continue  # numpy's elementwise ufuncs are single-threaded
            cores = sorted(os.sched_getaffinity(0))[:max(1, t)]
            cmd = [sys.executable, os.path.abspath(__file__), "--child", fw, "--threads-child", str(t),
                   "--dtype", args.dtype, "--sizes", args.sizes, "--min-time", str(args.min_time),
                   "--rotate-mib", str(args.rotate_mib), "--max-n", str(args.max_n)] + (["--warm"] if args.warm else [])
            env = dict(os.environ, OMP_NUM_THREADS=str(t), TF_CPP_MIN_LOG_LEVEL="3",
                       XLA_FLAGS=os.environ.get("XLA_FLAGS", ""))
            print(f"py_peers: {fw} threads={t}", file=sys.stderr, flush=True)
            rc = subprocess.run(cmd, env=env, preexec_fn=lambda c=cores: os.sched_setaffinity(0, c)).returncode
            if rc != 0:
                print(f"py_peers: {fw} threads={t} exited with {rc}", file=sys.stderr)
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
