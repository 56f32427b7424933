"""train.profile_detector: graph prefixes and single-conv models are valid and run in onnxruntime."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from train import profile_detector


def two_stage_model() -> onnx.ModelProto:
    """image → /stem/conv (3→4) → /stem/act (Relu) → /s4/conv (4→2) → out."""
    w1 = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w1")
    w2 = numpy_helper.from_array(np.full((2, 4, 1, 1), 0.5, np.float32), "w2")
    nodes = [helper.make_node("Conv", ["image", "w1"], ["/stem/conv/Conv_output_0"]),
             helper.make_node("Relu", ["/stem/conv/Conv_output_0"], ["/stem/act/Relu_output_0"]),
             helper.make_node("Conv", ["/stem/act/Relu_output_0", "w2"], ["/s4/conv/Conv_output_0"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("/s4/conv/Conv_output_0", TensorProto.FLOAT, [1, 2, 4, 4])],
                              [w1, w2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def test_prefix_ends_after_the_last_node_of_the_stage_and_drops_unused_weights():
    m = profile_detector.prefix_model(two_stage_model(), "/stem/")
    onnx.checker.check_model(m)
    assert [n.op_type for n in m.graph.node] == ["Conv", "Relu"]
    assert [o.name for o in m.graph.output] == ["/stem/act/Relu_output_0"]
    assert [t.name for t in m.graph.initializer] == ["w1"]
    x = np.random.default_rng(0).normal(size=(1, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(run(m, x), np.maximum(x.sum(1, keepdims=True).repeat(4, 1), 0), rtol=1e-6)


def test_single_conv_is_depthwise_when_group_equals_channels():
    m = profile_detector.single_conv(8, 16, 8, 3, 2)
    onnx.checker.check_model(m)
    assert numpy_helper.to_array(m.graph.initializer[0]).shape == (8, 1, 3, 3)
    assert run(m, np.zeros((1, 8, 16, 16), np.float32)).shape == (1, 8, 8, 8)
