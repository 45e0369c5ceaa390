import Foundation
import Testing

@testable import Pipeline

/// Stage sizes follow the cores a process may use, where the pipeline file leaves them.
@Suite("Stage sizes follow the machine")
struct StageSizingTests {
    @Test(
        "decode and scan get a worker per core, track and submit at least 4; the queues grow with them",
        arguments: [(1, 1, 64, 4), (2, 2, 64, 4), (16, 16, 128, 16), (64, 64, 512, 64)])
    func sized(cores: Int, workers: Int, queue: Int, submit: Int) {
        let configuration = PipelineConfiguration().sized(forCores: cores)
        #expect(configuration.decode.workers == workers && configuration.scan.workers == workers)
        #expect(configuration.decode.queue == queue && configuration.scan.queue == queue)
        #expect(configuration.track.workers == submit)
        #expect(configuration.submit.workers == submit)
    }

    @Test("sizes a pipeline file sets are kept, whatever the machine")
    func fileWins() throws {
        let configuration = try PipelineConfiguration(yaml: "stages:\n  scan: {workers: 3}\n  decode: {queue: 5}\n").sized(forCores: 16)
        #expect(configuration.scan.workers == 3 && configuration.decode.workers == 16)
        #expect(configuration.decode.queue == 5 && configuration.scan.queue == 64, "a file's queue is kept; scan's follows its 3 workers")
        #expect(configuration.stagePlan.map(\.fromFile) == [false, true, false, false, false, false])
    }

    @Test("the kernel's affinity mask and a cgroup quota, read as cores")
    func machineCores() {
        #expect(MachineCores.affinityCount("Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(MachineCores.affinityCount("Cpus_allowed:\tffffffff,ffffffff\n") == 64)
        #expect(MachineCores.affinityCount("Cpus_allowed:\t00000000,00000100\n") == 1)
        #expect(MachineCores.affinityCount("Cpus_allowed:\t0\n") == nil)
        #expect(MachineCores.affinityCount("nothing here") == nil)
        #expect(MachineCores.quotaCores("200000 100000\n") == 2)
        #expect(MachineCores.quotaCores("150000 100000") == 2)
        #expect(MachineCores.quotaCores("max 100000\n") == nil)
        #expect(MachineCores.allowed() >= 1)
    }
}
