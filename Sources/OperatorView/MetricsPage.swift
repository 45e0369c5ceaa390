import Foundation
import Prometheus
import TransactionStore
import VerifyModel

/// The process's Prometheus registry: `main` bootstraps swift-metrics with it, so the pipeline's counters, stage
/// timers and queue gauges land here; `/metrics` writes it out.
package enum OperatorMetrics {
    package static let registry = PrometheusCollectorRegistry()
}

/// `/metrics` (Prometheus text format 0.0.4), every family with `# HELP` and `# TYPE`: the process's own metrics
/// (swift-metrics', in the registry), the store's counts read at the scrape from its indexes, the build, and the
/// process (CPU, memory, descriptors, start time).
struct MetricsPage: Sendable {
    let registry: PrometheusCollectorRegistry
    let store: TransactionStore

    /// What each of the pipeline's own metrics means (they are made by swift-metrics, which carries no help text).
    static let help: [String: String] = [
        "verify_documents_total": "Documents this process finished, by document type and outcome.",
        "verify_failed_documents_total": "Documents this process failed, by error code.",
        "verify_stage_duration_seconds": "Time a document spent in each pipeline stage.",
        "verify_queue_depth": "Documents waiting in each stage's queue.",
        "verify_submission_attempts_total": "Submission attempts this process made, by outcome class and whether it was a retry.",
        "verify_work_lease_expiries_total": "Work-queue leases this process found expired and gave back to the queue."
    ]

    func render() async throws -> String {
        var page = Self.withHelp(registry.emitToString())
        let overview = try await store.overview(collectedSince: Date(timeIntervalSince1970: 0))
        let reviews = try await store.reviewCounts()
        page.family(
            "verify_transactions", .gauge, "Transactions in the store, by DocumentSubmissionStatus.",
            DocumentSubmissionStatus.allCases.map { ([("status", $0.rawValue)], Double(overview.transactions[$0] ?? 0)) })
        page.family(
            "verify_store_documents_collected_total", .counter, "Documents collected into the store, by every process.",
            [([], Double(overview.collected))])
        // Every code that ever failed (reviews stay), so that a code whose reviews all closed reads 0, not its last count.
        let codes = Set(reviews.failed.keys).union(reviews.open.keys).sorted()
        page.family(
            "verify_store_failed_documents_total", .counter, "Failed document attempts recorded in the store, by error code.",
            codes.map { ([("code", $0)], Double(reviews.failed[$0] ?? 0)) })
        page.family("verify_reviews_open", .gauge, "Reviews waiting for a person.", [([], Double(reviews.open.values.reduce(0, +)))])
        page.family(
            "verify_reviews_open_by_code", .gauge, "Reviews waiting for a person, by error code.",
            codes.map { ([("code", $0)], Double(reviews.open[$0] ?? 0)) })
        page.family(
            "verify_pipeline_build_info", .gauge, "The verify-pipeline build serving these metrics (always 1).",
            [([("version", ToolVersion.current)], 1)])
        ProcessMetrics.read().write(to: &page)
        return page.text
    }

    /// The registry's text with a `# HELP` line before each family's `# TYPE` line that `help` knows.
    static func withHelp(_ text: String) -> Exposition {
        var page = Exposition()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst(7).split(separator: " ").first, let help = help[String(name)] {
                page.text += "# HELP \(name) \(Exposition.escapedHelp(help))\n"
            }
            if !line.isEmpty { page.text += line + "\n" }
        }
        return page
    }
}

/// Prometheus text exposition, written family by family.
struct Exposition {
    enum Kind: String {
        case counter, gauge
    }

    var text = ""

    mutating func family(_ name: String, _ kind: Kind, _ help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
        for sample in samples {
            let labels = sample.labels.map { "\($0.0)=\"\(Self.escapedLabel($0.1))\"" }.joined(separator: ",")
            text += name + (labels.isEmpty ? "" : "{\(labels)}") + " " + Self.number(sample.value) + "\n"
        }
    }

    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escapedHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func escapedLabel(_ text: String) -> String {
        escapedHelp(text).replacingOccurrences(of: "\"", with: "\\\"")
    }
}

/// The standard process metrics (as Prometheus' client libraries name them), read from `/proc` and `getrusage`.
struct ProcessMetrics {
    var cpuSeconds: Double
    var residentBytes: Double?
    var virtualBytes: Double?
    var openDescriptors: Double?
    var maximumDescriptors: Double?
    var startTime: Double?

    /// When the process started: its start in clock ticks after boot (`/proc/self/stat`), plus the boot time.
    static func startTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let boot = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }).flatMap({ Double($0.dropFirst(6)) })
        else { return nil }
        // After the command's name: state is field 3, starttime field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func read() -> ProcessMetrics {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
        var metrics = ProcessMetrics(cpuSeconds: cpu)
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if fields.count >= 2 {
                metrics.virtualBytes = fields[0] * page
                metrics.residentBytes = fields[1] * page
            }
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            metrics.openDescriptors = Double(entries.count)
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { metrics.maximumDescriptors = Double(limit.rlim_cur) }
        metrics.startTime = startTime()
        return metrics
    }

    func write(to page: inout Exposition) {
        page.family("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.", [([], cpuSeconds)])
        if let residentBytes {
            page.family("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", [([], residentBytes)])
        }
        if let virtualBytes {
            page.family("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.", [([], virtualBytes)])
        }
        if let openDescriptors { page.family("process_open_fds", .gauge, "Number of open file descriptors.", [([], openDescriptors)]) }
        if let maximumDescriptors {
            page.family("process_max_fds", .gauge, "Maximum number of open file descriptors.", [([], maximumDescriptors)])
        }
        if let startTime {
            page.family("process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.", [([], startTime)])
        }
    }
}
