// swift-tools-version:6.0
import PackageDescription

// scripts/fuzz builds with VERIFY_PIPELINE_FUZZ=1: the fuzz harnesses link libFuzzer,
// and the code they reach is compiled with coverage and AddressSanitizer (with LeakSanitizer); the C shims also with
// UndefinedBehaviorSanitizer, trapping (Swift has no UBSan on Linux: it traps on overflow and bounds itself).
let fuzzing = Context.environment["VERIFY_PIPELINE_FUZZ"] == "1"
let sanitizers = "-sanitize=fuzzer,address"
let fuzzedSwift: [SwiftSetting] = fuzzing ? [.unsafeFlags([sanitizers])] : []
let fuzzedC: [CSetting] = fuzzing ? [.unsafeFlags(["-fsanitize=fuzzer-no-link,address,undefined", "-fsanitize-trap=undefined"])] : []
let harnessSwift: [SwiftSetting] = fuzzing ? [.define("FUZZING"), .unsafeFlags([sanitizers])] : []
let harnessLink: [LinkerSetting] = fuzzing ? [.unsafeFlags([sanitizers, "-use-ld=lld"])] : []
// scripts/test sets VERIFY_PIPELINE_OPTIMIZE_MRZ=1: the MRZ reader's per-pixel arithmetic, unoptimised, runs some thirty
// times slower and debug test runs starve for CPU. Unset (a package that depends on this one by version), the
// library products carry no unsafe flags.
let optimizedMRZ: [SwiftSetting] =
    Context.environment["VERIFY_PIPELINE_OPTIMIZE_MRZ"] == "1" ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []

/// One libFuzzer harness per parser: Fuzz/fuzz-NAME/Harness.swift, its seed corpus in Fuzz/corpus/NAME.
func harness(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: "fuzz-\(name)", dependencies: ["FuzzHarness"] + dependencies, path: "Fuzz/fuzz-\(name)",
        swiftSettings: harnessSwift, linkerSettings: harnessLink)
}

let package = Package(
    name: "verify-pipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "verify-pipeline", targets: ["verify-pipeline"]),
        // For other Swift projects, without the pipeline: the Verify data model with its MRZ, AAMVA and QR parsers,
        // and the MRZ image reader with the decoder it reads through (Examples/ParseMRZ uses both).
        .library(name: "VerifyModel", targets: ["VerifyModel"]),
        .library(name: "MRZReading", targets: ["MRZReading", "ImageDecoding"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.25.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0")
    ],
    targets: [
        // C libraries, reached through system-library targets with a shim.h each.
        .systemLibrary(name: "CLibJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CLibWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        // zxing-cpp 3.1.1, built from its PyPI source distribution by scripts/install-deps (Debian ships 1.4).
        .systemLibrary(name: "CZXing", pkgConfig: "verify-pipeline-zxing"),
        // setjmp/longjmp error handling for libjpeg and libpng has to live in C.
        .target(name: "CImageCodecs", dependencies: ["CLibJPEG", "CLibPNG", "CLibWebP"], cSettings: fuzzedC),
        // A C API over zxing-cpp (C++), for PDF417 and as a fallback reader.
        .target(name: "CZXingShim", dependencies: ["CZXing"]),

        .target(name: "VerifyModel", swiftSettings: fuzzedSwift),
        .target(name: "ImageDecoding", dependencies: ["CImageCodecs", "VerifyModel"], swiftSettings: fuzzedSwift),
        .target(
            name: "MRZReading",
            dependencies: [
                "ImageDecoding", "VerifyModel",
                .product(name: "HeapModule", package: "swift-collections")
            ],
            swiftSettings: fuzzedSwift + optimizedMRZ),
        .target(name: "BarcodeScanning", dependencies: ["CZBar", "CZXingShim", "ImageDecoding", "VerifyModel"]),
        .target(
            name: "TransactionStore",
            dependencies: [
                "VerifyModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        // The work queue `enqueue` fills and `worker`s drain, in the PostgreSQL store's database, with its own migrations.
        .target(
            name: "WorkQueues",
            dependencies: [
                "TransactionStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics")
            ]
        ),
        // What became of each document (its input, outcome and failure) and of a run: the pipeline's output vocabulary,
        // below it, so that what presents it links no reader.
        .target(name: "DocumentOutcomes", dependencies: ["VerifyModel", "TransactionStore"]),
        // Presentation: what `status` prints (text, JSON, signals), what the API serves, the NDJSON result line.
        .target(name: "TransactionViews", dependencies: ["DocumentOutcomes", "TransactionStore", "VerifyModel", "Protect"]),
        // `serve`: the dashboard, the JSON API, Prometheus metrics and health, over Hummingbird.
        .target(
            name: "OperatorView",
            dependencies: [
                "TransactionStore", "TransactionViews", "VerifyModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        .target(
            name: "Protect",
            dependencies: [
                "VerifyModel", "ImageDecoding", "TransactionStore", "OutboundHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // The HTTP client settings and bounded body reading that submissions and Protect's risk evaluations share.
        .target(
            name: "OutboundHTTP",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl")
            ]
        ),
        .target(
            name: "Submission",
            dependencies: [
                "VerifyModel", "OutboundHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics")
            ]
        ),
        .target(
            name: "Pipeline",
            dependencies: [
                "VerifyModel", "DocumentOutcomes", "ImageDecoding", "BarcodeScanning", "MRZReading", "TransactionStore", "WorkQueues",
                "Protect", "Submission",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics")
            ],
            swiftSettings: fuzzedSwift
        ),
        // The composition root: a configuration to the services of one ServiceGroup (run, stream, worker).
        .target(
            name: "Application",
            dependencies: [
                "VerifyModel", "DocumentOutcomes", "TransactionStore", "WorkQueues", "Pipeline", "Protect", "Submission", "OutboundHTTP",
                "OperatorView",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle")
            ]
        ),
        .executableTarget(
            name: "verify-pipeline",
            dependencies: [
                "ImageDecoding", "BarcodeScanning", "MRZReading", "VerifyModel", "DocumentOutcomes", "TransactionStore", "WorkQueues",
                "Pipeline", "Protect", "TransactionViews", "OperatorView", "Application",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),

        .testTarget(
            name: "ApplicationTests",
            dependencies: [
                "Application", "Pipeline", "DocumentOutcomes", "TransactionStore", "OperatorView", "LoopbackServer", "PostgresTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]
        ),
        .testTarget(name: "ImageDecodingTests", dependencies: ["ImageDecoding"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BarcodeScanningTests", dependencies: ["BarcodeScanning"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "MRZReadingTests", dependencies: ["MRZReading", "ImageDecoding", "VerifyModel", "BlockingWaits"], resources: [.copy("Fixtures")]),
        .testTarget(name: "VerifyModelTests", dependencies: ["VerifyModel", "SeededRandom", "AAMVAFixtures"]),
        // Licence payloads of every AAMVA version and issuer variant, with their expected fields.
        .target(name: "AAMVAFixtures", dependencies: ["VerifyModel"], path: "Tests/Helpers/AAMVAFixtures"),
        // The seeded random generator the property tests share.
        .target(name: "SeededRandom", path: "Tests/Helpers/SeededRandom"),
        // Blocking waits (child processes, pipes) moved off Swift's cooperative pool.
        .target(name: "BlockingWaits", path: "Tests/Helpers/BlockingWaits"),
        .testTarget(
            name: "TransactionStoreTests",
            dependencies: [
                "TransactionStore", "store-burst", "PostgresTestSupport", "BlockingWaits", "SeededRandom",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift")
            ]
        ),
        .testTarget(
            name: "WorkQueuesTests",
            dependencies: [
                "WorkQueues", "TransactionStore", "PostgresTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log")
            ]
        ),
        // Creates a database per test on the PostgreSQL server scripts/test starts.
        .target(
            name: "PostgresTestSupport",
            dependencies: ["BlockingWaits", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log")],
            path: "Tests/Helpers/PostgresTestSupport"
        ),
        // Writes transitions until it is killed: the store's crash test runs it in a child process.
        .executableTarget(name: "store-burst", dependencies: ["TransactionStore"], path: "Tests/Helpers/store-burst"),
        // Holds idle connections to a server from a process of its own: the operator view's load test runs it.
        .executableTarget(name: "idle-connections", path: "Tests/Helpers/idle-connections"),
        // The operator view's routes in-process (Hummingbird's test client), against a SQLite store.
        .testTarget(name: "TransactionViewsTests", dependencies: ["TransactionViews", "TransactionStore", "DocumentOutcomes", "VerifyModel"]),
        .testTarget(
            name: "OperatorViewTests",
            dependencies: [
                "OperatorView", "TransactionStore", "VerifyModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio")
            ]),
        .testTarget(
            name: "ProtectTests",
            dependencies: [
                "Protect", "TransactionStore", "VerifyModel",
                .product(name: "Logging", package: "swift-log")
            ]),
        .testTarget(
            name: "PipelineTests",
            dependencies: [
                "Pipeline", "DocumentOutcomes", "SeededRandom", "AAMVAFixtures", "BarcodeScanning", "VerifyModel", "TransactionStore", "Submission",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms")
            ]),
        // A real HTTP server on loopback with injectable faults: the submission API in tests.
        .target(
            name: "LoopbackServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl")
            ],
            path: "Tests/Helpers/LoopbackServer"
        ),
        .testTarget(
            name: "SubmissionTests",
            dependencies: [
                "Submission", "VerifyModel", "LoopbackServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log")
            ]),
        .testTarget(
            name: "VerifyPipelineCLITests",
            dependencies: [
                "verify-pipeline", "Application", "Pipeline", "DocumentOutcomes", "TransactionViews", "TransactionStore", "WorkQueues", "VerifyModel",
                "Protect",
                "PostgresTestSupport", "LoopbackServer",
                "SeededRandom", "AAMVAFixtures", "BlockingWaits", "idle-connections", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")
            ]
        ),

        // libFuzzer harnesses (scripts/fuzz); built plainly they replay files, e.g. a crash's reproducer.
        .target(name: "FuzzHarness", path: "Fuzz/Harnesses", swiftSettings: harnessSwift),
        harness("qr", ["VerifyModel"]),
        harness("mrz", ["VerifyModel"]),
        harness("aamva", ["VerifyModel"]),
        harness("ndjson", ["Pipeline"]),
        harness("pipeline-yaml", ["Pipeline"]),
        harness("image", ["ImageDecoding"]),
        harness("mrz-image", ["ImageDecoding", "MRZReading"])
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx20
)
