import Crypto
import Foundation
import ImageDecoding
import VerifyModel

/// What the documents of one transaction were captured with.
package struct CaptureInfo: Sendable, Equatable {
    package var camera: CameraInfo?
    /// Declared sizes of the transaction's images, e.g. `1000x630`.
    package var imageSizes: [String] = []

    package init(camera: CameraInfo? = nil, imageSizes: [String] = []) {
        self.camera = camera
        self.imageSizes = imageSizes
    }
}

/// Where the documents came from: the device attributes of CONTRACT §5.
package enum DeviceAttributes {
    /// Every attribute name `deviceAttributesToIgnore` can name.
    package static let names = [
        "channel", "os", "architecture", "hostname", "toolVersion", "cameraMake", "cameraModel",
        "cameraSoftware", "imageSizes"
    ]

    package static let toolVersion = ToolVersion.current

    /// The attributes for a transaction, less the ignored ones. The host name is only ever present as a hash.
    package static func collect(channel: String, capture: CaptureInfo, ignoring ignored: Set<String>) -> [String: String] {
        var attributes: [String: String] = [
            "channel": channel,
            "os": hostOS,
            "architecture": hostArchitecture,
            "hostname": hostNameHash,
            "toolVersion": toolVersion
        ]
        attributes["cameraMake"] = capture.camera?.make
        attributes["cameraModel"] = capture.camera?.model
        attributes["cameraSoftware"] = capture.camera?.software
        if !capture.imageSizes.isEmpty { attributes["imageSizes"] = capture.imageSizes.joined(separator: ",") }
        return attributes.filter { !ignored.contains($0.key) }
    }

    static let hostOS: String = {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } + " "
            + withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }()

    static let hostArchitecture: String = {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }()

    static let hostNameHash: String = {
        let name = ProcessInfo.processInfo.hostName
        return "sha256:" + Crypto.SHA256.hash(data: Array(name.utf8)).hexString.prefix(16)
    }()
}

/// How the documents arrived: the behavioural data of CONTRACT §5, kept per transaction.
package struct BehaviorRecord: Codable, Sendable, Equatable {
    /// When the first document arrived; arrivals are counted from it.
    package var start: Date?
    package var arrivalsMs: [Int] = []
    package var gapsMs: [Int] = []
    package var retries = 0
    package var failedDecodes = 0
    /// Set when collection stopped for this transaction (pauseBehavioralDataOnSuccess).
    package var paused = false

    package init() {}

    mutating func arrival(at time: Date) {
        let start = self.start ?? time
        self.start = start
        let offset = max(0, Int(time.timeIntervalSince(start) * 1000))
        if let last = arrivalsMs.last { gapsMs.append(max(0, offset - last)) }
        arrivalsMs.append(offset)
    }
}

/// What Protect keeps per transaction, in the store's table for it: the behavioural data collected so far and
/// the risk evaluation's answer.
package struct ProtectState: Codable, Sendable, Equatable {
    package var behavior: BehaviorRecord?
    /// The risk evaluation host's answer (JSON, as it came), once asked.
    package var riskEvaluation: String?

    package init(behavior: BehaviorRecord? = nil, riskEvaluation: String? = nil) {
        self.behavior = behavior
        self.riskEvaluation = riskEvaluation
    }
}

/// The opaque `signals.data` string: base64 of a JSON document with the device attributes and the
/// behavioural data known when it was made. It never holds document data.
package struct SignalsPayload: Codable, Sendable, Equatable {
    package var version = 1
    package var envId: String
    package var createdAt: String
    package var device: [String: String]
    package var behavior: BehaviorRecord?

    package init(envId: String, createdAt: Date, device: [String: String], behavior: BehaviorRecord?) {
        self.envId = envId
        self.createdAt = Timestamp.string(createdAt)
        self.device = device
        self.behavior = behavior
    }

    package var data: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        // A struct of strings and dates always encodes.
        return (try? encoder.encode(self))?.base64EncodedString() ?? ""
    }

    /// Reads `signals.data` back, for `status --signals`.
    package init?(data: String) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        // A payload that does not decode is not ours to show: nil, as for no payload.
        guard let json = Data(base64Encoded: data), let payload = try? decoder.decode(SignalsPayload.self, from: json) else { return nil }
        self = payload
    }
}
