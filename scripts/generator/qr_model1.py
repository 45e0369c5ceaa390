"""QR Code Model 1 encoder (the obsolete original QR model, ISO/IEC 18004:2000 Annex M).

encode(text, ecc, version, mask) -> numpy uint8 modules (1 = dark), shape (n, n),
n = 17 + 4 * version, no quiet zone. Byte mode (ISO-8859-1); versions 1-12; EC L/M/Q/H.
Model 1 has no alignment patterns / version info; codewords are 2x4 or 4x2 module blocks
in a fixed column order; data and EC blocks are concatenated, not interleaved; the bit
stream starts with 4 zero bits; format info is XORed with 0x2825; "extension patterns" on
the right/bottom edges are drawn as a fixed checkerboard (exact ISO shape unknown here).
Placement, block table and format info follow, and are checked against, zxing-cpp 3.1's
reader (ReadQRCodewordsModel1, Version::Model1, QRDataBlock, DecodeBitStream); run this
file to self-check with the zxingcpp module (Model 1 reads as symbology "]Q0").
zxing-cpp's detector also reads Model 2 version info for versions >= 7 and drops the
symbol unless it matches, so there the (never decoded) pad codewords are chosen to make the
bottom-left area carry that code; if no pad is free, the area is overwritten (<= 3 EC
codewords in error) or, with version=None, a larger version is used.
"""
import re

import numpy as np

# (EC codewords per block, number of blocks, data codewords per block) for L, M, Q, H
# ISO/IEC 18004:2000 Table M.2 / M.4, as in zxing-cpp Version::Model1. Versions 13/14 are
# left out: their table totals (540/609) do not match the 542/610 codeword slots zxing reads.
_EC_TABLE = {
    1: ((7, 1, 19), (10, 1, 16), (13, 1, 13), (17, 1, 9)),
    2: ((10, 1, 36), (16, 1, 30), (22, 1, 24), (30, 1, 16)),
    3: ((15, 1, 57), (28, 1, 44), (36, 1, 36), (48, 1, 24)),
    4: ((20, 1, 80), (40, 1, 60), (50, 1, 50), (66, 1, 34)),
    5: ((26, 1, 108), (52, 1, 82), (66, 1, 68), (44, 2, 23)),
    6: ((34, 1, 136), (32, 2, 53), (42, 2, 43), (56, 2, 29)),
    7: ((42, 1, 170), (40, 2, 66), (52, 2, 54), (46, 3, 24)),
    8: ((24, 2, 104), (48, 2, 80), (64, 2, 64), (56, 3, 29)),
    9: ((30, 2, 123), (60, 2, 93), (50, 3, 52), (68, 3, 34)),
    10: ((34, 2, 145), (68, 2, 111), (58, 3, 61), (58, 4, 31)),
    11: ((40, 2, 168), (40, 4, 64), (52, 4, 52), (54, 5, 29)),
    12: ((46, 2, 192), (46, 4, 73), (58, 4, 61), (62, 5, 33)),
}
_LEVELS = "LMQH"
_EC_FORMAT_BITS = {"L": 1, "M": 0, "Q": 3, "H": 2}

# GF(256), primitive polynomial 0x11D
_EXP, _LOG, _v = [0] * 512, [0] * 256, 1
for _i in range(510):
    _EXP[_i], _LOG[_v] = _v, _LOG[_v] if _i >= 255 else _i
    _v = (_v << 1) ^ (0x11D if _v & 0x80 else 0)


def _rs_ec(data, n_ec):
    gen = [1]  # prod (x - a^i), i = 0..n_ec-1, highest degree first
    for i in range(n_ec):
        nxt = gen + [0]
        for k, c in enumerate(gen):
            if c:
                nxt[k + 1] ^= _EXP[_LOG[c] + i]
        gen = nxt
    rem = [0] * n_ec
    for d in data:
        f = d ^ rem[0]
        rem = rem[1:] + [0]
        if f:
            for k in range(n_ec):
                if gen[k + 1]:
                    rem[k] ^= _EXP[_LOG[gen[k + 1]] + _LOG[f]]
    return rem


def _bch(value, poly, nbits):
    rem = value << (poly.bit_length() - 1)
    for s in range(nbits - 1, -1, -1):
        if rem >> (s + poly.bit_length() - 1) & 1:
            rem ^= poly << s
    return (value << (poly.bit_length() - 1)) | rem


def _codeword_layout(n):
    """Per codeword (in stream order) its 8 (x, y) module positions, MSB first; plus the
    extension-pattern blocks. Mirrors the reader's traversal."""
    cols = n // 4 + 3
    words, ext = [], []
    for j in range(cols):
        if j <= 1:  # 2x4 blocks, right edge
            rows = (n - 8) // 4
            for i in range(rows):
                x, y = n - 1 - 2 * j, n - 1 - 4 * i
                cells = [(x - b % 2, y - b // 2) for b in range(8)]
                (ext if j == 0 and i % 2 == 0 and 0 < i < rows - 1 else words).append(cells)
        elif cols - j <= 4:  # 2x4 blocks, left of the vertical timing pattern
            for i in range((n - 16) // 4):
                x = (cols - j - 1) * 2 + 1 + (cols - j == 4)
                y = n - 9 - 4 * i
                words.append([(x - b % 2, y - b // 2) for b in range(8)])
        else:  # 4x2 blocks
            rows = n // 2
            for i in range(rows):
                if j == 2 and i >= rows - 4:
                    continue
                x = n - 5 - (j - 2) * 4
                y = n - 1 - 2 * i - (i >= rows - 3)
                cells = [(x - b % 4, y - b // 4) for b in range(8)]
                (ext if i == 0 and j % 2 == 1 and j + 1 != cols - 4 else words).append(cells)
    return words, ext


def _mask_bit(m, x, y):
    return [(y + x) % 2 == 0, y % 2 == 0, x % 3 == 0, (y + x) % 3 == 0,
            (y // 2 + x // 3) % 2 == 0, (y * x) % 6 == 0, (y * x) % 6 < 3,
            (y + x + (y * x) % 3) % 2 == 0][m]


def _penalty(a):  # Model 2 style mask evaluation (runs, 2x2 blocks, finder-like, balance)
    rows = ["".join(map(str, r)) for r in np.vstack([a, a.T])]
    score = sum(len(g) - 2 for s in rows for g in re.findall("0{5,}|1{5,}", s))
    score += 40 * sum(s.count("00001011101") + s.count("10111010000") for s in rows)
    blk = a[:-1, :-1] + a[1:, :-1] + a[:-1, 1:] + a[1:, 1:]
    score += 3 * int(np.count_nonzero((blk == 0) | (blk == 4)))
    return score + 10 * int(abs(a.mean() * 100 - 50) // 5)


_PC = np.unpackbits(np.arange(1 << 18, dtype=">u4").view(np.uint8)).reshape(-1, 32).sum(1)  # popcount
_VCODES = {v: _bch(v, 0x1F25, 6) for v in range(7, 41)}  # Model 2 version information


def encode(text, ecc="L", version=None, mask=None):
    """Return the QR Model 1 symbol for `text` as an (n, n) uint8 array, 1 = dark."""
    payload, ecc = text.encode("latin-1"), ecc.upper()
    if ecc not in _EC_FORMAT_BITS or mask not in (None, *range(8)):
        raise ValueError("bad ecc level or mask")
    if version is None:
        for force in (False, True):
            for v in sorted(_EC_TABLE):
                try:
                    return _encode(payload, ecc, v, mask, force)
                except ValueError:
                    continue
        raise ValueError("payload does not fit a QR Model 1 symbol")
    if version not in _EC_TABLE:
        raise ValueError("QR Model 1 version must be 1-12")
    return _encode(payload, ecc, version, mask, True)


def _encode(payload, ecc, version, mask, force):
    ec, nb, nd = _EC_TABLE[version][_LEVELS.index(ecc)]
    ccbits, cap = (8 if version <= 9 else 16), 8 * nb * nd
    bits = "0000" + "0100" + format(len(payload), "0%db" % ccbits)  # 4 zero bits, byte mode
    bits += "".join(format(c, "08b") for c in payload)
    if len(bits) > cap or len(payload) >= 1 << ccbits:
        raise ValueError("payload does not fit version %d-%s" % (version, ecc))
    bits += "0" * min(4, cap - len(bits))  # terminator
    bits += "0" * (-len(bits) % 8)
    data = [int(bits[k:k + 8], 2) for k in range(0, len(bits), 8)]
    free = list(range(len(data), nb * nd))  # pad codewords: never read by the decoder
    data += [(0xEC, 0x11)[k % 2] for k in range(len(free))]

    n = 17 + 4 * version
    words, ext = _codeword_layout(n)
    func = np.full((n, n), -1, dtype=np.int8)  # [y, x]; -1 = not yet assigned
    for cx, cy in ((0, 0), (n - 7, 0), (0, n - 7)):  # finder patterns + separators
        for d, val in ((-1, 0), (0, 1), (1, 0), (2, 1)):
            func[max(cy + d, 0):cy + 7 - d, max(cx + d, 0):cx + 7 - d] = val
    for k in range(8, n - 8):  # timing patterns
        func[6, k] = func[k, 6] = (k + 1) % 2
    for x, y in (c for cells in ext for c in cells):  # extension patterns: fixed checkerboard
        func[y, x] = (x + y + 1) % 2
    func[n - 8, 8] = 1  # dark module (as in Model 2; ignored by the reader)

    def stream(d):
        blocks = [d[b * nd:(b + 1) * nd] for b in range(nb)]
        s = sum(blocks, []) + sum((_rs_ec(b, ec) for b in blocks), [])
        return s + [0] * (len(words) - len(s))  # remainder codewords (skipped by reader)

    # zxing-cpp's detector, for n >= 45, reads Model 2 version info at the top right (A) and,
    # mirrored, at the bottom left (B); the best match must be this version, or it gives up.
    # Both areas are data/EC modules here; B is steered via free pad bits (GF(2)-linear).
    where = {c: (w, b) for w, cells in enumerate(words) for b, c in enumerate(cells)}
    areas = ([(x, y) for y in range(5, -1, -1) for x in range(n - 9, n - 12, -1)],
             [(x, y) for x in range(5, -1, -1) for y in range(n - 9, n - 12, -1)])

    def read(s, m):
        out = []
        for cells in areas:
            v = 0
            for x, y in cells:
                w, b = where[(x, y)]
                v = (v << 1) | (((s[w] >> (7 - b)) & 1) ^ _mask_bit(m, x, y))
            out.append(v)
        return np.array(out, np.int64)

    base, flips, comb = stream(data), [], np.zeros((1, 2), np.int64)
    if version >= 7:
        for p, t in [(p, t) for p in free[-2:] for t in range(8)]:  # <= 65536 combinations
            d2 = list(data)
            d2[p] ^= 1 << t
            flips.append((p, t))
            comb = np.concatenate([comb, comb ^ (read(stream(d2), 0) ^ read(base, 0))])
    others = np.array([c for v, c in _VCODES.items() if v != version])
    cands = []
    for forced in (False, True):
        for m in (range(8) if mask is None else [mask]):
            d, fix, dist = list(data), None, 0
            if version >= 7:
                ab = comb ^ read(base, m)
                db = _PC[ab[:, 1] ^ _VCODES[version]].astype(int)  # distance of B
                if forced:  # no pad freedom left: overwrite B (costs <= 3 EC codewords)
                    db[:], db[1:], fix = 0, 99, _VCODES[version]
                ok = np.nonzero(db <= 3)[0]
                ok = ok[_PC[ab[ok, 0, None] ^ others[None, :]].min(axis=1) > db[ok]]
                if not len(ok):
                    continue
                idx = int(ok[np.argmin(db[ok])])
                dist = int(db[idx])
                for k, (p, t) in enumerate(flips):
                    d[p] ^= (idx >> k & 1) << t
            cands.append((dist, m, d, fix))
        if cands or not force:
            break
    if not cands:
        raise ValueError("version %d-%s: cannot satisfy the reader's version-info check" % (version, ecc))
    best = None
    cands = [c for c in cands if c[0] == min(c[0] for c in cands)]  # best B match first
    for _, m, d, fix in cands:
        mat = func.copy()
        fmt = _bch((_EC_FORMAT_BITS[ecc] << 3) | m, 0x537, 5) ^ 0x2825
        for k in range(15):  # format information, bit 14 first
            bit = (fmt >> (14 - k)) & 1
            mat[((8,) * 8 + (7, 5, 4, 3, 2, 1, 0))[k], ((0, 1, 2, 3, 4, 5, 7, 8, 8) + (8,) * 6)[k]] = bit
            mat[(n - 1 - k, 8) if k < 7 else (8, n - 15 + k)] = bit
        for cw, cells in zip(stream(d), words):
            for b, (x, y) in enumerate(cells):
                mat[y, x] = ((cw >> (7 - b)) & 1) ^ _mask_bit(m, x, y)
        for k, (x, y) in enumerate(areas[1] if fix is not None else []):
            mat[y, x] = (fix >> (17 - k)) & 1
        assert (mat >= 0).all()
        p = _penalty(mat) if len(cands) > 1 else 0
        if best is None or p < best[0]:
            best = (p, mat.astype(np.uint8))
    return best[1]


def _render(mods, scale=4, quiet=4):
    img = np.pad(1 - mods, quiet, constant_values=1) * 255
    return np.kron(img, np.ones((scale, scale))).astype(np.uint8)


if __name__ == "__main__":
    url = ("https://api.pingone.com/v1/idValidations/webVerifications?envId=5f1a9d2e-7c3b-"
           "4a61-8e2f-3b4c5d6e7f80&txnid=14c7ad50-d139&code=027149")
    cases = [("HELLO", "L", 1), ("Model 1 test", "M", 3), ("https://example.com/x?q=1", "L", 5),
             ("The quick brown fox jumps over the lazy dog", "M", 7), (url, "L", 10), (url, "M", None)]
    try:
        import zxingcpp
    except ImportError:
        zxingcpp = None
    bad = 0
    for text, ecc, ver in cases:
        mods = encode(text, ecc, ver)
        tag = "v%d-%s" % ((mods.shape[0] - 17) // 4, ecc)
        res = zxingcpp.read_barcodes(_render(mods)) if zxingcpp else None
        # zxing-cpp 3.1 reports format QRCode; Model 1 shows as symbology identifier "]Q0"
        ok = res is None or [(r.text, r.symbology_identifier) for r in res] == [(text, "]Q0")]
        print(tag, "built (zxingcpp not importable)" if res is None else "OK" if ok else "FAIL",
              [(r.text[:40], r.symbology_identifier) for r in res or []])
        bad += not ok
    raise SystemExit(1 if bad else 0)
