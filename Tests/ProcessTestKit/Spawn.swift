import Foundation

/// Runs a program, waits for it, and returns its standard output when `capturing`.
///
/// posix_spawn and waitpid rather than Foundation's Process: Process left an exited
/// tmux client unreaped, and `waitUntilExit` never returned.
public func spawn(_ argv: [String], capturing: Bool) throws -> String {
    try spawnWaiting(argv, capturing: capturing).output
}

/// Runs a program and waits for it: its wait status, and its standard output when `capturing`.
/// Standard error goes to `errorPath` (created or truncated), else to /dev/null.
public func spawnWaiting(_ argv: [String], capturing: Bool, errorPath: String? = nil) throws -> (status: Int32, output: String) {
    var fds: [Int32] = [-1, -1]
    if capturing { guard pipe(&fds) == 0 else { throw SpawnError(call: "pipe") } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    if let errorPath {
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    if capturing {
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    let cEnv: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (cArgs + cEnv).forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
    if capturing { close(fds[1]) }
    guard result == 0 else {
        if capturing { close(fds[0]) }
        throw SpawnError(call: "posix_spawn")
    }
    var output = [UInt8]()
    if capturing {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            output += buffer[0..<n]
        }
        close(fds[0])
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    return (status, String(decoding: output, as: UTF8.self))
}

/// A system call failed while starting a helper program.
public struct SpawnError: Error {
    public let call: String
}
