// ydb_view_register_async and ydb_registration_*: registering a view in the
// background (the engine's registerViewAsync), with C progress and
// completion callbacks.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

public typealias CRegistrationProgress = @convention(c) (UnsafeMutableRawPointer?, UInt64, UInt64) -> Int32
public typealias CRegistrationDone = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32,
                                                     UnsafePointer<CChar>?) -> Void

/// The engine's task behind a `ydb_registration` handle. Freeing the
/// handle does not stop the registration.
final class RegistrationBox {
    let task: ViewRegistrationTask
    init(_ task: ViewRegistrationTask) { self.task = task }
}

/// The progress and completion callbacks with their ctx; called only on
/// the registration's thread, the completion once and last.
final class CRegistrationCallbacks: @unchecked Sendable {   // immutable
    let progress: CRegistrationProgress?
    let done: CRegistrationDone?
    let ctx: UnsafeMutableRawPointer?

    init(progress: CRegistrationProgress?, done: CRegistrationDone?, ctx: UnsafeMutableRawPointer?) {
        self.progress = progress
        self.done = done
        self.ctx = ctx
    }

    /// False (cancel) when the callback returns nonzero.
    func report(_ progress: ViewRegistrationProgress) -> Bool {
        self.progress?(ctx, UInt64(progress.done), UInt64(progress.total)) ?? 0 == 0
    }

    func finish(_ result: Result<ViewRegistrationOutcome, YDBError>) {
        guard let done else { return }
        switch result {
        case .success(let outcome): done(ctx, 0, outcome.rawValue, nil)
        case .failure(let error): error.message.withCString { done(ctx, error.code.rawValue, 0, $0) }
        }
    }
}

@_cdecl("ydb_view_register_async")
public func ydb_view_register_async(_ databaseHandle: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                    _ definitionPointer: UnsafeRawPointer?, _ ctx: UnsafeMutableRawPointer?,
                                    _ destroy: CDestructor?, _ progress: CRegistrationProgress?,
                                    _ done: CRegistrationDone?, _ callbackCtx: UnsafeMutableRawPointer?,
                                    _ outRegistration: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    let definition = loadDefinition(definitionPointer)
    let callbacks = slot(for: definition, ctx, destroy)
    var handedOver = false
    let reporter = CRegistrationCallbacks(progress: progress, done: done, ctx: callbackCtx)
    var onProgress: (@Sendable (ViewRegistrationProgress) -> Bool)?
    if progress != nil { onProgress = { reporter.report($0) } }
    let onDone: @Sendable (Result<ViewRegistrationOutcome, YDBError>) -> Void = { reporter.finish($0) }
    let status = answer(outRegistration, "out_registration") { () throws -> OpaquePointer? in
        let database = try lookup(databaseHandle, DatabaseBox.self, "database")
        let viewName = try string(name, "view name")
        let definition = try definition.get()
        let view = try makeView(definition, name: viewName, slot: callbacks)
        // From here the engine releases the view's callbacks (see ReleaseHook).
        handedOver = true
        let task = try database.database.registerViewAsync(view, name: viewName, continuing: onProgress,
                                                           completion: onDone)
        return registry.register(RegistrationBox(task))
    }
    if !handedOver { callbacks.clear() }
    return status
}

@_cdecl("ydb_registration_cancel")
public func ydb_registration_cancel(_ handle: OpaquePointer?) -> Int32 {
    run { try lookup(handle, RegistrationBox.self, "registration").task.cancel() }
}

@_cdecl("ydb_registration_wait")
public func ydb_registration_wait(_ handle: OpaquePointer?, _ timeoutMilliseconds: Int64,
                                  _ outFinished: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outFinished, "out_finished") {
        let task = try lookup(handle, RegistrationBox.self, "registration").task
        let limit = timeoutMilliseconds < 0 ? nil : Int(clamping: timeoutMilliseconds)
        return try task.waitUntilFinished(milliseconds: limit) ? 1 : 0
    }
}

@_cdecl("ydb_registration_result")
public func ydb_registration_result(_ handle: OpaquePointer?, _ outOutcome: UnsafeMutablePointer<Int32>?) -> Int32 {
    answer(outOutcome, "out_outcome") {
        let task = try lookup(handle, RegistrationBox.self, "registration").task
        guard let result = task.result else {
            throw YDBError(.misuse, "the registration of view '\(task.viewName)' is still running (ydb_registration_wait waits for it)")
        }
        return try result.get().rawValue
    }
}

@_cdecl("ydb_registration_free")
public func ydb_registration_free(_ handle: OpaquePointer?) -> Int32 {
    run {
        guard handle != nil else { return }
        guard registry.unregister(handle, as: RegistrationBox.self) != nil else {
            throw YDBError(.misuse, "registration handle is not valid (freed, or never made)")
        }
    }
}
