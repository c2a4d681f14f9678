#if FUZZING
import Foundation

/// The libFuzzer driver, which `-sanitize=fuzzer` links in.
///
/// SwiftPM links an executable with `main` aliased to the module's own entry
/// point, which hides libFuzzer's `main`; so this target has an `@main` of its
/// own that calls the driver libFuzzer exports for that case.
enum LibFuzzer {
    /// The target each input goes to, read once: a C callback captures nothing, so it comes from the environment.
    private static let target = FuzzTarget.chosen

    /// Runs libFuzzer with `arguments` (the program name first), feeding each input to `target`.
    static func run(_ target: FuzzTarget, arguments: [String]) -> Int32 {
        guard Self.target == target else { return 2 }
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var argc = Int32(arguments.count)
        return cArguments.withUnsafeMutableBufferPointer { buffer in
            var argv = buffer.baseAddress
            return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
        }
    }

    private static let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 = { data, size in
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        _ = LibFuzzer.target?.run(bytes)
        return 0
    }
}

/// libFuzzer's entry for programs with a `main` of their own (compiler-rt `FuzzerInterface.h`).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
