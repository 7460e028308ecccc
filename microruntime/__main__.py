"""Command line: `python -m microruntime manifest model.so` prints what a model needs and gives
(inputs, outputs, params, memory, kernels) from its manifest, without loading or running it."""
import sys


def main(argv):
    if len(argv) != 2 or argv[0] != "manifest":
        print("usage: python -m microruntime manifest MODEL (.so, .a, .o or .tar)",
              file=sys.stderr)
        return 2
    from .graph_executor import print_manifest

    try:
        print_manifest(argv[1])
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
