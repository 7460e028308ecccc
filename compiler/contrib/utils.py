"""Temporary directories, as TVM's `tvm.contrib.utils`:

    temp = utils.tempdir()
    fadd.save(temp.relpath("myadd.o"))
    print(temp.listdir())
"""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import List, Optional

__all__ = ["TempDirectory", "tempdir"]


class TempDirectory:
    """A directory removed when the object goes away (or on `remove()`)."""

    def __init__(self, custom_path: Optional[str] = None, keep_for_debug: bool = False):
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir = os.path.abspath(custom_path)
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="kiln_")
        self._keep = keep_for_debug or custom_path is not None

    def relpath(self, name: str) -> str:
        """The path of `name` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> List[str]:
        return sorted(os.listdir(self.temp_dir))

    def remove(self) -> None:
        if not self._keep and self.temp_dir and os.path.isdir(self.temp_dir):
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.temp_dir = None

    def __del__(self):
        if getattr(self, "temp_dir", None):
            self.remove()

    def __enter__(self) -> "TempDirectory":
        return self

    def __exit__(self, ptype, value, trace) -> None:
        self.remove()


def tempdir(custom_path: Optional[str] = None, keep_for_debug: bool = False) -> TempDirectory:
    """A new temporary directory (kept when `custom_path` or `keep_for_debug` is given)."""
    return TempDirectory(custom_path, keep_for_debug)
