#!/usr/bin/python3
"""The zxing-cpp reference for scripts/bench-scan: reads every image named on stdin with zxing-cpp's Python
binding (PyPI `zxing-cpp`), in this one thread, for the formats verify-pipeline looks for by default, and prints
one NDJSON line per image as `verify-pipeline scan --json` does. Text is zxing-cpp's plain text (no HRI
escapes), so that both are compared on the same terms.

Usage: zxing_reference.py < FILE_LIST > RESULTS.ndjson
"""
import json
import sys

import zxingcpp
from PIL import Image

FORMATS = {"QRCode": "QR_CODE", "PDF417": "PDF417"}


def main():
    wanted = [zxingcpp.BarcodeFormat.QRCode, zxingcpp.BarcodeFormat.PDF417]
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        try:
            image = Image.open(path)
            image.load()
            results = zxingcpp.read_barcodes(image, formats=wanted, text_mode=zxingcpp.TextMode.Plain)
            barcodes = [{"format": FORMATS.get(r.format.name, r.format.name), "text": r.text} for r in results if r.valid]
            print(json.dumps({"source": path, "barcodes": barcodes}, ensure_ascii=False))
        except Exception as error:  # an unreadable file is that file's result, as for the others
            print(json.dumps({"source": path, "error": {"message": str(error)}}))


if __name__ == "__main__":
    main()
