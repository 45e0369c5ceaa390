import Foundation
import Testing
import TransactionStore
import VerifyModel

@testable import Pipeline

@Suite("Pipeline files")
struct ConfigurationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the spec's example parses, every section read")
    func specExample() throws {
        let yaml = """
            name: government-id-and-selfie
            policy:
              documents: {GOVERNMENT_ID: REQUIRED, SELFIE: OPTIONAL, EMAIL: DISABLED, PHONE: DISABLED}
              transactionLifetime: 30m
              failExpiredId: true
            stages:
              decode: {workers: 2, queue: 64}
              scan:   {workers: 3, queue: 16}
              submit: {workers: 4, queue: 256}
            scan:
              symbologies: [QR_CODE, PDF417]
            protect:
              enabled: true
              envId: 3072206d-c6ce-4b15-8ad2-f87e972c7cc3
              deviceAttributesToIgnore: [hostname]
              isLazyMetadata: false
              pauseBehavioralDataOnSuccess: true
            submitter:
              kind: http
              endpoint: http://127.0.0.1:8080/v1
              tokenEnv: VERIFY_API_TOKEN
              timeoutSeconds: 10
              retry: {maxAttempts: 5, initialBackoffMs: 200, maxBackoffMs: 5000}
            """
        let configuration = try PipelineConfiguration(yaml: yaml)
        #expect(configuration.name == "government-id-and-selfie")
        #expect(configuration.documents == [.governmentId: .required, .selfie: .optional, .email: .disabled, .phone: .disabled, .voice: .disabled])
        #expect(configuration.transactionLifetime == 1800)
        #expect(configuration.scan == .init(workers: 3, queue: 16))
        #expect(configuration.symbologies == [.qrCode, .pdf417])
        #expect(configuration.protect.enabled && configuration.protect.deviceAttributesToIgnore == ["hostname"])
        #expect(configuration.protect.pauseBehavioralDataOnSuccess && configuration.protect.isBehavioralDataCollection)
        #expect(configuration.submitter.kind == .http && configuration.submitter.tokenEnv == "VERIFY_API_TOKEN")
        #expect(configuration.submitter.endpoint?.absoluteString == "http://127.0.0.1:8080/v1")
        #expect(configuration.submitter.retry.maxAttempts == 5 && configuration.submitter.retry.maxBackoffMs == 5000)
    }

    @Test("omitted keys and sections take their defaults")
    func defaults() throws {
        let configuration = try PipelineConfiguration(yaml: "name: minimal\n")
        var expected = PipelineConfiguration()
        expected.name = "minimal"
        #expect(configuration == expected)
        #expect(try PipelineConfiguration(yaml: "") == PipelineConfiguration())
    }

    @Test("the shipped pipelines parse", arguments: ["default.yaml", "passport.yaml"])
    func shippedPipelines(_ name: String) throws {
        let configuration = try PipelineConfiguration(contentsOf: Self.repository.appendingPathComponent("Pipelines/\(name)"))
        #expect(configuration.documents[.governmentId] == .required)
    }

    @Test(
        "unknown keys and bad values are refused, naming the key",
        arguments: [
            ("stages:\n  scan: {wokers: 2}\n", "'stages.scan.wokers' is not a known key"),
            ("colour: blue\n", "'colour' is not a known key"),
            ("policy:\n  documents: {PASSPORT: REQUIRED}\n", "'policy.documents.PASSPORT' unknown document type"),
            ("policy:\n  documents: {SELFIE: MAYBE}\n", "'policy.documents.SELFIE' must be REQUIRED, OPTIONAL or DISABLED"),
            (
                "policy:\n  documents: {GOVERNMENT_ID: DISABLED, SELFIE: DISABLED, EMAIL: DISABLED, PHONE: DISABLED}\n",
                "'policy.documents' enables no document type"
            ),
            ("policy:\n  transactionLifetime: soon\n", "'policy.transactionLifetime' must be a duration"),
            ("stages:\n  decode: {workers: 0}\n", "'stages.decode.workers' must be a whole number from 1"),
            ("scan:\n  symbologies: [AZTEC]\n", "unknown symbology 'AZTEC'"),
            ("protect:\n  enabled: true\n", "'protect.envId' is required when protect is enabled"),
            ("submitter:\n  kind: http\n", "'submitter.endpoint' is required for the http submitter"),
            ("submitter:\n  kind: carrier-pigeon\n", "'submitter.kind' must be local or http"),
            ("policy: [1, 2]\n", "'policy' must be a mapping"),
            (
                "name: [unclosed\n",
                "is not valid YAML: line 2, column 1: did not find expected ',' or ']' (while parsing a flow sequence from line 1, column 7)"
            ),
            ("scan:\n\tsymbologies: [QR_CODE]\n", "is not valid YAML: line 2, column 1: found character that cannot start any token"),
            ("name: a\nname: b\n", "is not valid YAML: line 1, column 1: keys given twice: name"),
            // Every number has a range: out of it, the key is named and nothing crashes.
            ("submitter:\n  timeoutSeconds: 1e300\n", "'submitter.timeoutSeconds' must be a number from 0.1 to 3,600"),
            ("submitter:\n  timeoutSeconds: .nan\n", "'submitter.timeoutSeconds' must be a number from 0.1 to 3,600"),
            ("submitter:\n  timeoutSeconds: 0\n", "'submitter.timeoutSeconds' must be a number from 0.1 to 3,600"),
            ("policy:\n  transactionLifetime: infs\n", "'policy.transactionLifetime' must be a duration from 1s to 365d"),
            ("policy:\n  transactionLifetime: nanm\n", "'policy.transactionLifetime' must be a duration from 1s to 365d"),
            ("policy:\n  transactionLifetime: 400d\n", "'policy.transactionLifetime' must be a duration from 1s to 365d"),
            ("ingest:\n  maxLineBytes: 10\n", "'ingest.maxLineBytes' must be a whole number from 1024 to 1073741824"),
            ("ingest:\n  allowedPaths: /tmp\n", "'ingest.allowedPaths' must be a list"),
            ("ingest:\n  directories: [/tmp]\n", "'ingest.directories' is not a known key"),
            ("stages:\n  submit: {queue: 99999999999999999999}\n", "'stages.submit.queue' must be a whole number from 1 to 100000"),
            ("submitter:\n  retry: {maxAttempts: -1}\n", "'submitter.retry.maxAttempts' must be a whole number from 1 to 100"),
            ("store:\n  encryption: {keyEnv: 'c2VjcmV0IGtleQ=='}\n", "'store.encryption.keyEnv' must name an environment variable"),
            ("store:\n  encryption: {key: abc}\n", "'store.encryption.key' is not a known key"),
            (
                "submitter:\n  kind: http\n  endpoint: http://127.0.0.1:1/v1\n  tokenEnv: 'eyJhbGciOi.secret'\n",
                "'submitter.tokenEnv' must name an environment variable (letters, digits and _), not hold a token"
            ),
            // The bearer token is sent to the endpoint: it must not be one of the store's secrets.
            (
                "submitter:\n  kind: http\n  endpoint: http://127.0.0.1:1/v1\n  tokenEnv: VERIFY_PIPELINE_STORE_KEY\n",
                "'submitter.tokenEnv' names VERIFY_PIPELINE_STORE_KEY, which holds a secret of the store"
            ),
            (
                "submitter:\n  kind: http\n  endpoint: http://127.0.0.1:1/v1\n  tokenEnv: PGPASSWORD\n",
                "'submitter.tokenEnv' names PGPASSWORD, which holds a secret of the store"
            ),
            (
                "submitter:\n  kind: http\n  endpoint: http://127.0.0.1:1/v1\n  tokenEnv: BACKOFFICE_KEK\nstore:\n  encryption: {keyEnv: BACKOFFICE_KEK}\n",
                "'submitter.tokenEnv' names BACKOFFICE_KEK, which holds a secret of the store"
            ),
            ("store:\n  encryption: {enabled: maybe}\n", "'store.encryption.enabled' must be true or false"),
            ("retention:\n  mode: forever\n", "'retention.mode' must be one of none, count, age, hybrid"),
            ("retention:\n  keep: -5\n", "'retention.keep' must be a whole number from 0 to 100000000"),
            ("retention:\n  maxAge: 20s\n", "'retention.maxAge' must be a duration from 1m to 3650d"),
            ("retention:\n  maxAge: infd\n", "'retention.maxAge' must be a duration from 1m to 3650d"),
            ("retention:\n  interval: 1s\n", "'retention.interval' must be a duration from 10s to 7d")
        ])
    func refused(_ yaml: String, _ message: String) {
        let error = #expect(throws: ConfigurationError.self) { try PipelineConfiguration(yaml: yaml, name: "p.yaml") }
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        // One line, never a Swift escape (a YAML error's snippet was `\u{A}`-joined).
        #expect(error?.message.contains(where: \.isNewline) == false && error?.message.contains("\\u{") == false)
    }

    @Test("store encryption is on by default, keyed from VERIFY_PIPELINE_STORE_KEY; the retention section reads every mode")
    func storeAndRetention() throws {
        let defaults = PipelineConfiguration()
        #expect(defaults.storeEncryption.enabled && defaults.storeEncryption.keyEnv == "VERIFY_PIPELINE_STORE_KEY")
        #expect(defaults.retention.mode == .none)
        let configuration = try PipelineConfiguration(
            yaml: """
                store:
                  encryption: {enabled: true, keyEnv: BACKOFFICE_STORE_KEK}
                retention: {mode: hybrid, keep: 5000, maxAge: 90d, interval: 10m}
                """)
        #expect(configuration.storeEncryption.keyEnv == "BACKOFFICE_STORE_KEK")
        #expect(configuration.retention == Retention(mode: .hybrid, keep: 5000, maxAge: 90 * 86_400))
        #expect(configuration.retention.label == "retention hybrid 5000, 90d")
        #expect(configuration.retentionInterval == 600)
        #expect(try PipelineConfiguration(yaml: "store:\n  encryption: {enabled: false}\n").storeEncryption.enabled == false)
    }

    @Test("the ingest section: allowed paths and the line limit")
    func ingest() throws {
        let configuration = try PipelineConfiguration(yaml: "ingest:\n  allowedPaths: [/srv/captures, /mnt/scans]\n  maxLineBytes: 2048\n")
        #expect(configuration.allowedPaths == ["/srv/captures", "/mnt/scans"] && configuration.maxLineBytes == 2048)
        #expect(PipelineConfiguration().allowedPaths.isEmpty && PipelineConfiguration().maxLineBytes == 64 << 20)
    }

    @Test("durations", arguments: [("90s", 90.0), ("30m", 1800), ("12h", 43_200), ("7d", 604_800), ("45", 45)])
    func durations(_ text: String, _ seconds: Double) {
        #expect(PipelineConfiguration.duration(text) == seconds)
    }
}
