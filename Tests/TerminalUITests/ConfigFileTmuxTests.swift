import Foundation
import ProcessTestKit
import Testing

/// The full-screen client started with no flags at all: its handle, container, colours and keys come from the configuration file.
@Suite(.startsProcesses, .enabled(if: TmuxSession.available, "needs tmux"))
struct ConfigFileTmuxTests {
    @Test func theClientTakesItsHandleColoursAndKeysFromTheFile() async throws {
        let root = URL(fileURLWithPath: "/tmp/fatchat-configtui-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let configDirectory = root.appendingPathComponent("config/fatchat")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        let container = root.appendingPathComponent("chat").path
        let made = try WorkerProcess("init", executable: "fatchat", ["init", container])
        #expect(try await made.finish(timeout: .seconds(60)) == .success, "\(made.errorText)")
        // Blue (4) is a background the default theme never uses. The test runner sets NO_COLOR, which the client would obey, so it is unset.
        try Data("""
            handle: cfgzed
            container: \(container)
            colors:
              bar: bold on 4
            keys:
              next-channel: alt-n
              quit: ctrl-q
            """.utf8).write(to: configDirectory.appendingPathComponent("config.yaml"))

        let binary = try WorkerProcess.executable("fatchat").path
        let zed = try TmuxSession(name: "fatchat-config-\(UUID().uuidString.prefix(6))", width: 100, height: 24,
                                  command: ["/usr/bin/env", "-u", "NO_COLOR", "XDG_CONFIG_HOME=" + root.appendingPathComponent("config").path, "FATCHAT_CONTAINER=",
                                            "TERM=xterm-256color", binary])
        defer { zed.kill() }
        #expect(try await zed.waitFor("[cfgzed]"), "the handle from the file: \(zed.screen)")
        let styled = try zed.captureWithStyles()
        #expect(styled.contains("44m"), "the bar's background from the file: \(styled.prefix(300).debugDescription)")
        try zed.type("/join ops")
        try zed.press("Enter")
        #expect(try await zed.waitFor("[#ops]"), "\(zed.screen)")

        // Ctrl-N was next-channel's default key; the file moved that action to Alt-N.
        try zed.press("C-n")
        try await Task.sleep(for: .milliseconds(700))
        #expect(try zed.capture().contains("[#ops]"), "Ctrl-N no longer changes channel: \(zed.screen)")
        try zed.press("M-n")
        #expect(try await zed.waitFor("[#general]"), "Alt-N does: \(zed.screen)")

        try zed.press("F1")
        #expect(try await zed.waitFor("Your configuration file binds these keys"), "\(zed.screen)")
        #expect(try await zed.waitFor("next-channel: alt-n"), "\(zed.screen)")
        try zed.press("Escape")

        // Ctrl-C is no longer quit; Ctrl-Q still is.
        try zed.press("C-c")
        try await Task.sleep(for: .milliseconds(700))
        #expect(try !zed.capture().contains("EXITED"), "\(zed.screen)")
        try zed.press("C-q")
        #expect(try await zed.waitForExit(), "\(zed.screen)")
    }
}
