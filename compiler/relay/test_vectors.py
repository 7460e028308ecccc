"""Test vectors: a model's inputs and the outputs of a reference run, as a C header that an app
on a device (a microcontroller without a file system) compiles in and checks its own run against.

    expected = reference_outputs(mod, params, inputs)              # a host build, run here
    factory = relay.build(mod, "llvm -mtriple=thumbv7em-none-eabihf -mcpu=cortex-m4 "
                               "--system-lib", params=params)
    write_test_vectors("model_data.h", inputs, expected, factory.manifest, atol=1e-5, rtol=1e-4)

The header defines (all `static const`, so it belongs in one C file):
    KILN_MODEL_ARENA_BYTES      the manifest's "arena_bytes" (mr_graph_executor_create_in_arena)
    KILN_NUM_INPUTS, KILN_NUM_OUTPUTS, KILN_MAX_OUTPUT_COUNT, KILN_ATOL, KILN_RTOL
    kiln_input_names[i], kiln_inputs[i] (bytes), kiln_input_bytes[i]
    kiln_expected[i] (float), kiln_expected_count[i]
An output matches when |got - expected| <= KILN_ATOL + KILN_RTOL * |expected| everywhere.
"""
from __future__ import annotations

from typing import Dict, Mapping, Sequence

import numpy as np

from ..ir.errors import CompilerError
from .build_module import build


class TestVectorError(CompilerError):
    """Inputs or outputs that a test-vector header cannot hold."""


def reference_outputs(mod, params, inputs: Mapping[str, np.ndarray], target="llvm"):
    """The outputs (numpy arrays) of the model built for this machine (`target`) and run with
    the graph executor on `inputs`: the reference a device's run is compared with."""
    import microruntime
    from microruntime import graph_executor

    factory = build(mod, target=target, params=params)
    gmod = graph_executor.GraphModule(factory["default"](microruntime.cpu()))
    for name, value in inputs.items():
        gmod.set_input(name, value)
    gmod.run()
    return [gmod.get_output(i).numpy() for i in range(gmod.get_num_outputs())]


def _c_floats(values: np.ndarray) -> str:
    flat = [f"{float(v):.9g}" for v in np.asarray(values, dtype="float32").ravel()]
    text = [v + ("f" if any(c in v for c in ".en") else ".0f") for v in flat]
    return ",\n  ".join(", ".join(text[i:i + 8]) for i in range(0, len(text), 8))


def _c_bytes(data: bytes) -> str:
    return ",\n  ".join(", ".join(f"0x{b:02x}" for b in data[i:i + 16])
                        for i in range(0, len(data), 16))


def test_vectors_source(inputs: Mapping[str, np.ndarray], outputs: Sequence[np.ndarray],
                        manifest: Dict, atol: float, rtol: float) -> str:
    """The header's text (see the module doc)."""
    if "arena_bytes" not in manifest:
        raise TestVectorError("the manifest has no 'arena_bytes' (its model's workspace is not "
                              "known at compile time): an arena executor cannot be sized")
    names = [i["name"] for i in manifest["inputs"]]
    missing = [n for n in names if n not in inputs]
    if missing or len(outputs) != len(manifest["outputs"]):
        raise TestVectorError(f"test vectors need every input of the model ({', '.join(names)}; "
                              f"missing: {', '.join(missing) or 'none'}) and its "
                              f"{len(manifest['outputs'])} outputs, got {len(outputs)}")
    lines = ["/* Test vectors of a model compiled by Kiln: its inputs and the outputs of a",
             " * reference run (compiler.relay.test_vectors). Generated; do not edit. */",
             "#ifndef KILN_TEST_VECTORS_H_", "#define KILN_TEST_VECTORS_H_", "",
             "#include <stddef.h>", "",
             f"#define KILN_MODEL_ARENA_BYTES {int(manifest['arena_bytes'])}",
             f"#define KILN_NUM_INPUTS {len(names)}",
             f"#define KILN_NUM_OUTPUTS {len(outputs)}",
             f"#define KILN_MAX_OUTPUT_COUNT {max(int(np.asarray(o).size) for o in outputs)}",
             f"#define KILN_ATOL {float(atol)!r}f", f"#define KILN_RTOL {float(rtol)!r}f", ""]
    for i, name in enumerate(names):
        spec = manifest["inputs"][i]
        value = np.ascontiguousarray(inputs[name], dtype=spec["dtype"])
        if list(value.shape) != list(spec["shape"]):
            raise TestVectorError(f"input {name!r} has shape {list(value.shape)}, the model "
                                  f"takes {spec['shape']}")
        lines += [f"/* input '{name}': {spec['shape']} {spec['dtype']} */",
                  f"static const unsigned char kiln_input_{i}[{value.nbytes}] "
                  f"__attribute__((aligned(8))) = {{\n  {_c_bytes(value.tobytes())}\n}};"]
    for i, out in enumerate(outputs):
        out = np.asarray(out)
        if out.dtype != np.float32:
            raise TestVectorError(f"output {i} is {out.dtype}; test vectors compare float32 "
                                  "outputs")
        lines += [f"/* expected output {i}: {list(out.shape)} float32 */",
                  f"static const float kiln_expected_{i}[{out.size}] = {{\n  {_c_floats(out)}\n}};"]
    lines += ["static const char* const kiln_input_names[KILN_NUM_INPUTS] = {"
              + ", ".join(f'"{n}"' for n in names) + "};",
              "static const unsigned char* const kiln_inputs[KILN_NUM_INPUTS] = {"
              + ", ".join(f"kiln_input_{i}" for i in range(len(names))) + "};",
              "static const size_t kiln_input_bytes[KILN_NUM_INPUTS] = {"
              + ", ".join(f"sizeof(kiln_input_{i})" for i in range(len(names))) + "};",
              "static const float* const kiln_expected[KILN_NUM_OUTPUTS] = {"
              + ", ".join(f"kiln_expected_{i}" for i in range(len(outputs))) + "};",
              "static const size_t kiln_expected_count[KILN_NUM_OUTPUTS] = {"
              + ", ".join(str(int(np.asarray(o).size)) for o in outputs) + "};",
              "", "#endif /* KILN_TEST_VECTORS_H_ */", ""]
    return "\n".join(lines)


def write_test_vectors(path: str, inputs: Mapping[str, np.ndarray],
                       outputs: Sequence[np.ndarray], manifest: Dict, atol: float = 1e-5,
                       rtol: float = 1e-4) -> str:
    """Writes the header to `path`; returns `path`."""
    text = test_vectors_source(inputs, outputs, manifest, atol, rtol)
    with open(path, "w") as f:
        f.write(text)
    return path
