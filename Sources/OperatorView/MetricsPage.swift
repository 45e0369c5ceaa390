import Foundation
import Prometheus
import TransactionStore
import VerifyModel

/// The process's Prometheus registry: `main` bootstraps swift-metrics with it, so the pipeline's counters, stage
/// timers and queue gauges land here; `/metrics` writes it out.
package enum OperatorMetrics {
    package static let registry = PrometheusCollectorRegistry()
}

/// `/metrics`: the process's own metrics, and the store's counts read at the scrape (transactions by status,
/// documents collected in the last five minutes), each from an index.
struct MetricsPage: Sendable {
    let registry: PrometheusCollectorRegistry
    let store: TransactionStore

    static let recent: TimeInterval = 300

    func render(at now: Date = Date()) async throws(StoreError) -> String {
        let overview = try await store.overview(collectedSince: now.addingTimeInterval(-Self.recent))
        for status in DocumentSubmissionStatus.allCases {
            registry.makeGauge(name: "verify_transactions", labels: [("status", status.rawValue)]).set(Double(overview.transactions[status] ?? 0))
        }
        registry.makeGauge(name: "verify_documents_collected_last_5m").set(Double(overview.collected))
        return registry.emitToString()
    }
}
