import VerifyModel

/// Why an MRZ band on the page was not read: the rule that refused it (a stable code per rule), the field at fault,
/// a message that names positions but never characters, and the pass of the reading ladder whose refusal this is.
/// Always a `documentCaptureError` (`error`).
public struct MRZRefusal: CodedError, Equatable, CustomStringConvertible {
    /// One code per acceptance rule (CLI.md lists them), in the order the rules are applied.
    public enum Reason: String, Sendable, CaseIterable, Codable {
        /// A line's capitals could not be measured: no line of characters there.
        case noLegibleCapitals
        /// The first cell looks more like a filler than a letter: the line is read a cell off.
        case readOffByACell
        /// The document code's first letter is not one ICAO 9303 allows for the format.
        case documentCodeNotAllowed
        /// Letters follow the fillers that end the name.
        case lettersAfterName
        /// A check digit fails and no close second choice of the field's characters mends it.
        case checkDigit
        /// A date field holds no date, whatever was mended.
        case invalidDate
        /// The sex cell holds no sex.
        case invalidSex
        /// The lines have no format's layout.
        case layout
        /// A cell of a letters-only field (a name, a state code) shows a digit; or, as a misprint, a state code is
        /// printed in digits.
        case digitInLetters
        /// A cell reads as either of two look-alikes, and the check digits (or the glyph) cannot tell which.
        case lookAlike
        /// A character does not look like an OCR-B character.
        case notOCRB
        /// A character of a checked field leads its runner-up by less than `MRZReadingPolicy.minimumMargin`.
        case closeCall
        /// A letter of a field no check digit covers leads its runner-up by less than `nameMargin` (`stateMargin`).
        case uncheckedCloseCall
        /// A character's runner-up weighs the same in the check digit and is not clearly behind it.
        case checkDigitBlind
        /// A state code ICAO 9303 does not list, read with a close call.
        case unlistedStateUnclear
        /// More characters would have to be mended than `MRZReadingPolicy.maximumMends`.
        case tooManyMends
        /// The characters' mean template score is below `MRZReadingPolicy.minimumMeanScore`.
        case tooFaint

        /// The reason a parse error gives, by its kind.
        init(_ kind: MRZError.Kind) {
            switch kind {
            case .checkDigit: self = .checkDigit
            case .invalidDate: self = .invalidDate
            case .invalidSex: self = .invalidSex
            case .layout, .referenceDate: self = .layout
            }
        }
    }

    public var reason: Reason
    public var field: MRZField
    public var message: String
    /// The pass of the ladder whose reading this refusal is.
    public var pass: MRZPass

    public init(_ reason: Reason, field: MRZField, message: String, pass: MRZPass = .page) {
        self.reason = reason
        self.field = field
        self.message = message
        self.pass = pass
    }

    init(parsing error: MRZError) {
        self.init(Reason(error.kind), field: error.field, message: error.message)
    }

    /// The refusal as the pipeline reports it.
    public var error: MRZError { MRZError(field: field, message: message) }
    public var failureCode: FailureCode { .document(.documentCaptureError) }
    public var description: String { message }
}
