import BarcodeScanning
import Foundation
import VerifyModel

/// Builds one document's `document` map from its sources: images, the back's AAMVA PDF417, the MRZ text and
/// captured fields. Where two sources give different values for the same identity field, the document is
/// refused: a licence whose barcode and MRZ disagree must not be submitted with either value silently chosen.
struct DocumentAssembly {
    let configuration: PipelineConfiguration
    let today: Date

    /// Fields compared across sources; names of the others may legitimately differ in form.
    static let comparedKeys: [DocumentKey] = [.documentNumber, .dateOfBirth, .dateOfExpiry, .dateOfIssue, .sex, .lastName, .firstName]

    func fields(for document: ScannedDocument) throws(DocumentFailure) -> DocumentFields {
        let type = document.job.type
        var sources: [(name: String, fields: DocumentFields)] = []
        if let mrz = document.job.mrz {
            do {
                sources.append(("MRZ", try MRZ(parsing: mrz, referenceDate: today).fields))
            } catch {
                throw DocumentFailure(error)
            }
        }
        if let backBarcodes = document.backBarcodes {
            let pdf417 = backBarcodes.first { $0.format == .pdf417 }
            if let pdf417 {
                do {
                    sources.append(("AAMVA barcode", try AAMVARecord(parsing: pdf417.text).fields))
                } catch {
                    throw DocumentFailure(error, context: "back barcode")
                }
            } else if configuration.requireBackBarcode, type == .governmentId, document.job.mrz == nil {
                // A licence back must carry its PDF417; a document read by its MRZ (an ID card's back) has none.
                throw DocumentFailure(.documentCaptureError, "back image: no readable PDF417 barcode")
            }
        }
        // Barcode text handed over as text (a stream line's `barcode`, `fields.barcode`): AAMVA data is parsed
        // exactly as a PDF417 read from the back image, and its fields meet the same conflict rules.
        if let barcode = document.job.captured[.barcode], AAMVARecord.hasHeader(barcode) {
            do {
                sources.append(("AAMVA barcode text", try AAMVARecord(parsing: barcode).fields))
            } catch {
                throw DocumentFailure(error, context: "barcode")
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
        default:
            break
        }
        if merged.isEmpty { throw DocumentFailure(.noDocumentToSubmitError, "the document has no content") }
        if configuration.failExpiredId, type == .governmentId, let expiry = merged[.dateOfExpiry],
           expiry < Self.isoDay(today) {
            throw DocumentFailure(.documentCaptureError, "the identity document has expired")
        }
        return merged
    }

    static func isoDay(_ date: Date) -> String {
        String(Timestamp.string(date).prefix(10))
    }
}
