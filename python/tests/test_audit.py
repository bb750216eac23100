"""detred.audit: the detred-audit report (docs/AUDIT.md) for an array, as a dict; and the installed command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import detred

pytestmark = pytest.mark.skipif(not detred._detred.has_audit,
                                reason="this build has no audit (DETRED_BUILD_VERIFY=OFF)")


def test_audit_report_keeps_every_promise(rng):
    x = rng.standard_normal(5000)
    report = detred.audit(x, permute=3, repeat=2)
    assert report["tool"] == "detred-audit" and report["exit_status"] == 0
    (inp,) = report["inputs"]
    assert inp["dtype"] == "f64" and inp["n"] == 5000 and inp["shape"] == [5000]
    by_name = {r["algorithm"]: r for r in inp["results"]}
    assert {"cpu/tree", "cpu/exact", "cpu/kahan"} <= set(by_name)
    exact = by_name["cpu/exact"]
    assert exact["correctly_rounded"] is True and exact["failures"] == []
    assert float.fromhex(exact["value_hex"]) == float(detred.sum(x, method="exact"))
    assert float.fromhex(by_name["cpu/tree"]["value_hex"]) == float(detred.sum(x))
    assert by_name["cpu/tree"]["configs"]["distinct"] == 1


def test_audit_selection_and_dtypes():
    x = np.linspace(-1, 1, 1001, dtype=np.float32)
    report = detred.audit(x, algorithms=["cpu/tree", "exact"], permute=0, repeat=1, configs=False)
    names = [r["algorithm"] for r in report["inputs"][0]["results"]]
    assert names == ["cpu/tree", "cpu/exact"]
    assert report["inputs"][0]["dtype"] == "f32"
    assert "cpu/tree" in detred.audit_algorithms()


def _installed_audit():
    exe = shutil.which("detred-audit", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return exe


def test_installed_command_gives_the_same_report():
    exe = _installed_audit()
    if exe is None:
        pytest.skip("detred-audit is not installed beside this Python (the wheel's scripts directory)")
    x = np.random.default_rng(3).standard_normal(777)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.npy")
        np.save(path, x)
        out = subprocess.run([exe, path, "--json", "-", "--algorithms", "cpu/exact,cpu/tree", "--quiet"],
                             capture_output=True, text=True, check=True).stdout
    cli = json.loads(out)
    py = detred.audit(x, algorithms=["cpu/exact", "cpu/tree"])
    for a, b in zip(cli["inputs"][0]["results"], py["inputs"][0]["results"]):
        assert a["algorithm"] == b["algorithm"] and a["value_hex"] == b["value_hex"]
