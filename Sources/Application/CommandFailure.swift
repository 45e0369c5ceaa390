/// Why a command cannot start or go on: a usage or configuration problem, a store or key that does not open, a
/// port already taken. `main` prints it as one line and exits 2 (CONTRACT §6), so the places that find one only
/// throw it.
package struct CommandFailure: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
