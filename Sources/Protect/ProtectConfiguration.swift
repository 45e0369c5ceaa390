/// The Protect SDK's settings (CONTRACT §5), with its names and defaults.
package struct ProtectConfiguration: Sendable, Equatable {
    package var enabled = false
    /// Required when enabled.
    package var envId: String?
    /// Device attributes that never appear in the payload, by name (see `DeviceAttributes.names`).
    package var deviceAttributesToIgnore: [String] = []
    package var isBehavioralDataCollection = true
    /// Logs signal collection at debug level, never document data.
    package var isConsoleLogEnabled = false
    /// false: device metadata is computed when the transaction starts; true: when first needed.
    package var isLazyMetadata = false
    /// When set, one risk evaluation per transaction is posted there.
    package var customHost: String?
    package var pauseBehavioralDataOnSuccess = false
    package var resumeBehavioralDataOnStart = false

    package init() {}
}
