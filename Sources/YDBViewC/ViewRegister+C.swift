// ydb_view_register, _unregister, _enumerate_registered, _registration_outcome
// and _set_definition: installing, replacing and removing views (the
// background registration is Registration+C.swift).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

@_cdecl("ydb_view_register")
public func ydb_view_register(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                              _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                              _ destroy: CDestructor?) -> Int32 {
    let definition = loadDefinition(definitionPointer)
    let callbacks = slot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        let definition = try definition.get()
        let view = try makeView(definition, name: viewName, slot: callbacks)
        // From here the engine releases the callbacks (see ReleaseHook).
        handedOver = true
        try database.database.registerView(view, name: viewName)
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_view_registration_outcome")
public func ydb_view_registration_outcome(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                          _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outOutcome, "out_outcome") {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        guard let outcome = database.database.registrationOutcome(ofView: viewName) else {
            throw YDBError(.notFound, "no view named '\(viewName)' is registered")
        }
        return outcome.rawValue
    }
}

@_cdecl("ydb_view_unregister")
public func ydb_view_unregister(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        try database.database.unregisterView(name: try string(name, "view name"))
    }
}

@_cdecl("ydb_view_enumerate_registered")
public func ydb_view_enumerate_registered(_ databaseHandle: OpaquePointer?, _ callback: CNameCallback?,
                                          _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    run {
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        guard let callback else { throw YDBError(.invalidArgument, "callback is NULL") }
        for name in database.database.registeredViewNames {
            if name.withCString({ callback(ctx, $0) }) != 0 { break }
        }
    }
}

@_cdecl("ydb_view_set_definition")
public func ydb_view_set_definition(_ txnHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                    _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                                    _ destroy: CDestructor?) -> Int32 {
    let definition = loadDefinition(definitionPointer)
    let callbacks = slot(for: definition, ctx, destroy)
    var handedOver = false
    let status = run {
        let writer = try usableTxn(txnHandle).writer()
        let viewName = try string(name, "view name")
        let definition = try definition.get()
        let view = try makeView(definition, name: viewName, slot: callbacks)
        // From here the engine releases the callbacks: when the transaction
        // ends, unless a commit installed them (see ReleaseHook).
        handedOver = true
        try writer.setViewDefinition(name: viewName, grouping: view.grouping, sorting: view.sorting,
                                     versionTag: view.versionTag, releaseHook: view.releaseHook)
    }
    if !handedOver { callbacks.clear() }
    return status
}
