#!/usr/bin/env bash
# A Swift 6 package outside the repository, as a user would write one: it
# depends on this checkout by path, and its program is the README's Swift
# examples as written plus Tests/Swift6Package/Threads.swift (two threads
# commit while a view, an observer and mappings follow; then a live view
# followed with for try await while two tasks commit). Built in Swift 6
# language mode with complete concurrency checking and warnings as errors,
# then run.
#
#   bash scripts/check-swift6-package.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')

mkdir -p "$work/app/Sources/app"
cat > "$work/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "app",
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(
            name: "app",
            dependencies: [.product(name: "YDBView", package: "$identity")],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors", "-strict-concurrency=complete"])]),
    ])
SWIFT
blocks=$(python3 "$root/scripts/readme_examples.py" swift "$work/readme")
cat $blocks > "$work/app/Sources/app/main.swift"
echo 'try commitFromTwoThreads(database)' >> "$work/app/Sources/app/main.swift"
echo 'try await followWithTwoTasks()' >> "$work/app/Sources/app/main.swift"
cp "$root/Tests/Swift6Package/Threads.swift" "$work/app/Sources/app/"

echo "--- building a Swift 6 package that uses YDBView (README examples + two threads)"
swift build --package-path "$work/app" 2>&1 | grep -E "error|warning|Compiling app|Build" || true
SWIFT_BACKTRACE=threads=crashed,limit=30 "$work/app/.build/debug/app"
echo "1 passed, 0 failed"
