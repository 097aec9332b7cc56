// Plumbing shared by every export: a lock, the handle registry, the
// per-thread call state (last error, callback answers, lent handles), and
// the conversions at the C boundary.
//
// Nothing here decides behaviour; it only turns C arguments into Swift
// values (refusing the ones that would trap) and YDBError into a status.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import YDBView

// MARK: - Lock

/// The engine's pthread mutex (the export layer must not depend on Foundation).
typealias Lock = Mutex

// MARK: - Handle registry

/// Handles given to C are tokens, not addresses: a token maps to its box
/// here, and a token is never reused. So NULL, stale (closed, freed, ended)
/// and made-up handles are all detected instead of being dereferenced.
final class HandleRegistry: @unchecked Sendable {
    private let lock = Lock()
    private var boxes: [UInt: AnyObject] = [:]
    /// Tokens start high and step by 16 so they look like aligned pointers
    /// in a debugger and never collide with small integers.
    private var lastToken: UInt = 0x10_0000

    func register(_ box: AnyObject) -> OpaquePointer {
        lock.withLock {
            lastToken += 16
            boxes[lastToken] = box
            return OpaquePointer(bitPattern: lastToken)!
        }
    }

    /// The box behind `handle`, if it is live and of type `T`.
    func box<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type) -> T? {
        guard let handle else { return nil }
        return lock.withLock { boxes[UInt(bitPattern: handle)] } as? T
    }

    /// Removes `handle` only if it is live and of type `T`, in one step: a
    /// destructor given a handle of another type (a live transaction, say)
    /// must leave it registered, or the transaction is orphaned with the
    /// write lock held.
    func unregister<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type) -> T? {
        guard let handle else { return nil }
        return lock.withLock {
            let key = UInt(bitPattern: handle)
            guard let box = boxes[key] as? T else { return nil }
            boxes.removeValue(forKey: key)
            return box
        }
    }

    /// Whether `raw` could be a handle this library made, live or not, and
    /// so cannot be a heap allocation: at most the last registry token
    /// handed out (tokens start at 1 MiB, below any heap address on Linux,
    /// as made-up small values are), or a token lent for one call
    /// (`ThreadCallState.nextCallToken`: a tag in the top bits, where no
    /// user-space address has bits).
    func mayBeHandle(_ raw: UInt) -> Bool {
        raw & 0xF000_0000_0000_0000 != 0 || raw <= lock.withLock { lastToken }
    }

    @discardableResult
    func unregister(_ handle: OpaquePointer?) -> AnyObject? {
        guard let handle else { return nil }
        return lock.withLock { boxes.removeValue(forKey: UInt(bitPattern: handle)) }
    }
}

let registry = HandleRegistry()

/// Looks a handle up, or throws YDB_MISUSE naming what was expected.
func lookup<T: AnyObject>(_ handle: OpaquePointer?, _ type: T.Type, _ what: String) throws -> T {
    guard let handle else { throw YDBError(.misuse, "\(what) handle is NULL") }
    guard let box = registry.box(handle, as: type) else {
        throw YDBError(.misuse, "\(what) handle is not valid (closed, freed, ended or never opened)")
    }
    return box
}

// MARK: - Per-thread call state

/// What the C layer keeps for one thread between and during its calls: the
/// last error (`ydb_errcode`, `ydb_errmsg`), and for the view callback
/// running on the thread, the handles lent to it (transaction, group
/// result, sort key, batch answer) and where it answers. One per thread,
/// owned by the thread's pthread key: freed when the thread exits.
final class ThreadCallState {
    /// The last error's status (0 after a call that succeeded).
    var code: Int32 = 0
    /// SQLite's extended result code behind `code`, or 0.
    var sqliteCode: Int32 = 0
    var message: UnsafeMutablePointer<CChar>?
    /// The key the sort_key callback running on this thread is building.
    var sortKeyCall = SortKeyCall()
    /// The transaction handle lent to the view callback running on this
    /// thread (see `withCallbackTxn`).
    var callbackTxn: (token: UInt, transaction: ReadTransaction)?
    /// Where the grouping callback running on this thread answers.
    var groupResult = GroupResult()
    /// Where the batch callback running on this thread answers.
    var batchAnswer = BatchAnswer()
    /// The group a grouping callback on this thread named last (`groupName`).
    var lastGroupName: String?
    /// Numbers the handles lent to C for one call (`nextCallToken`).
    private var calls: UInt = 0

    /// A fresh token for a handle lent to C for one call on this thread:
    /// `tag` (one per kind of handle) in the high bits, a count below, the
    /// low 4 bits clear, so never a registry token or a small integer.
    /// Checked against the call running on the thread, it needs no registry
    /// entry: these calls run once per row or per comparison.
    func nextCallToken(_ tag: UInt) -> UInt {
        calls &+= 1
        return tag | (calls << 4 & 0x0FFF_FFFF_FFFF_FFF0)
    }

    deinit { free(message) }

    func set(_ code: Int32, _ text: String, sqliteCode: Int32 = 0) {
        free(message)
        self.code = code
        self.sqliteCode = sqliteCode
        message = strdup(text)
    }
}

let callStateKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
        if let pointer { Unmanaged<ThreadCallState>.fromOpaque(pointer).release() }
    }
    return key
}()

func currentCallState(create: Bool) -> ThreadCallState? {
    if let pointer = pthread_getspecific(callStateKey) {
        return Unmanaged<ThreadCallState>.fromOpaque(pointer).takeUnretainedValue()
    }
    guard create else { return nil }
    let state = ThreadCallState()
    pthread_setspecific(callStateKey, Unmanaged.passRetained(state).toOpaque())
    return state
}

/// Runs one export: YDB_OK (and a cleared last error) on success; on
/// failure the status and message are recorded for `ydb_errmsg`.
func run(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        if let state = currentCallState(create: false) { state.code = 0; state.sqliteCode = 0 }
        return 0
    } catch let error as YDBError {
        currentCallState(create: true)?.set(error.code.rawValue, error.message, sqliteCode: error.sqliteCode ?? 0)
        return error.code.rawValue
    } catch {
        return fail(YDBErrorCode.error.rawValue, String(describing: error))
    }
}

@discardableResult
func fail(_ code: Int32, _ message: String) -> Int32 {
    currentCallState(create: true)?.set(code, message)
    return code
}

// MARK: - Arguments in

/// A required NUL-terminated UTF-8 string.
func string(_ pointer: UnsafePointer<CChar>?, _ what: String) throws -> String {
    guard let pointer else { throw YDBError(.invalidArgument, "\(what) is NULL") }
    guard let value = String(validatingCString: pointer) else {
        throw YDBError(.invalidArgument, "\(what) is not valid UTF-8")
    }
    return value
}

/// A size_t that must fit in Int (anything larger cannot be a real buffer).
func count(_ size: UInt, _ what: String) throws -> Int {
    guard let value = Int(exactly: size) else {
        throw YDBError(.invalidArgument, "\(what) is too large")
    }
    return value
}

/// A required blob: NULL with size 0 is the empty blob.
func bytes(_ pointer: UnsafeRawPointer?, _ size: UInt, _ what: String) throws -> [UInt8] {
    let length = try count(size, "\(what) size")
    guard let pointer else {
        if length == 0 { return [] }
        throw YDBError(.invalidArgument, "\(what) is NULL but its size is \(size)")
    }
    return Array(UnsafeRawBufferPointer(start: pointer, count: length))
}

/// An optional blob: NULL (with size 0) means "none".
func optionalBytes(_ pointer: UnsafeRawPointer?, _ size: UInt, _ what: String) throws -> [UInt8]? {
    if pointer == nil && size == 0 { return nil }
    return try bytes(pointer, size, what)
}

func required<T>(_ pointer: T?, _ what: String) throws -> T {
    guard let pointer else { throw YDBError(.misuse, "\(what) is NULL") }
    return pointer
}

// MARK: - Results out

/// The one shape of an export that answers through one out-parameter:
/// NULL is refused, the output is cleared before anything can fail (so a
/// caller never reads a stale answer), then `compute`'s answer is stored.
func answer<T>(_ out: UnsafeMutablePointer<T>?, _ what: String, cleared: T,
               _ compute: () throws -> T) -> Int32 {
    run {
        let target = try required(out, what)
        target.pointee = cleared
        target.pointee = try compute()
    }
}

/// `answer` for counts, indexes, flags and snapshots: cleared to 0.
func answer<T: BinaryInteger>(_ out: UnsafeMutablePointer<T>?, _ what: String,
                              _ compute: () throws -> T) -> Int32 {
    answer(out, what, cleared: 0, compute)
}

/// `answer` for pointers and handles: cleared to NULL.
func answer<T>(_ out: UnsafeMutablePointer<T?>?, _ what: String, _ compute: () throws -> T?) -> Int32 {
    answer(out, what, cleared: nil, compute)
}

/// `answer` for a C struct the export mirrors field for field
/// (`ydb_row_change`, `ydb_edit_step`): Swift cannot see the header's
/// type, so the output arrives untyped and is written as bytes.
func answer<T>(bytesAt out: UnsafeMutableRawPointer?, _ what: String, cleared: T,
               _ compute: () throws -> T) -> Int32 {
    run {
        let target = try required(out, what)
        target.storeBytes(of: cleared, as: T.self)
        target.storeBytes(of: try compute(), as: T.self)
    }
}

/// Structs the caller allocates and the library reads (`ydb_view_definition`,
/// `ydb_range_options`) start with `size_t struct_size`: the size of the
/// caller's version of the struct, so that a program built against an older
/// header keeps working when members are added at the end. A C struct
/// mirrored here (`T`) is read as far as both the caller's size and this
/// library's layout go; the members past that keep `defaults`' values.
/// Only whole 8-byte words are read: a member never straddles one (every
/// member is at most 8 bytes, naturally aligned), so a size that ends
/// inside a word leaves that word's members at their defaults rather than
/// reading half a pointer. Zero (never set) and sizes below the first
/// version's are refused, naming the macro that sets the size.
struct SizedStruct<T> {
    /// The struct's C name, for messages (`ydb_view_definition`).
    let name: String
    /// The macro that initialises it (`YDB_VIEW_DEFINITION_INIT`).
    let initMacro: String
    /// The first version's size: the smallest struct_size accepted.
    let minimumSize: Int

    private static var word: Int { MemoryLayout<UInt>.size }

    /// The number of bytes of the caller's struct at `pointer` to read or
    /// write, after checking its struct_size.
    func extent(_ pointer: UnsafeRawPointer) throws -> Int {
        let size = pointer.loadUnaligned(as: UInt.self)
        if size == 0 {
            throw YDBError(.invalidArgument, "\(name).struct_size is 0: initialise it with \(initMacro)")
        }
        guard size >= UInt(minimumSize) else {
            throw YDBError(.invalidArgument, "\(name).struct_size is \(size), less than its first version's "
                           + "\(minimumSize): initialise it with \(initMacro)")
        }
        let known = MemoryLayout<T>.size
        return size >= UInt(known) ? known : Int(size) / Self.word * Self.word
    }

    /// The caller's struct, its missing members taken from `defaults`.
    func load(_ pointer: UnsafeRawPointer, defaults: T) throws -> T {
        let length = try extent(pointer)
        var value = defaults
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: length)) }
        return value
    }

    /// Writes `value` into the caller's struct as far as its struct_size
    /// goes, leaving struct_size (the first word) as the caller set it.
    func store(_ value: T, at pointer: UnsafeMutableRawPointer) throws {
        let length = try extent(UnsafeRawPointer(pointer))
        withUnsafeBytes(of: value) { bytes in
            (pointer + Self.word).copyMemory(from: bytes.baseAddress! + Self.word, byteCount: length - Self.word)
        }
    }
}

/// One output of an export that answers through several: the caller's
/// pointer, its parameter name (for the NULL message) and what it holds
/// after a failure.
struct Out<Value> {
    let pointer: UnsafeMutablePointer<Value>?
    let name: String
    let cleared: Value

    init(_ pointer: UnsafeMutablePointer<Value>?, _ name: String, cleared: Value) {
        self.pointer = pointer
        self.name = name
        self.cleared = cleared
    }

    fileprivate func clear() { pointer?.pointee = cleared }
    fileprivate func check() throws { _ = try required(pointer, name) }
    fileprivate func store(_ value: Value) { pointer!.pointee = value }
}

extension Out where Value: BinaryInteger {
    init(_ pointer: UnsafeMutablePointer<Value>?, _ name: String) { self.init(pointer, name, cleared: 0) }
}

extension Out where Value: ExpressibleByNilLiteral {
    init(_ pointer: UnsafeMutablePointer<Value>?, _ name: String) { self.init(pointer, name, cleared: nil) }
}

/// `answer` for an export with several out-parameters ((section, row),
/// (group, index), (collection, key), (data, size), ...): every output
/// the caller passed is cleared first — also when a sibling is NULL, as the
/// header promises ("set to NULL / 0 when the pointer itself was valid") —
/// then a NULL one is refused, and `compute`'s answers are stored together
/// only once all of them exist, so a failure never leaves a partial answer.
func answer<each Value>(_ outputs: repeat Out<each Value>,
                        compute: () throws -> (repeat each Value)) -> Int32 {
    run {
        repeat (each outputs).clear()
        repeat try (each outputs).check()
        let values = try compute()
        repeat (each outputs).store(each values)
    }
}

/// `answer` for an index path (section, row); both cleared to 0.
func answer(section: UnsafeMutablePointer<UInt>?, row: UnsafeMutablePointer<UInt>?,
            _ compute: () throws -> TableIndexPath) -> Int32 {
    answer(Out(section, "out_section"), Out(row, "out_row")) {
        let path = try compute()
        return (UInt(path.section), UInt(path.row))
    }
}

/// `value`, or YDB_NOTFOUND with `message`: the lookup that found nothing.
func found<T>(_ value: T?, _ message: @autoclosure () -> String) throws -> T {
    guard let value else { throw YDBError(.notFound, message()) }
    return value
}

/// Owned copies of a row's collection and key, for the caller to
/// `ydb_free`: both or (on failure) neither.
func mallocStrings(_ rowKey: RowKey) throws -> (UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?) {
    let collection = try mallocString(rowKey.collection)
    do {
        return (collection, try mallocString(rowKey.key))
    } catch {
        free(collection)
        throw error
    }
}

/// A malloc'd copy of `data` for the caller to `ydb_free`; never NULL.
/// When memory runs out the call fails (`YDB_ERROR`, "out of memory"),
/// naming the size, instead of the process.
func mallocCopy(_ data: [UInt8]) throws -> UnsafeMutableRawPointer {
    try data.withUnsafeBytes { try mallocCopy($0) }
}

func mallocCopy(_ bytes: UnsafeRawBufferPointer) throws -> UnsafeMutableRawPointer {
    guard let buffer = malloc(max(bytes.count, 1)) else {
        throw YDBError(.error, "out of memory: cannot allocate \(bytes.count) bytes")
    }
    if let base = bytes.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
    return buffer
}

/// A NUL-terminated copy that lives until the process ends (static strings).
func immortalCString(_ text: String) -> UnsafePointer<CChar> {
    UnsafePointer(strdup(text)!)
}

/// An owned NUL-terminated copy for the caller to `ydb_free`.
func mallocString(_ text: String) throws -> UnsafeMutablePointer<CChar> {
    guard let copy = strdup(text) else { throw YDBError(.error, "out of memory") }
    return copy
}

/// A Swift Int from a C size_t index; indexes too large for Int cannot exist.
func index(_ value: UInt) -> Int? { Int(exactly: value) }

/// Holds a set of C callbacks for the engine's closures. Clearing it
/// releases them — and runs their destructor — at the moment the engine
/// says they stop being used (its ReleaseHook; or a mappings free), outside
/// the lock, whatever the engine still references.
final class CallbackSlot<Callbacks: AnyObject>: @unchecked Sendable {
    private let lock = Lock()
    private var callbacks: Callbacks?

    init(_ callbacks: Callbacks) { self.callbacks = callbacks }

    /// The callbacks, or nil once released.
    var current: Callbacks? { lock.withLock { callbacks } }

    func clear() {
        let released = lock.withLock { () -> Callbacks? in
            defer { callbacks = nil }
            return callbacks
        }
        _ = released  // the destructor runs here, outside the lock
    }
}

/// Stores an owned (malloc'd) copy of `data`; nil stores nothing.
func storeOwned(_ data: [UInt8]?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                _ size: UnsafeMutablePointer<UInt>) throws {
    guard let data else { return }
    out.pointee = try mallocCopy(data)
    size.pointee = UInt(data.count)
}

/// The output parameters of a call that returns a row's object and,
/// optionally, its metadata: checked and cleared on entry, filled all or
/// nothing.
struct RowOutputs {
    let object: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let objectSize: UnsafeMutablePointer<UInt>
    let metadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    let metadataSize: UnsafeMutablePointer<UInt>?

    init(_ outObject: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ outObjectSize: UnsafeMutablePointer<UInt>?,
         _ outMetadata: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
         _ outMetadataSize: UnsafeMutablePointer<UInt>?) throws {
        object = try required(outObject, "out_object")
        objectSize = try required(outObjectSize, "out_object_size")
        object.pointee = nil
        objectSize.pointee = 0
        outMetadata?.pointee = nil
        outMetadataSize?.pointee = 0
        if (outMetadata == nil) != (outMetadataSize == nil) {
            throw YDBError(.misuse, "out_metadata and out_metadata_size must both be NULL or both be set")
        }
        metadata = outMetadata
        metadataSize = outMetadataSize
    }

    /// Stores owned copies; if the metadata cannot be stored the object is
    /// freed again.
    func store(_ objectBytes: [UInt8], _ metadataBytes: [UInt8]?) throws {
        try storeOwned(objectBytes, object, objectSize)
        guard let metadata, let metadataSize else { return }
        do {
            try storeOwned(metadataBytes, metadata, metadataSize)
        } catch {
            free(object.pointee)
            object.pointee = nil
            objectSize.pointee = 0
            throw error
        }
    }
}
