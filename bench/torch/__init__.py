"""relugrad.torch against stock PyTorch: the point-of-use benchmarks, one driver.

    .venv/bin/python -m bench.torch <subcommand> [options]     # from the repository root
    .venv/bin/python -m bench.torch --help                      # the subcommands

common.py holds what the subcommands share (sizes, timing loops, interleaving, the interval of a
median, the A/A control's ratio, the models, the machine's name, and the one place that reaches
a relugrad name not yet public); each subcommand lives in its own module (report, module, steps,
linear, relu_sites, consumers, call_cost, numpy_call) and __main__.py dispatches to it.
"""
if __name__ == "torch":
    # This directory is the package bench.torch. Imported as top-level `torch`, a script put bench/
    # on sys.path ahead of site-packages, and every later `import torch` would get this package.
    raise ImportError("bench/torch/ was imported as `torch`: put the repository root, not bench/, on sys.path "
                      "and import bench.torch")
