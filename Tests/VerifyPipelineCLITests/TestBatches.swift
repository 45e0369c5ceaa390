import Foundation

/// Writes a batch folder: one transaction per id, each with an EMAIL document, a PHONE one unless `phone`
/// is false, and a SELFIE (a copy of a sample) when `selfie` is true.
func fieldBatch(_ folder: URL, transactions ids: [String], phone: Bool = true, selfie: Bool = false) throws -> URL {
    let batch = folder.appendingPathComponent("batch")
    for id in ids {
        let transaction = batch.appendingPathComponent(id)
        try FileManager.default.createDirectory(at: transaction, withIntermediateDirectories: true)
        let url = "https://api.pingone.com/v1/idValidations/webVerifications?envId=e&txnid=\(id)&code=C\(id.count)"
        try Data(url.utf8).write(to: transaction.appendingPathComponent("qr.txt"))
        let fields = phone ? #"{"email": "\#(id)@example.com", "phone": "+1 555 0100"}"# : #"{"email": "\#(id)@example.com"}"#
        try Data(fields.utf8).write(to: transaction.appendingPathComponent("fields.json"))
        if selfie {
            try FileManager.default.copyItem(
                at: CLIRunner.root.appendingPathComponent("Samples/batch/01-complete/selfie.jpg"),
                to: transaction.appendingPathComponent("selfie.jpg"))
        }
    }
    return batch
}

func pipelineFile(_ folder: URL, _ yaml: String) throws -> String {
    let url = folder.appendingPathComponent("pipeline-\(UUID()).yaml")
    try Data(yaml.utf8).write(to: url)
    return url.path
}
