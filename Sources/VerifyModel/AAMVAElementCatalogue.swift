import Foundation

/// What the DL/ID Card Design Standard says about element ids and values, as far as reading needs it.
enum AAMVAElementCatalogue {
    /// Elements of the 2005-2020 standards (versions 02-10).
    static let current: Set<String> = [
        "DCA", "DCB", "DCD", "DBA", "DCS", "DAC", "DAD", "DCT", "DBD", "DBB", "DBC", "DAY", "DAU", "DAG", "DAH", "DAI",
        "DAJ", "DAK", "DAQ", "DCF", "DCG", "DDE", "DDF", "DDG", "DAZ", "DCI", "DCJ", "DCK", "DBN", "DBG", "DBS", "DCU",
        "DCE", "DCL", "DDA", "DDB", "DDC", "DDD", "DAW", "DAX", "DDH", "DDI", "DDJ", "DDK", "DDL", "DCH", "DCM", "DCN",
        "DCO", "DCP", "DCQ", "DCR"
    ]
    /// Elements of the 2000 standard (version 01) and the pre-standard layout that later versions dropped.
    static let legacy: Set<String> = [
        "DAA", "DAB", "DAE", "DAF", "DAL", "DAM", "DAN", "DAO", "DAP", "DAR", "DAS", "DAT", "DAV", "DBE", "DBF", "DBH",
        "DBI", "DBJ", "DBK", "DBL", "DBM", "DBO", "DBP", "DBQ", "DBR"
    ]

    static func knownIds(version: Int) -> Set<String> {
        version <= 1 ? current.union(legacy) : current
    }

    /// Elements without which a record identifies no one; one that is given twice with different values
    /// makes the record ambiguous.
    static let identityIds: Set<String> = ["DAQ", "DCS", "DAC", "DAD", "DCT", "DAA", "DAB", "DBB", "DBA"]

    /// Elements every record of a version carries: one missing while its id stands inside another element's
    /// value means separators were lost.
    static func mandatoryIds(version: Int) -> Set<String> {
        version <= 1
            ? ["DAQ", "DBB", "DBA", "DAG", "DAI", "DAJ", "DAK"]
            : ["DCS", "DBB", "DBA", "DAQ", "DBD", "DBC", "DAG", "DAI", "DAJ", "DAK", "DCG", "DCF"]
    }

    /// The elements the standard makes mandatory in a DL subfile of each version (DL/ID-2000 for 01, the 2003 and
    /// 2005 specifications for 02-03, the 2009-2020 standards' table of mandatory elements for 04 on). In a run
    /// whose separators were lost, such an id starts an element at one of the places it stands.
    static func requiredIds(version: Int) -> Set<String> {
        switch version {
        case ...1: ["DAQ", "DAG", "DAI", "DAJ", "DAK", "DAR", "DAS", "DAT", "DBA", "DBB", "DBC", "DBD"]
        case 2, 3:
            [
                "DCA", "DCB", "DCD", "DBA", "DCS", "DCT", "DBD", "DBB", "DBC", "DAY", "DAU", "DAG", "DAI", "DAJ", "DAK", "DAQ",
                "DCF", "DCG"
            ]
        default:
            [
                "DCA", "DCB", "DCD", "DBA", "DCS", "DAC", "DAD", "DBD", "DBB", "DBC", "DAY", "DAU", "DAG", "DAI", "DAJ", "DAK",
                "DAQ", "DCF", "DCG", "DDE", "DDF", "DDG"
            ]
        }
    }

    /// Whether `id` can name an element of subfile `type`: `D` + A-D + a letter in the DL and ID subfiles (and
    /// any other standard subfile), the subfile's own letter pattern (`Z…`) in a jurisdiction's.
    static func isElementId(_ id: String, in type: String) -> Bool {
        let scalars = Array(id.unicodeScalars)
        guard scalars.count == 3, scalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) }) else { return false }
        if type.hasPrefix("Z") { return scalars[0] == "Z" }
        return scalars[0] == "D" && ("A"..."D").contains(scalars[1]) && ("A"..."Z").contains(scalars[2])
    }

    /// The mandatory ids missing from `elements` that stand inside one of their values.
    static func embeddedIds(in elements: [String: String], version: Int) -> Set<String> {
        let missing = mandatoryIds(version: version).subtracting(elements.keys)
        return missing.filter { id in elements.values.contains { $0.contains(id) } }
    }

    /// Values the standard calls "none" or "unavailable": no value at all.
    static let placeholders: Set<String> = ["NONE", "UNAVL", "UNAVAIL", "UNAVAILABLE", "N/A"]

    /// A value as read: padding (spaces, NUL) and trailing commas (Ontario) trimmed, placeholders emptied.
    static func clean(_ value: String) -> String {
        let padding = CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\0"))
        var value = value.trimmingCharacters(in: padding)
        while value.hasSuffix(",") { value = String(value.dropLast()).trimmingCharacters(in: padding) }
        return placeholders.contains(value.uppercased()) ? "" : value
    }

    /// Whether `value` can be element `id`'s, by the standard's type and length: used to choose where lost
    /// separators were, so it errs towards "no".
    static func isPlausible(_ raw: String, for id: String) -> Bool {
        let value = raw.trimmingCharacters(in: .whitespaces)
        if value.isEmpty { return !["DAQ", "DBB", "DBA", "DCS", "DAB", "DAA"].contains(id) }
        if placeholders.contains(value.uppercased()) { return !["DAQ", "DBB"].contains(id) }
        let printable = value.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) || (0xA0...0xFF).contains($0.value) }
        guard printable else { return false }
        // A name or street starts with a letter or digit: `,N,` is the rest of a name, not a street line.
        if ["DCS", "DAC", "DAD", "DCT", "DAB", "DAA", "DAG", "DAH", "DAL", "DAM", "DAI", "DAN"].contains(id),
            let first = value.unicodeScalars.first, !CharacterSet.alphanumerics.contains(first)
        {
            return false
        }
        func only(_ allowed: String, max: Int) -> Bool {
            value.count <= max
                && value.unicodeScalars.allSatisfy { scalar in
                    allowed.unicodeScalars.contains(scalar) || (allowed.contains("A") && CharacterSet.letters.contains(scalar))
                        || (allowed.contains("0") && ("0"..."9").contains(scalar))
                }
        }
        switch id {
        case "DBA", "DBB", "DBD", "DDB", "DDC", "DDH", "DDI", "DDJ":
            return AAMVAFields.dateDigits(value) != nil
        case "DBC": return only("0MFUX", max: 1)
        case "DAJ", "DAO": return value.count == 2 && only("A", max: 2)
        case "DCG": return value.count == 3 && only("A", max: 3)
        case "DAY", "DAZ": return only("A", max: 3)
        case "DAU": return only("0 INCMinc-'\"", max: 6)
        case "DAV", "DAW", "DAX": return only("0 ", max: 3)
        case "DAK", "DAP": return only("A0 -", max: 11)
        case "DDA", "DDD", "DDE", "DDF", "DDG", "DDK", "DDL": return value.count == 1
        case "DCA", "DCB", "DCD", "DAR", "DAS", "DAT": return only("A0 ", max: 12)
        case "DAQ", "DCF", "DCK": return only("A0 -", max: 25)
        case "DCU", "DAE": return only("A0 .", max: 5)
        case "DCS", "DAC", "DAD", "DCT", "DAB", "DAF", "DBN", "DBG", "DBS": return only("A -'.,$", max: 40)
        // A full name may end in a numbered suffix (`,3RD`).
        case "DAA": return only("A0 -'.,$", max: 125)
        case "DAG", "DAH", "DAL", "DAM": return value.count <= 35
        case "DAI", "DAN": return value.count <= 20
        default: return value.count <= 40
        }
    }
}
