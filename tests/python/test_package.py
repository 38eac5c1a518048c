"""The package itself: the public names of DESIGN §6, docstrings, the committed type stub of the extension."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import exactref as er

PUBLIC = ["sum", "dot", "matmul", "asarray", "standard", "ulp_error", "tree_sum", "tree_height", "fold_sum",
          "kahan_sum", "pairwise_sum", "Reference", "ReferenceArray", "Standard", "Verdict", "testing"]


def test_public_names_and_docstrings():
    for name in PUBLIC:
        assert name in er.__all__, name
        obj = getattr(er, name)
        assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    for method in ("covers", "verdict", "bound", "nearest", "ulp_error"):
        assert getattr(er.Reference, method).__doc__.strip()
    assert er.testing.assert_covers.__doc__.strip()


def test_version_matches_pyproject():
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    version = re.search(r'^version = "([^"]+)"', pyproject.read_text(), re.M).group(1)
    assert er.__version__ == version


def test_package_ships_its_stub_and_marker():
    root = Path(er.__file__).parent
    assert (root / "py.typed").exists()
    assert (root / "_core.pyi").exists()


@pytest.mark.skipif(importlib.util.find_spec("nanobind") is None, reason="nanobind not installed")
def test_core_stub_is_up_to_date(tmp_path):
    out = tmp_path / "_core.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "exactref._core", "-o", str(out)],
                   check=True, cwd=tmp_path)
    shipped = (Path(er.__file__).parent / "_core.pyi").read_text()
    assert out.read_text() == shipped, ("python/exactref/_core.pyi is stale: regenerate it with "
                                        "`python -m nanobind.stubgen -m exactref._core -o python/exactref/_core.pyi`")
