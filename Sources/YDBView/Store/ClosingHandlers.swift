/// What runs once when a database or a connection closes (async
/// iterations waiting for commits end instead of waiting forever). Guarded
/// by its owner's lock; the owner calls the handlers `take` returns
/// outside it, and a handler added once closed runs at once.
struct ClosingHandlers {
    private var handlers: [Int: @Sendable () -> Void] = [:]
    private var nextToken = 1

    /// Keeps `handler` and returns its token for `remove`.
    mutating func add(_ handler: @escaping @Sendable () -> Void) -> Int {
        defer { nextToken += 1 }
        handlers[nextToken] = handler
        return nextToken
    }

    mutating func remove(_ token: Int) { handlers.removeValue(forKey: token) }

    /// Every handler in the order added, forgetting them.
    mutating func take() -> [@Sendable () -> Void] {
        defer { handlers.removeAll() }
        return handlers.keys.sorted().compactMap { handlers[$0] }
    }
}
