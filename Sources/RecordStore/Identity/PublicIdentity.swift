import Crypto
import Foundation

/// The public half of an OS account's identity: the Ed25519 key that checks its signatures
/// and the X25519 key that seals messages to it.
///
/// It is published in the container, where only its account can write it, as a
/// few lines of text. Whatever is read back from there is another person's
/// input: `parse` takes at most `maximumSize` bytes, refuses anything but the
/// exact layout, and never traps.
public struct PublicIdentity: Hashable, Sendable {
    /// The account, `_<uid>_<name>`, that the key belongs to.
    public let account: String
    /// The raw 32-byte Ed25519 public key.
    public let signingKey: Data
    /// The raw 32-byte X25519 public key.
    public let agreementKey: Data

    /// The most bytes a published key file may have.
    static let maximumSize = 1024
    private static let header = "fatchat-key 1"

    init(account: String, signingKey: Data, agreementKey: Data) {
        self.account = account
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// `SHA256:` and the base64 of the digest of both keys, without padding, as ssh prints a host key's.
    public var fingerprint: String {
        let digest = Crypto.SHA256.hash(data: signingKey + agreementKey)
        return "SHA256:" + Data(digest).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The key file's text.
    var encoded: String {
        "\(Self.header)\naccount \(account)\nsign \(signingKey.base64EncodedString())\nagree \(agreementKey.base64EncodedString())\n"
    }

    /// Reads a key file's bytes; nil for anything that is not exactly a key of `account`.
    static func parse(_ bytes: Data, account: String) -> PublicIdentity? {
        guard bytes.count <= maximumSize, let text = String(data: bytes, encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[4].isEmpty, lines[0] == header, lines[1] == "account " + account,
              lines[2].hasPrefix("sign "), lines[3].hasPrefix("agree "),
              let sign = Data(base64Encoded: String(lines[2].dropFirst(5))), sign.count == 32,
              let agree = Data(base64Encoded: String(lines[3].dropFirst(6))), agree.count == 32,
              (try? Curve25519.Signing.PublicKey(rawRepresentation: sign)) != nil,
              (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: agree)) != nil else { return nil }
        return PublicIdentity(account: account, signingKey: sign, agreementKey: agree)
    }

    /// Whether `signature` is this account's signature of `message`.
    func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: signingKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}
