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


if __name__ == "__main__":
    main()
