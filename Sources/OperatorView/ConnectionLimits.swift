import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How the operator's server holds connections: an idle one (no request started, or none since the last answer)
/// is closed after `idleTimeout`, and beyond `maximumConnections` open at once a new one is closed as it arrives,
/// so clients that hold connections cannot take the descriptors the pipeline beside it needs.
package struct ConnectionLimits: Sendable, Equatable {
    package var idleTimeout: Duration
    package var maximumConnections: Int

    package init(idleTimeout: Duration = .seconds(30), maximumConnections: Int? = nil) {
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections ?? Self.defaultMaximum()
    }

    /// Half the descriptors this process may open (after raising its soft limit to the hard one): the other half
    /// stays for the store, the submissions and the images.
    package static func defaultMaximum() -> Int {
        max(64, Int(ProcessLimits.raiseOpenFiles() / 2))
    }

    var timeAmount: TimeAmount { .nanoseconds(idleTimeout.components.seconds * 1_000_000_000 + idleTimeout.components.attoseconds / 1_000_000_000) }
}

package enum ProcessLimits {
    /// Raises the soft limit on open descriptors to the hard one (a server and a pipeline need more than the usual
    /// 1,024) and returns the limit now in force.
    @discardableResult
    package static func raiseOpenFiles() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}

/// Counts a server's open connections; one over the limit is closed as soon as it is accepted.
final class ConnectionCount: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Counts one more; false when that is one too many.
    func admit() -> Bool { open.wrappingAdd(1, ordering: .relaxed).newValue <= limit }
    func release() { open.wrappingSubtract(1, ordering: .relaxed) }
}

/// In each connection's pipeline: counted while it is open, closed at once beyond the limit.
final class ConnectionCap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let count: ConnectionCount
    private var counted = false

    init(count: ConnectionCount) { self.count = count }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        if !count.admit() { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { count.release() }
        counted = false
    }
}
