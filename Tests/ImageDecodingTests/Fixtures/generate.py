#!/usr/bin/python3
"""Writes the image-decoding fixtures and their reference decodes (PGM), plus the corrupt inputs.

The references are independent of the code under test: JPEGs are decoded by Pillow and turned into gray
with NumPy; PNGs are written here, by a small PNG writer, from arrays whose gray values NumPy computes.
Run: /usr/bin/python3 Tests/ImageDecodingTests/Fixtures/generate.py   (needs gcc and libjpeg-dev for YCCK)
"""
import json
import os
import random
import struct
import subprocess
import tempfile
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
W, H = 97, 61  # odd sizes exercise partial MCUs and DCT-scaling rounding


def source_rgb():
    y, x = np.mgrid[0:H, 0:W]
    r = 40 + (x * 170) // W
    g = 50 + (y * 150) // H
    b = 60 + ((x + y) * 120) // (W + H)
    rgb = np.stack([r, g, b], axis=-1).astype(np.uint8)
    rgb[10:30, 10:40] = (200, 90, 70)   # flat blocks: edges and distinct colours
    rgb[35:55, 55:90] = (70, 160, 200)
    return rgb


def luma(rgb):
    rgb = rgb.astype(np.int64)
    return ((rgb[..., 0] * 299 + rgb[..., 1] * 587 + rgb[..., 2] * 114 + 500) // 1000).astype(np.uint8)


def write_pgm(path, gray):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (gray.shape[1], gray.shape[0]))
        f.write(gray.astype(np.uint8).tobytes())


# --- PNG writer: every colour type, bit depth and Adam7 interlacing, from NumPy arrays -----------------

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_rows(samples, bit_depth):
    """samples: (h, w*channels) array of sample values -> list of packed row bytes."""
    rows = []
    for row in samples:
        if bit_depth == 16:
            rows.append(row.astype(">u2").tobytes())
        elif bit_depth == 8:
            rows.append(row.astype(np.uint8).tobytes())
        else:
            per_byte = 8 // bit_depth
            padded = np.zeros(((len(row) + per_byte - 1) // per_byte) * per_byte, dtype=np.uint16)
            padded[:len(row)] = row
            packed = bytearray()
            for i in range(0, len(padded), per_byte):
                byte = 0
                for j in range(per_byte):
                    byte = (byte << bit_depth) | int(padded[i + j])
                packed.append(byte)
            rows.append(bytes(packed))
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png_bytes(samples, color_type, bit_depth, palette=None, trns=None, interlace=False):
    """samples: (h, w, channels) array."""
    h, w, channels = samples.shape
    raw = b""
    passes = ADAM7 if interlace else [(0, 0, 1, 1)]
    for x0, y0, dx, dy in passes:
        sub = samples[y0::dy, x0::dx]
        if sub.shape[0] == 0 or sub.shape[1] == 0:
            continue
        for row in pack_rows(sub.reshape(sub.shape[0], -1), bit_depth):
            raw += b"\x00" + row
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(np.asarray(palette, dtype=np.uint8).reshape(-1)))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    out += chunk(b"IEND", b"")
    return out


def over_white(gray, alpha):
    gray, alpha = gray.astype(np.int64), alpha.astype(np.int64)
    return ((gray * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def png_variants(rgb):
    gray = luma(rgb)
    rng = np.random.default_rng(7)
    alpha = np.clip(np.mgrid[0:H, 0:W][1] * 255 // (W - 1), 0, 255).astype(np.uint8)
    variants = {}

    variants["png-gray8"] = (png_bytes(gray[..., None], 0, 8), gray)
    g4 = gray >> 4
    variants["png-gray4"] = (png_bytes(g4[..., None], 0, 4), (g4 * 17).astype(np.uint8))
    g1 = (gray > 128).astype(np.uint8)
    variants["png-gray1"] = (png_bytes(g1[..., None], 0, 1), (g1 * 255).astype(np.uint8))
    g16 = gray.astype(np.uint16) * 257 + rng.integers(0, 200, gray.shape).astype(np.uint16)
    variants["png-gray16"] = (png_bytes(g16[..., None], 0, 16), (g16 >> 8).astype(np.uint8))
    variants["png-rgb8"] = (png_bytes(rgb, 2, 8), luma(rgb))
    rgb16 = rgb.astype(np.uint16) * 257
    variants["png-rgb16"] = (png_bytes(rgb16, 2, 16), luma(rgb))
    variants["png-rgba8"] = (png_bytes(np.dstack([rgb, alpha]), 6, 8), over_white(luma(rgb), alpha))
    variants["png-graya8"] = (png_bytes(np.dstack([gray, alpha]), 4, 8), over_white(gray, alpha))
    # Palette: 16 gray-ish colours, 4-bit indices, one transparent entry.
    palette = np.array([[i * 16, i * 15 + 10, 250 - i * 14] for i in range(16)], dtype=np.uint8)
    index = (gray.astype(np.int64) * 16 // 256).astype(np.uint8)
    expected = luma(palette[index])
    variants["png-palette4"] = (png_bytes(index[..., None], 3, 4, palette=palette), expected)
    trns = bytes([255] * 5 + [0] + [255] * 10)
    expected_t = expected.copy()
    expected_t[index == 5] = 255
    variants["png-palette4-trns"] = (png_bytes(index[..., None], 3, 4, palette=palette, trns=trns), expected_t)
    variants["png-rgb8-interlaced"] = (png_bytes(rgb, 2, 8, interlace=True), luma(rgb))
    g2 = gray >> 6
    variants["png-gray2-interlaced"] = (png_bytes(g2[..., None], 0, 2, interlace=True), (g2 * 85).astype(np.uint8))
    return variants


# --- JPEG: Pillow writes most variants; a tiny libjpeg program writes CMYK and YCCK ---------------------

YCCK_WRITER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
/* usage: cmykjpeg W H ycck|cmyk < raw-inverted-cmyk > out.jpg  (Adobe convention: 255 = no ink) */
int main(int argc, char **argv) {
    int w = atoi(argv[1]), h = atoi(argv[2]);
    unsigned char *buf = malloc((size_t)w * h * 4);
    if (fread(buf, 1, (size_t)w * h * 4, stdin) != (size_t)w * h * 4) return 1;
    struct jpeg_compress_struct c; struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e); jpeg_create_compress(&c); jpeg_stdio_dest(&c, stdout);
    c.image_width = w; c.image_height = h; c.input_components = 4; c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, argv[3][0] == 'y' ? JCS_YCCK : JCS_CMYK);
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) { JSAMPROW r = buf + (size_t)c.next_scanline * w * 4; jpeg_write_scanlines(&c, &r, 1); }
    jpeg_finish_compress(&c); jpeg_destroy_compress(&c); return 0;
}
"""


def cmyk_from_rgb(rgb):
    """Under-colour removal: K = min(C, M, Y); ink values 0..255 (255 = full ink)."""
    cmy = 255 - rgb.astype(np.int64)
    k = cmy.min(axis=-1, keepdims=True) // 2
    return np.concatenate([cmy - k, k], axis=-1).astype(np.uint8)


def gray_from_cmyk(cmyk):
    """The multiplicative model: R = (255 - C)(255 - K) / 255."""
    cmyk = cmyk.astype(np.int64)
    k = 255 - cmyk[..., 3]
    rgb = np.stack([((255 - cmyk[..., i]) * k + 127) // 255 for i in range(3)], axis=-1)
    return luma(rgb)


def reference_jpeg(path):
    image = Image.open(path)
    image.load()
    if image.mode == "L":
        return np.array(image)
    if image.mode == "CMYK":  # Pillow undoes Adobe's inversion: 255 = full ink
        return gray_from_cmyk(np.array(image))
    return luma(np.array(image.convert("RGB")))


def jpeg_variants(rgb, tmp):
    paths = {}
    image = Image.fromarray(rgb, "RGB")
    for name, options in [("jpeg-baseline", {}), ("jpeg-progressive", {"progressive": True}),
                          ("jpeg-420", {"subsampling": 2})]:
        paths[name] = (image, dict(quality=92, subsampling=options.get("subsampling", 0),
                                   **{k: v for k, v in options.items() if k != "subsampling"}))
    out = {}
    for name, (img, options) in paths.items():
        path = os.path.join(HERE, name + ".jpg")
        img.save(path, **options)
        out[name] = path
    gray_path = os.path.join(HERE, "jpeg-grayscale.jpg")
    Image.fromarray(luma(rgb), "L").save(gray_path, quality=92)
    out["jpeg-grayscale"] = gray_path

    writer = os.path.join(tmp, "cmykjpeg")
    with open(writer + ".c", "w") as f:
        f.write(YCCK_WRITER)
    subprocess.run(["gcc", "-O1", "-o", writer, writer + ".c", "-ljpeg"], check=True)
    inverted = (255 - cmyk_from_rgb(rgb)).tobytes()
    for kind in ("cmyk", "ycck"):
        path = os.path.join(HERE, f"jpeg-{kind}.jpg")
        with open(path, "wb") as f:
            subprocess.run([writer, str(W), str(H), kind], input=inverted, stdout=f, check=True)
        out[f"jpeg-{kind}"] = path
    return out


def scaled_reference(path, denominator):
    image = Image.open(path)
    # Pillow picks the scale from the integer ratio of the sizes, so ask for the floor.
    image.draft("L", (W // denominator, H // denominator))
    image = image.convert("L")
    return np.array(image)


# --- Corrupt inputs ---------------------------------------------------------------------------------------

def corrupt_inputs():
    baseline = open(os.path.join(HERE, "jpeg-baseline.jpg"), "rb").read()
    png = open(os.path.join(HERE, "png-rgb8.png"), "rb").read()
    files = {
        "corrupt-empty.jpg": b"",
        "corrupt-random.jpg": random.Random(42).randbytes(4096),
        "corrupt-random-jpeg-magic.jpg": b"\xff\xd8\xff\xe0" + random.Random(43).randbytes(4096),
        "corrupt-truncated.jpg": baseline[: len(baseline) * 6 // 10],
        "corrupt-truncated.png": png[: len(png) * 6 // 10],
    }
    # A flipped byte inside IDAT's data, CRC left as it was.
    idat = png.index(b"IDAT")
    bad = bytearray(png)
    bad[idat + 10] ^= 0xFF
    files["corrupt-bad-crc.png"] = bytes(bad)
    # Headers that claim 60000 x 60000 pixels, with valid structure otherwise.
    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 0, 0, 0, 0)
    files["corrupt-huge-header.png"] = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                                        + chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + chunk(b"IEND", b""))
    sof = baseline.index(b"\xff\xc0")
    huge = bytearray(baseline)
    huge[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    files["corrupt-huge-header.jpg"] = bytes(huge)
    files["hostile-many-scans.jpg"] = many_scans(open(os.path.join(HERE, "jpeg-progressive.jpg"), "rb").read(), 10_000)
    for name, data in files.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    return sorted(files)


def many_scans(progressive, count):
    """The progressive JPEG with its smallest scan repeated until the file holds `count` scans: each scan is
    another pass over the coefficients, so a decoder without a scan limit spends seconds on a few hundred KB."""
    scans, position = [], 2
    while position < len(progressive):
        marker = progressive[position + 1]
        if marker == 0xD9:  # EOI
            break
        length = struct.unpack(">H", progressive[position + 2:position + 4])[0]
        end = position + 2 + length
        if marker == 0xDA:  # SOS: the entropy-coded data runs to the next marker that is not a stuffed 0xFF00
            while not (progressive[end] == 0xFF and progressive[end + 1] not in (0x00,) and not 0xD0 <= progressive[end + 1] <= 0xD7):
                end += 1
            scans.append((position, end))
        position = end
    start, end = min(scans, key=lambda scan: scan[1] - scan[0])
    last = scans[-1][1]
    return progressive[:last] + progressive[start:end] * (count - len(scans)) + progressive[last:]


def webp_variants(rgb):
    """Still WebPs written by Pillow (libwebp's encoder): lossless, lossless with alpha, lossy. References: the
    luma of the source (lossless; alpha composited over white) or of Pillow's own decode (lossy)."""
    variants = {}
    Image.fromarray(rgb).save(os.path.join(HERE, "webp-lossless.webp"), lossless=True)
    variants["webp-lossless"] = (luma(rgb), 2)
    y, x = np.mgrid[0:H, 0:W]
    alpha = ((x * 255) // (W - 1)).astype(np.uint8)
    Image.fromarray(np.dstack([rgb, alpha])).save(os.path.join(HERE, "webp-lossless-alpha.webp"), lossless=True, exact=True)
    over_white = (luma(rgb).astype(np.int64) * alpha + 255 * (255 - alpha.astype(np.int64)) + 127) // 255
    variants["webp-lossless-alpha"] = (over_white.astype(np.uint8), 2)
    path = os.path.join(HERE, "webp-lossy.webp")
    Image.fromarray(rgb).save(path, quality=92, method=6)
    variants["webp-lossy"] = (luma(np.asarray(Image.open(path).convert("RGB"))), 4)
    return variants


def webp_corrupt_inputs():
    lossy = open(os.path.join(HERE, "webp-lossy.webp"), "rb").read()
    files = {"corrupt-truncated.webp": lossy[: len(lossy) * 6 // 10]}
    # A VP8L (lossless) header that claims 16384 x 16384 pixels: 14-bit width-1 and height-1 after the 0x2f signature.
    bits = (16383) | (16383 << 14)
    vp8l = b"\x2f" + struct.pack("<I", bits) + b"\x00" * 16
    files["corrupt-huge-header.webp"] = b"RIFF" + struct.pack("<I", 4 + 8 + len(vp8l)) + b"WEBP" + b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l
    # Two frames: animation is not a document image.
    frames = [Image.fromarray(rgb_frame) for rgb_frame in (source_rgb(), 255 - source_rgb())]
    buffer = os.path.join(HERE, "corrupt-animated.webp")
    frames[0].save(buffer, save_all=True, append_images=frames[1:], duration=100, lossless=True)
    files["corrupt-animated.webp"] = open(buffer, "rb").read()
    for name, data in files.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
    return sorted(files)


def main():
    rgb = source_rgb()
    manifest = {"decodes": [], "corrupt": []}
    for name, (data, expected) in png_variants(rgb).items():
        with open(os.path.join(HERE, name + ".png"), "wb") as f:
            f.write(data)
        write_pgm(os.path.join(HERE, name + ".pgm"), expected)
        manifest["decodes"].append({"file": name + ".png", "reference": name + ".pgm", "width": W, "height": H,
                                    "tolerance": 2, "targetPixels": 0})
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in jpeg_variants(rgb, tmp).items():
            write_pgm(os.path.join(HERE, name + ".pgm"), reference_jpeg(path))
            manifest["decodes"].append({"file": name + ".jpg", "reference": name + ".pgm", "width": W, "height": H,
                                        "tolerance": 3, "targetPixels": 0})
    for denominator in (2, 4, 8):
        ref = scaled_reference(os.path.join(HERE, "jpeg-baseline.jpg"), denominator)
        name = f"jpeg-baseline-scaled-1-{denominator}"
        write_pgm(os.path.join(HERE, name + ".pgm"), ref)
        w, h = (W + denominator - 1) // denominator, (H + denominator - 1) // denominator
        manifest["decodes"].append({"file": "jpeg-baseline.jpg", "reference": name + ".pgm", "width": w,
                                    "height": h, "tolerance": 3, "targetPixels": w * h})
    for name, (expected, tolerance) in webp_variants(rgb).items():
        write_pgm(os.path.join(HERE, name + ".pgm"), expected)
        manifest["decodes"].append({"file": name + ".webp", "reference": name + ".pgm", "width": W, "height": H,
                                    "tolerance": tolerance, "targetPixels": 0})
    manifest["corrupt"] = corrupt_inputs() + webp_corrupt_inputs()
    # Large and cheap to store: decoding it takes a few milliseconds, enough to run out a 1 ms CPU budget.
    gradient = (np.add.outer(np.arange(3000), np.arange(3000)) % 256).astype(np.uint8)
    with open(os.path.join(HERE, "large-gradient.png"), "wb") as f:
        f.write(png_bytes(gradient[:, :, None], 0, 8))
    Image.fromarray(gradient).save(os.path.join(HERE, "large-gradient.webp"), lossless=True)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
