import Foundation

/// The one error type of RecordStore. Its codes follow CloudKit's `CKError.Code`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, named as CloudKit names it.
    public enum Code: String, Sendable, CaseIterable {
        case internalError
        case partialFailure
        case serviceUnavailable
        case permissionFailure
        case unknownItem
        case invalidArguments
        case serverRecordChanged
        case assetFileNotFound
        case incompatibleVersion
        case changeTokenExpired
        case batchRequestFailed
        case zoneBusy
        case badDatabase
        case badContainer
        case quotaExceeded
        case zoneNotFound
        case limitExceeded
        case referenceViolation
        case constraintViolation
    }

    public var code: Code
    /// A sentence a person can act on.
    public var message: String
    /// For `partialFailure`: the error of each record that failed.
    public var partialErrors: [RecordID: StoreError]
    /// For `serverRecordChanged`: the record the client tried to save.
    public var clientRecord: Record?
    /// For `serverRecordChanged`: the record as the database has it now.
    public var serverRecord: Record?
    /// For `serverRecordChanged`: the record as the client last fetched it.
    public var ancestorRecord: Record?

    public init(_ code: Code, _ message: String, partialErrors: [RecordID: StoreError] = [:]) {
        self.code = code
        self.message = message
        self.partialErrors = partialErrors
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// Whether trying again later may succeed without anyone changing the request.
    public var isTransient: Bool {
        switch code {
        case .zoneBusy, .serviceUnavailable: true
        default: false
        }
    }
}

extension StoreError: LocalizedError {
    public var errorDescription: String? { description }
}
