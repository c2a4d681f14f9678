import Foundation

/// How a subscription is stored: JSON, with its predicate kept as format plus typed arguments, parsed again on load.
extension Subscription: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, kind, recordType, format, arguments, options, zone, notificationInfo, parent
    }

    /// Reads a stored subscription, parsing its predicate again.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subscriptionID = try c.decode(String.self, forKey: .id)
        notificationInfo = try c.decode(NotificationInfo.self, forKey: .notificationInfo)
        let zone = try c.decodeIfPresent(String.self, forKey: .zone).map { ZoneID(zoneName: $0) }
        let recordType = try c.decodeIfPresent(String.self, forKey: .recordType)
        if try c.decode(String.self, forKey: .kind) == "zone" {
            guard let zone else { throw StoreError(.badDatabase, "Stored zone subscription '\(subscriptionID)' has no zone.") }
            kind = .zone(zone, recordType: recordType)
        } else {
            let format = try c.decode(String.self, forKey: .format)
            let arguments = try c.decode([StoredArgument].self, forKey: .arguments).map(\.value)
            kind = .query(recordType: recordType ?? "", predicate: try QueryPredicate(format: format, argumentArray: arguments),
                          options: try c.decode(QuerySubscriptionOptions.self, forKey: .options), zone: zone)
        }
        parent = try c.decodeIfPresent(StoredParent.self, forKey: .parent)?.parent
    }

    /// Writes the subscription as JSON, its predicate as format plus typed arguments.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(subscriptionID, forKey: .id)
        try c.encode(notificationInfo, forKey: .notificationInfo)
        switch kind {
        case .zone(let zone, let recordType):
            try c.encode("zone", forKey: .kind)
            try c.encode(zone.zoneName, forKey: .zone)
            try c.encodeIfPresent(recordType, forKey: .recordType)
        case .query(let recordType, let predicate, let options, let zone):
            try c.encode("query", forKey: .kind)
            try c.encode(recordType, forKey: .recordType)
            try c.encode(predicate.format, forKey: .format)
            try c.encode(predicate.arguments.map(StoredArgument.init), forKey: .arguments)
            try c.encode(options, forKey: .options)
            try c.encodeIfPresent(zone?.zoneName, forKey: .zone)
        }
        try c.encodeIfPresent(parent.map(StoredParent.init), forKey: .parent)
    }
}

/// A subscription's parent as JSON: the record's ID and, as seconds since 1970, its creation date.
private struct StoredParent: Codable {
    let parent: Subscription.Parent

    init(_ parent: Subscription.Parent) { self.parent = parent }

    private enum CodingKeys: String, CodingKey { case name, zone, owner, created }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let zone = ZoneID(zoneName: try c.decode(String.self, forKey: .zone), ownerName: try c.decode(String.self, forKey: .owner))
        let created = try c.decodeIfPresent(Double.self, forKey: .created)
        if let created, !created.isFinite {
            throw StoreError(.badDatabase, "A stored subscription's parent has a creation date that is not a number.")
        }
        parent = Subscription.Parent(recordID: RecordID(recordName: try c.decode(String.self, forKey: .name), zoneID: zone),
                                     creationDate: created.map(Date.init(timeIntervalSince1970:)))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(parent.recordID.recordName, forKey: .name)
        try c.encode(parent.recordID.zoneID.zoneName, forKey: .zone)
        try c.encode(parent.recordID.zoneID.ownerName, forKey: .owner)
        try c.encodeIfPresent(parent.creationDate?.timeIntervalSince1970, forKey: .created)
    }
}

extension Subscription {
    /// The longest stored form of a subscription; the engine reads them every few seconds, so a giant one would cost every client.
    static let maximumStoredSize = 65_536

    /// Decodes a row of the `subscription` table; throws `DamagedRow` for a body that is no subscription or names another ID.
    init(storedID id: String, body: String, owner: String) throws {
        self = try StoredColumns.decoding("subscription", key: "\(owner)/\(id)") {
            guard body.utf8.count <= Self.maximumStoredSize else {
                throw StoredColumns.Mismatch(problem: "its body holds \(body.utf8.count) bytes; a subscription takes at most \(Self.maximumStoredSize)")
            }
            let subscription: Subscription
            do {
                subscription = try JSONDecoder().decode(Subscription.self, from: Data(body.utf8))
            } catch {
                throw StoredColumns.Mismatch(problem: "its body is not a subscription (\(error))")
            }
            guard subscription.subscriptionID == id else {
                throw StoredColumns.Mismatch(problem: "its body is subscription '\(subscription.subscriptionID)', not '\(id)'")
            }
            return subscription
        }
    }
}

/// A predicate argument as JSON, keeping its exact type (a date stays a date, a record ID keeps its zone).
private struct StoredArgument: Codable {
    let value: FieldValue

    init(_ value: FieldValue) { self.value = value }

    private enum CodingKeys: String, CodingKey { case t, s, i, d, lat, lon, alt, acc, name, zone, owner, action, items, data }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .t) {
        case "s": value = .string(try c.decode(String.self, forKey: .s))
        case "i": value = .int64(try c.decode(Int64.self, forKey: .i))
        case "d": value = .double(try c.decode(Double.self, forKey: .d))
        case "t": value = .date(Date(timeIntervalSince1970: try c.decode(Double.self, forKey: .d)))
        case "b": value = .bytes(try c.decode(Data.self, forKey: .data))
        case "l":
            value = .location(Location(latitude: try c.decode(Double.self, forKey: .lat), longitude: try c.decode(Double.self, forKey: .lon),
                                       altitude: try c.decodeIfPresent(Double.self, forKey: .alt),
                                       horizontalAccuracy: try c.decodeIfPresent(Double.self, forKey: .acc)))
        case "r":
            let zone = ZoneID(zoneName: try c.decode(String.self, forKey: .zone), ownerName: try c.decode(String.self, forKey: .owner))
            let action = Reference.Action(rawValue: try c.decode(String.self, forKey: .action)) ?? .none
            value = .reference(Reference(recordID: RecordID(recordName: try c.decode(String.self, forKey: .name), zoneID: zone), action: action))
        case "L": value = .list(try c.decode([StoredArgument].self, forKey: .items).map(\.value))
        case let tag: throw StoreError(.badDatabase, "A stored predicate argument has the unknown type '\(tag)'.")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch value {
        case .string(let s): try c.encode("s", forKey: .t); try c.encode(s, forKey: .s)
        case .int64(let i): try c.encode("i", forKey: .t); try c.encode(i, forKey: .i)
        case .double(let d): try c.encode("d", forKey: .t); try c.encode(d, forKey: .d)
        case .date(let d): try c.encode("t", forKey: .t); try c.encode(d.timeIntervalSince1970, forKey: .d)
        case .bytes(let d): try c.encode("b", forKey: .t); try c.encode(d, forKey: .data)
        case .location(let l):
            try c.encode("l", forKey: .t)
            try c.encode(l.latitude, forKey: .lat)
            try c.encode(l.longitude, forKey: .lon)
            try c.encodeIfPresent(l.altitude, forKey: .alt)
            try c.encodeIfPresent(l.horizontalAccuracy, forKey: .acc)
        case .reference(let r):
            try c.encode("r", forKey: .t)
            try c.encode(r.recordID.recordName, forKey: .name)
            try c.encode(r.recordID.zoneID.zoneName, forKey: .zone)
            try c.encode(r.recordID.zoneID.ownerName, forKey: .owner)
            try c.encode(r.action.rawValue, forKey: .action)
        case .asset(let a):
            throw StoreError(.invalidArguments, "An asset (\(a.fileURL.lastPathComponent)) cannot be a predicate argument.")
        case .list(let items): try c.encode("L", forKey: .t); try c.encode(items.map(StoredArgument.init), forKey: .items)
        }
    }
}
