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
/// documents collected in the last five minutes, open reviews, failed documents by code: every attempt), each from
/// an index.
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
        // The store's failed documents, read like the rest: gauges, by names apart from the pipeline's own counter
        // `verify_failed_documents_total{code}` (what this process failed), which can share this registry.
        let reviews = try await store.reviewCounts()
        registry.makeGauge(name: "verify_reviews_open").set(Double(reviews.open.values.reduce(0, +)))
        // Every code that ever failed (reviews stay), so that a code whose reviews all closed reads 0, not its last count.
        for code in Set(reviews.failed.keys).union(reviews.open.keys) {
            registry.makeGauge(name: "verify_failed_documents", labels: [("code", code)]).set(Double(reviews.failed[code] ?? 0))
            registry.makeGauge(name: "verify_reviews_open_by_code", labels: [("code", code)]).set(Double(reviews.open[code] ?? 0))
        }
        return registry.emitToString()
    }
}
