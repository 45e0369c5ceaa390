#!/usr/bin/python3
"""Scores `verify-pipeline scan --json` and `zbarimg --xml` results against a corpus's expected.json.

Usage: score_scan.py CORPUS OURS.ndjson OURS_SECONDS ZBARIMG.xml ZBARIMG_SECONDS
An image counts as decoded when every expected code was read with the right text and nothing else was
read; on a no-code image, when nothing was read. A false read is any text not expected on that image.
"""
import collections
import json
import os
import sys
import xml.etree.ElementTree as ET


def load_ours(path, corpus):
    results = {}
    with open(path) as f:
        for line in f:
            item = json.loads(line)
            key = os.path.relpath(item["source"], corpus)
            results[key] = {(b["format"], b["text"]) for b in item.get("barcodes", [])}
    return results


def load_zbarimg(path, corpus):
    names = {"QR-Code": "QR_CODE", "PDF417": "PDF417", "CODE-128": "CODE_128"}
    results = {}
    root = ET.parse(path).getroot()
    for source in root.iter("{http://zbar.sourceforge.net/2008/barcode}source"):
        key = os.path.relpath(source.get("href"), corpus)
        found = set()
        for symbol in source.iter("{http://zbar.sourceforge.net/2008/barcode}symbol"):
            data = symbol.find("{http://zbar.sourceforge.net/2008/barcode}data")
            found.add((names.get(symbol.get("type"), symbol.get("type")), data.text or ""))
        results[key] = found
    return results


def score(expected, results):
    per_category = collections.defaultdict(lambda: [0, 0, 0])  # decoded, total, false reads
    for key, codes in expected.items():
        category = key.split("/")[0]
        want = {(c["format"], c["text"]) for c in codes}
        got = results.get(key, set())
        entry = per_category[category]
        entry[1] += 1
        entry[0] += int(got == want)
        entry[2] += len(got - want)
    return per_category


def main():
    corpus, ours_path, ours_seconds, zbar_path, zbar_seconds = sys.argv[1:6]
    ours_seconds, zbar_seconds = float(ours_seconds), float(zbar_seconds)
    expected = json.load(open(os.path.join(corpus, "expected.json")))
    ours = score(expected, load_ours(ours_path, corpus))
    zbar = score(expected, load_zbarimg(zbar_path, corpus))
    print(f"{'category':<16}{'images':>7}{'ours':>8}{'zbarimg':>9}{'ours false':>12}{'zbarimg false':>15}")
    worse = []
    for category in sorted(ours, key=lambda c: list(expected).index(next(k for k in expected if k.startswith(c + "/")))):
        o, z = ours[category], zbar[category]
        print(f"{category:<16}{o[1]:>7}{o[0] / o[1]:>8.2f}{z[0] / z[1]:>9.2f}{o[2]:>12}{z[2]:>15}")
        if o[0] < z[0]:
            worse.append(category)
    total = len(expected)
    ours_ok, zbar_ok = sum(v[0] for v in ours.values()), sum(v[0] for v in zbar.values())
    print(f"{'overall':<16}{total:>7}{ours_ok / total:>8.3f}{zbar_ok / total:>9.3f}"
          f"{sum(v[2] for v in ours.values()):>12}{sum(v[2] for v in zbar.values()):>15}")
    print()
    print(f"verify-pipeline scan: {total / ours_seconds:7.1f} images/s ({ours_seconds:.2f} s)")
    print(f"zbarimg:              {total / zbar_seconds:7.1f} images/s ({zbar_seconds:.2f} s)")
    print(f"throughput ratio (ours / zbarimg): {zbar_seconds / ours_seconds:.2f}x")
    print(f"decode-rate ratio (ours / zbarimg): {ours_ok / max(zbar_ok, 1):.2f}")
    print(f"categories where ours decodes fewer than zbarimg: {', '.join(worse) if worse else 'none'}")


if __name__ == "__main__":
    main()
