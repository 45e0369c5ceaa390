import Application
import ArgumentParser
import Foundation
import Logging
import OperatorView
import TransactionStore

/// `--bind`/`--metrics-bind` and `--token-env`: where the operator's view listens and the bearer token it asks for.
struct ListenOptions: ParsableArguments {
    @Option(
        name: .customLong("token-env"),
        help: ArgumentHelp(
            "The environment variable holding a bearer token every request but /healthz must carry; required to bind anything but loopback.",
            valueName: "name"))
    var tokenEnv: String?

    @Option(
        help: ArgumentHelp(
            "Close a connection idle this many seconds (none started, or none since the last answer).",
            valueName: "seconds"))
    var idleTimeout: Int = 30

    @Option(
        help: ArgumentHelp(
            "Close a connection whose request (head and body) has not arrived whole this many seconds after its first byte.",
            valueName: "seconds"))
    var requestTimeout: Int = 10

    @Option(
        help: ArgumentHelp(
            "Connections open at once beyond which a new one takes the place of the one waiting longest for a request, or is closed when all are answering (default: half the open-file limit).",
            valueName: "n"))
    var maxConnections: Int?

    func validate() throws {
        guard (1...3_600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 1 to 3600 seconds") }
        guard (1...3_600).contains(requestTimeout) else { throw ValidationError("--request-timeout must be 1 to 3600 seconds") }
        guard (maxConnections ?? 1) >= 1 else { throw ValidationError("--max-connections must be at least 1") }
    }

    var limits: ConnectionLimits {
        ConnectionLimits(idleTimeout: .seconds(idleTimeout), requestTimeout: .seconds(requestTimeout), maximumConnections: maxConnections)
    }

    /// The token, when a variable is named: it must be set, and strong (`TokenStrength`); the reason it is not names
    /// the variable, never the value.
    func token(storeKeyVariable: String?) throws -> String? {
        guard let tokenEnv else { return nil }
        // A variable holding one of the store's secrets would make it the bearer token every client sends.
        let secrets = Set([storeKeyVariable ?? KeyEncryptionKey.defaultVariable, KeyEncryptionKey.defaultVariable, "PGPASSWORD"])
        guard !secrets.contains(tokenEnv) else {
            throw ValidationError("--token-env names \(tokenEnv), which holds a store secret: give the token a variable of its own")
        }
        guard let value = ProcessInfo.processInfo.environment[tokenEnv], !value.isEmpty else {
            throw ValidationError("\(tokenEnv) (--token-env) is not set")
        }
        if let weakness = TokenStrength.weakness(value) {
            throw ValidationError("the token in \(tokenEnv) (--token-env) is too weak: \(weakness) (make one with: openssl rand -hex 32)")
        }
        return value
    }

    /// The address, checked: anything but loopback needs the token.
    func address(_ text: String, option: String) throws -> BindAddress {
        let address: BindAddress
        do {
            address = try BindAddress(parsing: text)
        } catch {
            throw ValidationError("\(option): \(error.description)")
        }
        guard address.isLoopback || tokenEnv != nil else {
            throw ValidationError("\(option) \(address) is not loopback: it needs a bearer token, from the variable --token-env names")
        }
        return address
    }

    static func announce(_ what: String, _ address: BindAddress, port: Int) {
        var shown = address
        shown.port = port
        CommandOutput.standardError("verify-pipeline: \(what) on http://\(shown)/\n")
    }
}

extension VerifyPipeline {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the operator's view of the store: a live dashboard, the JSON API, Prometheus metrics and health checks.",
            discussion: """
                GET / (dashboard), /transactions/ID (one transaction and its history), /api/transactions?state=&search=&limit=&after= \
                and /api/transactions/ID (the JSON of `status --json`), /api/overview, /metrics (Prometheus text), /healthz, \
                /readyz (the store answers). Pages show which keys a document has, never their values. Runs until SIGINT or SIGTERM.
                """
        )

        @Option(help: ArgumentHelp("The address to listen on, HOST:PORT (port 0 picks a free one).", valueName: "host:port"))
        var bind = "127.0.0.1:8080"

        @OptionGroup var listen: ListenOptions

        @OptionGroup var store: StoreOptions

        @OptionGroup var log: LogOptions

        func validate() throws {
            _ = try listen.address(bind, option: "--bind")
            _ = try listen.token(storeKeyVariable: store.keyEnv)
        }

        func run() async throws {
            let address = try listen.address(bind, option: "--bind"), token = try listen.token(storeKeyVariable: store.keyEnv)
            let logger = log.makeLogger(label: "verify-pipeline.serve")
            let location = try store.location()
            let application = OperatorApplication(
                store: location, encryption: try store.anyStore(), bind: address, token: token, limits: listen.limits, logger: logger
            ) { port in
                ListenOptions.announce("serving \(location)", address, port: port)
            }
            try await application.run()
        }
    }
}
