import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What every fuzz harness shares. Built for fuzzing (`scripts/fuzz`: `-D FUZZING`, libFuzzer linked), `run`
/// hands each input libFuzzer makes to `body`; built plainly (as `swift build` does), it replays the files and
/// folders named on the command line through `body`, so a reproducer libFuzzer wrote can be rerun and debugged.
public enum Harness {
    /// The harness under way: libFuzzer calls back through a C function, which cannot capture it.
    nonisolated(unsafe) static var body: ([UInt8]) -> Void = { _ in }

    public static func run(_ body: @escaping ([UInt8]) -> Void) -> Never {
        #if FUZZING
            Self.body = body
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
            replay(Array(CommandLine.arguments.dropFirst()), body)
            exit(0)
        #endif
    }

    static func replay(_ arguments: [String], _ body: ([UInt8]) -> Void) {
        var count = 0
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no file at \(argument)\n".utf8))
                exit(2)
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).sorted().map { argument + "/" + $0 }
                : [argument]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                body([UInt8](data))
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}

#if FUZZING
    /// The entry libFuzzer's library refers to; `LLVMFuzzerRunDriver` is handed the same function.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        Harness.body(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
        return 0
    }

    /// libFuzzer's entry for programs that keep their own `main` (SwiftPM gives every executable its own).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt
#endif
