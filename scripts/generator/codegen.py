"""Reproducible barcode and document images for samples, test fixtures and benchmarks.

Symbols come from zint (Debian's `zint`), pictures from Pillow and NumPy (Debian's python3-pil and
python3-numpy). Everything is seeded, so running a generator twice writes the same files.
Run with /usr/bin/python3 (the interpreter Debian's packages install into).
"""
import os
import random
import subprocess
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ZINT_QR = 58
ZINT_PDF417 = 55


def symbol(kind, payload, ecc=None, version=None, columns=None):
    """A barcode at one pixel per module, as a NumPy uint8 array (0 black, 255 white), no quiet zone."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        data, out = os.path.join(tmp, "data.bin"), os.path.join(tmp, "symbol.png")
        with open(data, "wb") as f:
            f.write(payload)
        cmd = ["zint", "-b", str(kind), "--binary", "--scale=0.5", "--border=0", "--whitesp=0", "--vwhitesp=0",
               "-i", data, "-o", out]
        if ecc is not None:
            cmd.append(f"--secure={ecc}")
        if version is not None:
            cmd.append(f"--vers={version}")
        if columns is not None:
            cmd.append(f"--cols={columns}")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return np.array(Image.open(out).convert("L"))


def render(module_array, module_px, quiet_modules=4):
    """Scales a one-pixel-per-module symbol to `module_px` pixels per module with a white quiet zone."""
    big = np.kron(module_array, np.ones((module_px, module_px), dtype=np.uint8))
    pad = quiet_modules * module_px
    return np.pad(big, pad, constant_values=255)


def qr(text, module_px=6, ecc=2, version=None):
    return render(symbol(ZINT_QR, text, ecc=ecc, version=version), module_px)


def pdf417(payload, module_px=3, columns=None):
    return render(symbol(ZINT_PDF417, payload, columns=columns), module_px, quiet_modules=2)


def verification_url(env_id, transaction_id, code, form="webapp"):
    """The two verification QR forms of CONTRACT §2."""
    if form == "webapp":
        return (f"https://apps.pingone.com/{env_id}/verify/verify-webapp/v2/index.html?txnid={transaction_id}"
                "&url=https%3A%2F%2Fapi.pingone.com%2Fv1%2FidValidations%2FwebVerifications"
                f"&code={code}")
    return f"https://api.pingone.com/v1/idValidations/webVerifications?envId={env_id}&txnid={transaction_id}&code={code}"


def aamva(fields, iin="636014", version="10", jurisdiction_version="00", subfile="DL"):
    """An AAMVA DL/ID card design standard payload: header, one-subfile directory, elements."""
    body = subfile + "".join(f"{key}{value}\n" for key, value in fields) + "\r"
    header_len = len("@\n\x1e\rANSI ") + 6 + 2 + 2 + 2 + 10
    header = f"@\n\x1e\rANSI {iin}{version}{jurisdiction_version}01{subfile}{header_len:04d}{len(body):04d}"
    return header + body


def paper(width, height, seed, tint=(246, 244, 238)):
    """A plain card or paper background with a little texture and printed-looking text lines."""
    rng = np.random.default_rng(seed)
    base = np.empty((height, width, 3), dtype=np.float32)
    base[:] = tint
    base += rng.normal(0, 3, (height, width, 1))
    image = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    r = random.Random(seed)
    for line in range(8):
        y = int(height * 0.06) + line * max(14, height // 14)
        if y > height - 20:
            break
        text = "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 <") for _ in range(r.randint(12, 40)))
        draw.text((int(width * 0.04), y), text, fill=(40, 40, 60), font=font)
    return image


def place(background, code, x, y):
    """Pastes a grayscale code array onto an RGB background at (x, y)."""
    tile = Image.fromarray(code, "L").convert("RGB")
    background.paste(tile, (x, y))
    return background


def save(image, path, **options):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    image.save(path, **options)


ICAO_VALUES = {c: i for i, c in enumerate("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")}


def check_digit(text):
    """ICAO 9303 check digit: weights 7, 3, 1; '<' counts as 0."""
    return str(sum(ICAO_VALUES.get(c, 0) * (7, 3, 1)[i % 3] for i, c in enumerate(text)) % 10)


def mrz_name(surname, given, length):
    """The ICAO 9303 name field: surname, `<<`, given names joined by `<`; spaces and hyphens become `<`,
    apostrophes are dropped; padded with `<` or cut to `length`."""
    clean = lambda part: part.upper().replace("'", "").replace(" ", "<").replace("-", "<")  # noqa: E731
    names = clean(surname) + ("<<" + "<".join(clean(g) for g in given) if given else "")
    return names.ljust(length, "<")[:length]


def td3(surname, given, number, nationality, birth, sex, expiry, personal="", issuing="UTO", code="P<",
        personal_check=None):
    """A valid TD3 (passport) MRZ; dates as YYMMDD. An empty personal number's check digit is `0`, or
    `personal_check` (`<` is also allowed by ICAO 9303 then)."""
    line1 = (code + issuing + mrz_name(surname, given, 39))[:44]
    number = number.ljust(9, "<")
    personal = personal.ljust(14, "<")
    body = number + check_digit(number) + nationality + birth + check_digit(birth) + sex + expiry + check_digit(expiry)
    body += personal + (personal_check if personal_check and personal == "<" * 14 else check_digit(personal))
    composite = check_digit(body[0:10] + body[13:20] + body[21:43])
    return line1 + "\n" + body + composite


def td2(surname, given, number, nationality, birth, sex, expiry, optional="", issuing="UTO", code="I<"):
    """A valid TD2 MRZ (2 x 36); dates as YYMMDD."""
    line1 = code + issuing + mrz_name(surname, given, 31)
    number = number.ljust(9, "<")
    body = number + check_digit(number) + nationality + birth + check_digit(birth) + sex + expiry + check_digit(expiry)
    body += optional.ljust(7, "<")
    composite = check_digit(body[0:10] + body[13:20] + body[21:35])
    return line1 + "\n" + body + composite


def td1(surname, given, number, nationality, birth, sex, expiry, optional1="", optional2="", issuing="UTO", code="I<"):
    """A valid TD1 (ID card) MRZ (3 x 30); dates as YYMMDD."""
    number = number.ljust(9, "<")
    line1 = code + issuing + number + check_digit(number) + optional1.ljust(15, "<")
    line2 = birth + check_digit(birth) + sex + expiry + check_digit(expiry) + nationality + optional2.ljust(11, "<")
    line2 += check_digit(line1[5:30] + line2[0:7] + line2[8:15] + line2[18:29])
    return line1 + "\n" + line2 + "\n" + mrz_name(surname, given, 30)


def mrv(surname, given, number, nationality, birth, sex, expiry, optional="", issuing="UTO", code="V<", length=44):
    """A valid machine-readable visa MRZ (ICAO 9303 Part 7): MRV-A with `length` 44, MRV-B with 36; dates as YYMMDD.
    The second line is a passport's up to the expiry date's check digit, then optional data to the end of the
    line: no personal-number check digit and no composite."""
    line1 = code + issuing + mrz_name(surname, given, length - 5)
    number = number.ljust(9, "<")
    body = number + check_digit(number) + nationality + birth + check_digit(birth) + sex + expiry + check_digit(expiry)
    return line1 + "\n" + body + optional.ljust(length - len(body), "<")[:length - len(body)]


def card_front(seed, title="DRIVER LICENSE", size=(800, 500)):
    """A card front: printed lines and a portrait box, no barcode."""
    card = paper(size[0], size[1], seed=seed, tint=(228, 236, 248))
    draw = ImageDraw.Draw(card)
    draw.rectangle([30, 110, 230, 370], fill=(150, 160, 175))
    draw.ellipse([80, 150, 180, 260], fill=(205, 180, 160))
    draw.text((260, 20), title, fill=(20, 40, 90), font=ImageFont.load_default())
    return card


def selfie(seed, size=(480, 640)):
    """A stand-in for a selfie: a face-like ellipse on a plain background."""
    rng = np.random.default_rng(seed)
    background = np.empty((size[1], size[0], 3), dtype=np.float32)
    background[:] = (120, 140, 160)
    background += rng.normal(0, 4, (size[1], size[0], 1))
    image = Image.fromarray(np.clip(background, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    w, h = size
    draw.ellipse([w * 0.25, h * 0.2, w * 0.75, h * 0.7], fill=(210, 180, 160))
    draw.rectangle([w * 0.2, h * 0.75, w * 0.8, h], fill=(60, 70, 90))
    return image
