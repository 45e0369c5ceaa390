import Foundation

/// The AAMVA DL/ID magnetic stripe (the standard's magnetic-stripe annex: Annex F of the 2000-2020 standards), as
/// a stripe reader or British Columbia's licence PDF417 gives its three tracks.
///
/// The tracks' layout, stated once:
/// - track 1 (`%` … `?`): state or province (2), city (up to 13, `^` after it when shorter), name (up to 35,
///   `^` after it when shorter: family `$` given `$` middle), address (lines separated by `$`, `^` after it);
/// - track 2 (`;` … `?`): issuer number (6 digits), licence number (up to 13 digits), `=`, expiry `YYMM`, birth
///   date `CCYYMMDD`, the licence number's overflow (up to 5 digits, or `=` when none);
/// - track 3 (from its start sentinel, `%` as the standard writes it, `#` or `+` as some readers give it):
///   template and security versions (1 each), postal code (11), class (2), restrictions (10), endorsements (4),
///   sex (1), height (3), weight (3), hair and eye colour (3 each), then issuer data.
///
/// A track that does not follow this layout is damage: the stripe is refused naming the track, never read in part.
/// Track 3 may be missing (many readers do not read it).
public struct AAMVAMagneticStripe: Sendable, Equatable {
    public var state: String
    public var city: String
    public var familyName: String
    /// The given names as the name field has them: the second `$` part (which may hold middle names after a
    /// space), then any further parts.
    public var givenNames: [String]
    public var address: [String]
    public var issuerId: String
    public var number: String
    /// `YYMM` as the track writes it.
    public var expiry: (year: Int, month: Int)
    /// `YYYY-MM-DD`.
    public var birthDate: String
    public var postalCode: String?
    public var sex: String?
    public var raw: String

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.raw == rhs.raw }

    /// Two-digit expiry years up to this one are 20YY, later ones 19YY.
    static let centuryPivot = 69

    /// The track-3 field positions after its start sentinel: postal code, sex.
    static let track3Postal = 3..<14
    static let track3Sex = 30

    public init(parsing text: String) throws(AAMVAError) {
        var reader = Reader(Array(text.unicodeScalars))
        guard let track1 = reader.track(start: "%") else { throw Self.damaged("track 1 (no '%' … '?' track)") }
        guard let track2 = reader.track(start: ";") else { throw Self.damaged("track 2 (no ';' … '?' track after track 1)") }
        let track3 = reader.track(start: "%") ?? reader.track(start: nil)
        guard reader.atEndOfTracks else { throw Self.damaged("the text after the tracks") }
        raw = text
        (state, city, familyName, givenNames, address) = try Self.readTrack1(track1)
        (issuerId, number, expiry, birthDate) = try Self.readTrack2(track2)
        (postalCode, sex) = try track3.map(Self.readTrack3) ?? (nil, nil)
    }

    static func damaged(_ what: String) -> AAMVAError {
        AAMVAError(message: "magnetic-stripe licence: \(what) does not follow the AAMVA stripe layout: refused")
    }

    static func readTrack1(_ track: [Unicode.Scalar]) throws(AAMVAError) -> (String, String, String, [String], [String]) {
        func text(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(track[range])) }
        guard track.count > 2, track[0..<2].allSatisfy({ ("A"..."Z").contains($0) }) else { throw damaged("track 1's state") }
        var cursor = 2
        // A field shorter than its length ends at `^`; one of the full length has none.
        func field(_ length: Int) -> String {
            let end = min(track.count, cursor + length)
            if let separator = track[cursor..<min(track.count, end + 1)].firstIndex(of: "^") {
                defer { cursor = separator + 1 }
                return text(cursor..<separator)
            }
            defer { cursor = end }
            return text(cursor..<end)
        }
        let city = field(13)
        let name = field(35)
        let address = cursor < track.count ? text(cursor..<(track[cursor...].firstIndex(of: "^") ?? track.count)) : ""
        let parts = name.split(separator: "$", omittingEmptySubsequences: false).map { AAMVAElementCatalogue.clean(String($0)) }
        guard !city.contains("$"), parts.count >= 2, let family = parts.first, !family.isEmpty,
            family.unicodeScalars.first.map(CharacterSet.letters.contains) == true
        else { throw damaged("track 1's name (family$given$middle)") }
        let lines = address.split(separator: "$").map { AAMVAElementCatalogue.clean(String($0)) }.filter { !$0.isEmpty }
        return (text(0..<2), AAMVAElementCatalogue.clean(city), family, Array(parts.dropFirst()), lines)
    }

    static func readTrack2(_ track: [Unicode.Scalar]) throws(AAMVAError) -> (String, String, (year: Int, month: Int), String) {
        let fields = track.split(separator: "=", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        let digits = { (text: String) in text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        guard fields.count >= 2, fields.count <= 3, fields.allSatisfy(digits), (7...19).contains(fields[0].count) else {
            throw damaged("track 2 (issuer number, licence number, '=')")
        }
        let dates = fields[1]
        guard (12...17).contains(dates.count), fields.count == 2 || fields[2].isEmpty else {
            throw damaged("track 2's expiry, birth date and overflow")
        }
        let number = { (text: Substring) in Int(text) ?? 0 }
        let expiry = (year: number(dates.prefix(2)), month: number(dates.dropFirst(2).prefix(2)))
        let birth = dates.dropFirst(4).prefix(8)
        let (year, month, day) = (number(birth.prefix(4)), number(birth.dropFirst(4).prefix(2)), number(birth.suffix(2)))
        guard isValidDate(year: year, month: month, day: day), year >= 1850 else { throw damaged("track 2's birth date") }
        guard (1...12).contains(expiry.month) || [77, 88, 99].contains(expiry.month) else { throw damaged("track 2's expiry") }
        let overflow = dates.dropFirst(12)
        return (String(fields[0].prefix(6)), String(fields[0].dropFirst(6)) + overflow, expiry, formatDate(year: year, month: month, day: day))
    }

    static func readTrack3(_ track: [Unicode.Scalar]) throws(AAMVAError) -> (String?, String?) {
        // Positions count from the start sentinel, which `Reader.track` removed.
        let track = [" "] + track
        guard track.count > track3Sex else { throw damaged("track 3 (shorter than its fields up to sex)") }
        let postal = AAMVAElementCatalogue.clean(String(String.UnicodeScalarView(track[track3Postal])))
        guard postal.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" }) else {
            throw damaged("track 3's postal code")
        }
        let sex = track[track3Sex]
        guard "12MF9X ".unicodeScalars.contains(sex) else { throw damaged("track 3's sex") }
        return (postal.isEmpty ? nil : postal, sex == " " ? nil : String(sex))
    }

    /// The same document keys as a DL/ID record gives (contract §4), and what the stripe leaves undecided.
    public func reading() -> AAMVAReading {
        var fields = DocumentFields()
        var warnings = ["AAMVA magnetic stripe: read from its tracks (no issue date; the expiry is a month)"]
        fields[.documentNumber] = number.isEmpty ? nil : number
        fields[.lastName] = familyName
        // The given names as versions 02-03 give DCT: the first word first, the rest middle names.
        let given = givenNames.flatMap { AAMVAFields.parts($0, separators: " ") }
        fields[.firstName] = given.first
        fields[.middleName] = given.count > 1 ? given.dropFirst().joined(separator: " ") : nil
        fields[.fullName] = (given + [familyName]).joined(separator: " ")
        fields[.dateOfBirth] = birthDate
        var expiryIsMonth = false
        switch expiry.month {
        case 1...12:
            // The track gives the month the licence expires in: its last day is the last it may be valid.
            let year = (expiry.year <= Self.centuryPivot ? 2000 : 1900) + expiry.year
            fields[.dateOfExpiry] = formatDate(year: year, month: expiry.month, day: daysInMonth(year: year, month: expiry.month))
            expiryIsMonth = true
        case 77:
            warnings.append("AAMVA magnetic stripe: the licence does not expire (month 77): no expiry date")
        default:
            warnings.append("AAMVA magnetic stripe: the expiry is given relative to the birth date (month 88 or 99): not read")
        }
        fields[.addressState] = state
        fields[.addressCity] = city.isEmpty ? nil : city
        fields[.addressStreet] = address.first
        if let postalCode {
            if let code = AAMVAFields.postalCode(postalCode) {
                fields[.addressZip] = code
            } else {
                warnings.append("AAMVA magnetic stripe: the postal code is not a ZIP or postal code: dropped")
            }
        }
        fields[.sex] = sex.flatMap(AAMVAFields.sex)
        fields[.barcode] = raw
        return AAMVAReading(fields: fields, warnings: warnings, expiryIsMonth: expiryIsMonth)
    }

    /// Walks the text track by track.
    struct Reader {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        /// The content of the next track opening with `start` (any sentinel when nil) and closing with `?`, after
        /// whitespace or control bytes and at most one other character (the previous track's LRC, which some
        /// readers pass on); nil, without moving, when there is none.
        mutating func track(start: Unicode.Scalar?) -> [Unicode.Scalar]? {
            var cursor = skippingJunk(from: index)
            if let start, cursor < scalars.count, scalars[cursor] != start {
                let after = skippingJunk(from: cursor + 1)
                if after < scalars.count, scalars[after] == start { cursor = after }
            }
            guard cursor < scalars.count, start == nil || scalars[cursor] == start,
                let end = scalars[(cursor + 1)...].firstIndex(of: "?")
            else { return nil }
            index = end + 1
            return Array(scalars[(cursor + 1)..<end])
        }

        /// Whether only whitespace, control bytes and at most one other character (an LRC) are left.
        var atEndOfTracks: Bool {
            let cursor = skippingJunk(from: index)
            return cursor >= scalars.count || skippingJunk(from: cursor + 1) >= scalars.count
        }

        func skippingJunk(from start: Int) -> Int {
            var cursor = start
            while cursor < scalars.count, AAMVARecord.isJunk(scalars[cursor]) { cursor += 1 }
            return cursor
        }
    }
}

/// The last day of a month.
func daysInMonth(year: Int, month: Int) -> Int {
    (28...31).last { isValidDate(year: year, month: month, day: $0) } ?? 28
}

extension AAMVAReading {
    /// Licence data as a PDF417 or a capture service gives it: the DL/ID file, or magnetic-stripe tracks.
    public init(parsing text: String) throws(AAMVAError) {
        self = AAMVARecord.isMagneticStripe(text) ? try AAMVAMagneticStripe(parsing: text).reading() : try AAMVARecord(parsing: text).reading()
    }
}
