"""relugrad.torch against stock PyTorch: one driver, one subcommand per benchmark.

    .venv/bin/python -m bench.torch <subcommand> [options]    # from the repository root
    .venv/bin/python -m bench.torch <subcommand> --help

  report      every point-of-use target in one run, with verdicts (module, steps as children)
  module      forward + backward of one ReLU module against nn.ReLU, over sizes/dtypes/threads/layouts
  steps       whole training steps of models: time, saved bytes, peak memory, compiled
  compile-memory  compiled training steps: saved bytes, peak, time, bits with relugrad.torch.saved_bits
  linear      the fused bias gradient and Linear + ReLU steps against stock
  relu-sites  a torchvision model's ReLU calls alone, on their own shapes
  consumers   experiment: ReLU's backward with the node that reads its dx
  call-cost   experiment: the fixed cost of one small ReLU call
  numpy-call  relugrad.relu_grad on NumPy arrays against np.multiply(dy, x > 0), with the A/A control
"""
import argparse
import importlib

# subcommand -> (the module of this package that implements it: add_arguments, main; one line of help)
SUBCOMMANDS = {
    "report": ("report", "every point-of-use target in one run, with verdicts"),
    "module": ("module", "forward + backward of one ReLU module against nn.ReLU"),
    "steps": ("steps", "whole training steps of models: time, saved bytes, peak memory, compiled"),
    "compile-memory": ("compile_memory", "compiled training: saved bytes, peak and time with saved_bits"),
    "linear": ("linear", "the fused bias gradient and Linear + ReLU steps against stock"),
    "relu-sites": ("relu_sites", "a torchvision model's ReLU calls alone, on their own shapes"),
    "consumers": ("consumers", "experiment: ReLU's backward with the node that reads its dx"),
    "call-cost": ("call_cost", "experiment: the fixed cost of one small ReLU call"),
    "numpy-call": ("numpy_call", "relugrad.relu_grad on NumPy arrays against NumPy's two ufuncs"),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.torch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="subcommand", required=True, metavar="subcommand")
    modules = {}
    for name, (module_name, help_line) in SUBCOMMANDS.items():
        # Imported here, all of them: each brings torch and relugrad, which the driver loads anyway.
        module = importlib.import_module(f"{__package__}.{module_name}")
        modules[name] = module
        parser = sub.add_parser(name, help=help_line,
                                description=module.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(parser)
    args = ap.parse_args(argv)
    modules[args.subcommand].main(args, sub.choices[args.subcommand])


if __name__ == "__main__":
    main()

