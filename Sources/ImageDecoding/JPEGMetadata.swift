import Foundation

/// The capturing device named in a JPEG's EXIF (IFD0 Make, Model, Software), read defensively: the bytes
/// come from outside, so every offset is checked before use.
public struct CameraInfo: Sendable, Equatable, Codable {
    public var make: String?
    public var model: String?
    public var software: String?

    public init(make: String? = nil, model: String? = nil, software: String? = nil) {
        self.make = make
        self.model = model
        self.software = software
    }

    /// The camera of a JPEG, or nil when it carries no EXIF or none of these tags.
    public init?(jpeg bytes: [UInt8]) {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var offset = 2
        // Walk the marker segments up to the start of scan, looking for APP1 "Exif\0\0".
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
            let body = offset + 4
            if marker == 0xE1, length >= 8, Array(bytes[body..<(body + 6)]) == Array("Exif\0\0".utf8) {
                self.init(tiff: Array(bytes[(body + 6)..<(offset + 2 + length)]))
                if make == nil, model == nil, software == nil { return nil }
                return
            }
            offset += 2 + length
        }
        return nil
    }

    private init(tiff: [UInt8]) {
        guard tiff.count >= 8 else { return }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(little ? at : at + 2), let high = u16(little ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard let ifd = u32(4), let count = u16(ifd), count < 1000 else { return }
        for index in 0..<count {
            let entry = ifd + 2 + index * 12
            guard let tag = u16(entry), let type = u16(entry + 2), let length = u32(entry + 4), type == 2,
                length > 0, length < 256
            else { continue }
            let start = length <= 4 ? entry + 8 : (u32(entry + 8) ?? -1)
            guard start >= 0, start + length <= tiff.count else { continue }
            let text = String(decoding: tiff[start..<(start + length)].prefix { $0 != 0 }, as: UTF8.self)
                .trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            switch tag {
            case 0x010F: make = text
            case 0x0110: model = text
            case 0x0131: software = text
            default: break
            }
        }
    }
}
