// ydb_search_view_*: search views (docs/behaviour.md, "Search views") --
// registering one over a view and a full-text index, setting its query in
// a read-write transaction or in the background, and reading it back.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CSearchDone = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<CChar>?) -> Void

/// A background search's completion with its ctx. The engine calls it once,
/// on the search's thread, where the calling thread's last error is not
/// readable: a failure's message is passed along instead (as
/// `ydb_view_register_async`'s done callback gets it).
final class CSearchCompletion: @unchecked Sendable {   // immutable
    let done: CSearchDone
    let ctx: UnsafeMutableRawPointer?

    init(done: @escaping CSearchDone, ctx: UnsafeMutableRawPointer?) {
        self.done = done
        self.ctx = ctx
    }

    func finish(_ result: Result<Bool, YDBError>) {
        switch result {
        case .success(let applied): done(ctx, 0, applied ? 1 : 0, nil)
        case .failure(let error): error.message.withCString { done(ctx, error.code.rawValue, 0, $0) }
        }
    }
}

@_cdecl("ydb_search_view_register")
public func ydb_search_view_register(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                     _ parent: UnsafePointer<CChar>?, _ index: UnsafePointer<CChar>?,
                                     _ query: UnsafePointer<CChar>?,
                                     _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    registerSearchView(databaseHandle, name, parent, index, query, byRank: false, outOutcome)
}

@_cdecl("ydb_search_view_register_by_rank")
public func ydb_search_view_register_by_rank(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                             _ parent: UnsafePointer<CChar>?, _ index: UnsafePointer<CChar>?,
                                             _ query: UnsafePointer<CChar>?,
                                             _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    registerSearchView(databaseHandle, name, parent, index, query, byRank: true, outOutcome)
}

private func registerSearchView(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                _ parent: UnsafePointer<CChar>?, _ index: UnsafePointer<CChar>?,
                                _ query: UnsafePointer<CChar>?, byRank: Bool,
                                _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    // Optional, so cleared by hand (answer() refuses NULL) before anything can fail.
    outOutcome?.pointee = 0
    return run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        let parentName = try string(parent, "parent view name")
        let indexName = try string(index, "full-text index name")
        // NULL is the empty query, which matches nothing until one is set.
        let first = try query.map { try string($0, "query") } ?? ""
        let outcome = try database.database.registerSearchView(
            SearchView(parent: parentName, index: indexName, query: first, orderedByRank: byRank), name: viewName)
        outOutcome?.pointee = outcome.rawValue
    }
}

@_cdecl("ydb_search_view_set_query")
public func ydb_search_view_set_query(_ txnHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                      _ query: UnsafePointer<CChar>?) -> Int32 {
    run {
        let writer = try usableTxn(txnHandle).writer()
        let viewName = try string(name, "view name")
        try writer.setSearchQuery(try string(query, "query"), forView: viewName)
    }
}

@_cdecl("ydb_search_view_query")
public func ydb_search_view_query(_ txnHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                  _ outQuery: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    answer(outQuery, "out_query") {
        let transaction = try usableTxn(txnHandle)
        let viewName = try string(name, "view name")
        return try mallocString(try transaction.searchQuery(ofView: viewName))
    }
}

@_cdecl("ydb_search_view_search")
public func ydb_search_view_search(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                   _ query: UnsafePointer<CChar>?, _ completion: CSearchDone?,
                                   _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        let queryText = try string(query, "query")
        var onDone: (@Sendable (Result<Bool, YDBError>) -> Void)?
        if let completion {
            let callback = CSearchCompletion(done: completion, ctx: ctx)
            onDone = { callback.finish($0) }
        }
        // Returns at once: a failure from here on reaches the completion only.
        try database.database.search(queryText, inView: viewName, completion: onDone)
    }
}
