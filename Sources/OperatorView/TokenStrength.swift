import Foundation

/// What the bearer token of the operator's view must be: at least 32 characters, not a shorter piece repeated,
/// and varied enough that the characters it is made of are worth 80 bits or more (their Shannon entropy over the
/// whole token: `openssl rand -hex 16` makes about 116). Said without the token.
package enum TokenStrength {
    package static let minimumLength = 32
    package static let minimumBits = 80.0

    /// Why `token` is too weak to guard the view; nil when it is strong enough.
    package static func weakness(_ token: String) -> String? {
        let characters = Array(token)
        guard characters.count >= minimumLength else {
            return "it is shorter than \(minimumLength) characters"
        }
        for period in 1...(characters.count / 2) where characters.count % period == 0 {
            if (period..<characters.count).allSatisfy({ characters[$0] == characters[$0 - period] }) {
                return "it repeats a piece of \(period) character\(period == 1 ? "" : "s")"
            }
        }
        guard bits(characters) >= minimumBits else { return "its characters are too few and too repeated to be hard to guess" }
        return nil
    }

    /// The token's Shannon entropy estimate: its length times the entropy of its characters' frequencies.
    static func bits(_ characters: [Character]) -> Double {
        var counts: [Character: Int] = [:]
        for character in characters { counts[character, default: 0] += 1 }
        let total = Double(characters.count)
        return -counts.values.reduce(0) { sum, count in sum + Double(count) / total * log2(Double(count) / total) } * total
    }
}
