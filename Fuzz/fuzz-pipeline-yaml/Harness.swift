import FuzzHarness
import Pipeline

/// The pipeline file reader (Yams and the strict key checks): any bytes, as YAML.
func fuzz(_ bytes: [UInt8]) {
    _ = try? PipelineConfiguration(yaml: String(decoding: bytes, as: UTF8.self), name: "fuzz.yaml")
}

@main
enum Main {
    static func main() {
        Harness.run(fuzz)
    }
}
