import AsyncHTTPClient
import NIOCore
import NIOSSL

#if canImport(Glibc)
    import Glibc
#endif

/// What every outbound HTTP exchange of the pipeline (submissions, Protect's risk evaluations) shares: the client's
/// settings, whoever owns the client, and reading an answer's body within a size and a deadline.
package enum OutboundHTTP {
    package struct SetupError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Redirects are never followed: after a 302 the POST would become a GET without its body that "succeeds", and a
    /// 307 would send the identity data to another host. https certificates are verified against the system's roots
    /// and, when given, the PEM certificates in `caFile`.
    package static func configuration(caFile: String?) throws -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let caFile {
            let bytes = try pemFile(caFile)
            let certificates = (try? NIOSSLCertificate.fromPEMBytes(bytes)) ?? []
            guard !certificates.isEmpty else { throw SetupError(description: "cannot read \(caFile) as PEM certificates") }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        return HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
    }

    /// The most a file of CA certificates may hold: the system's whole bundle is about 200 KiB.
    static let maxPEMBytes = 4 << 20

    /// A PEM file's bytes: a regular file only, opened without waiting (a FIFO would wait for a writer for ever) and
    /// read up to `maxPEMBytes`.
    static func pemFile(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw SetupError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw SetupError(description: "\(path) is not a regular file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw SetupError(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= maxPEMBytes else { throw SetupError(description: "\(path) is larger than \(maxPEMBytes >> 20) MiB") }
        }
    }

    /// Reads at most `limit` bytes of a response body and stops at `end` however slowly it arrives (a body that
    /// trickles a byte a second would otherwise hold the caller past every timeout): nil when the time ran out
    /// first. A body the server cuts short gives what had arrived.
    package static func read(_ body: HTTPClientResponse.Body, upTo limit: Int, until end: ContinuousClock.Instant) async -> ByteBuffer? {
        await withTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var collected = ByteBuffer()
                do {
                    for try await var chunk in body {
                        if let part = chunk.readSlice(length: min(chunk.readableBytes, limit - collected.readableBytes)) {
                            collected.writeImmutableBuffer(part)
                        }
                        if collected.readableBytes >= limit { break }
                    }
                } catch {
                    // A body cut short changes nothing: what arrived is the answer.
                }
                return collected
            }
            group.addTask {
                try? await Task.sleep(until: end, clock: .continuous)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
