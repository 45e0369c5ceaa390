import Foundation

/// Something that happens to one document of a transaction.
public enum DocumentEvent: String, Sendable, CaseIterable, Codable {
    /// Its data has been captured and parsed: `REQUIRED|OPTIONAL -> COLLECTED`.
    case collect
    /// Its submission was accepted: `COLLECTED -> PROCESSED`.
    case process
    /// The input for the transaction ended without it, or it was skipped explicitly: `OPTIONAL -> SKIPPED`.
    case skip
    /// Its submission failed permanently: `COLLECTED -> ` its policy status.
    case reject
}

/// One applied status change, for the transaction's history.
public struct StatusTransition: Sendable, Equatable, Codable {
    public enum Subject: Sendable, Equatable, Codable {
        case document(DocumentType)
        case transaction
    }

    public var subject: Subject
    public var from: String
    public var to: String

    public init(subject: Subject, from: String, to: String) {
        self.subject = subject
        self.from = from
        self.to = to
    }

    static func document(_ type: DocumentType, _ from: DocumentStatus, _ to: DocumentStatus) -> Self {
        Self(subject: .document(type), from: from.rawValue, to: to.rawValue)
    }

    static func transaction(_ from: DocumentSubmissionStatus, _ to: DocumentSubmissionStatus) -> Self {
        Self(subject: .transaction, from: from.rawValue, to: to.rawValue)
    }
}

/// Why a move was refused. Nothing is applied when one is thrown.
public enum TransitionError: CodedError, Equatable, CustomStringConvertible {
    case illegalMove(DocumentType, DocumentStatus, DocumentEvent)
    case documentTypeNotInPolicy(DocumentType)
    case expired(expiresAt: Date)

    public var failureCode: FailureCode {
        switch self {
        case .illegalMove: .document(.submissionError)
        case .documentTypeNotInPolicy: .document(.missingDocumentType)
        case .expired: .document(.documentSubmissionTimeoutError)
        }
    }

    public var message: String { description }

    public var description: String {
        switch self {
        case let .illegalMove(type, status, event):
            "\(type.rawValue) is \(status.rawValue): '\(event.rawValue)' is not allowed from there"
        case let .documentTypeNotInPolicy(type):
            "the pipeline's policy does not collect \(type.rawValue) documents"
        case let .expired(expiresAt):
            "the transaction expired at \(Timestamp.string(expiresAt)) and accepts no more documents"
        }
    }

}

/// A transaction's statuses. `applying(_:to:at:)` is the only place where they change (CONTRACT §1).
public struct TransactionState: Sendable, Equatable, Codable {
    public private(set) var policy: [DocumentType: DocumentRequirement]
    public private(set) var documents: [DocumentType: DocumentStatus]
    public private(set) var submissionStatus: DocumentSubmissionStatus
    public let expiresAt: Date

    /// A new transaction: each enabled type at its policy status, the transaction `NOT_STARTED`.
    public init(policy: [DocumentType: DocumentRequirement], expiresAt: Date) {
        self.policy = policy.filter { $0.value != .disabled }
        documents = self.policy.compactMapValues(\.initialStatus)
        submissionStatus = .notStarted
        self.expiresAt = expiresAt
    }

    /// Restores a state read back from a store. A state whose documents are not the policy's types still moves
    /// without trapping: a type without a status is never done, so its transaction never completes.
    public init(
        policy: [DocumentType: DocumentRequirement], documents: [DocumentType: DocumentStatus],
        submissionStatus: DocumentSubmissionStatus, expiresAt: Date
    ) {
        self.policy = policy.filter { $0.value != .disabled }
        self.documents = documents
        self.submissionStatus = submissionStatus
        self.expiresAt = expiresAt
    }

    private enum CodingKeys: String, CodingKey {
        case policy, documents, submissionStatus, expiresAt
    }

    /// A state from JSON, held to what a state made here is: each enabled type of the policy has a status, and no
    /// other type has one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            policy: try container.decode([DocumentType: DocumentRequirement].self, forKey: .policy),
            documents: try container.decode([DocumentType: DocumentStatus].self, forKey: .documents),
            submissionStatus: try container.decode(DocumentSubmissionStatus.self, forKey: .submissionStatus),
            expiresAt: try container.decode(Date.self, forKey: .expiresAt))
        guard Set(documents.keys) == Set(policy.keys) else {
            throw DecodingError.dataCorruptedError(
                forKey: .documents, in: container, debugDescription: "the documents' types are not the types the policy enables")
        }
    }

    /// The state after `event` happens to the `type` document at time `now`, with the transitions that took
    /// it there (the document's, then the transaction's, in order). Throws, changing nothing, for an illegal move.
    public func applying(_ event: DocumentEvent, to type: DocumentType, at now: Date) throws(TransitionError)
        -> (state: TransactionState, transitions: [StatusTransition])
    {
        guard let current = documents[type], let requirement = policy[type],
            let policyStatus = requirement.initialStatus
        else {
            throw .documentTypeNotInPolicy(type)
        }
        // Expiry stops new documents; what was already collected may still finish.
        if event == .collect, now > expiresAt { throw .expired(expiresAt: expiresAt) }

        let next: DocumentStatus? =
            switch (event, current) {
            case (.collect, .required), (.collect, .optional): .collected
            case (.process, .collected): .processed
            case (.skip, .optional): .skipped
            case (.reject, .collected): policyStatus
            default: nil
            }
        guard let next else { throw .illegalMove(type, current, event) }

        var state = self
        state.documents[type] = next
        var transitions = [StatusTransition.document(type, current, next)]
        // The transaction only moves forward: a rejected document is collected again, not a step back.
        for target in state.transactionTargets() {
            transitions.append(.transaction(state.submissionStatus, target))
            state.submissionStatus = target
        }
        return (state, transitions)
    }

    /// The transaction moves that the documents' statuses now call for, in order.
    private func transactionTargets() -> [DocumentSubmissionStatus] {
        let statuses = documents
        let anyCollected = statuses.values.contains { $0 == .collected || $0 == .processed }
        let requiredTypes = policy.filter { $0.value == .required }.keys
        let requiredCollected = requiredTypes.allSatisfy { statuses[$0] == .collected || statuses[$0] == .processed }
        let allDone = policy.allSatisfy { type, requirement in
            switch (requirement, statuses[type]) {
            case (.required, .processed), (.optional, .processed), (.optional, .skipped): true
            default: false
            }
        }
        var targets: [DocumentSubmissionStatus] = []
        var status = submissionStatus
        while true {
            let next: DocumentSubmissionStatus? =
                switch status {
                case .notStarted where anyCollected: .started
                case .started where requiredCollected: .process
                case .process where allDone: .completed
                default: nil
                }
            guard let next else { return targets }
            targets.append(next)
            status = next
        }
    }
}
