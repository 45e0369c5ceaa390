#!/usr/bin/python3
"""Scores MRZ readers on a corpus of scripts/generator/mrz_pages.py, side by side: `verify-pipeline scan --json
--symbologies MRZ` and the PassportEye reference (scripts/bench/passporteye_reference.py, same NDJSON).

Usage: score_mrz.py CORPUS NAME=RESULTS.ndjson:WALL_SECONDS:CPU_SECONDS[:CORES] ...
An image with an MRZ counts as exact when the reader reported one MRZ and every line of it is the printed line,
character for character; a page with no MRZ, when nothing was reported. A wrong read is a reported MRZ that is not
the printed one (on a no-mrz page: a false read). "lines" is the share of expected MRZ lines read exactly, over
the images where the reader reported an MRZ or not; the same shares follow per format (TD3, TD2, TD1). The first
reader is compared with every other.
"""
import collections
import json
import os
import sys


def lines_of(text):
    return [line.strip().replace(" ", "") for line in text.replace("\r", "").split("\n") if line.strip()]


def load(path, corpus):
    """{relative path: [MRZ as a list of lines, ...]}, and the paths that ended in an error."""
    results, errors = {}, set()
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            item = json.loads(line)
            key = os.path.relpath(item["source"], corpus) if os.path.isabs(item["source"]) else item["source"]
            key = os.path.normpath(key)
            if "error" in item:
                errors.add(key)
            results[key] = [lines_of(b["text"]) for b in item.get("barcodes", []) if b.get("format", "").startswith("MRZ")]
    return results, errors


def score(expected, results):
    """Per condition: [images, exact, wrong reads, expected lines, lines read exactly]."""
    table = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    for key, entry in expected.items():
        want = entry["lines"]
        got = results.get(os.path.normpath(key), [])
        # Each image counts in its condition's row and in its format's ("TD3" ... "none").
        for row in (table[entry["condition"]], table[entry["format"] or "none"]):
            row[0] += 1
            row[1] += int(got == ([want] if want else []))
            row[2] += sum(1 for mrz in got if mrz != want)
            if want:
                row[3] += len(want)
                row[4] += max((sum(a == b for a, b in zip(mrz, want)) for mrz in got), default=0)
    return table


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    corpus = sys.argv[1]
    expected = json.load(open(os.path.join(corpus, "expected.json")))
    readers = []
    for argument in sys.argv[2:]:
        name, spec = argument.split("=", 1)
        parts = spec.rsplit(":", 3) if spec.count(":") >= 3 else spec.rsplit(":", 2)
        path, wall, cpu = parts[0], float(parts[1]), float(parts[2])
        cores = parts[3] if len(parts) > 3 else "1"
        results, errors = load(path, corpus)
        readers.append({"name": name, "table": score(expected, results), "wall": wall, "cpu": cpu, "cores": cores,
                        "errors": len(errors), "answered": len(results)})
    order = []
    for key in sorted(expected):
        condition = expected[key]["condition"]
        if condition not in order:
            order.append(condition)
    if "no-mrz" in order:  # the negatives last
        order.remove("no-mrz")
        order.append("no-mrz")
    width = max(14, max(len(r["name"]) for r in readers) + 2)
    print("share of images read exactly (every MRZ line), then wrong reads per reader (in the same order);")
    print("on no-mrz pages 'exact' means nothing was reported, and every read is a false read")
    print(f"{'condition':<20}{'images':>7}" + "".join(f"{r['name']:>{width}}" for r in readers)
          + "".join(f"{'wrong':>7}" for _ in readers))
    first = readers[0]
    behind = collections.defaultdict(list)
    for condition in order:
        total = first["table"][condition][0]
        line = f"{condition:<20}{total:>7}" + "".join(f"{r['table'][condition][1] / total:>{width}.2f}" for r in readers)
        print(line + "".join(f"{r['table'][condition][2]:>7}" for r in readers))
        for other in readers[1:]:
            if first["table"][condition][1] < other["table"][condition][1]:
                behind[other["name"]].append(condition)
    total = len(expected)
    with_mrz = [c for c in order if c != "no-mrz"]
    mrz_images = sum(first["table"][c][0] for c in with_mrz)
    print(f"{'overall':<20}{total:>7}" + "".join(f"{sum(r['table'][c][1] for c in order) / total:>{width}.3f}" for r in readers)
          + "".join(f"{sum(r['table'][c][2] for c in order):>7}" for r in readers))
    if mrz_images:
        print(f"{'with an MRZ':<20}{mrz_images:>7}"
              + "".join(f"{sum(r['table'][c][1] for c in with_mrz) / mrz_images:>{width}.3f}" for r in readers)
              + "".join(f"{sum(r['table'][c][2] for c in with_mrz):>7}" for r in readers))
        expected_lines = sum(first["table"][c][3] for c in with_mrz)
        print(f"{'  lines exact':<20}{expected_lines:>7}"
              + "".join(f"{sum(r['table'][c][4] for c in with_mrz) / expected_lines:>{width}.3f}" for r in readers))
    for fmt in ("TD3", "TD2", "TD1"):
        count = first["table"][fmt][0] if fmt in first["table"] else 0
        if count:
            print(f"{'  ' + fmt + ' images':<20}{count:>7}" + "".join(f"{r['table'][fmt][1] / count:>{width}.2f}" for r in readers)
                  + "".join(f"{r['table'][fmt][2]:>7}" for r in readers))
    print()
    if "no-mrz" in order:
        negatives = first["table"]["no-mrz"][0]
        print("false reads on no-mrz pages: " + ";  ".join(
            f"{r['name']} {r['table']['no-mrz'][2]} (on {negatives - r['table']['no-mrz'][1]} of {negatives} pages)"
            for r in readers))
    for r in readers:
        missing = total - r["answered"]
        if r["errors"] or missing:
            print(f"{r['name']}: {r['errors']} images ended in an error, {missing} were not reported at all")
    print()
    for r in readers:
        print(f"{r['name']:<18} {total / r['wall']:8.2f} images/s  {r['wall']:8.2f} s wall  "
              f"{r['cpu'] * 1000 / total:8.1f} ms CPU per image  {r['cpu'] / r['wall']:5.2f} cores busy ({r['cores']} allowed)")
    for other in readers[1:]:
        print(f"throughput {first['name']} / {other['name']}: {other['wall'] / first['wall']:.2f}x images/s;  conditions "
              f"where {first['name']} reads fewer exactly: {', '.join(behind[other['name']]) or 'none'}")


if __name__ == "__main__":
    main()
