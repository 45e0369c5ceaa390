import Foundation

/// Writes an AAMVA DL/ID payload the way the Card Design Standard lays it out, for any version: compliance
/// indicator, file type, issuer, version, entry count, a directory whose offsets and lengths are computed from
/// the subfiles, then each subfile (its type, its elements separated by LF, a CR at its end). The variants real
/// issuers and transports ship are written on top of it (`transformed`), never by hand-editing a payload.
public struct AAMVAPayload: Sendable {
    public var fileType = "ANSI "
    public var issuer = "636000"
    public var version = 10
    public var jurisdictionVersion = 0
    /// The digits between the file type and the directory, when a layout does not follow the standard's
    /// (the pre-standard `AAMVA36004001…`); nil for the standard's.
    public var headerDigits: String?
    public var subfileType = "DL"
    /// Whether the subfile's data repeats its type (`DLDAQ…`); some issuers' does not (`DAQ…`).
    public var prefixed = true
    public var elements: [(String, String)]
    /// A jurisdiction subfile after the DL/ID one, when any.
    public var jurisdiction: (type: String, elements: [(String, String)])? = ("ZX", [("ZXA", "01")])

    public init(version: Int = 10, elements: [(String, String)]) {
        self.version = version
        self.elements = elements
    }

    public var text: String {
        var subfiles = [(subfileType, elements, prefixed)]
        if let jurisdiction { subfiles.append((jurisdiction.type, jurisdiction.elements, true)) }
        let bodies = subfiles.map { type, elements, prefixed in
            (prefixed ? type : "") + elements.map { "\($0.0)\($0.1)" }.joined(separator: "\n") + "\r"
        }
        let digits =
            headerDigits ?? issuer + String(format: "%02d", version)
            + (version >= 2 ? String(format: "%02d", jurisdictionVersion) : "") + String(format: "%02d", subfiles.count)
        var offset = 4 + fileType.unicodeScalars.count + digits.count + 10 * subfiles.count
        var header = "@\n\u{1E}\r" + fileType + digits
        for (index, body) in bodies.enumerated() {
            header += subfiles[index].0 + String(format: "%04d%04d", offset, body.unicodeScalars.count)
            offset += body.unicodeScalars.count
        }
        return header + bodies.joined()
    }
}

/// What a transport or a scanner does to a payload on its way.
public enum AAMVATransport: String, CaseIterable, Sendable {
    /// Delivered as written.
    case intact
    /// One space before the `@` (a capture service's padding).
    case leadingSpace
    /// A newline before the `@`.
    case leadingNewline
    /// Every LF turned into `|` (capture services that flatten lines).
    case pipes
    /// C1 control bytes around every separator (keyboard-wedge scanners).
    case c1AroundSeparators
    /// CR LF for every LF.
    case crlf
    /// Every LF, RS and CR removed (a single-line input).
    case separatorsStripped
    /// The final CR trimmed away.
    case finalCRTrimmed
    /// The RS and CR after `@\n` typed as other keys, as HID keyboard emulation does (`@\n6MANSI `).
    case headerKeysMangled
    /// A scanner's symbology identifier before the `@` (AIM `]L0` for PDF417).
    case scannerPreamble

    public func apply(_ text: String) -> String {
        switch self {
        case .intact: text
        case .leadingSpace: " " + text
        case .leadingNewline: "\n" + text
        case .pipes: text.replacingOccurrences(of: "\n", with: "|")
        case .c1AroundSeparators: text.replacingOccurrences(of: "\n", with: "\u{9B}\n\u{85}").replacingOccurrences(of: "\r", with: "\u{9C}\r")
        case .crlf: text.replacingOccurrences(of: "\n", with: "\r\n")
        case .separatorsStripped: String(String.UnicodeScalarView(text.unicodeScalars.filter { !["\n", "\r", "\u{1E}"].contains($0) }))
        case .finalCRTrimmed: text.hasSuffix("\r") ? String(text.dropLast()) : text
        case .headerKeysMangled: text.hasPrefix("@\n\u{1E}\r") ? "@\n6M" + text.dropFirst(4) : text
        case .scannerPreamble: "]L0" + text
        }
    }
}
