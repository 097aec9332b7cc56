import Foundation

/// How much the property tests run. The suite runs each in seconds; with
/// `YDBVIEW_LONG_TESTS=1` they run at the scale that found their bugs
/// (minutes), as before a release.
enum TestScale {
    static let isLong = ProcessInfo.processInfo.environment["YDBVIEW_LONG_TESTS"] == "1"

    /// `short` in the suite, `long` in the long run.
    static func pick(_ short: Int, long: Int) -> Int { isLong ? long : short }
}
