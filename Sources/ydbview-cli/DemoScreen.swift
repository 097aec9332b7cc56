#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Thrown out of the demo when Ctrl-C stops the animated table, once the
/// terminal is restored, so that the caller still closes (and deletes) the
/// temporary database before exiting.
struct DemoInterrupted: Error {}

/// The demo's table drawn in place on a terminal: each frame overwrites the
/// previous one (cursor up, clear each line), with plain ANSI sequences so
/// that the tool needs no curses library.
final class DemoScreen {
    enum Style: String {
        case plain = "0", bold = "1", dim = "2", red = "31", green = "32", yellow = "33", cyan = "36"
    }

    struct Span {
        var text: String
        var style: Style = .plain
    }

    typealias Line = [Span]

    /// The screen for standard output, or nil when the plain log must be
    /// printed instead: not a terminal (pipes and files, which the tests
    /// read, keep the log byte for byte), a terminal that cannot move the
    /// cursor (`TERM=dumb` or unset), or a user who asked for no colour.
    static func forStandardOutput() -> DemoScreen? {
        guard isatty(STDOUT_FILENO) != 0 else { return nil }
        let environment = ProcessInfo.processInfo.environment
        let term = environment["TERM"] ?? ""
        if term.isEmpty || term == "dumb" { return nil }
        // no-color.org: set to anything but the empty string.
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return nil }
        return DemoScreen()
    }

    /// The terminal's size, or 80x24 when it cannot be asked.
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    // MARK: Ctrl-C

    /// Counts SIGINTs (and SIGTERMs). Read by the demo between frames; the
    /// handler only counts, except on a second signal, when the demo has not
    /// stopped by itself (stuck in a commit), and then it restores the
    /// terminal with write(2) and exits at once.
    nonisolated(unsafe) static var interrupts: sig_atomic_t = 0
    /// Shows the cursor, resets colours and ends the line: what `end()`
    /// writes, kept as bytes so that the signal handler need not build them.
    static let restoreBytes: [UInt8] = Array("\u{1B}[0m\u{1B}[?25h\n".utf8)

    var interrupted: Bool { DemoScreen.interrupts > 0 }

    private var started = false
    private var drawnLines = 0
    private var drawnSize: (columns: Int, rows: Int)?

    /// Hides the cursor and routes Ctrl-C to the demo, which restores the
    /// terminal before it exits.
    func begin() {
        guard !started else { return }
        started = true
        // Touched here, before a handler can run, so that the handler never
        // initializes a global (not safe in a signal handler).
        DemoScreen.interrupts = 0
        _ = DemoScreen.restoreBytes.count
        let handler: @convention(c) (Int32) -> Void = { _ in
            DemoScreen.interrupts += 1
            if DemoScreen.interrupts > 1 {
                DemoScreen.restoreBytes.withUnsafeBufferPointer { _ = write(STDOUT_FILENO, $0.baseAddress, $0.count) }
                _exit(130)
            }
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        emit("\u{1B}[?25l")
    }

    /// Counts Ctrl-C (and SIGTERM) without a screen: the `--shared` demo's
    /// log, which stops between commits and prints its summary line. A
    /// second signal, when it has not stopped by itself, exits at once.
    static func countInterrupts() {
        interrupts = 0
        let handler: @convention(c) (Int32) -> Void = { _ in
            DemoScreen.interrupts += 1
            if DemoScreen.interrupts > 1 { _exit(130) }
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
    }

    /// Gives Ctrl-C and SIGTERM back their default action.
    static func restoreInterrupts() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Waits `milliseconds`, or less when Ctrl-C arrives (nanosleep returns
    /// early on a signal); returns false if it did.
    static func sleep(milliseconds: Int) -> Bool {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while interrupts == 0, nanosleep(&request, &remaining) != 0, errno == EINTR {
            request = remaining
        }
        return interrupts == 0
    }

    /// Shows the cursor again, below the last frame, and gives Ctrl-C back
    /// its default action. Safe to call twice.
    func end() {
        guard started else { return }
        started = false
        emit(String(decoding: DemoScreen.restoreBytes.dropLast(), as: UTF8.self))
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Draws `lines` over the previous frame: at most one line fewer than
    /// the terminal has (so it never scrolls and the cursor can always go
    /// back up to the frame's first line), each cut to the terminal's width
    /// (so none wraps onto the next).
    func draw(_ lines: [Line]) {
        let size = DemoScreen.size()
        var output = ""
        if let drawnSize, drawnSize != size {
            // Resized: the old frame may have wrapped or scrolled, so its
            // height no longer says where it starts; start from a clear screen.
            output += "\u{1B}[H\u{1B}[2J"
        } else if drawnLines > 0 {
            output += "\r\u{1B}[\(drawnLines)A"
        }
        let shown = lines.prefix(max(1, size.rows - 1))
        for line in shown {
            output += render(line, width: max(1, size.columns - 1)) + "\u{1B}[K\n"
        }
        output += "\u{1B}[J"   // whatever a taller previous frame left below
        emit(output)
        drawnLines = shown.count
        drawnSize = size
    }

    /// Waits `milliseconds`, or less when Ctrl-C arrives (nanosleep returns
    /// early on a signal); then throws if it did.
    func pause(milliseconds: Int) throws {
        _ = DemoScreen.sleep(milliseconds: milliseconds)
        try checkInterrupted()
    }

    func checkInterrupted() throws {
        if interrupted {
            // Past the "^C" the terminal echoed, so the shell's prompt starts a line of its own.
            emit("\n")
            end()
            throw DemoInterrupted()
        }
    }

    private func render(_ line: Line, width: Int) -> String {
        var output = "", left = width
        for span in line where left > 0 {
            let text = span.text.count > left ? String(span.text.prefix(left)) : span.text
            left -= text.count
            output += span.style == .plain ? text : "\u{1B}[\(span.style.rawValue)m\(text)\u{1B}[0m"
        }
        return output
    }

    /// Writes straight to the descriptor, after whatever `print` left in
    /// the C stream (fflush(nil): all streams), so the two stay in order.
    private func emit(_ text: String) {
        fflush(nil)
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }   // the terminal is gone: nothing left to draw on
            bytes = bytes.dropFirst(written)
        }
    }
}
