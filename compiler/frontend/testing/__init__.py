"""Test fixtures of the frontends: whole ONNX models built with onnx.helper."""
