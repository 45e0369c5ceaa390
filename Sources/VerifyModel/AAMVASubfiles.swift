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
    /// others. It is split on element ids (`AAMVASeparatorRecovery`) only where every way of splitting it gives
    /// the same identity; refused otherwise, never guessed. Returns whether it split anything.
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
        let declared = header.entries.first { $0.type == primary }?.length.map { $0 - (span.prefixed ? 2 : 0) }
        let recovery = AAMVASeparatorRecovery(body: body, version: header.version, followed: followed, declaredLength: declared)
        let split: AAMVASeparatorRecovery.Split
        do {
            split = try recovery.split()
        } catch {
            throw AAMVAError(message: "AAMVA data: element separators were lost and the elements cannot be told apart (\(error.reason))")
        }
        elements[primary] = split.elements
        warnings.append(AAMVARepair.separatorsRestored.warning("element separators were lost; the elements were split on their ids"))
        if !split.undecided.isEmpty {
            warnings.append(
                "AAMVA data: \(split.undecided.sorted().joined(separator: ", ")) could end at more than one element id: dropped")
        }
        return true
    }
}

/// Splits a run of elements whose separators were lost, on the version's element ids (AAMVA's catalogue).
///
/// A split cuts the run at element ids, starting at its first character, each id used once and each value valid
/// for its id (`AAMVAElementCatalogue.isPlausible`). An id that stands inside the run may start an element or
/// be part of another's value (`DAVID` holds `DAV`). Every split is counted: the identity elements
/// (`identityIds`) must come out the same in all of them, else the run is refused; another element that two
/// splits read differently is dropped.
///
/// Every id the version makes mandatory that stands in the run starts an element at one of its places. That
/// holds only for a whole run: in a cut one the element may have been cut away, its id standing only inside a
/// value, and a cut can leave an id's letters at the end of a value. So the run is split only when shown whole:
/// a jurisdiction subfile follows it, or its length with one separator per element of the split is the length
/// the directory declares (a subfile's length counts one separator after each element); refused otherwise.
struct AAMVASeparatorRecovery {
    let body: [Unicode.Scalar]
    let version: Int
    /// Whether something after the run (a jurisdiction subfile) shows that it is whole.
    let followed: Bool
    /// The directory's length for the subfile, less its type prefix: the run's length plus one separator per
    /// element when it is whole.
    let declaredLength: Int?

    /// The splits looked at before the run is refused as too ambiguous to tell.
    static let maximumSplits = 256
    /// The steps of the search before it is given up.
    static let budget = 200_000

    struct Split {
        var elements: [String: String]
        /// Elements dropped because splits disagree on them.
        var undecided: Set<String>
    }

    struct Refusal: Error {
        var reason: String
    }

    func split() throws(Refusal) -> Split {
        let text = body.map { Character($0) }
        let known = AAMVAElementCatalogue.knownIds(version: version)
        let starts = (0..<max(0, body.count - 2)).filter { known.contains(String(text[$0..<($0 + 3)])) }
        guard starts.first == 0 else { throw Refusal(reason: "the run does not start with an element id") }
        let ids = starts.map { String(text[$0..<($0 + 3)]) }
        let required = AAMVAElementCatalogue.requiredIds(version: version).intersection(ids)

        var found: [[String: String]] = []
        var steps = 0
        var chosen: [String: String] = [:]
        var exhausted = false

        // `candidate` starts the current element; every later id either starts the next one or is inside a value.
        func search(_ candidate: Int) {
            guard !exhausted else { return }
            steps += 1
            if steps > Self.budget || found.count > Self.maximumSplits {
                exhausted = true
                return
            }
            let position = starts[candidate], id = ids[candidate]
            guard chosen[id] == nil else { return }
            let later = (candidate + 1..<starts.count).filter { starts[$0] >= position + 3 }
            // The last element runs to the end; every mandatory id must have been used by then.
            let last = String(text[(position + 3)...])
            if AAMVAElementCatalogue.isPlausible(last, for: id) {
                chosen[id] = last
                if required.isSubset(of: chosen.keys) { found.append(chosen) }
                chosen[id] = nil
            }
            for next in later {
                let value = String(text[(position + 3)..<starts[next]])
                guard AAMVAElementCatalogue.isPlausible(value, for: id) else { continue }
                // A mandatory id passed over inside this value must still be usable later.
                let passed = later.filter { starts[$0] < starts[next] }.map { ids[$0] }
                let stranded = passed.contains { other in
                    other != id && required.contains(other) && chosen[other] == nil && !ids[next...].contains(other)
                }
                if stranded { continue }
                chosen[id] = value
                search(next)
                chosen[id] = nil
                if exhausted { return }
            }
        }
        search(0)
        if exhausted { throw Refusal(reason: "too many ways to split them") }
        guard !found.isEmpty else { throw Refusal(reason: "no split gives every element a valid value") }
        let kept = followed ? found : found.filter { body.count + $0.count == declaredLength }
        guard !kept.isEmpty else {
            throw Refusal(reason: "nothing shows the run whole: no subfile follows it and the directory gives another length")
        }
        var agreed: [String: String] = [:]
        var undecided: Set<String> = []
        for id in Set(kept.flatMap(\.keys)) {
            let values = Set(kept.map { $0[id] })
            if values.count == 1, let value = values.first, let value {
                agreed[id] = value
            } else if AAMVAElementCatalogue.identityIds.contains(id) {
                throw Refusal(reason: "\(id) could end at more than one element id")
            } else {
                undecided.insert(id)
            }
        }
        // A version-01 full name (DAA) beside the separate name elements is a split forced onto a damaged record.
        if agreed["DAA"] != nil, !Set(agreed.keys).isDisjoint(with: ["DCS", "DAC", "DAD", "DCT", "DAB"]) {
            throw Refusal(reason: "a full name beside separate name elements")
        }
        return Split(elements: agreed.mapValues(AAMVAElementCatalogue.clean), undecided: undecided)
    }
}
