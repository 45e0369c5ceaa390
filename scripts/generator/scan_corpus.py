#!/usr/bin/python3
"""Generates the scan benchmark corpus: categories of realistic capture problems, ten or more images each.

Usage: scan_corpus.py OUT_DIR [--per-category N] [--categories A,B,...]
Writes OUT_DIR/<category>/<n>.(jpg|png|webp) and OUT_DIR/expected.json {relative path: [{"format","text"}]}.
Seeded: the same command writes the same corpus.
"""
import argparse
import json
import math
import os
import random
import subprocess
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

import codegen
import qr_model1

ENV = "5f1a9d2e-7c3b-4a61-8e2f-3b4c5d6e7f80"


def url(rng, form=None):
    txn = "".join(rng.choice("0123456789abcdef") for _ in range(8)) + "-" + "".join(
        rng.choice("0123456789abcdef") for _ in range(4))
    return codegen.verification_url(ENV, txn, f"{rng.randrange(10**6):06d}", form or rng.choice(["webapp", "api"]))


def card_with(rng, codes, size=(900, 600), seed=0):
    """Places each code array on a card at a random free-ish position; returns the RGB image."""
    card = codegen.paper(size[0], size[1], seed=seed)
    x = rng.randrange(10, 40)
    for code in codes:
        h, w = code.shape
        y = rng.randrange(10, max(11, size[1] - h - 10))
        codegen.place(card, code, min(x, size[0] - w - 5), y)
        x += w + rng.randrange(10, 40)
    return card


def add_noise(image, rng, sigma):
    array = np.asarray(image).astype(np.float32)
    noise = np.random.default_rng(rng.randrange(2**32)).normal(0, sigma, array.shape[:2])[..., None]
    return Image.fromarray(np.clip(array + noise, 0, 255).astype(np.uint8), "RGB")


def perspective(image, rng, strength):
    w, h = image.size
    d = lambda: rng.uniform(0, strength) * min(w, h)  # noqa: E731
    # The whole card lands inside an inset quadrilateral of the frame: tilted, never cropped.
    dst = [(d(), d()), (w - d(), d()), (w - d(), h - d()), (d(), h - d())]
    src = [(0, 0), (w, 0), (w, h), (0, h)]
    matrix = []
    for (x, y), (u, v) in zip(dst, src):
        matrix.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        matrix.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    coeffs = np.linalg.solve(np.array(matrix, dtype=float), np.array([c for p in src for c in p], dtype=float))
    return image.transform((w, h), Image.PERSPECTIVE, tuple(coeffs), Image.BICUBIC, fillcolor=(200, 200, 200))


def glare(image, rng):
    w, h = image.size
    y, x = np.mgrid[0:h, 0:w]
    cx, cy, r = rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h, rng.uniform(0.15, 0.3) * min(w, h)
    blob = np.exp(-(((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r)))[..., None] * rng.uniform(90, 140)
    return Image.fromarray(np.clip(np.asarray(image).astype(np.float32) + blob, 0, 255).astype(np.uint8), "RGB")


def shadow(image, rng):
    w, h = image.size
    angle = rng.uniform(0, 2 * math.pi)
    y, x = np.mgrid[0:h, 0:w]
    t = ((x - w / 2) * math.cos(angle) + (y - h / 2) * math.sin(angle)) / max(w, h)
    factor = 1 - rng.uniform(0.45, 0.6) * (1 / (1 + np.exp(-t * 12)))
    return Image.fromarray((np.asarray(image).astype(np.float32) * factor[..., None]).astype(np.uint8), "RGB")


def damage(code, rng, fraction):
    """Blots a few round stains over the symbol (ECC level H recovers them)."""
    image = Image.fromarray(code, "L")
    draw = ImageDraw.Draw(image)
    h, w = code.shape
    area = 0
    while area < fraction * w * h:
        r = rng.uniform(0.03, 0.06) * w
        cx, cy = rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=rng.choice([0, 255, 128]))
        area += math.pi * r * r
    return np.array(image)


def licence_payload(rng):
    number = "".join(rng.choice("0123456789") for _ in range(9))
    return codegen.aamva([("DAQ", "D" + number), ("DCS", rng.choice(["SAMPLE", "EXAMPLE", "SPECIMEN"])),
                          ("DAC", rng.choice(["ALEX", "SAM", "JO"])), ("DBB", f"0{rng.randrange(1, 9)}1{rng.randrange(10)}19{rng.randrange(50, 99)}"),
                          ("DBA", "01012031"), ("DBC", rng.choice("129")), ("DAG", f"{rng.randrange(1, 999)} MAIN ST"),
                          ("DAI", "ANYTOWN"), ("DAJ", "VA"), ("DAK", "232690000  "), ("DCG", "USA")])


# Payloads in other charsets, written by zint in its own way: UTF-8 text it converts (the QR Kanji mode, or an
# ECI's charset), or bytes it takes as they are.
CHARSET_PAYLOADS = [
    ([], "日本語のテキストです"), (["--binary"], "日本語テキスト".encode("shift_jis")),
    (["--binary"], "中文文本测试内容".encode("gb2312")), (["--binary"], "café crème brûlée".encode("latin-1")),
    (["--eci=3"], "Grüße aus Köln"), (["--eci=26"], "Grüße 日本 中文"), (["--eci=20"], "東京都千代田区"),
    (["--eci=29"], "北京市海淀区"),
]


def charset_code(options, data, module_px):
    with tempfile.TemporaryDirectory() as tmp:
        source, out = os.path.join(tmp, "data.bin"), os.path.join(tmp, "symbol.png")
        with open(source, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        subprocess.run(["zint", "-b", str(codegen.ZINT_QR), "--scale=0.5", "--border=0", "--whitesp=0", "--vwhitesp=0",
                        "-i", source, "-o", out] + options, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        symbol = np.array(Image.open(out).convert("L"))
    text = data if isinstance(data, str) else data.decode("shift_jis" if b"\x93" in data else "gb2312" if b"\xd6" in data else "latin-1")
    return codegen.render(symbol, module_px), text


def dotted(code_array, module_px):
    """Round dots for dark modules, as stylised codes draw them (the finder patterns stay square)."""
    modules = code_array[::module_px, ::module_px] < 128
    size = modules.shape[0]
    image = Image.new("L", (size * module_px, size * module_px), 255)
    draw = ImageDraw.Draw(image)
    quiet = 4
    for y, x in zip(*np.nonzero(modules)):
        in_finder = any(fy <= y - quiet < fy + 7 and fx <= x - quiet < fx + 7
                        for fy, fx in ((0, 0), (0, size - 2 * quiet - 7), (size - 2 * quiet - 7, 0)))
        box = (x * module_px, y * module_px, (x + 1) * module_px - 1, (y + 1) * module_px - 1)
        if in_finder:
            draw.rectangle(box, fill=0)
        else:
            inset = module_px * 0.12
            draw.ellipse((box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset), fill=0)
    return np.asarray(image)


def curved(image, rng):
    """Paper bent along one axis: rows shift and stretch with a sine, as a page that does not lie flat."""
    array = np.asarray(image)
    h, w = array.shape[:2]
    amplitude, period = rng.uniform(8, 16), rng.uniform(1.2, 2.0) * w
    ys = np.arange(h)[:, None] + amplitude * np.sin(2 * math.pi * np.arange(w)[None, :] / period)
    ys = np.clip(ys.round().astype(int), 0, h - 1)
    return Image.fromarray(array[ys, np.arange(w)[None, :]], "RGB")


def make(category, index, rng):
    """Returns (image, [(format, text)], file extension, save options)."""
    seed = CATEGORIES.index(category) * 1000 + index
    jpeg = ("jpg", {"quality": 85})
    text = url(rng)
    qr = lambda px, **kw: codegen.qr(text, module_px=px, **kw)  # noqa: E731
    if category == "nominal":
        image = card_with(rng, [qr(rng.randrange(4, 7))], seed=seed)
        return image, [("QR_CODE", text)], *(jpeg if index % 2 else ("png", {}))
    if category == "blurred":
        image = card_with(rng, [qr(6)], seed=seed).filter(ImageFilter.GaussianBlur(rng.uniform(1.0, 2.0)))
        return image, [("QR_CODE", text)], *jpeg
    if category == "noise":
        return add_noise(card_with(rng, [qr(5)], seed=seed), rng, rng.uniform(12, 28)), [("QR_CODE", text)], *jpeg
    if category == "rotation":
        image = card_with(rng, [qr(5)], size=(800, 800), seed=seed)
        return image.rotate(rng.uniform(5, 85), Image.BICUBIC, expand=True, fillcolor=(230, 230, 230)), [("QR_CODE", text)], *jpeg
    if category == "perspective":
        return perspective(card_with(rng, [qr(6)], seed=seed), rng, 0.12), [("QR_CODE", text)], *jpeg
    if category == "low-brightness":
        array = np.asarray(card_with(rng, [qr(5)], seed=seed)).astype(np.float32) * rng.uniform(0.18, 0.3) + 8
        image = add_noise(Image.fromarray(array.astype(np.uint8), "RGB"), rng, 3)
        return image, [("QR_CODE", text)], *jpeg
    if category == "glare":
        return glare(card_with(rng, [qr(6)], seed=seed), rng), [("QR_CODE", text)], *jpeg
    if category == "shadows":
        return shadow(card_with(rng, [qr(5)], seed=seed), rng), [("QR_CODE", text)], *jpeg
    if category == "small-modules":
        image = card_with(rng, [qr(rng.choice([2, 3]))], size=(700, 500), seed=seed)
        return image, [("QR_CODE", text)], *(("png", {}) if index % 2 else ("jpg", {"quality": 92}))
    if category == "photo-12mp":
        image = card_with(rng, [qr(rng.randrange(10, 16))], size=(4000, 3000), seed=seed)
        return add_noise(image, rng, 4), [("QR_CODE", text)], "jpg", {"quality": 88}
    if category == "inverted":
        image = Image.fromarray(255 - np.asarray(card_with(rng, [qr(5)], seed=seed)), "RGB")
        return image, [("QR_CODE", text)], *jpeg
    if category == "damaged":
        code = damage(codegen.qr(text, module_px=6, ecc=4), rng, rng.uniform(0.03, 0.07))
        return card_with(rng, [code], seed=seed), [("QR_CODE", text)], *jpeg
    if category == "multiple":
        texts = [text] + [url(rng) for _ in range(rng.randrange(1, 3))]
        image = card_with(rng, [codegen.qr(t, module_px=4) for t in texts], size=(1300, 500), seed=seed)
        return image, [("QR_CODE", t) for t in texts], *jpeg
    if category == "high-version":
        long_text = text + "&source=" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(rng.randrange(250, 500)))
        code = codegen.qr(long_text, module_px=4)
        return card_with(rng, [code], size=(code.shape[1] + 80, code.shape[0] + 80), seed=seed), [("QR_CODE", long_text)], *jpeg
    if category == "pdf417":
        payload = licence_payload(rng)
        code = codegen.pdf417(payload.encode("latin-1"), module_px=rng.choice([2, 3]), columns=rng.choice([6, 8, 10]))
        image = card_with(rng, [code], size=(max(1000, code.shape[1] + 60), 630), seed=seed)
        return image, [("PDF417", payload)], *jpeg
    if category == "no-code":
        image = codegen.paper(900, 600, seed=seed)
        return (add_noise(image, rng, 6) if index % 2 else image), [], *jpeg
    if category == "charset":
        options, data = CHARSET_PAYLOADS[index % len(CHARSET_PAYLOADS)]
        code, expected = charset_code(options, data, rng.choice([4, 5]))
        return card_with(rng, [code], seed=seed), [("QR_CODE", expected)], *(jpeg if index % 2 else ("png", {}))
    if category == "webp":
        image = add_noise(card_with(rng, [qr(rng.choice([4, 5]))], seed=seed), rng, 4)
        return image, [("QR_CODE", text)], "webp", ({"quality": 80} if index % 3 else {"lossless": True})
    if category == "no-quiet-zone":
        code = codegen.render(codegen.symbol(codegen.ZINT_QR, text), rng.choice([3, 4]), quiet_modules=0)
        # The symbol fills the picture to its edges: nothing around it but a pixel or two.
        margin = rng.choice([0, 1, 2])
        image = np.pad(code, margin, constant_values=255)
        return Image.fromarray(image, "L").convert("RGB"), [("QR_CODE", text)], *(("png", {}) if index % 2 else jpeg)
    if category == "dotted":
        return card_with(rng, [dotted(qr(6), 6)], seed=seed), [("QR_CODE", text)], *jpeg
    if category == "high-version-2px":
        long_text = text + "&source=" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(rng.randrange(700, 900)))
        code = codegen.qr(long_text, module_px=2)
        image = card_with(rng, [code], size=(code.shape[1] + 120, code.shape[0] + 120), seed=seed)
        return add_noise(image, rng, 3), [("QR_CODE", long_text)], "png", {}
    if category == "curved":
        return curved(card_with(rng, [qr(6)], seed=seed), rng), [("QR_CODE", text)], *jpeg
    if category == "small-pdf417":
        payload = licence_payload(rng)
        code = codegen.pdf417(payload.encode("latin-1"), module_px=2, columns=rng.choice([10, 14]))
        image = card_with(rng, [code], size=(max(1000, code.shape[1] + 60), 500), seed=seed)
        return image, [("PDF417", payload)], "jpg", {"quality": 92}
    if category == "small-with-code":
        # Thumbnails and screenshots of about 0.1 MP with one code at 2 or 3 px per module.
        size = (rng.choice([320, 360, 400]), rng.choice([260, 280, 300]))
        image = add_noise(card_with(rng, [qr(rng.choice([2, 3]))], size=size, seed=seed), rng, rng.uniform(2, 6))
        return image, [("QR_CODE", text)], *(jpeg if index % 2 else ("webp", {"quality": 80}))
    if category == "edge-warped":
        # A bent card photographed so close that the code touches the picture's edge: no quiet zone on that side.
        code = qr(5)
        card = card_with(rng, [code], size=(700, 460), seed=seed)
        array = np.asarray(curved(card, rng))
        x0 = next(x for x in range(array.shape[1]) if (array[:, x, 0] < 100).any())  # the code's first dark column
        image = Image.fromarray(np.ascontiguousarray(array[:, x0 - rng.choice([0, 1, 2]):]), "RGB")
        return perspective(image, rng, 0.04), [("QR_CODE", text)], *jpeg
    if category == "nested":
        # A small code printed inside a large one (ECC level H): both are reported.
        inner_text = url(rng)
        outer = codegen.qr(text, module_px=8, ecc=4)
        inner = codegen.qr(inner_text, module_px=2, ecc=2)
        y, x = (outer.shape[0] - inner.shape[0]) // 2, (outer.shape[1] - inner.shape[1]) // 2
        outer = outer.copy()
        outer[y:y + inner.shape[0], x:x + inner.shape[1]] = inner
        return card_with(rng, [outer], size=(outer.shape[1] + 100, outer.shape[0] + 60), seed=seed), \
            [("QR_CODE", text), ("QR_CODE", inner_text)], "png", {}
    if category == "model-1":
        # The original QR model (no alignment patterns), still printed on old documents: versions 6 and 8 (41 and
        # 49 modules) at 1 to 3 px per module, half of them without a quiet zone.
        modules = qr_model1.encode(text, ecc=rng.choice(["L", "L", "M"]) if len(text) < 110 else "L")
        px = rng.choice([1, 2, 3])
        quiet = 0 if index % 2 else 4
        code = np.kron(np.pad(1 - modules, quiet, constant_values=1), np.ones((px, px), dtype=np.uint8)) * 255
        if quiet == 0:
            return Image.fromarray(code.astype(np.uint8), "L").convert("RGB"), [("QR_CODE", text)], "png", {}
        return card_with(rng, [code.astype(np.uint8)], size=(500, 360), seed=seed), [("QR_CODE", text)], "png", {}
    if category == "small-no-code":
        # Phone thumbnails and screenshots of about 0.1 MP with print-like texture and no code.
        image = codegen.paper(rng.choice([320, 360, 400]), rng.choice([240, 280, 300]), seed=seed)
        return add_noise(image, rng, rng.uniform(2, 8)), [], *(jpeg if index % 2 else ("webp", {"quality": 75}))
    raise ValueError(category)


CATEGORIES = ["nominal", "blurred", "noise", "rotation", "perspective", "low-brightness", "glare", "shadows",
              "small-modules", "photo-12mp", "inverted", "damaged", "multiple", "high-version", "pdf417", "no-code",
              "charset", "webp", "no-quiet-zone", "dotted", "high-version-2px", "curved", "small-pdf417", "small-no-code",
              "small-with-code", "edge-warped", "nested", "model-1"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--per-category", type=int, default=10)
    parser.add_argument("--categories", help="comma-separated: only these (the throughput sets)")
    args = parser.parse_args()
    expected = {}
    for category in args.categories.split(",") if args.categories else CATEGORIES:
        rng = random.Random(f"{category}-corpus")
        for index in range(args.per_category):
            image, codes, ext, options = make(category, index, rng)
            relative = f"{category}/{index:03d}.{ext}"
            codegen.save(image, os.path.join(args.out, relative), **options)
            expected[relative] = [{"format": f, "text": t} for f, t in codes]
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
