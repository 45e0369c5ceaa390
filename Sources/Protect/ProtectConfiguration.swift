/// The Protect SDK's settings (CONTRACT §5), with its names and defaults.
public struct ProtectConfiguration: Sendable, Equatable {
    public var enabled = false
    /// Required when enabled.
    public var envId: String?
    /// Device attributes that never appear in the payload, by name (see `DeviceAttributes.names`).
    public var deviceAttributesToIgnore: [String] = []
    public var isBehavioralDataCollection = true
    /// Logs signal collection at debug level, never document data.
    public var isConsoleLogEnabled = false
    /// false: device metadata is computed when the transaction starts; true: when first needed.
    public var isLazyMetadata = false
    /// When set, one risk evaluation per transaction is posted there.
    public var customHost: String?
    public var pauseBehavioralDataOnSuccess = false
    public var resumeBehavioralDataOnStart = false

    public init() {}
}
