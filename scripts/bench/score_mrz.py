#!/usr/bin/python3
"""Scores MRZ readers on a corpus of scripts/generator/mrz_pages.py, side by side: `verify-pipeline scan --json
--symbologies MRZ` and the PassportEye reference (scripts/bench/passporteye_reference.py, same NDJSON).

Usage: score_mrz.py CORPUS NAME=RESULTS.ndjson:WALL_SECONDS:CPU_SECONDS[:CORES] ...
A page either has an MRZ to read (manifest "expect": "read"), or must give nothing: its printed MRZ is invalid
("refuse", invalid-print pages) or it has none ("none", no-mrz pages; manifests without "expect" say which by
their lines). An image to read counts as exact when the reader reported one MRZ and every line of it is the
printed line, character for character; one that must give nothing, when nothing was reported. A wrong read is a
reported MRZ that is not the printed one, or any MRZ reported where nothing must be (on a no-mrz page: a false
read). "lines" is the share of expected MRZ lines read exactly, over the images to read whether the reader
reported an MRZ or not; the same shares follow per format (TD3, TD2, TD1, MRV-A, MRV-B). The first reader is
compared with every other.

Then per document, by condition, by OCR-B cut ("font") and overall, for the whole corpus, again for its
"report" split alone (the pages kept apart from tuning), and by cut for the clean scans (CLEAN): documents exact; documents returned wrong (a reading
returned that differs from the printed lines in any character, or any reading where nothing must be returned);
refused (nothing returned: right where nothing must be, a miss elsewhere); lines exact. The headline is the
documents returned wrong, as counts and shares; then the scale-* triples (one page at three sizes) and speed.
"""
import collections
import json
import os
import sys

# Per group of documents: documents, exact, returned wrong, refused (nothing returned), expected lines, lines
# read exactly, wrong readings (a document may have more than one).
DOCS, EXACT, WRONG, REFUSED, LINES, LINES_EXACT, READINGS = range(7)
FORMATS = ("TD3", "TD2", "TD1", "MRV-A", "MRV-B")
# Flatbed scans with nothing else done to them: the "clean scans", where no reading may be wrong and every
# cut must read exactly at least 0.9 of the time.
CLEAN = ("scan-150dpi", "scan-200dpi", "scan-300dpi")


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


def ladder(path):
    """The readings counted by the pass of the reading ladder that produced them, and the refusals by their reason
    code (`scan --json`'s `pass` and `reason`; empty for a reader that reports neither)."""
    passes, reasons = collections.Counter(), collections.Counter()
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            item = json.loads(line)
            for barcode in item.get("barcodes") or []:
                if (barcode.get("mrz") or {}).get("pass"):
                    passes[barcode["mrz"]["pass"]] += 1
            for refused in item.get("unreadable") or []:
                if refused.get("reason"):
                    reasons[refused["reason"]] += 1
    return passes, reasons


def print_ladder(readers):
    for r in readers:
        passes, reasons = r["ladder"]
        if not passes and not reasons:
            continue
        print(f"{r['name']}: readings by pass: " + ", ".join(f"{k} {v}" for k, v in passes.most_common()))
        print(f"{r['name']}: refusals by reason: " + (", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "none"))


def expectation(entry):
    """"read", "refuse" or "none"."""
    return entry.get("expect") or ("read" if entry["lines"] else "none")


def outcome(entry, got):
    """One document's row (see DOCS ...) for the MRZs `got`."""
    want = entry["lines"]
    if expectation(entry) == "read":
        readings = sum(1 for mrz in got if mrz != want)
        lines_exact = max((sum(a == b for a, b in zip(mrz, want)) for mrz in got), default=0)
        return [1, int(got == [want]), int(readings > 0), int(not got), len(want), lines_exact, readings]
    return [1, int(not got), int(bool(got)), int(not got), 0, 0, len(got)]


def score(expected, results):
    """{group: row}: every document counts in its condition's row, its cut's ("font:" + cut), "all", and where it is
    in the report split the same with "report:" before; the documents to read also in their format's row and
    "read"; the scale-* documents under "triple:" + their shared name."""
    table = collections.defaultdict(lambda: [0] * 7)
    for key, entry in expected.items():
        row = outcome(entry, results.get(os.path.normpath(key), []))
        groups = [entry["condition"], "all"] + (["font:" + entry["font"]] if entry.get("font") else [])
        base = list(groups)
        if entry.get("split") == "report":
            groups += ["report:" + group for group in base]
        if entry["condition"] in CLEAN:
            groups += ["clean:" + group for group in base if group != entry["condition"]]
        if expectation(entry) == "read":
            groups += [entry["format"], "read"]
        if entry.get("document"):
            groups.append("triple:" + entry["document"])
        for group in groups:
            table[group] = [a + b for a, b in zip(table[group], row)]
    return table


def share(part, whole, digits=2):
    return f"{part / whole:.{digits}f}" if whole else "-"


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
                        "errors": len(errors), "answered": len(results), "ladder": ladder(path)})
    order = []
    for key in sorted(expected):
        condition = expected[key]["condition"]
        if condition not in order:
            order.append(condition)
    if "no-mrz" in order:  # the negatives last
        order.remove("no-mrz")
        order.append("no-mrz")
    print_reads(readers, order, len(expected))
    print()
    print_documents(readers, order, expected)
    print()
    print_headline(readers, expected)
    print_triples(readers, expected)
    print()
    print_ladder(readers)
    print()
    print_speed(readers, order, len(expected))


def print_reads(readers, order, total):
    """The share read exactly and the wrong reads per condition, overall and per format."""
    width = max(14, max(len(r["name"]) for r in readers) + 2)
    print("share of images read exactly (every MRZ line), then wrong reads per reader (in the same order);")
    print("on no-mrz pages 'exact' means nothing was reported, and every read is a false read")
    if "invalid-print" in order:
        print("(and on invalid-print pages, whose printed MRZ fails a check digit: nothing must be returned there either)")
    print(f"{'condition':<20}{'images':>7}" + "".join(f"{r['name']:>{width}}" for r in readers)
          + "".join(f"{'wrong':>7}" for _ in readers))
    first = readers[0]
    for condition in order:
        count = first["table"][condition][DOCS]
        print(f"{condition:<20}{count:>7}" + "".join(f"{r['table'][condition][EXACT] / count:>{width}.2f}" for r in readers)
              + "".join(f"{r['table'][condition][READINGS]:>7}" for r in readers))
    print(f"{'overall':<20}{total:>7}" + "".join(f"{r['table']['all'][EXACT] / total:>{width}.3f}" for r in readers)
          + "".join(f"{r['table']['all'][READINGS]:>7}" for r in readers))
    to_read = first["table"]["read"][DOCS]
    if to_read:
        print(f"{'with an MRZ':<20}{to_read:>7}"
              + "".join(f"{r['table']['read'][EXACT] / to_read:>{width}.3f}" for r in readers)
              + "".join(f"{r['table']['read'][READINGS]:>7}" for r in readers))
        expected_lines = first["table"]["read"][LINES]
        print(f"{'  lines exact':<20}{expected_lines:>7}"
              + "".join(f"{r['table']['read'][LINES_EXACT] / expected_lines:>{width}.3f}" for r in readers))
    for fmt in FORMATS:
        count = first["table"][fmt][DOCS] if fmt in first["table"] else 0
        if count:
            print(f"{'  ' + fmt + ' images':<20}{count:>7}" + "".join(f"{r['table'][fmt][EXACT] / count:>{width}.2f}" for r in readers)
                  + "".join(f"{r['table'][fmt][READINGS]:>7}" for r in readers))
    print()
    if "no-mrz" in order:
        negatives = first["table"]["no-mrz"][DOCS]
        print("false reads on no-mrz pages: " + ";  ".join(
            f"{r['name']} {r['table']['no-mrz'][READINGS]} (on {negatives - r['table']['no-mrz'][EXACT]} of {negatives} pages)"
            for r in readers))
    if "invalid-print" in order:
        invalid = first["table"]["invalid-print"][DOCS]
        print("readings returned from invalid-print pages (nothing must be): " + ";  ".join(
            f"{r['name']} {r['table']['invalid-print'][READINGS]} (on {r['table']['invalid-print'][WRONG]} of {invalid} pages)"
            for r in readers))
    for r in readers:
        missing = total - r["answered"]
        if r["errors"] or missing:
            print(f"{r['name']}: {r['errors']} images ended in an error, {missing} were not reported at all")


def print_documents(readers, order, expected):
    """Per document, by condition, by cut and overall; then the same for the report split."""
    width = max(31, max(len(r["name"]) for r in readers) + 2)
    print("per document: exact (share), returned wrong (count: a reading that is not the printed MRZ, or any reading")
    print("where nothing must be returned), refused (count: nothing returned), lines exact (share of the lines to read)")
    fonts = sorted({entry["font"] for entry in expected.values() if entry.get("font")})
    report = sum(1 for entry in expected.values() if entry.get("split") == "report")
    sections = [("", f"all {len(expected)} documents")]
    if report:
        sections.append(("report:", f"the report split alone: {report} documents (tune on the others)"))
    clean = sum(1 for entry in expected.values() if entry["condition"] in CLEAN)
    if clean:
        sections.append(("clean:", f"clean scans alone ({', '.join(CLEAN)}): {clean} documents, by cut"))
    for prefix, title in sections:
        print()
        print(f"== {title} ==")
        print(f"{'':<27}" + "".join(f"{r['name']:>{width}}" for r in readers))
        print(f"{'':<20}{'docs':>7}" + "".join(f"{'exact':>{width - 24}}{'wrong':>8}{'refused':>8}{'lines':>8}" for _ in readers))
        groups = [] if prefix == "clean:" else [("condition", [(c, prefix + c) for c in order])]
        if fonts:
            groups.append(("font", [(f, prefix + "font:" + f) for f in fonts]))
        groups.append(("overall", [("all", prefix + "all")]))
        for heading, rows in groups:
            print(f"-- {heading}")
            for label, group in rows:
                count = readers[0]["table"][group][DOCS] if group in readers[0]["table"] else 0
                if not count:
                    continue
                line = f"{label:<20}{count:>7}"
                for r in readers:
                    row = r["table"][group]
                    line += (f"{share(row[EXACT], count):>{width - 24}}{row[WRONG]:>8}{row[REFUSED]:>8}"
                             f"{share(row[LINES_EXACT], row[LINES], 3):>8}")
                print(line)


def print_headline(readers, expected):
    """The documents returned wrong: what a caller cannot tell from a right reading."""
    total = len(expected)
    report = sum(1 for entry in expected.values() if entry.get("split") == "report")
    print("DOCUMENTS RETURNED WRONG (a reading returned that is not the printed MRZ, or any reading where nothing must be):")
    for r in readers:
        wrong = r["table"]["all"][WRONG]
        line = f"  {r['name']:<20}{wrong:>6} of {total} documents ({100 * wrong / total:.2f} %)"
        if report:
            in_report = r["table"]["report:all"][WRONG]
            line += f";  report split: {in_report} of {report} ({100 * in_report / report:.2f} %)"
        print(line)


def print_triples(readers, expected):
    """The scale-* pages: one document at half, original and double size."""
    triples = sorted({entry["document"] for entry in expected.values() if entry.get("document")})
    if not triples:
        return
    print(f"scale triples (one page at 0.5x, 1x and 2x; {len(triples)} documents): exact at every scale / at some "
          "but not all / returned wrong at some scale")
    for r in readers:
        rows = [r["table"]["triple:" + name] for name in triples]
        every = sum(1 for row in rows if row[EXACT] == row[DOCS])
        some = sum(1 for row in rows if 0 < row[EXACT] < row[DOCS])
        wrong = sum(1 for row in rows if row[WRONG])
        print(f"  {r['name']:<20}{every:>6}{some:>6}{wrong:>6}")


def print_speed(readers, order, total):
    first = readers[0]
    behind = {other["name"]: [c for c in order if first["table"][c][EXACT] < other["table"][c][EXACT]]
              for other in readers[1:]}
    for r in readers:
        print(f"{r['name']:<18} {total / r['wall']:8.2f} images/s  {r['wall']:8.2f} s wall  "
              f"{r['cpu'] * 1000 / total:8.1f} ms CPU per image  {r['cpu'] / r['wall']:5.2f} cores busy ({r['cores']} allowed)")
    for other in readers[1:]:
        print(f"throughput {first['name']} / {other['name']}: {other['wall'] / first['wall']:.2f}x images/s;  conditions "
              f"where {first['name']} reads fewer exactly: {', '.join(behind[other['name']]) or 'none'}")


if __name__ == "__main__":
    main()
