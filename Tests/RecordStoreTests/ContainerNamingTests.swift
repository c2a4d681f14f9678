import Foundation
import GRDB
import Testing
@testable import RecordStore

/// RecordStore names no program: its errors and data directory follow the `ContainerNaming` a program passes in.
@Suite struct ContainerNamingTests {
    /// Fatchat's naming (FatchatCore's `ContainerNaming.fatchat`, which this target does not import).
    static let fatchat = ContainerNaming(programName: "Fatchat", dataDirectoryName: "fatchat", createCommand: "fatchat init",
                                         journalModeOption: "--fs-mode", checkCommand: "fatchat admin check")

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

    @Test("A database file that is not the program's, opened or checked, is named for the program, not Fatchat")
    func storageErrorsFollowTheNaming() throws {
        let dir = try TemporaryDirectory()
        let naming = ContainerNaming(programName: "Chatter", dataDirectoryName: "chatter", createCommand: "chatter init", checkCommand: "chatter check")
        let options = Container.Options(privateDataDirectory: dir.path("private"), naming: naming)
        _ = try Container(url: dir.path("chat"), options: options)
        let path = dir.path("chat/public.sqlite").path
        try FileManager.default.removeItem(atPath: path)
        try DatabaseQueue(path: path).write { try $0.execute(sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)") }

        let foreign = openingFails(dir.path("chat"), options: options)
        #expect(foreign == "\(path) is an SQLite database, but not a Chatter one; it was left untouched. Point the container somewhere else.")
        let checked = try RecordDatabase.checkPublicDatabase(inContainer: dir.path("chat"), naming: naming)
        #expect(checked == ["\(path) is not a Chatter database"])
        // The temporary directory's own name says fatchat, so only the words around the path count.
        #expect(!(foreign + checked.joined()).replacingOccurrences(of: path, with: "").lowercased().contains("fatchat"))
    }

    @Test("The default container and private databases go in the naming's data directory")
    func theDataDirectoryFollowsTheNaming() {
        #expect(Container.defaultURL().lastPathComponent == "recordstore")
        #expect(Container.defaultURL(naming: ContainerNaming(dataDirectoryName: "chatter")).path == UserIdentity.current.dataHome.appendingPathComponent("chatter").path)
    }
}
