import BarcodeScanning
import Foundation
import ImageDecoding
import Protect
import TransactionStore
import VerifyModel

/// The images a document may carry.
public enum ImageRole: String, Sendable, CaseIterable, Comparable, Codable, CodingKeyRepresentable {
    case front, back, selfie

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

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
    case file(String)
    case inline([UInt8])
}

/// How a document's transaction is found.
enum TransactionIdentity: Sendable, Codable {
    /// A verification QR given as text (qr.txt, a stream line's `qr`).
    case qr(VerificationQR)
    /// A transaction created earlier (a stream line's `transactionId`).
    case known(String)
    /// To be read from the QR in one of these images; documents of the same `group` share the answer.
    case qrImage(group: String, candidates: [String])
}

/// One document as the input describes it, before any work. Codable: the work queue stores it.
struct DocumentJob: Sendable, Codable {
    var sequence: Int
    /// A stream line's `id`, echoed in its result.
    var inputId: String?
    /// Where it came from: a folder, a file, or `stdin:N`.
    var source: String
    /// nil only for an input that failed before its type could be known (a malformed line).
    var type: DocumentType?
    var identity: TransactionIdentity
    var images: [ImageRole: ImageSource] = [:]
    var mrz: String?
    var captured: DocumentFields = DocumentFields()
    /// An explicit skip of an optional document.
    var skip = false
    /// The transaction's own timestamps when the input gives them (transaction.json, a stream line).
    var createdAt: Date?
    var expiresAt: Date?
    /// The work-queue item it came from, when a worker claimed it.
    var queueItem: Int64?
    var queueBatch: Int64?
    /// The part of a batch folder whose end is the end of its transactions' input (SPEC §1: missing optional
    /// documents become SKIPPED): a transaction folder, or "." for the folder's loose images. nil for a stream.
    var inputGroup: String?
}

extension DocumentJob {
    /// The transaction this job's QR opens when it is the first of its transaction: the input's own
    /// timestamps when it gives them, else now and the policy's lifetime.
    func newTransaction(_ qr: VerificationQR, configuration: PipelineConfiguration, now: Date) -> NewTransaction {
        let created = createdAt ?? now
        return NewTransaction(id: qr.transactionId, verificationCode: qr.verificationCode, envId: qr.envId,
                              policy: configuration.documents, createdAt: created,
                              expiresAt: expiresAt ?? created.addingTimeInterval(configuration.transactionLifetime))
    }
}

/// A per-document failure as reported: a spec code (SPEC §2 or §3) and a message.
public struct DocumentFailure: Error, Sendable, Equatable {
    public var code: String
    public var message: String

    init(_ code: DocumentSubmissionErrorCode, _ message: String) {
        self.code = code.rawValue
        self.message = message
    }

    init(_ error: QRError, context: String) {
        code = error.rawValue
        message = "\(context): \(error.description)"
    }

    init(_ error: DocumentSubmissionError) {
        code = error.code.rawValue
        message = error.message
    }
}

/// What became of one document: its submission response, or its failure.
public struct DocumentOutcome: Sendable {
    public var sequence: Int
    public var inputId: String?
    public var source: String
    public var documentId: String?
    public var transactionId: String?
    public var documentType: DocumentType?
    public var response: DocumentSubmissionResponse?
    public var failure: DocumentFailure?
    /// Accepted in an earlier run: nothing was sent again.
    public var alreadySubmitted = false
    /// An explicit skip: no document, only a status change.
    public var skipped = false
}

/// One document moving through the stages. Once `failure` is set, later stages pass it along untouched.
struct WorkItem: Sendable {
    var job: DocumentJob
    var bytes: [ImageRole: [UInt8]] = [:]
    var firstPass: [ImageRole: GrayImage] = [:]
    /// The capturing camera and image sizes, for the Protect device attributes.
    var capture = CaptureInfo()
    var barcodes: [ImageRole: [Barcode]] = [:]
    var qr: VerificationQR?
    var transactionId: String?
    /// Ingest opened the transaction already (its QR was given as text).
    var transactionOpened = false
    var fields = DocumentFields()
    var documentId: String?
    var contentHash: String?
    var failure: DocumentFailure?
    var outcome: DocumentOutcome?
    /// Set by the track stage when the document still has to be submitted.
    var needsSubmission = false

    init(job: DocumentJob) {
        self.job = job
    }

    init(job: DocumentJob, failure: DocumentFailure) {
        self.job = job
        self.failure = failure
    }

    var isDone: Bool { failure != nil || outcome != nil }

    func finalOutcome() -> DocumentOutcome {
        if var outcome {
            outcome.failure = failure ?? outcome.failure
            return outcome
        }
        return DocumentOutcome(sequence: job.sequence, inputId: job.inputId, source: job.source, documentId: documentId,
                               transactionId: transactionId, documentType: job.type, failure: failure)
    }
}
