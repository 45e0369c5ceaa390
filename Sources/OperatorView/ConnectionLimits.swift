import Foundation
import HummingbirdCore
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How the operator's server holds connections: an idle one (no request started, or none since the last answer)
/// is closed after `idleTimeout`; a request must arrive whole, head and body, within `requestTimeout` of its first
/// byte, or its connection is closed (a client sending a byte now and then is never idle). Beyond `maximumConnections`
/// open at once a new connection takes the place of the one that has waited longest for a request (idle, or still
/// sending one), and is closed as it arrives only when every other is being answered: slow clients cannot keep
/// `/healthz` out, nor take the descriptors the pipeline beside the server needs.
package struct ConnectionLimits: Sendable, Equatable {
    package var idleTimeout: Duration
    package var requestTimeout: Duration
    package var maximumConnections: Int

    package init(idleTimeout: Duration = .seconds(30), requestTimeout: Duration = .seconds(10), maximumConnections: Int? = nil) {
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.maximumConnections = maximumConnections ?? Self.defaultMaximum()
    }

    /// Half the descriptors this process may open (after raising its soft limit to the hard one): the other half
    /// stays for the store, the submissions and the images.
    package static func defaultMaximum() -> Int {
        max(64, Int(ProcessLimits.raiseOpenFiles() / 2))
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
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

/// A server's open connections, each with since when it has been waiting for a request (nil while it answers one it
/// has read whole). Beyond the limit, a new connection takes the place of the one waiting longest.
final class ConnectionRegistry: Sendable {
    let limit: Int
    private struct Entry {
        var channel: any Channel
        var waitingSince: ContinuousClock.Instant?
    }
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    init(limit: Int) { self.limit = limit }

    var count: Int { entries.withLock { $0.count } }

    /// Counts `channel` in, closing the connection that has waited longest for a request when there is no room; false,
    /// counting nothing, when every connection is answering one.
    func admit(_ channel: any Channel) -> Bool {
        let now = ContinuousClock.now
        let (admitted, evicted): (Bool, (any Channel)?) = entries.withLock { entries in
            var evicted: (any Channel)?
            if entries.count >= limit {
                var oldest: (key: ObjectIdentifier, since: ContinuousClock.Instant)?
                for (key, entry) in entries {
                    if let since = entry.waitingSince, oldest.map({ since < $0.since }) ?? true { oldest = (key, since) }
                }
                guard let oldest else { return (false, nil) }
                evicted = entries.removeValue(forKey: oldest.key)?.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, waitingSince: now)
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        return admitted
    }

    /// The connection now waits for a request (since `since`), or answers one (nil). Nothing for one no longer counted.
    func update(_ channel: any Channel, waitingSince since: ContinuousClock.Instant?) {
        entries.withLock { entries in entries[ObjectIdentifier(channel)]?.waitingSince = since }
    }

    func remove(_ channel: any Channel) {
        _ = entries.withLock { entries in entries.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// In each connection's pipeline, after the HTTP codec: counts the connection in (`ConnectionRegistry`), tells it
/// when the connection waits and when it answers, and closes a connection whose request has not arrived whole
/// within the request timeout of its first byte (seen by `FirstByte`, ahead of the codec).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPConnectionStateHandler.InboundIn
    typealias InboundOut = HTTPConnectionStateHandler.InboundIn
    typealias OutboundIn = HTTPConnectionStateHandler.OutboundIn
    typealias OutboundOut = HTTPConnectionStateHandler.OutboundIn

    let registry: ConnectionRegistry
    let requestTimeout: TimeAmount
    private var channel: (any Channel)?
    /// A request's head came and its end has not.
    private var reading = false
    /// Requests read (or being read) and not answered yet.
    private var unanswered = 0
    private var deadline: Scheduled<Void>?

    init(registry: ConnectionRegistry, requestTimeout: Duration) {
        self.registry = registry
        self.requestTimeout = ConnectionLimits.timeAmount(requestTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard registry.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        channel = context.channel
        try? context.pipeline.syncOperations.addHandler(FirstByte(self), position: .first)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if let channel { registry.remove(channel) }
        channel = nil
    }

    /// Bytes came: the first of a request starts its clock, unless one is being answered (the next request's clock
    /// starts at its head).
    func bytesArrived(context: ChannelHandlerContext) {
        if !reading, unanswered == 0 { startClock(context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            reading = true
            unanswered += 1
            startClock(context)
        case .body:
            break
        case .end:
            reading = false
            deadline?.cancel()
            deadline = nil
            if unanswered > 0, let channel { registry.update(channel, waitingSince: nil) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            // Answered before its body came (a 401, a redirect): the connection still waits on the client.
            if unanswered == 0, !reading, let channel { registry.update(channel, waitingSince: .now) }
        }
        context.write(data, promise: promise)
    }

    private func startClock(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: requestTimeout) {
            self.deadline = nil
            context.close(promise: nil)
        }
    }
}

/// Ahead of the HTTP codec: tells `ConnectionGuard` when bytes come, so that a request's clock starts at its first
/// byte, not at its head.
final class FirstByte: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let owner: ConnectionGuard

    init(_ owner: ConnectionGuard) { self.owner = owner }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        owner.bytesArrived(context: context)
        context.fireChannelRead(data)
    }
}
