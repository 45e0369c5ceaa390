import ArgumentParser

@main
struct VerifyPipeline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-pipeline",
        abstract: "Turns document images into PingOne-Verify-style document submissions.",
        subcommands: [Scan.self]
    )
}
