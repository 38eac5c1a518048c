"""exactref.mpi (over mpi4py): mpi_worker.py run by mpirun on 1, 2, 3, 5 and 8 ranks must pass every check —
er.mpi.sum / dot equal to er.sum / er.dot of the whole data (exact states), er.mpi.tree_sum equal to er.tree_sum
bit for bit, special values on one rank, errors on every rank that name the rank. Skips without mpi4py or mpirun.
The C++ face has the same checks in tests/mpi/ (ctest -L mpi)."""

import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py", reason="exactref.mpi needs mpi4py (pip install mpi4py)")
MPIRUN = shutil.which("mpirun") or shutil.which("mpiexec")
WORKER = os.path.join(os.path.dirname(__file__), "mpi_worker.py")


def launch_flags():
    out = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" not in out and "OpenRTE" not in out:
        return []
    flags = ["--oversubscribe", "--bind-to", "none"]
    return flags + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun or mpiexec on PATH (Debian: openmpi-bin)")
@pytest.mark.parametrize("ranks", [1, 2, 3, 5, 8])
def test_mpi_worker(ranks):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    run = subprocess.run([MPIRUN, "-np", str(ranks), *launch_flags(), sys.executable, WORKER],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"on {ranks} ranks:" in run.stdout and ", 0 failed" in run.stdout


def test_import_error_names_mpi4py(monkeypatch):
    """Without mpi4py, importing exactref.mpi says what to install."""
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.delitem(sys.modules, "exactref.mpi", raising=False)
    import importlib
    with pytest.raises(ImportError, match="pip install mpi4py"):
        importlib.import_module("exactref.mpi")
