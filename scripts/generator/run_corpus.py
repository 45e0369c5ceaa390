#!/usr/bin/python3
"""Generates a batch folder for the run benchmark: N transactions, each a licence back carrying the
verification QR and the AAMVA PDF417, and a selfie: 2N documents, 2N images.

Usage: run_corpus.py OUT_DIR --transactions N
Images are rendered once per variant and reused with different QR codes, so large batches are quick to make.
"""
import argparse
import os
import random

import codegen

ENV = "5f1a9d2e-7c3b-4a61-8e2f-3b4c5d6e7f80"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--transactions", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random("run-corpus")
    selfies = [codegen.selfie(500 + i) for i in range(8)]
    # 16 licence backs (background + PDF417); each transaction adds its own QR to a copy of one.
    backs = []
    for variant in range(16):
        number = "".join(rng.choice("0123456789") for _ in range(9))
        fields = [("DAQ", "D" + number), ("DCS", "SAMPLE"), ("DAC", "ALEX"), ("DBB", "07041983"), ("DBA", "07042035"),
                  ("DBC", "2"), ("DAG", "1 MAIN ST"), ("DAI", "ANYTOWN"), ("DAJ", "VA"), ("DAK", "232690000  "), ("DCG", "USA")]
        card = codegen.paper(1000, 630, seed=variant, tint=(232, 238, 246))
        code = codegen.pdf417(codegen.aamva(fields).encode("latin-1"), module_px=3, columns=8)
        codegen.place(card, code, 40, 630 - code.shape[0] - 40)
        backs.append(card)
    for index in range(args.transactions):
        folder = os.path.join(args.out, f"t{index:05d}")
        url = codegen.verification_url(ENV, f"bench-{index:05d}", f"{rng.randrange(10**6):06d}", "api")
        card = backs[index % len(backs)].copy()
        codegen.place(card, codegen.qr(url, module_px=4), 720, 30)
        codegen.save(card, os.path.join(folder, "back.jpg"), quality=85)
        selfies[index % len(selfies)].save(os.path.join(folder, "selfie.jpg"), quality=85)


if __name__ == "__main__":
    main()
