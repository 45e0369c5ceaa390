import Foundation
import NIOCore
import ServiceLifecycle
import Synchronization

/// The operator's HTTP server as a service whose start can be awaited: a command starts it first and reads no
/// input until `listening()` says it accepts connections, so a busy port fails the command at once (exit 2, one
/// line) instead of taking a running pipeline down with it.
package final class ListeningServer: Service, Sendable {
    private enum State {
        case starting([CheckedContinuation<Result<Int, OperatorViewError>, Never>])
        case done(Result<Int, OperatorViewError>)
    }

    private let bind: BindAddress
    private let what: String
    private let state = Mutex(State.starting([]))
    private let server: Mutex<(any Service)?> = Mutex(nil)

    /// `what` names the option in the error (`--metrics-bind`, `--bind`).
    init(bind: BindAddress, what: String) {
        self.bind = bind
        self.what = what
    }

    func attach(_ service: any Service) {
        server.withLock { $0 = service }
    }

    /// The port once the server listens, or why it could not.
    package func listening() async -> Result<Int, OperatorViewError> {
        await withCheckedContinuation { continuation in
            let ready: Result<Int, OperatorViewError>? = state.withLock { state in
                switch state {
                case .starting(var waiting):
                    waiting.append(continuation)
                    state = .starting(waiting)
                    return nil
                case .done(let result):
                    return result
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Why the server could not listen, once that is known.
    package var failure: OperatorViewError? {
        state.withLock { if case .done(.failure(let error)) = $0 { error } else { nil } }
    }

    func started(port: Int) { settle(.success(port)) }

    package func run() async throws {
        guard let service = server.withLock({ $0 }) else { return }
        do {
            try await service.run()
        } catch {
            settle(.failure(OperatorViewError("cannot listen on \(bind) (\(what)): \(Self.reason(error))")))
            throw error
        }
        settle(.failure(OperatorViewError("the server on \(bind) (\(what)) stopped before it listened")))
    }

    private func settle(_ result: Result<Int, OperatorViewError>) {
        let waiting: [CheckedContinuation<Result<Int, OperatorViewError>, Never>] = state.withLock { state in
            guard case .starting(let waiting) = state else { return [] }
            state = .done(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }

    /// The system's words for a socket error (`Address already in use`), without NIO's call description.
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}
