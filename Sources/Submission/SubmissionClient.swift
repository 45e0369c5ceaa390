import AsyncHTTPClient
import NIOSSL

/// The HTTP client settings submissions need, whoever owns the client.
public enum SubmissionClient {
    public struct SetupError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Redirects are never followed: after a 302 the POST would become a GET without its body that "succeeds", and a
    /// 307 would send the identity data to another host. https certificates are verified against the system's roots
    /// and, when given, the PEM certificates in `caFile`.
    public static func configuration(caFile: String?) throws(SetupError) -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let caFile {
            let certificates = (try? NIOSSLCertificate.fromPEMFile(caFile)) ?? []
            guard !certificates.isEmpty else { throw SetupError(description: "cannot read \(caFile) as PEM certificates") }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        return HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
    }
}
