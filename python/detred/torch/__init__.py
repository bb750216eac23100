"""detred.torch: batch-invariant and deterministic PyTorch ops over detred's kernels (docs/PYTHON.md)."""
