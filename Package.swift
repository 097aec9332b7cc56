// swift-tools-version:6.0
import PackageDescription

// The `.so` exports only the `ydb_` symbols the header declares; the version
// script hides the engine's Swift symbols (see `Sources/YDBViewC/exports.map`).
let exportsMap = Context.packageDirectory + "/Sources/YDBViewC/exports.map"

let package = Package(
    name: "ydbview",
    products: [
        .library(name: "YDBView", targets: ["YDBView"]),
        .library(name: "ydbview", type: .dynamic, targets: ["YDBViewC"]),
        // Not `ydbview` (CMake's name for the tool): the library product above
        // has that name, and SwiftPM drops a second product of the same name
        // with only a warning, leaving no CLI product at all.
        .executable(name: "ydbview-cli", targets: ["ydbview-cli"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite",
                       pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "YDBView", dependencies: ["CSQLite"], path: "Sources/YDBView"),
        .target(name: "YDBViewC", dependencies: ["YDBView"], path: "Sources/YDBViewC",
                exclude: ["exports.map"],
                linkerSettings: [
                    .unsafeFlags(["-Xlinker", "--version-script=\(exportsMap)",
                                  "-Xlinker", "-soname=libydbview.so.0"]),
                    // Release: self-contained, the Swift runtime linked in (see CMakeLists.txt).
                    // The engine's Codable conveniences import FoundationEssentials, which
                    // SwiftPM links (autolinked) without the static libraries it needs in
                    // turn: named here, or the library has undefined symbols and
                    // dlopen refuses it (scripts/check-self-contained.sh loads it).
                    .unsafeFlags(["-static-stdlib", "-no-toolchain-stdlib-rpath", "-Xlinker", "--gc-sections",
                                  "-l_FoundationCollections", "-lswiftSynchronization", "-l_FoundationCShims"],
                                 .when(configuration: .release)),
                ]),
        .executableTarget(name: "ydbview-cli", dependencies: ["YDBView"], path: "Sources/ydbview-cli"),
        // Benchmark programs (Benchmarks/README.md): print figures next to SQLite baselines.
        .executableTarget(name: "ydbview-bench", dependencies: ["YDBView", "CSQLite"],
                          path: "Benchmarks/Sources/ydbview-bench"),
        .testTarget(name: "YDBViewTests", dependencies: ["YDBView"], path: "Tests/YDBViewTests"),
    ]
)
