import Foundation

/// A repair that let a damaged licence be read, named by a stable code: results carry it at the start of a
/// warning (`headerRecovered: …`) and `scan --json` lists the codes, so that a caller can route the licence to
/// review.
public enum AAMVARepair: String, Sendable, Codable, CaseIterable {
    /// The header before the subfile directory was damaged or preceded by junk, and was read from its file type.
    case headerRecovered
    /// The separators between elements were lost, and the elements were split on their ids.
    case separatorsRestored

    /// The warning a result carries: the code, then what was repaired (never a value).
    func warning(_ what: String) -> String { "\(rawValue): \(what)" }

    /// The repairs `warnings` name.
    public static func named(in warnings: [String]) -> [AAMVARepair] {
        allCases.filter { repair in warnings.contains { $0.hasPrefix(repair.rawValue + ":") } }
    }
}

/// Where the AAMVA header is in a payload: its compliance indicator (`@`) and its file type (`ANSI `, or `AAMVA`
/// before 2000), and what damage was read past to find it.
///
/// The standard's header is `@`, LF, RS, CR, then the file type. Strictly, only whitespace and control bytes may
/// stand before the `@` and between it and the file type. Real captures also carry bytes that are neither: HID
/// keyboard emulation turns the RS and CR into letters (`@\n6MANSI `), a scanner prepends its own preamble. Such
/// a header is recovered only when a file type within the first `searchedScalars` is followed by the issuer
/// number, version and entry count and a subfile directory listing a DL or ID subfile; the record parser then
/// requires that subfile's elements after it. Text without all of that is not AAMVA data.
struct AAMVAHeaderLocation {
    /// Index of the compliance indicator in the payload: the `@` before the file type, or the file type itself
    /// where no `@` precedes it.
    var compliance: Int
    /// The file type marker relative to `compliance`, and where the header's digits start.
    var marker: (at: Int, end: Int)
    /// What was read past, in words without values; nil for a header as the standard writes it.
    var damage: String?

    /// How far into a payload a damaged header's file type is looked for.
    static let searchedScalars = 48

    /// The file types: `ANSI ` (2000 on), `AAMVA` (before), and either with a letter lost.
    static let fileTypes = ["ANSI ", "AAMVA", "AMVA ", "AMVA", "ANSI"].map { Array($0.unicodeScalars) }

    init(compliance: Int, marker: (at: Int, end: Int), damage: String?) {
        self.compliance = compliance
        self.marker = marker
        self.damage = damage
    }

    init?(_ scalars: [Unicode.Scalar]) {
        if let strict = Self.strict(scalars) {
            self = strict
            return
        }
        guard let recovered = Self.recovered(scalars) else { return nil }
        self = recovered
    }

    /// Junk* `@` (whitespace or control bytes)* file type, within the header's first 16 characters.
    static func strict(_ scalars: [Unicode.Scalar]) -> AAMVAHeaderLocation? {
        guard let at = scalars.firstIndex(where: { !AAMVARecord.isJunk($0) }), scalars[at] == "@" else { return nil }
        let head = Array(scalars[at..<min(scalars.count, at + 20)])
        for start in 1..<min(16, max(1, head.count)) {
            // Only separators may stand between the '@' and the marker.
            guard head[1..<start].allSatisfy({ AAMVARecord.isSeparator($0) || $0 == " " }) else { break }
            if let end = fileTypeEnd(head, at: start) {
                return AAMVAHeaderLocation(
                    compliance: at, marker: (start, end),
                    damage: at > 0 ? "whitespace or control bytes before the '@' were ignored" : nil)
            }
        }
        return nil
    }

    /// A file type anywhere in the first `searchedScalars`, followed by a header and a directory that read.
    static func recovered(_ scalars: [Unicode.Scalar]) -> AAMVAHeaderLocation? {
        for start in 0..<min(searchedScalars, scalars.count) {
            let compliance = scalars[..<start].lastIndex(of: "@") ?? start
            let head = Array(scalars[compliance..<min(scalars.count, compliance + (start - compliance) + 20)])
            guard let end = fileTypeEnd(head, at: start - compliance) else { continue }
            var ignored: [String] = []
            let window = Array(scalars[compliance...].prefix(start - compliance + 12 + 10 * 32))
            guard (try? AAMVAHeader(window, marker: (start - compliance, end), warnings: &ignored)) != nil else { continue }
            let damage =
                compliance == start
                ? "no '@' compliance indicator before the file type; read from the file type and subfile directory"
                : "\(start - compliance - 1) character(s) between the '@' and the file type are not the standard's separators"
                    + (compliance > 0 ? ", after \(compliance) before the '@'" : "")
                    + "; read from the file type and subfile directory"
            return AAMVAHeaderLocation(compliance: compliance, marker: (start - compliance, end), damage: damage)
        }
        return nil
    }

    /// Where the header's digits start when a file type stands at `start` in `head` and a digit follows it.
    static func fileTypeEnd(_ head: [Unicode.Scalar], at start: Int) -> Int? {
        for pattern in fileTypes where start + pattern.count <= head.count && head[start..<(start + pattern.count)].elementsEqual(pattern) {
            var end = start + pattern.count
            while end < head.count, head[end] == " " { end += 1 }
            if end < head.count, ("0"..."9").contains(head[end]) { return end }
        }
        return nil
    }
}
