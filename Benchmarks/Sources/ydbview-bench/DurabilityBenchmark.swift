import Foundation
import YDBView

/// Figures for the "bounded disk and memory" work: one-row commits with and
/// without a long-lived reader that catches up after every commit (and the
/// write-ahead log's size), against the plain indexed table's commit; and
/// the cost of registering the k-th view.
struct DurabilityResult {
    var n = 0
    var commits = 0
    var plain = Samples()
    var alone = Samples()
    var withReader = Samples()
    var catchUp = Samples()
    var walAlone = 0
    var walWithReader = 0
    var walNeverCatchingUp = 0
    var reloadSeen = false
}

struct RegistrationResult {
    var views = 0
    var first = Samples()
    var last = Samples()
    var reopen = 0.0
}

enum DurabilityBenchmark {
    static func walBytes(_ fixture: Fixture) -> Int {
        var info = stat()
        return stat(fixture.databasePath + "-wal", &info) == 0 ? Int(info.st_size) : 0
    }

    static func run(_ fixture: Fixture, _ settings: Settings) throws -> DurabilityResult {
        var result = DurabilityResult(n: fixture.n, commits: settings.walCommits)
        log("  [\(count(fixture.n))] \(settings.walCommits) update commits: alone, with a catching-up reader, baseline")
        let keys = fixture.group0Keys
        let update = try fixture.plain.prepare("UPDATE t SET rank = ?1, object = ?2 WHERE key = ?3")
        func next() -> (String, Int64) {
            (keys[Int(fixture.random.next() % UInt64(keys.count))], Int64(fixture.random.next() % UInt64(Data.rankSpace)))
        }
        func engineCommit() throws {
            let (key, rank) = next()
            try fixture.writer.readWrite {
                try $0.replaceObject(Data.object(group: 0, rank: rank), forKey: key, inCollection: Data.collection)
            }
        }
        for _ in 0 ..< settings.walCommits {
            let (key, rank) = next()
            let start = now()
            try fixture.plain.execute("BEGIN")
            update.bind(1, rank)
            update.bind(2, Data.object(group: 0, rank: rank))
            update.bind(3, key)
            try update.run()
            try fixture.plain.execute("COMMIT")
            result.plain.add(from: start)
        }
        for _ in 0 ..< settings.walCommits {
            let start = now()
            try engineCommit()
            result.alone.add(from: start)
            result.walAlone = max(result.walAlone, walBytes(fixture))
        }
        let reader = try fixture.database.newConnection()
        defer { reader.close() }
        try reader.beginLongLivedReadTransaction()
        for _ in 0 ..< settings.walCommits {
            var start = now()
            try engineCommit()
            result.withReader.add(from: start)
            start = now()
            _ = try reader.beginLongLivedReadTransaction()
            result.catchUp.add(from: start)
            result.walWithReader = max(result.walWithReader, walBytes(fixture))
        }
        // A reader that never catches up is released after maxCommitsBehind.
        for _ in 0 ..< settings.walCommits {
            try engineCommit()
            result.walNeverCatchingUp = max(result.walNeverCatchingUp, walBytes(fixture))
        }
        do {
            _ = try reader.beginLongLivedReadTransaction()
        } catch let error as YDBError where error.code == .reloadRequired {
            result.reloadSeen = true
        }
        try fixture.catchUp()
        return result
    }

    /// Registers `views` small views one after another on a database of its
    /// own, then reopens it and registers them all again.
    static func registration(views: Int) throws -> RegistrationResult {
        var result = RegistrationResult(views: views)
        log("  registering \(views) views")
        var template = Array((NSTemporaryDirectory() + "ydbview-bench-views-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SQLiteFailure(description: "mkdtemp failed") }
        let directory = String(cString: made)
        defer {
            for suffix in ["", "-wal", "-shm"] { unlink(directory + "/views.sqlite" + suffix) }
            rmdir(directory)
        }
        let counters = CallCounters()
        var database = try Database(path: directory + "/views.sqlite")
        try database.newConnection().readWrite { t in
            for i in 0 ..< 100 {
                try t.setObject(Data.object(group: i % 3, rank: Int64(i)), forKey: "k\(i)", inCollection: Data.collection,
                                metadata: nil)
            }
        }
        let sample = max(1, views / 20)
        for i in 0 ..< views {
            let start = now()
            try database.registerView(Data.view(counters), name: "view\(i)")
            if i < sample { result.first.add(from: start) }
            if i >= views - sample { result.last.add(from: start) }
        }
        database.close()
        database = try Database(path: directory + "/views.sqlite")
        let (_, reopen) = try timed {
            for i in 0 ..< views { try database.registerView(Data.view(counters), name: "view\(i)") }
        }
        result.reopen = reopen
        database.close()
        return result
    }
}
