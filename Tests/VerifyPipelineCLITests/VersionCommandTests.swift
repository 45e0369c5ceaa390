import Foundation
import Testing
import VerifyModel

@Suite("verify-pipeline --version")
struct VersionCommandTests {
    @Test("--version prints the release, the one the Protect signals send, and exits 0")
    func version() async throws {
        let outcome = try await CLIRunner.run(["--version"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout == "\(ToolVersion.current)\n")
        #expect(ToolVersion.current.split(separator: ".").count == 3 && ToolVersion.current.allSatisfy { $0.isNumber || $0 == "." })
    }
}
