#!/usr/bin/python3
"""The PassportEye reference for scripts/bench-mrz: reads every image named on stdin with PassportEye's
`read_mrz` (PyPI `passporteye`, which runs Debian's `tesseract` on the zone it locates), in this one thread and
with Tesseract held to one thread, and prints one NDJSON line per image as `verify-pipeline scan --json` does:
{"source": PATH, "barcodes": [{"format": "MRZ", "text": "line1\\nline2[\\nline3]", "raw": ..., "valid": ...}]}.

The text is the lines PassportEye parses: its OCR output (`mrz.aux['raw_text']`) through its own clean-up
(`MRZOCRCleaner`: spaces removed, lines under 20 characters without `<<` dropped, letters and digits swapped
where the format allows only one of them), which is what its `MRZ` fields and check-digit verdict come from.
Whatever PassportEye returns is reported, valid or not ("valid" says which); no MRZ found: no barcodes.

Usage: PYTHONPATH=PASSPORTEYE_DIR passporteye_reference.py < FILE_LIST > RESULTS.ndjson
"""
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore", category=FutureWarning)  # scikit-image's notices about PassportEye's calls
os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract's OpenMP threads, inherited by each tesseract run

from passporteye import read_mrz  # noqa: E402
from passporteye.mrz.text import MRZOCRCleaner  # noqa: E402


def main():
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        try:
            mrz = read_mrz(path)
            barcodes = []
            if mrz is not None:
                raw = mrz.aux.get("raw_text", "")
                lines = MRZOCRCleaner.apply(raw)
                if lines:
                    barcodes.append({"format": "MRZ", "text": "\n".join(lines), "raw": raw, "valid": bool(mrz.valid),
                                     "type": mrz.mrz_type})
            print(json.dumps({"source": path, "barcodes": barcodes}), flush=True)
        except Exception as error:  # an unreadable file is that file's result, as for the others
            print(json.dumps({"source": path, "error": {"message": f"{type(error).__name__}: {error}"}}), flush=True)


if __name__ == "__main__":
    main()
