#!/usr/bin/python3
"""Writes the sample images in Samples/images and their expected decodes in Samples/images/expected.json.

Run from the repository root: /usr/bin/python3 Samples/generate.py
The people, numbers and transactions are invented.
"""
import json
import os
import sys

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "generator"))
import codegen  # noqa: E402
import mrz_pages  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "images")
ENV = "3072206d-c6ce-4b15-8ad2-f87e972c7cc3"

LICENCES = [
    [("DAQ", "D12345678"), ("DCS", "SAMPLE"), ("DAC", "ALEX"), ("DAD", "JORDAN"), ("DBB", "07041983"),
     ("DBA", "07042030"), ("DBD", "07042022"), ("DBC", "2"), ("DAG", "2300 WEST BROAD STREET"),
     ("DAI", "RICHMOND"), ("DAJ", "VA"), ("DAK", "232690000  "), ("DCG", "USA")],
    [("DAQ", "T64-220-019"), ("DCS", "EXAMPLE"), ("DAC", "MORGAN"), ("DAD", ""), ("DBB", "11201990"),
     ("DBA", "11202031"), ("DBD", "03152023"), ("DBC", "1"), ("DAG", "100 MAIN ST"),
     ("DAI", "SPRINGFIELD"), ("DAJ", "IL"), ("DAK", "627010000  "), ("DCG", "USA")],
]


def main():
    expected = {}

    def record(name, codes):
        expected[name] = [{"format": f, "text": t} for f, t in codes]

    for index, (form, fmt) in enumerate([("webapp", "png"), ("api", "jpg"), ("webapp", "jpg")]):
        url = codegen.verification_url(ENV, f"txn-sample-{index + 1:03d}", f"{417203 + index * 7919:06d}", form)
        card = codegen.paper(640, 420, seed=index)
        codegen.place(card, codegen.qr(url, module_px=5), 330, 60)
        name = f"qr-verification-{index + 1}.{fmt}"
        codegen.save(card, os.path.join(OUT, name), **({"quality": 90} if fmt == "jpg" else {}))
        record(name, [("QR_CODE", url)])

    for index, fields in enumerate(LICENCES):
        payload = codegen.aamva(fields)
        card = codegen.paper(1000, 630, seed=100 + index, tint=(232, 238, 246))
        code = codegen.pdf417(payload.encode("latin-1"), module_px=3, columns=8)
        codegen.place(card, code, 40, 630 - code.shape[0] - 40)
        fmt = "png" if index == 0 else "jpg"
        name = f"licence-back-{index + 1}.{fmt}"
        codegen.save(card, os.path.join(OUT, name), **({"quality": 92} if fmt == "jpg" else {}))
        record(name, [("PDF417", payload)])

    # A back carrying both a verification QR and the AAMVA PDF417.
    url = codegen.verification_url(ENV, "txn-sample-010", "552201")
    payload = codegen.aamva(LICENCES[0])
    card = codegen.paper(1000, 630, seed=200, tint=(232, 238, 246))
    pdf = codegen.pdf417(payload.encode("latin-1"), module_px=3, columns=8)
    codegen.place(card, pdf, 40, 630 - pdf.shape[0] - 40)
    codegen.place(card, codegen.qr(url, module_px=4), 680, 30)
    codegen.save(card, os.path.join(OUT, "licence-back-with-qr.png"))
    record("licence-back-with-qr.png", [("QR_CODE", url), ("PDF417", payload)])

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")
    batch()
    mrz_samples()
    stream()


BATCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch")
# A TD3 that is valid until 2034, and the same with its document-number check digit broken.
PASSPORT_MRZ = codegen.td3("SPECIMEN", ["ROBIN", "KIM"], "X4R7T2B90", "UTO", "880214", "X", "340601", personal="ZE184226B")
BAD_MRZ = PASSPORT_MRZ[:45 + 9] + str((int(PASSPORT_MRZ[45 + 9]) + 1) % 10) + PASSPORT_MRZ[45 + 10:]


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def licence_back(fields, seed, qr_url=None):
    card = codegen.paper(1000, 630, seed=seed, tint=(232, 238, 246))
    code = codegen.pdf417(codegen.aamva(fields).encode("latin-1"), module_px=3, columns=8)
    codegen.place(card, code, 40, 630 - code.shape[0] - 40)
    if qr_url:
        codegen.place(card, codegen.qr(qr_url, module_px=4), 680, 30)
    return card


def batch():
    """Samples/batch: one subfolder per transaction, each ending as the README documents."""
    url = lambda n: codegen.verification_url(ENV, f"txn-batch-{n:03d}", f"{700100 + n:06d}")  # noqa: E731
    jpeg = {"quality": 85}

    folder = os.path.join(BATCH, "01-complete")
    qr = codegen.paper(400, 400, seed=301)
    codegen.place(qr, codegen.qr(url(1), module_px=4), 40, 40)
    codegen.save(qr, os.path.join(folder, "qr.png"))
    codegen.save(codegen.card_front(302), os.path.join(folder, "front.jpg"), **jpeg)
    codegen.save(licence_back(LICENCES[0], 303), os.path.join(folder, "back.png"))
    codegen.save(codegen.selfie(304), os.path.join(folder, "selfie.jpg"), **jpeg)
    write_text(os.path.join(folder, "fields.json"), json.dumps({"email": "alex.sample@example.com", "phone": "+1 555 0100"}) + "\n")

    folder = os.path.join(BATCH, "02-missing-selfie")
    write_text(os.path.join(folder, "qr.txt"), url(2) + "\n")
    codegen.save(codegen.card_front(311), os.path.join(folder, "front.jpg"), **jpeg)
    codegen.save(licence_back(LICENCES[1], 312), os.path.join(folder, "back.jpg"), **jpeg)

    folder = os.path.join(BATCH, "03-qr-on-back")
    codegen.save(codegen.card_front(321), os.path.join(folder, "front.jpg"), **jpeg)
    codegen.save(licence_back(LICENCES[0], 322, qr_url=url(3)), os.path.join(folder, "back.png"))

    folder = os.path.join(BATCH, "04-passport-mrz")
    write_text(os.path.join(folder, "qr.txt"), url(4) + "\n")
    codegen.save(codegen.card_front(331, title="PASSPORT"), os.path.join(folder, "front.jpg"), **jpeg)
    write_text(os.path.join(folder, "mrz.txt"), PASSPORT_MRZ + "\n")
    codegen.save(codegen.selfie(332), os.path.join(folder, "selfie.jpg"), **jpeg)

    folder = os.path.join(BATCH, "05-corrupt-image")
    write_text(os.path.join(folder, "qr.txt"), url(5) + "\n")
    codegen.save(codegen.card_front(341), os.path.join(folder, "front.jpg"), **jpeg)
    with open(os.path.join(folder, "front.jpg"), "rb") as f:
        data = f.read()
    with open(os.path.join(folder, "front.jpg"), "wb") as f:
        f.write(data[: len(data) // 2])  # truncated in transfer
    codegen.save(licence_back(LICENCES[1], 342), os.path.join(folder, "back.jpg"), **jpeg)
    codegen.save(codegen.selfie(343), os.path.join(folder, "selfie.jpg"), **jpeg)

    folder = os.path.join(BATCH, "06-bad-mrz")
    write_text(os.path.join(folder, "qr.txt"), url(6) + "\n")
    codegen.save(codegen.card_front(351, title="PASSPORT"), os.path.join(folder, "front.jpg"), **jpeg)
    write_text(os.path.join(folder, "mrz.txt"), BAD_MRZ + "\n")

    folder = os.path.join(BATCH, "07-expired")
    write_text(os.path.join(folder, "qr.txt"), url(7) + "\n")
    write_text(os.path.join(folder, "transaction.json"),
               json.dumps({"createdAt": "2026-01-05T09:00:00Z", "expiresAt": "2026-01-05T09:30:00Z"}) + "\n")
    codegen.save(codegen.card_front(361), os.path.join(folder, "front.jpg"), **jpeg)
    codegen.save(licence_back(LICENCES[1], 362), os.path.join(folder, "back.jpg"), **jpeg)


def mrz_samples():
    """Passport and ID card images whose MRZ the pipeline reads from the picture (no mrz.txt)."""
    import random
    import numpy as np
    url = lambda n: codegen.verification_url(ENV, f"txn-batch-{n:03d}", f"{700100 + n:06d}")  # noqa: E731
    jpeg = {"quality": 88}

    # A passport data page (TD3) scanned at 200 dpi, a little tilted.
    passport = {"format": "TD3", "code": "P<", "surname": "SAMPLE", "given": ["RIVER", "JUNE"], "number": "X7B04Q2N1",
                "issuing": "UTO", "nationality": "UTO", "birth": (1991, 3, 7), "sex": "F", "expiry": (2033, 9, 30),
                "issue": (2023, 10, 1), "place": "ZENITH", "authority": "PASSPORT OFFICE", "optional": "",
                "optional2": "", "personal_check": "<"}
    passport["lines"] = mrz_pages.mrz_lines(passport)
    folder = os.path.join(BATCH, "08-passport-image")
    write_text(os.path.join(folder, "qr.txt"), url(8) + "\n")
    page = mrz_pages.render_page(passport, 200, 381)
    codegen.save(mrz_pages.tilt(page, random.Random(382), np.random.default_rng(382), 200, angle=4).convert("RGB"),
                 os.path.join(folder, "front.jpg"), **jpeg)
    codegen.save(codegen.selfie(383), os.path.join(folder, "selfie.jpg"), **jpeg)

    # An ID card (TD1): a plain front, and the back with its three-line MRZ, photographed flat at 300 dpi.
    card = {"format": "TD1", "code": "I<", "surname": "EXAMPLE", "given": ["ROBIN"], "number": "UT0418822",
            "issuing": "UTO", "nationality": "UTO", "birth": (1985, 12, 24), "sex": "M", "expiry": (2031, 5, 2),
            "issue": (2021, 5, 3), "place": "ZENITH", "authority": "CITY HALL", "optional": "", "optional2": ""}
    card["lines"] = mrz_pages.mrz_lines(card)
    folder = os.path.join(BATCH, "09-id-card-td1")
    write_text(os.path.join(folder, "qr.txt"), url(9) + "\n")
    codegen.save(codegen.card_front(391, title="IDENTITY CARD"), os.path.join(folder, "front.jpg"), **jpeg)
    back = mrz_pages.render_page(card, 300, 392)
    codegen.save(mrz_pages.scan(back, random.Random(393), np.random.default_rng(393), 300).convert("RGB"),
                 os.path.join(folder, "back.jpg"), **jpeg)
    return passport["lines"], card["lines"]


def stream():
    """Samples/stream.ndjson: documents as an upstream capture service would send them, errors included.
    Paths are relative to the repository root, where the README's commands run."""
    import base64
    import io
    url = lambda n: codegen.verification_url(ENV, f"txn-stream-{n:03d}", f"{800100 + n:06d}", "api")  # noqa: E731
    small = io.BytesIO()
    codegen.selfie(401, size=(120, 160)).save(small, "JPEG", quality=80)
    selfie = base64.b64encode(small.getvalue()).decode()
    lines = [
        {"id": "s1", "qr": url(1), "type": "GOVERNMENT_ID", "frontImagePath": "Samples/batch/02-missing-selfie/front.jpg",
         "backImagePath": "Samples/batch/02-missing-selfie/back.jpg"},
        {"id": "s2", "transactionId": "txn-stream-001", "type": "SELFIE", "selfie": selfie},
        {"id": "s3", "transactionId": "txn-stream-001", "type": "EMAIL", "email": "morgan.example@example.com"},
        {"id": "s4", "transactionId": "txn-stream-001", "type": "PHONE", "skip": True},
        '{"id": "s5", "type": "GOVERNMENT_ID", "qr": ',
        {"id": "s6", "qr": url(2), "type": "PASSPORT", "mrz": PASSPORT_MRZ},
        {"id": "s7", "type": "SELFIE", "selfiePath": "Samples/batch/01-complete/selfie.jpg"},
        {"id": "s8", "qr": url(2), "type": "SELFIE", "selfie": "%%% not base64 %%%"},
        {"id": "s9", "qr": url(2), "type": "GOVERNMENT_ID", "frontImagePath": "Samples/batch/no-such-folder/front.jpg"},
        {"id": "s10", "qr": "https://example.com/search?q=passport", "type": "SELFIE", "selfiePath": "Samples/batch/01-complete/selfie.jpg"},
        {"id": "s11", "qr": url(3), "type": "GOVERNMENT_ID", "mrz": PASSPORT_MRZ},
        # A licence whose PDF417 the capture service already decoded: its text, parsed as AAMVA data.
        {"id": "s12", "qr": url(4), "type": "GOVERNMENT_ID", "barcode": codegen.aamva(LICENCES[0])},
    ]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stream.ndjson"), "w") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")


if __name__ == "__main__":
    main()
