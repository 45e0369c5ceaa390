import DocumentOutcomes
import Foundation
import TransactionStore
import VerifyModel

/// What a stage hands to the next: the transaction it belongs to once known, and how many bytes it holds
/// (the queues between stages are bounded in bytes).
protocol StageValue: Sendable {
    var transactionId: String? { get }
    var byteCount: Int { get }
    /// What the document leaves for its review when it fails at the next stage.
    var failedInput: FailedInput? { get }
}

/// What a failed document leaves for its review: the transaction it names (with the verification code it carries
/// for it), and what it was made from.
struct FailedInput: Sendable {
    var job: DocumentJob
    /// nil when the document named no transaction yet (its QR was still to be read).
    var transactionId: String?
    /// The code the document carries for its transaction; nil when the input names it by id.
    var verificationCode: String?
    /// The images' bytes, once read (before that, the recorder reads them as the decode stage does).
    var images: [ImageRole: [UInt8]]?
    /// The recorded document, when its submission failed.
    var documentId: String?

    init(_ job: DocumentJob, transaction: TransactionReference? = nil, images: [ImageRole: [UInt8]]? = nil, documentId: String? = nil) {
        self.job = job
        self.images = images
        self.documentId = documentId
        switch (transaction, job.identity) {
        case (.read(let qr), _), (_, .qr(let qr)): (transactionId, verificationCode) = (qr.transactionId, qr.verificationCode)
        case (.named(let id), _), (nil, .known(let id)): transactionId = id
        case (nil, .qrImage): transactionId = nil
        }
    }

    /// The images a document's fields carry (base64), as bytes.
    static func images(in fields: DocumentFields) -> [ImageRole: [UInt8]] {
        var images: [ImageRole: [UInt8]] = [:]
        for role in ImageRole.allCases {
            if let text = fields[role.documentKey], let data = Data(base64Encoded: text) { images[role] = [UInt8](data) }
        }
        return images
    }
}

/// A document between two stages: where it came from, and the last stage's value.
struct InFlight<Value: StageValue>: Sendable {
    var input: DocumentInput
    var value: Value

    /// The document after the next stage.
    func with<Next: StageValue>(_ next: Next) -> InFlight<Next> {
        InFlight<Next>(input: input, value: next)
    }

    /// The document's end when it fails with the value it has: its outcome, and what it leaves for its review.
    func failed(_ failure: DocumentFailure) -> FinishedDocument {
        FinishedDocument(DocumentOutcome(input: input, transactionId: value.transactionId, failure: failure), failedInput: value.failedInput)
    }
}
