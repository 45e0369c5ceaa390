import DocumentOutcomes
import Foundation
import ImageDecoding
import VerifyModel

/// Turns a batch folder (CONTRACT §6) into document jobs. Two layouts:
/// - one subfolder per transaction: `qr.txt` or a `qr.*` image (else the QR on `back.*` or `front.*`),
///   `front.*`/`back.*`/`mrz.txt` (one GOVERNMENT_ID), `selfie.*`, `fields.json` (`email`, `phone`, other
///   document keys), optional `transaction.json` (`createdAt`, `expiresAt`);
/// - a flat folder of images each carrying its own QR; `NAME-front.*`, `NAME-back.*` and `NAME-selfie.*`
///   are one transaction's documents, any other image a government-id front on its own.
struct FolderIngest: Sendable {
    let root: URL
    /// The batch folder, resolved: every file used must resolve inside it, symlinks included.
    let confinement: FileConfinement

    init(root: URL) {
        self.root = root
        confinement = FileConfinement(directories: [root.path])
    }

    /// The input group of the images directly in the batch folder: their transactions end with the folder.
    static let looseImagesGroup = "."

    /// Every job of the batch, in a stable order. Only paths are read here, never image bytes.
    func jobs() throws(DocumentFailure) -> [Result<DocumentJob, IngestFailure>] {
        Self.numbered(try parts().flatMap { $0() }, from: 0)
    }

    /// The batch's parts in a stable order, each read when it is called: its transaction folders one by one, then its
    /// loose images, then the names that are not UTF-8. Only paths are read, never image bytes.
    func parts() throws(DocumentFailure) -> [@Sendable () -> [Result<DocumentJob, IngestFailure>]] {
        guard let listing = FolderListing(path: root.path) else {
            throw DocumentFailure(.noDocumentToSubmitError, "cannot read the folder \(root.path)")
        }
        let entries = Self.visible(listing, in: root)
        let folders = entries.filter { Self.isDirectory($0) }
        let images = entries.filter { !Self.isDirectory($0) && ImageFile.hasImageExtension($0) }
        return folders.map { folder in { transactionFolder(folder) } } + [{ flatImages(images) }, { undecodable(listing) }]
    }

    /// Jobs numbered in order from `first`: a job's sequence is its place in the batch.
    static func numbered(_ results: [Result<DocumentJob, IngestFailure>], from first: Int) -> [Result<DocumentJob, IngestFailure>] {
        results.enumerated().map { offset, result in
            result.map { job in
                var job = job
                job.sequence = first + offset
                return job
            }.mapError { failure in
                var failure = failure
                failure.input.sequence = first + offset
                return failure
            }
        }
    }

    /// A transaction folder or an image whose name is not UTF-8 cannot be opened (no path names it): each is one
    /// failed document, reported and counted, never left out unseen.
    private func undecodable(_ listing: FolderListing) -> [Result<DocumentJob, IngestFailure>] {
        listing.undecodable.filter { !$0.escapedName.hasPrefix(".") }.compactMap { entry in
            let what: String
            switch entry.kind {
            case .folder: what = "the folder's name"
            case .file where entry.hasImageExtension: what = "the image's name"
            default: return nil
            }
            let failure = DocumentFailure(
                .documentCaptureError, "\(entry.escapedName): \(what) is not UTF-8, so it cannot be read: rename it")
            return .failure(IngestFailure(inputId: entry.escapedName, source: entry.escapedName, failure: failure))
        }
    }

    /// The file's resolved path, or the failure of whatever uses it: it resolves outside the batch folder.
    func confined(_ url: URL) -> Result<String, DocumentFailure> {
        guard let resolved = confinement.resolve(url.path) else {
            return .failure(DocumentFailure(.documentCaptureError, "\(relative(url)) resolves outside the batch folder"))
        }
        return .success(resolved)
    }

    /// A text file of the batch: inside the folder, a regular file, at most `TextInput.maxBytes`, UTF-8.
    func text(_ url: URL, code: DocumentSubmissionErrorCode) -> Result<String, DocumentFailure> {
        confined(url).flatMap { path in
            do throws(BoundedFile.ReadError) {
                return .success(try BoundedFile.readText(path, limit: TextInput.maxBytes, resolved: true))
            } catch {
                let code: DocumentSubmissionErrorCode = if case .tooLarge = error.reason { .documentCaptureError } else { code }
                return .failure(DocumentFailure(code, "\(relative(url)): \(error.message)"))
            }
        }
    }

    private func transactionFolder(_ folder: URL) -> [Result<DocumentJob, IngestFailure>] {
        let name = relative(folder)
        guard confinement.resolve(folder.path) != nil else {
            return [
                .failure(
                    IngestFailure(
                        inputId: name, source: name, type: nil,
                        failure: DocumentFailure(.documentCaptureError, "\(name) resolves outside the batch folder")))
            ]
        }
        let files = FolderListing(path: folder.path).map { Self.visible($0, in: folder) }?.filter { !Self.isDirectory($0) } ?? []
        func file(_ stem: String, images: Bool) -> URL? {
            files.first {
                $0.deletingPathExtension().lastPathComponent.lowercased() == stem
                    && (!images || ImageFile.hasImageExtension($0))
            }
        }
        func failure(_ type: DocumentType?, _ source: String, _ error: DocumentFailure) -> Result<DocumentJob, IngestFailure> {
            .failure(IngestFailure(inputId: type.map { "\(name)/\($0.rawValue)" } ?? source, source: source, type: type, failure: error))
        }
        let identity = self.identity(of: folder, name: name, file: file)
        var createdAt: Date?, expiresAt: Date?
        var identityFailure: DocumentFailure? = if case .failure(let error) = identity { error } else { nil }
        if let metadata = file("transaction", images: false) {
            do {
                let text = try text(metadata, code: .initiateDocumentTransactionError).get()
                (createdAt, expiresAt) = try Self.transactionTimes(text, name: metadata.lastPathComponent)
            } catch {
                identityFailure = identityFailure ?? error
            }
        }

        // The folder's documents are gathered first; whether they become jobs or failures depends on the identity.
        var results: [Result<DocumentJob, IngestFailure>] = []
        var documents: [(type: DocumentType, document: Result<DocumentJob, DocumentFailure>)] = []
        func draft(_ type: DocumentType) -> DocumentJob {
            var job = DocumentJob(
                sequence: 0, inputId: "\(name)/\(type.rawValue)", source: name, type: type,
                identity: .qrImage(group: name, candidates: []), inputGroup: name)
            (job.createdAt, job.expiresAt) = (createdAt, expiresAt)
            return job
        }
        var government = governmentDocument(
            front: file("front", images: true), back: file("back", images: true),
            mrz: file("mrz", images: false), draft: draft(.governmentId))
        if let selfie = file("selfie", images: true) {
            documents.append(
                (
                    .selfie,
                    confined(selfie).map { path in
                        var document = draft(.selfie)
                        document.images[.selfie] = .file(path)
                        return document
                    }
                ))
        }
        if let fieldsFile = file("fields", images: false) {
            switch text(fieldsFile, code: .invalidKeyMap).flatMap({ Self.capturedFields($0, name: fieldsFile.lastPathComponent) }) {
            case .failure(let error):
                results.append(failure(nil, relative(fieldsFile), error))
            case .success(let captured):
                documents += Self.capturedDocuments(captured, government: &government, draft: draft)
            }
        }
        if let government { documents.insert((.governmentId, government), at: 0) }
        if documents.isEmpty, results.isEmpty {
            return [
                failure(nil, name, DocumentFailure(.noDocumentToSubmitError, "\(name) holds no document (front, back, mrz.txt, selfie, fields.json)"))
            ]
        }
        for (type, document) in documents {
            switch (document, identity, identityFailure) {
            case (.success(var document), .success(let identity), nil):
                document.identity = identity
                results.append(.success(document))
            case (.success(let document), _, let failed):
                results.append(
                    failure(document.type, document.source, failed ?? DocumentFailure(.initiateDocumentTransactionError, "\(name): no transaction")))
            case (.failure(let error), _, _):
                results.append(failure(type, name, error))
            }
        }
        return results
    }

    /// The captured fields of `fields.json`: an email and a phone are documents of their own; the other keys join the
    /// folder's GOVERNMENT_ID (made for them when the folder has none; a failed one stays failed).
    private static func capturedDocuments(
        _ captured: DocumentFields, government: inout Result<DocumentJob, DocumentFailure>?, draft: (DocumentType) -> DocumentJob
    ) -> [(type: DocumentType, document: Result<DocumentJob, DocumentFailure>)] {
        var documents: [(type: DocumentType, document: Result<DocumentJob, DocumentFailure>)] = []
        for (key, type) in [(DocumentKey.email, DocumentType.email), (.phone, .phone)] {
            guard let value = captured[key] else { continue }
            var document = draft(type)
            document.captured[key] = value
            documents.append((type, .success(document)))
        }
        let rest = captured.filter { $0.key != .email && $0.key != .phone }
        if !rest.isEmpty {
            var document = (try? government?.get()) ?? draft(.governmentId)
            for (key, value) in rest { document.captured[key] = value }
            if case .failure = government {} else { government = .success(document) }
        }
        return documents
    }

    /// How a transaction folder's transaction is found: `qr.txt`, else the QR on `qr.*`, `back.*` or `front.*`.
    private func identity(of folder: URL, name: String, file: (String, Bool) -> URL?) -> Result<TransactionIdentity, DocumentFailure> {
        if let qrText = file("qr", false).flatMap({ $0.pathExtension.lowercased() == "txt" ? $0 : nil }) {
            return text(qrText, code: .initiateDocumentTransactionError).flatMap { text in
                do throws(QRError) {
                    return .success(.qr(try VerificationQR(parsing: text)))
                } catch {
                    return .failure(DocumentFailure(error, context: relative(qrText)))
                }
            }
        }
        let found = [file("qr", true), file("back", true), file("front", true)].compactMap { $0 }
        // An image outside the folder is not looked at; the document it belongs to fails on its own.
        let candidates = found.compactMap { try? confined($0).get() }
        guard !candidates.isEmpty else {
            return .failure(
                DocumentFailure(
                    found.isEmpty ? .initiateDocumentTransactionError : .documentCaptureError,
                    found.isEmpty
                        ? "\(name) has no qr.txt and no image that could carry the verification QR"
                        : "\(name): every image that could carry the verification QR resolves outside the batch folder"))
        }
        return .success(.qrImage(group: name, candidates: candidates))
    }

    /// The GOVERNMENT_ID document of `front.*`, `back.*` and `mrz.txt`; nil when the folder has none of them.
    private func governmentDocument(front: URL?, back: URL?, mrz: URL?, draft: DocumentJob) -> Result<DocumentJob, DocumentFailure>? {
        guard front != nil || back != nil || mrz != nil else { return nil }
        var document = draft
        do {
            if let front { document.images[.front] = .file(try confined(front).get()) }
            if let back { document.images[.back] = .file(try confined(back).get()) }
            if let mrz { document.mrz = try text(mrz, code: .documentCaptureError).get() }
        } catch {
            return .failure(error)
        }
        return .success(document)
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
            // An image outside the folder is not looked at; the document it belongs to fails on its own.
            let candidates = [roles[.back], roles[.front], roles[.selfie]].compactMap { $0.flatMap { try? confined($0).get() } }
            let identity = TransactionIdentity.qrImage(group: "flat:\(group)", candidates: candidates)
            var results: [Result<DocumentJob, IngestFailure>] = []
            func document(_ type: DocumentType, source: URL, images: [ImageRole: URL]) {
                var job = DocumentJob(
                    sequence: 0, inputId: "\(group)/\(type.rawValue)", source: relative(source),
                    type: type, identity: identity, inputGroup: Self.looseImagesGroup)
                do {
                    for (role, url) in images { job.images[role] = .file(try confined(url).get()) }
                    results.append(.success(job))
                } catch {
                    results.append(.failure(IngestFailure(inputId: job.inputId ?? group, source: job.source, type: type, failure: error)))
                }
            }
            if let image = roles[.front] ?? roles[.back] {
                document(.governmentId, source: image, images: roles.filter { $0.key != .selfie })
            }
            if let selfie = roles[.selfie] {
                document(.selfie, source: selfie, images: [.selfie: selfie])
            }
            return results
        }
    }

    private func relative(_ url: URL) -> String {
        let base = root.standardizedFileURL.path, full = url.standardizedFileURL.path
        return full.hasPrefix(base + "/") ? String(full.dropFirst(base.count + 1)) : url.lastPathComponent
    }

    /// The entries of `folder` whose names are UTF-8, hidden ones left out, sorted.
    static func visible(_ listing: FolderListing, in folder: URL) -> [URL] {
        listing.names.filter { !$0.hasPrefix(".") }.map { folder.appendingPathComponent($0) }
    }

    static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `fields.json`: an object of document keys to strings.
    static func capturedFields(_ text: String, name: String) -> Result<DocumentFields, DocumentFailure> {
        // Not JSON and not an object get the same answer: the file cannot be used.
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return .failure(DocumentFailure(.invalidKeyMap, "\(name) is not a JSON object"))
        }
        var fields = DocumentFields()
        for (field, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let key = DocumentKey(rawValue: field) else {
                return .failure(DocumentFailure(.invalidKeyMap, "\(name): \(TextInput.quoted(field)) is not a document key"))
            }
            guard let text = value as? String else {
                return .failure(DocumentFailure(.invalidKeyMap, "\(name): '\(field)' must be a string"))
            }
            fields[key] = text
        }
        return .success(fields)
    }

    /// `transaction.json`: the transaction's own `createdAt` and `expiresAt`, as the capture service gave them.
    static func transactionTimes(_ text: String, name: String) throws(DocumentFailure) -> (Date?, Date?) {
        // Not JSON and not an object get the same answer: the file cannot be used.
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw DocumentFailure(.initiateDocumentTransactionError, "\(name) is not a JSON object")
        }
        func date(_ key: String) throws(DocumentFailure) -> Date? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, let date = Timestamp.date(text) else {
                throw DocumentFailure(.initiateDocumentTransactionError, "\(name): '\(key)' is not an ISO-8601 timestamp")
            }
            return date
        }
        return (try date("createdAt"), try date("expiresAt"))
    }
}
