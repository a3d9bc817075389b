"""pip's way in (pyproject.toml): CMake builds the heed_python target, the pybind11 module of
python/heed_module.cc linked to heed's library, for the interpreter running this file, and
setuptools puts it beside python/heed/__init__.py in the wheel.

HEED_BUILD_DIR: a CMake build tree to build in (an existing one builds incrementally; default
build-pip/cmake); HEED_BUILD_JOBS: parallel jobs (default: all cores)."""
import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).parent.resolve()


def version():  # project(heed VERSION x.y.z) of CMakeLists.txt
    text = (SOURCE / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(heed VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("HEED_BUILD_DIR") or SOURCE / "build-pip" / "cmake").resolve()
        build.mkdir(parents=True, exist_ok=True)
        # the interpreter's file, symlinks resolved (a venv's python3 is its base's): the module
        # is built against its headers and ABI
        python = os.path.realpath(sys.executable)
        subprocess.run(["cmake", "-S", str(SOURCE), "-B", str(build),
                        f"-DPython_EXECUTABLE={python}", "-DHEED_PYTHON=ON"], check=True)
        jobs = os.environ.get("HEED_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "heed_python", "-j", jobs],
                       check=True)
        suffix = self.get_ext_filename("x")[1:]  # e.g. .cpython-311-x86_64-linux-gnu.so
        built = glob.glob(str(build / "python" / "heed" / f"_heed{suffix}"))
        if not built:
            sys.exit(f"heed: CMake built no _heed{suffix} in {build}/python/heed (is pybind11-dev "
                     f"installed, and python3-dev for {sys.executable}?)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


setup(version=version(),
      ext_modules=[Extension("heed._heed", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
