/// The release's version, in one place: `verify-pipeline --version` prints it, and the Protect signals send it as
/// `toolVersion`.
public enum ToolVersion {
    public static let current = "0.6.0"
}
