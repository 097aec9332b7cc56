#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Checks a large allocation against the process's address-space limit
/// (`RLIMIT_AS`, e.g. `ulimit -v`) before making it.
///
/// Swift stops the process when an allocation fails; it cannot fail the
/// call instead. Without a limit Linux rarely refuses memory (it would
/// rather end the process later, whatever the library does), so the
/// allocations worth checking are those that could exceed a limit the
/// process set itself: a population's buffers, a value handed out whole.
/// With no limit set this reads nothing and costs nothing.
enum MemoryBudget {
    /// The address-space limit in bytes, or nil when there is none.
    static var limit: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
        else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// The process's address space in use now (VmSize), in bytes.
    static var inUse: Int? {
        guard let file = fopen("/proc/self/statm", "r") else { return nil }
        defer { fclose(file) }
        var text = [UInt8](repeating: 0, count: 64)
        let count = fread(&text, 1, text.count - 1, file)
        // The first number is the size in pages.
        let digits = text.prefix(count).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let pages = Int(String(decoding: digits, as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Throws `.error` ("out of memory") when `bytes` more would pass the
    /// address-space limit, naming `what` needs them.
    static func check(_ bytes: Int, for what: @autoclosure () -> String) throws {
        guard let limit, let inUse else { return }
        let left = max(0, limit - inUse)
        guard bytes > left else { return }
        throw YDBError(.error, "out of memory: \(what()) needs about \(bytes >> 20) MiB, and the process's "
                       + "address-space limit (RLIMIT_AS) leaves \(left >> 20) MiB")
    }
}
