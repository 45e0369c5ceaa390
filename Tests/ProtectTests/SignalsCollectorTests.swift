import Foundation
import Logging
import Testing
import TransactionStore
import VerifyModel

@testable import Protect

@Suite("Protect signals collector")
struct SignalsCollectorTests {
    /// A transaction's first document arrives, then two decodes fail, then its payload is asked for (the first
    /// submission). Returns what the store held after the arrival, and the payload sent.
    static func arrivalThenFailuresThenSubmission(lazy: Bool) async throws -> (storedAtArrival: String?, sent: SignalsPayload) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signals-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let location = StoreLocation.sqlite(path: folder.appendingPathComponent("store.sqlite").path)
        return try await location.withStore(create: true) { store in
            var configuration = ProtectConfiguration()
            configuration.enabled = true
            configuration.envId = "3072206d-c6ce-4b15-8ad2-f87e972c7cc3"
            configuration.isLazyMetadata = lazy
            let collector = SignalsCollector(configuration: configuration, store: store, channel: "folder", logger: Logger(label: "test"))
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            let transaction = try await store.openTransaction(
                NewTransaction(
                    id: "txn-lazy", verificationCode: "C", policy: [.governmentId: .required], createdAt: start,
                    expiresAt: start.addingTimeInterval(1800)))
            let capture = CaptureInfo(imageSizes: ["1000x630"])

            await collector.documentArrived(transaction, capture: capture, at: start)
            let storedAtArrival = try await store.transaction(id: "txn-lazy")?.signals
            await collector.decodeFailed("txn-lazy")
            await collector.decodeFailed("txn-lazy")
            let current = try #require(try await store.transaction(id: "txn-lazy"))
            let data = try #require(await collector.payload(for: current, capture: capture, at: start.addingTimeInterval(5)))
            #expect(try await store.transaction(id: "txn-lazy")?.signals == data, "the payload sent is the one stored")
            return (storedAtArrival, try #require(SignalsPayload(data: data)))
        }
    }

    @Test("isLazyMetadata false: the payload is made when the transaction starts, before later failures")
    func eagerMetadata() async throws {
        let (stored, sent) = try await Self.arrivalThenFailuresThenSubmission(lazy: false)
        #expect(stored != nil, "made at the first collected document")
        #expect(sent.behavior?.failedDecodes == 0)
        #expect(sent.behavior?.arrivalsMs.count == 1)
        #expect(sent.device["imageSizes"] == "1000x630")
    }

    @Test("isLazyMetadata true: nothing is made at the start; the payload made when first needed holds what came since")
    func lazyMetadata() async throws {
        let (stored, sent) = try await Self.arrivalThenFailuresThenSubmission(lazy: true)
        #expect(stored == nil, "not made before it is needed")
        #expect(sent.behavior?.failedDecodes == 2)
        #expect(sent.behavior?.arrivalsMs.count == 1)
        #expect(sent.device["imageSizes"] == "1000x630")
    }
}
