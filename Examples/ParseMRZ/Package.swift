// swift-tools-version:6.0
// An example of using verify-pipeline's libraries from another package, without the pipeline: it parses typed MRZ
// text and reads an MRZ from a page's image. Build and run: swift run --package-path Examples/ParseMRZ parse-mrz IMAGE
import PackageDescription

let package = Package(
    name: "ParseMRZ",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "verify-pipeline", path: "../..")],
    targets: [
        .executableTarget(
            name: "parse-mrz",
            dependencies: [
                .product(name: "VerifyModel", package: "verify-pipeline"),
                .product(name: "MRZReading", package: "verify-pipeline")
            ],
            path: "Sources/ParseMRZ")
    ]
)
