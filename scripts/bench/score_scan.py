#!/usr/bin/python3
"""Scores barcode readers on a corpus's expected.json, side by side: `verify-pipeline scan --json`, the zxing-cpp
reference (scripts/bench/zxing_reference.py, same NDJSON) and `zbarimg --xml`.

Usage: score_scan.py CORPUS NAME=RESULTS:WALL_SECONDS:CPU_SECONDS[:CORES] ...   (RESULTS: .ndjson or zbarimg's .xml)
An image counts as decoded when every expected code was read with the right text and nothing else was read; on
a no-code image, when nothing was read. A wrong or false read is any text not expected on that image. The first
reader is compared with every other.
"""
import collections
import json
import os
import sys
import xml.etree.ElementTree as ET


def load_ndjson(path, corpus):
    results = {}
    with open(path) as f:
        for line in f:
            item = json.loads(line)
            key = os.path.relpath(item["source"], corpus) if os.path.isabs(item["source"]) else item["source"]
            results[key] = {(b["format"], b["text"]) for b in item.get("barcodes", [])}
    return results


def load_zbarimg(path, corpus):
    names = {"QR-Code": "QR_CODE", "PDF417": "PDF417", "CODE-128": "CODE_128"}
    results = {}
    root = ET.parse(path).getroot()
    for source in root.iter("{http://zbar.sourceforge.net/2008/barcode}source"):
        key = os.path.relpath(source.get("href"), corpus) if os.path.isabs(source.get("href")) else source.get("href")
        found = set()
        for symbol in source.iter("{http://zbar.sourceforge.net/2008/barcode}symbol"):
            data = symbol.find("{http://zbar.sourceforge.net/2008/barcode}data")
            found.add((names.get(symbol.get("type"), symbol.get("type")), data.text or ""))
        results[key] = found
    return results


def score(expected, results):
    per_category = collections.defaultdict(lambda: [0, 0, 0])  # decoded, total, wrong or false reads
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
    corpus = sys.argv[1]
    expected = json.load(open(os.path.join(corpus, "expected.json")))
    readers = []
    for argument in sys.argv[2:]:
        name, spec = argument.split("=", 1)
        parts = spec.split(":")
        path, wall, cpu = parts[0], float(parts[1]), float(parts[2])
        cores = parts[3] if len(parts) > 3 else "1"
        load = load_zbarimg if path.endswith(".xml") else load_ndjson
        readers.append((name, score(expected, load(path, corpus)), wall, cpu, cores))
    order = []
    for key in expected:
        category = key.split("/")[0]
        if category not in order:
            order.append(category)
    print("decode rate per reader, then wrong or false reads per reader (in the same order)")
    header = f"{'category':<18}{'images':>7}" + "".join(f"{name:>17}" for name, *_ in readers) + "".join(
        f"{'wrong':>8}" for _ in readers)
    print(header)
    first = readers[0][0]
    behind = collections.defaultdict(list)
    for category in order:
        total = readers[0][1][category][1]
        line = f"{category:<18}{total:>7}"
        line += "".join(f"{r[1][category][0] / total:>17.2f}" for r in readers)
        line += "".join(f"{r[1][category][2]:>8}" for r in readers)
        print(line)
        for name, result, *_ in readers[1:]:
            if readers[0][1][category][0] < result[category][0]:
                behind[name].append(category)
    total = len(expected)
    print(f"{'overall':<18}{total:>7}" + "".join(f"{sum(v[0] for v in r[1].values()) / total:>17.3f}" for r in readers)
          + "".join(f"{sum(v[2] for v in r[1].values()):>8}" for r in readers))
    print()
    for name, _, wall, cpu, cores in readers:
        print(f"{name:<16} {total / wall:8.1f} images/s  {wall:7.2f} s wall  {cpu * 1000 / total:7.1f} ms CPU per image  "
              f"{cpu / wall:4.2f} cores busy ({cores} allowed)")
    ours_wall = readers[0][2]
    for name, _, wall, cpu, _ in readers[1:]:
        print(f"throughput {first} / {name}: {wall / ours_wall:.2f}x;  categories where {first} decodes fewer: "
              f"{', '.join(behind[name]) if behind[name] else 'none'}")


if __name__ == "__main__":
    main()
