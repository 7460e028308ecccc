"""`python -m compiler compile model.onnx --target llvm -o model.so`: see compiler/cli."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
