"""Synthetic training data for netron-ocr: random ONNX graphs (graphgen), the operator vocabulary (vocab),
and the Netron rendering / dataset builder added by other modules of this package."""
