"""Builds the loader's C fast path (optional: without a compiler the loader takes its Python path);
the rest of the package's metadata lives in setup.cfg."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "plugins.person.backends.embedded._fastdoc",
            ["plugins/person/backends/embedded/_fastdoc.c"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
