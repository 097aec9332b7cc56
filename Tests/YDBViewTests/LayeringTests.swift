import XCTest

/// The engine's folders depend one way (README, "Architecture"):
/// Core ← Store ← View ← Search ← Mappings ← Changes (Search, the
/// full-text indexes, uses the views' definition types and outcomes; the
/// README does not list it yet). A folder may name the types
/// of the folders before it, never those after it: the store reaches views
/// only through its extension protocols (`Store/Extension.swift`). This
/// reads the sources, as Python's `test_module_graph.py` reads the
/// package, and fails on a reference against the direction, naming the
/// file and the type. It also keeps every engine file short enough to
/// read (at most `maximumLines`).
final class LayeringTests: XCTestCase {
    static let order = ["Core", "Store", "View", "Search", "Mappings", "Changes"]
    static let maximumLines = 600

    static var engineSources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/YDBView").standardizedFileURL
    }

    func testFoldersDependInTheDocumentedDirection() throws {
        let files = try Self.readSources(Self.engineSources)
        XCTAssertEqual(Set(files.map(\.folder)), Set(Self.order), "the engine's folders changed: update `order`")
        let violations = Layering(order: Self.order).violations(in: files)
        XCTAssertEqual(violations, [], "references against Core ← Store ← View ← Search ← Mappings ← Changes")
        // The check sees the references that are allowed, too.
        XCTAssertFalse(Layering(order: Self.order.reversed()).violations(in: files).isEmpty)
    }

    /// The checker itself: a store file naming a view type is caught; a
    /// comment or a string naming it is not a reference.
    func testAReferenceAgainstTheDirectionIsFound() {
        let files = [
            SourceFile(folder: "View", name: "ViewWriter.swift", text: "final class ViewWriter {}\nstruct ViewState {}"),
            SourceFile(folder: "Store", name: "Database.swift", text: """
                final class Database {
                    // a ViewState in a comment is no reference
                    let label = "ViewState"
                    var writer: ViewWriter?
                }
                """),
        ]
        XCTAssertEqual(Layering(order: ["Store", "View"]).violations(in: files),
                       ["Store/Database.swift names ViewWriter (View)"])
        XCTAssertEqual(Layering(order: ["View", "Store"]).violations(in: files), [])
    }

    func testNoEngineFileIsLongerThanTheLimit() throws {
        for file in try Self.readSources(Self.engineSources) {
            let lines = file.text.split(separator: "\n", omittingEmptySubsequences: false).count
            XCTAssertLessThanOrEqual(lines, Self.maximumLines, "\(file.folder)/\(file.name): split it by job")
        }
    }

    static func readSources(_ root: URL) throws -> [SourceFile] {
        var files: [SourceFile] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let relative = url.standardizedFileURL.path.dropFirst(root.path.count + 1)
            let folder = String(relative.split(separator: "/").first ?? "")
            files.append(SourceFile(folder: folder, name: String(relative.dropFirst(folder.count + 1)),
                                    text: try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { ($0.folder, $0.name) < ($1.folder, $1.name) }
    }
}

struct SourceFile {
    let folder: String
    let name: String
    let text: String
}

/// Which folder declares each top-level type, and which files name a type
/// of a later folder.
struct Layering {
    let order: [String]

    func violations(in files: [SourceFile]) -> [String] {
        var owner: [String: String] = [:]
        for file in files {
            for name in Self.declaredTypes(Self.code(file.text)) where owner[name] == nil { owner[name] = file.folder }
        }
        var found: [String] = []
        for file in files {
            guard let rank = order.firstIndex(of: file.folder) else { continue }
            for name in Set(Self.identifiers(Self.code(file.text))).sorted() {
                guard let folder = owner[name], let other = order.firstIndex(of: folder), other > rank else { continue }
                found.append("\(file.folder)/\(file.name) names \(name) (\(folder))")
            }
        }
        return found
    }

    /// The text without comments and string literals.
    static func code(_ text: String) -> String {
        var out = "", chars = Array(text), index = 0
        while index < chars.count {
            let char = chars[index], next = index + 1 < chars.count ? chars[index + 1] : " "
            if char == "/" && next == "/" {
                while index < chars.count && chars[index] != "\n" { index += 1 }
            } else if char == "/" && next == "*" {
                index += 2
                while index + 1 < chars.count && !(chars[index] == "*" && chars[index + 1] == "/") { index += 1 }
                index += 2
            } else if char == "\"" {
                index += 1
                while index < chars.count && chars[index] != "\"" {
                    index += chars[index] == "\\" ? 2 : 1
                }
                index += 1
                out.append("\"\"")
            } else {
                out.append(char)
                index += 1
            }
        }
        return out
    }

    /// Types declared at the top level (column 0): nested ones share names
    /// across folders (`Row`, `Kind`) and are reached through their parent.
    static func declaredTypes(_ code: String) -> [String] {
        let keywords: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "actor"]
        var names: [String] = []
        for line in code.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            let words = line.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" })
            if let position = words.firstIndex(where: { keywords.contains(String($0)) }), position + 1 < words.count,
               words[..<position].allSatisfy({ ["public", "package", "internal", "private", "fileprivate",
                                                 "final", "indirect"].contains(String($0)) }) {
                names.append(String(words[position + 1]))
            }
        }
        return names
    }

    /// Every capitalised identifier the code uses.
    static func identifiers(_ code: String) -> [String] {
        code.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" })
            .filter { $0.first?.isUppercase ?? false }.map(String.init)
    }
}
