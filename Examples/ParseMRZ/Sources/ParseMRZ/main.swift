import Foundation
import ImageDecoding
import MRZReading
import VerifyModel

// parse-mrz [IMAGE ...]: parses the ICAO 9303 specimen's MRZ as typed text, then reads the MRZ of each image given.
// A reading is returned only when every check digit holds and every character was read with confidence; anything
// less is refused with the field it could not read.

func describe(_ mrz: MRZ) -> String {
    [
        "format \(mrz.format.rawValue)", "document \(mrz.documentNumber)", "issued by \(mrz.issuingState)",
        "born \(mrz.dateOfBirth)", "expires \(mrz.dateOfExpiry)",
        "name \(mrz.secondaryIdentifier) \(mrz.primaryIdentifier)"
    ].joined(separator: ", ")
}

let specimen = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10"
do {
    print("typed: \(describe(try MRZ(parsing: specimen)))")
} catch {
    print("typed: refused: \(error.message)")
}

var failed = false
for path in CommandLine.arguments.dropFirst() {
    guard let data = FileManager.default.contents(atPath: path) else {
        print("\(path): cannot read the file")
        failed = true
        continue
    }
    do {
        switch try MRZImageReader().read([UInt8](data), decoder: ImageDecoder()) {
        case .read(let reading):
            let weakest = reading.confidence.min { $0.value.margin < $1.value.margin }
            print("\(path): \(describe(reading.mrz)); weakest field \(weakest?.key ?? "-") (lead \(weakest?.value.margin ?? 0))")
        case .unreadable(let refusal):
            print("\(path): refused (\(refusal.reason.rawValue)): \(refusal.message)")
            failed = true
        case .misprinted(let reading, let misprint):
            print("\(path): \(describe(reading.mrz)); misprinted (\(misprint.reason.rawValue)): \(misprint.message)")
            failed = true
        case .notFound:
            print("\(path): no MRZ found")
            failed = true
        }
    } catch {
        print("\(path): not a readable image: \(error)")
        failed = true
    }
}
exit(failed ? 1 : 0)
