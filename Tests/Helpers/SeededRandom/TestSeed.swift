import Foundation

/// The seed of a test's random choices (a kill point, a fault's timing): `VERIFY_PIPELINE_TEST_SEED` when it is set,
/// to replay a failure, a fresh one otherwise. The test puts it in each failure's message.
public enum TestSeed {
    public static let variable = "VERIFY_PIPELINE_TEST_SEED"

    public struct Unreadable: Error, CustomStringConvertible {
        public var value: String
        public var description: String { "\(TestSeed.variable) must be a decimal number below 2^64, not '\(value)'" }
    }

    /// The seed to use, with the generator it starts.
    public static func make(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (UInt64, SeededGenerator) {
        let seed: UInt64
        if let value = environment[variable] {
            guard let parsed = UInt64(value.trimmingCharacters(in: .whitespaces)) else { throw Unreadable(value: value) }
            seed = parsed
        } else {
            seed = UInt64.random(in: 1...UInt64.max >> 1)
        }
        return (seed, SeededGenerator(seed: seed))
    }

    /// How a failure message names the seed, so that the case can be run again with it.
    public static func replay(_ seed: UInt64) -> String { "seed \(seed) (\(variable)=\(seed) replays it)" }
}
