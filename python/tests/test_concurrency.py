"""Many Python threads calling relugrad at once: the GIL is
released during the C call, so the calls really overlap, each with its own
preset, dtype, size, threshold and thread count (overlapping library thread
pools). Every result is checked against the NumPy formula oracle
(python/compat/numpy_formulas.py), which shares no code with the library."""
import itertools
import os
import signal
import threading

import pytest

import numpy_formulas
import relugrad
from cases import DTYPES, THRESHOLDS, random_case, special_case, tiled
from nan_compare import same_bits

N_PY_THREADS = 12
ROUNDS = 6


def jobs():
    """(semantics, dtype, threshold, n, threads, in_place, dy, s, want) per job."""
    sizes = (1, 17, 1000, 65_537, 300_001)
    combos = itertools.product(relugrad.PRESETS, DTYPES, sizes)
    out = []
    for k, (semantics, dtype, n) in enumerate(combos):
        threshold = THRESHOLDS[k % len(THRESHOLDS)]
        threads = (1, 2, 3, None)[k % 4]
        if k % 3 == 0:
            dy, s = special_case(dtype)
            dy, s = tiled(dy, n), tiled(s, n)
        else:
            dy, s = random_case(dtype, n=n, seed=k)
        want = numpy_formulas.relu_grad(dy, s, semantics=semantics, threshold=threshold)
        out.append((semantics, dtype, threshold, n, threads, k % 5 == 0, dy, s, want))
    return out


def test_many_python_threads_match_the_numpy_oracle():
    work = jobs()
    failures = []
    done = []
    start = threading.Barrier(N_PY_THREADS)

    def worker(w):
        start.wait()  # all threads enter the library together
        for r in range(ROUNDS):
            for j in range(w + r, len(work), N_PY_THREADS):
                semantics, dtype, threshold, n, threads, in_place, dy, s, want = work[j]
                try:
                    if in_place:
                        got = dy.copy()
                        relugrad.relu_grad(got, s, semantics=semantics, threshold=threshold,
                                           threads=threads, out=got)
                    else:
                        got = relugrad.relu_grad(dy, s, semantics=semantics, threshold=threshold,
                                                 threads=threads)
                    if not same_bits(want, got):
                        failures.append((semantics, dtype, threshold, n, threads, in_place))
                    done.append(j)
                except Exception as e:  # pragma: no cover - reported below
                    failures.append((semantics, dtype, n, repr(e)))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(N_PY_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:10]
    assert len(done) >= ROUNDS * len(work) - N_PY_THREADS * ROUNDS  # every job ran ~ROUNDS times


def test_mask_path_from_many_python_threads():
    cases = [(semantics, dtype, random_case(dtype, n=70_001, seed=i))
             for i, (semantics, dtype) in enumerate(itertools.product(relugrad.PRESETS, DTYPES))]
    wants = [numpy_formulas.relu_grad(dy, x, semantics=sem) for sem, _, (dy, x) in cases]
    failures = []

    def worker(w):
        for i in range(w, len(cases), 8):
            semantics, dtype, (dy, x) = cases[i]
            _, mask = relugrad.relu_forward(x, semantics=semantics, threads=1 + i % 3)
            got = relugrad.relu_grad_mask(dy, mask, semantics=semantics, threads=1 + (i + 1) % 3)
            if not same_bits(wants[i], got):
                failures.append((semantics, dtype))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_a_forked_child_computes_with_its_own_threads():
    """multiprocessing's fork (Linux's default start method up to Python 3.13): a child forked
    after the parent's calls woke relugrad's workers must get right results from calls that split
    over threads, and return (a hang is the child's SIGALRM, a wrong result its exit status 3)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    dy, s = random_case("f32", n=1 << 20, seed=7)
    want = numpy_formulas.relu_grad(dy, s, semantics="torch", threshold=0.0)
    for _ in range(3):
        relugrad.relu_grad(dy, s, threads=2)
    pid = os.fork()
    if pid == 0:  # the child: only os._exit leaves it (no pytest teardown in a forked copy)
        code = 1
        try:
            signal.alarm(30)
            ok = all(same_bits(relugrad.relu_grad(dy, s, threads=t), want) for t in (2, 3, 2, 1))
            code = 0 if ok else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"the child was killed by signal {os.WTERMSIG(status)} (SIGALRM: a hang)"
    assert os.WEXITSTATUS(status) == 0
