import Foundation

/// The cores this process may run on: its CPU affinity (`taskset`, a container's cpuset, as the kernel reports it in
/// /proc/self/status), bounded by a cgroup CPU quota (a container's `--cpus`), else the processors online. Stage
/// sizes follow it when a pipeline file does not set them.
package enum MachineCores {
    package static func allowed() -> Int {
        var cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8), let affinity = affinityCount(status) {
            cores = affinity
        }
        if let quota = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8), let limit = quotaCores(quota) {
            cores = min(cores, limit)
        }
        return max(1, cores)
    }

    /// The cores in `Cpus_allowed:` (a hexadecimal mask in comma-separated groups of 32 bits).
    static func affinityCount(_ status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        let mask = line.dropFirst("Cpus_allowed:".count).trimmingCharacters(in: .whitespaces)
        var count = 0
        for digit in mask where digit != "," {
            guard let value = digit.hexDigitValue else { return nil }
            count += value.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }

    /// cgroup v2's `cpu.max` (`QUOTA PERIOD`, or `max PERIOD` for none), rounded up to whole cores.
    static func quotaCores(_ text: String) -> Int? {
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), period > 0, quota > 0 else { return nil }
        return max(1, Int((quota / period).rounded(.up)))
    }
}

extension PipelineConfiguration {
    /// The stage sizes for `cores`, where the pipeline file left them to the machine: decoding and scanning (the CPU
    /// work) one worker per core each, their queues 8 documents a worker (at least 64), and submissions at least
    /// one a core (they wait on the network). Tracking at least 4, one a core: each document's records are a few
    /// round trips to the store, which takes the writes in turn; with one tracker at a time the store's writer waited
    /// between them and tracking became the line's slowest stage (1,000 documents on 2 cores: 3.1-3.5 s with one,
    /// 2.9 s with 4 or 8).
    package func sized(forCores cores: Int) -> PipelineConfiguration {
        let cores = max(1, cores)
        var sized = self
        if !workersSetByFile.contains("decode") { sized.decode.workers = cores }
        if !workersSetByFile.contains("scan") { sized.scan.workers = cores }
        if !workersSetByFile.contains("track") { sized.track.workers = max(4, cores) }
        if !workersSetByFile.contains("submit") { sized.submit.workers = max(4, cores) }
        if !queuesSetByFile.contains("decode") { sized.decode.queue = max(64, 8 * sized.decode.workers) }
        if !queuesSetByFile.contains("scan") { sized.scan.queue = max(64, 8 * sized.scan.workers) }
        if !queuesSetByFile.contains("parse") { sized.parse.queue = max(64, 8 * sized.scan.workers) }
        if !queuesSetByFile.contains("track") { sized.track.queue = max(64, 8 * sized.scan.workers) }
        if !queuesSetByFile.contains("submit") { sized.submit.queue = max(256, 16 * sized.submit.workers) }
        if !queuesSetByFile.contains("report") { sized.report.queue = max(256, 16 * sized.submit.workers) }
        return sized
    }

    /// Each stage's workers and queue, one line each, as `plan` prints them and the run logs them.
    package var stagePlan: [(stage: String, workers: Int, queue: Int, fromFile: Bool)] {
        [("decode", decode), ("scan", scan), ("parse", parse), ("track", track), ("submit", submit), ("report", report)].map { name, stage in
            (name, stage.workers, stage.queue, workersSetByFile.contains(name))
        }
    }
}
