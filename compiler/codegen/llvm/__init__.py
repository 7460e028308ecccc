"""The llvm target, through llvmlite: `codegen_host` builds an object (and the .ll/.s text) from
the packed form of a module; the emitters per concern live beside it."""
from .codegen import codegen_host, create_target_machine, is_cross_compiling

__all__ = ["codegen_host", "create_target_machine", "is_cross_compiling"]
