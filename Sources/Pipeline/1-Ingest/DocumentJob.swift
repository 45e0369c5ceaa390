import DocumentOutcomes
import Foundation
import TransactionStore
import VerifyModel

/// The images a document may carry.
package enum ImageRole: String, Sendable, CaseIterable, Comparable, Codable, CodingKeyRepresentable {
    case front, back, selfie

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    var documentKey: DocumentKey {
        switch self {
        case .front: .frontImage
        case .back: .backImage
        case .selfie: .selfie
        }
    }
}

/// Where an image's bytes are.
enum ImageSource: Sendable, Codable {
    /// A file of a batch folder, resolved and found inside it when the folder was read.
    case file(String)
    /// A path a stream line named under `key`: read only inside the allowed directories, and every failure to
    /// read it gets the same message, so that the stream cannot probe the file system.
    case named(String, key: String)
    case inline([UInt8])

    var byteCount: Int {
        if case .inline(let bytes) = self { bytes.count } else { 0 }
    }
}

/// How a document's transaction is found.
enum TransactionIdentity: Sendable, Codable {
    /// A verification QR given as text (qr.txt, a stream line's `qr`).
    case qr(VerificationQR)
    /// A transaction created earlier (a stream line's `transactionId`).
    case known(String)
    /// To be read from the QR in one of these images; documents of the same `group` share the answer.
    case qrImage(group: String, candidates: [String])

    /// The transaction's id when the input names it.
    var transactionId: String? {
        switch self {
        case .qr(let qr): qr.transactionId
        case .known(let id): id
        case .qrImage: nil
        }
    }
}

/// One document as the input describes it: the ingest stage's value. Codable: the work queue stores it.
struct DocumentJob: Sendable, Codable {
    var sequence: Int
    /// A stream line's `id`, echoed in its result.
    var inputId: String?
    /// Where it came from: a folder, a file, or `stdin:N`.
    var source: String
    var type: DocumentType
    var identity: TransactionIdentity
    var images: [ImageRole: ImageSource] = [:]
    var mrz: String?
    /// What the scan stage's readers mended (never values), reported with the result; optional so that jobs
    /// queued by an earlier release still decode.
    var readWarnings: [String]?
    var captured: DocumentFields = DocumentFields()
    /// An explicit skip of an optional document.
    var skip = false
    /// Fields an operator entered on review (`review accept`): its images are carried as they are, not read.
    var reviewed: Bool?
    /// The transaction's own timestamps when the input gives them (transaction.json, a stream line).
    var createdAt: Date?
    var expiresAt: Date?
    /// The part of a batch folder whose end is the end of its transactions' input (CONTRACT §1: missing optional
    /// documents become SKIPPED): a transaction folder, or "." for the folder's loose images. nil for a stream.
    var inputGroup: String?

    init(
        sequence: Int, inputId: String? = nil, source: String, type: DocumentType, identity: TransactionIdentity,
        inputGroup: String? = nil
    ) {
        self.sequence = sequence
        self.inputId = inputId
        self.source = source
        self.type = type
        self.identity = identity
        self.inputGroup = inputGroup
    }

    func input(queueItem: Int64? = nil) -> DocumentInput {
        DocumentInput(sequence: sequence, inputId: inputId, source: source, type: type, group: inputGroup, queueItem: queueItem)
    }

    /// How far ahead of this machine's clock an input's `createdAt` may be (another machine's clock).
    static let clockSkew: TimeInterval = 300

    /// The transaction this job's QR opens when it is the first of its transaction: the input's own
    /// timestamps when it gives them, else now and the policy's lifetime. The input's are its sender's word, and
    /// bounded: a `createdAt` more than `clockSkew` ahead of now, or an `expiresAt` not after the creation or
    /// beyond the policy's `transactionLifetime` of it, refuses the document (such a transaction would never
    /// expire, never be purged by age, and stay at the top of every list).
    func newTransaction(_ qr: VerificationQR, configuration: PipelineConfiguration, now: Date) throws(DocumentFailure) -> NewTransaction {
        let created = createdAt ?? now
        guard created <= now.addingTimeInterval(Self.clockSkew) else {
            throw DocumentFailure(.initiateDocumentTransactionError, "createdAt is more than \(Int(Self.clockSkew)) s ahead of this machine's clock")
        }
        let latest = created.addingTimeInterval(configuration.transactionLifetime)
        let expires = expiresAt ?? latest
        guard expires > created, expires <= latest else {
            throw DocumentFailure(
                .initiateDocumentTransactionError,
                "expiresAt must fall after createdAt and within the policy's transactionLifetime of it")
        }
        return NewTransaction(
            id: qr.transactionId, verificationCode: qr.verificationCode, envId: qr.envId,
            policy: configuration.documents, createdAt: created, expiresAt: expires)
    }
}

extension DocumentJob {
    /// Opens the transaction `qr` names on `store`, with this job's times; opening one already open changes nothing
    /// (the store checks the verification code). The one place a document's transaction is opened: at intake for QR
    /// text, when queued, and at tracking for a QR read from an image.
    func openTransaction(_ qr: VerificationQR, on store: TransactionStore, configuration: PipelineConfiguration, now: Date) async throws {
        _ = try await store.openTransaction(try newTransaction(qr, configuration: configuration, now: now))
    }
}

extension DocumentJob: StageValue {
    var transactionId: String? { identity.transactionId }
    var failedInput: FailedInput? { FailedInput(self) }
    var byteCount: Int { images.values.reduce(0) { $0 + $1.byteCount } + (mrz?.utf8.count ?? 0) }
}

/// An input that failed before it became a job; it still gets its own result line.
struct IngestFailure: Error, Sendable {
    var input: DocumentInput
    var failure: DocumentFailure

    init(
        sequence: Int = 0, inputId: String?, source: String, type: DocumentType? = nil, group: String? = nil,
        failure: DocumentFailure
    ) {
        input = DocumentInput(sequence: sequence, inputId: inputId, source: source, type: type, group: group)
        self.failure = failure
    }

    var outcome: DocumentOutcome { DocumentOutcome(input: input, transactionId: nil, failure: failure) }
}
