"""pytest: `pip install ./python` as docs/python.md gives it (offline: a venv with the system's site
packages, --no-build-isolation --no-index), from a copy of the files the build reads, so the
checkout gets no build/ or egg-info; then the installed package runs an op on the first plugin
under test."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import PLUGINS

_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def test_pip_install_offline(tmp_path):
    if sys.prefix != sys.base_prefix:
        pytest.fail("run the tests with the system interpreter (/usr/bin/python3), not inside a venv")
    src = tmp_path / "src"
    shutil.copytree(os.path.join(_ROOT, "python"), src / "python",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "_abi.py", "_install.py"))
    sys.path.insert(0, str(src / "python"))
    try:
        import gen_abi
    finally:
        sys.path.pop(0)
    for rel in gen_abi.SOURCES:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(_ROOT, rel), src / rel)
    venv = tmp_path / "venv"
    # The documented `python3 -m venv --system-site-packages` + the venv's pip, less the 10 s that
    # ensurepip takes to copy pip into the venv: the system's pip installs into it (pip --python).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                          "--no-build-isolation", "--no-index", str(src / "python")],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert "Successfully installed tensorgl-" in pip.stdout
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the venv's package, not the build tree's
    if env.get("TENSORGL_LIB"):
        env["TENSORGL_LIB"] = os.path.abspath(env["TENSORGL_LIB"])
    code = ("import numpy as np, tensorgl as tg\n"
            "print(tg.__file__)\n"
            "with tg.Device(%r) as d: print(tg.relu(d.tensor([-1.0, 2.0])).numpy().tolist())\n" % PLUGINS[0])
    run = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                         timeout=60, env=env, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    where, values = run.stdout.splitlines()
    assert where.startswith(str(venv)) and values == "[0.0, 2.0]"
