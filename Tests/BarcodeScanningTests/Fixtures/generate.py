#!/usr/bin/python3
"""Writes barcode-scanning fixtures and manifest.json with the text each one must read as.

Run: /usr/bin/python3 Tests/BarcodeScanningTests/Fixtures/generate.py   (needs zint, python3-pil, python3-numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "generator"))
import codegen  # noqa: E402

ENV = "0b0c5d3e-6f4a-4e58-9d0e-0123456789ab"


def url(n):
    return codegen.verification_url(ENV, f"txn-fixture-{n:03d}", f"{100000 + n * 37:06d}", "api")


def charset_qr(options, data, kind=codegen.ZINT_QR):
    """A symbol written by zint with its own charset handling: `data` is UTF-8 text zint converts (to Shift-JIS for
    the QR Kanji mode, or to the ECI's charset), or bytes it takes as they are (--binary)."""
    with tempfile.TemporaryDirectory() as tmp:
        source, out = os.path.join(tmp, "data.bin"), os.path.join(tmp, "symbol.png")
        with open(source, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        # zint takes segments only with -d (not -i); every segmented payload here is printable text.
        source_option = ["-d", data] if any(o.startswith("--seg") for o in options) else ["-i", source]
        subprocess.run(["zint", "-b", str(kind), "--scale=0.5", "--border=0", "--whitesp=0", "--vwhitesp=0",
                        "-o", out] + source_option + options, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        symbol = np.array(Image.open(out).convert("L"))
    return codegen.render(symbol, 4 if kind == codegen.ZINT_QR else 3, quiet_modules=4 if kind == codegen.ZINT_QR else 2)


# Payloads in other charsets than ASCII, as issue 15's real photos had them; each must read as this exact text.
CHARSET_CASES = [
    ("qr-kanji-mode.png", [], "日本語のテキストです", "QR_CODE"),                       # Kanji mode, no ECI
    ("qr-shift-jis-bytes.png", ["--binary"], "日本語テキスト".encode("shift_jis"), "QR_CODE"),
    ("qr-gb2312-bytes.png", ["--binary"], "中文文本测试".encode("gb2312"), "QR_CODE"),
    ("qr-latin1-bytes.png", ["--binary"], "café crème brûlée".encode("latin-1"), "QR_CODE"),
    ("qr-eci-latin1.png", ["--eci=3"], "Grüße aus Köln", "QR_CODE"),
    ("qr-eci-utf8.png", ["--eci=26"], "Grüße 日本 中文", "QR_CODE"),
    ("qr-eci-shift-jis.png", ["--eci=20"], "東京都千代田区", "QR_CODE"),
    ("qr-eci-gb2312.png", ["--eci=29"], "北京市海淀区", "QR_CODE"),
    ("pdf417-eci-mixed.png", ["--eci=3", "--seg1=7,Привет", "--seg2=26,日本"], None, "PDF417"),
]


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

    # A small code printed inside a large one (ECC level H covers it): both are reported.
    outer = codegen.qr(url(8), module_px=8, ecc=4).copy()
    inner = codegen.qr(url(9), module_px=2, ecc=2)
    top, left = (outer.shape[0] - inner.shape[0]) // 2, (outer.shape[1] - inner.shape[1]) // 2
    outer[top:top + inner.shape[0], left:left + inner.shape[1]] = inner
    nested = codegen.paper(outer.shape[1] + 80, outer.shape[0] + 80, seed=8)
    codegen.place(nested, outer, 40, 40)
    write("qr-nested.png", nested, [("QR_CODE", url(8)), ("QR_CODE", url(9))])

    # A tilted code.
    tilted = codegen.paper(520, 520, seed=4)
    codegen.place(tilted, codegen.qr(url(5), module_px=5), 120, 120)
    write("qr-rotated.png", tilted.rotate(27, resample=Image.BICUBIC, fillcolor=(246, 244, 238)), [("QR_CODE", url(5))])

    for name, options, data, symbology in CHARSET_CASES:
        kind = codegen.ZINT_QR if symbology == "QR_CODE" else codegen.ZINT_PDF417
        if data is None:  # multi-segment: segment 0 is Latin-1 text
            data, expected = "Grüße", "GrüßeПривет日本"
        else:
            expected = data if isinstance(data, str) else data.decode({"qr-shift-jis-bytes.png": "shift_jis",
                                                                       "qr-gb2312-bytes.png": "gb2312"}.get(name, "latin-1"))
        symbol = charset_qr(options, data, kind)
        card = codegen.paper(symbol.shape[1] + 80, symbol.shape[0] + 80, seed=20)
        codegen.place(card, symbol, 40, 40)
        write(name, card, [(symbology, expected)])

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
