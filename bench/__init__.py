"""relugrad's benchmarks (bench/README.md). A regular package, so that `python -m bench.torch` run
from the repository root finds this directory and never another `bench` on sys.path."""
