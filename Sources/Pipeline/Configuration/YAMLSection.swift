import Yams

/// A YAML mapping being read, with the path used in error messages.
struct YAMLSection {
    let mapping: Node.Mapping
    let path: String
    let file: String

    init(_ node: Node, path: String, file: String) throws(ConfigurationError) {
        guard let mapping = node.mapping else {
            throw ConfigurationError("\(file): \(path.isEmpty ? "the file" : "'\(path)'") must be a mapping of keys to values")
        }
        self.mapping = mapping
        self.path = path
        self.file = file
    }

    var keys: [String] { mapping.keys.compactMap(\.string) }

    func error(_ key: String?, _ message: String) -> ConfigurationError {
        let name = [path, key].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ".")
        return ConfigurationError("\(file): '\(name)' \(message)")
    }

    func only(_ allowed: Set<String>) throws(ConfigurationError) {
        for key in keys where !allowed.contains(key) {
            throw error(key, "is not a known key (known here: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    func node(_ key: String) -> Node? { mapping[key] }

    func section(_ key: String) throws(ConfigurationError) -> YAMLSection? {
        guard let node = node(key) else { return nil }
        if node.scalar?.string == "" || node.scalar?.string == "~" { return nil }
        return try YAMLSection(node, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let node = node(key) else { return nil }
        guard let scalar = node.scalar else { throw error(key, "must be a single value") }
        return scalar.string
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let text = try string(key) else { return nil }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(key, "must be true or false, not '\(text)'")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = try string(key) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw error(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let text = try string(key) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw error(key, "must be a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted())")
        }
        return value
    }

    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let node = node(key) else { return nil }
        guard let sequence = node.sequence else { throw error(key, "must be a list") }
        var values: [String] = []
        for item in sequence {
            guard let value = item.scalar?.string else { throw error(key, "must be a list of single values") }
            values.append(value)
        }
        return values
    }
}
