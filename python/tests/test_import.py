"""Tests of how detred's native modules sit in a process (docs/PYTHON.md, "Installing").

Each native module exports its entry point and nothing else: otherwise the std:: and cuda::std template instances
linked into it from detred's static libraries become the bindings of libraries loaded after it (libstdc++,
PyTorch's, the CUDA toolkit's), and a process's behaviour then depends on the order of its imports. The symbol
tables are read with binutils' ``nm``; the import orders run each in a fresh interpreter, since an import cannot be
undone inside one.
"""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

import detred

PACKAGE_DIR = pathlib.Path(detred.__file__).parent


def native_modules() -> list[tuple[pathlib.Path, str]]:
    """(file, the one symbol it may export) for every native module installed with the package."""
    found = []
    for name in ("_detred", "_nccl"):
        spec = importlib.util.find_spec(f"detred.{name}")
        if spec is not None and spec.origin is not None:
            found.append((pathlib.Path(spec.origin), f"PyInit_{name}"))
    gpu_rows = PACKAGE_DIR / "libdetred-audit-gpu.so"
    if gpu_rows.exists():
        found.append((gpu_rows, "detred_audit_gpu_rows_module"))
    return found


def exported_symbols(path: pathlib.Path) -> set[str]:
    """The symbols a shared object defines in its dynamic symbol table (what other objects can bind to)."""
    listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], check=True, capture_output=True, text=True)
    return {line.split()[-1] for line in listing.stdout.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils' nm is not installed")
@pytest.mark.parametrize("module, entry", native_modules(), ids=lambda v: getattr(v, "name", v))
def test_native_module_exports_only_its_entry_point(module, entry):
    assert exported_symbols(module) == {entry}


IMPORT_ORDERS = [
    "import detred; import torch",
    "import detred.torch; import torch",
    "import torch; import detred; import detred.torch",
]


@pytest.mark.parametrize("statements", IMPORT_ORDERS)
def test_imports_work_in_either_order_with_torch(statements):
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    program = f"{statements}; x = torch.arange(4.0); print(float(torch.nn.functional.softmax(x, 0).sum()))"
    result = subprocess.run([sys.executable, "-X", "faulthandler", "-c", program], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{statements!r} exited with {result.returncode}:\n{result.stderr[-4000:]}"
