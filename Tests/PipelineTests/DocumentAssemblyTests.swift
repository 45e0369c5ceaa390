import BarcodeScanning
import DocumentOutcomes
import Foundation
import Testing
import VerifyModel

@testable import Pipeline

@Suite("Assembling a document from its sources")
struct DocumentAssemblyTests {
    static let today = Date(timeIntervalSince1970: 1_795_305_600)
    // TD3 for SPECIMEN ROBIN KIM, born 1988-02-14, expiring 2034-06-01.
    static let mrz = "P<UTOSPECIMEN<<ROBIN<KIM<<<<<<<<<<<<<<<<<<<<\nX4R7T2B902UTO8802141X3406016ZE184226B<<<<<14"

    func item(mrz: String? = Self.mrz, aamva: String? = nil, captured: DocumentFields = DocumentFields()) -> ScannedDocument {
        var job = DocumentJob(sequence: 0, source: "test", type: .governmentId, identity: .known("t"))
        job.mrz = mrz
        job.captured = captured
        var document = ScannedDocument(job: job, transaction: .named("t"), images: [:], capture: .init())
        if let aamva {
            document.images[.back] = [1, 2, 3]
            document.backBarcodes = [Barcode(format: .pdf417, text: aamva)]
        }
        return document
    }

    func aamva(birth: String, number: String = "X4R7T2B90") -> String {
        let body = "DLDAQ\(number)\nDCSSPECIMEN\nDACROBIN\nDBB\(birth)\nDBA06012034\nDBCX\n\r"
        return "@\n\u{1E}\rANSI 636014100001DL0031\(String(format: "%04d", body.count))" + body
    }

    @Test("agreeing MRZ and AAMVA merge into one document")
    func agreeing() throws {
        let fields = try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today)
            .fields(for: item(aamva: aamva(birth: "02141988")))
        #expect(fields[.dateOfBirth] == "1988-02-14")
        #expect(fields[.mrzData] == Self.mrz)
        #expect(fields[.barcode]?.hasPrefix("@\n") == true)
        #expect(fields[.backImage] == "AQID")
    }

    @Test("a conflict between MRZ and AAMVA is reported, naming the field but not the values")
    func conflict() throws {
        let error = #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today)
                .fields(for: item(aamva: aamva(birth: "02151988", number: "Z999")))
        }
        #expect(error?.code == .document(.documentCaptureError))
        #expect(error?.message.contains("dateOfBirth (MRZ and AAMVA barcode differ)") == true)
        #expect(error?.message.contains("documentNumber") == true)
        #expect(error?.message.contains("1988") == false && error?.message.contains("Z999") == false)
    }

    @Test("barcode text with an AAMVA header (a stream line's barcode, fields.barcode) is parsed as a back PDF417 is")
    func barcodeText() throws {
        let assembly = DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today)
        let parsed = try assembly.fields(for: item(mrz: nil, captured: DocumentFields([.barcode: aamva(birth: "02141988")])))
        #expect(parsed[.dateOfBirth] == "1988-02-14")
        #expect(parsed[.documentNumber] == "X4R7T2B90")
        #expect(parsed[.firstName] == "ROBIN" && parsed[.lastName] == "SPECIMEN")
        #expect(parsed[.barcode] == aamva(birth: "02141988"))
        // It meets the MRZ under the same conflict rules.
        let error = #expect(throws: DocumentFailure.self) {
            try assembly.fields(for: item(captured: DocumentFields([.barcode: aamva(birth: "02151988")])))
        }
        #expect(error?.message.contains("dateOfBirth (MRZ and AAMVA barcode text differ)") == true)
        // Without the header it identifies no one: refused for a government id, unless the pipeline accepts
        // opaque barcodes, and then it is kept as it came beside an identity from another source.
        let opaque = #expect(throws: DocumentFailure.self) {
            try assembly.fields(for: item(mrz: nil, captured: DocumentFields([.barcode: "1D-CODE-0042"])))
        }
        #expect(opaque?.message.hasPrefix("barcode: not AAMVA data") == true)
        var accepting = PipelineConfiguration()
        accepting.acceptOpaqueBarcodes = true
        let plain = try DocumentAssembly(configuration: accepting, today: Self.today)
            .fields(for: item(captured: DocumentFields([.barcode: "1D-CODE-0042"])))
        #expect(plain[.barcode] == "1D-CODE-0042" && plain[.documentNumber] == "X4R7T2B90")
        let alone = #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: accepting, today: Self.today)
                .fields(for: item(mrz: nil, captured: DocumentFields([.barcode: "1D-CODE-0042"])))
        }
        #expect(
            alone?.message
                == "government id: no family name, date of birth, document number or date of expiry could be read from any source (no MRZ, PDF417, AAMVA barcode text or captured identity)"
        )
        // A header over a broken record is a capture error naming the barcode, never quoting it.
        let broken = #expect(throws: DocumentFailure.self) {
            try assembly.fields(for: item(mrz: nil, captured: DocumentFields([.barcode: "@\n\u{1E}\rANSI 63601X"])))
        }
        #expect(broken?.code == .document(.documentCaptureError))
        #expect(broken?.message.hasPrefix("barcode") == true, "\(broken?.message ?? "")")
        #expect(broken?.message.contains("63601X") == false)
    }

    @Test("captured fields that contradict the MRZ are a conflict too")
    func capturedConflict() {
        let error = #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today)
                .fields(for: item(captured: DocumentFields([.lastName: "OTHER"])))
        }
        #expect(error?.message.contains("lastName") == true)
    }

    @Test("an expired identity document fails when failExpiredId is set, and passes when it is not")
    func expiredDocument() throws {
        let later = Date(timeIntervalSince1970: 2_100_000_000)  // 2036
        let error = #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: PipelineConfiguration(), today: later).fields(for: item())
        }
        #expect(error?.message == "the identity document has expired")
        var lenient = PipelineConfiguration()
        lenient.failExpiredId = false
        #expect(try DocumentAssembly(configuration: lenient, today: later).fields(for: item())[.dateOfExpiry] == "2034-06-01")
    }

    @Test("a back without a readable PDF417 fails when the policy requires it")
    func missingBarcode() {
        var back = item(mrz: nil)
        back.images[.back] = [9]
        back.backBarcodes = []
        let error = #expect(throws: DocumentFailure.self) {
            try DocumentAssembly(configuration: PipelineConfiguration(), today: Self.today).fields(for: back)
        }
        #expect(error?.message == "back image: no readable PDF417 barcode")
    }
}
