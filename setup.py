"""Builds the microruntime's cffi extension (the C runtime compiled in) on `pip install`."""
from setuptools import setup

setup(cffi_modules=["microruntime/build_ffi.py:ffibuilder"])
