"""Live check of `relugrad forward` against the frameworks installed here.

Runs the CLI on special values + random data and compares y bit for bit with
torch.threshold(x, t, 0) / torch.relu (torch preset), tf.nn.relu
(tensorflow preset) and jax.nn.relu (jax preset), and the mask with the
framework's own gate (y-based backward of each framework: the bit must equal
"dy passes"). Frameworks that are not installed are reported as skipped.

  .venv/bin/python tests/mask/live_forward_check.py build/mask/relugrad
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

CLI = sys.argv[1] if len(sys.argv) > 1 else "build/mask/relugrad"
TMP = tempfile.mkdtemp(prefix="relugrad-mask-live-")


def specials_f32():
    bits = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
            0x7FC00005, 0x7F800001, 0xFF800002, 0x00000001, 0x80000001, 0x007FFFFF,
            0x807FFFFF, 0x00800000, 0x80800000, 0x3F400000, 0x3F400001, 0x3F3FFFFF,
            0xBFC00000, 0x3DCCCCCD, 0x7F7FFFFF, 0xFF7FFFFF]
    return np.array(bits, dtype=np.uint32).view(np.float32)


def data(dtype):
    rng = np.random.default_rng(5)
    x = np.concatenate([specials_f32(), rng.uniform(-3, 3, 3001).astype(np.float32)])
    with np.errstate(invalid="ignore"):  # NaN payloads through astype
        return x.astype(dtype)


def forward(x, flags):
    px, py, pm = (os.path.join(TMP, n) for n in ("x.npy", "y.npy", "m.npy"))
    np.save(px, x)
    subprocess.run([CLI, "forward", "--x", px, "-o", py, "--mask-out", pm] + flags, check=True)
    y = np.load(py)
    bits = np.unpackbits(np.load(pm), bitorder="little")[: x.size].astype(bool)
    return y, bits


def report(name, ours, theirs, bits, gate):
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[ours.dtype.itemsize]
    diff = ours.view(u) != theirs.view(u)
    where = np.flatnonzero(diff)
    detail = "" if not where.size else " first: x=%r ours=%r theirs=%r" % (
        X_CURRENT[where[0]], ours[where[0]], theirs[where[0]])
    print("%-38s y mismatches %4d / %d, mask mismatches %d%s" % (
        name, where.size, ours.size, int(np.sum(bits != gate)), detail))


X_CURRENT = None
try:
    import torch
    for dt in (np.float32, np.float64):
        for t in (0.0, 0.75, -1.5):
            x = data(dt)
            X_CURRENT = x
            y, bits = forward(x, ["--threshold", repr(t)])
            tx = torch.from_numpy(x.copy())
            ref = torch.threshold(tx, t, 0.0).numpy()
            gate = ~(tx <= t).numpy()  # threshold_backward(grad, x, t): x <= t -> 0 (NaN passes)
            report("torch.threshold %s t=%g" % (np.dtype(dt).name, t), y, ref, bits, gate)
        X_CURRENT = x = data(dt)
        y, bits = forward(x, ["--keep-negative-zero"])
        report("torch.relu %s --keep-negative-zero" % np.dtype(dt).name, y,
               torch.relu(torch.from_numpy(x.copy())).numpy(), bits, ~(torch.from_numpy(x) <= 0).numpy())
    # 16-bit: f16 from its own .npy dtype, bf16 as '<u2' bits with --dtype bf16.
    for tdt, flag in ((torch.float16, []), (torch.bfloat16, ["--dtype", "bf16"])):
        for t in (0.0, 0.75, -1.5):
            tx = torch.from_numpy(data(np.float32)).to(tdt)
            x = tx.view(torch.int16).numpy().view(np.uint16) if tdt == torch.bfloat16 else tx.numpy()
            X_CURRENT = x
            y, bits = forward(x, ["--threshold", repr(t)] + flag)
            ref = torch.threshold(tx, t, 0.0).view(torch.int16).numpy().view(x.dtype)
            gate = ~(tx <= t).numpy()
            report("torch.threshold %s t=%g" % (str(tdt).split(".")[1], t), y, ref, bits, gate)
except ImportError:
    print("torch: not installed, skipped")

try:
    import tensorflow as tf
    for dt in (np.float32, np.float64):
        X_CURRENT = x = data(dt)
        y, bits = forward(x, ["--semantics", "tensorflow"])
        ref = tf.nn.relu(tf.constant(x)).numpy()
        report("tf.nn.relu %s" % np.dtype(dt).name, y, ref, bits, ref > 0)
except ImportError:
    print("tensorflow: not installed, skipped")

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    for dt in (np.float32, np.float64):
        X_CURRENT = x = data(dt)
        y, bits = forward(x, ["--semantics", "jax"])
        ref = np.asarray(jax.jit(jax.nn.relu)(x))
        report("jax.nn.relu %s" % np.dtype(dt).name, y, ref, bits, ref > 0)
except ImportError:
    print("jax: not installed, skipped")
