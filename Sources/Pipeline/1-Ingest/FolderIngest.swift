import Foundation
import ImageDecoding
import VerifyModel

/// Turns a batch folder (SPEC §6) into document jobs. Two layouts:
/// - one subfolder per transaction: `qr.txt` or a `qr.*` image (else the QR on `back.*` or `front.*`),
///   `front.*`/`back.*`/`mrz.txt` (one GOVERNMENT_ID), `selfie.*`, `fields.json` (`email`, `phone`, other
///   document keys), optional `transaction.json` (`createdAt`, `expiresAt`);
/// - a flat folder of images each carrying its own QR; `NAME-front.*`, `NAME-back.*` and `NAME-selfie.*`
///   are one transaction's documents, any other image a government-id front on its own.
struct FolderIngest {
    let root: URL

    /// The input group of the images directly in the batch folder: their transactions end with the folder.
    static let looseImagesGroup = "."

    /// Every job of the batch, in a stable order. Only paths are read here, never image bytes.
    func jobs() throws(DocumentFailure) -> [Result<DocumentJob, IngestFailure>] {
        let entries = Self.listing(root)
        guard let entries else {
            throw DocumentFailure(.noDocumentToSubmitError, "cannot read the folder \(root.path)")
        }
        var results: [Result<DocumentJob, IngestFailure>] = []
        let folders = entries.filter { Self.isDirectory($0) }
        for folder in folders {
            results += transactionFolder(folder)
        }
        results += flatImages(entries.filter { !Self.isDirectory($0) && ImageFile.hasImageExtension($0) })
        return results.enumerated().map { index, result in
            result.map { job in
                var job = job
                job.sequence = index
                return job
            }.mapError { failure in
                var failure = failure
                failure.input.sequence = index
                return failure
            }
        }
    }

    private func transactionFolder(_ folder: URL) -> [Result<DocumentJob, IngestFailure>] {
        let files = Self.listing(folder)?.filter { !Self.isDirectory($0) } ?? []
        let name = relative(folder)
        func file(_ stem: String, images: Bool) -> URL? {
            files.first { $0.deletingPathExtension().lastPathComponent.lowercased() == stem
                && (!images || ImageFile.hasImageExtension($0)) }
        }
        func failure(_ type: DocumentType?, _ source: String, _ error: DocumentFailure) -> Result<DocumentJob, IngestFailure> {
            .failure(IngestFailure(inputId: type.map { "\(name)/\($0.rawValue)" } ?? source, source: source, type: type, failure: error))
        }

        // How the transaction is identified.
        var identity: TransactionIdentity?
        var identityFailure: DocumentFailure?
        if let qrText = file("qr", images: false).flatMap({ $0.pathExtension.lowercased() == "txt" ? $0 : nil }) {
            do {
                identity = .qr(try VerificationQR(parsing: String(contentsOf: qrText, encoding: .utf8)))
            } catch let error as QRError {
                identityFailure = DocumentFailure(error, context: "\(relative(qrText))")
            } catch {
                identityFailure = DocumentFailure(.initiateDocumentTransactionError, "cannot read \(relative(qrText))")
            }
        } else {
            let candidates = [file("qr", images: true), file("back", images: true), file("front", images: true)].compactMap { $0 }
            if candidates.isEmpty {
                identityFailure = DocumentFailure(.initiateDocumentTransactionError,
                                                  "\(name) has no qr.txt and no image that could carry the verification QR")
            } else {
                identity = .qrImage(group: name, candidates: candidates.map(\.path))
            }
        }

        var createdAt: Date?, expiresAt: Date?
        if let metadata = file("transaction", images: false) {
            do {
                (createdAt, expiresAt) = try Self.transactionTimes(metadata)
            } catch {
                identityFailure = identityFailure ?? error
            }
        }

        // The folder's documents are gathered first; whether they become jobs or failures depends on the identity.
        var results: [Result<DocumentJob, IngestFailure>] = []
        func draft(_ type: DocumentType) -> DocumentJob {
            var job = DocumentJob(sequence: 0, inputId: "\(name)/\(type.rawValue)", source: name, type: type,
                                  identity: .qrImage(group: name, candidates: []), inputGroup: name)
            (job.createdAt, job.expiresAt) = (createdAt, expiresAt)
            return job
        }

        var government: DocumentJob?
        let front = file("front", images: true), back = file("back", images: true), mrz = file("mrz", images: false)
        if front != nil || back != nil || mrz != nil {
            var document = draft(.governmentId)
            if let front { document.images[.front] = .file(front.path) }
            if let back { document.images[.back] = .file(back.path) }
            if let mrz {
                // Unreadable and not UTF-8 are the same to the user: the file cannot be used.
                guard let text = try? String(contentsOf: mrz, encoding: .utf8) else {
                    return [failure(.governmentId, relative(mrz), DocumentFailure(.documentCaptureError, "cannot read \(relative(mrz))"))]
                }
                document.mrz = text
            }
            government = document
        }
        var others: [DocumentJob] = []
        if let selfie = file("selfie", images: true) {
            var document = draft(.selfie)
            document.images[.selfie] = .file(selfie.path)
            others.append(document)
        }
        if let fieldsFile = file("fields", images: false) {
            switch Self.capturedFields(fieldsFile) {
            case .failure(let error):
                results.append(failure(nil, relative(fieldsFile), error))
            case .success(let captured):
                for (key, type) in [(DocumentKey.email, DocumentType.email), (.phone, .phone)] {
                    guard let value = captured[key] else { continue }
                    var document = draft(type)
                    document.captured[key] = value
                    others.append(document)
                }
                let rest = captured.filter { $0.key != .email && $0.key != .phone }
                if !rest.isEmpty {
                    var document = government ?? draft(.governmentId)
                    for (key, value) in rest { document.captured[key] = value }
                    government = document
                }
            }
        }
        let documents = [government].compactMap { $0 } + others
        if documents.isEmpty, results.isEmpty {
            return [failure(nil, name, DocumentFailure(.noDocumentToSubmitError, "\(name) holds no document (front, back, mrz.txt, selfie, fields.json)"))]
        }
        for var document in documents {
            switch (identity, identityFailure) {
            case (let identity?, nil):
                document.identity = identity
                results.append(.success(document))
            case (_, let failed):
                results.append(failure(document.type, document.source, failed ?? DocumentFailure(.initiateDocumentTransactionError, "\(name): no transaction")))
            }
        }
        return results
    }

    private func flatImages(_ images: [URL]) -> [Result<DocumentJob, IngestFailure>] {
        var groups: [String: [ImageRole: URL]] = [:]
        var order: [String] = []
        for image in images {
            let stem = image.deletingPathExtension().lastPathComponent
            var group = stem, role = ImageRole.front
            for candidate in ImageRole.allCases {
                for separator in ["-", "_"] where stem.lowercased().hasSuffix(separator + candidate.rawValue) {
                    group = String(stem.dropLast(candidate.rawValue.count + 1))
                    role = candidate
                }
            }
            if groups[group] == nil { order.append(group) }
            groups[group, default: [:]][role] = image
        }
        return order.flatMap { group -> [Result<DocumentJob, IngestFailure>] in
            let roles = groups[group, default: [:]]
            let candidates = [roles[.back], roles[.front], roles[.selfie]].compactMap { $0?.path }
            let identity = TransactionIdentity.qrImage(group: "flat:\(group)", candidates: candidates)
            var results: [Result<DocumentJob, IngestFailure>] = []
            if let image = roles[.front] ?? roles[.back] {
                var job = DocumentJob(sequence: 0, inputId: "\(group)/GOVERNMENT_ID", source: relative(image),
                                      type: .governmentId, identity: identity, inputGroup: Self.looseImagesGroup)
                if let front = roles[.front] { job.images[.front] = .file(front.path) }
                if let back = roles[.back] { job.images[.back] = .file(back.path) }
                results.append(.success(job))
            }
            if let selfie = roles[.selfie] {
                var job = DocumentJob(sequence: 0, inputId: "\(group)/SELFIE", source: relative(selfie), type: .selfie,
                                      identity: identity, inputGroup: Self.looseImagesGroup)
                job.images[.selfie] = .file(selfie.path)
                results.append(.success(job))
            }
            return results
        }
    }

    private func relative(_ url: URL) -> String {
        let base = root.standardizedFileURL.path, full = url.standardizedFileURL.path
        return full.hasPrefix(base + "/") ? String(full.dropFirst(base.count + 1)) : url.lastPathComponent
    }

    static func listing(_ folder: URL) -> [URL]? {
        // nil says the folder cannot be listed; callers report that in their own words.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return nil }
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `fields.json`: an object of document keys to strings.
    static func capturedFields(_ url: URL) -> Result<DocumentFields, DocumentFailure> {
        // Unreadable, not JSON and not an object all get the same answer: the file cannot be used.
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return .failure(DocumentFailure(.invalidKeyMap, "\(url.lastPathComponent) is not a JSON object"))
        }
        var fields = DocumentFields()
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let key = DocumentKey(rawValue: name) else {
                return .failure(DocumentFailure(.invalidKeyMap, "\(url.lastPathComponent): '\(name)' is not a document key"))
            }
            guard let text = value as? String else {
                return .failure(DocumentFailure(.invalidKeyMap, "\(url.lastPathComponent): '\(name)' must be a string"))
            }
            fields[key] = text
        }
        return .success(fields)
    }

    /// `transaction.json`: the transaction's own `createdAt` and `expiresAt`, as the capture service gave them.
    static func transactionTimes(_ url: URL) throws(DocumentFailure) -> (Date?, Date?) {
        // Unreadable, not JSON and not an object all get the same answer: the file cannot be used.
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw DocumentFailure(.initiateDocumentTransactionError, "\(url.lastPathComponent) is not a JSON object")
        }
        func date(_ key: String) throws(DocumentFailure) -> Date? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, let date = Timestamp.date(text) else {
                throw DocumentFailure(.initiateDocumentTransactionError, "\(url.lastPathComponent): '\(key)' is not an ISO-8601 timestamp")
            }
            return date
        }
        return (try date("createdAt"), try date("expiresAt"))
    }
}
