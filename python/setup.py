"""setuptools hooks of pyproject.toml: the version and the generated tensorgl/_abi.py both come
from the repository around this directory (CMakeLists.txt and plugin_api/tensorgl/plugin_api.h with ops.h),
so the package is built from a checkout: `pip install ./python`."""

import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_abi  # noqa: E402


def _check_root():
    missing = [s for s in gen_abi.SOURCES if not os.path.exists(os.path.join(ROOT, s))]
    if missing:
        sys.exit("tensorgl's Python package is built from a checkout of the repository: %s not found "
                 "next to %s" % (", ".join(missing), HERE))


class BuildPyWithAbi(build_py):
    """build_py plus the generated ctypes data, written into the build directory only."""

    def run(self):
        super().run()
        _check_root()
        gen_abi.write(ROOT, os.path.join(self.build_lib, "tensorgl", "_abi.py"))


_check_root()
setup(version=gen_abi.project_version(ROOT), cmdclass={"build_py": BuildPyWithAbi})
