import BarcodeScanning
import DocumentOutcomes
import Foundation
import MRZReading
import VerifyModel

/// Builds one document's `document` map from its sources: images, the back's AAMVA PDF417, the MRZ text and
/// captured fields. Where two sources give different values for the same identity field, the document is
/// refused: a licence whose barcode and MRZ disagree must not be submitted with either value silently chosen.
struct DocumentAssembly {
    let configuration: PipelineConfiguration
    let today: Date

    /// Fields compared across sources; names of the others may legitimately differ in form.
    static let comparedKeys: [DocumentKey] = [.documentNumber, .dateOfBirth, .dateOfExpiry, .dateOfIssue, .sex, .lastName, .firstName]

    /// The merged fields and what was repaired or dropped while reading them (never values).
    struct Assembled {
        var fields: DocumentFields
        var warnings: [String]
    }

    func fields(for document: ScannedDocument) throws(DocumentFailure) -> DocumentFields {
        try assemble(document).fields
    }

    func assemble(_ document: ScannedDocument) throws(DocumentFailure) -> Assembled {
        let type = document.job.type
        var sources: [(name: String, fields: DocumentFields)] = []
        var warnings: [String] = []
        /// The sources that could give the identity, by the name a refusal starts with.
        var identitySources: [String] = []
        if let text = document.job.mrz {
            let mrz: MRZ
            let stateCodes: [(field: MRZField, code: String)]
            do {
                mrz = try MRZ(parsing: text, referenceDate: today)
                stateCodes = try mrz.stateCodes
            } catch {
                throw DocumentFailure(error)
            }
            sources.append(("MRZ", mrz.fields))
            identitySources.append("MRZ")
            warnings += document.job.readWarnings ?? []
            // No check digit covers them: an unknown code is reported as read and flagged, never replaced.
            for (field, code) in stateCodes where !ICAOStates.codes.contains(code) {
                warnings.append("MRZ \(field.rawValue) is not a code ICAO 9303 lists: kept as read")
            }
        }
        if let backBarcodes = document.backBarcodes {
            let pdf417 = backBarcodes.first { $0.format == .pdf417 }
            if let pdf417 {
                let reading = try readAAMVA(pdf417.text, context: "back barcode")
                sources.append(("AAMVA barcode", reading.fields))
                warnings += reading.warnings
                identitySources.append("back barcode")
            } else if configuration.requireBackBarcode, type == .governmentId, document.job.mrz == nil {
                // A licence back must carry its PDF417; a document read by its MRZ (an ID card's back) has none.
                throw DocumentFailure(.documentCaptureError, "back image: no readable PDF417 barcode")
            }
        }
        // Barcode text handed over as text (a stream line's `barcode`, `fields.barcode`): AAMVA data is parsed
        // (or magnetic-stripe tracks) exactly as a PDF417 read from the back image, and its fields meet the same
        // conflict rules. Text that is blank or (for a government id, unless the pipeline accepts it) anything
        // else identifies no one and is refused rather than passed through.
        if let barcode = document.job.captured[.barcode] {
            if AAMVARecord.hasHeader(barcode) || AAMVARecord.isMagneticStripe(barcode) {
                let reading = try readAAMVA(barcode, context: "barcode")
                sources.append(("AAMVA barcode text", reading.fields))
                warnings += reading.warnings
                identitySources.append("barcode")
            } else if AAMVARecord.isBlank(barcode) {
                throw DocumentFailure(.documentCaptureError, "barcode: the barcode text is empty")
            } else if type == .governmentId, !configuration.acceptOpaqueBarcodes {
                throw DocumentFailure(
                    .documentCaptureError,
                    "barcode: not AAMVA data (no '@' and 'ANSI ' header): a government id's barcode text must be (scan.opaqueBarcodes: accept lets other text through)"
                )
            }
        }
        if !document.job.captured.isEmpty { sources.append(("captured fields", document.job.captured)) }

        var merged = DocumentFields()
        var conflicts: [String] = []
        for key in DocumentKey.allCases {
            let given = sources.compactMap { source in source.fields[key].map { (source.name, $0) } }
            guard let first = given.first else { continue }
            if Self.comparedKeys.contains(key), let other = given.first(where: { $0.1.uppercased() != first.1.uppercased() }) {
                conflicts.append("\(key.rawValue) (\(first.0) and \(other.0) differ)")
            }
            merged[key] = first.1
        }
        if !conflicts.isEmpty {
            throw DocumentFailure(.documentCaptureError, "sources disagree: \(conflicts.joined(separator: ", "))")
        }
        for (role, bytes) in document.images { merged[role.documentKey] = Data(bytes).base64EncodedString() }

        switch type {
        case .email where merged[.email] == nil, .phone where merged[.phone] == nil:
            throw DocumentFailure(.missingOTPDestination, "a \(type.rawValue) document needs its '\(type == .email ? "email" : "phone")'")
        case .selfie where merged[.selfie] == nil:
            throw DocumentFailure(.noDocumentToSubmitError, "a SELFIE document needs a selfie image")
        case .governmentId:
            try requireIdentity(merged, from: identitySources)
        default:
            break
        }
        if merged.isEmpty { throw DocumentFailure(.noDocumentToSubmitError, "the document has no content") }
        return Assembled(fields: merged, warnings: warnings)
    }

    /// Contract §11: a government id is complete only with the identity the policy needs, read from some
    /// source; what is missing is named, never the values.
    func requireIdentity(_ fields: DocumentFields, from sources: [String]) throws(DocumentFailure) {
        var needed: [(DocumentKey, String)] = [
            (.lastName, "family name"), (.dateOfBirth, "date of birth"),
            (.documentNumber, "document number")
        ]
        if configuration.failExpiredId { needed.append((.dateOfExpiry, "date of expiry")) }
        let absent = needed.filter { fields[$0.0] == nil }
        let missing = absent.map(\.1)
        if !missing.isEmpty {
            let list = missing.count == 1 ? missing[0] : missing.dropLast().joined(separator: ", ") + " or " + missing.last!
            let context = sources.isEmpty ? "government id" : sources.joined(separator: " and ")
            let whence = sources.isEmpty ? " from any source (no MRZ, PDF417, AAMVA barcode text or captured identity)" : ""
            throw DocumentFailure(.documentCaptureError, "\(context): no \(list) could be read\(whence)", field: absent.first?.0.rawValue)
        }
        if configuration.failExpiredId, let expiry = fields[.dateOfExpiry], expiry < Self.isoDay(today) {
            throw DocumentFailure(.documentCaptureError, "the identity document has expired", field: DocumentKey.dateOfExpiry.rawValue)
        }
    }

    /// A licence's DL/ID record or magnetic-stripe tracks. A stripe's expiry is a month: with `failExpiredId`, once
    /// that month has begun the licence may have expired, and is refused rather than passed as unexpired.
    func readAAMVA(_ text: String, context: String) throws(DocumentFailure) -> AAMVAReading {
        let reading: AAMVAReading
        do {
            reading = try AAMVAReading(parsing: text)
        } catch {
            throw DocumentFailure(error, context: context)
        }
        if configuration.failExpiredId, reading.expiryIsMonth, let expiry = reading.fields[.dateOfExpiry],
            expiry.prefix(8) + "01" <= Self.isoDay(today)
        {
            throw DocumentFailure(
                .documentCaptureError,
                "\(context): the identity document may have expired: its magnetic stripe gives only the expiry month, which has begun",
                field: DocumentKey.dateOfExpiry.rawValue)
        }
        return reading
    }

    static func isoDay(_ date: Date) -> String {
        String(Timestamp.string(date).prefix(10))
    }
}
