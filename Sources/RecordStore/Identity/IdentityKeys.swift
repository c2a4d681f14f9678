import Crypto
import Foundation

/// This OS account's private keys: Ed25519 to sign the records it saves, X25519 to open what is sealed to it.
///
/// They live in `identity.key` in the user's private data directory, mode
/// 0600, made on first run. Two processes that start at once for the first
/// time both make a file under a temporary name and link it into place; the
/// first link wins and the other process reads the winner's.
public struct IdentityKeys: Sendable {
    /// The name of the key file in the private data directory.
    static let fileName = "identity.key"
    private static let header = "fatchat-private-key 1"

    private let keys: PrivateKeys
    var signing: Curve25519.Signing.PrivateKey { keys.signing }
    var agreement: Curve25519.KeyAgreement.PrivateKey { keys.agreement }
    /// The public half, as others read it.
    public let publicIdentity: PublicIdentity

    init(account: String, signing: Curve25519.Signing.PrivateKey, agreement: Curve25519.KeyAgreement.PrivateKey) {
        keys = PrivateKeys(signing: signing, agreement: agreement)
        publicIdentity = PublicIdentity(account: account, signingKey: signing.publicKey.rawRepresentation,
                                        agreementKey: agreement.publicKey.rawRepresentation)
    }

    /// Reads the keys in `directory`, making them first if there are none.
    static func loadOrCreate(in directory: URL, account: String, naming: ContainerNaming) throws -> IdentityKeys {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let handle = try DirectoryHandle(path: directory.path, followingLink: true, naming: naming)
        if let keys = try read(in: handle, account: account) { return keys }
        let made = IdentityKeys(account: account, signing: Curve25519.Signing.PrivateKey(), agreement: Curve25519.KeyAgreement.PrivateKey())
        let temporary = ".\(fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = try handle.createFile(temporary, mode: 0o600, group: nil)
        defer { handle.remove(temporary) }
        let text = Data("\(header)\nsign \(made.signing.rawRepresentation.base64EncodedString())\nagree \(made.agreement.rawRepresentation.base64EncodedString())\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.count, synced else {
            throw StoreError(.permissionFailure, "Cannot write the identity key \(handle.path(of: fileName)): \(DirectoryHandle.reason(errno)).")
        }
        if try handle.link(temporary, as: fileName) { return made }
        guard let keys = try read(in: handle, account: account) else {
            throw StoreError(.badContainer, "\(handle.path(of: fileName)) is not an identity key; move it away and run again to make a new one.")
        }
        return keys
    }

    /// The keys in `identity.key`, nil when there is no such file.
    private static func read(in handle: DirectoryHandle, account: String) throws -> IdentityKeys? {
        guard try handle.status(fileName) != nil else { return nil }
        let fd = try handle.openRegularFile(fileName)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw StoreError(.permissionFailure, "\(handle.path(of: fileName)) must belong to you with mode 0600, since it holds your private keys; `chmod 600` it.")
        }
        let text = String(decoding: try readAll(fd, limit: 4096), as: UTF8.self)
        let lines = text.split(separator: "\n")
        guard lines.count == 3, lines[0] == header, lines[1].hasPrefix("sign "), lines[2].hasPrefix("agree "),
              let sign = Data(base64Encoded: String(lines[1].dropFirst(5))),
              let agree = Data(base64Encoded: String(lines[2].dropFirst(6))),
              let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: sign),
              let agreement = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: agree) else {
            throw StoreError(.badContainer, "\(handle.path(of: fileName)) is not an identity key; move it away and run again to make a new one (others will be told your key changed).")
        }
        return IdentityKeys(account: account, signing: signing, agreement: agreement)
    }

    /// Reads a descriptor to its end, at most `limit` bytes.
    static func readAll(_ fd: Int32, limit: Int) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count <= limit {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw StoreError(.serviceUnavailable, "Cannot read a key file: \(DirectoryHandle.reason(errno)).") }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Signs `message` with the Ed25519 key.
    func sign(_ message: Data) throws -> Data {
        try signing.signature(for: message)
    }
}

/// The two private keys, shared between threads.
///
/// `@unchecked Sendable` because swift-crypto 3 does not mark its key types
/// `Sendable` on Linux; both are immutable values set once here, and signing
/// or agreeing only reads them.
private final class PrivateKeys: @unchecked Sendable {
    let signing: Curve25519.Signing.PrivateKey
    let agreement: Curve25519.KeyAgreement.PrivateKey

    init(signing: Curve25519.Signing.PrivateKey, agreement: Curve25519.KeyAgreement.PrivateKey) {
        self.signing = signing
        self.agreement = agreement
    }
}
