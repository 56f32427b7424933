# Sourced by device_classifier.sh and device_ocr.sh, from the repository root on a lent GPU machine: adds the
# pack shards this call carried in `.pack/` (or in subfolders of it, one carried per call: `carry` names
# `.pack/a`, then `.pack/b`, so that no shard is swapped between calls) to those gathered in /root/pack, shows
# them and the GPU, and enters models/ with Python's output unbuffered. `require_shards N` stops the call
# (status 3) unless N shards are there.
mkdir -p /root/pack
find .pack -name "*.npz" -exec cp {} /root/pack/ \;   # .pack/*.npz, or one shard per subfolder
ls -l /root/pack
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader
cd models
export PYTHONUNBUFFERED=1 TQDM_DISABLE=1
require_shards() {
    local have
    have=$(ls /root/pack/*.npz | wc -l)
    if [ "$have" -lt "$1" ]; then echo "only $have of $1 shards on this machine" >&2; exit 3; fi
}
