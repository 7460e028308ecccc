"""ONNX models with dims known only at run time and with control flow, made with onnx.helper
(random weights, fixed seeds): what the VM tests and the interop tests build for the Relax VM.

- `cnn(x_shape)`: Conv 3x3, Relu, MaxPool 2x2, depthwise Conv 3x3, GlobalAveragePool,
  Flatten, Gemm; x_shape may name dims ("N", "H", "W");
- `attention(heads, batch, causal)`: LayerNorm(x + self-attention(x)) on [batch, "S", 16],
  the head split and merge reshaping to shapes computed by Shape / Gather / Concat;
- `if_model(...)` / `runtime_if()`: an If on a condition computed at run time, its branches
  reading the enclosing graph's x;
- `position_embeddings(max_len)`: what BERT's exporter writes for x [1, "S", 16]: positions
  sliced from a [1, max_len] buffer up to S (a Slice whose end is a symbolic dim, clamped to
  max_len), token types gathered by them (GatherElements) and expanded to x's shape, both
  embedded and added to x (S and the clamped length made one), and the types times S (a dim
  used as a tensor) added;
- `causal_positions()`: what GPT-2's dynamo export writes for its mask: positions Range(0, S)
  concatenated with a shifted copy and sliced back by ends from Shape (S and S + 1), a CumSum
  along S, GatherND by indices built from Range, a causal mask (and an equal-segment mask)
  over softmax(x x^T) x.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 16


def const(name, value, dtype=np.int64):
    """A Constant node `name` holding `value`."""
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
        np.asarray(value, dtype=dtype), name))


def weight(rng, name, shape, scale=0.3):
    """A float32 initializer of normal values times `scale`."""
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype("float32"), name)


def model(nodes, inputs, outputs, inits=()):
    """An opset-17 model of one graph."""
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def out(name):
    """A float output of unknown shape."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, None)


def cnn(x_shape, channels=8, classes=5):
    """conv 3x3 -> relu -> maxpool 2x2 -> depthwise conv 3x3 -> global avg pool -> flatten ->
    gemm."""
    rng = np.random.default_rng(0)
    inits = [weight(rng, "w1", (channels, 3, 3, 3)), weight(rng, "b1", (channels,)),
             weight(rng, "w2", (channels, 1, 3, 3)), weight(rng, "b2", (channels,)),
             weight(rng, "wf", (classes, channels)), weight(rng, "bf", (classes,))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=channels),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    return model(nodes, [x], [out("y")], inits)


def attention(heads, batch=1, causal=False):
    """x [batch, S, 16] -> LayerNorm(x + attention(x)): q, k, v = x W + b, split into heads by
    a Reshape to a shape computed from Shape(x), softmax(q k^T / sqrt(d)) v, merged back.
    With `causal`, positions Gather(pos, Range(0, S)) are added to x first and the scores
    are masked by Where(Range as row <= Range as column); a second output is the last token
    (Slice)."""
    hd = HIDDEN // heads
    rng = np.random.default_rng(heads)
    inits = [weight(rng, "w" + n, (HIDDEN, HIDDEN)) for n in "qkv"]
    inits += [weight(rng, "b" + n, (HIDDEN,)) for n in "qkv"]
    inits += [weight(rng, "gamma", (HIDDEN,)), weight(rng, "beta", (HIDDEN,))]
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("i0", 0), const("i1", 1), const("ax0", [0]),
        const("heads", [heads]), const("hdim", [hd]), const("minus1", [-1]),
        helper.make_node("Gather", ["shape", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["shape", "i1"], ["s"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Unsqueeze", ["s", "ax0"], ["s1"]),
        helper.make_node("Concat", ["b1", "s1", "heads", "hdim"], ["split"], axis=0),
        helper.make_node("Concat", ["b1", "s1", "minus1"], ["merge"], axis=0),
    ]
    inp = "x"
    if causal:
        inits.append(weight(rng, "pos", (32, HIDDEN)))
        nodes += [
            const("zero", 0), const("one", 1), const("ax1", [1]),
            helper.make_node("Range", ["zero", "s", "one"], ["ar"]),
            helper.make_node("Gather", ["pos", "ar"], ["pe"], axis=0),
            helper.make_node("Add", ["x", "pe"], ["xp"]),
            helper.make_node("Unsqueeze", ["ar", "ax0"], ["row"]),
            helper.make_node("Unsqueeze", ["ar", "ax1"], ["col"]),
            helper.make_node("LessOrEqual", ["row", "col"], ["mask"]),
            const("ninf", -1e9, np.float32),
        ]
        inp = "xp"
    for n in "qkv":
        nodes += [helper.make_node("MatMul", [inp, "w" + n], [n + "m"]),
                  helper.make_node("Add", [n + "m", "b" + n], [n + "a"]),
                  helper.make_node("Reshape", [n + "a", "split"], [n + "r"]),
                  helper.make_node("Transpose", [n + "r"], [n + "t"], perm=[0, 2, 1, 3])]
    nodes += [
        helper.make_node("Transpose", ["kt"], ["ktt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qt", "ktt"], ["scores"]),
        const("sqrt_d", np.sqrt(hd), np.float32),
        helper.make_node("Div", ["scores", "sqrt_d"], ["scaled"]),
    ]
    if causal:
        nodes.append(helper.make_node("Where", ["mask", "scaled", "ninf"], ["masked"]))
    nodes += [
        helper.make_node("Softmax", ["masked" if causal else "scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "vt"], ["ctx"]),
        helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx_t", "merge"], ["merged"]),
        helper.make_node("Add", ["merged", inp], ["res"]),
        helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["y"], axis=-1,
                         epsilon=1e-5),
    ]
    outputs = [out("y")]
    if causal:
        nodes += [const("st", [-1]), const("en", [2 ** 62]),
                  helper.make_node("Slice", ["y", "st", "en", "ax1"], ["last"])]
        outputs.append(out("last"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, "S", HIDDEN])
    return model(nodes, [x], outputs, inits)


def branch(nodes, outputs):
    return helper.make_graph(nodes, "branch", [], [out(o) for o in outputs])


def if_model(cond_nodes, then_graph, else_graph, outputs=("y",), after=(), x_shape=("N", 3)):
    nodes = list(cond_nodes) + [helper.make_node("If", ["cond"], list(outputs),
                                                 then_branch=then_graph,
                                                 else_branch=else_graph)] + list(after)
    final = [n.output[0] for n in after] or list(outputs)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))
    return model(nodes, [x], [out(o) for o in final])


def sum_positive():
    return [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            const("zero", 0.0, np.float32),
            helper.make_node("Greater", ["s", "zero"], ["cond"])]


def runtime_if(x_shape=("N", 3)):
    """y = If(ReduceSum(x) > 0, then: x * 2 + 1, else: Relu(x) - 3)."""
    then_graph = branch([const("two", 2.0, np.float32), const("one", 1.0, np.float32),
                         helper.make_node("Mul", ["x", "two"], ["t"]),
                         helper.make_node("Add", ["t", "one"], ["t_out"])], ["t_out"])
    else_graph = branch([const("three", 3.0, np.float32),
                         helper.make_node("Relu", ["x"], ["e"]),
                         helper.make_node("Sub", ["e", "three"], ["e_out"])], ["e_out"])
    return if_model(sum_positive(), then_graph, else_graph, x_shape=x_shape)


def _seq_of(x="x", axis=1):
    """Nodes computing S = Shape(x)[axis] as a scalar ("S") and as [S] ("S1")."""
    return [helper.make_node("Shape", [x], ["shape_x"]),
            const("axis_s", axis),
            helper.make_node("Gather", ["shape_x", "axis_s"], ["S"], axis=0),
            const("ax0_s", [0]),
            helper.make_node("Unsqueeze", ["S", "ax0_s"], ["S1"])]


def position_embeddings(max_len=8, types=3):
    """x [1, S, 16] -> x + pos_emb[pos[:, :S]] + type_emb[t] + (t * S)[..., None] for token
    types t = Expand(GatherElements(type_ids, pos[:, :S]), Shape(x)[:2]) (the target shape
    computed as BERT's export does, reading Shape of that shape); beyond max_len ONNX Runtime
    fails, as on BERT."""
    rng = np.random.default_rng(21)
    inits = [weight(rng, "pos_emb", (max_len, HIDDEN)), weight(rng, "type_emb", (types, HIDDEN)),
             numpy_helper.from_array(np.arange(max_len, dtype=np.int64)[None], "pos_ids"),
             numpy_helper.from_array(rng.integers(0, types, (1, max_len)).astype(np.int64),
                                     "type_ids")]
    nodes = _seq_of() + [
        const("zero1", [0]), const("one1", [1]),
        helper.make_node("Slice", ["pos_ids", "zero1", "S1", "one1", "one1"], ["pos"]),
        helper.make_node("Gather", ["pos_emb", "pos"], ["pe"], axis=0),
        helper.make_node("GatherElements", ["type_ids", "pos"], ["tt"], axis=1),
        const("two1", [2]),
        helper.make_node("Slice", ["shape_x", "zero1", "two1"], ["bs"]),
        # BERT's Expand target: Where(bs == -1, 1, bs) over ConstantOfShape(Shape(bs))
        helper.make_node("Shape", ["bs"], ["bs_len"]),
        helper.make_node("ConstantOfShape", ["bs_len"], ["ones_i"],
                         value=numpy_helper.from_array(np.ones(1, np.int64))),
        const("minus1", -1),
        helper.make_node("Mul", ["ones_i", "minus1"], ["neg"]),
        helper.make_node("Equal", ["bs", "neg"], ["is_neg"]),
        helper.make_node("Where", ["is_neg", "ones_i", "bs"], ["target"]),
        helper.make_node("Expand", ["tt", "target"], ["tte"]),
        helper.make_node("Gather", ["type_emb", "tte"], ["te"], axis=0),
        helper.make_node("Add", ["x", "pe"], ["xp"]),
        helper.make_node("Add", ["xp", "te"], ["xt"]),
        helper.make_node("Mul", ["tte", "S"], ["scaled"]),
        helper.make_node("Cast", ["scaled"], ["scaled_f"], to=TensorProto.FLOAT),
        const("ax_last", [-1]),
        helper.make_node("Unsqueeze", ["scaled_f", "ax_last"], ["shift"]),
        helper.make_node("Add", ["xt", "shift"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "S", HIDDEN])
    return model(nodes, [x], [out("y")], inits)


def causal_positions():
    """x [1, S, 16] -> softmax(x x^T masked) x, the mask as GPT-2's dynamo export builds it:
    pos = Range(0, S)[None]; cat = Concat(pos[:, :1] - 1, pos) [1, S + 1]; a = cat[:, :S] and
    b = cat[:, 1:S + 1] (ends from Shape); seg = CumSum(b - a != 1); row and column positions
    and segments gathered by GatherND with indices [0, i] built from Range; allowed where
    col <= row and the segments are equal."""
    int64 = TensorProto.INT64
    nodes = _seq_of() + [
        const("zero", 0), const("one", 1), const("zero1", [0]), const("one1", [1]),
        const("minus1", [-1]), const("ax_last", -1),
        helper.make_node("Range", ["zero", "S", "one"], ["ar"]),
        helper.make_node("Unsqueeze", ["ar", "zero1"], ["pos"]),
        helper.make_node("Slice", ["pos", "zero1", "one1", "one1", "one1"], ["first"]),
        helper.make_node("Sub", ["first", "one"], ["before"]),
        helper.make_node("Concat", ["before", "pos"], ["cat"], axis=-1),
        helper.make_node("Slice", ["cat", "zero1", "S1", "minus1"], ["a"]),
        helper.make_node("Add", ["one", "S"], ["S_plus1"]),
        helper.make_node("Reshape", ["S_plus1", "minus1"], ["end_b"]),
        helper.make_node("Slice", ["cat", "one1", "end_b", "minus1"], ["b"]),
        helper.make_node("Sub", ["b", "a"], ["step"]),
        helper.make_node("Equal", ["step", "one"], ["same"]),
        helper.make_node("Not", ["same"], ["jump"]),
        helper.make_node("Cast", ["jump"], ["jump_i"], to=int64),
        helper.make_node("CumSum", ["jump_i", "ax_last"], ["seg"]),
        # indices [0, i] for i < S: [S, 2]
        const("ax1", [1]),
        helper.make_node("Unsqueeze", ["ar", "ax1"], ["col_i"]),
        helper.make_node("Shape", ["col_i"], ["col_shape"]),
        const("zero11", np.zeros((1, 1), np.int64)),
        helper.make_node("Expand", ["zero11", "col_shape"], ["zeros_i"]),
        helper.make_node("Concat", ["zeros_i", "col_i"], ["idx"], axis=-1),
        helper.make_node("GatherND", ["pos", "idx"], ["p"]),
        helper.make_node("GatherND", ["seg", "idx"], ["sg"]),
        helper.make_node("Unsqueeze", ["p", "zero1"], ["p_col"]),
        helper.make_node("Unsqueeze", ["p", "ax1"], ["p_row"]),
        helper.make_node("LessOrEqual", ["p_col", "p_row"], ["causal"]),
        helper.make_node("Unsqueeze", ["sg", "zero1"], ["s_col"]),
        helper.make_node("Unsqueeze", ["sg", "ax1"], ["s_row"]),
        helper.make_node("Equal", ["s_col", "s_row"], ["segment"]),
        helper.make_node("And", ["causal", "segment"], ["allowed"]),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "xt"], ["scores"]),
        const("ninf", -1e9, np.float32),
        helper.make_node("Where", ["allowed", "scores", "ninf"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "x"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "S", HIDDEN])
    return model(nodes, [x], [out("y")])


__all__ = ["HIDDEN", "attention", "branch", "causal_positions", "cnn", "const", "if_model",
           "model", "out", "position_embeddings", "runtime_if", "sum_positive", "weight"]
