#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs once, when the view definition that carries it stops being used:
/// replaced or unregistered by a commit, not installed because its
/// transaction rolled back (or its registration failed), or its database
/// closed. The engine runs it outside every engine lock. The C layer hangs
/// a view's `destroy(ctx)` on it, so C callbacks are released at a moment
/// the header can name, whatever old snapshots still reference.
package final class ReleaseHook: @unchecked Sendable {   // `body` guarded by `lock`
    private let lock = Mutex()
    private var body: (() -> Void)?

    package init(_ body: @escaping () -> Void) { self.body = body }

    /// Runs the hook the first time; later calls do nothing.
    func release() {
        let pending = lock.withLock { () -> (() -> Void)? in
            defer { body = nil }
            return body
        }
        pending?()
    }
}
