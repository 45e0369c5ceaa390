import VerifyModel

/// Writes AAMVA magnetic-stripe text (the standard's magnetic-stripe annex) from a holder's data, in the layouts
/// stripe readers and British Columbia's PDF417 give: the track fields at their lengths, `^` after a field
/// shorter than its length, `=` in track 2, track 3 at its fixed positions.
public struct AAMVAStripe: Sendable {
    /// How the tracks come out of the reader.
    public enum Layout: String, CaseIterable, Sendable {
        /// Three tracks as the annex writes them: `%…?;…=…=?%…?` (no overflow: `=` in its place).
        case standard
        /// A reader that gives track 3 with `#` for its sentinel and no `=` after the birth date (Texas readers).
        case hashTrack3
        /// One line per track (CR LF) and an LRC character after each track's `?`, a licence number of more than
        /// 13 digits whose rest is in the overflow field; no track 3 (a two-track reader).
        case twoTracksWithLRC
    }

    public var state = "BC"
    public var city = "VICTORIA"
    public var family = "NAKAMURA"
    public var given = "KEIKO"
    public var middle = ""
    public var street = "1200 DOUGLAS ST"
    public var issuer = "636028"
    public var number = "7001234"
    /// `YYMM`.
    public var expiry = "3104"
    /// `CCYYMMDD`.
    public var birth = "19850412"
    public var postal = "V8W2E7"
    public var sex = "2"
    public var layout = Layout.standard

    public init() {}

    func padded(_ text: String, _ length: Int) -> String {
        String(text.prefix(length)) + String(repeating: " ", count: max(0, length - text.count))
    }

    /// A field of at most `length` characters: `^` after it when shorter.
    func field(_ text: String, _ length: Int) -> String {
        text.count >= length ? String(text.prefix(length)) : text + "^"
    }

    public var track1: String {
        "%" + state + field(city, 13) + field([family, given, middle].joined(separator: "$"), 35) + street + "^?"
    }

    public var track2: String {
        let main = String(number.prefix(13)), overflow = String(number.dropFirst(13))
        let end = layout == .hashTrack3 && overflow.isEmpty ? "" : (overflow.isEmpty ? "=" : overflow)
        return ";" + issuer + main + "=" + expiry + birth + end + "?"
    }

    public var track3: String {
        let sentinel = layout == .hashTrack3 ? "#" : "%"
        return sentinel + "0" + "1" + padded(postal, 11) + padded("5", 2) + padded("", 10) + padded("", 4) + sex + "165" + " 60"
            + "BRO" + "BRN" + padded("", 10) + "?"
    }

    public var text: String {
        switch layout {
        case .standard, .hashTrack3: track1 + track2 + track3
        case .twoTracksWithLRC: track1 + "Q\r\n" + track2 + "7\r\n"
        }
    }
}
