#!/usr/bin/python3
"""Writes barcode-scanning fixtures and manifest.json with the text each one must read as.

Run: /usr/bin/python3 Tests/BarcodeScanningTests/Fixtures/generate.py   (needs zint, python3-pil, python3-numpy)
"""
import json
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "generator"))
import codegen  # noqa: E402

ENV = "0b0c5d3e-6f4a-4e58-9d0e-0123456789ab"


def url(n):
    return codegen.verification_url(ENV, f"txn-fixture-{n:03d}", f"{100000 + n * 37:06d}", "api")


def main():
    manifest = {}

    def write(name, image, codes, **options):
        image.save(os.path.join(HERE, name), **options)
        manifest[name] = [{"format": f, "text": t} for f, t in codes]

    card = codegen.paper(480, 320, seed=1)
    codegen.place(card, codegen.qr(url(1), module_px=4), 250, 40)
    write("qr.png", card, [("QR_CODE", url(1))])
    write("qr.jpg", card, [("QR_CODE", url(1))], quality=88)
    # What phones and browsers upload: lossy WebP.
    write("qr.webp", card, [("QR_CODE", url(1))], quality=80)

    # Light code on a dark card: only the negative pass reads it.
    dark = codegen.paper(480, 320, seed=2)
    codegen.place(dark, codegen.qr(url(2), module_px=4), 250, 40)
    inverted = Image.fromarray(255 - np.array(dark), "RGB")
    write("qr-inverted.png", inverted, [("QR_CODE", url(2))])

    # Two codes on one page.
    page = codegen.paper(700, 360, seed=3)
    codegen.place(page, codegen.qr(url(3), module_px=4), 20, 60)
    codegen.place(page, codegen.qr(url(4), module_px=4), 380, 60)
    write("qr-two.png", page, [("QR_CODE", url(3)), ("QR_CODE", url(4))])

    # A tilted code.
    tilted = codegen.paper(520, 520, seed=4)
    codegen.place(tilted, codegen.qr(url(5), module_px=5), 120, 120)
    write("qr-rotated.png", tilted.rotate(27, resample=Image.BICUBIC, fillcolor=(246, 244, 238)), [("QR_CODE", url(5))])

    # A photo-sized JPEG with fine modules: unreadable at half size, readable at full size.
    photo = codegen.paper(1600, 1200, seed=5)
    codegen.place(photo, codegen.qr(url(6), module_px=2), 900, 500)
    write("qr-fine-modules.jpg", photo, [("QR_CODE", url(6))], quality=95)

    # The AAMVA PDF417 on a licence back.
    payload = codegen.aamva([("DAQ", "F0000001"), ("DCS", "TESTER"), ("DAC", "SAM"), ("DBB", "01021990"),
                             ("DBA", "01022031"), ("DBC", "9"), ("DAJ", "CA")])
    back = codegen.paper(900, 560, seed=6, tint=(232, 238, 246))
    pdf = codegen.pdf417(payload.encode("latin-1"), module_px=3, columns=6)
    codegen.place(back, pdf, 30, 560 - pdf.shape[0] - 30)
    write("pdf417.jpg", back, [("PDF417", payload)], quality=90)

    # Printed text and no code at all: nothing may be read.
    write("no-code.jpg", codegen.paper(800, 500, seed=7), [], quality=90)

    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
