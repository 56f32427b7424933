"""Random ONNX graphs for the synthetic training data: `random_model(seed)` and `summarize(model)`.

Contract
- `random_model(seed, *, min_nodes=1, max_nodes=60) -> onnx.ModelProto`: a valid default-domain model at the
  vocabulary's opset (`models/vocab.json`), passing `onnx.checker.check_model(model, full_check=True)` and
  `onnx.shape_inference.infer_shapes(model, strict_mode=True)`. The returned model already carries the inferred
  `value_info` (so Netron draws a shape label on every edge whose shape is known).
- Every node's op type is one of the 72 vocabulary operators; constants are initializers (never Constant nodes).
- Node count is in `[min_nodes, max_nodes]` (1 <= min_nodes <= max_nodes), drawn from a distribution skewed to 5–30.
- Each graph contains 1–3 "showcase" operators drawn from the whole vocabulary (so over many seeds every operator
  appears), wrapped in a motif that makes them valid, on top of family-driven structure (CNN, transformer,
  recurrent, MLP, detector, video, generic tensors).
- Shapes: ranks 1–5, concrete dims with a realistic spread, symbolic dims (`batch`, `seq`, ...) and unknown dims
  (drawn by Netron as `?`) in some graphs.
- Initializers keep realistic shapes but are stored as raw zeros (the models are only rendered, never run); their
  total payload is capped at `MAX_INITIALIZER_BYTES`, so a serialized model stays under ~4 MB.
- Deterministic: the same seed gives a byte-identical `SerializeToString()` (all randomness comes from one
  `random.Random` seeded from `seed`).
- `lift_weights(model, rng, p) -> onnx.ModelProto`: the model with its weights, each with probability `p`, turned
  into `ConstantOfShape` nodes, the form of the onnx package's "light" models (for evaluation sets of such views;
  the training data does not use it).
- `summarize(model) -> dict`: JSON-serialisable summary (ops, node names, tensor names, inputs, outputs,
  initializers with shapes); a dim is an int, a symbol string, or None for unknown.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Union

import numpy as np
import onnx
from onnx import TensorProto, TypeProto, helper, numpy_helper
from onnx import defs as onnx_defs
from onnx import shape_inference

from .vocab import load_vocab

VOCAB = load_vocab()
OPS: tuple[str, ...] = VOCAB.ops
OPSET = VOCAB.opset
OPSET_IMPORTS = [helper.make_opsetid("", OPSET)]
IR_VERSION = 9  # IR version matching opset 20 (onnx 1.15+); readers such as Netron and tract accept it.
MAX_INITIALIZER_BYTES = 3_500_000
SHOWCASE_BYTES = 300_000  # initializer bytes kept free for each showcase operator still to place
GENERATOR_VERSION = "1"

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL
UINT8 = TensorProto.UINT8
INT8 = TensorProto.INT8
FLOAT16 = TensorProto.FLOAT16

Dim = Union[int, str, None]
Shape = list  # list[Dim]

COMMON_DIMS = (1, 3, 7, 16, 32, 56, 64, 128, 224, 256, 512, 768, 1000, 1024)
CHANNELS = (3, 8, 16, 24, 32, 48, 64, 64, 96, 128, 128, 160, 192, 256, 256, 320, 384, 512, 512, 768, 1024, 2048)
SPATIAL = (7, 14, 28, 32, 56, 64, 112, 128, 160, 224, 224, 256, 299, 320, 384, 416, 448, 512, 640)
HIDDEN = (32, 64, 96, 128, 192, 256, 256, 384, 512, 768, 768, 1024)
BATCH_SYMBOLS = ("batch", "N", "batch_size", "B", "bs", "n", "unk__612", "None")
SEQ_SYMBOLS = ("seq", "seq_len", "sequence_length", "T", "time", "S", "num_tokens", "sequence")
HEIGHT_SYMBOLS = ("height", "H", "h", "in_height")
WIDTH_SYMBOLS = ("width", "W", "w", "in_width")
BOX_SYMBOLS = ("num_boxes", "boxes", "M", "num_dets", "anchors")
MISC_SYMBOLS = ("K", "D", "C", "features", "len", "dim_0", "dim_1", "L")


class _Reject(Exception):
    """A motif cannot be applied here (wrong shape, over budget, or ONNX inference refused a node)."""


# ---------------------------------------------------------------------------------------------------------------
# Naming styles: how node, tensor and initializer names look (like the exporter that "made" the graph).

STYLES = ("torch", "torch", "torch_old", "simple", "tf", "generic")
_TF_OPS = {
    "Conv": "Conv2D", "Gemm": "MatMul", "MatMul": "MatMul", "Add": "BiasAdd", "Relu": "Relu", "Sigmoid": "Sigmoid",
    "BatchNormalization": "FusedBatchNormV3", "MaxPool": "MaxPool", "AveragePool": "AvgPool", "Reshape": "Reshape",
    "Transpose": "transpose", "Concat": "concat", "Softmax": "Softmax", "Mul": "mul", "Sub": "sub", "Div": "truediv",
    "GlobalAveragePool": "Mean", "ReduceMean": "Mean", "Squeeze": "Squeeze", "Tanh": "Tanh", "Pad": "Pad",
}
_SHORT = {
    "Conv": "conv", "BatchNormalization": "bn", "Relu": "relu", "Gemm": "fc", "MatMul": "matmul", "Add": "add",
    "MaxPool": "pool", "AveragePool": "avgpool", "GlobalAveragePool": "gap", "LayerNormalization": "ln",
    "Softmax": "softmax", "Sigmoid": "sigmoid", "Reshape": "reshape", "Transpose": "transpose", "Concat": "cat",
    "LSTM": "lstm", "GRU": "gru", "Mul": "mul", "Dropout": "dropout", "Flatten": "flatten",
}


def _make_type(dtype: int, dims: Sequence[Dim] | None) -> TypeProto:
    return helper.make_tensor_type_proto(dtype, None if dims is None else list(dims))


def _dims_of(t: TypeProto) -> Shape | None:
    tt = t.tensor_type
    if not tt.HasField("shape"):
        return None
    out: Shape = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def _known(dims: Sequence[Dim] | None) -> bool:
    return dims is not None and all(isinstance(d, int) for d in dims)


def _numel(dims: Sequence[int]) -> int:
    return int(math.prod(dims))


_SCHEMAS: dict[str, onnx_defs.OpSchema] = {}


def _schema(op: str) -> onnx_defs.OpSchema:
    s = _SCHEMAS.get(op)
    if s is None:
        s = _SCHEMAS[op] = onnx_defs.get_schema(op, OPSET, "")
    return s


class _Builder:
    """Accumulates nodes, initializers and graph inputs; infers each node's output types as it is added."""

    def __init__(self, rng: random.Random, style: str, limit: int):
        self.rng = rng
        self.style = style
        self.limit = limit  # hard node cap for the motif being built (raises _Reject beyond)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.types: dict[str, TypeProto] = {}
        self.values: dict[str, TensorProto] = {}  # small constant initializers, given to inference
        # contents of small int64 tensors (shape arithmetic), entries int / symbol / None: our own data propagation
        self.shape_values: dict[str, list[Dim]] = {}
        self.names: set[str] = set()
        self.node_names: set[str] = set()
        self.init_bytes = 0
        self.byte_cap = MAX_INITIALIZER_BYTES  # lowered while showcase operators still need room
        self.scope_stack: list[str] = []
        self.counter = self.rng.randint(0, 400)
        self.op_counts: dict[str, int] = {}

    # ----- bookkeeping
    def mark(self) -> tuple[int, int, int, int]:
        return len(self.nodes), len(self.inits), len(self.inputs), self.init_bytes

    def rollback(self, mark: tuple[int, int, int, int]) -> None:
        n, i, g, b = mark
        for node in self.nodes[n:]:
            self.op_counts[node.op_type] -= 1
        del self.nodes[n:], self.inits[i:], self.inputs[g:]
        self.init_bytes = b

    @contextlib.contextmanager
    def scope(self, *parts: str) -> Iterator[None]:
        self.scope_stack.extend(parts)
        try:
            yield
        finally:
            del self.scope_stack[len(self.scope_stack) - len(parts):]

    def unique(self, name: str, used: set[str]) -> str:
        """`name`, or `name_k` with the smallest k making it unused; records it in `used`."""
        if name not in used:
            used.add(name)
            return name
        k = 1
        while f"{name}_{k}" in used:
            k += 1
        used.add(f"{name}_{k}")
        return f"{name}_{k}"

    def _tick(self) -> int:
        self.counter += 1
        return self.counter

    # ----- names
    def _node_name(self, op: str) -> str:
        st, sc = self.style, self.scope_stack
        if st == "torch":
            base = "/" + "/".join([*sc, op])
        elif st == "torch_old":
            base = f"{op}_{self._tick()}"
        elif st == "simple":
            short = _SHORT.get(op, op.lower())
            base = ".".join([*sc, short]) if sc else f"{short}{self.op_counts.get(op, 0) + 1}"
        elif st == "tf":
            base = "/".join(["StatefulPartitionedCall", "model", *sc, _TF_OPS.get(op, op)])
        else:
            base = f"{op}_{self._tick()}" if self.rng.random() < 0.5 else f"node_{len(self.nodes)}"
        return self.unique(base, self.node_names)

    def _tensor_name(self, node_name: str, op: str, i: int) -> str:
        st = self.style
        if st == "torch":
            name = f"{node_name}_output_{i}" if self.rng.random() < 0.85 else f"onnx::{op}_{self._tick()}"
        elif st == "torch_old":
            name = str(self._tick()) if self.rng.random() < 0.7 else f"input.{self._tick()}"
        elif st == "simple":
            if i:
                name = f"{node_name}_out{i}"
            else:
                name = f"{node_name}_out" if self.rng.random() < 0.5 else f"x{self._tick()}"
        elif st == "tf":
            name = f"{node_name}:{i}"
        else:
            name = f"t{self._tick()}"
        return self.unique(name, self.names)

    def _init_name(self, param: str, op_hint: str) -> str:
        st, sc = self.style, self.scope_stack
        r = self.rng.random()
        if st in ("torch", "simple") and sc and param in ("weight", "bias", "running_mean", "running_var"):
            name = ".".join([*sc, param])
        elif st == "torch":
            name = f"onnx::{op_hint}_{self._tick()}" if r < 0.6 else "/" + "/".join([*sc, "Constant"]) + "_output_0"
        elif st == "torch_old":
            if r < 0.5:
                name = str(self._tick())
            else:
                name = ".".join([*sc, param]) if sc else f"onnx::{op_hint}_{self._tick()}"
        elif st == "tf":
            name = "/".join(["model", *sc, param]) + ":0" if r < 0.6 else f"const_fold_opt__{self._tick()}"
        elif st == "simple":
            name = f"{param}{self._tick()}"
        else:
            name = f"{param[:1].upper()}{self._tick()}" if r < 0.5 else f"c{self._tick()}"
        return self.unique(name, self.names)

    # ----- graph elements
    def input(self, dims: Sequence[Dim], dtype: int = FLOAT, name: str | None = None) -> str:
        """A new graph input of shape `dims` (int, symbol, or None for an unknown dim)."""
        if name is None:
            name = self.rng.choice(("input", "x", "input.1", "data", "X", "input_0", "in", "inp"))
        name = self.unique(name, self.names)
        t = _make_type(dtype, dims)
        self.types[name] = t
        self.inputs.append(helper.make_value_info(name, t))
        return name

    def const(self, array: np.ndarray, param: str = "const", op_hint: str = "Constant") -> str:
        """An initializer holding real values (shapes, axes, scalars): ONNX inference sees them."""
        name = self._init_name(param, op_hint)
        tensor = numpy_helper.from_array(np.asarray(array), name)
        self._add_init(tensor, len(tensor.raw_data))
        if array.size <= 64:
            self.values[name] = tensor
            if array.dtype == np.int64 and array.ndim <= 1:
                self.shape_values[name] = [int(v) for v in array.reshape(-1)]
        return name

    def i64(self, values: Sequence[int] | int, param: str = "const", op_hint: str = "Constant") -> str:
        return self.const(np.array(values, dtype=np.int64), param, op_hint)

    def f32(self, values: Sequence[float] | float, param: str = "const", op_hint: str = "Constant") -> str:
        return self.const(np.array(values, dtype=np.float32), param, op_hint)

    def weight(self, dims: Sequence[int], param: str = "weight", op_hint: str = "Conv", dtype: int = FLOAT) -> str:
        """A zero-filled initializer of shape `dims` (raises _Reject over the payload budget)."""
        dims = [int(d) for d in dims]
        nbytes = _numel(dims) * helper.tensor_dtype_to_np_dtype(dtype).itemsize
        if self.init_bytes + nbytes > self.byte_cap:
            raise _Reject("initializer budget")
        name = self._init_name(param, op_hint)
        tensor = helper.make_tensor(name, dtype, dims, b"\0" * nbytes, raw=True)
        self._add_init(tensor, nbytes)
        return name

    def room(self, per_unit: int, dtype_bytes: int = 4) -> int:
        """How many units of `per_unit` elements still fit in the initializer budget."""
        return max(0, (self.byte_cap - self.init_bytes) // max(1, per_unit * dtype_bytes))

    def fit(self, want: int, per_unit: int, minimum: int = 1) -> int:
        """`want` reduced (halved) until `want * per_unit` floats fit; raises _Reject below `minimum`."""
        room = self.room(per_unit)
        while want > room and want > minimum:
            want = max(minimum, want // 2)
        if want > room:
            raise _Reject("initializer budget")
        return want

    def _add_init(self, tensor: TensorProto, nbytes: int) -> None:
        self.types[tensor.name] = _make_type(tensor.data_type, list(tensor.dims))
        self.inits.append(tensor)
        self.init_bytes += nbytes

    def node(self, op: str, inputs: Sequence[str], n_out: int | Sequence[bool] = 1, **attrs) -> list[str]:
        """Adds one node; returns its output names ('' for outputs not requested). Raises _Reject when ONNX
        inference or verification refuses it or the node cap is reached."""
        if op not in VOCAB:
            raise AssertionError(f"{op} is not in the vocabulary")
        if len(self.nodes) >= self.limit:
            raise _Reject("node budget")
        name = self._node_name(op)
        wanted = [True] * n_out if isinstance(n_out, int) else list(n_out)
        outs = [self._tensor_name(name, op, i) if w else "" for i, w in enumerate(wanted)]
        while outs and outs[-1] == "":
            outs.pop()
        node = helper.make_node(op, list(inputs), outs, name=name, **attrs)
        in_types = {i: self.types[i] for i in inputs if i}
        data = {}
        for i in inputs:
            if i in self.values:
                data[i] = self.values[i]
            elif i in self.shape_values and all(isinstance(v, int) for v in self.shape_values[i]):
                vals = np.array(self.shape_values[i], np.int64)
                data[i] = numpy_helper.from_array(vals if self.rank(i) == 1 else vals.reshape(()), i)
        try:
            out_types = shape_inference.infer_node_outputs(_schema(op), node, in_types, data,
                                                           opset_imports=OPSET_IMPORTS)
        except (onnx.checker.ValidationError, shape_inference.InferenceError, RuntimeError) as err:
            raise _Reject(f"{op}: {err}") from None
        for o in outs:
            if not o:
                continue
            t = out_types.get(o)
            if t is None or not t.HasField("tensor_type") or t.tensor_type.elem_type == 0:
                raise _Reject(f"{op}: no type for output")
            self.types[o] = t
        if outs and outs[0]:
            refined = _refine_shape(self, node)
            if refined is not None:
                self.types[outs[0]] = _merge_type(self.types[outs[0]], refined, node)
            values = _propagate_values(self, node)
            if values is not None:
                self.shape_values[outs[0]] = values
        self.nodes.append(node)
        self.op_counts[op] = self.op_counts.get(op, 0) + 1
        return outs

    def left(self) -> int:
        """Nodes that may still be added under the current cap."""
        return self.limit - len(self.nodes)

    def op(self, op: str, inputs: Sequence[str], **attrs) -> str:
        """One-output node; returns the output name."""
        return self.node(op, inputs, 1, **attrs)[0]

    # ----- type queries
    def shape(self, name: str) -> Shape | None:
        return _dims_of(self.types[name])

    def dtype(self, name: str) -> int:
        return self.types[name].tensor_type.elem_type

    def rank(self, name: str) -> int | None:
        s = self.shape(name)
        return None if s is None else len(s)


# ---------------------------------------------------------------------------------------------------------------
# Data propagation for shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape/Expand/...), so that
# every tracked type is the true runtime shape, as precise as ONNX's own `data_prop` inference or more.


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _propagate_values(g: _Builder, node: onnx.NodeProto) -> list[Dim] | None:
    """Contents of the node's first output when it is a small int64 shape tensor we can compute."""
    op, ins = node.op_type, list(node.input)
    vals = [g.shape_values.get(i) for i in ins]
    if op == "Shape":
        dims = g.shape(ins[0])
        if dims is None:
            return None
        start, end = _attr(node, "start", 0), _attr(node, "end", None)
        return list(dims[start:end])
    if op in ("Identity", "Unsqueeze", "Squeeze") or (op == "Cast" and _attr(node, "to", 0) == INT64):
        return None if vals[0] is None or g.dtype(ins[0]) != INT64 else list(vals[0])
    if op == "Gather" and vals[0] is not None and vals[1] is not None and _attr(node, "axis", 0) == 0 \
            and g.rank(ins[0]) == 1:
        n = len(vals[0])
        if not all(isinstance(i, int) and -n <= i < n for i in vals[1]):
            return None
        return [vals[0][i] for i in vals[1]]
    if op == "Concat" and all(v is not None for v in vals) and all(g.rank(i) == 1 for i in ins):
        return [d for v in vals for d in v]
    return None


def _refine_shape(g: _Builder, node: onnx.NodeProto) -> Shape | None:
    """The first output's shape computed from propagated shape values, for ops whose shape comes from data."""
    op, ins = node.op_type, list(node.input)
    if op == "Reshape" and ins[1] in g.shape_values:
        target, src = g.shape_values[ins[1]], g.shape(ins[0])
        if src is None:
            return None
        out: Shape = []
        for i, t in enumerate(target):
            if t == 0:
                out.append(src[i] if i < len(src) else None)
            else:
                out.append(t)
        if -1 in out:
            k = out.index(-1)
            others = [d for j, d in enumerate(out) if j != k]
            if _known(src) and _known(others) and _numel(others) > 0:
                out[k] = _numel(src) // _numel(others)
            else:
                out[k] = None
        return out
    if op == "ConstantOfShape" and ins[0] in g.shape_values:
        return list(g.shape_values[ins[0]])
    if op == "Expand" and ins[1] in g.shape_values and g.shape(ins[0]) is not None:
        a, b = list(g.shape(ins[0])), list(g.shape_values[ins[1]])
        r = max(len(a), len(b))
        a, b = [1] * (r - len(a)) + a, [1] * (r - len(b)) + b
        return [x if y == 1 else y if x == 1 else x if x == y else
                (x if isinstance(x, int) else y if isinstance(y, int) else None) for x, y in zip(a, b)]
    if op == "Tile" and ins[1] in g.shape_values and g.shape(ins[0]) is not None:
        return [d if r == 1 else d * r if isinstance(d, int) and isinstance(r, int) else None
                for d, r in zip(g.shape(ins[0]), g.shape_values[ins[1]])]
    if op == "Range" and all(i in g.shape_values for i in ins):
        start, limit, delta = (g.shape_values[i][0] for i in ins)
        if start == 0 and delta == 1 and isinstance(limit, (str, int)):
            return [limit]
    return None


def _merge_type(t: TypeProto, dims: Shape, node: onnx.NodeProto) -> TypeProto:
    """ONNX's inferred type with its unknown dims filled from our computation (they must agree where both know)."""
    inferred = _dims_of(t)
    if inferred is not None and len(inferred) != len(dims):
        raise AssertionError(f"{node.op_type} {node.name}: rank {len(inferred)} vs computed {dims}")
    merged: Shape = []
    for i, d in enumerate(dims):
        o = inferred[i] if inferred is not None else None
        if isinstance(o, int) and isinstance(d, int) and o != d:
            raise AssertionError(f"{node.op_type} {node.name}: inferred {inferred} vs computed {dims}")
        merged.append(o if isinstance(o, int) else d if d is not None else o)
    return _make_type(t.tensor_type.elem_type, merged)


# ---------------------------------------------------------------------------------------------------------------
# Dimension sampling


def _rand_dim(rng: random.Random) -> int:
    """A concrete dim: a common size, or a log-uniform int in 2..4096."""
    if rng.random() < 0.5:
        return rng.choice(COMMON_DIMS)
    return int(round(math.exp(rng.uniform(math.log(2), math.log(4096)))))


def _batch_dim(rng: random.Random) -> Dim:
    r = rng.random()
    if r < 0.45:
        return 1
    if r < 0.72:
        return rng.choice(BATCH_SYMBOLS)
    if r < 0.82:
        return None
    return rng.choice((2, 4, 8, 16, 32, 64, 3, 10))


def _spatial_dims(rng: random.Random, n: int = 2) -> list[Dim]:
    r = rng.random()
    if r < 0.12:
        return [rng.choice(HEIGHT_SYMBOLS), rng.choice(WIDTH_SYMBOLS)][:n] + [None] * (n - 2)
    if r < 0.17:
        return [None] * n
    if r < 0.65:
        s = rng.choice(SPATIAL)
        return [s] * n
    return [rng.choice(SPATIAL) if rng.random() < 0.4 else rng.randint(8, 1400) for _ in range(n)]


def _seq_dim(rng: random.Random) -> Dim:
    r = rng.random()
    if r < 0.35:
        return rng.choice(SEQ_SYMBOLS)
    if r < 0.42:
        return None
    if r < 0.7:
        return rng.choice((1, 7, 16, 32, 49, 50, 64, 77, 128, 196, 197, 256, 384, 512, 1024))
    return _rand_dim(rng)


def _channels(rng: random.Random, lo: int = 1, hi: int = 4096) -> int:
    c = rng.choice(CHANNELS) if rng.random() < 0.6 else _rand_dim(rng)
    return max(lo, min(hi, c))


def _out_size(size: Dim, k: int, s: int, p: int, d: int = 1) -> Dim:
    if not isinstance(size, int):
        return None
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


# ---------------------------------------------------------------------------------------------------------------
# Per-operator cores: the operator with the inputs it needs, applied to the float tensor `x`.
# Each raises _Reject when `x` does not fit; `FRESH` gives each op a graph input it always fits.

Core = Callable[[_Builder, str], str]


def _is_float(g: _Builder, x: str) -> bool:
    return g.dtype(x) == FLOAT


def _need(cond: bool) -> None:
    if not cond:
        raise _Reject("not applicable")


def _act_name(g: _Builder) -> str:
    return g.rng.choice(("Relu", "Relu", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSwish", "Clip", "Elu",
                         "HardSigmoid", "Gelu", "Softplus", "PRelu"))


def core_unary(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        _need(_is_float(g, x))
        attrs = {}
        if op == "LeakyRelu" and g.rng.random() < 0.8:
            attrs["alpha"] = g.rng.choice((0.01, 0.1, 0.2))
        elif op == "Elu" and g.rng.random() < 0.3:
            attrs["alpha"] = 1.0
        elif op == "HardSigmoid" and g.rng.random() < 0.6:
            attrs.update(alpha=0.16666667, beta=0.5)
        elif op == "Gelu" and g.rng.random() < 0.3:
            attrs["approximate"] = "tanh"
        return g.op(op, [x], **attrs)
    return f


def act(g: _Builder, x: str, op: str | None = None) -> str:
    """An activation chosen from the common ones (or `op`)."""
    op = op or _act_name(g)
    return CORES[op](g, x)


def core_clip(g: _Builder, x: str) -> str:
    _need(_is_float(g, x))
    lo, hi = g.rng.choice(((0.0, 6.0), (-1.0, 1.0), (0.0, 1.0), (1e-6, 1e6)))
    ins = [x, g.f32(lo, "min", "Clip"), g.f32(hi, "max", "Clip")]
    if g.rng.random() < 0.15:
        ins = ins[:2]
    return g.op("Clip", ins)


def core_prelu(g: _Builder, x: str) -> str:
    _need(_is_float(g, x))
    s = g.shape(x)
    if s and len(s) >= 3 and isinstance(s[1], int) and g.rng.random() < 0.7:
        slope = g.weight([s[1]] + [1] * (len(s) - 2), "slope", "PRelu")
    else:
        slope = g.weight([1], "slope", "PRelu")
    return g.op("PRelu", [x, slope])


def core_softmax(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        _need(_is_float(g, x) and (g.rank(x) or 0) >= 1)
        return g.op(op, [x], **({"axis": -1} if g.rng.random() < 0.5 else {}))
    return f


def _broadcast_operand(g: _Builder, x: str, op: str) -> str:
    """A constant that broadcasts against x: scalar, per-channel [C,1,1] or last-dim vector."""
    s = g.shape(x) or []
    r = g.rng.random()
    if len(s) >= 3 and isinstance(s[1], int) and r < 0.3:
        return g.weight([s[1]] + [1] * (len(s) - 2), "bias" if op in ("Add", "Sub") else "scale", op)
    if s and isinstance(s[-1], int) and r < 0.6:
        return g.weight([s[-1]], "bias" if op in ("Add", "Sub") else "weight", op)
    value = {"Add": 1.0, "Sub": 1.0, "Mul": 0.5, "Div": g.rng.choice((8.0, 2.0, 1.4142135, 255.0)),
             "Pow": 2.0, "Min": 6.0, "Max": 0.0}.get(op, 1.0)
    return g.f32(value if g.rng.random() < 0.7 else [value], "const", op)


def core_binary(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        _need(_is_float(g, x))
        if op == "Pow":
            return g.op("Pow", [x, g.f32(g.rng.choice((2.0, 2.0, 0.5, 3.0)), "exponent", "Pow")])
        other = _broadcast_operand(g, x, op)
        if op in ("Sub", "Div") or g.rng.random() < 0.8:
            return g.op(op, [x, other])
        return g.op(op, [other, x])
    return f


def core_minmax(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        _need(_is_float(g, x))
        ins = [x, g.f32(0.0 if op == "Max" else 6.0, "const", op)]
        if g.rng.random() < 0.2:
            ins.append(g.f32(1.0, "const", op))
        return g.op(op, ins)
    return f


def core_conv(g: _Builder, x: str, cout: int | None = None, k: int | None = None, stride: int | None = None,
              depthwise: bool | None = None, bias: bool | None = None, padding: str | None = None) -> str:
    """Conv on [N, C, *spatial] (C known). `padding`: "same" (k//2, so stride 1 keeps the size for any input),
    "valid" (none), or None (random, mostly same)."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and 3 <= len(s) <= 5 and isinstance(s[1], int))
    rng, cin, nd = g.rng, s[1], len(s) - 2
    spatial = s[2:]
    k = k if k is not None else rng.choice((1, 1, 3, 3, 3, 3, 5, 7))
    if any(isinstance(d, int) and d < k for d in spatial):
        k = 1
    stride = stride if stride is not None else rng.choice((1, 1, 1, 2))
    if any(isinstance(d, int) and d < 2 * stride for d in spatial):
        stride = 1
    pad = k // 2 if padding == "same" or padding is None and rng.random() < 0.85 else 0
    dil = 1
    if padding is None and k == 3 and rng.random() < 0.05 and all(not isinstance(d, int) or d > 8 for d in spatial):
        dil, pad = 2, 2
    if depthwise is None:
        depthwise = rng.random() < 0.12 and cin > 1
    group = cin if depthwise else 1
    if cout is None:
        cout = cin * rng.choice((1, 1, 2)) if depthwise else _channels(rng)
    per = (cin // group) * k ** nd
    cout = g.fit(cout, per)
    if depthwise and cout % group:
        cout = group
        if g.room(per) < cout:
            raise _Reject("initializer budget")
    w = g.weight([cout, cin // group] + [k] * nd, "weight", "Conv")
    ins = [x, w]
    if bias if bias is not None else rng.random() < 0.6:
        ins.append(g.weight([cout], "bias", "Conv"))
    attrs: dict = {"kernel_shape": [k] * nd}
    if rng.random() < 0.7 or stride > 1:
        attrs["strides"] = [stride] * nd
    if pad or rng.random() < 0.5:
        attrs["pads"] = [pad] * (2 * nd)
    if rng.random() < 0.5 or dil > 1:
        attrs["dilations"] = [dil] * nd
    if group > 1 or rng.random() < 0.5:
        attrs["group"] = group
    return g.op("Conv", ins, **attrs)


def core_convtranspose(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) in (3, 4, 5) and isinstance(s[1], int))
    rng, cin, nd = g.rng, s[1], len(s) - 2
    k, stride, pad = rng.choice(((2, 2, 0), (4, 2, 1), (3, 2, 1), (3, 1, 1)))
    cout = g.fit(rng.choice((max(1, cin // 2), cin, _channels(rng))), cin * k ** nd)
    ins = [x, g.weight([cin, cout] + [k] * nd, "weight", "ConvTranspose")]
    if rng.random() < 0.5:
        ins.append(g.weight([cout], "bias", "ConvTranspose"))
    attrs: dict = {"kernel_shape": [k] * nd, "strides": [stride] * nd, "pads": [pad] * (2 * nd)}
    if k == 3 and stride == 2 and rng.random() < 0.7:
        attrs["output_padding"] = [1] * nd
    return g.op("ConvTranspose", ins, **attrs)


def core_gemm(g: _Builder, x: str, n: int | None = None) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 2 and isinstance(s[1], int))
    rng, k = g.rng, s[1]
    n = n or rng.choice((10, 2, 1000, 128, 256, 512, 1024, 4096, _rand_dim(rng)))
    n = g.fit(n, k)
    trans_b = rng.random() < 0.75
    w = g.weight([n, k] if trans_b else [k, n], "weight", "Gemm")
    ins = [x, w]
    if rng.random() < 0.85:
        ins.append(g.weight([n], "bias", "Gemm"))
    attrs: dict = {"transB": 1} if trans_b else {}
    if rng.random() < 0.5:
        attrs.update(alpha=1.0, beta=1.0)
    return g.op("Gemm", ins, **attrs)


def core_matmul(g: _Builder, x: str, n: int | None = None, bias: bool = False) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 1 and isinstance(s[-1], int))
    k = s[-1]
    n = n or g.rng.choice((k, 2 * k, 4 * k, max(1, k // 2), _rand_dim(g.rng), 256, 768, 10))
    n = g.fit(n, k)
    y = g.op("MatMul", [x, g.weight([k, n], "weight", "MatMul")])
    if bias:
        b = g.weight([n], "bias", "Add")
        y = g.op("Add", [b, y] if g.rng.random() < 0.6 else [y, b])
    return y


def _rnn(op: str, g: _Builder, x: str, full: bool) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int))
    rng, isz = g.rng, s[2]
    gates = 4 if op == "LSTM" else 3
    dirs = 2 if rng.random() < 0.35 else 1
    hidden = rng.choice((16, 32, 64, 128, 128, 256, 256, 512, rng.randint(8, 600)))
    hidden = g.fit(hidden, dirs * gates * (isz + hidden + 2), minimum=4)
    ins = [x, g.weight([dirs, gates * hidden, isz], "W", op), g.weight([dirs, gates * hidden, hidden], "R", op)]
    if rng.random() < 0.85:
        ins.append(g.weight([dirs, 2 * gates * hidden], "B", op))
    if rng.random() < 0.25:
        while len(ins) < 4:
            ins.append(g.weight([dirs, 2 * gates * hidden], "B", op))
        ins.append("")  # sequence_lens
        ins.append(g.input([dirs, s[1], hidden], FLOAT, rng.choice(("h0", "initial_h", "hidden", "state_in"))))
    attrs: dict = {"hidden_size": hidden}
    if dirs == 2:
        attrs["direction"] = "bidirectional"
    elif rng.random() < 0.3:
        attrs["direction"] = "forward"
    if op == "GRU" and rng.random() < 0.8:
        attrs["linear_before_reset"] = 1
    n_out = 3 if op == "LSTM" else 2
    wanted = [True] + [rng.random() < 0.4 for _ in range(n_out - 1)]
    outs = g.node(op, ins, wanted, **attrs)
    y = outs[0]
    if not full:
        return y
    with g.scope("rnn_out"):
        if dirs == 1:
            return g.op("Squeeze", [y, g.i64([1], "axes", "Squeeze")])
        t = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        return g.op("Reshape", [t, g.i64([0, 0, -1], "shape", "Reshape")])


def core_norm(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        s = g.shape(x)
        _need(_is_float(g, x) and s is not None)
        if op == "LayerNormalization":
            _need(len(s) >= 1 and isinstance(s[-1], int))
            d = g.fit(s[-1], 2, minimum=s[-1])
            ins = [x, g.weight([d], "weight", op)]
            if g.rng.random() < 0.9:
                ins.append(g.weight([d], "bias", op))
            attrs = {"axis": -1, "epsilon": g.rng.choice((1e-5, 1e-6, 1e-12))}
            return g.op(op, ins, **attrs)
        min_rank = 2 if op == "BatchNormalization" else 3
        _need(len(s) >= min_rank and isinstance(s[1], int))
        c = g.fit(s[1], 4, minimum=s[1])
        if op == "BatchNormalization":
            ins = [x] + [g.weight([c], p, op) for p in ("weight", "bias", "running_mean", "running_var")]
            attrs = {"epsilon": g.rng.choice((1e-5, 1e-3))}
            if g.rng.random() < 0.5:
                attrs["momentum"] = 0.9
            return g.op(op, ins, **attrs)
        return g.op(op, [x, g.weight([c], "weight", op), g.weight([c], "bias", op)], epsilon=1e-5)
    return f


def core_dropout(g: _Builder, x: str) -> str:
    _need(_is_float(g, x))
    ins = [x]
    if g.rng.random() < 0.4:
        ins.append(g.f32(g.rng.choice((0.1, 0.2, 0.5)), "ratio", "Dropout"))
    outs = g.node("Dropout", ins, [True, g.rng.random() < 0.1])
    return outs[0]


def core_pool(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        s = g.shape(x)
        _need(_is_float(g, x) and s is not None and 3 <= len(s) <= 5)
        nd = len(s) - 2
        if op == "GlobalAveragePool":
            return g.op(op, [x])
        k, st, p = g.rng.choice(((2, 2, 0), (3, 2, 1), (3, 1, 1), (2, 1, 0), (5, 1, 2), (3, 2, 0)))
        for d in s[2:]:
            if isinstance(d, int) and _out_size(d, k, st, p) < 1:
                k, st, p = 1, 1, 0
        attrs: dict = {"kernel_shape": [k] * nd, "strides": [st] * nd}
        if p or g.rng.random() < 0.5:
            attrs["pads"] = [p] * (2 * nd)
        if g.rng.random() < 0.1:
            attrs["ceil_mode"] = 1
        if op == "AveragePool" and p and g.rng.random() < 0.5:
            attrs["count_include_pad"] = 1
        return g.op(op, [x], **attrs)
    return f


def _reshape_target(g: _Builder, s: Shape) -> list[int]:
    """A valid Reshape target for a tensor of shape s (0 copies a dim, -1 infers one)."""
    r, rng = len(s), g.rng
    choice = rng.random()
    if r >= 2 and choice < 0.35:
        return [0, -1]  # flatten
    if r >= 1 and isinstance(s[-1], int) and s[-1] % 2 == 0 and s[-1] >= 4 and r <= 4 and choice < 0.7:
        d = s[-1]
        heads = [h for h in (2, 4, 8, 12, 16, 3) if d % h == 0]
        h = rng.choice(heads) if heads else 2
        return [0] * (r - 1) + [h, d // h]  # split the last dim
    if r >= 3 and isinstance(s[-1], int) and isinstance(s[-2], int):
        return [0] * (r - 2) + [s[-2] * s[-1]]  # merge the last two
    if r >= 2:
        return [0, -1]
    return [-1, 1] if rng.random() < 0.5 else [1, -1]


def core_reshape(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    target = _reshape_target(g, s)
    _need(len(target) <= 5)
    return g.op("Reshape", [x, g.i64(target, "shape", "Reshape")])


def core_flatten(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    axis = 1 if g.rng.random() < 0.8 else g.rng.randint(0, len(s))
    return g.op("Flatten", [x], **({"axis": axis} if axis != 1 or g.rng.random() < 0.6 else {}))


def core_transpose(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 2)
    r = len(s)
    common = {2: [1, 0], 3: [0, 2, 1], 4: [0, 2, 3, 1], 5: [0, 2, 1, 3, 4]}
    if g.rng.random() < 0.6:
        perm = common[r] if r in common else list(range(r))[::-1]
        if r == 4 and g.rng.random() < 0.4:
            perm = g.rng.choice(([0, 3, 1, 2], [0, 2, 1, 3], [0, 1, 3, 2]))
        elif r == 3 and g.rng.random() < 0.4:
            perm = [1, 0, 2]
    else:
        perm = list(range(r))
        while perm == list(range(r)):
            g.rng.shuffle(perm)
    return g.op("Transpose", [x], perm=perm)


def core_squeeze(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None)
    ones = [i for i, d in enumerate(s) if d == 1]
    _need(bool(ones) and len(s) >= 2)
    axes = sorted(g.rng.sample(ones, 1 if len(ones) == 1 or g.rng.random() < 0.7 else 2))
    return g.op("Squeeze", [x, g.i64(axes, "axes", "Squeeze")])


def core_unsqueeze(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) <= 4)
    r = len(s)
    if r <= 2 and g.rng.random() < 0.3:
        axes = [r, r + 1]  # [N, C] -> [N, C, 1, 1]
    else:
        axes = [g.rng.choice((0, r, 1 if r >= 1 else 0, -1))]
    return g.op("Unsqueeze", [x, g.i64(axes, "axes", "Unsqueeze")])


def core_concat(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    axis = 1 if len(s) >= 2 and g.rng.random() < 0.7 else g.rng.randrange(len(s))
    other = x
    if g.rng.random() < 0.6 and _is_float(g, x) and g.left() >= 2:
        other = act(g, x)
    ins = [x, other]
    g.rng.shuffle(ins)
    if g.rng.random() < 0.25:
        ins.append(x)
    return g.op("Concat", ins, axis=axis)


def core_split(g: _Builder, x: str, merge: bool = True) -> str:
    """Split along a known dim, then merge the parts back (Concat) so nothing dangles."""
    s = g.shape(x)
    _need(s is not None)
    axes = [i for i, d in enumerate(s) if isinstance(d, int) and d >= 2]
    _need(bool(axes))
    axis = axes[-1] if g.rng.random() < 0.5 else g.rng.choice(axes)
    d = s[axis]
    n = 2 if d % 3 or g.rng.random() < 0.6 else 3
    if d % n == 0 and g.rng.random() < 0.5:
        parts = g.node("Split", [x], n, axis=axis, num_outputs=n)
    else:
        sizes = [d // n] * (n - 1)
        sizes.append(d - sum(sizes))
        parts = g.node("Split", [x, g.i64(sizes, "split", "Split")], n, axis=axis)
    if not merge:
        return parts[0]
    parts = [act(g, p) if g.rng.random() < 0.3 and _is_float(g, p) else p for p in parts]
    g.rng.shuffle(parts)
    return g.op("Concat", parts, axis=axis)


def core_slice(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    axis = g.rng.randrange(len(s))
    d = s[axis]
    if isinstance(d, int) and d >= 2:
        start = g.rng.choice((0, 1, d // 2))
        end = g.rng.choice((d, d - 1, start + 1, 2 ** 63 - 1)) if start + 1 < d else d
        end = max(end, start + 1)
    else:
        start, end = g.rng.choice(((0, 1), (-1, 2 ** 63 - 1)))  # never empty, whatever the runtime size
    ins = [x, g.i64([start], "starts", "Slice"), g.i64([end], "ends", "Slice")]
    if g.rng.random() < 0.85:
        ins.append(g.i64([axis if g.rng.random() < 0.7 else axis - len(s)], "axes", "Slice"))
        if g.rng.random() < 0.4:
            ins.append(g.i64([1], "steps", "Slice"))
    else:
        _need(axis == 0)
    return g.op("Slice", ins)


def core_gather(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    axis = g.rng.randrange(len(s))
    d = s[axis]
    hi = d if isinstance(d, int) else 1
    if g.rng.random() < 0.5 or hi < 3:
        idx = g.i64(g.rng.randrange(hi), "indices", "Gather")  # scalar: drops the axis
    else:
        idx = g.i64(sorted(g.rng.sample(range(hi), min(hi, g.rng.randint(1, 4)))), "indices", "Gather")
    return g.op("Gather", [x, idx], **({"axis": axis} if axis or g.rng.random() < 0.5 else {}))


def core_shape(g: _Builder, x: str) -> str:
    _need(g.rank(x) is not None)
    attrs = {}
    if g.rng.random() < 0.1 and g.rank(x) >= 2:
        attrs = {"start": 1}
    return g.op("Shape", [x], **attrs)


def core_expand(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None)
    ones = [i for i, d in enumerate(s) if d == 1]
    _need(len(s) <= 4 or bool(ones))
    if ones and (g.rng.random() < 0.6 or len(s) == 5):
        target = [1] * len(s)
        target[g.rng.choice(ones)] = g.rng.choice((2, 3, 4, 8, 16, _rand_dim(g.rng)))
    else:
        target = [g.rng.choice((2, 3, 4, 8))] + [1] * len(s)
    return g.op("Expand", [x, g.i64(target, "shape", "Expand")])


def core_tile(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    reps = [1] * len(s)
    reps[g.rng.randrange(len(s))] = g.rng.choice((2, 3, 4))
    return g.op("Tile", [x, g.i64(reps, "repeats", "Tile")])


def core_pad(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    r = len(s)
    p = g.rng.choice((1, 1, 2, 3))
    pads = [0] * (2 * r)
    spatial = range(2, r) if r >= 3 else range(r - 1, r)
    for i in spatial:
        pads[i] = pads[i + r] = p
    mode = g.rng.choice(("constant", "constant", "reflect", "edge"))
    if mode == "reflect" and not all(isinstance(s[i], int) and s[i] > p for i in spatial):
        mode = "constant"
    ins = [x, g.i64(pads, "pads", "Pad")]
    if mode == "constant" and g.rng.random() < 0.4 and _is_float(g, x):
        ins.append(g.f32(0.0, "constant_value", "Pad"))
    return g.op("Pad", ins, **({"mode": mode} if mode != "constant" or g.rng.random() < 0.3 else {}))


def core_resize(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and 3 <= len(s) <= 5)
    r = len(s)
    attrs: dict = {"mode": g.rng.choice(("nearest", "nearest", "linear", "cubic") if r == 4 else ("nearest", "linear"))}
    if attrs["mode"] == "nearest" and g.rng.random() < 0.5:
        attrs["nearest_mode"] = "floor"
    if g.rng.random() < 0.4:
        attrs["coordinate_transformation_mode"] = g.rng.choice(("asymmetric", "half_pixel", "align_corners",
                                                               "pytorch_half_pixel"))
    roi = "" if g.rng.random() < 0.6 else g.f32([], "roi", "Resize")
    if g.rng.random() < 0.75 or not _known(s[:2]):
        f = g.rng.choice((2.0, 2.0, 0.5, 4.0))
        if f < 1:
            _need(all(not isinstance(d, int) or d >= 2 for d in s[2:]))
        scales = g.f32([1.0, 1.0] + [f] * (r - 2), "scales", "Resize")
        return g.op("Resize", [x, roi, scales], **attrs)
    size = g.rng.choice((14, 28, 56, 64, 112, 224, 256, 320, 640, _rand_dim(g.rng)))
    sizes = g.i64(list(s[:2]) + [size] * (r - 2), "sizes", "Resize")
    return g.op("Resize", [x, roi, "", sizes], **attrs)


def core_cast(g: _Builder, x: str) -> str:
    dt = g.dtype(x)
    if dt == FLOAT:
        to = FLOAT if g.rng.random() < 0.6 or g.left() < 2 else g.rng.choice((FLOAT16, INT64, TensorProto.DOUBLE))
        y = g.op("Cast", [x], to=to)
        if to != FLOAT:
            y = g.op("Cast", [y], to=FLOAT)
        return y
    return g.op("Cast", [x], to=FLOAT)


def core_identity(g: _Builder, x: str) -> str:
    return g.op("Identity", [x])


def core_depth_to_space(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) == 4 and isinstance(s[1], int))
    blocks = [b for b in (2, 4, 3, 8) if s[1] % (b * b) == 0]
    if not blocks:
        x = core_conv(g, x, cout=g.rng.choice((4, 12, 16, 32, 48, 64, 128)), k=g.rng.choice((1, 3)), stride=1,
                      depthwise=False)
        blocks = [b for b in (2, 4) if g.shape(x)[1] % (b * b) == 0]
        _need(bool(blocks))
    attrs: dict = {"blocksize": blocks[0] if g.rng.random() < 0.7 else g.rng.choice(blocks)}
    if g.rng.random() < 0.5:
        attrs["mode"] = g.rng.choice(("DCR", "CRD"))
    return g.op("DepthToSpace", [x], **attrs)


def core_reduce(op: str) -> Core:
    def f(g: _Builder, x: str) -> str:
        s = g.shape(x)
        _need(_is_float(g, x) and s is not None and len(s) >= 1)
        r = len(s)
        if r >= 4 and g.rng.random() < 0.5:
            axes = [2, 3] if g.rng.random() < 0.8 else [-2, -1]
        else:
            axes = [g.rng.choice((-1, r - 1, 1 if r > 1 else 0))]
        keep = g.rng.random() < 0.6
        ins = [x, g.i64(axes, "axes", op)]
        return g.op(op, ins, **({"keepdims": int(keep)} if not keep or g.rng.random() < 0.5 else {}))
    return f


def core_argmax(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 1)
    axis = -1 if g.rng.random() < 0.6 else g.rng.randrange(len(s))
    keep = int(g.rng.random() < 0.4)
    return g.op("ArgMax", [x], axis=axis, keepdims=keep)


def core_topk(g: _Builder, x: str, use_indices: bool = True) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 1)
    axis = len(s) - 1
    d = s[axis]
    kmax = d if isinstance(d, int) else 1
    k = min(kmax, g.rng.choice((1, 5, 10, 100, 3, 50, 300)))
    outs = g.node("TopK", [x, g.i64([k], "K", "TopK")], 2, axis=-1 if g.rng.random() < 0.5 else axis,
                  **({"largest": 1, "sorted": 1} if g.rng.random() < 0.3 else {}))
    values, indices = outs
    if use_indices and g.rng.random() < 0.5 and len(s) == 2 and g.left() >= 3:
        return g.op("Add", [values, g.op("Cast", [indices], to=FLOAT)])
    return values


def core_compare(op: str) -> Core:
    """Compare against a constant, then use the bool mask in a Where (so the main chain stays float)."""
    def f(g: _Builder, x: str) -> str:
        _need(_is_float(g, x))
        thr = g.f32(g.rng.choice((0.0, 0.5, 0.25, 1.0)), "threshold" if op != "Equal" else "const", op)
        mask = g.op(op, [x, thr] if g.rng.random() < 0.8 else [thr, x])
        if g.rng.random() < 0.5:
            return g.op("Where", [mask, x, g.f32(0.0 if g.rng.random() < 0.6 else -1e9, "const", "Where")])
        return g.op("Mul", [x, g.op("Cast", [mask], to=FLOAT)])
    return f


def core_where(g: _Builder, x: str) -> str:
    _need(_is_float(g, x))
    s = g.shape(x)
    if g.rng.random() < 0.5:
        cond = g.op(g.rng.choice(("Greater", "Less", "Equal")), [x, g.f32(0.0, "const", "Greater")])
    else:
        cond = g.input(s, BOOL, g.rng.choice(("mask", "attention_mask", "cond", "valid")))
    fill = g.f32(g.rng.choice((0.0, -1e4, -3.4028235e38, 1.0)), "const", "Where")
    ins = [cond, x, fill] if g.rng.random() < 0.7 else [cond, fill, x]
    return g.op("Where", ins)


def core_einsum(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and 1 <= len(s) <= 4 and isinstance(s[-1], int))
    letters = "bijk"[: len(s) - 1]
    n = g.fit(g.rng.choice((s[-1], 64, 128, 256, _rand_dim(g.rng))), s[-1])
    if g.rng.random() < 0.5:
        w = g.weight([s[-1], n], "weight", "Einsum")
        return g.op("Einsum", [x, w], equation=f"{letters}d,de->{letters}e")
    w = g.weight([n, s[-1]], "weight", "Einsum")
    return g.op("Einsum", [x, w], equation=f"{letters}d,ed->{letters}e")


def core_range(g: _Builder, x: str) -> str:
    """Positions 0..n-1 where n is x's dim (Shape->Gather->Range), added back as a float row."""
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    axis = len(s) - 1
    n = g.op("Gather", [g.op("Shape", [x]), g.i64(axis, "indices", "Gather")])
    pos = g.op("Range", [g.i64(0, "start", "Range"), n, g.i64(1, "delta", "Range")])
    if not _is_float(g, x):
        return pos
    return g.op("Add", [x, g.op("Cast", [pos], to=FLOAT)])


def core_constant_of_shape(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None)
    value = numpy_helper.from_array(np.array([g.rng.choice((0.0, 1.0))], np.float32), "value")
    z = g.op("ConstantOfShape", [g.op("Shape", [x])], value=value)
    return g.op(g.rng.choice(("Add", "Mul", "Max")), [x, z])


def core_scatter_nd(g: _Builder, x: str) -> str:
    s = g.shape(x)
    _need(s is not None and len(s) >= 1)
    d0 = s[0]
    row = g.rng.randrange(d0) if isinstance(d0, int) and d0 > 0 else 0
    idx = g.i64([[row]], "indices", "ScatterND")
    upd = g.op("Slice", [x, g.i64([0], "starts", "Slice"), g.i64([1], "ends", "Slice"), g.i64([0], "axes", "Slice")])
    if _is_float(g, x) and g.rng.random() < 0.6:
        upd = act(g, upd)
    return g.op("ScatterND", [x, idx, upd])


def core_quantize(g: _Builder, x: str, dequant: bool = True) -> str:
    _need(_is_float(g, x))
    zt = UINT8 if g.rng.random() < 0.6 else INT8
    scale = g.f32(g.rng.choice((0.0039215686, 0.02, 0.1, 0.0078125)), "scale", "QuantizeLinear")
    zp = g.const(np.array(128 if zt == UINT8 else 0, dtype=np.uint8 if zt == UINT8 else np.int8), "zero_point",
                 "QuantizeLinear")
    q = g.op("QuantizeLinear", [x, scale, zp])
    if not dequant:
        return q
    if g.rng.random() < 0.6:
        return g.op("DequantizeLinear", [q, scale, zp])
    scale2 = g.f32(0.05, "scale", "DequantizeLinear")
    zp2 = g.const(np.array(0, dtype=np.uint8 if zt == UINT8 else np.int8), "zero_point", "DequantizeLinear")
    return g.op("DequantizeLinear", [q, scale2, zp2])


def core_dequantize(g: _Builder, x: str) -> str:
    """DequantizeLinear of an int8 weight feeding a MatMul/Conv (the QDQ weight pattern), or of x's Q output."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None)
    if len(s) == 4 and isinstance(s[1], int) and g.rng.random() < 0.6:
        cin = s[1]
        cout = g.fit(_channels(g.rng), cin * 9, minimum=1)
        wq = g.weight([cout, cin, 3, 3], "weight", "DequantizeLinear", dtype=INT8)
        sc = g.weight([cout], "scale", "DequantizeLinear")
        zp = g.weight([cout], "zero_point", "DequantizeLinear", dtype=INT8)
        w = g.op("DequantizeLinear", [wq, sc, zp], axis=0)
        return g.op("Conv", [x, w], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    if len(s) >= 1 and isinstance(s[-1], int) and g.rng.random() < 0.6:
        k = s[-1]
        n = g.fit(g.rng.choice((k, 64, 256, 512)), k)
        wq = g.weight([k, n], "weight", "DequantizeLinear", dtype=INT8)
        w = g.op("DequantizeLinear", [wq, g.f32(0.01, "scale", "DequantizeLinear"),
                                      g.const(np.array(0, np.int8), "zero_point", "DequantizeLinear")])
        return g.op("MatMul", [x, w])
    return core_quantize(g, x, dequant=True)


def core_nms(g: _Builder, x: str | None) -> str:
    """NonMaxSuppression on boxes/scores from x shaped [B, n, 4+C] (Split, Transpose), else from fresh inputs."""
    s = None if x is None else g.shape(x)
    rng = g.rng
    if x is not None and _is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int) and s[2] > 4 \
            and g.left() >= 3:
        c = s[2] - 4
        parts = g.node("Split", [x, g.i64([4, c], "split", "Split")], 2, axis=2)
        boxes, cls = parts
        scores = g.op("Transpose", [g.op("Sigmoid", [cls]) if rng.random() < 0.5 else cls], perm=[0, 2, 1])
    else:
        b = _batch_dim(rng)
        n = rng.choice((rng.choice(BOX_SYMBOLS), 100, 1000, 8400, 25200, 3549, rng.randint(10, 20000)))
        c = rng.choice((1, 80, 20, 90, 3, 10))
        boxes = g.input([b, n, 4], FLOAT, rng.choice(("boxes", "bboxes", "proposals")))
        scores = g.input([b, c, n], FLOAT, rng.choice(("scores", "confidences", "cls_scores")))
    ins = [boxes, scores, g.i64([rng.choice((100, 200, 300, 1000, 50))], "max_output_boxes_per_class",
                                "NonMaxSuppression"),
           g.f32([rng.choice((0.45, 0.5, 0.6, 0.7))], "iou_threshold", "NonMaxSuppression"),
           g.f32([rng.choice((0.25, 0.05, 0.001, 0.3))], "score_threshold", "NonMaxSuppression")]
    cut = rng.choice((5, 5, 4, 3))
    attrs = {"center_point_box": 1} if rng.random() < 0.4 else {}
    sel = g.op("NonMaxSuppression", ins[:cut], **attrs)
    if rng.random() < 0.5 and g.left() >= 3:
        # box index column -> gather the kept boxes
        col = g.op("Gather", [sel, g.i64(2, "indices", "Gather")], axis=1)
        flat = g.op("Squeeze", [boxes, g.i64([0], "axes", "Squeeze")]) if g.shape(boxes)[0] == 1 else None
        if flat is not None:
            return g.op("Gather", [flat, col], axis=0)
        return col
    return sel


def _core_lstm(g: _Builder, x: str) -> str:
    return _rnn("LSTM", g, x, full=g.left() >= 3 and g.rng.random() < 0.8)


def _core_gru(g: _Builder, x: str) -> str:
    return _rnn("GRU", g, x, full=g.left() >= 3 and g.rng.random() < 0.8)


CORES: dict[str, Core] = {
    "Conv": core_conv, "ConvTranspose": core_convtranspose, "Gemm": core_gemm, "MatMul": core_matmul,
    "LSTM": _core_lstm, "GRU": _core_gru,
    "Add": core_binary("Add"), "Sub": core_binary("Sub"), "Mul": core_binary("Mul"), "Div": core_binary("Div"),
    "Pow": core_binary("Pow"), "Min": core_minmax("Min"), "Max": core_minmax("Max"),
    "Sqrt": core_unary("Sqrt"), "Exp": core_unary("Exp"), "Log": core_unary("Log"), "Neg": core_unary("Neg"),
    "Abs": core_unary("Abs"), "Erf": core_unary("Erf"), "Clip": core_clip, "Relu": core_unary("Relu"),
    "LeakyRelu": core_unary("LeakyRelu"), "PRelu": core_prelu, "Sigmoid": core_unary("Sigmoid"),
    "Tanh": core_unary("Tanh"), "Softmax": core_softmax("Softmax"), "LogSoftmax": core_softmax("LogSoftmax"),
    "HardSigmoid": core_unary("HardSigmoid"), "HardSwish": core_unary("HardSwish"), "Elu": core_unary("Elu"),
    "Gelu": core_unary("Gelu"), "Softplus": core_unary("Softplus"),
    "BatchNormalization": core_norm("BatchNormalization"), "LayerNormalization": core_norm("LayerNormalization"),
    "InstanceNormalization": core_norm("InstanceNormalization"), "Dropout": core_dropout,
    "MaxPool": core_pool("MaxPool"), "AveragePool": core_pool("AveragePool"),
    "GlobalAveragePool": core_pool("GlobalAveragePool"), "Reshape": core_reshape, "Flatten": core_flatten,
    "Transpose": core_transpose, "Squeeze": core_squeeze, "Unsqueeze": core_unsqueeze, "Concat": core_concat,
    "Split": core_split, "Slice": core_slice, "Gather": core_gather, "Shape": core_shape, "Expand": core_expand,
    "Tile": core_tile, "Pad": core_pad, "Resize": core_resize, "Cast": core_cast, "Identity": core_identity,
    "DepthToSpace": core_depth_to_space, "ReduceMean": core_reduce("ReduceMean"),
    "ReduceSum": core_reduce("ReduceSum"), "ReduceMax": core_reduce("ReduceMax"), "ArgMax": core_argmax,
    "TopK": core_topk, "Where": core_where, "Equal": core_compare("Equal"), "Less": core_compare("Less"),
    "Greater": core_compare("Greater"), "Einsum": core_einsum, "Range": core_range,
    "ConstantOfShape": core_constant_of_shape, "ScatterND": core_scatter_nd, "QuantizeLinear": core_quantize,
    "DequantizeLinear": core_dequantize, "NonMaxSuppression": core_nms,
}


# ---------------------------------------------------------------------------------------------------------------
# Fresh graph inputs, one kind per operator, for when the current tensor does not fit.

IMAGE_OPS = frozenset({"Conv", "ConvTranspose", "BatchNormalization", "InstanceNormalization", "MaxPool",
                       "AveragePool", "GlobalAveragePool", "Resize", "DepthToSpace", "PRelu", "Pad"})
SEQ_OPS = frozenset({"LSTM", "GRU", "LayerNormalization", "Einsum", "MatMul", "Softmax", "LogSoftmax"})
VEC_OPS = frozenset({"Gemm", "ArgMax", "TopK", "Dropout"})


def fresh_image(g: _Builder, channels: int | None = None) -> str:
    rng = g.rng
    c = channels or rng.choice((3, 3, 3, 1, 4, 16, 32, 64, 128, 256, 512, _rand_dim(rng)))
    name = rng.choice(("input", "images", "pixel_values", "x", "input.1", "data", "image", "input_1", "img"))
    return g.input([_batch_dim(rng), c, *_spatial_dims(rng)], FLOAT, name)


def fresh_seq(g: _Builder, batch_first: bool = True) -> str:
    rng = g.rng
    d = rng.choice(HIDDEN) if rng.random() < 0.65 else _rand_dim(rng)
    b, s = _batch_dim(rng), _seq_dim(rng)
    name = rng.choice(("hidden_states", "x", "input", "inputs_embeds", "features", "encoder_out", "src", "input.1"))
    return g.input([b, s, d] if batch_first else [s, b, d], FLOAT, name)


def fresh_vec(g: _Builder) -> str:
    rng = g.rng
    f = rng.choice((4, 10, 13, 16, 64, 128, 256, 512, 784, 1024, 2048, _rand_dim(rng)))
    name = rng.choice(("x", "input", "features", "X", "dense_input", "float_input"))
    return g.input([_batch_dim(rng), f], FLOAT, name)


def fresh_any(g: _Builder) -> str:
    """A float input of random rank 1–5 with random dims (at most ~50M elements over its known dims)."""
    rng = g.rng
    r = rng.choice((1, 2, 3, 3, 4, 4, 5))
    dims: list[Dim] = []
    for i in range(r):
        u = rng.random()
        if u < 0.12:
            dims.append(rng.choice(MISC_SYMBOLS + SEQ_SYMBOLS + BATCH_SYMBOLS))
        elif u < 0.18:
            dims.append(None)
        else:
            d = _rand_dim(rng) if i else rng.choice((1, 1, 2, _rand_dim(rng)))
            known = _numel([x for x in dims if isinstance(x, int)])
            dims.append(d if known * d <= 50_000_000 else rng.choice((1, 2, 3, 4, 7, 16)))
    return g.input(dims, FLOAT, rng.choice(("x", "input", "X", "A", "t", "tensor", "in0", "input.1", "value")))


def fresh_for(g: _Builder, op: str) -> str:
    if op == "DepthToSpace":
        return fresh_image(g, channels=g.rng.choice((4, 12, 16, 32, 64, 128, 256)))
    if op == "Expand":
        return g.input([1, g.rng.choice((1, 64, 256, 768, _rand_dim(g.rng)))], FLOAT)
    if op in IMAGE_OPS:
        return fresh_image(g)
    if op in ("LSTM", "GRU"):
        return fresh_seq(g, batch_first=False)
    if op in SEQ_OPS:
        return fresh_seq(g)
    if op in VEC_OPS:
        return fresh_vec(g)
    return fresh_any(g)


# ---------------------------------------------------------------------------------------------------------------
# Adapters between ranks (themselves realistic: flatten heads, patch embeddings, token pooling).


def to_rank(g: _Builder, x: str, rank: int) -> str:
    """Turn x into a float tensor of the given rank with realistic ops (raises _Reject if no way)."""
    if not _is_float(g, x):
        x = g.op("Cast", [x], to=FLOAT)
    s = g.shape(x)
    _need(s is not None)
    r, rng = len(s), g.rng
    if r == rank:
        return x
    if r >= 3 and rank == 2:
        if r == 4 and rng.random() < 0.7:
            x = g.op("GlobalAveragePool", [x])
            u = rng.random()
            if u < 0.5:
                return g.op("Flatten", [x])
            if u < 0.75:
                return g.op("Squeeze", [x, g.i64([2, 3] if rng.random() < 0.7 else [-1, -2], "axes", "Squeeze")])
            return g.op("Reshape", [x, g.i64([0, -1], "shape", "Reshape")])
        if r == 3 and rng.random() < 0.5:
            return g.op("ReduceMean", [x, g.i64([1], "axes", "ReduceMean")], keepdims=0)
        if r == 3 and rng.random() < 0.5:
            return g.op("Gather", [x, g.i64(0, "indices", "Gather")], axis=1)
        return g.op("Flatten", [x])
    if r == 4 and rank == 3:
        _need(isinstance(s[1], int))
        y = g.op("Reshape", [x, g.i64([0, s[1], -1] if rng.random() < 0.7 else [0, 0, -1], "shape", "Reshape")])
        return g.op("Transpose", [y], perm=[0, 2, 1] if rng.random() < 0.7 else [2, 0, 1])
    if r < rank:
        while r < rank:
            take = min(rank - r, 2)
            axes = list(range(r, r + take)) if rng.random() < 0.7 else [0]
            x = g.op("Unsqueeze", [x, g.i64(axes, "axes", "Unsqueeze")])
            r = g.rank(x)
        return x
    if r == 5 and rank == 4:
        _need(isinstance(s[1], int) and isinstance(s[2], int))
        # fold time into channels: [N, C, T, H, W] -> [N, C*T, H, W]
        hw = [d if isinstance(d, int) else -1 for d in s[3:]]
        _need(hw.count(-1) <= 1)
        return g.op("Reshape", [x, g.i64([0, s[1] * s[2], *hw], "shape", "Reshape")])
    if rank == 1:
        return g.op("Reshape", [x, g.i64([-1], "shape", "Reshape")])
    return g.op("Flatten", [x])


PREF_RANK = {op: 4 for op in IMAGE_OPS}
PREF_RANK.update({"LSTM": 3, "GRU": 3, "LayerNormalization": 3, "Einsum": 3, "MatMul": 3, "Gemm": 2, "TopK": 2,
                  "ArgMax": 2, "Softmax": 2, "LogSoftmax": 2})


# ---------------------------------------------------------------------------------------------------------------
# Motifs: realistic multi-node structures. Each takes the main tensor and returns the new main tensor.

Motif = Callable[[_Builder, str], str]


def m_conv_block(g: _Builder, x: str, cout: int | None = None, stride: int | None = None, k: int | None = None,
                 name: str = "conv", padding: str | None = None) -> str:
    """Conv -> BatchNormalization -> activation (BN and activation sometimes absent)."""
    with g.scope(name):
        bn = g.rng.random() < 0.7
        y = core_conv(g, x, cout=cout, stride=stride, k=k, bias=not bn and g.rng.random() < 0.8, padding=padding)
    if bn:
        with g.scope(name.replace("conv", "bn") if "conv" in name else "bn"):
            y = CORES["BatchNormalization"](g, y)
    if g.rng.random() < 0.85:
        with g.scope(name.replace("conv", "act") if "conv" in name else "act"):
            y = act(g, y)
    return y


def m_res_block(g: _Builder, x: str) -> str:
    """ResNet basic/bottleneck block with an identity or projection shortcut, merged by Add -> Relu."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    rng, c = g.rng, s[1]
    stride = 2 if rng.random() < 0.3 else 1
    cout = c if stride == 1 and rng.random() < 0.7 else g.fit(min(2048, c * 2), c * 9 + 1)
    layer = f"layer{rng.randint(1, 4)}"
    with g.scope(layer, f"{layer}.{rng.randint(0, 5)}"):
        if rng.random() < 0.5:
            y = m_conv_block(g, x, cout=cout, stride=stride, k=3, name="conv1", padding="same")
            y = m_conv_block(g, y, cout=cout, stride=1, k=3, name="conv2", padding="same")
        else:
            mid = max(1, cout // 4)
            y = m_conv_block(g, x, cout=mid, stride=1, k=1, name="conv1")
            y = m_conv_block(g, y, cout=mid, stride=stride, k=3, name="conv2", padding="same")
            y = m_conv_block(g, y, cout=cout, stride=1, k=1, name="conv3")
        short = x
        if stride != 1 or cout != c or g.shape(y) != s:
            with g.scope("downsample"):
                short = core_conv(g, x, cout=cout, k=1, stride=stride, depthwise=False)
                if rng.random() < 0.7:
                    short = CORES["BatchNormalization"](g, short)
        _need(g.shape(short)[1:] == g.shape(y)[1:] or not _known(g.shape(y)[1:]))
        z = g.op("Add", [y, short] if rng.random() < 0.8 else [short, y])
        if rng.random() < 0.8:
            z = g.op("Relu", [z])
    return z


def m_branches(g: _Builder, x: str) -> str:
    """Inception-style parallel branches merged by Concat (or Add when shapes agree)."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    rng = g.rng
    n = rng.choice((2, 2, 3, 4))
    outs = []
    same_c = rng.choice((16, 32, 64, 96, 128, 192, s[1]))
    merge_add = rng.random() < 0.3
    for i in range(n):
        with g.scope(f"branch{i}"):
            kind = rng.random()
            if kind < 0.4:
                y = m_conv_block(g, x, cout=same_c if merge_add else None, stride=1, k=1, name="conv")
            elif kind < 0.75:
                y = m_conv_block(g, x, cout=same_c if merge_add else None, stride=1, k=rng.choice((3, 5)), name="conv",
                                 padding="same")
            else:
                pool = rng.choice(("MaxPool", "AveragePool"))
                y = g.op(pool, [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
                if rng.random() < 0.7 or merge_add:
                    y = core_conv(g, y, cout=same_c if merge_add else None, k=1, stride=1, depthwise=False)
        outs.append(y)
    if merge_add:
        z = outs[0]
        for o in outs[1:]:
            z = g.op("Add", [z, o])
        return z
    return g.op("Concat", outs, axis=1)


def m_se_block(g: _Builder, x: str) -> str:
    """Squeeze-and-excitation: GAP -> 1x1 Conv -> Relu -> 1x1 Conv -> Sigmoid -> Mul."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int) and s[1] >= 4)
    rng, c = g.rng, s[1]
    with g.scope("se"):
        p = g.op("GlobalAveragePool", [x]) if rng.random() < 0.7 else \
            g.op("ReduceMean", [x, g.i64([2, 3], "axes", "ReduceMean")], keepdims=1)
        with g.scope("fc1"):
            h = core_conv(g, p, cout=max(1, c // rng.choice((4, 8, 16))), k=1, stride=1, depthwise=False, bias=True)
        h = g.op(rng.choice(("Relu", "Relu", "HardSwish")), [h])
        with g.scope("fc2"):
            h = core_conv(g, h, cout=c, k=1, stride=1, depthwise=False, bias=True)
        h = g.op(rng.choice(("Sigmoid", "Sigmoid", "HardSigmoid")), [h])
        return g.op("Mul", [x, h] if rng.random() < 0.7 else [h, x])


def m_stem(g: _Builder, x: str) -> str:
    """Conv 7x7/2 -> BN -> Relu -> MaxPool 3x3/2."""
    y = m_conv_block(g, x, cout=g.rng.choice((32, 64, 64, 24, 16)), stride=2, k=g.rng.choice((7, 3)), name="conv1")
    return g.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


def m_gap_squeeze(g: _Builder, x: str) -> str:
    """Global pooling to [N, C, 1, 1] then Squeeze of the unit dims (or Squeeze of an existing unit dim)."""
    s = g.shape(x)
    _need(s is not None and len(s) >= 2)
    if 1 not in s[1:]:
        _need(len(s) in (3, 4, 5) and _is_float(g, x))
        x = g.op("GlobalAveragePool", [x]) if g.rng.random() < 0.6 else \
            g.op(g.rng.choice(("ReduceMean", "ReduceMax")), [x, g.i64(list(range(2, len(s))), "axes", "ReduceMean")])
    return core_squeeze(g, x)


def m_pool(g: _Builder, x: str) -> str:
    return CORES[g.rng.choice(("MaxPool", "MaxPool", "AveragePool"))](g, x)


def m_upsample_merge(g: _Builder, x: str) -> str:
    """FPN / U-Net step: down Conv/2, work, Resize x2 (or ConvTranspose), merge with x by Add or Concat."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and _known(s[1:]) and s[2] % 2 == 0 and s[3] % 2 == 0
          and s[2] >= 4 and s[3] >= 4)
    rng, c = g.rng, s[1]
    with g.scope("down"):
        d = m_conv_block(g, x, cout=c, stride=2, k=3, name="conv", padding="same")
    with g.scope("up"):
        if rng.random() < 0.7:
            u = g.op("Resize", [d, "", g.f32([1.0, 1.0, 2.0, 2.0], "scales", "Resize")],
                     mode=rng.choice(("nearest", "linear")))
        else:
            u = g.op("ConvTranspose", [d, g.weight([c, c, 2, 2], "weight", "ConvTranspose")], kernel_shape=[2, 2],
                     strides=[2, 2])
    if rng.random() < 0.5:
        return g.op("Add", [x, u])
    return g.op("Concat", [u, x], axis=1)


def m_detect_head(g: _Builder, x: str) -> str:
    """YOLO-style head: per-scale 1x1 Conv -> Reshape [B, 4+C, -1], Concat scales, Transpose, Sigmoid/NMS."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    rng = g.rng
    ncls = rng.choice((80, 1, 20, 3, 10))
    feats = [x]
    for _ in range(rng.choice((1, 2, 2, 3)) - 1):
        feats.append(g.op("MaxPool", [feats[-1]], kernel_shape=[2, 2], strides=[2, 2]))
    outs = []
    for i, f in enumerate(feats):
        with g.scope("head", f"cv{i}"):
            y = core_conv(g, f, cout=4 + ncls, k=1, stride=1, depthwise=False, bias=True)
            outs.append(g.op("Reshape", [y, g.i64([0, 4 + ncls, -1], "shape", "Reshape")]))
    z = outs[0] if len(outs) == 1 else g.op("Concat", outs, axis=2)
    z = g.op("Transpose", [z], perm=[0, 2, 1])
    if rng.random() < 0.6 and g.left() >= 8:
        return core_nms(g, z)
    return z


def m_head(g: _Builder, x: str) -> str:
    """Classifier head: (pool/flatten to 2-D) -> [Dropout] -> Gemm -> [act -> Gemm] -> [Softmax]."""
    rng = g.rng
    with g.scope("classifier" if rng.random() < 0.5 else "head"):
        if g.rank(x) != 2:
            x = to_rank(g, x, 2)
        if rng.random() < 0.3:
            x = core_dropout(g, x)
        if rng.random() < 0.3:
            x = act(g, core_gemm(g, x, n=rng.choice((128, 256, 512, 1024, 4096))))
        y = core_gemm(g, x, n=rng.choice((1000, 10, 2, 100, 1, _rand_dim(rng))))
        r = rng.random()
        if r < 0.3:
            y = g.op("Softmax", [y], axis=1 if rng.random() < 0.5 else -1)
        elif r < 0.4:
            y = g.op("LogSoftmax", [y], axis=1)
        elif r < 0.5:
            y = g.op("Sigmoid", [y])
        return y


def m_patch_embed(g: _Builder, x: str) -> str:
    """ViT patch embedding: Conv k=s=p -> Reshape/Flatten -> Transpose to [B, N, D]."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    p = g.rng.choice((16, 14, 8, 4, 32))
    for d in s[2:]:
        if isinstance(d, int) and d < p:
            p = 1
    d_model = g.fit(g.rng.choice(HIDDEN), s[1] * p * p, minimum=8)
    with g.scope("patch_embed", "proj"):
        y = g.op("Conv", [x, g.weight([d_model, s[1], p, p], "weight", "Conv"), g.weight([d_model], "bias", "Conv")],
                 kernel_shape=[p, p], strides=[p, p])
    if g.rng.random() < 0.3:
        y = g.op("Flatten", [g.op("Transpose", [y], perm=[0, 2, 3, 1])], axis=1)  # NHWC flatten, then un-flatten
        y = g.op("Reshape", [y, g.i64([0, -1, d_model], "shape", "Reshape")])
        return y
    y = g.op("Reshape", [y, g.i64([0, d_model, -1] if g.rng.random() < 0.5 else [0, 0, -1], "shape", "Reshape")])
    return g.op("Transpose", [y], perm=[0, 2, 1])


def m_attention(g: _Builder, x: str) -> str:
    """Multi-head self-attention on [B, S, D]: Q/K/V projections, Reshape+Transpose to heads, scaled MatMul,
    Softmax, MatMul, Transpose+Reshape back, output projection, residual Add."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int))
    rng, d = g.rng, s[2]
    heads = [h for h in (1, 2, 4, 6, 8, 12, 16) if d % h == 0 and d // h >= 4]
    _need(bool(heads))
    h = rng.choice(heads)
    hd = d // h
    _need(g.room(d) >= 4 * d + 8)
    fused = rng.random() < 0.3
    with g.scope("attention" if rng.random() < 0.5 else "attn"):
        if fused:
            with g.scope("qkv"):
                qkv = core_matmul(g, x, n=3 * d, bias=rng.random() < 0.7)
            q, k, v = g.node("Split", [qkv, g.i64([d, d, d], "split", "Split")], 3, axis=-1)
        else:
            q, k, v = [], [], []
            res = []
            for nm in ("query", "key", "value"):
                with g.scope(nm):
                    res.append(core_matmul(g, x, n=d, bias=rng.random() < 0.7))
            q, k, v = res

        def heads_of(t: str, perm: list[int]) -> str:
            t = g.op("Reshape", [t, g.i64([0, 0, h, hd] if rng.random() < 0.8 else [0, -1, h, hd], "shape",
                                          "Reshape")])
            return g.op("Transpose", [t], perm=perm)

        qh = heads_of(q, [0, 2, 1, 3])
        kh = heads_of(k, [0, 2, 3, 1])
        vh = heads_of(v, [0, 2, 1, 3])
        scale = math.sqrt(hd)
        if rng.random() < 0.2:
            sc = g.op("Einsum", [qh, g.op("Transpose", [kh], perm=[0, 1, 3, 2])], equation="bhqd,bhkd->bhqk")
        else:
            sc = g.op("MatMul", [qh, kh])
        sc = g.op("Div", [sc, g.f32(scale, "const", "Div")]) if rng.random() < 0.6 else \
            g.op("Mul", [sc, g.f32(1.0 / scale, "const", "Mul")])
        u = rng.random()
        if u < 0.2:
            sc = g.op("Add", [sc, _attention_mask(g, s)])
        elif u < 0.35:
            sc = _causal_mask(g, sc)
        p = g.op("Softmax", [sc], axis=-1)
        if rng.random() < 0.2:
            p = core_dropout(g, p)
        o = g.op("MatMul", [p, vh])
        o = g.op("Transpose", [o], perm=[0, 2, 1, 3])
        o = g.op("Reshape", [o, g.i64([0, 0, d] if rng.random() < 0.6 else [0, -1, d], "shape", "Reshape")])
        with g.scope("output", "dense"):
            o = core_matmul(g, o, n=d, bias=rng.random() < 0.7)
        if rng.random() < 0.8:
            o = g.op("Add", [o, x] if rng.random() < 0.5 else [x, o])
        return o


def _causal_mask(g: _Builder, scores: str) -> str:
    """Causal masking of [B, h, S, S] scores: Range over S, Unsqueeze both ways, Less/Greater, Where(-inf)."""
    rng = g.rng
    with g.scope("causal_mask"):
        n = g.op("Gather", [g.op("Shape", [scores]), g.i64(-1, "indices", "Gather")], axis=0)
        pos = g.op("Range", [g.i64(0, "start", "Range"), n, g.i64(1, "delta", "Range")])
        row = g.op("Unsqueeze", [pos, g.i64([0], "axes", "Unsqueeze")])
        col = g.op("Unsqueeze", [pos, g.i64([1], "axes", "Unsqueeze")])
        if rng.random() < 0.5:
            future = g.op("Greater", [row, col])
        else:
            future = g.op("Less", [col, row])
        neg = g.f32(-3.4028235e38 if rng.random() < 0.5 else -10000.0, "const", "Where")
        return g.op("Where", [future, neg, scores])


def _attention_mask(g: _Builder, s: Shape) -> str:
    """Extended attention mask [B, 1, 1, S] from an int64 input: (1 - mask) * -10000."""
    rng = g.rng
    m = g.input([s[0], s[1]], INT64 if rng.random() < 0.7 else FLOAT, "attention_mask")
    with g.scope("mask"):
        m = g.op("Unsqueeze", [m, g.i64([1, 2], "axes", "Unsqueeze")])
        if g.dtype(m) == INT64 and rng.random() < 0.4:
            pad = g.op("Equal", [m, g.i64(0, "const", "Equal")])
            return g.op("Where", [pad, g.f32(-10000.0, "const", "Where"), g.f32(0.0, "const", "Where")])
        if g.dtype(m) != FLOAT:
            m = g.op("Cast", [m], to=FLOAT)
        m = g.op("Sub", [g.f32(1.0, "const", "Sub"), m])
        return g.op("Mul", [m, g.f32(-10000.0 if rng.random() < 0.6 else -3.4028235e38, "const", "Mul")])


def m_layernorm(g: _Builder, x: str) -> str:
    """LayerNormalization, or the decomposed form older exporters emit (ReduceMean, Sub, Pow, Sqrt, Div, ...)."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 2 and isinstance(s[-1], int))
    with g.scope("LayerNorm" if g.rng.random() < 0.5 else "ln"):
        if g.rng.random() < 0.6:
            return CORES["LayerNormalization"](g, x)
        mean = g.op("ReduceMean", [x, g.i64([-1], "axes", "ReduceMean")])
        c = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [c, g.f32(2.0, "const", "Pow")]), g.i64([-1], "axes", "ReduceMean")])
        std = g.op("Sqrt", [g.op("Add", [var, g.f32(1e-5, "const", "Add")])])
        y = g.op("Div", [c, std])
        y = g.op("Mul", [y, g.weight([s[-1]], "weight", "Mul")])
        return g.op("Add", [y, g.weight([s[-1]], "bias", "Add")])


def _gelu(g: _Builder, x: str) -> str:
    r = g.rng.random()
    if r < 0.4:
        return g.op("Gelu", [x])
    if r < 0.8:  # erf form: x * 0.5 * (1 + erf(x / sqrt(2)))
        e = g.op("Erf", [g.op("Div", [x, g.f32(1.4142135, "const", "Div")])])
        e = g.op("Add", [e, g.f32(1.0, "const", "Add")])
        return g.op("Mul", [g.op("Mul", [x, e]), g.f32(0.5, "const", "Mul")])
    return act(g, x)


def m_mlp(g: _Builder, x: str) -> str:
    """Transformer FFN: MatMul+Add -> GELU -> MatMul+Add, with residual Add."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 2 and isinstance(s[-1], int))
    rng, d = g.rng, s[-1]
    hidden = g.fit(d * rng.choice((4, 4, 2, 3)), 2 * d, minimum=1)
    with g.scope("mlp" if rng.random() < 0.5 else "intermediate"):
        with g.scope("fc1"):
            h = core_matmul(g, x, n=hidden, bias=rng.random() < 0.8)
        h = _gelu(g, h)
        if rng.random() < 0.15:
            h = core_dropout(g, h)
        with g.scope("fc2"):
            y = core_matmul(g, h, n=d, bias=rng.random() < 0.8)
        if rng.random() < 0.8:
            y = g.op("Add", [y, x] if rng.random() < 0.5 else [x, y])
    return y


def m_transformer_layer(g: _Builder, x: str) -> str:
    i = g.rng.randint(0, 11)
    stack = "encoder" if g.rng.random() < 0.6 else "decoder"
    with g.scope(stack, f"layer.{i}" if g.rng.random() < 0.5 else f"layers.{i}"):
        pre = g.rng.random() < 0.5
        y = m_layernorm(g, x) if pre else x
        y = m_attention(g, y)
        if not pre:
            y = m_layernorm(g, y)
        z = m_layernorm(g, y) if pre else y
        z = m_mlp(g, z)
        if not pre:
            z = m_layernorm(g, z)
        return z


def m_linear_act(g: _Builder, x: str) -> str:
    s = g.shape(x)
    if s is not None and len(s) == 2 and g.rng.random() < 0.7:
        with g.scope(f"fc{g.rng.randint(1, 4)}"):
            y = core_gemm(g, x)
    else:
        with g.scope(f"linear{g.rng.randint(1, 4)}" if g.rng.random() < 0.5 else "dense"):
            y = core_matmul(g, x, bias=g.rng.random() < 0.8)
    return act(g, y)


def m_rnn(g: _Builder, x: str) -> str:
    """LSTM/GRU layer(s) on [S, B, F] (or after a Transpose from batch-first)."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int))
    rng = g.rng
    if rng.random() < 0.3:
        x = g.op("Transpose", [x], perm=[1, 0, 2])
    op = rng.choice(("LSTM", "GRU"))
    with g.scope(op.lower()):
        y = _rnn(op, g, x, full=True)
        if rng.random() < 0.3:
            y = _rnn(op, g, y, full=True)
    return y


def m_shape_reshape(g: _Builder, x: str) -> str:
    """Dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat(with constants) -> Reshape (flatten or split)."""
    s = g.shape(x)
    _need(s is not None and len(s) >= 2)
    rng = g.rng
    sh = g.op("Shape", [x])
    b = g.op("Gather", [sh, g.i64(0, "indices", "Gather")], axis=0)
    bu = g.op("Unsqueeze", [b, g.i64([0], "axes", "Unsqueeze")])
    parts = [bu]
    if len(s) >= 3 and rng.random() < 0.5 and isinstance(s[-1], int):
        # keep dim 1 too: [B, S, -1] or split last dim into heads
        d1 = g.op("Unsqueeze", [g.op("Gather", [sh, g.i64(1, "indices", "Gather")], axis=0),
                                g.i64([0], "axes", "Unsqueeze")])
        parts.append(d1)
        heads = [h for h in (2, 4, 8, 12) if s[-1] % h == 0]
        if heads and len(s) == 3 and rng.random() < 0.6:
            hh = rng.choice(heads)
            parts.append(g.i64([hh, s[-1] // hh], "const", "Concat"))
        else:
            parts.append(g.i64([-1], "const", "Concat"))
    else:
        parts.append(g.i64([-1], "const", "Concat"))
    target = g.op("Concat", parts, axis=0)
    y = g.op("Reshape", [x, target])
    return y


def m_qdq(g: _Builder, x: str) -> str:
    """QuantizeLinear -> DequantizeLinear around a Conv/MatMul with a DQ weight (QDQ-format model)."""
    rng = g.rng
    y = core_quantize(g, x, dequant=True)
    if rng.random() < 0.6:
        y = core_dequantize(g, y)
    return y


def m_elementwise(g: _Builder, x: str) -> str:
    """A short chain of elementwise ops (unary and broadcast binary)."""
    _need(_is_float(g, x))
    pool = ("Add", "Mul", "Sub", "Div", "Sigmoid", "Tanh", "Relu", "Exp", "Log", "Sqrt", "Abs", "Neg", "Clip", "Pow",
            "Max", "Min", "Erf", "Softplus", "Elu", "HardSwish", "HardSigmoid", "LeakyRelu", "Identity", "Gelu")
    y = x
    for _ in range(g.rng.randint(1, 3)):
        y = CORES[g.rng.choice(pool)](g, y)
    if g.rng.random() < 0.3 and g.shape(y) == g.shape(x):
        y = g.op(g.rng.choice(("Add", "Mul", "Sub")), [x, y])  # swish-like or residual
    return y


def m_swish(g: _Builder, x: str) -> str:
    _need(_is_float(g, x))
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def m_split_heads(g: _Builder, x: str) -> str:
    return core_split(g, x, merge=True)


def m_embedding(g: _Builder, x: str) -> str:
    """Position embedding added to [B, S, D]: Range over S -> Gather from a table -> Add."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int))
    d = s[2]
    if isinstance(s[1], int):
        n = g.fit(max(s[1], g.rng.choice((512, 1024, 77, 197, 2048))), d, minimum=s[1])
    else:
        n = g.fit(g.rng.choice((512, 1024, 2048, 4096)), d, minimum=16)
    with g.scope("embeddings", "position_embeddings"):
        seq = g.op("Gather", [g.op("Shape", [x]), g.i64(1, "indices", "Gather")], axis=0)
        pos = g.op("Range", [g.i64(0, "start", "Range"), seq, g.i64(1, "delta", "Range")])
        pos = g.op("Unsqueeze", [pos, g.i64([0], "axes", "Unsqueeze")])
        e = g.op("Gather", [g.weight([n, d], "weight", "Gather"), pos])
    return g.op("Add", [x, e])


def m_focus(g: _Builder, x: str) -> str:
    """YOLOv5 Focus: four strided Slices of the image, Concat on channels, Conv."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    _need(all(isinstance(d, int) and d >= 2 for d in s[2:]))
    big = 2 ** 63 - 1
    parts = []
    with g.scope("model.0"):
        for oy, ox in ((0, 0), (1, 0), (0, 1), (1, 1)):
            parts.append(g.op("Slice", [x, g.i64([oy, ox], "starts", "Slice"), g.i64([big, big], "ends", "Slice"),
                                        g.i64([2, 3], "axes", "Slice"), g.i64([2, 2], "steps", "Slice")]))
        y = g.op("Concat", parts, axis=1)
        if g.left() >= 3:
            y = m_conv_block(g, y, k=3, stride=1, name="conv", padding="same")
    return y


def m_sr_tail(g: _Builder, x: str) -> str:
    """Super-resolution / pixel-shuffle tail: Conv to r*r*C channels, DepthToSpace, optional Clip/Sigmoid."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    r = g.rng.choice((2, 2, 3, 4))
    c = g.rng.choice((3, 1, 3, 16, 32, 64))
    with g.scope("upsampler" if g.rng.random() < 0.5 else "tail"):
        y = core_conv(g, x, cout=r * r * c, k=3, stride=1, depthwise=False)
        y = g.op("DepthToSpace", [y], blocksize=r, **({"mode": "CRD"} if g.rng.random() < 0.5 else {}))
        if g.rng.random() < 0.4:
            y = g.op("Clip", [y, g.f32(0.0, "min", "Clip"), g.f32(1.0, "max", "Clip")])
    return y


def m_style_block(g: _Builder, x: str) -> str:
    """Style-transfer / GAN block: reflect Pad -> Conv (no padding) -> InstanceNormalization -> Relu [+ residual]."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 4 and isinstance(s[1], int))
    _need(all(not isinstance(d, int) or d > 4 for d in s[2:]))
    rng = g.rng
    k = rng.choice((3, 3, 7, 9))
    p = k // 2
    mode = "reflect" if all(isinstance(d, int) and d > p for d in s[2:]) and rng.random() < 0.7 else "constant"
    cout = s[1] if rng.random() < 0.6 else None
    with g.scope(f"res{rng.randint(1, 5)}" if cout else f"conv{rng.randint(1, 3)}"):
        y = g.op("Pad", [x, g.i64([0, 0, p, p, 0, 0, p, p], "pads", "Pad")], mode=mode)
        y = core_conv(g, y, cout=cout, k=k, stride=1, depthwise=False, padding="valid")
        y = CORES["InstanceNormalization"](g, y) if rng.random() < 0.8 else CORES["BatchNormalization"](g, y)
        y = act(g, y, "Relu" if rng.random() < 0.6 else None)
        if cout == s[1] and rng.random() < 0.5 and g.shape(y) == s:
            y = g.op("Add", [x, y])
    return y


def m_cls_token(g: _Builder, x: str) -> str:
    """ViT class token: Expand (or Tile) a [1, 1, D] parameter to the batch, Concat in front of the tokens."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) == 3 and isinstance(s[2], int))
    rng = g.rng
    with g.scope("cls_token" if rng.random() < 0.5 else "embeddings"):
        cls = g.weight([1, 1, s[2]], "cls_token", "Expand")
        b = g.op("Unsqueeze", [g.op("Gather", [g.op("Shape", [x]), g.i64(0, "indices", "Gather")], axis=0),
                               g.i64([0], "axes", "Unsqueeze")])
        if rng.random() < 0.6:
            rest = [1, s[2]] if rng.random() < 0.5 else [1, 1]  # 1 broadcasts to the parameter's dim
            shape = g.op("Concat", [b, g.i64(rest, "const", "Concat")], axis=0)
            tok = g.op("Expand", [cls, shape])
        else:
            reps = g.op("Concat", [b, g.i64([1, 1], "const", "Concat")], axis=0)
            tok = g.op("Tile", [cls, reps])
        return g.op("Concat", [tok, x], axis=1)


def m_postprocess(g: _Builder, x: str) -> str:
    """Classifier post-processing on [N, K]: ArgMax, TopK, or ReduceMax (+ the scores kept as an output)."""
    s = g.shape(x)
    _need(_is_float(g, x) and s is not None and len(s) >= 2 and isinstance(s[-1], int) and s[-1] >= 2)
    rng = g.rng
    u = rng.random()
    with g.scope("postprocess" if rng.random() < 0.5 else "predict"):
        if u < 0.35:
            return g.op("ArgMax", [x], axis=-1 if rng.random() < 0.5 else len(s) - 1, keepdims=int(rng.random() < 0.3))
        if u < 0.7:
            k = min(s[-1], rng.choice((5, 1, 10, 3)))
            vals, idx = g.node("TopK", [x, g.i64([k], "K", "TopK")], 2, axis=-1)
            return vals if rng.random() < 0.5 else idx
        m = g.op("ReduceMax", [x, g.i64([-1], "axes", "ReduceMax")], keepdims=0)
        if rng.random() < 0.5 and g.left() >= 2:
            return g.op("Sigmoid", [m])
        return m


# (motif, weight) per rank of the main tensor
MOTIFS: dict[int, list[tuple[Motif, float]]] = {
    4: [(m_conv_block, 4.0), (m_res_block, 2.5), (m_branches, 1.0), (m_se_block, 0.8), (m_pool, 1.2),
        (m_upsample_merge, 0.6), (m_head, 0.8), (m_patch_embed, 0.3), (m_detect_head, 0.4), (m_elementwise, 0.6),
        (m_shape_reshape, 0.3), (m_qdq, 0.3), (m_swish, 0.3), (m_split_heads, 0.2), (m_focus, 0.15),
        (m_sr_tail, 0.15), (m_style_block, 0.3), (m_gap_squeeze, 0.2)],
    3: [(m_attention, 1.5), (m_transformer_layer, 0.8), (m_mlp, 1.2), (m_layernorm, 1.0), (m_rnn, 1.2),
        (m_linear_act, 1.0), (m_elementwise, 0.6), (m_shape_reshape, 0.4), (m_qdq, 0.2), (m_embedding, 0.3),
        (m_head, 0.3), (m_split_heads, 0.2), (m_cls_token, 0.2), (m_postprocess, 0.1)],
    2: [(m_head, 1.0), (m_linear_act, 1.2), (m_elementwise, 0.8), (m_shape_reshape, 0.2), (m_qdq, 0.2),
        (m_split_heads, 0.2), (m_postprocess, 0.4), (m_layernorm, 0.2)],
    1: [(m_elementwise, 1.0)],
    5: [(m_conv_block, 2.0), (m_pool, 0.8), (m_elementwise, 0.6), (m_head, 0.4), (m_style_block, 0.2)],
}


# ---------------------------------------------------------------------------------------------------------------
# One-node fallbacks for showcase operators when only one node of budget is left.


def _min_range(g: _Builder) -> str:
    limit = g.input([], INT64, g.rng.choice(("n", "length", "seq_len", "limit"))) if g.rng.random() < 0.8 else \
        g.i64(g.rng.choice((16, 128, 512, 77)), "limit", "Range")
    return g.op("Range", [g.i64(0, "start", "Range"), limit, g.i64(1, "delta", "Range")])


def _min_constant_of_shape(g: _Builder) -> str:
    if g.rng.random() < 0.8:
        shape = g.input([g.rng.choice((2, 3, 4))], INT64, "shape")
    else:
        shape = g.i64([g.rng.choice((1, 2, 8)), _rand_dim(g.rng), _rand_dim(g.rng)], "shape", "ConstantOfShape")
    value = numpy_helper.from_array(np.array([0.0], np.float32), "value")
    return g.op("ConstantOfShape", [shape], value=value)


def _min_scatter_nd(g: _Builder) -> str:
    rows, d = g.rng.choice((8, 16, 100, 1024)), g.rng.choice((4, 64, 256, 7))
    data = g.input([rows, d], FLOAT, "data")
    upd = g.input([1, d], FLOAT, "updates")
    return g.op("ScatterND", [data, g.i64([[g.rng.randrange(rows)]], "indices", "ScatterND"), upd])


def _min_dequantize(g: _Builder) -> str:
    dims = [_batch_dim(g.rng), g.rng.choice((3, 64, 256)), *_spatial_dims(g.rng)]
    q = g.input(dims, UINT8, g.rng.choice(("input_quant", "x_q", "input")))
    return g.op("DequantizeLinear", [q, g.f32(0.0078125, "scale", "DequantizeLinear"),
                                     g.const(np.array(128, np.uint8), "zero_point", "DequantizeLinear")])


def _min_squeeze(g: _Builder) -> str:
    x = g.input([_batch_dim(g.rng), 1, g.rng.choice((10, 128, 768, _rand_dim(g.rng)))], FLOAT)
    return g.op("Squeeze", [x, g.i64([1], "axes", "Squeeze")])


def _min_compare(op: str) -> Callable[[_Builder], str]:
    def f(g: _Builder) -> str:
        return g.op(op, [fresh_any(g), g.f32(0.5, "threshold", op)])
    return f


def _min_split(g: _Builder) -> str:
    x = g.input([_batch_dim(g.rng), g.rng.choice((6, 64, 85, 128, 255, 256, 768, 2304))], FLOAT)
    return core_split(g, x, merge=False)


def _min_topk(g: _Builder) -> str:
    return core_topk(g, fresh_vec(g), use_indices=False)


def _min_cast(g: _Builder) -> str:
    x = fresh_any(g)
    return g.op("Cast", [x], to=g.rng.choice((FLOAT16, INT64, INT8, TensorProto.DOUBLE, TensorProto.INT32)))


def _min_where(g: _Builder) -> str:
    x = fresh_any(g)
    cond = g.input(g.shape(x), BOOL, "mask")
    return g.op("Where", [cond, x, g.f32(0.0, "const", "Where")])


def _min_quantize(g: _Builder) -> str:
    return core_quantize(g, fresh_any(g), dequant=False)


def _min_rnn(op: str) -> Callable[[_Builder], str]:
    def f(g: _Builder) -> str:
        return _rnn(op, g, fresh_seq(g, batch_first=False), full=False)
    return f


MINIMAL: dict[str, Callable[[_Builder], str]] = {
    "Range": _min_range, "ConstantOfShape": _min_constant_of_shape, "ScatterND": _min_scatter_nd,
    "DequantizeLinear": _min_dequantize, "Squeeze": _min_squeeze, "Equal": _min_compare("Equal"),
    "Less": _min_compare("Less"), "Greater": _min_compare("Greater"), "Split": _min_split, "TopK": _min_topk,
    "Cast": _min_cast, "Where": _min_where, "QuantizeLinear": _min_quantize, "LSTM": _min_rnn("LSTM"),
    "GRU": _min_rnn("GRU"), "NonMaxSuppression": lambda g: core_nms(g, None),
}

# Richer wrappers for showcase operators that read better inside their usual context.
SHOWCASE_MOTIFS: dict[str, list[Motif]] = {
    "Shape": [m_shape_reshape], "Squeeze": [m_gap_squeeze], "Unsqueeze": [m_shape_reshape], "Gather": [m_shape_reshape],
    "Softmax": [m_attention], "NonMaxSuppression": [m_detect_head], "LSTM": [m_rnn], "GRU": [m_rnn],
    "BatchNormalization": [m_conv_block], "GlobalAveragePool": [m_se_block, m_head], "Gemm": [m_head],
    "Erf": [m_mlp], "Pow": [m_layernorm], "Sqrt": [m_layernorm], "ReduceMean": [m_layernorm],
    "Range": [m_embedding], "QuantizeLinear": [m_qdq], "Resize": [m_upsample_merge], "Add": [m_res_block],
}


def _place_showcase(g: _Builder, x: str | None, op: str) -> str | None:
    """Adds a motif guaranteed to contain `op`; returns the new main tensor (x itself if the op went into a
    separate branch on a fresh graph input)."""
    before = g.op_counts.get(op, 0)
    attempts: list[Callable[[], str | None]] = []
    rng = g.rng
    if x is not None:
        wrappers = SHOWCASE_MOTIFS.get(op, [])
        if wrappers and rng.random() < 0.5:
            attempts.append(lambda: rng.choice(wrappers)(g, x))
        attempts.append(lambda: CORES[op](g, x))
        if op in PREF_RANK:
            attempts.append(lambda: CORES[op](g, to_rank(g, x, PREF_RANK[op])))
    for _ in range(3):
        attempts.append(lambda: (CORES[op](g, fresh_for(g, op)), x)[1])
    if op in MINIMAL:
        attempts.append(lambda: (MINIMAL[op](g), x)[1])
    for attempt in attempts:
        mark = g.mark()
        try:
            y = attempt()
        except _Reject:
            g.rollback(mark)
            continue
        if g.op_counts.get(op, 0) > before:
            return y
        g.rollback(mark)
    raise RuntimeError(f"graphgen: cannot place showcase operator {op}")


# ---------------------------------------------------------------------------------------------------------------
# Families: how a graph starts, and which motifs it favours.


def start_vision(g: _Builder) -> str:
    x = fresh_image(g, channels=3 if g.rng.random() < 0.8 else None)
    if g.rng.random() < 0.4:
        mark = g.mark()
        try:
            x = m_stem(g, x)
        except _Reject:
            g.rollback(mark)
    return x


def start_transformer(g: _Builder) -> str:
    rng = g.rng
    if rng.random() < 0.45:
        name = rng.choice(("input_ids", "tokens", "input", "src_tokens"))
        ids = g.input([_batch_dim(rng), _seq_dim(rng)], INT64, name)
        d = rng.choice((64, 128, 256, 384, 512, 768))
        vocab = g.fit(rng.choice((30522, 50257, 32000, 1000, 8000, 250002)), d, minimum=64)
        mark = g.mark()
        try:
            with g.scope("embeddings", "word_embeddings"):
                return g.op("Gather", [g.weight([vocab, d], "weight", "Gather"), ids])
        except _Reject:
            g.rollback(mark)
    return fresh_seq(g)


def start_recurrent(g: _Builder) -> str:
    return fresh_seq(g, batch_first=g.rng.random() < 0.3)


def start_video(g: _Builder) -> str:
    rng = g.rng
    return g.input([_batch_dim(rng), 3, rng.choice((8, 16, 32, 4)), *_spatial_dims(rng)], FLOAT,
                   rng.choice(("video", "input", "clip", "x")))


FAMILIES: list[tuple[Callable[[_Builder], str], float]] = [
    (start_vision, 4.0), (start_transformer, 2.5), (start_recurrent, 1.0), (fresh_vec, 1.0), (start_video, 0.4),
    (fresh_any, 1.0),
]


# Operators the motifs already produce in many graphs are drawn less often as showcases (class balance; tiers
# from `python -m datagen.graphgen --stats 2000`).
_FREQUENT = ("Conv", "Relu", "Add", "BatchNormalization", "MatMul", "Gemm", "Concat", "Mul", "Reshape", "Sigmoid",
             "Gather", "MaxPool", "Unsqueeze", "Shape", "Transpose")
_COMMON = ("Gelu", "Tanh", "HardSigmoid", "Softplus", "Clip", "Elu", "LeakyRelu", "HardSwish", "Dropout", "Sub",
           "Squeeze", "DequantizeLinear", "Div", "PRelu", "Softmax", "QuantizeLinear", "Neg", "LayerNormalization",
           "Identity", "Abs", "Cast", "Split", "Where")
_MID = ("Pow", "Sqrt", "Erf", "ReduceMean", "GRU", "LSTM", "AveragePool", "GlobalAveragePool", "Max", "Min", "Exp",
        "Log", "Flatten", "Slice", "Range", "ReduceMax", "TopK", "ArgMax", "LogSoftmax")
SHOWCASE_WEIGHTS: tuple[tuple[str, float], ...] = tuple(
    (op, 0.1 if op in _FREQUENT else 0.4 if op in _COMMON else 0.7 if op in _MID else 1.0) for op in OPS)


def _draw_showcases(rng: random.Random, k: int) -> list[str]:
    """k distinct operators, weighted by SHOWCASE_WEIGHTS."""
    pool = list(SHOWCASE_WEIGHTS)
    out: list[str] = []
    for _ in range(k):
        op = _pick(rng, pool)
        out.append(op)
        pool = [(o, w) for o, w in pool if o != op]
    return out


def _target_size(rng: random.Random, lo: int, hi: int) -> int:
    for _ in range(20):
        u = rng.random()
        if u < 0.07:
            n = rng.randint(1, 4)
        elif u < 0.87:
            n = int(round(rng.triangular(5, 30, 11)))
        else:
            n = rng.randint(31, 60)
        if lo <= n <= hi:
            return n
    return rng.randint(lo, hi)


def _pick(rng: random.Random, weighted: Sequence[tuple]) -> object:
    total = sum(w for _, w in weighted)
    r = rng.random() * total
    for item, w in weighted:
        r -= w
        if r < 0:
            return item
    return weighted[-1][0]


def _build(rng: random.Random, min_nodes: int, max_nodes: int) -> _Builder:
    target = _target_size(rng, min_nodes, max_nodes)
    pending = _draw_showcases(rng, min(target, rng.choice((1, 2, 2, 3)) + (target > 25) + (target > 45)))
    due = sorted(rng.randrange(target) for _ in pending)
    g = _Builder(rng, rng.choice(STYLES), limit=target - len(pending))
    g.byte_cap = MAX_INITIALIZER_BYTES - len(pending) * SHOWCASE_BYTES
    start = _pick(rng, FAMILIES)
    mark = g.mark()
    try:
        x: str | None = start(g)
    except _Reject:
        g.rollback(mark)
        x = fresh_any(g)
    fails = 0
    while len(g.nodes) < target:
        if pending and (len(g.nodes) >= due[0] or len(g.nodes) >= target - len(pending)):
            op = pending.pop(0)
            due.pop(0)
            g.limit = target - len(pending)
            g.byte_cap = MAX_INITIALIZER_BYTES - len(pending) * SHOWCASE_BYTES
            y = _place_showcase(g, x, op)
            x = _next_main(g, x, y)
            continue
        g.limit = target - len(pending)
        g.byte_cap = MAX_INITIALIZER_BYTES - len(pending) * SHOWCASE_BYTES
        mark = g.mark()
        try:
            if fails >= 6 or g.left() == 1 and rng.random() < 0.5:
                y = _filler(g, x)
            elif rng.random() < 0.15:
                y = CORES[_pick(rng, SHOWCASE_WEIGHTS)](g, x)
            else:
                r = g.rank(x)
                motifs = MOTIFS.get(r if r is not None else 1, MOTIFS[1])
                y = _pick(rng, motifs)(g, x)
        except _Reject:
            g.rollback(mark)
            fails += 1
            continue
        fails = 0
        x = _next_main(g, x, y)
    return g


def _filler(g: _Builder, x: str) -> str:
    """One node that always fits: an activation on a float tensor, else a Cast to float."""
    if not _is_float(g, x):
        return g.op("Cast", [x], to=FLOAT)
    return g.op(g.rng.choice(("Relu", "Sigmoid", "Tanh", "Identity", "Relu", "Dropout", "Neg", "Abs")), [x])


def _next_main(g: _Builder, x: str | None, y: str | None) -> str | None:
    """The main chain continues from y, unless y is a side result (non-float) and x is a float tensor."""
    if y is None or y == x:
        return x
    if x is not None and not _is_float(g, y) and _is_float(g, x) and g.rng.random() < 0.7:
        return x
    return y


OUTPUT_NAMES = ("output", "logits", "probs", "y", "out", "output0", "last_hidden_state", "pred", "scores",
                "embeddings", "features", "prob", "dets", "classes", "output_1", "Y", "heatmap", "mask")


def _assemble(g: _Builder, rng: random.Random) -> onnx.ModelProto:
    consumed = {i for n in g.nodes for i in n.input if i}
    outputs = [o for n in g.nodes for o in n.output if o and o not in consumed]
    if rng.random() < 0.6:
        # exporters usually give graph outputs friendly names
        producer = {o: n for n in g.nodes for o in n.output if o}
        fresh = rng.sample(OUTPUT_NAMES, min(len(outputs), len(OUTPUT_NAMES)))
        renamed = []
        for old, new in zip(outputs, fresh):
            if g.style == "tf":
                new = f"Identity_{len(renamed)}:0" if renamed else "Identity:0"
            new = g.unique(new, g.names)
            node = producer[old]
            node.output[list(node.output).index(old)] = new
            g.types[new] = g.types[old]
            renamed.append(new)
        outputs = renamed + outputs[len(renamed):]
    inputs = [vi for vi in g.inputs if vi.name in consumed]
    inits = [t for t in g.inits if t.name in consumed]
    out_vis = [helper.make_value_info(o, g.types[o]) for o in outputs]
    graph_name = rng.choice(("main_graph", "torch_jit", "torch-jit-export", "tf2onnx", "model", "Graph", "graph",
                             "onnx_model", "network"))
    # our tracked types are the true shapes (at least as precise as ONNX's); inference then merges its own in
    out_names = set(outputs)
    value_info = [helper.make_value_info(o, g.types[o]) for n in g.nodes for o in n.output
                  if o and o not in out_names]
    graph = helper.make_graph(g.nodes, graph_name, inputs, out_vis, initializer=inits, value_info=value_info)
    producer_name, producer_version = rng.choice((("pytorch", "2.1.0"), ("pytorch", "1.13.1"), ("tf2onnx", "1.16.1"),
                                                  ("onnx.helper", ""), ("keras2onnx", "1.7.0"), ("skl2onnx", "1.16")))
    model = helper.make_model(graph, opset_imports=OPSET_IMPORTS, ir_version=IR_VERSION,
                              producer_name=producer_name, producer_version=producer_version)
    model = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    if rng.random() < 0.7:
        _clear_generated_symbols(model, {d for vi in inputs for d in (_dims_of(vi.type) or []) if isinstance(d, str)})
    return model


def _clear_generated_symbols(model: onnx.ModelProto, keep: set[str]) -> None:
    """Turn ONNX inference's generated `unk__N` dims into plain unknown dims (Netron draws them as `?`)."""
    for vi in list(model.graph.value_info) + list(model.graph.output):
        if not vi.type.tensor_type.HasField("shape"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param.startswith("unk__") and d.dim_param not in keep:
                d.ClearField("dim_param")


def random_model(seed: int, *, min_nodes: int = 1, max_nodes: int = 60) -> onnx.ModelProto:
    """A random valid, shape-inferred ONNX model (see the module docstring for the contract)."""
    if not 1 <= min_nodes <= max_nodes:
        raise ValueError(f"need 1 <= min_nodes <= max_nodes, got {min_nodes}, {max_nodes}")
    rng = random.Random(f"graphgen:v{GENERATOR_VERSION}:{int(seed)}")
    g = _build(rng, min_nodes, max_nodes)
    return _assemble(g, rng)


# Operators whose float inputs are read by shape inference (their values set the output shape): kept as
# initializers by `lift_weights`, so that Netron still draws the shapes downstream.
_VALUE_READERS = frozenset({"Resize", "Range"})


def lift_weights(model: onnx.ModelProto, rng: random.Random, p: float) -> onnx.ModelProto:
    """`model` in the form of the onnx package's "light" models: each float initializer of rank ≥ 1 (weights,
    biases, normalization statistics; not one read by `Resize` or `Range`) is, with probability `p`, replaced by an
    unnamed `ConstantOfShape` node whose `value` is one zero and whose input is a new int64 initializer
    `<name>__SHAPE` holding the weight's dims. Netron then draws a `ConstantOfShape` card per lifted weight, beside
    its consumer, and an edge from it into the consumer: the wide fan-ins (a `BatchNormalization` fed by four
    constants) that the light models show. The new nodes come first, as in those models; the lifted weights' types
    are inferred and every other tensor keeps its type. `p = 0` returns an equal model. Deterministic in `rng`'s
    state."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    g = model.graph
    readers = {i for n in g.node if n.op_type in _VALUE_READERS for i in n.input}
    lifted, kept, shapes = [], [], []
    names = {t.name for t in g.initializer} | {o for n in g.node for o in n.output} | {i.name for i in g.input}
    for t in g.initializer:
        if (t.data_type == FLOAT and len(t.dims) >= 1 and t.name not in readers and rng.random() < p):
            shape_name = f"{t.name}__SHAPE"
            while shape_name in names:
                shape_name += "_"
            names.add(shape_name)
            shapes.append(numpy_helper.from_array(np.array(list(t.dims), dtype=np.int64), shape_name))
            value = helper.make_tensor("value", FLOAT, [1], [0.0])
            lifted.append(helper.make_node("ConstantOfShape", [shape_name], [t.name], value=value))
        else:
            kept.append(t)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    if not lifted:
        return out
    del out.graph.node[:]
    out.graph.node.extend(lifted + list(g.node))
    del out.graph.initializer[:]
    out.graph.initializer.extend(kept + shapes)
    inferred = shape_inference.infer_shapes(out, strict_mode=True, data_prop=True)
    # The lifted weights' types are added; every other tensor keeps the type it had (inference would bring back
    # the `unk__N` symbols that `_assemble` may have cleared).
    known = {v.name for v in g.value_info}
    out.graph.value_info.extend(v for v in inferred.graph.value_info if v.name not in known)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Summary


def _vi_json(vi: onnx.ValueInfoProto) -> dict:
    return {"name": vi.name, "dtype": helper.tensor_dtype_to_string(vi.type.tensor_type.elem_type).replace(
        "TensorProto.", "").lower(), "shape": _dims_of(vi.type)}


def summarize(model: onnx.ModelProto) -> dict:
    """JSON-serialisable summary: ops in node order, per-op counts, nodes (name, op, inputs, outputs), all tensor
    names (graph inputs, initializers, node outputs, in that order), graph inputs/outputs with dtype and shape
    (dims: int, symbol string, or None), and initializers with their shapes."""
    g = model.graph
    tensors: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        if name and name not in seen:
            seen.add(name)
            tensors.append(name)

    for vi in g.input:
        add(vi.name)
    for t in g.initializer:
        add(t.name)
    for n in g.node:
        for o in n.output:
            add(o)
    op_counts: dict[str, int] = {}
    for n in g.node:
        op_counts[n.op_type] = op_counts.get(n.op_type, 0) + 1
    return {
        "generator_version": GENERATOR_VERSION,
        "graph_name": g.name,
        "opset": next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None),
        "num_nodes": len(g.node),
        "ops": [n.op_type for n in g.node],
        "op_counts": dict(sorted(op_counts.items())),
        "node_names": [n.name for n in g.node],
        "nodes": [{"name": n.name, "op": n.op_type, "inputs": list(n.input), "outputs": list(n.output)}
                  for n in g.node],
        "tensor_names": tensors,
        "inputs": [_vi_json(vi) for vi in g.input],
        "outputs": [_vi_json(vi) for vi in g.output],
        "initializers": [{"name": t.name, "shape": [int(d) for d in t.dims]} for t in g.initializer],
    }


def op_stats(seeds: Sequence[int]) -> dict:
    """Per-operator coverage over `seeds`: graphs containing each op, node counts, node-count distribution and
    generation speed (models/second, generation only)."""
    import time

    graphs = {op: 0 for op in OPS}
    nodes = {op: 0 for op in OPS}
    sizes: list[int] = []
    start = time.perf_counter()
    for seed in seeds:
        model = random_model(seed)
        ops = [n.op_type for n in model.graph.node]
        sizes.append(len(ops))
        for op in ops:
            nodes[op] += 1
        for op in set(ops):
            graphs[op] += 1
    seconds = time.perf_counter() - start
    sizes.sort()
    return {
        "models": len(sizes), "seconds": round(seconds, 2), "models_per_second": round(len(sizes) / seconds, 1),
        "graphs_with_op": graphs, "nodes_per_op": nodes,
        "min_graphs_with_op": min(graphs.values()), "max_graphs_with_op": max(graphs.values()),
        "min_nodes_per_op": min(nodes.values()), "max_nodes_per_op": max(nodes.values()),
        "node_count": {"min": sizes[0], "median": sizes[len(sizes) // 2], "max": sizes[-1],
                       "share_5_to_30": round(sum(5 <= n <= 30 for n in sizes) / len(sizes), 3)},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m datagen.graphgen --stats N` prints op coverage over seeds 0..N-1;
    `--save DIR --count N` writes N models as DIR/<seed>.onnx (for looking at them in Netron)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--stats", type=int, default=0)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    args = parser.parse_args(argv)
    if args.stats:
        stats = op_stats(range(args.seed, args.seed + args.stats))
        order = sorted(OPS, key=lambda op: stats["graphs_with_op"][op])
        for op in order:
            print(f"{op:24s} graphs {stats['graphs_with_op'][op]:5d}  nodes {stats['nodes_per_op'][op]:6d}")
        print(json.dumps({k: v for k, v in stats.items() if k not in ("graphs_with_op", "nodes_per_op")}))
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for seed in range(args.seed, args.seed + args.count):
            onnx.save(random_model(seed), args.save / f"{seed}.onnx")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
