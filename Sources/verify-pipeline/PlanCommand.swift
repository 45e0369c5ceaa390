import ArgumentParser
import Foundation
import Pipeline

extension VerifyPipeline {
    /// `verify-pipeline plan`: what a run would use, without running anything.
    struct Plan: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the stages a run, stream or worker would start with this pipeline file on this machine.",
            discussion: """
                Prints the cores this process may use (its CPU affinity and cgroup quota), then each stage's workers and \
                queue: from the pipeline file where it sets them, else sized for the cores (or --jobs).
                """
        )

        @Option(
            help: ArgumentHelp("The pipeline file (YAML); built-in defaults when omitted.", valueName: "file"),
            completion: .file(extensions: ["yaml", "yml"]))
        var pipeline: String?

        @Option(help: ArgumentHelp("Cores to size the stages for (default: the cores this process may use).", valueName: "n"))
        var jobs: Int?

        @OptionGroup var log: LogOptions

        func validate() throws {
            guard (jobs ?? 1) >= 1, (jobs ?? 1) <= 1024 else { throw ValidationError("--jobs must be from 1 to 1024") }
        }

        func run() throws {
            let cores = jobs ?? MachineCores.allowed()
            let configuration = try ConfigurationOptions.load(pipeline).sized(forCores: cores)
            var lines = ["pipeline \(configuration.name)", "cores    \(cores)\(jobs == nil ? " (allowed to this process)" : " (--jobs)")"]
            for stage in configuration.stagePlan {
                lines.append(
                    stage.stage.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + String(format: " %3d workers, queue %5d", stage.workers, stage.queue) + (stage.fromFile ? "  (pipeline file)" : ""))
            }
            print(lines.joined(separator: "\n"))
        }
    }
}
