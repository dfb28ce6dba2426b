"""The loader's C fast path is optional at install time, so a broken build would go unnoticed but
for the slower loads: where a C compiler and the Python headers are installed, `pip install -e .`
must have built it."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from plugins.person.backends.embedded import lines


def test_the_fast_path_is_built_where_a_c_compiler_and_the_python_headers_are():
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or not headers.exists():
        pytest.skip(
            f"no C compiler ({compiler}) or no Python headers ({headers}): the loader takes its "
            "Python path"
        )
    assert lines._fastdoc is not None, (
        "plugins/person/backends/embedded/_fastdoc.c is not built: run "
        "`pip install --no-deps -e .` (or `make install`) and read its compiler errors"
    )
    assert lines.fast_path_built()
