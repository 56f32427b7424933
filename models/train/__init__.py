"""PyTorch training, evaluation, export and parity checks for the netron-ocr models.

Run every command from `models/` (`python -m train.<module> --help`). `train.common` holds what all models share:
dataset reading (docs/dataset.md), seeding, the disk cache, checkpoints, the training loop, photometric
augmentation, ONNX export and warm start from an exported ONNX file.
"""
