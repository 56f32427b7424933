# Sourced by device_classifier.sh and device_ocr.sh, from the repository root on a lent GPU machine: adds the
# pack shard this call carried in `.pack/` to those gathered in /root/pack, shows them and the GPU, and enters
# models/ with Python's output unbuffered.
mkdir -p /root/pack
cp .pack/*.npz /root/pack/
ls -l /root/pack
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
cd models
export PYTHONUNBUFFERED=1 TQDM_DISABLE=1
