import Foundation

/// Why a barcode payload was refused as AAMVA data: a `documentCaptureError`.
public struct AAMVAError: CodedError, Equatable, CustomStringConvertible {
    public var message: String

    public var failureCode: FailureCode { .document(.documentCaptureError) }
    public var description: String { message }
}

/// The AAMVA DL/ID card data of a North-American licence's PDF417: header, subfile directory and elements.
///
/// Read as the DL/ID Card Design Standard lays it out (versions 01 to 10, and the pre-standard `AAMVA` header)
/// and as real issuers and transports deliver it: subfiles without their type prefix, offsets that point
/// elsewhere, separators turned into other control bytes or `|`, a damaged header (`AAMVAHeaderLocation`), and
/// separators lost altogether (`AAMVASeparatorRecovery`: restored only where every split gives one identity).
/// Each such repair is a warning starting with its `AAMVARepair` code.
public struct AAMVARecord: Sendable, Equatable {
    /// Issuer identification number (`636000` for Virginia...); empty for a pre-standard header that gives none.
    public var issuerId: String
    /// The AAMVA version (1 to 10); 0 for a pre-standard header.
    public var version: Int
    public var jurisdictionVersion: Int?
    /// Subfile type (`DL`, `ID`, `ZV`...) to its elements (`DAQ` -> value), values without padding.
    public var subfiles: [String: [String: String]]
    /// Repairs made while reading (never values): a caller may route such a document to review.
    public var warnings: [String]
    public var raw: String

    /// Whether `text` holds AAMVA DL/ID data: a header this reader can locate (`AAMVAHeaderLocation`), strict or
    /// recovered. Barcode text handed over as text is parsed as AAMVA only then.
    public static func hasHeader(_ text: String) -> Bool {
        AAMVAHeaderLocation(Array(text.unicodeScalars.prefix(AAMVAHeaderLocation.searchedScalars + 64))) != nil
    }

    /// Whether `text` is the track data of a licence's magnetic stripe (`%` track 1 with `^` field separators,
    /// as British Columbia's PDF417 and US stripe readers give it) rather than AAMVA DL/ID elements.
    public static func isMagneticStripe(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.prefix(256))
        guard let first = scalars.firstIndex(where: { !isJunk($0) }), scalars[first] == "%" else { return false }
        return scalars[first...].contains("^") || scalars[first...].contains("?")
    }

    /// Whether `text` holds nothing but whitespace and control bytes: no barcode at all.
    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy(isJunk)
    }

    /// The DL or ID subfile's elements.
    public var elements: [String: String] { subfiles["DL"] ?? subfiles["ID"] ?? [:] }

    public init(parsing text: String) throws(AAMVAError) {
        let all = Array(text.unicodeScalars)
        guard all.contains(where: { !Self.isJunk($0) }) else {
            throw AAMVAError(message: "the barcode text is empty")
        }
        if Self.isMagneticStripe(text) {
            throw AAMVAError(message: "magnetic-stripe track data, not AAMVA DL/ID elements (AAMVAReading(parsing:) reads both)")
        }
        guard let location = AAMVAHeaderLocation(all) else {
            throw AAMVAError(message: "not AAMVA data: no '@' compliance indicator with an 'ANSI ' file type and a subfile directory")
        }
        var warnings: [String] = []
        if let damage = location.damage { warnings.append(AAMVARepair.headerRecovered.warning(damage)) }
        let scalars = Array(all[location.compliance...])
        let header = try AAMVAHeader(scalars, marker: location.marker, warnings: &warnings)
        var subfiles = try AAMVASubfiles(scalars, header: header, warnings: &warnings)
        let primary = header.primaryType
        if subfiles.elements[primary] == nil {
            // A recovered header is AAMVA data only because its body parses as such: without elements it is not.
            guard location.damage == nil else {
                throw AAMVAError(message: "not AAMVA data: a damaged header with no DL or ID elements after it")
            }
            // Cut off after the header: a record with no elements, which the identity rules then refuse by name.
            subfiles.elements[primary] = [:]
            warnings.append("AAMVA data has no DL or ID elements")
        }
        if try !subfiles.recoverLostSeparators(in: scalars, header: header, warnings: &warnings) {
            subfiles.dropCutElement(in: scalars, header: header, warnings: &warnings)
        }
        issuerId = header.issuerId
        version = header.version
        jurisdictionVersion = header.jurisdictionVersion
        // The identity subfile is reported as DL or ID whatever the directory called it (`DL`, `ID`).
        var named = subfiles.elements
        if primary != "DL", primary != "ID", let elements = named.removeValue(forKey: primary) { named["DL"] = elements }
        self.subfiles = named
        self.warnings = warnings
        raw = text
    }

    /// Whitespace and control bytes (C0, DEL, C1) that transports put around AAMVA data.
    static func isJunk(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || (0x7F...0xA0).contains(scalar.value)
    }

    /// Separators between elements and subfiles as they arrive: LF, RS, CR and the other C0 controls, DEL, C1
    /// controls (keyboard-wedge scanners) and `|` (capture services that flatten lines).
    static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "|"
    }
}

/// The header and subfile directory: who issued the card, which version, and where each subfile is.
struct AAMVAHeader {
    /// A directory entry. Its offset is not kept: subfiles are found by their type (many issuers' offsets are
    /// off), and a length is what separator recovery and truncation need.
    struct Entry {
        var type: String
        var length: Int?
    }

    var issuerId: String
    var version: Int
    var jurisdictionVersion: Int?
    var entries: [Entry]
    /// Where the data after the directory starts.
    var dataStart: Int

    /// The subfile that carries the identity: the first DL or ID entry.
    var primaryType: String {
        entries.first { $0.type == "DL" || $0.type == "ID" }?.type ?? entries.first?.type ?? "DL"
    }

    /// Reads the header whose file type `marker` was located (`AAMVAHeaderLocation`) in `scalars`, which start at
    /// the compliance indicator.
    init(_ scalars: [Unicode.Scalar], marker: (at: Int, end: Int), warnings: inout [String]) throws(AAMVAError) {
        var cursor = marker.end
        var digits = ""
        while cursor < scalars.count, digits.count < 12, ("0"..."9").contains(scalars[cursor]) {
            digits.unicodeScalars.append(scalars[cursor])
            cursor += 1
        }
        func number(_ range: Range<Int>) -> Int {
            Int(String(digits.dropFirst(range.lowerBound).prefix(range.count))) ?? 0
        }
        let entryCount: Int
        switch digits.count {
        case 12 where number(6..<8) >= 2:
            (issuerId, version, jurisdictionVersion, entryCount) = (String(digits.prefix(6)), number(6..<8), number(8..<10), number(10..<12))
        case 10, 11, 12:
            // Version 01 (2000) has no jurisdiction version; some later headers lost theirs.
            (issuerId, version, jurisdictionVersion, entryCount) = (String(digits.prefix(6)), number(6..<8), nil, number(8..<10))
            cursor = marker.end + 10
        case 8, 9:
            // The pre-standard layout (`AAMVA36004001DL…`): no version, the entry count last.
            (issuerId, version, jurisdictionVersion, entryCount) = ("", 0, nil, number(6..<8))
            cursor = marker.end + 8
        default:
            throw AAMVAError(message: "AAMVA header: the issuer number, version and entry count are not 8, 10 or 12 digits")
        }
        guard (1...32).contains(entryCount) else { throw AAMVAError(message: "AAMVA header: no subfile entries") }
        var entries: [Entry] = []
        for _ in 0..<entryCount {
            guard cursor + 10 <= scalars.count else {
                throw AAMVAError(message: "AAMVA header: the subfile directory is cut short")
            }
            let field = { (from: Int, count: Int) in String(String.UnicodeScalarView(scalars[(cursor + from)..<(cursor + from + count)])) }
            let type = field(0, 2)
            guard type.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) }) else {
                throw AAMVAError(message: "AAMVA header: a subfile type in the directory is not two letters")
            }
            // Int() alone would take a sign ("+041"): only four ASCII digits are a number here.
            let number = { (text: String) in text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } ? Int(text) : nil }
            let offset = number(field(2, 4)), length = number(field(6, 4))
            if offset == nil || length == nil {
                warnings.append("AAMVA header: a subfile offset or length is not 4 digits; the subfile was found by its type")
            }
            entries.append(Entry(type: type, length: length))
            cursor += 10
        }
        guard entries.contains(where: { $0.type == "DL" || $0.type == "ID" }) else {
            throw AAMVAError(message: "AAMVA data has no DL or ID subfile")
        }
        self.entries = entries
        dataStart = cursor
    }
}
