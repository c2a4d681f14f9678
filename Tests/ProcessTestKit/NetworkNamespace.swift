import Foundation

/// A second host on this machine: a network namespace joined to this one by a veth pair.
///
/// Its processes share the filesystem but not the network: their 127.0.0.1 is their own,
/// and they reach this side only through `hostAddress`. Made with `ip` from iproute2,
/// as root; `remove()` deletes the namespace and, with it, both ends of the pair.
public final class NetworkNamespace: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The namespace's name, as `ip netns` lists it.
    public let name: String
    /// This side's end of the pair: the address a server here listens on for the other host.
    public let hostAddress: String
    /// The other host's address.
    public let guestAddress: String
    /// Both ends' network, in CIDR form, for a server's list of allowed clients.
    public let network: String

    private static let ip = "/usr/sbin/ip"

    /// Nil when a namespace can be made here; otherwise why not, for a test's skip message.
    public static var unavailableReason: String? {
        if getuid() != 0 { return "a network namespace needs root" }
        if !FileManager.default.isExecutableFile(atPath: ip) { return "iproute2's ip is not installed (apt-get install iproute2; .ci/run does)" }
        return nil
    }

    /// Makes the namespace with its loopback up, and the pair with an address on each end.
    ///
    /// The names and the 10.x.y.0/24 network come from the process ID, so two test processes don't collide.
    public init() throws {
        if let reason = Self.unavailableReason { throw Failure(description: reason) }
        let id = Int(getpid())
        name = "fatchat-\(id)"
        let subnet = "10.\(200 + id % 50).\(id / 50 % 250)"
        hostAddress = subnet + ".1"
        guestAddress = subnet + ".2"
        network = subnet + ".0/24"
        let (near, far) = ("fc\(id)a", "fc\(id)b")
        try? Self.run(["netns", "del", name])
        try Self.run(["netns", "add", name])
        do {
            try Self.run(["link", "add", near, "type", "veth", "peer", "name", far])
            try Self.run(["link", "set", far, "netns", name])
            try Self.run(["addr", "add", hostAddress + "/24", "dev", near])
            try Self.run(["link", "set", near, "up"])
            try Self.run(["netns", "exec", name, Self.ip, "addr", "add", guestAddress + "/24", "dev", far])
            try Self.run(["netns", "exec", name, Self.ip, "link", "set", far, "up"])
            try Self.run(["netns", "exec", name, Self.ip, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// The launcher prefix that runs a command inside the namespace (put a user's launcher after it).
    public var launcher: [String] { [Self.ip, "netns", "exec", name] }

    /// Deletes the namespace; the pair goes with it.
    public func remove() {
        try? Self.run(["netns", "del", name])
    }

    private static func run(_ arguments: [String]) throws {
        let process = try SpawnedProcess([ip] + arguments, stderr: .pipe)
        let message = process.errors?.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "ip \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
