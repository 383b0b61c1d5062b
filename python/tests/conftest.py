import sys
from pathlib import Path

# The shared test inputs and framework adapters live in python/compat.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat"))
