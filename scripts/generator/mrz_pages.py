#!/usr/bin/python3
"""Passport data pages and ID cards with an ICAO 9303 machine-readable zone, under realistic capture conditions:
the corpus of scripts/bench-mrz and the library of Tests/MRZReadingTests/Fixtures/generate.py.

Documents are invented (names, numbers, dates; the fictional state UTO and real-looking codes) with valid MRZs:
TD3 (passport, 2 x 44), TD2 (2 x 36), TD1 (ID card, 3 x 30) and the visas MRV-A (2 x 44) and MRV-B (2 x 36),
check digits from codegen. A page is drawn at a given resolution: a tinted guilloche background, a title, a photo
box, visible-zone fields in DejaVu Sans, and the MRZ in OCR-B (Debian's fonts-ocr-b) at the ICAO size (pitch
2.54 mm, capitals 2.0-2.4 mm, lines about 4.2 mm apart) on a plain clear zone. Each capture condition is a
function applied to a rendered page; a few conditions change the document instead (CONDITIONS says which).

The MRZ of each corpus page is printed in one of the six cuts of fonts-ocr-b (CUTS), in turn (page_cut: evenly in
each condition and over the corpus, so a page's cut depends on --per-condition), so that the reader is measured
on more than the cut its templates come from (OCRB.otf, scripts/generator/ocrb_glyphs.py). Pages in
the two cuts least like the templates (REPORT_CUTS) are the "report" split, and the others go to "tune" or
"report" by a seeded coin: tune the reader on "tune", report on "report".

Usage: mrz_pages.py OUT_DIR [--per-condition N] [--seed S] [--conditions A,B,...] [--jobs J]
Writes OUT_DIR/<condition>/<nnn>.(jpg|png) and OUT_DIR/expected.json
{relative path: {"condition", "format": "TD1"|"TD2"|"TD3"|"MRV-A"|"MRV-B"|null, "lines": [MRZ lines] or [],
"font": the OCR-B cut of its MRZ (of its OCR-B lines on no-mrz pages), "split": "tune"|"report",
"expect": "read" (the lines, exactly) | "refuse" (the printed MRZ is invalid: nothing must be returned) |
"none" (no MRZ), and on the scale-* pages "document": the name the three scales of one page share}}.
Seeded (every image from its own seed): the same command writes byte-identical files, whatever --jobs is.
Run with /usr/bin/python3 (needs python3-pil, python3-numpy, fonts-ocr-b; DejaVu fonts are used when present).
"""
import argparse
import functools
import json
import math
import multiprocessing
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

import codegen

OCRB_DIR = "/usr/share/fonts/opentype/ocr-b/"
OCRB = OCRB_DIR + "OCRB.otf"
OCRB_SHARP = OCRB_DIR + "OCRBS.otf"  # "OCR B Sharp": the same metrics, sharper corners
SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
SANS_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
PITCH_MM = 2.54          # ICAO 9303: 10 characters per inch
OCRB_CAP = 0.715         # OCR-B capital height per em (measured on OCRB.otf)
SANS_CAP = 0.73          # DejaVu Sans capital height per em

# The cuts of fonts-ocr-b, all with the same metrics (OCRB_CAP holds for each): Regular (the templates' cut),
# Sharp, Outline (hollow strokes), Oblique (about 10 degrees), and Inverted Sharp and Inverted, whose glyphs are
# solid cells with the character cut out. No MRZ is printed white on black: an inverted cut is printed as its
# cut-out shape in ink (draw_cut_out), which is the Sharp or Regular glyph again to within 2 % of its pixels.
CUTS = ["OCRB", "OCRBS", "OCRBE", "OCRBF", "OCRBL", "OCRBX"]
INVERTED_CUTS = {"OCRBE", "OCRBX"}
# The two cuts least like the templates' once printed (Outline and Oblique: the inverted ones print as Sharp and
# Regular): every page in them is in the "report" split, kept apart from tuning.
REPORT_CUTS = {"OCRBF", "OCRBL"}

# Size in mm, characters per line, lines. Visas: MRV-A fills a passport page, MRV-B leaves room beside it.
FORMATS = {"TD3": ((125.0, 88.0), 44, 2), "TD2": ((105.0, 74.0), 36, 2), "TD1": ((85.6, 54.0), 30, 3),
           "MRV-A": ((120.0, 80.0), 44, 2), "MRV-B": ((105.0, 74.0), 36, 2)}
# The layout (margins, title, photo and field sizes) a visa borrows: the passport's for MRV-A, the TD2 card's for MRV-B.
LAYOUT = {"MRV-A": "TD3", "MRV-B": "TD2"}

# Mostly passports; TD1 from the second image of every condition on.
FORMAT_CYCLE = ["TD3", "TD1", "TD3", "TD2", "TD3"]

# Plausible three-letter codes that neither ISO 3166-1 nor ICAO 9303 lists (checked against
# Sources/MRZReading/ICAOStates.swift): unknown-state pages print them, and they must be read as printed.
UNLISTED_STATES = ["INP", "BDR", "COU", "VLD", "NRD", "OST", "ZRB", "TRV"]
NATIONALITIES = ["D<<", "GBR", "FRA", "NLD", "ITA", "ESP", "SWE", "NOR", "POL", "CAN", "AUS", "NZL", "JPN", "KOR",
                 "BRA", "MEX", "ZAF", "IRL", "BEL", "CHE", "AUT", "PRT", "GRC", "FIN", "DNK", "USA", "IND", "KEN"]
LOOKALIKES = "O0I1S5B8Z2"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
ONSETS = ["B", "D", "F", "G", "H", "K", "L", "M", "N", "P", "R", "S", "T", "V", "Z", "BR", "DR", "KR", "ST", "TR",
          "SH", "CH", "GR", "J", "W", "Y", "TH", "KV"]
VOWELS = ["A", "E", "I", "O", "U", "A", "E", "O", "AI", "EI", "OU", "IA", "Y"]
CODAS = ["", "", "", "N", "R", "S", "L", "M", "K", "ND", "RT", "SS", "TH", "LD"]
PREFIXES = ["VAN DER ", "DE LA ", "DI ", "O'", "AL-", "BEN ", "MAC", "VON "]
PLACES = ["NORTH HAVEN", "PORT ELISA", "KALDOREN", "ST. MIRABEL", "NEW TAVISH", "VELDRA", "OSTREVIK", "LUMEN BAY"]
AUTHORITIES = ["MINISTRY OF INTERIOR", "PASSPORT OFFICE", "CONSULATE GENERAL", "CIVIL REGISTRY", "STATE POLICE"]

# Paper, two guilloche inks, title ink.
PALETTES = [
    ((236, 244, 232), (150, 196, 160), (186, 168, 210), (30, 80, 60)),
    ((248, 236, 238), (214, 160, 176), (160, 178, 214), (120, 30, 60)),
    ((232, 240, 250), (150, 176, 220), (200, 170, 150), (20, 50, 110)),
    ((246, 240, 224), (200, 180, 130), (150, 190, 190), (90, 60, 20)),
    ((240, 234, 248), (180, 160, 220), (160, 206, 180), (70, 40, 110)),
]


# ---- documents ----

def invented(rng, low, high):
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(rng.randint(low, high))) + rng.choice(CODAS)


def person(rng):
    """(surname, given names) as printed in the visible zone; some long enough to be cut in the MRZ."""
    style = rng.random()
    if style < 0.12:  # truncated in every format: three long parts and long given names
        surname = "-".join(invented(rng, 3, 4) for _ in range(rng.randint(2, 3)))
        given = [invented(rng, 3, 4) for _ in range(rng.randint(2, 4))]
        return surname, given
    surname = invented(rng, 2, 3)
    if style < 0.30:
        surname = rng.choice(PREFIXES) + surname
    elif style < 0.42:
        surname += rng.choice([" ", "-"]) + invented(rng, 2, 3)
    return surname, [invented(rng, 1, 3) for _ in range(rng.choice([1, 1, 2, 2, 3]))]


def document_number(rng):
    """Nine characters or fewer; about a third built on purpose from the look-alikes O/0, I/1, S/5, B/8, Z/2."""
    style = rng.random()
    if style < 0.32:
        return "".join(rng.choice(LOOKALIKES) if rng.random() < 0.7 else rng.choice(LETTERS + DIGITS) for _ in range(9))
    if style < 0.55:
        return "".join(rng.choice(LETTERS) for _ in range(2)) + "".join(rng.choice(DIGITS) for _ in range(7))
    if style < 0.75:
        return (rng.choice(LETTERS) + "".join(rng.choice(DIGITS) for _ in range(6)) + rng.choice(LETTERS)
                + rng.choice(DIGITS))
    if style < 0.88:
        return "".join(rng.choice(DIGITS) for _ in range(9))
    return "".join(rng.choice(LETTERS + DIGITS) for _ in range(rng.randint(6, 8)))  # padded with < in the MRZ


def alnum(rng, low, high, letters=0.3):
    return "".join(rng.choice(LETTERS) if rng.random() < letters else rng.choice(DIGITS) for _ in range(rng.randint(low, high)))


def date(rng, first_year, last_year):
    """(year, month, day)."""
    year, month = rng.randint(first_year, last_year), rng.randint(1, 12)
    return year, month, rng.randint(1, [31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1])


def yymmdd(d):
    return f"{d[0] % 100:02d}{d[1]:02d}{d[2]:02d}"


def printed_date(d):
    return f"{d[2]:02d} {MONTHS[d[1] - 1]} {d[0]}"


def mrz_lines(doc):
    """The MRZ lines of a document dict (as random_document makes it)."""
    args = (doc["surname"], doc["given"], doc["number"], doc["nationality"], yymmdd(doc["birth"]), doc["sex"],
            yymmdd(doc["expiry"]))
    if doc["format"] == "TD3":
        text = codegen.td3(*args, personal=doc["optional"], issuing=doc["issuing"], code=doc["code"],
                           personal_check=doc.get("personal_check"))
    elif doc["format"] == "TD2":
        text = codegen.td2(*args, optional=doc["optional"], issuing=doc["issuing"], code=doc["code"])
    elif doc["format"] in ("MRV-A", "MRV-B"):
        text = codegen.mrv(*args, optional=doc["optional"], issuing=doc["issuing"], code=doc["code"],
                           length=FORMATS[doc["format"]][1])
    else:
        text = codegen.td1(*args, optional1=doc["optional"], optional2=doc["optional2"], issuing=doc["issuing"],
                           code=doc["code"])
    return text.split("\n")


def random_document(rng, fmt):
    surname, given = person(rng)
    nationality = "UTO" if rng.random() < 0.45 else rng.choice(NATIONALITIES)
    issuing = "UTO" if rng.random() < 0.6 else nationality
    expiry = date(rng, 2018, 2037)
    doc = {
        "format": fmt, "surname": surname, "given": given, "number": document_number(rng), "issuing": issuing,
        "nationality": nationality, "birth": date(rng, 1940, 2012), "sex": rng.choice("MMMMFFFF<"), "expiry": expiry,
        "issue": (expiry[0] - rng.choice([5, 10]), expiry[1], min(expiry[2], 28)),
        "place": rng.choice(PLACES), "authority": rng.choice(AUTHORITIES), "optional": "", "optional2": "",
    }
    if fmt == "TD3":
        doc["code"] = rng.choice(["P<"] * 8 + ["PD", "PO"])
        if rng.random() < 0.55:
            doc["optional"] = alnum(rng, 8, 14)
        else:
            doc["personal_check"] = rng.choice(["0", "<"])  # ICAO 9303 allows either for an empty personal number
    elif fmt == "TD2":
        doc["code"] = rng.choice(["I<", "I<", "ID", "IR"])
        doc["optional"] = alnum(rng, 3, 7) if rng.random() < 0.3 else ""
    elif fmt in ("MRV-A", "MRV-B"):
        # A visa: the state issuing it and a foreign holder; the second character of the code is the issuer's.
        doc["code"] = rng.choice(["V<", "V<", "VC", "VD"])
        doc["nationality"] = rng.choice(NATIONALITIES)
        room = FORMATS[fmt][1] - 28
        doc["optional"] = alnum(rng, room // 2, room) if rng.random() < 0.5 else ""
        doc["passport"] = document_number(rng)
        doc["entries"], doc["stay"] = rng.choice(["1", "2", "MULT"]), str(rng.choice([15, 30, 90, 180]))
        doc["issue"] = (expiry[0] - 1, expiry[1], min(expiry[2], 28))  # valid for a year
    else:
        doc["code"] = rng.choice(["I<", "I<", "ID", "IR", "AC"])
        doc["optional"] = alnum(rng, 6, 15) if rng.random() < 0.6 else ""
        doc["optional2"] = alnum(rng, 4, 11) if rng.random() < 0.2 else ""
    doc["lines"] = mrz_lines(doc)
    return doc


def specimen(fmt):
    """The ICAO 9303 specimen documents (ANNA MARIA ERIKSSON of Utopia)."""
    doc = {"format": fmt, "surname": "ERIKSSON", "given": ["ANNA", "MARIA"], "issuing": "UTO", "nationality": "UTO",
           "birth": (1974, 8, 12), "sex": "F", "expiry": (2012, 4, 15), "issue": (2002, 4, 16), "place": "ZENITH",
           "authority": "PASSPORT OFFICE", "optional": "", "optional2": ""}
    if fmt == "TD3":
        doc.update(code="P<", number="L898902C3", optional="ZE184226B")
    else:
        doc.update(code="I<", number="D23145890")
    doc["lines"] = mrz_lines(doc)
    return doc


# ---- drawing ----

@functools.lru_cache(maxsize=256)
def font(path, size):
    try:
        return ImageFont.truetype(path, max(6, int(round(size))))
    except OSError:  # DejaVu missing: Pillow's own font (fonts-ocr-b is required for the MRZ)
        if path.startswith(OCRB_DIR):
            raise
        return ImageFont.load_default()


def guilloche(width, height, k, r, palette):
    """Paper with two or three families of fine wavy lines and a rosette, as float32 RGB."""
    paper = np.array(palette[0], np.float32)
    image = np.empty((height, width, 3), np.float32)
    image[:] = paper
    y = np.arange(height, dtype=np.float32)[:, None] / k
    x = np.arange(width, dtype=np.float32)[None, :] / k
    width_mm = max(0.07, 0.9 / k)  # never finer than about a pixel
    for family in range(r.randint(2, 3)):
        ink = np.array(palette[1 + family % 2], np.float32)
        angle = r.uniform(-0.6, 0.6)
        u, v = x * math.cos(angle) + y * math.sin(angle), -x * math.sin(angle) + y * math.cos(angle)
        period = r.uniform(0.7, 1.5)
        t = v / period + r.uniform(0.6, 2.2) * np.sin(u * (2 * math.pi / r.uniform(9, 30)) + r.uniform(0, 6.3)) \
            + r.uniform(0.1, 0.8) * np.sin(u * (2 * math.pi / r.uniform(3, 8)) + r.uniform(0, 6.3))
        distance = np.abs(t - np.round(t)) * period
        line = np.clip(1.0 - distance / width_mm, 0, 1) * r.uniform(0.35, 0.6)
        image -= line[..., None] * (paper - ink)
    # A rosette: rings modulated by a sine of the angle, around a point of the page.
    cx, cy = r.uniform(0.3, 0.8) * width / k, r.uniform(0.2, 0.6) * height / k
    radius = np.sqrt((x - cx) ** 2 + (y - cy) ** 2)
    theta = np.arctan2(y - cy, x - cx)
    period = r.uniform(1.2, 2.0)
    t = (radius + r.uniform(0.5, 1.5) * np.sin(theta * r.randint(8, 24))) / period
    ring = np.clip(1.0 - np.abs(t - np.round(t)) * period / width_mm, 0, 1) * np.exp(-radius / r.uniform(15, 30)) * 0.5
    image -= ring[..., None] * (paper - np.array(palette[2], np.float32))
    return image


def face(width, height, r):
    """A grey portrait stand-in: background, shoulders, head, hair, eyes, mouth."""
    image = Image.new("L", (width, height), r.randint(200, 230))
    draw = ImageDraw.Draw(image)
    w, h = width, height
    draw.ellipse([w * 0.05, h * 0.72, w * 0.95, h * 1.3], fill=r.randint(50, 90))
    draw.rectangle([w * 0.4, h * 0.55, w * 0.6, h * 0.8], fill=r.randint(130, 160))
    skin = r.randint(140, 175)
    draw.ellipse([w * 0.25, h * 0.18, w * 0.75, h * 0.68], fill=skin)
    draw.chord([w * 0.22, h * 0.1, w * 0.78, h * 0.5], 180, 360, fill=r.randint(30, 90))
    for ex in (0.38, 0.62):
        draw.ellipse([w * (ex - 0.05), h * 0.4, w * (ex + 0.05), h * 0.44], fill=40)
    draw.line([w * 0.42, h * 0.57, w * 0.58, h * 0.57], fill=90, width=max(1, h // 60))
    return image.filter(ImageFilter.GaussianBlur(max(0.6, w / 120)))


def fit(text, face_font, width):
    while text and face_font.getlength(text) > width:
        text = text[:-1]
    return text


def visible_rows(doc):
    """Rows of (label, value) cells of the visible zone."""
    given = " ".join(doc["given"])
    sex = {"<": "X"}.get(doc["sex"], doc["sex"])
    nationality = "UTOPIAN" if doc["nationality"] == "UTO" else doc["nationality"].replace("<", "")
    if doc["format"] in ("MRV-A", "MRV-B"):
        return [[("Valid for / Valable pour", "UTOPIA" if doc["issuing"] == "UTO" else doc["issuing"]),
                 ("From / Du", printed_date(doc["issue"])), ("Until / Au", printed_date(doc["expiry"]))],
                [("Type / Type", doc["code"][1].replace("<", "C")), ("Entries / Entrées", doc["entries"]),
                 ("Duration / Durée", doc["stay"] + " DAYS")],
                [("Issued in / Délivré à", doc["place"]), ("Passport No. / No. du passeport", doc["passport"])],
                [("Surname, given names / Nom, prénoms", doc["surname"] + ", " + given)],
                [("Visa No.", doc["number"]), ("Nationality / Nationalité", nationality)]]
    if doc["format"] == "TD3":
        return [[("Type / Type", doc["code"].replace("<", "")), ("Code / Code", doc["issuing"].replace("<", "")),
                 ("Passport No. / No. du passeport", doc["number"])],
                [("Surname / Nom", doc["surname"])], [("Given names / Prénoms", given)],
                [("Nationality / Nationalité", nationality)],
                [("Date of birth / Date de naissance", printed_date(doc["birth"])), ("Sex / Sexe", sex)],
                [("Place of birth / Lieu de naissance", doc["place"])],
                [("Date of issue / Date de délivrance", printed_date(doc["issue"])), ("Authority / Autorité", doc["authority"])],
                [("Date of expiry / Date d'expiration", printed_date(doc["expiry"]))]]
    return [[("Surname", doc["surname"])], [("Given names", given)],
            [("Sex", sex), ("Nationality", nationality), ("Date of birth", printed_date(doc["birth"]))],
            [("Document No.", doc["number"]), ("Date of expiry", printed_date(doc["expiry"]))],
            [("Place of birth", doc["place"]), ("Authority", doc["authority"])]]


TITLES = {"TD3": "PASSPORT  PASSEPORT", "TD2": "IDENTITY CARD  CARTE D'IDENTITÉ", "TD1": "IDENTITY CARD",
          "MRV-A": "VISA", "MRV-B": "VISA"}


def render_page(doc, dpi, seed, mrz=None, ocrb_lines=None, title=None, rows=None, photo=True, texture=True,
                cut=None):
    """One data page or card at `dpi`: RGB. `mrz` defaults to the document's lines; pass [] for none, and
    `ocrb_lines` for other OCR-B text printed where the MRZ would be (no-MRZ pages). `title` and `rows` (of
    (label, value) cells) replace the visible zone's; `texture` False leaves out the paper grain. `cut` (one of
    CUTS) prints the OCR-B lines in that cut; by default a quarter of pages are in Sharp, the rest in Regular.
    The page's info holds "mrz_cap_px", the OCR-B capitals' height in pixels, and "mrz_rows", the rows from the
    top of the first MRZ line's capitals to the last one's baseline."""
    r = random.Random(seed)
    noise_rng = np.random.default_rng(r.randrange(2 ** 32))
    fmt = doc["format"]
    (w_mm, h_mm), chars, _ = FORMATS[fmt]
    style = LAYOUT.get(fmt, fmt)  # a visa is laid out as the card of its size
    k = dpi / 25.4
    width, height = round(w_mm * k), round(h_mm * k)
    palette = r.choice(PALETTES)
    mrz = doc["lines"] if mrz is None else mrz
    printed = mrz or ocrb_lines or []

    # The MRZ geometry (mm): capitals, line spacing, bottom line's baseline above the edge.
    cap = r.uniform(2.0, 2.4)
    spacing = r.uniform(4.05, 4.35)
    bottom = {"TD3": r.uniform(4.5, 6.0), "TD2": r.uniform(3.5, 5.0), "TD1": r.uniform(2.8, 3.8)}[style]
    lines_count = len(printed) if printed else FORMATS[fmt][2]
    band_top = h_mm - bottom - (lines_count - 1) * spacing - cap - r.uniform(2.0, 4.0)

    array = guilloche(width, height, k, r, palette)
    # The clear zone: plain paper, no pattern (ICAO 9303 part 3).
    clear = np.array(palette[0], np.float32) * 0.3 + 255 * 0.7
    array[round(band_top * k):] = clear
    image = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)

    # Title.
    margin = 4.5 if style == "TD3" else 3.5
    title_cap = 2.6 if style == "TD3" else 2.2
    title_font = font(SANS_BOLD, title_cap * k / SANS_CAP)
    draw.text((margin * k, (margin + title_cap) * k), title or TITLES[fmt], font=title_font, fill=palette[3], anchor="ls")
    state = "REPUBLIC OF UTOPIA" if doc["issuing"] == "UTO" else doc["issuing"].replace("<", "")
    state_font = font(SANS, title_cap * 0.8 * k / SANS_CAP)
    if title_font.getlength(title or TITLES[fmt]) + state_font.getlength(state) + 3 * k < (w_mm - 2 * margin) * k:
        draw.text(((w_mm - margin) * k, (margin + title_cap) * k), state, font=state_font, fill=palette[3], anchor="rs")

    # Photo box.
    top = margin + title_cap + 2.5
    photo_h = min(band_top - top - 2.0, {"TD3": 45.0, "TD2": 36.0, "TD1": 30.0}[style])
    photo_w = photo_h * 0.78
    if photo:
        portrait = face(max(8, round(photo_w * k)), max(8, round(photo_h * k)), r)
        image.paste(portrait.convert("RGB"), (round(margin * k), round(top * k)))

    # Visible-zone fields.
    x0 = margin + photo_w + 4.0 if photo else margin
    label_cap, value_cap = (1.25, 2.0) if style == "TD3" else (1.05, 1.75)
    row_pitch = label_cap + value_cap + (2.1 if style == "TD3" else 1.6)
    label_font, value_font = font(SANS, label_cap * k / SANS_CAP), font(SANS_BOLD, value_cap * k / SANS_CAP)
    y = top + label_cap
    for row in rows if rows is not None else visible_rows(doc):
        if y + label_cap + value_cap + 0.8 > band_top - 0.5:
            break
        column = (w_mm - margin - x0) / len(row)
        for i, (label, value) in enumerate(row):
            x = (x0 + i * column) * k
            draw.text((x, y * k), fit(label, label_font, column * k - 4), font=label_font, fill=(80, 80, 100), anchor="ls")
            draw.text((x, (y + value_cap + 0.9) * k), fit(value, value_font, column * k - 4), font=value_font,
                      fill=(25, 25, 35), anchor="ls")
        y += row_pitch

    # The MRZ (or other OCR-B lines): each character on the 2.54 mm pitch, with print jitter of a few hundredths.
    if printed:
        sharp = r.random() < 0.25  # drawn whatever `cut` is, so that the rest of the page does not change with it
        path = (OCRB_DIR + cut + ".otf") if cut else (OCRB_SHARP if sharp else OCRB)
        ocrb = font(path, cap * k / OCRB_CAP)
        bold = 1 if dpi >= 280 and r.random() < 0.2 else 0
        advance = ocrb.getlength("H")
        left = (w_mm - chars * PITCH_MM) / 2 + r.uniform(-0.5, 0.5)
        ink = tuple(r.randint(8, 40) for _ in range(3))
        for i, line in enumerate(printed):
            baseline = (h_mm - bottom - (len(printed) - 1 - i) * spacing) * k
            for j, character in enumerate(line):
                if character == " ":
                    continue
                x = (left + j * PITCH_MM) * k + (PITCH_MM * k - advance) / 2 + r.uniform(-0.04, 0.04) * k
                y = baseline + r.uniform(-0.04, 0.04) * k
                if cut in INVERTED_CUTS:
                    draw_cut_out(image, (x, y), character, ocrb, ink, bold)
                else:
                    draw.text((x, y), character, font=ocrb, fill=ink, anchor="ls", stroke_width=bold, stroke_fill=ink)

    if texture:
        grain = noise_rng.standard_normal((height, width, 1), dtype=np.float32) * 2.5
        image = Image.fromarray(np.clip(np.asarray(image, np.float32) + grain, 0, 255).astype(np.uint8), "RGB")
    # Where the MRZ is (or would be), for captures that scale by it or lay something across it.
    image.info["mrz_cap_px"] = cap * k
    image.info["mrz_rows"] = ((h_mm - bottom - (lines_count - 1) * spacing - cap) * k, (h_mm - bottom) * k)
    return image


def draw_cut_out(image, xy, character, face_font, ink, bold):
    """Prints in `ink` the character cut out of an inverted cut's solid cell (anchored at its left baseline, `xy`):
    the cell drawn as a mask, its outer ring of pixels dropped (partly covered, where the cell's edge falls), and the
    rest inverted."""
    x, y = xy
    size = face_font.size
    ox, oy = math.floor(x) - 2, math.floor(y - 1.0 * size) - 2  # the cell spans 0.93 em above the baseline, 0.27 below
    canvas = Image.new("L", (round(0.8 * size) + 6, round(1.3 * size) + 6), 0)
    ImageDraw.Draw(canvas).text((x - ox, y - oy), character, font=face_font, fill=255, anchor="ls")
    cell = np.asarray(canvas)
    rows, columns = np.nonzero(cell)
    if rows.size == 0:
        return
    glyph = np.zeros_like(cell)
    top, bottom, left, right = rows.min() + 1, rows.max(), columns.min() + 1, columns.max()
    glyph[top:bottom, left:right] = 255 - cell[top:bottom, left:right]
    mask = Image.fromarray(glyph, "L")
    if bold:
        mask = mask.filter(ImageFilter.MaxFilter(3))
    image.paste(ink, (ox, oy), mask)


# ---- captures ----

def homography(src, dst):
    """PIL PERSPECTIVE coefficients mapping output points `dst` to input points `src`."""
    rows, values = [], []
    for (x, y), (u, v) in zip(dst, src):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        values += [u, v]
    return tuple(np.linalg.solve(np.array(rows, float), np.array(values, float)))


def warp_onto(frame, page, quad, prefilter=True):
    """Draws `page` onto `frame` (RGB) with its corners at `quad` (top-left, top-right, bottom-right, bottom-left).
    `prefilter` False samples the page as it is, however small it lands (a camera's sensor sampling a screen)."""
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    bx, by = max(0, int(min(xs)) - 2), max(0, int(min(ys)) - 2)
    bw, bh = min(frame.width, int(max(xs)) + 3) - bx, min(frame.height, int(max(ys)) + 3) - by
    # Reduced first when it lands much smaller (the warp itself does not filter).
    scale = max(math.dist(quad[0], quad[1]), math.dist(quad[3], quad[2])) / page.width
    if scale < 0.85 and prefilter:
        page = page.resize((round(page.width * scale * 1.1), round(page.height * scale * 1.1)), Image.LANCZOS)
    w, h = page.size
    coeffs = homography([(0, 0), (w, 0), (w, h), (0, h)], [(x - bx, y - by) for x, y in quad])
    rgba = page.convert("RGBA")
    warped = rgba.transform((bw, bh), Image.PERSPECTIVE, coeffs, Image.BICUBIC)
    frame.paste(warped.convert("RGB"), (bx, by), warped.getchannel("A"))
    return frame


def desk(size, r, noise_rng):
    """A table, desk mat or fabric behind a photographed document (drawn at a quarter of the size: it is smooth)."""
    w, h = max(8, size[0] // 4), max(8, size[1] // 4)
    base = np.array(r.choice([(150, 110, 72), (92, 92, 98), (214, 210, 202), (46, 52, 62), (60, 96, 72), (170, 160, 150)]),
                    np.float32)
    small = noise_rng.standard_normal((h // 24 + 2, w // 24 + 2)).astype(np.float32)
    low = np.asarray(Image.fromarray(small, "F").resize((w, h), Image.BICUBIC))
    shade = 1 + low[..., None] * 0.06
    if r.random() < 0.5:  # grain or weave along one axis
        streaks = noise_rng.standard_normal(h).astype(np.float32)
        shade = shade + np.convolve(streaks, np.ones(3, np.float32) / 3, mode="same")[:, None, None] * 0.05
    quarter = Image.fromarray(np.clip(base * shade, 0, 255).astype(np.uint8), "RGB")
    return quarter.resize(size, Image.BICUBIC)


def lighting(image, r, depth, vignette=0.0):
    """Multiplies by a linear gradient (down to 1 - depth) in a random direction, and a vignette."""
    w, h = image.size
    angle = r.uniform(0, 2 * math.pi)
    y = np.linspace(-0.5, 0.5, h, dtype=np.float32)[:, None]
    x = np.linspace(-0.5, 0.5, w, dtype=np.float32)[None, :]
    t = (x * math.cos(angle) + y * math.sin(angle)) / 0.71 + 0.5  # 0..1 across the picture
    factor = 1 - depth * np.clip(t, 0, 1)
    if vignette:
        factor = factor * (1 - vignette * (x * x + y * y) * 2)
    return Image.fromarray(np.clip(np.asarray(image, np.float32) * factor[..., None], 0, 255).astype(np.uint8), "RGB")


def add_noise(image, noise_rng, sigma, chroma=0.3):
    array = np.asarray(image, np.float32)
    h, w = array.shape[:2]
    noise = noise_rng.standard_normal((h, w, 1), dtype=np.float32) * sigma
    if chroma:
        noise = noise + noise_rng.standard_normal((h, w, 3), dtype=np.float32) * (sigma * chroma)
    return Image.fromarray(np.clip(array + noise, 0, 255).astype(np.uint8), "RGB")


def on_bed(page, r, colour=None):
    """The page on a scanner bed or sheet a little larger than it."""
    colour = colour or tuple([r.randint(225, 252)] * 3)
    mx, my = int(page.width * r.uniform(0.04, 0.12)), int(page.height * r.uniform(0.04, 0.12))
    bed = Image.new("RGB", (page.width + 2 * mx, page.height + 2 * my), colour)
    bed.paste(page, (mx, my))
    return bed, colour


def scan(page, r, noise_rng, dpi):
    """A flat scan: the page, slightly soft, with a little sensor noise."""
    return add_noise(page.filter(ImageFilter.GaussianBlur(0.35 * dpi / 300)), noise_rng, 2.0, chroma=0)


def tilt(page, r, noise_rng, dpi, angle=None):
    angle = angle if angle is not None else r.choice([-1, 1]) * r.uniform(3, 15)
    bed, colour = on_bed(page, r)
    return add_noise(bed.rotate(angle, Image.BICUBIC, expand=True, fillcolor=colour), noise_rng, 2.0, chroma=0)


def upside_down(page, r, noise_rng, dpi):
    bed, _ = on_bed(scan(page, r, noise_rng, dpi), r)
    return bed.transpose(Image.ROTATE_180)


def rotated_90(page, r, noise_rng, dpi, turn=None):
    bed, _ = on_bed(scan(page, r, noise_rng, dpi), r)
    return bed.transpose(turn if turn is not None else r.choice([Image.ROTATE_90, Image.ROTATE_270]))


PHONE_FRAMES = [(4000, 3000), (4032, 3024), (3264, 2448), (2592, 1944), (1920, 1440), (3000, 4000)]


def photo(page, r, noise_rng, frame_size, fraction, skew, angle, blur):
    """The page photographed on a desk: `fraction` of the frame's width, its corners moved by up to `skew` of its
    size (perspective), turned by `angle` degrees, then camera blur, colour cast, uneven light and noise."""
    frame = desk(frame_size, r, noise_rng)
    corners, w = placement(r, frame_size, page.height / page.width, fraction, skew, angle)
    if blur:  # the camera's blur, on the page only (the desk is smooth): in page pixels
        page = page.filter(ImageFilter.GaussianBlur(blur * page.width / w))
    frame = warp_onto(frame, page, corners)
    return camera(frame, r, noise_rng, r.uniform(0.05, 0.3), r.uniform(0.1, 0.4), r.uniform(3, 7))


def placement(r, frame_size, aspect, fraction, skew, angle):
    """The corners (top-left, top-right, bottom-right, bottom-left) of a page `aspect` times as tall as wide,
    `fraction` of the frame's width, somewhere in the frame: moved by up to `skew` of its size, turned by `angle`
    degrees, and the far edge shorter (keystone); and the page's width in the frame before those."""
    fw, fh = frame_size
    w = fraction * fw
    h = w * aspect
    if h > 0.9 * fh:
        w, h = w * 0.9 * fh / h, 0.9 * fh
    cx, cy = fw / 2 + r.uniform(-0.5, 0.5) * (fw - w) * 0.8, fh / 2 + r.uniform(-0.5, 0.5) * (fh - h) * 0.8
    a = math.radians(angle)
    corners = []
    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        px, py = sx * w / 2 + r.uniform(-skew, skew) * w, sy * h / 2 + r.uniform(-skew, skew) * h
        corners.append((cx + px * math.cos(a) - py * math.sin(a), cy + px * math.sin(a) + py * math.cos(a)))
    # Keystone: the far edge is shorter, as when the phone is not held parallel to the page.
    if skew:
        keystone = r.uniform(0.0, skew)
        i = r.randrange(4)
        for j in (i, (i + 1) % 4):
            mx, my = sum(c[0] for c in corners) / 4, sum(c[1] for c in corners) / 4
            corners[j] = (corners[j][0] + (mx - corners[j][0]) * keystone, corners[j][1] + (my - corners[j][1]) * keystone)
    return corners, w


def camera(frame, r, noise_rng, depth, vignette, sigma):
    """A colour cast, uneven light and sensor noise in one pass (these frames are up to 12 MP)."""
    w, h = frame.size
    gains = np.array([r.uniform(0.88, 1.08), r.uniform(0.92, 1.04), r.uniform(0.85, 1.1)], np.float32)
    offset = r.uniform(-8, 8)
    angle = r.uniform(0, 2 * math.pi)
    y = np.linspace(-0.5, 0.5, h, dtype=np.float32)[:, None]
    x = np.linspace(-0.5, 0.5, w, dtype=np.float32)[None, :]
    t = np.clip((x * math.cos(angle) + y * math.sin(angle)) / 0.71 + 0.5, 0, 1)
    factor = (1 - depth * t) * (1 - vignette * (x * x + y * y) * 2)
    array = np.asarray(frame, np.float32)
    array *= factor[..., None]
    array *= gains
    array += noise_rng.standard_normal((h, w, 1), dtype=np.float32) * sigma + offset
    np.clip(array, 0, 255, out=array)
    return Image.fromarray(array.astype(np.uint8), "RGB")


def phone_perspective(page, r, noise_rng, dpi):
    frame = r.choice(PHONE_FRAMES)
    return photo(page, r, noise_rng, frame, r.uniform(0.5, 0.8), r.uniform(0.03, 0.08), r.uniform(-10, 10),
                 r.uniform(0.5, 1.2))


def phone_oblique(page, r, noise_rng, dpi):
    """The page photographed from the side: the phone turned 25-40 degrees about the page's vertical axis, so the
    page is foreshortened across (to the cosine: 0.77-0.91 of its width, characters narrower for their height) and
    its far edge shorter."""
    narrowed = page.resize((round(page.width * math.cos(math.radians(r.uniform(25, 40)))), page.height), Image.LANCZOS)
    frame = r.choice(PHONE_FRAMES)
    return photo(narrowed, r, noise_rng, frame, r.uniform(0.45, 0.7), r.uniform(0.03, 0.08), r.uniform(-6, 6),
                 r.uniform(0.3, 0.9))


def bent(page, r):
    """The page bent: bowed up or down across its width by 1-3 % of its height (a passport page bulging by the
    spine, a card on a curved surface), and half the time curling away towards one side edge (squeezed across up to
    5 % of its width there)."""
    array = np.asarray(page, np.float32)
    h, w = array.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    u = x / w
    ys = y + r.uniform(0.01, 0.03) * h * r.choice([-1, 1]) * (4 * (u - 0.5) ** 2 - 1 / 3)
    xs = x
    if r.random() < 0.5:
        side = r.choice([1, -1])  # 1: the right edge curls away, -1: the left
        t = u if side == 1 else 1 - u
        xs = x + side * t ** 3 * r.uniform(0.02, 0.05) * w
    xs, ys = np.clip(xs, 0, w - 1.001), np.clip(ys, 0, h - 1.001)
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    fx, fy = (xs - x0)[..., None], (ys - y0)[..., None]
    out = (array[y0, x0] * (1 - fx) * (1 - fy) + array[y0, x0 + 1] * fx * (1 - fy)
           + array[y0 + 1, x0] * (1 - fx) * fy + array[y0 + 1, x0 + 1] * fx * fy)
    return Image.fromarray(out.astype(np.uint8), page.mode)


def page_curl(page, r, noise_rng, dpi):
    """A bent page (`bent`) photographed from above."""
    frame = r.choice(PHONE_FRAMES)
    return photo(bent(page, r), r, noise_rng, frame, r.uniform(0.5, 0.75), r.uniform(0.0, 0.04), r.uniform(-4, 4),
                 r.uniform(0.3, 0.8))


def phone_dpi(r, fmt):
    # About the resolution the page has in the photo, capped: the warp enlarges the rest.
    return min(400, round(0.65 * 3600 / (FORMATS[fmt][0][0] / 25.4)))


def blur(page, r, noise_rng, dpi):
    return add_noise(page.filter(ImageFilter.GaussianBlur(r.uniform(1.0, 2.0))), noise_rng, 1.5, chroma=0)


def noise(page, r, noise_rng, dpi):
    return add_noise(page, noise_rng, r.uniform(10, 20))


def jpeg_low(page, r, noise_rng, dpi):
    return scan(page, r, noise_rng, dpi)  # the low quality is applied when saving


def uneven_light(page, r, noise_rng, dpi):
    bed, _ = on_bed(page, r)
    return add_noise(lighting(bed, r, r.uniform(0.4, 0.6), vignette=r.uniform(0.3, 0.6)), noise_rng, 2.5)


def glare(page, r, noise_rng, dpi, over_mrz=None):
    """A bright elliptical highlight, blended towards white: at most about 60 %, so ink under it stays darker than
    the paper around it."""
    w, h = page.size
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    over_mrz = r.random() < 0.5 if over_mrz is None else over_mrz
    cx, cy = r.uniform(0.2, 0.8) * w, (r.uniform(0.75, 0.9) if over_mrz else r.uniform(0.2, 0.6)) * h
    rx, ry, a = r.uniform(0.12, 0.3) * w, r.uniform(0.06, 0.15) * h, r.uniform(0, math.pi)
    u = ((x - cx) * math.cos(a) + (y - cy) * math.sin(a)) / rx
    v = (-(x - cx) * math.sin(a) + (y - cy) * math.cos(a)) / ry
    d2 = u * u + v * v
    alpha = r.uniform(0.45, 0.6) * np.minimum(1.0, 1.6 * np.exp(-d2 / 2))  # a flat bright core, soft edges
    array = np.asarray(page, np.float32)
    array = array + (255 - array) * alpha[..., None]
    return add_noise(Image.fromarray(array.astype(np.uint8), "RGB"), noise_rng, 2.5)


def small_in_frame(page, r, noise_rng, dpi):
    frame = r.choice([(4000, 3000), (4032, 3024)])
    return photo(page, r, noise_rng, frame, page.width / frame[0], r.uniform(0.0, 0.03), r.uniform(-4, 4),
                 r.uniform(0.0, 0.5))


def small_dpi(r, fmt):
    """The page at 15-25 % of a 4000-pixel-wide frame, but never with capitals under about 12.5 pixels."""
    width_in = FORMATS[fmt][0][0] / 25.4
    return max(round(r.uniform(0.15, 0.25) * 4000 / width_in), math.ceil(12.5 / (2.0 / 25.4)))


# ---- printed and scanned, on a screen, small, faded ----

def print_scan(page, r, noise_rng, dpi):
    """The page printed and scanned back; `page` is at the printer's resolution, twice the scan's. Printed as a
    halftone screen or in solid ink that spreads, on textured paper, under a faint laminate (a hologram or guilloche
    that crosses the MRZ, as a passport's does); then scanned at half the resolution, turned by up to a degree,
    softened, with noise (JPEG on saving)."""
    printed = halftone(page, r) if r.random() < 0.5 else ink_spread(page, r)
    printed = laminate(paper_texture(printed, r, noise_rng), r, dpi, page.info["mrz_rows"])
    bed, colour = on_bed(printed, r)
    bed = bed.rotate(r.uniform(-1.0, 1.0), Image.BICUBIC, expand=True, fillcolor=colour)
    scanned = bed.reduce(2).filter(ImageFilter.GaussianBlur(r.uniform(0.3, 0.6)))
    return add_noise(scanned, noise_rng, r.uniform(1.5, 3.0), chroma=0.2)


def halftone(page, r):
    """An offset print's halftone: each ink (cyan, magenta, yellow: the complements of red, green and blue) as round
    dots on a screen of its own angle, 4-6 pixels apart (100-150 lines per inch at 600 dpi), with soft dot edges.
    Full ink stays solid and no ink stays paper, so the MRZ's black is solid with ragged edges."""
    array = np.asarray(page, np.float32) / 255
    h, w = array.shape[:2]
    y = np.arange(h, dtype=np.float32)[:, None]
    x = np.arange(w, dtype=np.float32)[None, :]
    frequency = 2 * math.pi / r.uniform(4.0, 6.0)
    edge = 0.15  # the coverage over which a dot's rim goes from paper to ink
    out = np.empty_like(array)
    for channel, degrees in enumerate((15, 75, 0)):
        a = math.radians(degrees + r.uniform(-3, 3))
        u, v = (x * math.cos(a) + y * math.sin(a)) * frequency, (y * math.cos(a) - x * math.sin(a)) * frequency
        threshold = 0.5 + (0.5 - edge / 2) / 2 * (np.cos(u) + np.cos(v))  # edge/2 .. 1 - edge/2
        ink = np.clip((1 - array[..., channel] - threshold) / edge + 0.5, 0, 1)
        out[..., channel] = 1 - ink
    return Image.fromarray((out * 255 + 0.5).astype(np.uint8), "RGB")


def ink_spread(page, r):
    """Solid ink that spreads into the paper: the inked areas grown by up to a pixel (at twice the scan's
    resolution), then softened."""
    spread = Image.blend(page, page.filter(ImageFilter.MinFilter(3)), r.uniform(0.3, 1.0))
    return spread.filter(ImageFilter.GaussianBlur(r.uniform(0.4, 1.2)))


def paper_texture(image, r, noise_rng):
    """Paper: a blotchy shade of a few per cent and fine fibres along the grain, on ink and paper alike."""
    w, h = image.size
    blotches = noise_rng.standard_normal((h // 24 + 2, w // 24 + 2)).astype(np.float32)
    fibres = noise_rng.standard_normal((h, w // 6 + 2)).astype(np.float32)
    shade = (1 + np.asarray(Image.fromarray(blotches, "F").resize((w, h), Image.BICUBIC)) * r.uniform(0.01, 0.03)
             + np.asarray(Image.fromarray(fibres, "F").resize((w, h), Image.BILINEAR)) * r.uniform(0.01, 0.025))
    return Image.fromarray(np.clip(np.asarray(image, np.float32) * shade[..., None], 0, 255).astype(np.uint8), "RGB")


def laminate(image, r, dpi, mrz_rows):
    """A faint security overlay printed on or in the laminate, over the MRZ as well: either a hologram (pastel
    rainbow bands and rings, strongest in a strip through the MRZ, which lies in `mrz_rows`) or a guilloche of fine
    coloured lines over the whole page. Blended over the print: ink under it stays much darker than paper."""
    w, h = image.size
    k = dpi / 25.4
    y = np.arange(h, dtype=np.float32)[:, None] / k  # mm
    x = np.arange(w, dtype=np.float32)[None, :] / k
    a = r.uniform(-0.8, 0.8)
    u, v = x * math.cos(a) + y * math.sin(a), y * math.cos(a) - x * math.sin(a)
    if r.random() < 0.5:
        hue = u / r.uniform(6, 14) + 0.6 * np.sin(v / r.uniform(3, 8))
        colour = np.stack([130 + 125 * (0.5 + 0.5 * np.cos(2 * math.pi * (hue + shift))) for shift in (0, 1 / 3, 2 / 3)],
                          axis=-1)
        middle = r.uniform(*mrz_rows) / k
        cx, cy = r.uniform(0.2, 0.8) * w / k, middle + r.uniform(-10, 10)
        rings = 0.6 + 0.4 * np.cos(np.sqrt((x - cx) ** 2 + (y - cy) ** 2) * (2 * math.pi / r.uniform(1.5, 3.0)))
        # The strip: a band of 8-16 mm about a line through the MRZ, tilted a little.
        tilt_angle = r.uniform(-0.25, 0.25)
        distance = (y - middle) * math.cos(tilt_angle) - (x - w / k / 2) * math.sin(tilt_angle)
        strip = np.exp(-(distance / r.uniform(4, 8)) ** 2)
        alpha = (0.04 + r.uniform(0.2, 0.35) * strip) * rings
    else:
        colour = np.array(r.choice(PALETTES)[r.randint(1, 2)], np.float32)[None, None, :]
        period = r.uniform(0.8, 1.6)
        t = v / period + r.uniform(0.6, 2.0) * np.sin(u * (2 * math.pi / r.uniform(10, 30)) + r.uniform(0, 6.3))
        line = np.clip(1.0 - np.abs(t - np.round(t)) * period / max(0.08, 1.2 / k), 0, 1)
        alpha = line * r.uniform(0.3, 0.5)
    array = np.asarray(image, np.float32)
    array = array + (colour - array) * alpha[..., None]
    return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8), "RGB")


def print_dpi(r, fmt):
    """Twice a 200-300 dpi scan's: print_scan prints at this resolution and scans at half of it."""
    return 2 * r.choice([200, 250, 300])


SCREEN_FRAMES = [(1920, 1440), (2592, 1944), (3264, 2448), (4000, 3000)]
SCREEN_BACKGROUNDS = [(250, 250, 250), (236, 238, 242), (32, 33, 36), (18, 18, 18)]


def phone_screen(page, r, noise_rng, dpi):
    """The page shown on a screen (a viewer's background around it), photographed with a phone. The screen's pixels
    are red, green and blue stripes with a darker gap under each row, lit (its black is a dark grey); the camera,
    at an angle, takes each screen pixel in 0.8-1.25 of its own and samples them without filtering, so the grid
    beats with the sensor's: moiré bands. Then a little blur, a glare spot on the glass, a colour cast and noise
    (JPEG on saving)."""
    pw, ph = page.size
    sw = round(pw * r.uniform(1.06, 1.25))
    sh = max(round(ph * r.uniform(1.08, 1.2)), round(sw * r.uniform(0.56, 0.75)))
    screen = Image.new("RGB", (sw, sh), r.choice(SCREEN_BACKGROUNDS))
    screen.paste(page, ((sw - pw) // 2, (sh - ph) // 2 + r.randint(-(sh - ph) // 3, (sh - ph) // 3)))
    lit = np.asarray(screen, np.float32) * r.uniform(0.82, 0.94) + r.uniform(10, 26)
    # Three samples per screen pixel each way: column c lights channel c (the others leak a fifth), row 3 is a gap.
    mask = np.full((3, 3, 3), 0.3, np.float32)
    for c in range(3):
        mask[:, c, c] = 1.0
    mask[2] *= 0.6
    mask /= mask.mean(axis=(0, 1))  # the same mean light per channel
    subpixels = np.empty((sh * 3, sw * 3, 3), np.uint8)
    for c in range(3):
        tiled = np.tile(mask[..., c], (sh, sw))
        subpixels[..., c] = np.clip(np.repeat(np.repeat(lit[..., c], 3, axis=0), 3, axis=1) * tiled, 0, 255)
    shown = Image.fromarray(subpixels, "RGB").filter(ImageFilter.GaussianBlur(0.6))  # the lens, before the sensor
    # The bezel around the screen.
    border = round(0.03 * shown.width)
    device = Image.new("RGB", (shown.width + 2 * border, shown.height + 2 * border), (14, 14, 16))
    device.paste(shown, (border, border))
    device = glare(device, r, noise_rng, dpi)  # a reflection on the glass
    # A frame the screen fills half of or more, as one photographs a screen.
    width = device.width / 3 * r.uniform(0.8, 1.25)
    frame_size = r.choice([f for f in SCREEN_FRAMES if 0.45 <= width / f[0] <= 0.9] or [SCREEN_FRAMES[-1]])
    frame = desk(frame_size, r, noise_rng)
    fraction = min(0.9, width / frame_size[0])
    corners, _ = placement(r, frame_size, device.height / device.width, fraction, r.uniform(0.02, 0.06),
                           r.uniform(-6, 6))
    frame = warp_onto(frame, device, corners, prefilter=False)
    frame = frame.filter(ImageFilter.GaussianBlur(r.uniform(0.4, 0.9)))
    return camera(frame, r, noise_rng, r.uniform(0.05, 0.25), r.uniform(0.1, 0.3), r.uniform(3, 6))


def screen_dpi(r, fmt):
    """The page 850-1200 screen pixels wide, as a viewer shows a scan or photo of it."""
    return round(r.uniform(850, 1200) / (FORMATS[fmt][0][0] / 25.4))


def small_print(page, r, noise_rng, dpi):
    """A clean scan reduced as a whole until the MRZ's capitals are 6-8 pixels high (a thumbnail, a downsized
    upload)."""
    factor = r.uniform(6.0, 8.0) / page.info["mrz_cap_px"]
    scanned = scan(page, r, noise_rng, dpi)
    return scanned.resize((round(scanned.width * factor), round(scanned.height * factor)), Image.LANCZOS)


def faint(page, r, noise_rng, dpi):
    """Faded print: every ink pulled towards a light, slightly yellowed paper, to 28-45 % of its contrast (the MRZ
    a mid-grey, about 140-180), and a little soft."""
    paper = r.uniform(228, 246)
    tint = np.array([paper, paper - r.uniform(0, 4), paper - r.uniform(4, 14)], np.float32)
    array = tint - (255 - np.asarray(page, np.float32)) * r.uniform(0.28, 0.45)
    faded = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8), "RGB")
    return add_noise(faded.filter(ImageFilter.GaussianBlur(r.uniform(0.5, 1.0))), noise_rng, 2.0, chroma=0)


def rescan(page, r, noise_rng, dpi, factor):
    """A clean scan resampled by `factor`: the scale-* conditions, which share their page and scan (see make)."""
    scanned = scan(page, r, noise_rng, dpi)
    if factor == 1:
        return scanned
    size = (round(scanned.width * factor), round(scanned.height * factor))
    return scanned.resize(size, Image.LANCZOS if factor < 1 else Image.BICUBIC)


# ---- documents that test what is returned ----

def plain(r, fmt):
    """A random document; its MRZ must be read. Returns (document, expectation)."""
    return random_document(r, fmt), "read"


def invalid_print(r, fmt):
    """A document whose printed MRZ has its document number's check digit off by one, and the composite check digit
    recomputed over the printed characters: only that one check digit is wrong, and nothing must be returned."""
    doc = random_document(r, fmt)
    lines = list(doc["lines"])
    row, column = (0, 14) if fmt == "TD1" else (1, 9)
    wrong = str((int(lines[row][column]) + 1) % 10)
    lines[row] = lines[row][:column] + wrong + lines[row][column + 1:]
    doc["lines"] = with_composite(lines, fmt)
    return doc, "refuse"


def with_composite(lines, fmt):
    """The lines with their composite check digit computed over their characters as they are."""
    first, second = lines[0], lines[1]
    if fmt == "TD1":
        digit = codegen.check_digit(first[5:30] + second[0:7] + second[8:15] + second[18:29])
        return [first, second[:29] + digit, lines[2]]
    end = {"TD3": 43, "TD2": 35}[fmt]
    digit = codegen.check_digit(second[0:10] + second[13:20] + second[21:end])
    return [first, second[:end] + digit]


def zero_number(r, fmt):
    """A valid document whose number is nine zeros (check digit 0): read exactly."""
    doc = random_document(r, fmt)
    doc["number"] = "0" * 9
    doc["lines"] = mrz_lines(doc)
    return doc, "read"


def unknown_state(r, fmt):
    """A valid document issued by, and mostly for a national of, a state no list has: read as printed."""
    doc = random_document(r, fmt)
    doc["issuing"] = r.choice(UNLISTED_STATES)
    doc["nationality"] = doc["issuing"] if r.random() < 0.7 else r.choice(UNLISTED_STATES)
    doc["lines"] = mrz_lines(doc)
    return doc, "read"


def visa(fmt, r, _):
    """A valid visa of format `fmt` (MRV-A or MRV-B), whatever the page's turn in FORMAT_CYCLE: read exactly."""
    return random_document(r, fmt), "read"


# ---- pages without an MRZ ----

def no_mrz_page(index, r):
    """A licence front, an ID card front with a card-access number, or a passport observations page: the same
    style, visible-zone text and OCR-B lines, but no MRZ. Returns (document dict, page arguments)."""
    kind = index % 3
    doc = random_document(r, ["TD1", "TD1", "TD3"][kind])
    if kind == 0:
        number = "".join(r.choice(DIGITS + LETTERS) for _ in range(8))
        rows = [[("1.", doc["surname"])], [("2.", " ".join(doc["given"]))],
                [("3.", printed_date(doc["birth"]) + "  " + doc["place"])],
                [("4a.", printed_date(doc["issue"])), ("4b.", printed_date(doc["expiry"]))],
                [("5.", number), ("9.", r.choice(["AM/B/BE", "B", "B/C1/D1"]))]]
        ocrb = [f"DL {number[:3]} {number[3:6]} {number[6:]}  {yymmdd(doc['expiry'])}",
                f"{doc['issuing'].replace('<', '')} {alnum(r, 6, 10, 0.0)} CLASS {r.choice('ABCD')}"]
        return doc, dict(title="DRIVING LICENCE", rows=rows, ocrb_lines=ocrb[:r.randint(1, 2)])
    if kind == 1:
        can = "".join(r.choice(DIGITS) for _ in range(6))
        return doc, dict(title="IDENTITY CARD", ocrb_lines=[f"{' ' * 22}{can}"])
    observations = ["THE HOLDER IS ALSO A CITIZEN OF", "NO ENDORSEMENTS", "VALID FOR ALL COUNTRIES",
                    "REPLACES PASSPORT " + document_number(r), "AMENDMENT " + alnum(r, 4, 6, 0.0) + " OF " + str(doc["issue"][0])]
    lines = r.sample(observations, 2)
    rows = [[("Official observations / Observations officielles", "")], [("", r.choice(observations[:3]))],
            [("", f"{r.choice(AUTHORITIES)}  {printed_date(doc['issue'])}")]]
    return doc, dict(title="OBSERVATIONS", rows=rows, ocrb_lines=lines, photo=False)


def no_mrz_capture(page, r, noise_rng, dpi, index):
    return [scan, tilt, phone_perspective, jpeg_low, noise][index // 3 % 5](page, r, noise_rng, dpi)


def save_options(condition, r, index):
    if condition == "jpeg-low":
        return "jpg", {"quality": r.randint(25, 45)}
    if condition in SCALES or condition == "small-print":  # the pixels as resampled, nothing else
        return "png", {}
    if condition.startswith("scan-") or condition in ("upside-down", "rotated-90") or condition in DOCUMENTS:
        return ("png", {}) if index % 3 == 0 else ("jpg", {"quality": 92})
    if condition in ("phone-perspective", "phone-oblique", "small-in-frame", "page-curl"):
        return "jpg", {"quality": r.randint(80, 92)}
    if condition == "print-scan":
        return "jpg", {"quality": r.randint(70, 90)}
    if condition == "phone-screen":
        return "jpg", {"quality": r.randint(75, 90)}
    return "jpg", {"quality": 90}


# name: (dpi for a format, the capture).
CONDITIONS = {
    "scan-300dpi": (lambda r, fmt: 300, scan),
    "scan-200dpi": (lambda r, fmt: 200, scan),
    "scan-150dpi": (lambda r, fmt: 150, scan),
    "tilt": (lambda r, fmt: r.choice([200, 250, 300]), tilt),
    "upside-down": (lambda r, fmt: r.choice([200, 300]), upside_down),
    "rotated-90": (lambda r, fmt: r.choice([200, 300]), rotated_90),
    "phone-perspective": (phone_dpi, phone_perspective),
    "blur": (lambda r, fmt: 200, blur),
    "noise": (lambda r, fmt: r.choice([200, 250, 300]), noise),
    "jpeg-low": (lambda r, fmt: r.choice([200, 250, 300]), jpeg_low),
    "uneven-light": (lambda r, fmt: r.choice([200, 250, 300]), uneven_light),
    "glare": (lambda r, fmt: r.choice([200, 250, 300]), glare),
    "small-in-frame": (small_dpi, small_in_frame),
    "print-scan": (print_dpi, print_scan),
    "phone-screen": (screen_dpi, phone_screen),
    "small-print": (lambda r, fmt: 300, small_print),
    "faint": (lambda r, fmt: r.choice([200, 250, 300]), faint),
    # The document, not the capture, is what these test (DOCUMENTS): a plain scan.
    "invalid-print": (lambda r, fmt: r.choice([200, 250, 300]), scan),
    "zero-number": (lambda r, fmt: r.choice([200, 250, 300]), scan),
    "unknown-state": (lambda r, fmt: r.choice([200, 250, 300]), scan),
    "visa-mrv-a": (lambda r, fmt: r.choice([200, 250, 300]), scan),
    "visa-mrv-b": (lambda r, fmt: r.choice([200, 250, 300]), scan),
    # One page and scan per index, resampled to each scale (make seeds the three alike).
    "scale-0.5x": (lambda r, fmt: r.choice([200, 250, 300]), functools.partial(rescan, factor=0.5)),
    "scale-1x": (lambda r, fmt: r.choice([200, 250, 300]), functools.partial(rescan, factor=1.0)),
    "scale-2x": (lambda r, fmt: r.choice([200, 250, 300]), functools.partial(rescan, factor=2.0)),
    "no-mrz": (lambda r, fmt: r.choice([200, 250, 300]), None),
    # Last, so that the conditions before them keep their cuts (page_cut counts through GROUPS in order).
    "phone-oblique": (phone_dpi, phone_oblique),
    "page-curl": (phone_dpi, page_curl),
}
SCALES = {"scale-0.5x", "scale-1x", "scale-2x"}

# Conditions whose document is not plain(): name: function (r, format) -> (document, expectation).
DOCUMENTS = {
    "invalid-print": invalid_print,
    "zero-number": zero_number,
    "unknown-state": unknown_state,
    "visa-mrv-a": functools.partial(visa, "MRV-A"),
    "visa-mrv-b": functools.partial(visa, "MRV-B"),
}


# The conditions as drawn: the three scales are one (one document, cut and split per index).
GROUPS = list(dict.fromkeys("scale" if condition in SCALES else condition for condition in CONDITIONS))


def page_cut(seed, group, index, count):
    """The OCR-B cut of a page: the six in turn, from a seeded start, through the pages of every group as if they
    were one run of `count` per group in GROUPS' order. So every condition has them evenly (to one page), so does
    the whole corpus, and no cut keeps one place in FORMAT_CYCLE."""
    start = random.Random(f"{seed}-cut").randrange(len(CUTS)) + GROUPS.index(group) * count
    return CUTS[(start + index) % len(CUTS)]


def page_split(seed, group, index, cut):
    """"report" for every page in REPORT_CUTS; otherwise a seeded coin, apart from the page's other draws."""
    if cut in REPORT_CUTS:
        return "report"
    return "report" if random.Random(f"{seed}-{group}-{index}-split").random() < 0.5 else "tune"


def make(condition, index, seed, count):
    """The page `index` of `count` of a condition. Returns (image, manifest entry, extension, save options)."""
    # The scale-* conditions draw from one group's seeds: one document, page, cut and split per index.
    group = "scale" if condition in SCALES else condition
    r = random.Random(f"{seed}-{group}-{index}")
    noise_rng = np.random.default_rng(r.randrange(2 ** 32))
    dpi_for, capture = CONDITIONS[condition]
    cut = page_cut(seed, group, index, count)
    entry = {"condition": condition, "font": cut, "split": page_split(seed, group, index, cut)}
    if condition == "no-mrz":
        doc, arguments = no_mrz_page(index, r)
        dpi = phone_dpi(r, doc["format"]) if index // 3 % 5 == 2 else dpi_for(r, doc["format"])
        page = render_page(doc, dpi, r.randrange(2 ** 32), mrz=[], cut=cut, **arguments)
        image = no_mrz_capture(page, r, noise_rng, dpi, index)
        entry.update(format=None, lines=[], expect="none")
    else:
        doc, expect = DOCUMENTS.get(condition, plain)(r, FORMAT_CYCLE[index % len(FORMAT_CYCLE)])
        dpi = dpi_for(r, doc["format"])
        page = render_page(doc, dpi, r.randrange(2 ** 32), cut=cut)
        image = capture(page, r, noise_rng, dpi)
        entry.update(format=doc["format"], lines=doc["lines"], expect=expect)
    if group == "scale":
        entry["document"] = f"scale/{index:03d}"
    ext, options = save_options(condition, r, index)
    return image, entry, ext, options


def write_one(job):
    out, condition, index, seed, count = job
    image, entry, ext, options = make(condition, index, seed, count)
    relative = f"{condition}/{index:03d}.{ext}"
    codegen.save(image, os.path.join(out, relative), **options)
    return relative, entry


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--per-condition", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--conditions", help="comma-separated: only these (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (the files do not depend on it)")
    args = parser.parse_args()
    conditions = args.conditions.split(",") if args.conditions else list(CONDITIONS)
    for condition in conditions:
        if condition not in CONDITIONS:
            parser.error(f"unknown condition {condition!r} (known: {', '.join(CONDITIONS)})")
    jobs = [(args.out, c, i, args.seed, args.per_condition) for c in conditions for i in range(args.per_condition)]
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(write_one, jobs, chunksize=1)
    else:
        results = [write_one(job) for job in jobs]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(dict(results), f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
