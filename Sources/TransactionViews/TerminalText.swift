extension Unicode.Scalar {
    /// A character a terminal acts on instead of showing: C0 and C1 controls, DEL, and the bidirectional marks,
    /// embeddings, overrides and isolates (which reorder what is shown), plus the line and paragraph separators.
    package var isTerminalControl: Bool {
        switch value {
        case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

extension String {
    /// For a terminal: control characters become visible `\u{..}` escapes, so that stored text (a folder's name,
    /// a reason) cannot move the cursor, clear the screen or reorder what is shown. Line breaks between lines are
    /// the caller's.
    package var escapingControls: String {
        var escaped = ""
        for scalar in unicodeScalars {
            if scalar.isTerminalControl {
                escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The text as a shell's ANSI-C quoting (`$'...'`) writes it, for a double-quoted display: `\\`, `\"`, `\n`, `\r`,
    /// `\t`, other controls as `\xHH` (below U+0100) or `\uHHHH` (the bidirectional marks and separators).
    package var escapingForShell: String {
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.isTerminalControl:
                let hex = String(scalar.value, radix: 16)
                escaped +=
                    scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// JSON text with the terminal controls JSON leaves raw (DEL, C1, bidirectional marks, U+2028/9) written as
    /// `\uXXXX` escapes: the same JSON value, safe to print. They can only stand inside strings, where an escape
    /// means the character itself.
    package var escapingTerminalControlsInJSON: String {
        // Every such character starts with one of these bytes in UTF-8: most lines (base64 images) skip the rest.
        guard utf8.contains(where: { $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }),
            unicodeScalars.contains(where: { $0.value >= 0x7F && $0.isTerminalControl })
        else { return self }
        var escaped = ""
        for scalar in unicodeScalars {
            if scalar.value >= 0x7F, scalar.isTerminalControl {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension String {
    /// Left-aligned in a column of `width` characters: spaces after it, never cut.
    package func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
