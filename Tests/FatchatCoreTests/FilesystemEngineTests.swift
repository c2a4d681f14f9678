import Foundation
import ProcessTestKit
import Testing

/// The engine follows the filesystem, with the real `fatchat`: `init` on a FUSE mount makes a log container,
/// a single-file container there is refused with the migrate command, `--fs-mode local` overrides, and `doctor` says so.
@Suite(.startsProcesses, .serialized)
struct FilesystemEngineTests {
    @Test func doctorOnALocalDiskFindsNothingToFix() async throws {
        let root = URL(fileURLWithPath: "/tmp/fatchat-doctor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let container = root.appendingPathComponent("chat").path
        #expect(try await fatchat(["init", container]).termination == .success)
        let doctor = try await fatchat(["doctor", container])
        #expect(doctor.termination == .success, "\(doctor.lines) \(doctor.errorText)")
        #expect(doctor.lines.contains { $0.hasPrefix("filesystem") && $0.contains("(local)") }, "\(doctor.lines)")
        #expect(doctor.lines.contains { $0.hasPrefix("engine") && $0.hasSuffix("sqlite") }, "\(doctor.lines)")
        #expect(doctor.lines.contains { $0.hasPrefix("journal") && $0.hasSuffix("local") }, "\(doctor.lines)")
        #expect(doctor.lines.last == "ok: nothing to fix")

        let log = root.appendingPathComponent("logs").path
        #expect(try await fatchat(["init", log, "--engine", "log"]).termination == .success)
        #expect(try await fatchat(["post", "--container", log, "general", "hi"]).termination == .success)
        let logDoctor = try await fatchat(["doctor", log])
        #expect(logDoctor.lines.contains("log writers  1 (1 account)"), "\(logDoctor.lines)")
        // A log container has no shared file, and the check does not ask for one.
        #expect(!FileManager.default.fileExists(atPath: log + "/public.sqlite"))
        let check = try await fatchat(["admin", "check", "--container", log])
        #expect(check.termination == .success && check.lines == ["ok"], "\(check.lines) \(check.errorText)")
    }

    @Test("init, refusal, override and doctor on real sshfs and bindfs mounts",
          .enabled("needs FUSE: /dev/fuse, sshfs, openssh-server, bindfs, fuse3") { FuseMounts.isAvailable() })
    func theEngineFollowsTheFilesystem() async throws {
        let directory = URL(fileURLWithPath: "/tmp/fatchat-fsengine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mounts = try await FuseMounts.up(in: directory)
        defer { FuseMounts.down(in: directory) }
        let sshfs = mounts.appendingPathComponent("sshfs-a").path, bindfs = mounts.appendingPathComponent("bindfs-a").path
        let shared = directory.appendingPathComponent("shared").path
        let env = ["XDG_DATA_HOME": directory.appendingPathComponent("xdg").path]

        // init on a FUSE mount makes a log container by itself, and posting works there.
        let made = try await fatchat(["init", sshfs + "/auto"], environment: env)
        #expect(made.termination == .success && made.lines.first?.contains("log engine") == true, "\(made.lines) \(made.errorText)")
        let descriptor = try String(contentsOfFile: shared + "/auto/container.json", encoding: .utf8)
        #expect(descriptor.contains("\"log\""), "\(descriptor)")
        #expect(try await fatchat(["post", "--container", sshfs + "/auto", "general", "over sshfs"], environment: env).termination == .success)
        // Asking for one shared file there is refused, and says what to do instead.
        let asked = try await fatchat(["init", sshfs + "/single", "--engine", "sqlite"], environment: env)
        #expect(asked.termination != .success && asked.errorText.contains("--fs-mode local"), "\(asked.errorText)")

        // A single-file container reached through a FUSE mount is refused, naming the migration.
        #expect(try await fatchat(["init", shared + "/old"], environment: env).termination == .success)
        let refused = try await fatchat(["read", "--container", bindfs + "/old", "general"], environment: env)
        #expect(refused.termination != .success, "\(refused.lines)")
        #expect(refused.errorText.contains("fatchat admin migrate-to-logs \(bindfs)/old") && refused.errorText.contains("fuse.bindfs"),
                "\(refused.errorText)")
        // Someone who knows that only this mount uses it can say so.
        let overridden = try await fatchat(["post", "--container", bindfs + "/old", "--fs-mode", "local", "general", "trusted"], environment: env)
        #expect(overridden.termination == .success, "\(overridden.errorText)")

        // doctor names sshfs, its slow default cache and the mount options that fix it.
        let doctor = try await fatchat(["doctor", sshfs + "/auto"], environment: env)
        #expect(doctor.termination.status == 2, "\(doctor.termination) \(doctor.errorText)")
        #expect(doctor.lines.contains { $0.hasPrefix("filesystem") && $0.contains("fuse.sshfs") }, "\(doctor.lines)")
        #expect(doctor.lines.contains { $0.hasPrefix("engine") && $0.hasSuffix("log") }, "\(doctor.lines)")
        #expect(doctor.lines.contains { $0.hasPrefix("warning:") && $0.contains("-o cache=no") && $0.contains("attr_timeout=1,entry_timeout=1") },
                "\(doctor.lines)")
        let oldDoctor = try await fatchat(["doctor", bindfs + "/old"], environment: env)
        #expect(oldDoctor.lines.contains { $0.hasPrefix("warning:") && $0.contains("fatchat admin migrate-to-logs") }, "\(oldDoctor.lines)")
    }

    /// smbnetfs answers `link()` with EPERM; a preloaded shim makes every `link` do the same here, and `init`
    /// and the first post must still make every file, renamed into place instead.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/cc"), "needs cc, to build the shim"))
    func initAndPostWorkWhereLinkIsRefused() async throws {
        let root = URL(fileURLWithPath: "/tmp/fatchat-nolink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("nolink.c"), shim = root.appendingPathComponent("nolink.so")
        try Data("""
            #include <errno.h>
            int linkat(int a, const char *b, int c, const char *d, int e) { (void)a; (void)b; (void)c; (void)d; (void)e; errno = EPERM; return -1; }
            int link(const char *a, const char *b) { (void)a; (void)b; errno = EPERM; return -1; }
            """.utf8).write(to: source)
        let cc = try spawnWaiting(["/usr/bin/cc", "-shared", "-fPIC", "-o", shim.path, source.path], capturing: false)
        try #require(cc.status == 0)
        let env = ["LD_PRELOAD": shim.path, "XDG_DATA_HOME": root.appendingPathComponent("xdg").path]
        for (name, engine) in [("logs", "log"), ("single", "sqlite")] {
            let container = root.appendingPathComponent(name).path
            let made = try await fatchat(["init", container, "--engine", engine], environment: env)
            #expect(made.termination == .success, "\(engine): \(made.errorText)")
            #expect(FileManager.default.fileExists(atPath: container + "/container.json"))
            #expect(try await fatchat(["post", "--container", container, "general", "no links"], environment: env).termination == .success)
            let read = try await fatchat(["read", "--container", container, "general"], environment: env)
            #expect(read.lines.contains { $0.hasSuffix("no links") }, "\(engine): \(read.lines) \(read.errorText)")
            // No temporary file is left behind.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: container).filter { $0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }

    private struct Finished {
        var termination: WorkerProcess.Termination
        var lines: [String]
        var errorText: String
    }

    private func fatchat(_ arguments: [String], environment: [String: String] = [:]) async throws -> Finished {
        let process = try WorkerProcess("fatchat \(arguments.first ?? "")", executable: "fatchat", arguments, environment: environment)
        let termination = try await process.finish(timeout: .seconds(120))
        return Finished(termination: termination, lines: process.lines, errorText: process.errorText)
    }
}
