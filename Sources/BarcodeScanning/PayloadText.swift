import Glibc

/// Turns a symbol's payload bytes into text when the decoder did not say how (ZBar's raw bytes). ASCII and UTF-8
/// are taken as they are; otherwise Shift-JIS, GB2312 and ISO-8859-1 (the QR default) are told apart the way ZXing's
/// `guessEncoding` does, with GB2312 added: a byte sequence that pairs up as GB2312 and reads in Shift-JIS as more
/// half-width katakana than double-byte characters, none of them voiced, is Chinese, not Japanese. Shift-JIS's
/// single bytes 0x5C and 0x7E are ASCII's `\` and `~`, and its double-byte reverse solidus (0x815F) is `\`, as
/// zxing-cpp gives them (iconv follows JIS X 0201: `¥`, `‾` and `＼`): a MEBKM bookmark's `URL:http\://` keeps its escape.
enum PayloadText {
    enum Charset: String {
        case utf8 = "UTF-8"
        case shiftJIS = "SHIFT_JIS"
        case gb2312 = "GB18030"  // a superset: every GB2312 sequence decodes the same
        case latin1 = "ISO-8859-1"
    }

    static func text(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        let charset = guess(bytes)
        if charset == .utf8, let text = String(validating: bytes, as: UTF8.self) { return text }
        if charset == .shiftJIS, let text = convert(bytes, from: charset) { return asciiBackslashAndTilde(text) }
        if charset != .latin1, let text = convert(bytes, from: charset) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func guess(_ bytes: [UInt8]) -> Charset {
        if bytes.allSatisfy({ $0 < 0x80 }) || String(validating: bytes, as: UTF8.self) != nil { return .utf8 }
        var canBeLatin1 = true, canBeShiftJIS = true
        var latin1HighOther = 0
        var sjisBytesLeft = 0, sjisKatakana = 0, sjisDoubleBytes = 0
        var katakanaRun = 0, maxKatakanaRun = 0, doubleBytesRun = 0, maxDoubleBytesRun = 0
        // Half-width kana followed by a voiced or semi-voiced mark (ﾀﾞ, ﾊﾟ): Japanese, whatever GB2312 makes of it.
        var voicedKana = 0, previousKana: UInt8 = 0
        for value in bytes {
            if canBeLatin1 {
                if (0x80...0x9F).contains(value) {
                    canBeLatin1 = false
                } else if value > 0x9F, value < 0xC0 || value == 0xD7 || value == 0xF7 {
                    latin1HighOther += 1
                }
            }
            guard canBeShiftJIS else { continue }
            if sjisBytesLeft > 0 {
                if value < 0x40 || value == 0x7F || value > 0xFC { canBeShiftJIS = false } else { sjisBytesLeft -= 1 }
            } else if value == 0x80 || value == 0xA0 || value > 0xEF {
                canBeShiftJIS = false
            } else if value > 0xA0, value < 0xE0 {
                if value == 0xDE || value == 0xDF, Self.isVoiceable(previousKana, semi: value == 0xDF) { voicedKana += 1 }
                previousKana = value
                sjisKatakana += 1
                doubleBytesRun = 0
                katakanaRun += 1
                maxKatakanaRun = max(maxKatakanaRun, katakanaRun)
            } else if value > 0x7F {
                previousKana = 0
                sjisBytesLeft += 1
                sjisDoubleBytes += 1
                katakanaRun = 0
                doubleBytesRun += 1
                maxDoubleBytesRun = max(maxDoubleBytesRun, doubleBytesRun)
            } else {
                previousKana = 0
                katakanaRun = 0
                doubleBytesRun = 0
            }
        }
        if sjisBytesLeft > 0 { canBeShiftJIS = false }
        // Chinese read as Shift-JIS is mostly half-width katakana, which Japanese text seldom is, unless it is
        // Japanese half-width text: its voiced marks follow the kana that take them (Japanese phones).
        if isGB2312(bytes), !canBeShiftJIS || (sjisKatakana > sjisDoubleBytes && voicedKana == 0) { return .gb2312 }
        if canBeShiftJIS, maxKatakanaRun >= 3 || maxDoubleBytesRun >= 3 { return .shiftJIS }
        if canBeLatin1, canBeShiftJIS {
            return (maxKatakanaRun == 2 && sjisKatakana == 2) || latin1HighOther * 10 >= bytes.count ? .shiftJIS : .latin1
        }
        if canBeLatin1 { return .latin1 }
        if canBeShiftJIS { return .shiftJIS }
        return .latin1
    }

    /// Shift-JIS text as iconv gives it, with the characters it maps from 0x5C, 0x7E and 0x815F (and from nothing else)
    /// made `\`, `~` and `\`.
    static func asciiBackslashAndTilde(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    switch scalar {
                    case "\u{A5}", "\u{FF3C}": "\\"
                    case "\u{203E}": "~"
                    default: scalar
                    }
                }))
    }

    /// Whether half-width kana `kana` takes the voiced mark ﾞ (ｳ, ｶ-ﾄ, ﾊ-ﾎ) or, `semi`, the semi-voiced ﾟ (ﾊ-ﾎ).
    static func isVoiceable(_ kana: UInt8, semi: Bool) -> Bool {
        semi ? (0xCA...0xCE).contains(kana) : kana == 0xB3 || (0xB6...0xC4).contains(kana) || (0xCA...0xCE).contains(kana)
    }

    /// Every byte above 0x7F pairs up as a GB2312 character (rows 0xA1-0xF7, columns 0xA1-0xFE), and there is one.
    static func isGB2312(_ bytes: [UInt8]) -> Bool {
        var index = 0, pairs = 0
        while index < bytes.count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            guard (0xA1...0xF7).contains(lead), index + 1 < bytes.count, (0xA1...0xFE).contains(bytes[index + 1]) else { return false }
            pairs += 1
            index += 2
        }
        return pairs > 0
    }

    /// The bytes in `charset`, through iconv; nil when they are not valid in it.
    static func convert(_ bytes: [UInt8], from charset: Charset) -> String? {
        let converter = iconv_open("UTF-8", charset.rawValue)
        guard converter != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: bytes.count * 4 + 4)
        let converted: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer = inBuffer.baseAddress, inLeft = inBuffer.count
                var outPointer = outBuffer.baseAddress, outLeft = outBuffer.count
                guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let converted else { return nil }
        return String(validating: output[..<converted].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
