import Foundation
import Testing

/// `verify-pipeline plan` under `taskset`: the default stage sizes follow the cores the process may use, not a
/// number chosen for one machine.
@Suite("verify-pipeline plan")
struct PlanCommandTests {
    @Test("under taskset -c 0 the built-in pipeline plans one decode and one scan worker; --jobs 16 plans 16")
    func followsAffinity() async throws {
        let one = try await CLIRunner.run(["-c", "0", CLIRunner.executable.path, "plan"], executable: URL(fileURLWithPath: "/usr/bin/taskset"))
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.lines.contains("cores    1 (allowed to this process)"), "\(one.stdout)")
        #expect(one.lines.contains("decode     1 workers, queue    64") && one.lines.contains("scan       1 workers, queue    64"), "\(one.stdout)")
        let sixteen = try await CLIRunner.run(["plan", "--jobs", "16"])
        #expect(
            sixteen.lines.contains("scan      16 workers, queue   128") && sixteen.lines.contains("track     16 workers, queue   128")
                && sixteen.lines.contains("submit    16 workers, queue   256"),
            "\(sixteen.stdout)")
        let file = try await CLIRunner.run(["plan", "--pipeline", "Pipelines/worker.yaml", "--jobs", "16"])
        #expect(file.lines.contains("scan       1 workers, queue    16  (pipeline file)"), "\(file.stdout)")
        #expect(try await CLIRunner.run(["plan", "--jobs", "0"]).status == 2)
    }
}
