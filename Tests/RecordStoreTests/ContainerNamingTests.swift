import Foundation
import Testing
@testable import RecordStore

/// RecordStore names no program: its errors and data directory follow the `ContainerNaming` a program passes in.
@Suite struct ContainerNamingTests {
    /// Fatchat's naming (FatchatCore's `ContainerNaming.fatchat`, which this target does not import).
    static let fatchat = ContainerNaming(programName: "Fatchat", dataDirectoryName: "fatchat", createCommand: "fatchat init", journalModeOption: "--fs-mode")

    private func openingFails(_ url: URL, options: Container.Options) -> String {
        do {
            _ = try Container(url: url, options: options)
            return "opened"
        } catch {
            return (error as? StoreError)?.message ?? "\(error)"
        }
    }

    @Test("With no naming, errors name RecordStore and its API; with one, the program and its commands")
    func errorsFollowTheNaming() throws {
        let dir = try TemporaryDirectory()
        let empty = dir.path("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let neutral = openingFails(empty, options: Container.Options(create: false, privateDataDirectory: dir.path("private")))
        #expect(neutral == "\(empty.path) is not a RecordStore container (it has no container.json). Make one with `Container.create(at:access:)`.")

        let naming = ContainerNaming(programName: "Chatter", dataDirectoryName: "chatter", createCommand: "chatter init", journalModeOption: "--storage")
        let named = openingFails(empty, options: Container.Options(create: false, privateDataDirectory: dir.path("private"), naming: naming))
        #expect(named == "\(empty.path) is not a Chatter container (it has no container.json). Make one with `chatter init \(empty.path)`.")

        let made = try Container(url: dir.path("made"), options: Container.Options(mode: .local, privateDataDirectory: dir.path("private")))
        let wrongMode = openingFails(made.url, options: Container.Options(mode: .network, privateDataDirectory: dir.path("private"), naming: naming))
        #expect(wrongMode.hasSuffix("open it with --storage local if that is right."), "\(wrongMode)")
    }

    @Test("The default container and private databases go in the naming's data directory")
    func theDataDirectoryFollowsTheNaming() {
        #expect(Container.defaultURL().lastPathComponent == "recordstore")
        #expect(Container.defaultURL(naming: ContainerNaming(dataDirectoryName: "chatter")).path == UserIdentity.current.dataHome.appendingPathComponent("chatter").path)
    }
}
