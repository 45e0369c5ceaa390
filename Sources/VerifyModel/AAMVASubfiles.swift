import Foundation

/// The elements of each subfile, read by splitting the data after the directory on its separators.
///
/// Offsets are not trusted: many issuers' point a few bytes off, some subfiles do not repeat their type
/// (`DAA…` straight after the directory), and transports change the separators. A token that starts with a
/// directory type followed by one of that subfile's element ids opens that subfile; any other token is an
/// element of the current one.
struct AAMVASubfiles {
    /// Subfile type to its elements.
    var elements: [String: [String: String]] = [:]
    /// Where each subfile's data starts in the scalars (after its type prefix when it has one), and whether
    /// it had the prefix: used to recover lost separators.
    var spans: [String: (start: Int, end: Int, prefixed: Bool)] = [:]

    init(_ scalars: [Unicode.Scalar], header: AAMVAHeader, warnings: inout [String]) throws(AAMVAError) {
        let types = header.entries.map(\.type)
        let primary = header.primaryType
        var current: String?
        var index = header.dataStart
        var ignored = 0
        var lastElement: String?
        var primaryLength = 0
        while index < scalars.count {
            while index < scalars.count, AAMVARecord.isSeparator(scalars[index]) || scalars[index] == " " { index += 1 }
            let tokenStart = index
            while index < scalars.count, !AAMVARecord.isSeparator(scalars[index]) { index += 1 }
            guard index > tokenStart else { continue }
            var bodyStart = tokenStart
            if index - tokenStart >= 5,
                let type = types.first(where: { type in
                    Self.text(scalars, tokenStart, tokenStart + 2) == type
                        && AAMVAElementCatalogue.isElementId(Self.text(scalars, tokenStart + 2, tokenStart + 5), in: type)
                })
            {
                if let open = current { spans[open]?.end = tokenStart }
                current = type
                bodyStart = tokenStart + 2
                spans[type] = (bodyStart, scalars.count, true)
            } else if current == nil {
                // A subfile that does not repeat its type: its first element follows the directory directly.
                guard AAMVAElementCatalogue.isElementId(Self.text(scalars, tokenStart, tokenStart + 3), in: primary) else {
                    ignored += 1
                    continue
                }
                current = primary
                spans[primary] = (tokenStart, scalars.count, false)
            }
            guard let subfile = current else { continue }
            if subfile == primary { primaryLength += index - tokenStart + 1 }
            let id = Self.text(scalars, bodyStart, bodyStart + 3)
            guard index - bodyStart >= 3, AAMVAElementCatalogue.isElementId(id, in: subfile) else {
                ignored += 1
                continue
            }
            let value = AAMVAElementCatalogue.clean(Self.text(scalars, bodyStart + 3, index))
            if let earlier = elements[subfile]?[id] {
                guard earlier != value else { continue }
                guard !AAMVAElementCatalogue.identityIds.contains(id) else {
                    throw AAMVAError(message: "AAMVA data gives \(id) twice with different values")
                }
                warnings.append("AAMVA \(id) is given twice: the first was kept")
                continue
            }
            elements[subfile, default: [:]][id] = value
            lastElement = subfile == primary ? id : nil
        }
        if ignored > 0 { warnings.append("AAMVA data: \(ignored) part(s) that are not elements were ignored") }
        lastPrimaryElement = lastElement
        self.primaryLength = primaryLength
    }

    /// The identity subfile's last element, when nothing of another subfile follows it.
    var lastPrimaryElement: String?
    /// The identity subfile's length as the standard writes it (type prefix, elements, one separator after
    /// each), whatever separators the transport used: what its directory entry's length counts.
    var primaryLength = 0

    /// Drops the last element when the data ends inside it: it may have been cut anywhere in its value, and a
    /// shortened document number or name would be a wrong identity; the identity rules then decide.
    mutating func dropCutElement(in scalars: [Unicode.Scalar], header: AAMVAHeader, warnings: inout [String]) {
        guard let last = lastPrimaryElement, endsEarly(scalars, header: header) else {
            return
        }
        elements[header.primaryType]?[last] = nil
        warnings.append("AAMVA data ends before its directory says: the last element (\(last)) was dropped")
    }

    /// Whether the data stops inside the identity subfile's last element: the text does not end on a
    /// separator, that subfile is the last one present, and a subfile the directory lists never came or the
    /// subfile is shorter than its declared length (counted with one separator per element, so that a trimmed
    /// final CR, CR LF or C1 bytes neither hide a cut nor make one).
    func endsEarly(_ scalars: [Unicode.Scalar], header: AAMVAHeader) -> Bool {
        let primary = header.primaryType
        guard let last = scalars.last, !AAMVARecord.isSeparator(last), let span = spans[primary], span.end == scalars.count else {
            return false
        }
        if header.entries.contains(where: { elements[$0.type] == nil }) { return true }
        guard let declared = header.entries.first(where: { $0.type == primary })?.length else { return false }
        return primaryLength < declared
    }

    static func text(_ scalars: [Unicode.Scalar], _ lower: Int, _ upper: Int) -> String {
        let lower = max(0, min(lower, scalars.count)), upper = max(lower, min(upper, scalars.count))
        return String(String.UnicodeScalarView(scalars[lower..<upper]))
    }

    /// A record whose separators were stripped (a single-line capture) arrives as one element holding all the
    /// others. Split it on element ids only where exactly one split gives the number of elements the
    /// directory's length implies and every typed value is valid; refuse it otherwise, never guess.
    /// Returns whether it split anything.
    mutating func recoverLostSeparators(
        in scalars: [Unicode.Scalar], header: AAMVAHeader,
        warnings: inout [String]
    ) throws(AAMVAError) -> Bool {
        let primary = header.primaryType
        guard let found = elements[primary], let span = spans[primary] else { return false }
        let embedded = AAMVAElementCatalogue.embeddedIds(in: found, version: header.version)
        guard !embedded.isEmpty else { return false }
        guard found.count == 1 else {
            // Some separators survived and others did not: the elements cannot be told apart.
            throw AAMVAError(message: "AAMVA data: element separators were lost (\(embedded.sorted().joined(separator: ", ")) inside other elements)")
        }
        var body = Array(scalars[span.start..<span.end]).filter { !AAMVARecord.isSeparator($0) }
        // A jurisdiction subfile run on after it (`…DDD1ZVZVA01`) starts with its type and one of its ids.
        var followed = false
        for other in header.entries.map(\.type) where other != primary {
            let marker = Array(other.unicodeScalars)
            if let cut = (1..<max(1, body.count - 4)).first(where: { at in
                body[at..<(at + 2)].elementsEqual(marker)
                    && AAMVAElementCatalogue.isElementId(String(String.UnicodeScalarView(body[(at + 2)..<(at + 5)])), in: other)
            }) {
                body = Array(body[..<cut])
                followed = true
            }
        }
        let declared = header.entries.first { $0.type == primary }?.length
        let regionLength = body.count + (span.prefixed ? 2 : 0)
        guard let declared, declared > regionLength, declared - regionLength <= 150 else {
            throw AAMVAError(message: "AAMVA data: element separators were lost and the directory gives no length to split them by")
        }
        let split = AAMVASeparatorRecovery(body: body, version: header.version, expectedCount: declared - regionLength)
        guard let recovered = split.uniqueSplit() else {
            throw AAMVAError(message: "AAMVA data: element separators were lost and the elements cannot be told apart")
        }
        elements[primary] = recovered.elements
        warnings.append("AAMVA data: element separators were lost; the elements were split on their ids")
        if !followed {
            // Nothing after the last element shows that it is whole (a cut record looks the same): dropped.
            elements[primary]?[recovered.last] = nil
            warnings.append("AAMVA data: nothing follows the last element (\(recovered.last)) to show it whole: it was dropped")
        }
        return true
    }
}

/// Splits a run of elements whose separators were lost: every way of cutting it at element ids into exactly
/// `expectedCount` elements, each id used once and each typed value valid, is counted; only a unique one is
/// used, and only when every id that stands inside one of its values is used elsewhere (else that value may
/// hold a lost element: a cut record can have as many elements as an intact one).
struct AAMVASeparatorRecovery {
    let body: [Unicode.Scalar]
    let version: Int
    let expectedCount: Int

    func uniqueSplit() -> (elements: [String: String], last: String)? {
        let text = body.map { Character($0) }
        let known = AAMVAElementCatalogue.knownIds(version: version)
        let candidates = (0..<max(0, body.count - 2)).filter { known.contains(String(text[$0..<($0 + 3)])) }
        guard candidates.first == 0 else { return nil }
        let ids = candidates.map { String(text[$0..<($0 + 3)]) }
        var solutions: [(elements: [String: String], last: String, whole: Bool)] = []
        var budget = 200_000
        var chosen: [String: String] = [:]
        var inside: [String] = []

        func search(_ candidate: Int) {
            guard solutions.count < 2, budget > 0 else { return }
            budget -= 1
            let position = candidates[candidate], id = ids[candidate]
            guard chosen[id] == nil else { return }
            // The last element runs to the end.
            if chosen.count + 1 == expectedCount {
                let value = String(text[(position + 3)...])
                let within = (candidate + 1..<candidates.count).filter { candidates[$0] >= position + 3 }.map { ids[$0] }
                chosen[id] = value
                if AAMVAElementCatalogue.isPlausible(value, for: id) {
                    solutions.append((chosen, id, (inside + within).allSatisfy { chosen[$0] != nil }))
                }
                chosen[id] = nil
                return
            }
            for next in (candidate + 1)..<candidates.count where candidates[next] >= position + 3 {
                let value = String(text[(position + 3)..<candidates[next]])
                guard AAMVAElementCatalogue.isPlausible(value, for: id) else { continue }
                // Ids wholly inside this value (not overlapping the next id) must turn out to be used elsewhere.
                let within = (candidate + 1..<next).filter { candidates[$0] >= position + 3 && candidates[$0] + 3 <= candidates[next] }
                chosen[id] = value
                inside += within.map { ids[$0] }
                search(next)
                inside.removeLast(within.count)
                chosen[id] = nil
                if solutions.count >= 2 || budget <= 0 { return }
            }
        }
        search(0)
        guard budget > 0, solutions.count == 1, solutions[0].whole else { return nil }
        // Signs of a split forced onto a cut record: an element with nothing at all between two ids, or a
        // version-01 full name (DAA) beside the separate name elements.
        let elements = solutions[0].elements
        if elements.values.contains(where: \.isEmpty) { return nil }
        if elements["DAA"] != nil, !Set(elements.keys).isDisjoint(with: ["DCS", "DAC", "DAD", "DCT", "DAB"]) { return nil }
        return (elements.mapValues(AAMVAElementCatalogue.clean), solutions[0].last)
    }
}
