import Foundation

/// A value shared between threads (observers, callbacks and watchdogs run
/// on other threads than the test).
final class Locked<Value>: @unchecked Sendable {   // guarded by `lock`
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
