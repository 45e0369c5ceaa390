import Dispatch

/// Runs a blocking wait (a child process, a semaphore, a pipe read to its end) on a Dispatch thread and resumes
/// when it ends. Swift's cooperative pool has one thread per core, two in CI: a test that blocks one of them for a
/// process's lifetime starves every other suite's async tests, which then run into their time limits.
public func offCooperativePool<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            do throws(E) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
        }
    }
    return try result.get()
}
