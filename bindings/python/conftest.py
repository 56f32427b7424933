"""pytest setup: import the generated `netron_ocr_ffi` module.

ffi/test-all.sh generates it (with the cdylib copied next to it) into bindings/python/netron_ocr_ffi/; another
location can be given with NETRON_OCR_PY_BINDINGS.
"""

import os
import sys
from pathlib import Path

GENERATED = Path(os.environ.get("NETRON_OCR_PY_BINDINGS", Path(__file__).parent / "netron_ocr_ffi"))

if not (GENERATED / "netron_ocr_ffi.py").exists():
    raise RuntimeError(f"no generated bindings in {GENERATED}: run ffi/test-all.sh (or set NETRON_OCR_PY_BINDINGS)")
sys.path.insert(0, str(GENERATED))
