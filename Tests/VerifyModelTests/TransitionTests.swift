import Foundation
import Testing

@testable import VerifyModel

/// One document's move, with what CONTRACT §1 says should happen: the new status, or nil when it is illegal.
struct MoveCase: CustomTestStringConvertible, Sendable {
    var requirement: DocumentRequirement
    var status: DocumentStatus
    var event: DocumentEvent
    var expected: DocumentStatus?

    var testDescription: String {
        "\(requirement.rawValue) document at \(status.rawValue), \(event.rawValue) -> \(expected?.rawValue ?? "refused")"
    }

    /// The spec's table, written out by hand: everything not listed is illegal.
    static let legal: [String: DocumentStatus] = [
        "REQUIRED/REQUIRED/collect": .collected,
        "OPTIONAL/OPTIONAL/collect": .collected,
        "REQUIRED/COLLECTED/process": .processed,
        "OPTIONAL/COLLECTED/process": .processed,
        "OPTIONAL/OPTIONAL/skip": .skipped,
        "REQUIRED/COLLECTED/reject": .required,
        "OPTIONAL/COLLECTED/reject": .optional
    ]

    /// Every (status, event) pair a document of each requirement can be in.
    static let all: [MoveCase] = {
        let reachable: [DocumentRequirement: [DocumentStatus]] = [
            .required: [.required, .collected, .processed],
            .optional: [.optional, .collected, .processed, .skipped]
        ]
        return [DocumentRequirement.required, .optional].flatMap { requirement in
            reachable[requirement]!.flatMap { status in
                DocumentEvent.allCases.map { event in
                    MoveCase(
                        requirement: requirement, status: status, event: event,
                        expected: legal["\(requirement.rawValue)/\(status.rawValue)/\(event.rawValue)"])
                }
            }
        }
    }()
}

let now = Date(timeIntervalSince1970: 1_795_305_600)
let later = now.addingTimeInterval(3600)

@Suite("Status rules of CONTRACT §1")
struct TransitionTests {
    @Test("every document move, legal applied and illegal refused", arguments: MoveCase.all)
    func documentMove(_ move: MoveCase) throws {
        // The other document is required and still missing, so the transaction cannot complete here.
        let state = TransactionState(
            policy: [.governmentId: move.requirement, .selfie: .required],
            documents: [.governmentId: move.status, .selfie: .required],
            submissionStatus: move.status == .required || move.status == .optional ? .notStarted : .started,
            expiresAt: later)
        if let expected = move.expected {
            let (next, transitions) = try state.applying(move.event, to: .governmentId, at: now)
            #expect(next.documents[.governmentId] == expected)
            #expect(transitions.first == StatusTransition(subject: .document(.governmentId), from: move.status.rawValue, to: expected.rawValue))
            #expect(next.documents[.selfie] == .required)
        } else {
            let error = #expect(throws: TransitionError.self) { try state.applying(move.event, to: .governmentId, at: now) }
            #expect(error == .illegalMove(.governmentId, move.status, move.event))
            #expect(error?.failureCode == .document(.submissionError))
        }
    }

    @Test("the case table covers 7 legal and 21 illegal moves")
    func tableSize() {
        #expect(MoveCase.all.count == 28)
        #expect(MoveCase.all.filter { $0.expected != nil }.count == 7)
    }

    @Test("a new transaction: policy statuses, disabled types absent, NOT_STARTED")
    func newTransaction() {
        let state = TransactionState(policy: [.governmentId: .required, .selfie: .optional, .email: .disabled], expiresAt: later)
        #expect(state.documents == [.governmentId: .required, .selfie: .optional])
        #expect(state.submissionStatus == .notStarted)
    }

    @Test("the transaction walks NOT_STARTED -> STARTED -> PROCESS -> COMPLETED, recording each step")
    func transactionLifecycle() throws {
        var state = TransactionState(policy: [.governmentId: .required, .selfie: .required, .email: .optional], expiresAt: later)
        var step = try state.applying(.collect, to: .selfie, at: now)
        #expect(
            step.transitions == [
                StatusTransition(subject: .document(.selfie), from: "REQUIRED", to: "COLLECTED"),
                StatusTransition(subject: .transaction, from: "NOT_STARTED", to: "STARTED")
            ])
        state = step.state
        step = try state.applying(.collect, to: .governmentId, at: now)
        #expect(step.transitions.last == StatusTransition(subject: .transaction, from: "STARTED", to: "PROCESS"))
        state = step.state
        state = try state.applying(.process, to: .governmentId, at: now).state
        state = try state.applying(.process, to: .selfie, at: now).state
        #expect(state.submissionStatus == .process, "the optional email is neither processed nor skipped yet")
        step = try state.applying(.skip, to: .email, at: now)
        #expect(
            step.transitions == [
                StatusTransition(subject: .document(.email), from: "OPTIONAL", to: "SKIPPED"),
                StatusTransition(subject: .transaction, from: "PROCESS", to: "COMPLETED")
            ])
        #expect(step.state.submissionStatus == .completed)
    }

    @Test("one required document collected moves the transaction two steps at once")
    func twoStepsAtOnce() throws {
        let state = TransactionState(policy: [.governmentId: .required, .selfie: .optional], expiresAt: later)
        let step = try state.applying(.collect, to: .governmentId, at: now)
        #expect(step.transitions.map(\.to) == ["COLLECTED", "STARTED", "PROCESS"])
    }

    @Test("collecting an optional document first starts the transaction but does not make it PROCESS")
    func optionalFirst() throws {
        let state = TransactionState(policy: [.governmentId: .required, .selfie: .optional], expiresAt: later)
        let step = try state.applying(.collect, to: .selfie, at: now)
        #expect(step.state.submissionStatus == .started)
    }

    @Test("a permanently failed submission returns the document to its policy status; the transaction does not step back")
    func rejectReturnsToPolicyStatus() throws {
        var state = TransactionState(policy: [.governmentId: .required], expiresAt: later)
        state = try state.applying(.collect, to: .governmentId, at: now).state
        #expect(state.submissionStatus == .process)
        let step = try state.applying(.reject, to: .governmentId, at: now)
        #expect(step.state.documents[.governmentId] == .required)
        #expect(step.state.submissionStatus == .process)
        #expect(step.transitions.count == 1)
        // It can be collected again and finish.
        let again = try step.state.applying(.collect, to: .governmentId, at: now).state
        #expect(try again.applying(.process, to: .governmentId, at: now).state.submissionStatus == .completed)
    }

    @Test("a type the policy disables is refused with missingDocumentType")
    func disabledType() {
        let state = TransactionState(policy: [.governmentId: .required, .email: .disabled], expiresAt: later)
        let error = #expect(throws: TransitionError.self) { try state.applying(.collect, to: .email, at: now) }
        #expect(error == .documentTypeNotInPolicy(.email))
        #expect(error?.failureCode == .document(.missingDocumentType))
    }

    @Test("past expiresAt no document is accepted: documentSubmissionTimeoutError")
    func expiry() throws {
        let state = TransactionState(policy: [.governmentId: .required], expiresAt: now)
        let error = #expect(throws: TransitionError.self) {
            try state.applying(.collect, to: .governmentId, at: now.addingTimeInterval(1))
        }
        #expect(error?.failureCode == .document(.documentSubmissionTimeoutError))
        #expect(try state.applying(.collect, to: .governmentId, at: now).state.documents[.governmentId] == .collected)
    }
}
