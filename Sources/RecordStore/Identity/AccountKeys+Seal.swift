import Crypto
import Foundation

/// Sealing bytes to one account, so that only it can open them: HPKE (RFC 9180) in its
/// authenticated mode, X25519 + HKDF-SHA256 + ChaCha20-Poly1305, from this user's X25519 key
/// to the recipient's published one.
///
/// A sealed box is a version byte, the 32-byte encapsulated key, then the
/// ciphertext. `context` (who writes to whom, and the record's name) is bound
/// into it, so a box moved to another record or pair of accounts does not open.
extension AccountKeys {
    static let sealVersion: UInt8 = 1
    private static let sealInfo = Data("fatchat direct message 1".utf8)

    /// Seals `plaintext` to `account`'s published key; throws `unknownItem` when it has published none that can be believed.
    public func seal(_ plaintext: Data, to account: String, context: Data) throws -> Data {
        guard let recipient = key(of: account),
              let recipientKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient.agreementKey) else {
            throw StoreError(.unknownItem, "\(account) has published no key that can be believed, so nothing can be sealed to them yet; they publish one the first time they run Fatchat on this container.")
        }
        var sender = try HPKE.Sender(recipientKey: recipientKey, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: Self.sealInfo,
                                     authenticatedBy: own.agreement)
        let ciphertext = try sender.seal(plaintext, authenticating: context)
        return Data([Self.sealVersion]) + sender.encapsulatedKey + ciphertext
    }

    /// Opens a box sealed to this user by `account`; nil when it is not one, was not sealed by them, or was changed.
    public func open(_ sealed: Data, from account: String, context: Data) -> Data? {
        guard sealed.count > 33, sealed.count <= 2_000_000, sealed.first == Self.sealVersion,
              let sender = key(of: account),
              let senderKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: sender.agreementKey) else { return nil }
        let encapsulated = Data(sealed.dropFirst().prefix(32))
        guard var recipient = try? HPKE.Recipient(privateKey: own.agreement, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: Self.sealInfo,
                                                  encapsulatedKey: encapsulated, authenticatedBy: senderKey) else { return nil }
        return try? recipient.open(Data(sealed.dropFirst(33)), authenticating: context)
    }
}
