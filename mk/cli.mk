# The core acceptance check against PyTorch: `relugrad run` vs
# aten::threshold_backward for f32/f64/bf16/f16 at thresholds 0, 0.75, -1.5.
# Needs .venv with torch (see mk/python.mk: `make compat` installs it).
.PHONY: compat-cli
compat-cli: build
	@test -x .venv/bin/python && .venv/bin/python -c "import torch" 2>/dev/null || \
	  { echo "compat-cli: needs .venv with torch (run make compat first)"; exit 1; }
	.venv/bin/python tests/cli/cli_vs_torch.py $(CLI)
