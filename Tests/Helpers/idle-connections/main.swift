// Opens COUNT connections to 127.0.0.1:PORT and leaves them idle, in a process of its own: a test process holding
// thousands of descriptors breaks Foundation's Process.run() in the tests running beside it. Prints
// "open COUNT", then, once the server has closed every one (or TIMEOUT seconds passed), "closed N after S".
// With `slow-body`, each connection starts a POST whose body never ends and sends one byte of it a second: never idle.
// Usage: idle-connections PORT COUNT TIMEOUT [slow-body]
import Foundation

/// One line on stdout, unbuffered: the test reads each as it comes.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
guard (4...5).contains(arguments.count), let port = UInt16(arguments[1]), let count = Int(arguments[2]),
    let timeout = Double(arguments[3]), arguments.count == 4 || arguments[4] == "slow-body"
else {
    FileHandle.standardError.write(Data("usage: idle-connections PORT COUNT TIMEOUT [slow-body]\n".utf8))
    exit(2)
}
let slowBody = arguments.count == 5
/// Sends all of `text` on `fd`; false when the connection is gone.
func sendText(_ fd: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
}
var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

let start = Date()
var descriptors: [Int32] = []
for _ in 0..<count {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port.bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard fd >= 0, connected == 0 else {
        say("failed after \(descriptors.count)")
        exit(1)
    }
    descriptors.append(fd)
    if slowBody {
        _ = sendText(
            fd, "POST /login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nt")
    }
}
say("open \(descriptors.count)")

var pending = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
var closed = 0
let deadline = start.addingTimeInterval(timeout)
var nextByte = Date().addingTimeInterval(1)
while !pending.isEmpty, Date() < deadline {
    _ = poll(&pending, nfds_t(pending.count), 200)
    if slowBody, Date() >= nextByte {
        // One more byte of each body: a connection the server closed fails here or reads its end below.
        for entry in pending { _ = sendText(entry.fd, "o") }
        nextByte = Date().addingTimeInterval(1)
    }
    var still: [pollfd] = []
    for entry in pending {
        var byte: UInt8 = 0
        if entry.revents != 0, recv(entry.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 {
            closed += 1
        } else {
            still.append(pollfd(fd: entry.fd, events: Int16(POLLIN), revents: 0))
        }
    }
    pending = still
}
say("closed \(closed) after \(String(format: "%.1f", Date().timeIntervalSince(start)))")
