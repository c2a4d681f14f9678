import Foundation

/// Feeds saved inputs to a target once each and says what each did; a trap ends the run with the Swift backtrace.
enum Replay {
    /// Runs every file named in `paths` (a directory stands for the files in it); exits 0 when none trapped.
    static func run(_ target: FuzzTarget, paths: [String]) -> Int32 {
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: FatchatFuzz \(target.rawValue) FILE|DIRECTORY…\n".utf8))
            return 2
        }
        for path in paths.flatMap(files) {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("\(path): cannot read it\n".utf8))
                return 1
            }
            print("\(path): \(target.run(Array(data)))")
            fflush(nil)
        }
        return 0
    }

    private static func files(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }
    }
}
